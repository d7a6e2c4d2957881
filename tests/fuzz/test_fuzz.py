"""The differential fuzzer: generated kernels (tests/fuzz/gen.py) run in the numpy interpreter on the
XeTile IR, at every lowered level and as SPIR-V on opencl:cpu, and must agree (tests/fuzz/levels.py).

A fixed seed runs in CI: XETILE_FUZZ_CASES cases (default 1000) from XETILE_FUZZ_SEED (default 0), and
XETILE_FUZZ_ROW_CASES row kernels (default 64, tests/fuzz/rows.py: wide tiles, the `cpu` target's block loops); set
them to run more or other cases. The run's case count, seed, mismatches and time reach the end of the pytest log (the
`xetile_fuzz` property, printed by conftest's terminal summary). A failing batch is cut down to its failing cases
and written out as a standalone reproducer script, whose text the failure shows.
"""
import os
import resource
import subprocess
import sys
import time

import numpy as np
import pytest

from fuzz import gen, levels, rows, run

CASES = int(os.environ.get("XETILE_FUZZ_CASES", "1000"))
SEED = int(os.environ.get("XETILE_FUZZ_SEED", "0"))
PER_BATCH = 8           # cases in one generated kernel: one device build checks them all
CHUNKS = 8              # tests the batches are dealt to, so that pytest-xdist spreads them
BATCHES = -(-CASES // PER_BATCH)
ROW_CASES = int(os.environ.get("XETILE_FUZZ_ROW_CASES", "64"))   # one a batch
ROW_CHUNKS = 2


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_level_agrees_on_generated_kernels(chunk, tmp_path, record_property):
    batches = (gen.batch(SEED, index, min(PER_BATCH, CASES - index * PER_BATCH))
               for index in range(chunk, BATCHES, CHUNKS))
    check_batches(batches, tmp_path, record_property)


@pytest.mark.parametrize("chunk", range(ROW_CHUNKS))
def test_every_level_agrees_on_generated_row_kernels(chunk, tmp_path, record_property):
    check_batches((rows.batch(SEED, index) for index in range(chunk, ROW_CASES, ROW_CHUNKS)), tmp_path,
                  record_property)


def check_batches(batches, tmp_path, record_property) -> None:
    """Runs each batch at every level; fails with the reproducers of those that disagree."""
    wall, cpu = time.time(), cpu_seconds()
    cases, failures = 0, []
    for batch in batches:
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


def test_the_comparison_sees_one_ulp_where_exact_and_allows_the_tolerance():
    want = np.array([[1.0, np.nan, -0.0]], np.float32)
    got = want.copy()
    assert levels.mismatch("a", got, want, 0.0) is None                    # NaNs at the same places agree
    got[0, 0] = np.nextafter(np.float32(1.0), np.float32(2.0))
    assert "1 of 3 elements differ, first at (0, 0)" in levels.mismatch("a", got, want, 0.0)
    assert levels.mismatch("a", got, want, 1e-6) is None
    got[0, 1] = 0.0
    assert "first at (0, 1)" in levels.mismatch("a", got, want, 1e-6)      # a NaN lost is never within tolerance


def test_a_reproducer_script_runs_on_its_own(tmp_path):
    batch = gen.batch(SEED, 0, 1)
    script = tmp_path / "reproduce.py"
    script.write_text(run.reproducer(batch, ["(none: a passing batch)"], SEED))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, XETILE_CACHE_DIR=str(tmp_path / "cache")))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "all levels agree"
