"""FP8 (float8_e4m3fn, float8_e5m2): conversions to and from f16, bf16 and f32 bit-exact against ml_dtypes over
every FP8 code and over the rounding cases of the way back (ties, just off ties, overflow, subnormals, NaN,
infinity); FP8 tile_mma against numpy in f32 of the same inputs."""
import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import XETILE_DTYPE, dtype_id, target_options

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)

FLOAT8 = [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]
WIDE = [np.float16, ml_dtypes.bfloat16, np.float32]
XETILE_FLOAT8 = {np.dtype(ml_dtypes.float8_e4m3fn): xetile.float8_e4m3fn,
                 np.dtype(ml_dtypes.float8_e5m2): xetile.float8_e5m2}
ROWS, WIDTH = 4, 64  # the 256 codes in 4 rows of 64 bytes (the narrowest rows 2D block messages read); tiles of 4


def xetile_dtype(dtype):
    return XETILE_FLOAT8.get(np.dtype(dtype)) or XETILE_DTYPE[np.dtype(dtype)]


@xetile.kernel
def convert_kernel(x, out, DST: xetile.constexpr, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(out, [m, 0], [BM, BN]), v.to(DST))


def bits(x: np.ndarray) -> np.ndarray:
    return x.view(f"u{x.dtype.itemsize}")


def converted(x: np.ndarray, dst) -> list[np.ndarray]:
    """x.to(dst) on each target the device runs, as the bits of the results. On the device the f32 cases only:
    the FP8 code is the same for f16 and bf16 (through f32, codegen/llvm/float8.py), each build takes seconds."""
    if xetile.default_device() != "numpy" and np.dtype(x.dtype) != np.float32 and np.dtype(dst) != np.float32:
        pytest.skip("f16 and bf16 go through the f32 conversions the f32 cases test on the device")
    results = []
    for options in target_options(xetile.default_device()):
        out = np.zeros(x.shape, dst)
        convert_kernel[(x.shape[0] // ROWS,)](x, out, DST=xetile_dtype(dst), BM=ROWS, BN=WIDTH, **options)
        results.append(bits(out))
    return results


def rounding_cases(fp8) -> np.ndarray:
    """f32 values around every FP8 value: each, the midpoints between neighbours and one f32 step either side of
    them, past the largest finite, below the smallest subnormal, infinities and NaNs; rows of WIDTH."""
    finite = np.arange(256, dtype=np.uint8).view(fp8).astype(np.float32)
    finite = np.unique(finite[np.isfinite(finite) & (finite >= 0)])
    mids = (finite[:-1] + finite[1:]) / 2
    top = finite[-1] * np.float32(1.0625)
    near = np.concatenate([finite, mids, np.nextafter(mids, 0), np.nextafter(mids, np.inf),
                           [top, finite[1] / 4, finite[1] / 2, 1e-30, np.inf, np.nan, 3e38]]).astype(np.float32)
    values = np.concatenate([near, -near])
    return np.resize(values, (-(-values.size // (ROWS * WIDTH)) * ROWS, WIDTH))


@pytest.mark.parametrize("dst", WIDE, ids=dtype_id)
@pytest.mark.parametrize("fp8", FLOAT8, ids=dtype_id)
def test_float8_widens_bit_exact(fp8, dst):
    codes = np.arange(256, dtype=np.uint8).reshape(ROWS, WIDTH).view(fp8)
    for result in converted(codes, dst):
        np.testing.assert_array_equal(result, bits(codes.astype(dst)))


@pytest.mark.parametrize("src", WIDE, ids=dtype_id)
@pytest.mark.parametrize("fp8", FLOAT8, ids=dtype_id)
def test_float8_rounds_bit_exact(fp8, src):
    with np.errstate(over="ignore"):  # 3e38 is infinity in f16
        x = rounding_cases(fp8).astype(src)
    for result in converted(x, fp8):
        np.testing.assert_array_equal(result, bits(x.astype(fp8)))
