"""Ops that need each element's position: `iota`, `tile_reduce` kinds argmax/argmin and
`tile_scan`/`cumsum`, in the numpy interpreter and as SPIR-V on opencl:cpu, against numpy, on one subgroup and
spread over a 2x2 grid of subgroups (so that positions, reductions and scans cross subgroups and blocks)."""
import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, dtype_id, rand

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)

constexpr = xetile.constexpr
SRC = (13, 27)                      # loaded through a 16x32 tile: the rest is padding
BM, BN = 16, 32
LAYOUTS = {"one_subgroup": None, "2x2_subgroups": xetile.Layout(sg_layout=[2, 2], sg_data=[8, 16])}


@xetile.kernel
def iota_kernel(dst, DIM: constexpr, LAYOUT: constexpr, BM: constexpr, BN: constexpr):
    out = xetile.init_tile(dst, [0, 0], [BM, BN], layout=LAYOUT)
    xetile.store_tile(out, xetile.iota([BM, BN], DIM) * 100 + xetile.iota([BM, BN], 1 - DIM))


@xetile.kernel
def arg_kernel(src, dst, KIND: constexpr, DIM: constexpr, PAD: constexpr, LAYOUT: constexpr, BM: constexpr,
               BN: constexpr):
    v = xetile.load_tile(xetile.init_tile(src, [0, 0], [BM, BN], layout=LAYOUT), padding=PAD)
    r = xetile.tile_reduce(KIND, v, [DIM])
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [1 if DIM == 0 else BM, 1 if DIM == 1 else BN]), r)


@xetile.kernel
def scan_kernel(src, dst, KIND: constexpr, DIM: constexpr, LAYOUT: constexpr, BM: constexpr, BN: constexpr):
    v = xetile.load_tile(xetile.init_tile(src, [0, 0], [BM, BN], layout=LAYOUT))
    r = xetile.cumsum(v, DIM) if KIND == "cumsum" else xetile.tile_scan(KIND, v, DIM)
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [BM, BN]), r)


@pytest.mark.parametrize("layout", LAYOUTS, ids=list(LAYOUTS))
@pytest.mark.parametrize("dim", [0, 1])
def test_iota(dim, layout):
    dst = np.zeros((BM, BN), np.int32)
    iota_kernel[(1,)](dst, DIM=dim, LAYOUT=LAYOUTS[layout], BM=BM, BN=BN)
    rows, cols = np.indices((BM, BN))
    np.testing.assert_array_equal(dst, (rows, cols)[dim] * 100 + (rows, cols)[1 - dim])


def padded(x, pad):
    out = np.full((BM, BN), pad, x.dtype)
    out[:x.shape[0], :x.shape[1]] = x
    return out


def arg_input(rng, dtype):
    """Few distinct values, so that ties are common (numpy takes the first); some NaNs in floats."""
    x = rng.integers(-3, 4, SRC).astype(np.float32).astype(dtype)
    if np.dtype(dtype).kind == "f" or np.dtype(dtype) == ml_dtypes.bfloat16:
        x[rng.random(SRC) < 0.02] = np.nan
    return x


def cases(full_dtypes, kinds, other_dtypes, other_kinds):
    """Every kind, dim and layout for `full_dtypes`; two of the combinations for the others (suite time)."""
    return ([(kind, dt, dim, layout) for dt in full_dtypes for kind in kinds for dim in (0, 1) for layout in LAYOUTS]
            + [(kind, dt, dim, layout) for dt in other_dtypes for kind in other_kinds
               for dim, layout in ((1, "one_subgroup"), (0, "2x2_subgroups"))])


def case_id(case) -> str:
    kind, dtype, dim, layout = case
    return f"{kind}-{dtype_id(dtype)}-dim{dim}-{layout}"


ARG_CASES = cases([np.float32, np.int32], ["argmax", "argmin"], [np.float16, ml_dtypes.bfloat16, np.int8, np.int64],
                  ["argmax"])


@pytest.mark.parametrize("kind, dtype, dim, layout", ARG_CASES, ids=map(case_id, ARG_CASES))
def test_argmax_argmin_first_index_like_numpy(rng, dtype, kind, dim, layout):
    x = arg_input(rng, dtype)
    pad = 0
    dst = np.zeros((1, BN) if dim == 0 else (BM, 1), np.int32)
    arg_kernel[(1,)](x, dst, KIND=kind, DIM=dim, PAD=pad, LAYOUT=LAYOUTS[layout], BM=BM, BN=BN)
    full = padded(x, pad).astype(np.float32)  # numpy has no bf16 argmax; the order is the same in f32
    expected = getattr(np, kind)(full, axis=dim, keepdims=True).astype(np.int32)
    np.testing.assert_array_equal(dst, expected)


def test_argmax_of_all_nan_and_of_ties():
    x = np.array([[np.nan, np.nan, np.nan, np.nan], [1, 5, 5, -np.inf], [-np.inf] * 4, [2, np.nan, 7, np.nan]],
                 np.float32)
    dst = np.zeros((4, 1), np.int32)
    arg_kernel[(1,)](x, dst, KIND="argmax", DIM=1, PAD=0, LAYOUT=None, BM=4, BN=4)
    np.testing.assert_array_equal(dst[:, 0], [0, 1, 0, 1])


SCAN_CASES = cases([np.float32, np.int32], ["cumsum"], [np.float16, ml_dtypes.bfloat16, np.int8], ["cumsum"]) + \
    cases([], [], [np.float32, np.int32], ["max", "min", "mul"])
NUMPY_SCANS = {"cumsum": np.cumsum, "add": np.cumsum, "mul": np.cumprod, "max": np.maximum.accumulate,
               "min": np.minimum.accumulate}


@pytest.mark.parametrize("kind, dtype, dim, layout", SCAN_CASES, ids=map(case_id, SCAN_CASES))
def test_scan_is_the_inclusive_prefix(rng, kind, dtype, dim, layout):
    x = rand(rng, (BM, BN), dtype, -3, 3) if kind != "mul" else rng.choice([-1, 1, 2], (BM, BN)).astype(dtype)
    dst = np.zeros((BM, BN), dtype)
    scan_kernel[(1,)](x, dst, KIND=kind, DIM=dim, LAYOUT=LAYOUTS[layout], BM=BM, BN=BN)
    wide = x.astype(np.float64) if np.dtype(dtype).kind != "i" else x.astype(np.int64)
    with np.errstate(over="ignore"):
        expected = NUMPY_SCANS[kind](wide, axis=dim).astype(dtype)  # ints wrap in their dtype
    assert_close(dst, expected, scale=BN)


@pytest.mark.parametrize("kind, numpy_scan", [("max", np.fmax.accumulate), ("min", np.fmin.accumulate)])
def test_scan_of_leading_nans_is_nan(rng, kind, numpy_scan):
    """max and min scans ignore a NaN as their reductions do: a prefix of NaNs alone is NaN (each step reduces the
    prefix padded with the kind's identity; with -inf/+inf as that identity such a prefix was the infinity)."""
    x = rand(rng, (BM, BN), np.float32, -3, 3)
    x[:, :5] = np.nan
    x[rng.random((BM, BN)) < 0.2] = np.nan
    dst = np.zeros((BM, BN), np.float32)
    scan_kernel[(1,)](x, dst, KIND=kind, DIM=1, LAYOUT=None, BM=BM, BN=BN)
    np.testing.assert_array_equal(dst, numpy_scan(x, axis=1))


def test_scan_kind_must_fit_the_dtype():
    x = np.zeros((BM, BN), np.float32)
    with pytest.raises(xetile.CompilationError, match="tile_scan: kind 'xor' does not apply to vector<16x32xf32>"):
        scan_kernel[(1,)](x, x.copy(), KIND="xor", DIM=1, LAYOUT=None, BM=BM, BN=BN)
