"""Bad-input fuzzing: random mutations of a valid launch (tests/fuzz/bad.py) raise LaunchError or
CompilationError before anything runs and leave the arrays untouched; never another exception, a crash or a hang.
The cases run in a child process, so that a crash or a hang fails this test (naming the case) instead of pytest.
XETILE_FUZZ_SEED picks the cases; XETILE_FUZZ_BAD_CASES (default 300) how many."""
import json
import os
import subprocess
import sys

from conftest import TESTS, subprocess_env
SEED = int(os.environ.get("XETILE_FUZZ_SEED", "0"))
CASES = int(os.environ.get("XETILE_FUZZ_BAD_CASES", "300"))
TIMEOUT = 240 + CASES   # seconds; the 300 cases take ~5 s


def test_mutated_launches_raise_clean_errors_and_touch_nothing():
    env = subprocess_env()
    try:
        done = subprocess.run([sys.executable, "-m", "fuzz.bad", str(SEED), str(CASES)], env=env, cwd=TESTS,
                              capture_output=True, text=True, timeout=TIMEOUT)
        stdout, died = done.stdout, done.returncode != 0 and f"exit code {done.returncode}:\n{done.stderr[-2000:]}"
    except subprocess.TimeoutExpired as e:
        stdout, died = (e.stdout or b"").decode(), f"hang: no end after {TIMEOUT} s"
    records = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    results = [r for r in records if "outcome" in r]
    bad = [f"{r['code']}  ->  {r['outcome']}" for r in results if r["outcome"] != "ok"]
    if died:
        last = records[-1]["code"] if records and "start" in records[-1] else "(none started)"
        bad.append(f"the process died ({died}) during: {last}")
    assert not bad, "mutated launches (run each line after `from fuzz.bad import *; globals().update(arrays(0))`):\n" + \
        "\n".join(bad)
    assert len(results) == CASES
