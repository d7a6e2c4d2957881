"""Runs differential fuzzer batches in a child process, so that a crash of the OpenCL driver on a generated kernel
fails that batch (with its reproducer) instead of killing pytest.

`python -m fuzz.worker KIND SEED CASES DIRECTORY INDEX...` (from tests/; KIND "gen" or "rows") prints a JSON line
when it starts a batch and one with its outcome: the case count, the problems and the path of the reproducer
script written for a failing batch (cut down to its failing cases). test_fuzz.py reads the lines; a batch that
started and has no outcome killed the process.
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from . import gen, levels, rows, run

PER_BATCH = 8   # cases in one generated kernel: one device build checks them all (builds grow faster than kernels)


def targets(index: int) -> tuple[str, ...]:
    """The CPU targets batch `index` runs on: `cpu` and `xe-emulated` alternate, so that a run covers both at the
    cost of one (each level and the device build take about as long again per target)."""
    return (levels.CPU_TARGETS[index % len(levels.CPU_TARGETS)],)


def batch(kind: str, seed: int, cases: int, index: int) -> gen.Batch:
    """Batch `index` of a run of `cases` cases ("gen") or row kernels ("rows", one a batch)."""
    if kind == "rows":
        return rows.batch(seed, index)
    return gen.batch(seed, index, min(PER_BATCH, cases - index * PER_BATCH))


def write_reproducer(batch_: gen.Batch, problems: list[str], seed: int, directory: Path) -> Path:
    script = directory / f"reproduce_{batch_.name}.py"
    script.write_text(run.reproducer(batch_, problems, seed))
    return script


def check(batch_: gen.Batch, seed: int, directory: Path, on: tuple[str, ...]) -> dict:
    """The batch's outcome on the targets `on`: its case count, and for a failing batch the failing cases' problems
    and reproducer (which runs both targets)."""
    problems = run.run_batch(batch_, directory, on)
    if not problems:
        return {"cases": len(batch_.cases), "failing": 0}
    small, small_problems = run.minimized(batch_, problems, directory, on)
    if small is batch_ and len(batch_.cases) > 1:   # the problems name no case: the first failing alone
        small, small_problems = first_failing_case(batch_, directory, on) or (small, small_problems)
    return {"cases": len(batch_.cases), "failing": len(small.cases), "problems": small_problems,
            "positions": [case.position for case in small.cases],
            "script": str(write_reproducer(small, small_problems, seed, directory))}


def first_failing_case(batch_: gen.Batch, directory: Path, on: tuple[str, ...]):
    """(the batch cut down to its first case that fails alone, its problems), or None."""
    for index, case in enumerate(batch_.cases):
        alone = replace(batch_, name=f"{batch_.name}_case{index}", cases=[case])
        problems = run.run_batch(alone, directory, on)
        if problems:
            return alone, problems
    return None


def main(argv: list[str]) -> None:
    kind, seed, cases, directory, *indices = argv
    for index in map(int, indices):
        print(json.dumps({"start": index}), flush=True)
        outcome = check(batch(kind, int(seed), int(cases), index), int(seed), Path(directory), targets(index))
        print(json.dumps({"done": index, **outcome}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
