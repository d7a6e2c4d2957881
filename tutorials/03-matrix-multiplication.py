"""Tutorial 3: matrix multiplication.

A workgroup computes a BM x BN block of C = A @ B. It sets up one tile on A and one on B, then walks K
with `update_tile_offset` in a real loop (one scf.for in the IR, not unrolled), accumulating in f32 with
`tile_mma`. M, N and K need not be multiples of the tiles: loads pad with zeros, stores drop what falls
outside C. `sg_layout`/`sg_data` at launch say how the workgroup's subgroups share the tile_mma result
(the RFC's wg_map); they do not change the numbers. With f32 inputs, `INPUT_PRECISION="tf32"` (Triton's
`input_precision`) multiplies on tf32 DPAS where the GPU has it: each input keeps 10 mantissa bits (truncated),
products and sums stay f32; the default "ieee" is exact f32.

Run: python tutorials/03-matrix-multiplication.py
"""
import time

import ml_dtypes
import numpy as np

import xetile_jit as xetile


@xetile.kernel
def matmul_kernel(a, b, c, M, N, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr,
                  ACTIVATION: xetile.constexpr = "", INPUT_PRECISION: xetile.constexpr = "ieee"):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [m, 0], [BM, BK])
    tb = xetile.init_tile(b, [0, n], [BK, BN])
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, BK):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc, input_precision=INPUT_PRECISION)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
    if ACTIVATION == "relu":  # a constexpr: resolved while tracing, no branch in the kernel
        acc = xetile.maximum(acc, 0.0)
    xetile.store_tile(xetile.init_tile(c, [m, n], [BM, BN]), acc)


def matmul(a, b, activation: str = "", bm: int = 256, bn: int = 256, bk: int = 32, c=None, device=None,
           input_precision: str = "ieee"):
    """C = A @ B in f32; `a`, `b` and `c` may be numpy arrays or USM arrays (dpnp, dpctl) on `device`'s queue."""
    (m, k), n = a.shape, b.shape[1]
    c = np.empty((m, n), np.float32) if c is None else c
    grid = (xetile.cdiv(m, bm), xetile.cdiv(n, bn))
    matmul_kernel[grid](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk, ACTIVATION=activation,
                        INPUT_PRECISION=input_precision, **subgroup_split(bm, bn), device=device)
    return c


def subgroup_split(bm: int, bn: int) -> dict:
    """How the workgroup's subgroups share the bm x bn result: 8x4 subgroups of (bm/8) x (bn/4), 32x64 for the
    default tile. On a GPU that accumulator stays in a subgroup's registers; on the `cpu` target 32x64 pieces run
    faster than 16x64 ones (1.0-1.1x oneMKL at 2048-4096 against 0.8-1.0x on the "earlier 2-core" machine of
    docs/performance.md), and this script's five GEMMs build in 4.3-4.6 s; `xetile.ops.matmul` also tunes 64x64
    pieces and K steps of 64 there."""
    return dict(sg_layout=[8, 4], sg_data=[bm // 8, bn // 4])


def check(m: int, n: int, k: int, dtype, activation: str = "", precision: str = "ieee") -> bool:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32).astype(dtype)
    b = rng.standard_normal((k, n), dtype=np.float32).astype(dtype)
    # tf32 keeps a 32x64 f32 accumulator, A and B of a K step of 16 in the 256 registers (K step 32 spills)
    bk = 16 if precision == "tf32" else 32
    matmul(a, b, activation, bk=bk, input_precision=precision)  # compile once
    start = time.perf_counter()
    c = matmul(a, b, activation, bk=bk, input_precision=precision)
    elapsed = time.perf_counter() - start
    expected = a.astype(np.float32) @ b.astype(np.float32)
    if activation == "relu":
        expected = np.maximum(expected, 0)
    error = np.abs(c - expected).max() / np.abs(expected).max()
    ok = error < (1e-3 if precision == "tf32" else 1e-5)  # tf32: inputs to 2**-10 relative
    name = np.dtype(dtype).name + (f"+{activation}" if activation else "")
    name += "" if precision == "ieee" else f"/{precision}"
    print(f"{m:>5} {n:>5} {k:>5}  {name:<14} {error:>9.2e}  {elapsed * 1e3:>8.1f}  {2 * m * n * k / elapsed / 1e9:>7.2f}"
          f"  {'ok' if ok else 'FAILED'}")
    return ok


def main() -> None:
    print(f"device: {xetile.default_device()}")
    print(f"{'M':>5} {'N':>5} {'K':>5}  {'dtype':<14} {'rel.error':>9}  {'ms':>8}  {'GFLOP/s':>7}")
    results = [
        check(1024, 1024, 1024, np.float16),
        check(1024, 1024, 1024, np.float32),
        check(1024, 1024, 1024, np.float32, precision="tf32"),
        check(1000, 700, 500, ml_dtypes.bfloat16),
        check(333, 517, 129, np.float16, activation="relu"),
    ]
    if not all(results):
        raise SystemExit("FAILED: result differs from numpy")
    print("OK: every result matches numpy")


if __name__ == "__main__":
    main()
