"""Tutorial 2: fused row-wise softmax.

One workgroup handles BM rows at once and keeps them in registers: read once, reduce twice
(`tile_reduce` max and add, whose results keep the reduced dim as size 1), write once. Loading with
padding=-inf makes the columns past N vanish from both reductions, so any N up to BN works.

`fast_math=True` lets the exponential and the division take their approximate forms (docs/guide.md "Fast math"):
on an Intel GPU they are then one math-unit instruction each, and an element's relative error is at most twice the
exponential's bound (its own, and the row sum's) plus the division's.

Run: python tutorials/02-fused-softmax.py
"""
import numpy as np

import xetile_jit as xetile

# The largest relative errors of the approximate exp and division measured on the OpenCL CPU runtime (docs/guide.md
# "Fast math"), and what they allow an element of the softmax
EXP_ERROR, DIVIDE_ERROR = 1.6e-4, 3.2e-4
FAST_MATH_ERROR = 2 * EXP_ERROR + DIVIDE_ERROR


@xetile.kernel
def softmax_kernel(x, y, M, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]), padding=float("-inf")).to(xetile.float32)
    shifted = rows - xetile.tile_reduce("max", rows, [1])        # [BM, 1] broadcasts along the row
    numerator = xetile.exp(shifted)
    denominator = xetile.tile_reduce("add", numerator, [1])
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), numerator / denominator)


def softmax(x: np.ndarray, rows_per_workgroup: int = 16, fast_math: bool = False) -> np.ndarray:
    m, n = x.shape
    bn = 1 << (n - 1).bit_length()  # the next power of two holds a whole row
    y = np.empty_like(x)
    softmax_kernel[(xetile.cdiv(m, rows_per_workgroup),)](x, y, m, BM=rows_per_workgroup, BN=bn, fast_math=fast_math)
    return y


def reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main() -> None:
    rng = np.random.default_rng(0)
    failed = False
    for dtype, tol in ((np.float32, 1e-6), (np.float16, 1e-3)):
        x = rng.standard_normal((1000, 781)).astype(dtype)
        expected = reference(x)
        for fast_math in (False, True):
            error = np.abs(softmax(x, fast_math=fast_math).astype(np.float32) - expected)
            bound = tol + FAST_MATH_ERROR * np.abs(expected) if fast_math else tol
            failed |= not np.all(error < bound)
            print(f"softmax {x.shape} {np.dtype(dtype).name}{' fast_math' if fast_math else ''}: max |error| vs "
                  f"numpy = {error.max():.3g}")
    if failed:
        raise SystemExit("FAILED: result differs from numpy")
    print("OK")


if __name__ == "__main__":
    main()
