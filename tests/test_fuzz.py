"""The differential fuzzer (issue 8): generated kernels (tests/fuzz/gen.py) run in the numpy interpreter on the
XeTile IR, at every lowered level and as SPIR-V on opencl:cpu, and must agree (tests/fuzz/levels.py).

A fixed seed runs in CI: XETILE_FUZZ_CASES cases (default 1000) from XETILE_FUZZ_SEED (default 0); set them to run
more or other cases. The run's case count, seed, mismatches and time reach the end of the pytest log (the
`xetile_fuzz` property, printed by conftest's terminal summary). A failing batch is cut down to its failing cases
and written out as a standalone reproducer script, whose text the failure shows.
"""
import os
import resource
import time

import pytest

from fuzz import gen, run

CASES = int(os.environ.get("XETILE_FUZZ_CASES", "1000"))
SEED = int(os.environ.get("XETILE_FUZZ_SEED", "0"))
PER_BATCH = 8           # cases in one generated kernel: one device build checks them all
CHUNKS = 8              # tests the batches are dealt to, so that pytest-xdist spreads them
BATCHES = -(-CASES // PER_BATCH)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_level_agrees_on_generated_kernels(chunk, tmp_path, record_property):
    wall, cpu = time.time(), cpu_seconds()
    cases, failures = 0, []
    for index in range(chunk, BATCHES, CHUNKS):
        batch = gen.batch(SEED, index, min(PER_BATCH, CASES - index * PER_BATCH))
        cases += len(batch.cases)
        problems = run.run_batch(batch, tmp_path)
        if problems:
            small, small_problems = run.minimized(batch, problems, tmp_path)
            script = tmp_path / f"reproduce_{small.name}.py"
            script.write_text(run.reproducer(small, small_problems, SEED))
            failures.append((script, small_problems, len(batch.cases) if small is batch else len(small.cases)))
    record_property("xetile_fuzz", {"cases": cases, "seed": SEED, "failing_cases": sum(f[2] for f in failures),
                                    "wall_s": round(time.time() - wall, 1), "cpu_s": round(cpu_seconds() - cpu, 1)})
    if failures:
        lines = []
        for script, problems, _ in failures:
            lines += [f"reproducer {script}:", *problems[:10]]
        first = failures[0][0]
        pytest.fail("\n".join(lines) + f"\n\n---- {first} ----\n{first.read_text()}", pytrace=False)
