"""Tutorial 4: autotuning.

Which workgroup tile and which split of it between subgroups is fastest depends on the device and the shapes.
`@xetile.autotune` tries a list of `xetile.Config`s (constexprs such as the tile sizes, and the tile_mma anchor
layout `sg_layout`/`sg_data`), prunes those that break a rule of the compiler (with the reason), times the rest
with `xetile.testing.do_bench` and keeps the fastest per value of the `key` arguments, in memory and on disk:
the next launch with the same M, N, K and dtypes, in this process or a later one, runs the winner untimed.

The configs are generated: `xetile.layouts(tile, num_subgroups=...)` lists every legal (sg_layout, sg_data) of a
workgroup tile. Here each subgroup gets one piece of 256 elements whose sides are multiples of the DPAS C block
(8 x 16): small pieces keep the OpenCL CPU driver's build of each config to a few seconds.
`XETILE_PRINT_AUTOTUNING=1` prints what the tuner does.

Run: python tutorials/04-autotuning.py
"""
import importlib.util
import pathlib

import numpy as np

import xetile_jit as xetile

M = N = K = 256
PIECE = 256  # elements of one subgroup's piece of C
WORKGROUP_TILES = [(32, 32), (64, 32), (64, 64)]


def tutorial_gemm():
    """The kernel of tutorials/03-matrix-multiplication.py (its file name is not a module name)."""
    path = pathlib.Path(__file__).with_name("03-matrix-multiplication.py")
    spec = importlib.util.spec_from_file_location("matrix_multiplication", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.matmul_kernel


def configs() -> list:
    """One config per legal layout of each workgroup tile that gives every subgroup one PIECE-element piece made
    of whole 8 x 16 DPAS blocks."""
    result = []
    for bm, bn in WORKGROUP_TILES:
        for sg_layout, sg_data in xetile.layouts([bm, bn], num_subgroups=bm * bn // PIECE):
            one_piece = [s * d for s, d in zip(sg_layout, sg_data)] == [bm, bn]
            if one_piece and sg_data[0] % 8 == 0 and sg_data[1] % 16 == 0:
                result.append(xetile.Config(BM=bm, BN=bn, BK=16, sg_layout=sg_layout, sg_data=sg_data))
    return result


def grid(meta):
    return xetile.cdiv(M, meta["BM"]), xetile.cdiv(N, meta["BN"])


def main() -> None:
    gemm = xetile.autotune(configs(), key=["M", "N", "K"], warmup=5, rep=20)(tutorial_gemm())
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((K, N), dtype=np.float32).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    print(f"device: {xetile.default_device()}; C = A @ B, {M}x{N}x{K} f16 -> f32; {len(gemm.configs)} configs")
    gemm[grid](a, b, c, M, N, K)
    if not gemm.trials:  # an earlier run tuned these shapes: its winner came from the disk cache
        print("the winner of an earlier run, from the cache (XETILE_CACHE_DIR); nothing was timed")
    else:
        print_trials(gemm.trials)
    print(f"winner: {gemm.best_config}")
    error = np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max()
    c[:] = 0
    gemm[grid](a, b, c, M, N, K)  # a seen key: the winner runs, nothing is timed
    error = max(error, np.abs(c - a.astype(np.float32) @ b.astype(np.float32)).max())
    if not error < 1e-3:
        raise SystemExit(f"FAILED: the result differs from numpy by {error}")
    print(f"OK: matches numpy (max abs error {error:.1e}); the next run with these shapes reuses the winner")


def print_trials(trials) -> None:
    print(f"{'BM':>4} {'BN':>4} {'sg_layout':>10} {'sg_data':>9} {'ms':>9} {'GFLOP/s':>8}  clock")
    for trial in trials:
        cfg = trial.config
        layout = f"{cfg.kwargs['BM']:>4} {cfg.kwargs['BN']:>4} {str(cfg.sg_layout):>10} {str(cfg.sg_data):>9}"
        if trial.ms is None:
            print(f"{layout}  {trial.stage}: {trial.reason.splitlines()[0]}")
        else:
            print(f"{layout} {trial.ms:9.3f} {2 * M * N * K / trial.ms / 1e6:8.2f}  {trial.clock}")


if __name__ == "__main__":
    main()
