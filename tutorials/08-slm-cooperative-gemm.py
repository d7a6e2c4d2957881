"""Tutorial 8: a GEMM that stages A and B through shared local memory (XeTile RFC Appendix 2.4).

Each workgroup computes a BM x BN block of C = A @ B. Instead of every subgroup loading the A and B pieces its
`tile_mma` needs from global memory (pieces that overlap between subgroups), the workgroup copies each K slice
of A and B once, cooperatively, into shared local memory (SLM), and the subgroups read their pieces from there:

- `alloc_slm([BM, 2 * BK], dtype)`: a workgroup-shared buffer (`memref<...x f16, slm>` in the IR). Two K slices
  of A (and of B): the subgroups read one while the next one is written into the other.
- the copy tiles carry their own layouts (`COPY_A`, `COPY_B`, the RFC's `#mp_a_cop`/`#mp_b_cop`): every subgroup
  moves a disjoint part of the slice; the tiles read for `tile_mma` take the matrix product's layout.
- `xetile.barrier()` (the RFC's gpu.barrier): a slice is read only after every subgroup has written its part,
  and overwritten only after every subgroup has read it. One barrier per K step does both with two buffers.

The compiler orders global memory by itself; SLM buffers of `alloc_slm` are ordered by your barriers only.

Run: python tutorials/08-slm-cooperative-gemm.py
"""
import time

import numpy as np

import xetile_jit as xetile


@xetile.kernel
def slm_gemm_kernel(a, b, c, M, N, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr,
                    COPY_A: xetile.constexpr, COPY_B: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    a_slm = xetile.alloc_slm([BM, 2 * BK], xetile.float16)
    b_slm = xetile.alloc_slm([2 * BK, BN], xetile.float16)
    ga = xetile.init_tile(a, [m, 0], [BM, BK], layout=COPY_A)
    gb = xetile.init_tile(b, [0, n], [BK, BN], layout=COPY_B)
    # the first K slice into buffer 0
    xetile.store_tile(xetile.init_tile(a_slm, [0, 0], [BM, BK], layout=COPY_A), xetile.load_tile(ga))
    xetile.store_tile(xetile.init_tile(b_slm, [0, 0], [BK, BN], layout=COPY_B), xetile.load_tile(gb))
    xetile.barrier()
    acc = xetile.zeros([BM, BN], xetile.float32)
    cur = 0  # the SLM offset of the slice being read; the next one goes to BK - cur
    for k in range(0, K, BK):
        ga = xetile.update_tile_offset(ga, [0, BK])
        gb = xetile.update_tile_offset(gb, [BK, 0])
        next_a = xetile.load_tile(ga)  # from global memory, while this slice is multiplied
        next_b = xetile.load_tile(gb)
        sa = xetile.load_tile(xetile.init_tile(a_slm, [0, cur], [BM, BK]))
        sb = xetile.load_tile(xetile.init_tile(b_slm, [cur, 0], [BK, BN]))
        acc = xetile.tile_mma(sa, sb, acc)
        cur = BK - cur
        xetile.store_tile(xetile.init_tile(a_slm, [0, cur], [BM, BK], layout=COPY_A), next_a)
        xetile.store_tile(xetile.init_tile(b_slm, [cur, 0], [BK, BN], layout=COPY_B), next_b)
        xetile.barrier()  # the slice just written is complete; the one just read may be overwritten next
    xetile.store_tile(xetile.init_tile(c, [m, n], [BM, BN]), acc)


def slm_gemm(a, b, bm: int = 32, bn: int = 32, bk: int = 16, device=None) -> np.ndarray:
    """C = A @ B in f32 for f16 `a` and `b`; 2 x 2 subgroups, each computing a (bm/2) x (bn/2) block of C."""
    (m, k), n = a.shape, b.shape[1]
    c = np.empty((m, n), np.float32)
    slm_gemm_kernel[(xetile.cdiv(m, bm), xetile.cdiv(n, bn))](a, b, c, m, n, k, **options(bm, bn, bk), device=device)
    return c


def options(bm: int, bn: int, bk: int) -> dict:
    copy_a = xetile.Layout(sg_layout=[4, 1], sg_data=[bm // 4, bk])  # 4 subgroups, each a band of rows
    copy_b = xetile.Layout(sg_layout=[4, 1], sg_data=[bk // 4, bn])
    return dict(BM=bm, BN=bn, BK=bk, COPY_A=copy_a, COPY_B=copy_b, sg_layout=[2, 2], sg_data=[bm // 2, bn // 2])


def check(m: int, n: int, k: int) -> bool:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((k, n), dtype=np.float32).astype(np.float16)
    slm_gemm(a, b)  # compile once
    start = time.perf_counter()
    c = slm_gemm(a, b)
    elapsed = time.perf_counter() - start
    expected = a.astype(np.float32) @ b.astype(np.float32)
    error = np.abs(c - expected).max() / np.abs(expected).max()
    ok = error < 1e-5
    print(f"{m:>5} {n:>5} {k:>5}  {error:>9.2e}  {elapsed * 1e3:>8.1f}  {2 * m * n * k / elapsed / 1e9:>7.2f}  "
          f"{'ok' if ok else 'FAILED'}")
    return ok


def main() -> None:
    print(f"device: {xetile.default_device()}")
    print(f"{'M':>5} {'N':>5} {'K':>5}  {'rel.error':>9}  {'ms':>8}  {'GFLOP/s':>7}")
    if not all([check(256, 256, 256), check(200, 136, 104)]):
        raise SystemExit("FAILED: result differs from numpy")
    a = np.zeros((256, 256), np.float16)
    print(xetile.testing.gpu_code_stats(slm_gemm_kernel, a, a, a.astype(np.float32), 256, 256, 256,
                                        **options(32, 32, 16)))
    print("OK: every result matches numpy")


if __name__ == "__main__":
    main()
