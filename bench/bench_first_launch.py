"""First-launch time (compile + run) of every tutorial and of four kernels as a user writes them (two row kernels, a
`where` on a bool mask, a 64x64x64 `tile_mma` with an epilogue on the default layout), and the first call of
`xetile.ops.matmul` at 384^3, 1024^3 and 2048^3 f32 (its autotuning), each in a fresh process with an empty compile
cache.

    python bench/bench_first_launch.py [--timeout 200] [--json] [--cases softmax where mma-epilogue tutorial-01 ...]

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


def where() -> None:
    """A 1024-element `where` on a bool mask, one workgroup (its driver build against a vector add's)."""
    import xetile_jit as xetile

    @xetile.kernel
    def where_kernel(mask, x, y, out, N: xetile.constexpr):
        chosen = xetile.where(xetile.load_tile(xetile.init_tile(mask, [0], [N])),
                              xetile.load_tile(xetile.init_tile(x, [0], [N])),
                              xetile.load_tile(xetile.init_tile(y, [0], [N])))
        xetile.store_tile(xetile.init_tile(out, [0], [N]), chosen)

    rng = np.random.default_rng(0)
    mask, (x, y) = rng.standard_normal(1024) > 0, rng.standard_normal((2, 1024)).astype(np.float32)
    out = np.empty_like(x)
    where_kernel[(1,)](mask, x, y, out, N=1024)
    assert np.array_equal(out, np.where(mask, x, y))


def mma_epilogue() -> None:
    """A single-block 64x64x64 f16 `tile_mma` with a bias, ReLU and a cast to f16, the default layout (one
    subgroup: 128 DPAS ops)."""
    import xetile_jit as xetile

    @xetile.kernel
    def mma_kernel(a, b, bias, c, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr):
        acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [BM, BK])),
                              xetile.load_tile(xetile.init_tile(b, [0, 0], [BK, BN])),
                              xetile.zeros([BM, BN], xetile.float32))
        acc = acc + xetile.load_tile(xetile.init_tile(bias, [0, 0], [BM, BN]))
        acc = xetile.where(acc > 0, acc, 0.0 * acc)
        xetile.store_tile(xetile.init_tile(c, [0, 0], [BM, BN]), xetile.cast(acc, xetile.float16))

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 64, 64)).astype(np.float16)
    bias = rng.standard_normal((64, 64)).astype(np.float32)
    c = np.empty((64, 64), np.float16)
    mma_kernel[(1,)](a, b, bias, c, BM=64, BN=64, BK=64)
    expected = np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias, 0)
    assert np.allclose(c.astype(np.float32), expected, atol=2e-2, rtol=1e-2)


def ops_matmul(n: int):
    """`xetile.ops.matmul`'s first call on an n x n x n f32 GEMM (dpnp arrays where dpnp is installed, else numpy):
    its tuning's prune, driver builds and timings."""
    def first_call() -> None:
        import xetile_jit as xetile
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((2, n, n)).astype(np.float32)
        try:
            import dpnp
            c = dpnp.asnumpy(xetile.ops.matmul(dpnp.asarray(a), dpnp.asarray(b)))
        except ImportError:
            c = xetile.ops.matmul(a, b)
        assert np.allclose(c, a @ b, rtol=1e-3, atol=1e-3 * np.sqrt(n))
    return first_call


KERNELS = {"softmax": softmax, "layernorm": layernorm, "where": where, "mma-epilogue": mma_epilogue,
           **{f"ops-matmul-{n}": ops_matmul(n) for n in (384, 1024, 2048)}}


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
        return f"{result['case']:<16} {result['error']}"
    return (f"{result['case']:<16} {result['wall_s']:6.1f} s   slowest driver build "
            f"{result['driver_build_max_s']:5.1f} s of {result['driver_builds']}")


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
