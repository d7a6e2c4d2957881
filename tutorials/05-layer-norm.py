"""Tutorial 5: layer normalization.

y = (x - mean) / sqrt(var + eps) * w + b over each row of x, in f16 with f32 statistics. A workgroup owns one
row, read through a 1-D tile (`init_tile(x, [row, 0], [BLOCK])`: one offset per array dim, the shape over the last
dim) into a `vector<BLOCKxf16>`; w and b are 1-D arrays. BLOCK is the next power of two of the width, so the
columns past N read padding: a mask from `xetile.arange(0, BLOCK) < N` keeps them out of the variance, and
`tile_reduce` over dim 0 gives a 1-element vector that `broadcast_to` spreads back over the row.

`fast_math=True` lets rsqrt take its approximate form and contracts `centered * rstd * weight + bias` into an FMA
(docs/guide.md "Fast math"): the result's relative error grows by at most the approximate rsqrt's.

Run: python tutorials/05-layer-norm.py
"""
import time

import numpy as np

import xetile_jit as xetile

RSQRT_ERROR = 2.7e-4  # the approximate rsqrt's largest relative error on the OpenCL CPU runtime (docs/guide.md)


@xetile.kernel
def layer_norm_kernel(x, w, b, y, N, eps, BLOCK: xetile.constexpr):
    row = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [row, 0], [BLOCK])).to(xetile.float32)
    inside = xetile.arange(0, BLOCK) < N
    mean = xetile.broadcast_to(xetile.tile_reduce("add", v, [0]) / N, [BLOCK])
    centered = xetile.where(inside, v - mean, 0.0)
    var = xetile.tile_reduce("add", centered * centered, [0]) / N
    rstd = xetile.broadcast_to(xetile.rsqrt(var + eps), [BLOCK])
    weight = xetile.load_tile(xetile.init_tile(w, [0], [BLOCK])).to(xetile.float32)
    bias = xetile.load_tile(xetile.init_tile(b, [0], [BLOCK])).to(xetile.float32)
    xetile.store_tile(xetile.init_tile(y, [row, 0], [BLOCK]), centered * rstd * weight + bias)


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5, y=None, device=None,
               fast_math: bool = False) -> np.ndarray:
    m, n = x.shape
    y = np.empty_like(x) if y is None else y
    block = 1 << max(0, (n - 1).bit_length())  # the next power of two holds a whole row
    # past 1024 columns, a subgroup for every 256 (as Triton's layer norm sizes num_warps): on the OpenCL CPU device
    # 2048 rows 4096 wide (f16) ran in 2.70 ms and built in 0.3 s on 16 subgroups, against 3.36 ms and 2.9 s on the
    # default 2 (which keeps 8 KiB of a row a subgroup); up to 1024 columns the default (1) was the fastest
    options = {"num_subgroups": min(16, block // 256)} if block > 1024 else {}
    layer_norm_kernel[(m,)](x, w, b, y, n, eps, BLOCK=block, device=device, fast_math=fast_math, **options)
    return y


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    x = x.astype(np.float32)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w.astype(np.float32) + b.astype(np.float32)


def check(m: int, n: int, device=None, fast_math: bool = False) -> bool:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, n), dtype=np.float32).astype(np.float16)
    w = rng.standard_normal(n, dtype=np.float32).astype(np.float16)
    b = rng.standard_normal(n, dtype=np.float32).astype(np.float16)
    layer_norm(x, w, b, device=device, fast_math=fast_math)  # compile once
    start = time.perf_counter()
    y = layer_norm(x, w, b, device=device, fast_math=fast_math)
    elapsed = time.perf_counter() - start
    expected = reference(x, w, b)
    error = np.abs(y.astype(np.float32) - expected).max() / max(1.0, np.abs(expected).max())
    ok = error < 2e-3 + (RSQRT_ERROR if fast_math else 0)
    print(f"{m:>5} {n:>5} {'yes' if fast_math else 'no':>4}  {error:>9.2e}  {elapsed * 1e3:>8.1f}  "
          f"{2 * x.nbytes / elapsed / 1e9:>6.2f}"
          f"  {'ok' if ok else 'FAILED'}")
    return ok


def main() -> None:
    print(f"device: {xetile.default_device()}")
    print(f"{'rows':>5} {'width':>5} {'fast':>4}  {'rel.error':>9}  {'ms':>8}  {'GB/s':>6}")
    results = [check(2048, n, fast_math=fast_math) for fast_math in (False, True) for n in (17, 768, 1000, 4096)]
    if not all(results):
        raise SystemExit("FAILED: result differs from numpy")
    x, w = np.zeros((2048, 768), np.float32), np.zeros(768, np.float32)
    print(xetile.testing.gpu_code_stats(layer_norm_kernel, x, w, w, x, 768, 1e-5, BLOCK=1024))
    print("OK: every result matches numpy")


if __name__ == "__main__":
    main()
