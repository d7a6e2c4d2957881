"""First-launch time (compile + run) of every tutorial and of two row kernels as a user writes them, each in a
fresh process with an empty compile cache.

    python bench/bench_first_launch.py [--timeout 200] [--json] [--cases softmax layernorm tutorial-01 ...]

Each case runs in a child process with XETILE_CACHE_DIR set to a new temporary directory, so nothing is reused;
the time is the child's wall time, start to exit (import, trace, compile, driver build, run, check). The child
imports the xetile_jit its PYTHONPATH finds, so `PYTHONPATH=/other/checkout` times another version. The child
runs with XETILE_TIMING=1; each row also gives the slowest of its OpenCL driver builds (the driver compiling the
SPIR-V) and how many builds it made.
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
TUTORIALS = {f"tutorial-{path.name[:2]}": path.name for path in sorted((ROOT / "tutorials").glob("[0-9][0-9]-*.py"))}


def softmax() -> None:
    """Row softmax of a 1000x781 f32 array, 16 rows a workgroup, as docs/guide.md has it."""
    import xetile_jit as xetile

    @xetile.kernel
    def softmax_kernel(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
        m = xetile.program_id(0) * BM
        rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]), padding=float("-inf"))
        e = xetile.exp(rows - xetile.tile_reduce("max", rows, [1]))
        xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), e / xetile.tile_reduce("add", e, [1]))

    x = np.random.default_rng(0).standard_normal((1000, 781)).astype(np.float32)
    y = np.empty_like(x)
    softmax_kernel[(xetile.cdiv(1000, 16),)](x, y, BM=16, BN=1024)
    e = np.exp(x - x.max(1, keepdims=True))
    assert np.allclose(y, e / e.sum(1, keepdims=True), atol=1e-6)


def layernorm() -> None:
    """Layer norm of 512x768 f32 rows in 16x1024 blocks (bench_cpu.py's kernel)."""
    import xetile_jit as xetile
    from bench_cpu import layernorm_kernel

    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 768)).astype(np.float32)
    w, b = rng.standard_normal((2, 1, 768)).astype(np.float32)
    y = np.empty_like(x)
    layernorm_kernel[(xetile.cdiv(512, 16),)](x, w, b, y, 768, BM=16, BN=1024)
    expected = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * w + b
    assert np.allclose(y, expected, atol=1e-4)


KERNELS = {"softmax": softmax, "layernorm": layernorm}


DRIVER_BUILD = re.compile(r"xetile timing: (\S+): driver build \([^)]*\) ([0-9.]+) ms")


def first_launch(case: str, timeout: float) -> dict:
    """`case` in a fresh process with an empty cache: its wall time, its slowest driver build (s) and the number of
    driver builds, or the reason it has no time ("> timeout s", "failed ...")."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XETILE_CACHE_DIR=cache, XETILE_TIMING="1")
        command = [sys.executable, str(ROOT / "tutorials" / TUTORIALS[case])] if case in TUTORIALS else \
            [sys.executable, __file__, "--run", case]
        start = time.perf_counter()
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"case": case, "error": f"> {timeout:.0f} s"}
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode
            return {"case": case, "error": f"failed ({last})"}
        builds = [float(ms) / 1e3 for _, ms in DRIVER_BUILD.findall(done.stderr)]
        return {"case": case, "wall_s": round(elapsed, 2), "driver_build_max_s": round(max(builds, default=0.0), 2),
                "driver_builds": len(builds)}


def row(result: dict) -> str:
    if "error" in result:
        return f"{result['case']:<12} {result['error']}"
    return (f"{result['case']:<12} {result['wall_s']:6.1f} s   slowest driver build {result['driver_build_max_s']:5.1f} s"
            f" of {result['driver_builds']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=[*TUTORIALS, *KERNELS])
    parser.add_argument("--timeout", type=float, default=200)
    parser.add_argument("--json", action="store_true", help="one JSON list of the results instead of the table")
    parser.add_argument("--run", choices=KERNELS, help=argparse.SUPPRESS)  # the child's side
    args = parser.parse_args()
    if args.run:
        return KERNELS[args.run]()
    from common import machine  # here: a child's time starts before it imports xetile_jit
    if not args.json:
        print(machine())
    results = []
    for case in args.cases:
        results.append(first_launch(case, args.timeout))
        if not args.json:
            print(row(results[-1]), flush=True)
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
