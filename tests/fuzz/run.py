"""Runs generated batches at every level; a failing batch is cut down to its failing cases and written out as a
standalone reproducer script (kernel source, seeded inputs, the comparison)."""
from __future__ import annotations

import importlib.util
import inspect
import re
from dataclasses import replace
from pathlib import Path

from . import levels
from .gen import Batch

HEADER = "import ml_dtypes\nimport numpy as np\nimport xetile_jit as xetile\n"


def load_kernel(batch: Batch, directory: Path):
    """The batch's kernel, from a module file (the tracer reads a kernel's source)."""
    path = directory / f"{batch.name}.py"
    path.write_text(HEADER + "\n\n" + batch.source())
    spec = importlib.util.spec_from_file_location(batch.name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, batch.name)


def args_factory(batch: Batch):
    code = compile(batch.args_code(), f"<{batch.name} arguments>", "eval")
    return lambda: eval(code, {"make_array": levels.make_array, "scalar": levels.scalar, "np": levels.np})


def run_batch(batch: Batch, directory: Path, targets=levels.CPU_TARGETS) -> list[str]:
    """The batch's mismatches on `targets` (an exception anywhere is one too)."""
    try:
        kern = load_kernel(batch, directory)
        return levels.run_levels(kern, args_factory(batch), batch.array_names(), batch.grid, batch.options,
                                 batch.tols(), targets)
    except Exception as e:  # noqa: BLE001 - a generated valid kernel must compile and run: report, do not stop
        return [f"[raised] {type(e).__name__}: {e}"]


def failing_cases(batch: Batch, problems: list[str]) -> list[int]:
    """The cases whose arrays the mismatches name (all of them if an exception names none)."""
    named = {m.group(1) for p in problems for m in [re.search(r"\] (c\d+_\w+):", p)] if m}
    hit = [i for i, c in enumerate(batch.cases) if any(a.name in named for a in c.args)]
    return hit or list(range(len(batch.cases)))


def minimized(batch: Batch, problems: list[str], directory: Path,
              targets=levels.CPU_TARGETS) -> tuple[Batch, list[str]]:
    """The batch cut down to its failing cases, if it still fails so; else the whole batch."""
    cases = failing_cases(batch, problems)
    if len(cases) == len(batch.cases):
        return batch, problems
    small = replace(batch, name=batch.name + "_min", cases=[batch.cases[i] for i in cases])
    small_problems = run_batch(small, directory, targets)
    return (small, small_problems) if small_problems else (batch, problems)


def reproducer(batch: Batch, problems: list[str], seed: int) -> str:
    """A standalone script: it reruns the kernel at every level and asserts that they agree."""
    # a problem's message may span lines (an InterpretCheckError quotes the source line): each line a comment
    listed = "\n".join(f"#   {line}" for p in problems[:20] for line in str(p).splitlines())
    return f'''"""xetile_jit differential fuzzer reproducer (XETILE_FUZZ_SEED={seed}, kernel {batch.name}).
The numpy interpreter on the XeTile IR is the reference for every lowered level and for SPIR-V on opencl:cpu."""
# mismatches seen:
{listed}
{inspect.getsource(levels)}

{HEADER}

{batch.source()}

def arguments():
    return {batch.args_code()}


if __name__ == "__main__":
    problems = run_levels({batch.name}, arguments, {batch.array_names()!r}, {batch.grid!r}, {batch.options!r},
                          {batch.tols()!r})
    print("\\n".join(problems) or "all levels agree")
    assert not problems
'''
