"""Tutorial 7: GEMM + bias broadcast + row reduction (XeTile RFC Appendix 2.2, as written there).

C = A @ B^T + broadcast(bias, dim 0), then Reduce = reduce_add(C, dim 1). The program is the RFC's: B comes
transposed (`bt`, row-major N x K) and is read with its own layout `mp_bt`, then `tile_transpose` into the layout
`mp_b` the `tile_mma` takes; the bias row is broadcast in the C layout; C is converted (`convert_layout`, the RFC's
`tile_conv_layout`) to `mp_reduce2`, whose subgroups each hold whole rows, then summed along rows (`tile_reduce`);
the row sums go out with `atomic_rmw_tile` (the workgroups along N each add their part).

Every op carries the layout the RFC gives it. The RFC's workgroup tile is 256x256 with 32 subgroups; here the tile
is BM x BN with the same sg_layouts and sg_data scaled to it (`layouts(BM, BN, BK)`). The conversion of C would
stage all of C in shared local memory (256 KiB at 256x256, more than any Xe GPU has); the compiler instead sums
each subgroup's piece of C where it is and exchanges only these partial sums (4 KiB at 256x256), as the sum is
the same. mp_bt (sg_layout [4, 8], order [0, 1]) gives each subgroup the B^T rows of the B columns it holds in
mp_b, so the transpose moves no data between subgroups (RFC Appendix 2.3's "optimized mapping", sg_layout [32, 1],
is the same distribution, and builds the same); B^T is read by transposed block loads. The default tile here is
128x128 (a shorter build on the CPU device); the GPU build below is the RFC's 256x256.

Run: python tutorials/07-gemm-bias-reduce.py
"""
import time

import numpy as np

import xetile_jit as xetile
from xetile_jit import Layout


def layouts(bm: int, bn: int, bk: int) -> tuple:
    """The RFC's wg_maps for a BM x BN x BK tile (its own are those of 256 x 256 x 32): mp_a, mp_bt, mp_b, mp_c,
    mp_bcast, mp_reduce2, mp_reduce."""
    return (Layout([8, 4], [bm // 8, bk]), Layout([4, 8], [bn // 4, bk], order=[0, 1]), Layout([8, 4], [bk, bn // 4]),
            Layout([8, 4], [bm // 8, bn // 4]), Layout([8, 4], [1, bn // 4]), Layout([32, 1], [bm // 32, bn]),
            Layout([32, 1], [bm // 32, 1]))


@xetile.kernel
def gemm_bias_reduce(a, bt, bias, res, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr,
                     L: xetile.constexpr):
    mp_a, mp_bt, mp_b, mp_c, mp_bcast, mp_reduce2, mp_reduce = L
    i = xetile.program_id(0) * BM
    j = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [i, 0], [BM, BK], layout=mp_a)
    tbt = xetile.init_tile(bt, [j, 0], [BN, BK], layout=mp_bt)
    c = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, BK):
        va = xetile.load_tile(ta)
        vb = xetile.tile_transpose(xetile.load_tile(tbt), layout=mp_b)
        c = xetile.tile_mma(va, vb, c, layout=mp_c)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tbt = xetile.update_tile_offset(tbt, [0, BK])
    row = xetile.load_tile(xetile.init_tile(bias, [0, j], [1, BN], layout=mp_bcast))
    c = c + xetile.tile_broadcast(row, [0], [BM, BN], layout=mp_c)
    c = xetile.convert_layout(c, mp_reduce2)
    sums = xetile.tile_reduce("add", c, [1], layout=mp_reduce)
    xetile.atomic_rmw_tile("add", sums, xetile.init_tile(res, [i, 0], [BM, 1], layout=mp_reduce))


def gemm_bias_reduce_rows(a, bt, bias, bm: int = 128, bn: int = 128, bk: int = 32, device=None) -> np.ndarray:
    """reduce_add(a @ bt.T + bias, dim 1) as an (M, 1) f32 array; `bias` is (1, N) f32."""
    (m, k), n = a.shape, bt.shape[0]
    res = np.zeros((m, 1), np.float32)
    grid = (xetile.cdiv(m, bm), xetile.cdiv(n, bn))
    gemm_bias_reduce[grid](a, bt, bias, res, k, BM=bm, BN=bn, BK=bk, L=layouts(bm, bn, bk), device=device)
    return res


def check(m: int, n: int, k: int) -> bool:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32).astype(np.float16)
    bt = rng.standard_normal((n, k), dtype=np.float32).astype(np.float16)
    bias = rng.standard_normal((1, n), dtype=np.float32)
    gemm_bias_reduce_rows(a, bt, bias)  # compile once
    start = time.perf_counter()
    res = gemm_bias_reduce_rows(a, bt, bias)
    elapsed = time.perf_counter() - start
    expected = (a.astype(np.float64) @ bt.astype(np.float64).T + bias).sum(axis=1, keepdims=True)
    error = np.abs(res - expected).max() / np.abs(expected).max()
    ok = error < 1e-4
    print(f"{m:>5} {n:>5} {k:>5}  {error:>9.2e}  {elapsed * 1e3:>8.1f}  {2 * m * n * k / elapsed / 1e9:>7.2f}"
          f"  {'ok' if ok else 'WRONG'}")
    return ok


if __name__ == "__main__":
    print(f"device: {xetile.default_device()}")
    print("    M     N     K      error        ms   GFLOP/s")
    results = [check(256, 256, 128), check(200, 300, 72)]
    compiled = gemm_bias_reduce.warmup(np.zeros((512, 128), np.float16), np.zeros((512, 128), np.float16),
                                       np.zeros((1, 512), np.float32), np.zeros((512, 1), np.float32), 128,
                                       BM=256, BN=256, BK=32, L=layouts(256, 256, 32), target="xe-hpc")
    if "isa" in compiled.asm:
        from xetile_jit.toolchain.isa_stats import innermost_loops
        print("xe-hpc main loop:", innermost_loops(compiled.asm["isa"])[0])
    raise SystemExit(0 if all(results) else 1)
