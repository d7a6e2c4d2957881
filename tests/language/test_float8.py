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
WIDE = [np.float16, np.float32, ml_dtypes.bfloat16]
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


@xetile.kernel
def widen_kernel(x, h, f, bf, BM: xetile.constexpr, BN: xetile.constexpr, BF16: xetile.constexpr):
    m = xetile.program_id(0) * BM
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(h, [m, 0], [BM, BN]), v.to(xetile.float16))
    xetile.store_tile(xetile.init_tile(f, [m, 0], [BM, BN]), v.to(xetile.float32))
    if BF16:
        xetile.store_tile(xetile.init_tile(bf, [m, 0], [BM, BN]), v.to(xetile.bfloat16))


def conversion_targets() -> list[dict]:
    """The targets a conversion runs on: on the device `cpu` alone, as xe-emulated lowers the conversions by the
    same code (codegen/llvm/float8.py) and each build takes seconds; its tile_mma is checked below."""
    return target_options(xetile.default_device())[:1]


def bits(x: np.ndarray) -> np.ndarray:
    return x.view(f"u{x.dtype.itemsize}")


def rounded(x: np.ndarray, fp8) -> list[np.ndarray]:
    """x.to(fp8) on each target the device runs, as the bits of the results. On the device from f32 only: f16
    and bf16 round through the same f32 conversion (codegen/llvm/float8.py), and each build takes seconds."""
    if xetile.default_device() != "numpy" and np.dtype(x.dtype) != np.float32:
        pytest.skip("f16 and bf16 round through the f32 conversion the f32 case runs on the device")
    results = []
    for options in conversion_targets():
        out = np.zeros(x.shape, fp8)
        convert_kernel[(x.shape[0] // ROWS,)](x, out, DST=xetile_dtype(fp8), BM=ROWS, BN=WIDTH, **options)
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


@pytest.mark.parametrize("fp8", FLOAT8, ids=dtype_id)
def test_float8_widens_bit_exact(fp8):
    """Every code to f16 (the short conversion tile_mma operands take), f32 and bf16 (through f32; in the
    interpreter only: on the device that is the f32 conversion and bf16 rounding, which its own tests check)."""
    codes = np.arange(256, dtype=np.uint8).reshape(ROWS, WIDTH).view(fp8)
    bf16 = xetile.default_device() == "numpy"
    for options in conversion_targets():
        outs = [np.zeros(codes.shape, dtype) for dtype in WIDE[:2 + bf16]]
        widen_kernel[(1,)](codes, *outs[:2], outs[-1], BM=ROWS, BN=WIDTH, BF16=bf16, **options)
        for out in outs:
            np.testing.assert_array_equal(bits(out), bits(codes.astype(out.dtype)), err_msg=str(out.dtype))


@pytest.mark.parametrize("src", WIDE, ids=dtype_id)
@pytest.mark.parametrize("fp8", FLOAT8, ids=dtype_id)
def test_float8_rounds_bit_exact(fp8, src):
    with np.errstate(over="ignore"):  # 3e38 is infinity in f16
        x = rounding_cases(fp8).astype(src)
    for result in rounded(x, fp8):
        np.testing.assert_array_equal(result, bits(x.astype(fp8)))


# ---- tile_mma -------------------------------------------------------------------------------------------------
FP8_GEMM = dict(BM=8, BN=16, BK=16)  # one DPAS block of C a workgroup: small device builds (1.5-3 s a target)


def float8_gemm_args(rng, fa, fb, m=33, n=40, k=72):
    """A (m x k) and B (k x n) of FP8 formats `fa`, `fb` from normals (subnormals and the largest values too), C of
    zeros; m, n and k multiples of no block, so loads pad with zeros and stores drop what falls outside C."""
    a = (rng.standard_normal((m, k)) * 8).astype(np.float32).astype(fa)
    b = (rng.standard_normal((k, n)) / 8).astype(np.float32).astype(fb)
    return a, b, np.zeros((m, n), np.float32), m, n, k


def float8_reference(a, b) -> np.ndarray:
    return a.astype(np.float16).astype(np.float32) @ b.astype(np.float16).astype(np.float32)


@pytest.mark.parametrize("fa, fb", [(FLOAT8[0], FLOAT8[1]), (FLOAT8[1], FLOAT8[1]), (FLOAT8[0], FLOAT8[0])],
                         ids=["e4m3fn-e5m2", "e5m2", "e4m3fn"])
def test_float8_gemm_with_borders(rng, fa, fb):
    """FP8 x FP8 -> f32 tile_mma, up-converted to f16 for DPAS; products are exact in f32, sums of K of them are
    compared against numpy's f32 sums in another order. On the device: the mixed formats only."""
    from test_passes import gemm
    if xetile.default_device() != "numpy" and fa == fb:
        pytest.skip("one format pair builds on the device (seconds a target); the interpreter runs each")
    a, b, c, m, n, k = float8_gemm_args(rng, fa, fb)
    expected = float8_reference(a, b)
    tolerance = 1e-6 * k * np.abs(expected).max()
    for options in target_options(xetile.default_device()):
        c[...] = 0
        gemm[(xetile.cdiv(m, FP8_GEMM["BM"]), xetile.cdiv(n, FP8_GEMM["BN"]))](a, b, c, m, n, k, **FP8_GEMM, **options)
        np.testing.assert_allclose(c, expected, rtol=0, atol=tolerance)


E5M2_NANS = [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF]


def test_float8_gemm_nans_where_numpy_has_them(rng):
    """Every e5m2 NaN code in A (a row each) and in B (a column each), one in K's padded last block: the tile_mma
    operands' conversion leaves NaN codes f16 NaNs of any payload (codegen/llvm/float8.py), and C is NaN exactly
    where numpy's f32 product of the same values is, the other numbers as they are (both targets on the device)."""
    from test_passes import gemm
    fp8 = ml_dtypes.float8_e5m2
    a, b, c, m, n, k = float8_gemm_args(rng, fp8, fp8)
    a.view(np.uint8)[[0, 5, 11, 20, 27, 32], [0, 13, 30, 47, 64, 71]] = E5M2_NANS
    b.view(np.uint8)[[2, 17, 35, 50, 66, 71], [1, 8, 15, 22, 33, 39]] = E5M2_NANS
    expected = float8_reference(a, b)
    nans = np.isnan(expected)
    assert nans.all(axis=1).sum() == 6 and nans.all(axis=0).sum() == 6 and nans.sum() == 6 * (m + n) - 36
    for options in target_options(xetile.default_device()):
        c[...] = 0
        gemm[(xetile.cdiv(m, FP8_GEMM["BM"]), xetile.cdiv(n, FP8_GEMM["BN"]))](a, b, c, m, n, k, **FP8_GEMM, **options)
        np.testing.assert_array_equal(np.isnan(c), nans)
        np.testing.assert_allclose(c[~nans], expected[~nans], rtol=0, atol=1e-6 * k * np.abs(expected[~nans]).max())
