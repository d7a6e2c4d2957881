"""Tutorial 11: grouped GEMM, a list of matrix products of different sizes in one launch.

C_g = A_g @ B_g for g = 0..G-1, each with its own M, N and K. The matrices of all groups are packed one after
another in three flat arrays; two index arrays say where everything is:
- `problems[g] = (M, N, K, first row of A_g, of B_g, of C_g)`: each A_g is viewed as a matrix of its own width K
  starting at that row of the flat array (`init_tile(flat, [row, col], shape, base_shape=[rows, K],
  base_strides=[K, 1])`, the XeTile RFC's init_tile on memory of dynamic shape and strides), so the packing puts
  every matrix at a multiple of its row length;
- `tiles[p] = (g, tile row, tile column)`: which group and which output tile workgroup `p` computes.
A kernel reads them as scalars (`problems[g, 0]`, MLIR's memref.load) and then runs the tutorial GEMM's loop over
that group's K. Rows and columns past a group's matrix read zeros (each view ends where its matrix does), so no size
needs to be a multiple of the tiles. Triton's grouped GEMM walks the groups inside the kernel; here the host
lays the tiles out once, a loop-free lookup per workgroup.

Run: python tutorials/11-grouped-gemm.py
"""
import time

import numpy as np

import xetile_jit as xetile

M_, N_, K_, ROW_A, ROW_B, ROW_C = range(6)  # the columns of `problems`


@xetile.kernel
def grouped_gemm_kernel(a, b, c, problems, tiles, BM: xetile.constexpr, BN: xetile.constexpr,
                        BK: xetile.constexpr):
    p = xetile.program_id(0)
    g = tiles[p, 0]
    m = tiles[p, 1] * BM
    n = tiles[p, 2] * BN
    M, N, K = problems[g, 0], problems[g, 1], problems[g, 2]
    ra, rb, rc = problems[g, 3], problems[g, 4], problems[g, 5]
    ta = xetile.init_tile(a, [ra + m, 0], [BM, BK], base_shape=[ra + M, K], base_strides=[K, 1])
    tb = xetile.init_tile(b, [rb, n], [BK, BN], base_shape=[rb + K, N], base_strides=[N, 1])
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, BK):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
    tc = xetile.init_tile(c, [rc + m, n], [BM, BN], base_shape=[rc + M, N], base_strides=[N, 1])
    xetile.store_tile(tc, acc)


def pack(matrices: list[np.ndarray], dtype) -> tuple[np.ndarray, list[int]]:
    """The matrices in one flat array, each starting at a multiple of its own row length; their first rows."""
    rows, end = [], 0
    for x in matrices:
        first = -(-end // x.shape[1])
        rows.append(first)
        end = (first + x.shape[0]) * x.shape[1]
    flat = np.zeros(max(end, 1), dtype)
    for x, first in zip(matrices, rows):
        start = first * x.shape[1]
        flat[start:start + x.size] = x.ravel()
    return flat, rows


def grouped_gemm(pairs: list[tuple[np.ndarray, np.ndarray]], bm: int = 32, bn: int = 32, bk: int = 16,
                 device=None) -> list[np.ndarray]:
    """[A_g @ B_g in f32 for each (A_g, B_g)], all in one launch."""
    outs = [np.zeros((a.shape[0], b.shape[1]), np.float32) for a, b in pairs]
    flat_a, rows_a = pack([a for a, _ in pairs], pairs[0][0].dtype)
    flat_b, rows_b = pack([b for _, b in pairs], pairs[0][1].dtype)
    flat_c, rows_c = pack(outs, np.float32)
    problems = np.array([(a.shape[0], b.shape[1], a.shape[1], ra, rb, rc)
                         for (a, b), ra, rb, rc in zip(pairs, rows_a, rows_b, rows_c)], np.int32)
    tiles = np.array([(g, i, j) for g, (a, b) in enumerate(pairs)
                      for i in range(xetile.cdiv(a.shape[0], bm)) for j in range(xetile.cdiv(b.shape[1], bn))], np.int32)
    grouped_gemm_kernel[(len(tiles),)](flat_a, flat_b, flat_c, problems, tiles, BM=bm, BN=bn, BK=bk,
                                       sg_layout=[2, 2], sg_data=[bm // 2, bn // 2], device=device)
    return [flat_c[rc * n:(rc + m) * n].reshape(m, n) for (m, n), rc in zip((o.shape for o in outs), rows_c)]


def problems_of(sizes, dtype, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((m, k), dtype=np.float32).astype(dtype),
             rng.standard_normal((k, n), dtype=np.float32).astype(dtype)) for m, n, k in sizes]


def check(sizes, dtype) -> bool:
    pairs = problems_of(sizes, dtype)
    grouped_gemm(pairs)  # compile once
    start = time.perf_counter()
    outs = grouped_gemm(pairs)
    elapsed = time.perf_counter() - start
    errors = []
    for (a, b), c in zip(pairs, outs):
        expected = a.astype(np.float32) @ b.astype(np.float32)
        errors.append(np.abs(c - expected).max() / np.abs(expected).max())
    flops = sum(2 * m * n * k for m, n, k in sizes)
    ok = max(errors) < 1e-5
    print(f"{len(sizes):>6}  {np.dtype(dtype).name:<8} {max(errors):>9.2e}  {elapsed * 1e3:>8.1f}  "
          f"{flops / elapsed / 1e9:>7.2f}  {'ok' if ok else 'FAILED'}")
    return ok


def main() -> None:
    print(f"device: {xetile.default_device()}")
    print(f"{'groups':>6}  {'dtype':<8} {'rel.error':>9}  {'ms':>8}  {'GFLOP/s':>7}")
    sizes = [(100, 70, 50), (64, 128, 96), (33, 17, 200), (128, 64, 32), (7, 300, 40)]
    results = [check(sizes, np.float16), check(sizes[::-1], np.float32)]
    if not all(results):
        raise SystemExit("FAILED: result differs from numpy")
    flat, table = np.zeros(1 << 16, np.float16), np.zeros((len(sizes), 6), np.int32)
    print(xetile.testing.gpu_code_stats(grouped_gemm_kernel, flat, flat, flat.astype(np.float32), table, table,
                                        BM=32, BN=32, BK=16, sg_layout=[2, 2], sg_data=[16, 16]))
    print("OK: every result matches numpy")


if __name__ == "__main__":
    main()
