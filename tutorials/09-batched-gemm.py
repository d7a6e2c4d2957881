"""Tutorial 9: batched matrix multiplication.

C[z] = A[z] @ B[z] for every z of 3-D arrays. The tutorial GEMM (03) with one more grid axis: `program_id(2)` is
the batch, given to `init_tile` as a leading offset (`init_tile(a, [z, m, 0], [BM, BK])`: one offset per array dim,
the tile shape over the last two). A tile reads inside its batch only: the rows and columns past a matrix's end
read zeros, not the next batch's numbers, so M, N and K need not be multiples of the tiles. B may be a transposed
view (strides in elements per dim; `order=[0, 1]` tiles read its column-major matrices).

Run: python tutorials/09-batched-gemm.py
"""
import time

import numpy as np

import xetile_jit as xetile


@xetile.kernel
def bmm_kernel(a, b, c, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr,
               B_ORDER: xetile.constexpr = None):
    z = xetile.program_id(2)
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [z, m, 0], [BM, BK])
    tb = xetile.init_tile(b, [z, 0, n], [BK, BN], order=B_ORDER)
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, BK):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
    xetile.store_tile(xetile.init_tile(c, [z, m, n], [BM, BN]), acc)


def bmm(a, b, bm: int = 128, bn: int = 128, bk: int = 32, c=None, device=None):
    """C = A @ B per batch, in f32; a is (batch, M, K), b (batch, K, N), row- or column-major matrices."""
    (batch, m, k), n = a.shape, b.shape[2]
    c = np.empty((batch, m, n), np.float32) if c is None else c
    order = [0, 1] if b.strides[1] < b.strides[2] else None
    grid = (xetile.cdiv(m, bm), xetile.cdiv(n, bn), batch)
    bmm_kernel[grid](a, b, c, k, BM=bm, BN=bn, BK=bk, B_ORDER=order, sg_layout=[4, 4],
                     sg_data=[bm // 4, bn // 4], device=device)
    return c


def check(batch: int, m: int, n: int, k: int, transposed_b: bool = False, device=None) -> bool:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((batch, m, k), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((batch, n, k) if transposed_b else (batch, k, n), dtype=np.float32).astype(np.float16)
    b = b.transpose(0, 2, 1) if transposed_b else b
    bmm(a, b, device=device)  # compile once
    start = time.perf_counter()
    c = bmm(a, b, device=device)
    elapsed = time.perf_counter() - start
    expected = a.astype(np.float32) @ b.astype(np.float32)
    error = np.abs(c - expected).max() / np.abs(expected).max()
    ok = error < 1e-5
    print(f"{batch:>5} {m:>5} {n:>5} {k:>5}  {'B^T' if transposed_b else 'B':<4} {error:>9.2e}  "
          f"{elapsed * 1e3:>8.1f}  {2 * batch * m * n * k / elapsed / 1e9:>7.2f}  {'ok' if ok else 'FAILED'}")
    return ok


def main() -> None:
    print(f"device: {xetile.default_device()}")
    print(f"{'batch':>5} {'M':>5} {'N':>5} {'K':>5}  {'B':<4} {'rel.error':>9}  {'ms':>8}  {'GFLOP/s':>7}")
    results = [check(8, 256, 256, 256), check(5, 200, 150, 100), check(4, 256, 128, 64, transposed_b=True)]
    if not all(results):
        raise SystemExit("FAILED: result differs from numpy")
    a = np.zeros((8, 256, 256), np.float16)
    print(xetile.testing.gpu_code_stats(bmm_kernel, a, a, a.astype(np.float32), 256, BM=128, BN=128, BK=32,
                                        B_ORDER=None, sg_layout=[4, 4], sg_data=[32, 32]))
    print("OK: every result matches numpy")


if __name__ == "__main__":
    main()
