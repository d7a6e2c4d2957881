"""The differential fuzzer: generated kernels (tests/fuzz/gen.py) run in the numpy interpreter on the
XeTile IR, at every lowered level of both CPU targets and as SPIR-V on opencl:cpu, and must agree, the interpreter
in checking mode finding no race, read of unwritten SLM or bad access at any level (tests/fuzz/levels.py).

A fixed seed runs in CI: XETILE_FUZZ_CASES cases (default 640; 8 a kernel) from XETILE_FUZZ_SEED (default 0), and
XETILE_FUZZ_ROW_CASES row kernels (default 24, tests/fuzz/rows.py: wide tiles, the `cpu` target's block loops); set
them to run more or other cases (a campaign: XETILE_FUZZ_CASES=20000 and a new seed). The default cases draw every
case kind several times (test_the_default_cases_draw_every_case_kind). gen.FAMILIES lists the constructs generated
(gen.DISABLED: those left out, and why); XETILE_FUZZ_KINDS (comma-separated case kinds, e.g.
"combine,shape_ops,sort") draws from those alone. Which CPU targets a batch runs on: fuzz/worker.py `targets`. The
run's case count, seed, mismatches and time reach the end of the pytest log (the `xetile_fuzz` property, printed by
conftest's terminal summary).

The batches run in child processes (fuzz/worker.py), so that a crash of the OpenCL driver fails the batch it was
building instead of pytest. A failing batch is cut down to its failing cases and written out as a standalone
reproducer script, whose text the failure shows with the seed. One case replays alone, at every level and on both
CPU targets, with its reproducer written out:

    cd tests && python -m fuzz.replay SEED INDEX     # case INDEX (0 to XETILE_FUZZ_CASES - 1) of seed SEED
"""
import ast
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import TESTS, subprocess_env
from fuzz import gen, levels, replay, run, worker

CASES = int(os.environ.get("XETILE_FUZZ_CASES", "640"))
SEED = int(os.environ.get("XETILE_FUZZ_SEED", "0"))
CHUNKS = 8              # tests the batches are dealt to, so that pytest-xdist spreads them
BATCHES = -(-CASES // worker.PER_BATCH)
ROW_CASES = int(os.environ.get("XETILE_FUZZ_ROW_CASES", "24"))   # one a batch
ROW_CHUNKS = 2
BATCH_TIMEOUT = 300     # seconds per batch (about 3 s of CPU each) after which a child counts as hung


def child_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_level_agrees_on_generated_kernels(chunk, tmp_path, record_property):
    check_batches("gen", list(range(chunk, BATCHES, CHUNKS)), tmp_path, record_property)


@pytest.mark.parametrize("chunk", range(ROW_CHUNKS))
def test_every_level_agrees_on_generated_row_kernels(chunk, tmp_path, record_property):
    check_batches("rows", list(range(chunk, ROW_CASES, ROW_CHUNKS)), tmp_path, record_property)


def run_worker(kind: str, indices: list[int], directory) -> tuple[list[dict], str | None]:
    """The worker's records for `indices`, and why it died (None if it finished)."""
    command = [sys.executable, "-m", "fuzz.worker", kind, str(SEED), str(CASES), str(directory), *map(str, indices)]
    try:
        done = subprocess.run(command, env=subprocess_env(), cwd=TESTS, capture_output=True, text=True,
                              timeout=BATCH_TIMEOUT * len(indices))
        stdout, died = done.stdout, done.returncode and f"exit code {done.returncode}: {done.stderr[-2000:]}"
    except subprocess.TimeoutExpired as e:
        stdout, died = (e.stdout or b"").decode(), f"hang: no end after {BATCH_TIMEOUT * len(indices)} s"
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")], died or None


def crash_outcome(kind: str, index: int, died: str, directory) -> dict:
    """The outcome of a batch whose process died: all its cases fail, with its reproducer."""
    problems = [f"[crash] the process running the batch died ({died})"]
    batch = worker.batch(kind, SEED, CASES, index)
    return {"done": index, "cases": len(batch.cases), "failing": len(batch.cases), "problems": problems,
            "script": str(worker.write_reproducer(batch, problems, SEED, directory))}


def check_batches(kind: str, indices: list[int], tmp_path, record_property) -> None:
    """Runs the batches in child processes; fails with the reproducers of those that disagree or crash."""
    wall, cpu = time.time(), child_cpu_seconds()
    outcomes = []
    while indices:
        records, died = run_worker(kind, indices, tmp_path)
        outcomes += [r for r in records if "done" in r]
        finished = {r["done"] for r in records if "done" in r}
        unfinished = [i for i in indices if i not in finished]
        if not died or not unfinished:
            break
        crashed = unfinished[0]   # the worker runs the batches in order: the first without an outcome killed it
        outcomes.append(crash_outcome(kind, crashed, died, tmp_path))
        indices = unfinished[1:]
    failures = [o for o in outcomes if o["failing"]]
    record_property("xetile_fuzz", {"cases": sum(o["cases"] for o in outcomes), "seed": SEED,
                                    "failing_cases": sum(o["failing"] for o in failures),
                                    "wall_s": round(time.time() - wall, 1),
                                    "cpu_s": round(child_cpu_seconds() - cpu, 1)})
    if failures:
        lines = []
        for o in failures:
            lines += [f"reproducer {o['script']}:", *o["problems"][:10]]
            if kind == "gen":
                lines += [f"replay: cd tests && python -m fuzz.replay {SEED} {o['done'] * worker.PER_BATCH + p}"
                          for p in o.get("positions", range(o["cases"]))[:3]]
        first = failures[0]["script"]
        pytest.fail(f"XETILE_FUZZ_SEED={SEED}\n" + "\n".join(lines) + f"\n\n---- {first} ----\n{open(first).read()}",
                    pytrace=False)


def test_the_comparison_sees_one_ulp_where_exact_and_allows_the_tolerance():
    want = np.array([[1.0, np.nan, -0.0]], np.float32)
    got = want.copy()
    assert levels.mismatch("a", got, want, 0.0) is None                    # NaNs at the same places agree
    got[0, 0] = np.nextafter(np.float32(1.0), np.float32(2.0))
    assert "1 of 3 elements differ, first at (0, 0)" in levels.mismatch("a", got, want, 0.0)
    assert levels.mismatch("a", got, want, 1e-6) is None
    got[0, 1] = 0.0
    assert "first at (0, 1)" in levels.mismatch("a", got, want, 1e-6)      # a NaN lost is never within tolerance


def test_a_replayed_case_is_the_case_of_its_batch_and_its_reproducer_runs_on_its_own(tmp_path):
    index = worker.PER_BATCH + 3
    assert replay.case_batch(SEED, index).cases[0].lines == gen.batch(SEED, 1, worker.PER_BATCH).cases[3].lines
    env = subprocess_env(XETILE_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-m", "fuzz.replay", str(SEED), str(index)], capture_output=True,
                          text=True, timeout=600, cwd=TESTS, env=env)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    verdict, script = done.stdout.strip().splitlines()[-2:]
    assert verdict == "all levels agree"
    done = subprocess.run([sys.executable, script.removeprefix("reproducer: ")], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "all levels agree"


def test_a_batch_whose_process_dies_fails_with_its_reproducer_and_the_next_batches_run(tmp_path, monkeypatch):
    calls = []

    def dies_on_batch_1(kind, indices, directory):
        calls.append(list(indices))
        records = []
        for index in indices:
            records.append({"start": index})
            if index == 1:
                return records, "exit code -11: "
            records.append({"done": index, "cases": worker.PER_BATCH, "failing": 0})
        return records, None

    monkeypatch.setattr(sys.modules[__name__], "run_worker", dies_on_batch_1)
    properties = []
    with pytest.raises(pytest.fail.Exception, match=r"(?s)XETILE_FUZZ_SEED=.*reproduce_fuzz_\d+_1\.py:\n"
                                                    r"\[crash\] the process running the batch died \(exit code -11.*\n"
                                                    rf"replay: cd tests && python -m fuzz\.replay {SEED} {worker.PER_BATCH}\n"):
        check_batches("gen", [0, 1, 2], tmp_path, lambda name, value: properties.append(value))
    assert calls == [[0, 1, 2], [2]]
    assert (properties[0]["cases"], properties[0]["failing_cases"]) == (3 * worker.PER_BATCH, worker.PER_BATCH)
    assert "def fuzz_" in (tmp_path / f"reproduce_fuzz_{SEED}_1.py").read_text()


def test_the_default_cases_draw_every_case_kind():
    kinds = gen.case_kinds()[0]
    drawn = [case.kind for index in range(BATCHES) for case in worker.batch("gen", SEED, CASES, index).cases]
    rare = {kind: drawn.count(kind) for kind in kinds if drawn.count(kind) < 3}
    assert not rare, f"case kinds drawn fewer than 3 times in the {CASES} cases of seed {SEED}: {rare}"


def test_xetile_fuzz_kinds_draws_from_the_kinds_it_names(monkeypatch):
    monkeypatch.setenv("XETILE_FUZZ_KINDS", "combine,sort")
    drawn = {case.kind for index in range(4) for case in gen.batch(SEED, index, worker.PER_BATCH).cases}
    assert drawn <= {"combine", "sort", "mma"} and {"combine", "sort"} <= drawn   # a batch of subgroups opens with mma
    monkeypatch.setenv("XETILE_FUZZ_KINDS", "combine,no_such_kind")
    with pytest.raises(ValueError, match=r"XETILE_FUZZ_KINDS names \['no_such_kind'\]"):
        gen.batch(SEED, 0, 1)


def test_a_reproducer_with_a_message_of_several_lines_is_still_python():
    """An InterpretCheckError quotes the kernel's source line on a line of its own: each line of a message is a
    comment of the reproducer's header."""
    script = run.reproducer(gen.batch(SEED, 1, worker.PER_BATCH), ["data race in kernel k: ...\n    source line"], SEED)
    ast.parse(script)
    assert "#       source line" in script
