"""Launching kernels: argument and grid checks (LaunchError, arrays untouched), grids, program ids, the compile
cache, warmup, scalar argument types and devices."""
from __future__ import annotations

import itertools
import re
import sys

import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, dtype_id, rand
from usm_arrays import needs_dpnp
from xetile_jit.compiler.tracer import Tracer

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)


@xetile.kernel
def scale_copy(x, y, s, BM: xetile.constexpr, BN: xetile.constexpr):
    """y[block] = x[block] * s, one BM x BN block per workgroup along both grid axes."""
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    v = xetile.load_tile(xetile.init_tile(x, [m, n], [BM, BN]))
    xetile.store_tile(xetile.init_tile(y, [m, n], [BM, BN]), v * s)


def expect_launch_error(expected: str, launch, *arrays):
    """`launch()` raises LaunchError containing `expected` and leaves `arrays` untouched."""
    before = [a.copy() for a in arrays]
    with pytest.raises(xetile.LaunchError, match=re.escape(expected)):
        launch()
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)


@pytest.fixture
def xy(rng):
    return rand(rng, (16, 16), np.float32), np.zeros((16, 16), np.float32)


def test_scale_copy_runs(xy):
    x, y = xy
    scale_copy[(2, 2)](x, y, 3.0, BM=8, BN=8)
    assert_close(y, x * 3)


# ---- argument binding --------------------------------------------------------------------------------------

def test_too_many_arguments(xy):
    x, y = xy
    expect_launch_error("scale_copy(): too many positional arguments; parameters are (x, y, s, BM, BN)",
                        lambda: scale_copy[(2, 2)](x, y, 3.0, 8, 8, 5), x, y)


def test_too_few_arguments(xy):
    x, y = xy
    expect_launch_error("scale_copy(): missing a required argument: 's'",
                        lambda: scale_copy[(2, 2)](x, y, BM=8, BN=8), x, y)


def test_unknown_keyword(xy):
    x, y = xy
    expect_launch_error("scale_copy(): got an unexpected keyword argument 'BK'",
                        lambda: scale_copy[(2, 2)](x, y, 3.0, BM=8, BN=8, BK=4), x, y)


def test_missing_constexpr_is_named(xy):
    x, y = xy
    expect_launch_error("(missing constexpr BN)", lambda: scale_copy[(2, 2)](x, y, 3.0, BM=8), x, y)
    expect_launch_error("(missing constexpr BM, BN)", lambda: scale_copy[(2, 2)](x, y, 3.0), x, y)


def test_constexpr_may_be_positional(xy):
    x, y = xy
    scale_copy[(2, 2)](x, y, 2.0, 8, 8)
    assert_close(y, x * 2)


def test_direct_call_is_a_type_error(xy):
    x, y = xy
    with pytest.raises(TypeError, match=re.escape("launch a kernel as scale_copy[grid](...)")):
        scale_copy(x, y, 1.0, BM=8, BN=8)
    np.testing.assert_array_equal(y, 0)


# ---- array arguments ---------------------------------------------------------------------------------------

def test_a_kernel_decorated_again_is_itself(xy):
    x, y = xy
    assert xetile.kernel(scale_copy) is scale_copy
    scale_copy[(2, 2)](x, y, 2.0, BM=8, BN=8)
    assert_close(y, x * 2)
    tuned = xetile.autotune([xetile.Config(BM=8, BN=8)], key=[])(scale_copy)
    with pytest.raises(TypeError, match="@xetile.kernel decorates a Python function \\(a def\\), not an object of "
                                        "type Autotuner; decorators that wrap a kernel, such as @xetile.autotune, go "
                                        "above it"):
        xetile.kernel(tuned)


def test_array_must_have_a_dim(xy):
    x, y = xy
    bad = np.zeros((), np.float32)
    expect_launch_error("argument 'x': expected an array of rank >= 1, got a 0-d array",
                        lambda: scale_copy[(2, 2)](bad, y, 1.0, BM=8, BN=8), y)


def test_host_views_without_unit_stride_go_as_copies(rng):
    """A numpy view with a step along its dim of unit stride (`x[:, ::2]`, `x.T[::2, :]`) or a broadcast's stride of
    0 has no memory order a kernel reads: it goes as a C-contiguous copy, and a written one is copied back into its
    own elements, the elements between them untouched."""
    wide = rand(rng, (16, 32), np.float32)
    out = np.zeros((16, 32), np.float32)
    scale_copy[(2, 2)](wide[:, ::2], out[:, 1::2], 2.0, BM=8, BN=8)
    assert_close(out[:, 1::2], wide[:, ::2] * 2)
    np.testing.assert_array_equal(out[:, ::2], 0)
    tall = np.zeros((16, 32), np.float32)
    scale_copy[(2, 2)](wide.T[::2, :], tall.T[1::2, :], 3.0, BM=8, BN=8)
    assert_close(tall.T[1::2, :], wide.T[::2, :] * 3)
    np.testing.assert_array_equal(tall.T[::2, :], 0)
    row = rand(rng, (16,), np.float32)
    y = np.zeros((16, 16), np.float32)
    scale_copy[(2, 2)](np.broadcast_to(row, (16, 16)), y, 1.0, BM=8, BN=8)
    np.testing.assert_array_equal(y, np.broadcast_to(row, (16, 16)))


def test_a_device_array_without_unit_stride_is_refused(xy):
    """A USM array is not copied by the launch: one with no memory order a kernel reads is a LaunchError."""
    dpnp = needs_dpnp()
    x, _ = xy
    wide = dpnp.zeros((16, 32), dtype=dpnp.float32)
    expect_launch_error("argument 'y': an array on a device needs unit stride along one of its last two dims (row- or "
                        "column-major, no overlap); got strides (128, 8) for shape (16, 16) (itemsize 4); pass a "
                        "contiguous copy of it (dpnp.ascontiguousarray(x)",
                        lambda: scale_copy[(2, 2)](dpnp.asarray(x), wide[:, ::2], 1.0, BM=8, BN=8), x)


def test_row_pitch_and_column_major_views_are_accepted(rng):
    big = rand(rng, (16, 24), np.float32)
    x = big[:, 4:20]                                   # row pitch 24 > width 16
    yt = np.zeros((16, 16), np.float32)
    scale_copy[(2, 2)](x, yt.T, 2.0, BM=8, BN=8)       # column-major output
    assert_close(yt.T, x * 2)


@xetile.kernel
def add_one_to_each(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    """y[b] = x[b] + 1 for the b-th BM x BN matrix of 3-D arrays, one workgroup each."""
    b = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [b, 0, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(y, [b, 0, 0], [BM, BN]), v + 1)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_views_with_a_negative_stride_along_any_dim(rng, dim):
    """[::-1] along any dim of 3-D arrays, read and written: the elements the view names."""
    flip = (slice(None),) * dim + (slice(None, None, -1),)
    a = rand(rng, (3, 8, 16), np.float32)
    y = np.zeros((3, 8, 16), np.float32)
    add_one_to_each[(3,)](a[flip], y, BM=8, BN=16)
    assert_close(y, a[flip] + 1)
    out = np.full((3, 8, 16), 7.0, np.float32)
    add_one_to_each[(3,)](a, out[flip], BM=8, BN=16)
    assert_close(out[flip], a + 1)


@xetile.kernel
def top_and_bottom(top, bottom, BN: xetile.constexpr):
    """Rows 0-7 of `top` = 1, rows 8-15 of `bottom` = 2."""
    xetile.store_tile(xetile.init_tile(top, [0, 0], [8, BN]), 1.0)
    xetile.store_tile(xetile.init_tile(bottom, [8, 0], [8, BN]), 2.0)


def test_one_array_written_through_two_arguments():
    """The same array as two written arguments, and two overlapping views of one array: each write lands, none is
    undone by another argument's copy (rows 8-11 of x[4:] are rows 12-15 of x)."""
    x = np.zeros((16, 16), np.float32)
    top_and_bottom[(1,)](x, x, BN=16)
    np.testing.assert_array_equal(x, np.repeat([1.0, 2.0], 8)[:, None] * np.ones(16))
    x = np.zeros((16, 16), np.float32)
    top_and_bottom[(1,)](x[:12], x[4:], BN=16)
    np.testing.assert_array_equal(x, np.repeat([1.0, 0.0, 2.0], [8, 4, 4])[:, None] * np.ones(16))


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.float128], ids=dtype_id)
def test_unsupported_array_dtype(xy, dtype):
    x, y = xy
    bad = np.zeros((16, 16), dtype)
    expect_launch_error(f"argument 'x': dtype {np.dtype(dtype).name} is not supported (supported: float16, "
                        "bfloat16, float32, float8_e4m3fn, float8_e5m2, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool)",
                        lambda: scale_copy[(2, 2)](bad, y, 1.0, BM=8, BN=8), y, bad)


def test_list_is_not_an_array(xy):
    x, y = xy
    expect_launch_error("argument 'x': expected a numpy array or a number, got list",
                        lambda: scale_copy[(2, 2)](x.tolist(), y, 1.0, BM=8, BN=8), y)
    expect_launch_error("argument 's': expected a numpy array or a number, got str",
                        lambda: scale_copy[(2, 2)](x, y, "1.0", BM=8, BN=8), y)


def test_read_only_output(xy):
    x, y = xy
    y.setflags(write=False)
    expect_launch_error("argument 'y' is read-only but the kernel writes it",
                        lambda: scale_copy[(2, 2)](x, y, 1.0, BM=8, BN=8), x, y)


def test_read_only_input_is_fine(xy):
    x, y = xy
    x.setflags(write=False)
    scale_copy[(2, 2)](x, y, -1.0, BM=8, BN=8)
    assert_close(y, -x)


def read_only_dpnp_output(dpnp, queue, kind):
    """A read-only dpnp array, or its dpctl usm_ndarray: both spell the flag `writable`, not numpy's `writeable`."""
    y = dpnp.full((16, 16), 7.0, dtype=dpnp.float32, sycl_queue=queue)
    y.flags.writable = False
    return y if kind == "dpnp" else y.get_array()


@pytest.mark.parametrize("kind", ["dpnp", "usm_ndarray"])
def test_read_only_dpnp_output(xy, kind):
    dpnp = needs_dpnp()
    import dpctl
    x, _ = xy
    y = read_only_dpnp_output(dpnp, dpctl.get_device_cached_queue("opencl:cpu"), kind)
    assert not y.flags.writable
    with pytest.raises(xetile.LaunchError, match=re.escape("argument 'y' is read-only but the kernel writes it")):
        scale_copy[(2, 2)](dpnp.asarray(x, sycl_queue=y.sycl_queue), y, 1.0, BM=8, BN=8)
    np.testing.assert_array_equal(dpnp.asnumpy(dpnp.asarray(y)), 7.0)


@xetile.kernel
def write_through_loop_and_if(x, acc, n, flag):
    t = xetile.init_tile(acc, [0, 0], [4, 4])
    for i in range(n):
        t = xetile.update_tile_offset(t, [0, 0])
    if flag:
        u = t
    else:
        u = xetile.init_tile(acc, [4, 4], [4, 4])
    old = xetile.atomic_rmw_tile("add", xetile.load_tile(xetile.init_tile(x, [0, 0], [4, 4])), u)


def test_read_only_written_through_loop_if_and_atomic(rng):
    x, acc = rand(rng, (8, 8), np.float32), rand(rng, (8, 8), np.float32)
    acc.setflags(write=False)
    expect_launch_error("argument 'acc' is read-only but the kernel writes it",
                        lambda: write_through_loop_and_if[(1,)](x, acc, 2, True), x, acc)
    writable = acc.copy()
    write_through_loop_and_if[(1,)](x, writable, 2, True)
    expected = acc.copy()
    expected[:4, :4] += x[:4, :4]
    assert_close(writable, expected)


# ---- scalar arguments ----------------------------------------------------------------------------------------

def test_scalar_out_of_range_and_unsupported(xy):
    x, y = xy
    expect_launch_error("argument 's': integer 18446744073709551616 does not fit in 64 bits",
                        lambda: scale_copy[(2, 2)](x, y, 2**64, BM=8, BN=8), x, y)
    expect_launch_error("argument 's': scalar dtype complex64 is not supported",
                        lambda: scale_copy[(2, 2)](x, y, np.complex64(1), BM=8, BN=8), x, y)
    expect_launch_error("argument 's': scalar dtype complex128 is not supported",
                        lambda: scale_copy[(2, 2)](x, y, np.complex128(1), BM=8, BN=8), x, y)


@xetile.kernel
def scalar_sig(out, s):
    pass


@pytest.mark.parametrize("value, t", [
    (3, "i32"), (-2**31, "i32"), (2**31 - 1, "i32"), (2**31, "i64"), (-2**31 - 1, "i64"), (2**40, "i64"),
    (1.5, "f32"), (True, "i1"), (False, "i1"),
    (np.float16(1), "f16"), (ml_dtypes.bfloat16(1), "bf16"), (np.float32(1), "f32"), (np.float64(1), "f32"),
    (np.int8(1), "i8"), (np.uint8(1), "ui8"), (np.int16(1), "i16"), (np.int32(1), "i32"), (np.int64(1), "i64"),
    (np.uint16(1), "ui16"), (np.uint32(1), "ui32"), (np.uint64(1), "ui64"), (np.bool_(True), "i1"),
], ids=lambda v: repr(v))
def test_scalar_argument_types_in_signature(value, t):
    out = np.zeros((2, 2), np.float32)
    asm = scalar_sig.warmup(out, value).asm["xetile"]
    assert asm.splitlines()[0] == f"func.func @scalar_sig(%out: memref<?x?xf32, strided<[?, 1]>>, %s: {t}) {{"


@xetile.kernel
def store_scalar(out, s):
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 1]), xetile.full([1, 1], s, xetile.int64))


@pytest.mark.parametrize("value", [7, -5, 2**40, -2**40 - 3, np.int8(-7), np.uint8(250), np.int64(2**62)],
                         ids=repr)
def test_scalar_values_arrive_intact(value):
    out = np.zeros((1, 1), np.int64)
    store_scalar[(1,)](out, value)
    assert out[0, 0] == int(value)


# ---- grids ---------------------------------------------------------------------------------------------------

@xetile.kernel
def program_ids(out):
    """Row p (linear program id) = [id0, id1, id2, n0, n1, n2]."""
    p0, p1, p2 = xetile.program_id(0), xetile.program_id(1), xetile.program_id(2)
    n0, n1, n2 = xetile.num_programs(0), xetile.num_programs(1), xetile.num_programs(2)
    row = p0 + n0 * (p1 + n1 * p2)
    xetile.store_tile(xetile.init_tile(out, [row, 0], [1, 1]), xetile.full([1, 1], p0, xetile.int32))
    xetile.store_tile(xetile.init_tile(out, [row, 1], [1, 1]), xetile.full([1, 1], p1, xetile.int32))
    xetile.store_tile(xetile.init_tile(out, [row, 2], [1, 1]), xetile.full([1, 1], p2, xetile.int32))
    xetile.store_tile(xetile.init_tile(out, [row, 3], [1, 1]), xetile.full([1, 1], n0, xetile.int32))
    xetile.store_tile(xetile.init_tile(out, [row, 4], [1, 1]), xetile.full([1, 1], n1, xetile.int32))
    xetile.store_tile(xetile.init_tile(out, [row, 5], [1, 1]), xetile.full([1, 1], n2, xetile.int32))


def expected_ids(n0, n1, n2):
    rows = [(p0, p1, p2, n0, n1, n2) for p2, p1, p0 in itertools.product(range(n2), range(n1), range(n0))]
    return np.array(rows, np.int32).reshape(-1, 6)


@pytest.mark.parametrize("grid, dims", [
    (3, (3, 1, 1)), ((4,), (4, 1, 1)), ((2, 3), (2, 3, 1)), ((2, 3, 4), (2, 3, 4)), ([3, 2], (3, 2, 1)),
    ((1, 1, 5), (1, 1, 5)),
], ids=str)
def test_program_id_and_num_programs_on_all_axes(grid, dims):
    n = int(np.prod(dims))
    out = np.full((n + 1, 6), -1, np.int32)
    program_ids[grid](out)
    np.testing.assert_array_equal(out[:n], expected_ids(*dims))
    np.testing.assert_array_equal(out[n], -1)          # nothing beyond the grid


@pytest.mark.parametrize("grid", [(0,), 0, (2, 0), (3, 1, 0)], ids=str)
def test_grid_with_a_zero_does_no_work(grid):
    out = np.full((8, 6), -1, np.int32)
    program_ids[grid](out)
    np.testing.assert_array_equal(out, -1)


@pytest.mark.parametrize("grid", [(1, 1, 1, 1), (-1,), (2, -3), (2.0,), 2.0, "2", None, (True,), {2: 1}, ()],
                         ids=repr)
def test_bad_grid(xy, grid):
    x, y = xy
    expect_launch_error(f"grid must be a tuple of 1 to 3 non-negative ints (workgroups), got {grid!r}",
                        lambda: scale_copy[grid](x, y, 1.0, BM=8, BN=8), x, y)


def test_numpy_integers_are_ints(rng):
    """numpy integers count as Python ints for grid sizes, constexpr tile sizes and offsets, and key the cache
    as the ints they hold."""
    M = 32
    x, y = rand(rng, (M, 16), np.float32), np.zeros((M, 16), np.float32)
    copy_rows.cache.clear()
    copy_rows[(np.int64(2),)](x, y, np.int32(M), BM=np.int64(16), BN=np.uint8(16))
    assert_close(y, x)
    y[:] = 0
    copy_rows[np.array([2])[0]](x, y, M, BM=16, BN=16)
    assert_close(y, x)
    assert len(copy_rows.cache) == 1


def test_bad_grid_from_callable(xy):
    x, y = xy
    expect_launch_error("grid must be a tuple of 1 to 3 non-negative ints (workgroups), got (2, 2, 2, 2)",
                        lambda: scale_copy[lambda meta: (2, 2, 2, 2)](x, y, 1.0, BM=8, BN=8), x, y)


GRID_LIMIT = {"numpy": "workgroups; the numpy interpreter runs at most 1048576, one after another in Python",
              "opencl:cpu": "work-items; a SYCL launch takes at most 2**31 - 1 = 2147483647"}


@pytest.mark.parametrize("grid", [(2**31,), (2**16, 2**16), (1, 2**11, 2**20), (2**40, 2**40, 2**40)], ids=str)
def test_grid_beyond_the_device_limit_is_a_launch_error(on_each_device, grid, monkeypatch):
    """Checked before anything runs (else the interpreter would build the grid's id list, and hang; dpctl
    refuses such a launch with a bare "Kernel submission to Sycl queue failed")."""
    monkeypatch.delenv("XETILE_INTERPRETER_MAX_WORKGROUPS", raising=False)
    out = np.full((8, 6), -1, np.int32)
    expect_launch_error(GRID_LIMIT[on_each_device], lambda: program_ids[grid](out), out)


@xetile.kernel
def copy_rows(x, y, M, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN])))


def test_grid_callable_receives_every_argument_by_name(rng):
    M = 50
    x, y = rand(rng, (M, 16), np.float32), np.zeros((M, 16), np.float32)
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        return (xetile.cdiv(M, meta["BM"]),)

    copy_rows[grid](x, y, M, BM=16, BN=16)
    assert len(seen) == 1 and list(seen[0]) == ["x", "y", "M", "BM", "BN"]   # every argument, as Triton's META
    assert (seen[0]["M"], seen[0]["BM"], seen[0]["BN"]) == (M, 16, 16) and seen[0]["x"] is x   # as given
    assert_close(y, x)                                  # cdiv(50, 16) = 4 blocks cover the ragged end


def test_grid_lambda_with_cdiv(rng):
    M = 37
    x, y = rand(rng, (M, 8), np.int32), np.zeros((M, 8), np.int32)
    copy_rows[lambda meta: (xetile.cdiv(meta["M"], meta["BM"]),)](x, y, M, BM=8, BN=8)
    np.testing.assert_array_equal(y, x)
    y2 = np.zeros_like(y)
    copy_rows[lambda meta: (xetile.cdiv(M, meta["BM"]) - 1,)](x, y2, M, BM=8, BN=8)  # one block short
    np.testing.assert_array_equal(y2[:32], x[:32])
    np.testing.assert_array_equal(y2[32:], 0)


def test_cdiv_on_the_host():
    assert [xetile.cdiv(n, 8) for n in (0, 1, 8, 9, 16, 17)] == [0, 1, 1, 2, 2, 3]


# ---- options: sg_layout / sg_data / device -----------------------------------------------------------------

@xetile.kernel
def mma(a, b, c):
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [32, 16]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [16, 32]))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [32, 32]), xetile.tile_mma(va, vb))


@pytest.fixture
def abc(rng):
    return rand(rng, (32, 16), np.float16), rand(rng, (16, 32), np.float16), np.zeros((32, 32), np.float32)


@pytest.mark.parametrize("options, expected", [
    (dict(sg_layout=[2, 2]), "sg_layout and sg_data go together: give both or neither"),
    (dict(sg_data=[16, 16]), "sg_layout and sg_data go together: give both or neither"),
    (dict(sg_layout=[2, 0], sg_data=[16, 16]),
     "bad tile_mma layout: Layout sg_layout must be a non-empty list of positive ints, got [2, 0]"),
    (dict(sg_layout=[2, 2], sg_data=[16, -16]),
     "bad tile_mma layout: Layout sg_data must be a non-empty list of positive ints, got [16, -16]"),
    (dict(sg_layout=[], sg_data=[]), "bad tile_mma layout: Layout sg_layout must be a non-empty list of positive ints"),
    (dict(sg_layout=[2.0, 2], sg_data=[16, 16]), "bad tile_mma layout: Layout sg_layout must be a non-empty list"),
    (dict(sg_layout=4, sg_data=[16, 16]), "bad tile_mma layout: Layout sg_layout must be a list of ints, got 4"),
    (dict(sg_layout=[2, 2], sg_data=[16]), "bad tile_mma layout: Layout fields must all have the same rank"),
], ids=["no-sg-data", "no-sg-layout", "zero", "negative", "empty", "float", "not-a-list", "ranks"])
def test_bad_mma_layout_options(abc, options, expected):
    a, b, c = abc
    expect_launch_error(expected, lambda: mma[(1,)](a, b, c, **options), a, b, c)


def test_mma_layout_option_runs(abc):
    a, b, c = abc
    mma[(1,)](a, b, c, sg_layout=[2, 2], sg_data=[16, 16])
    assert_close(c, a.astype(np.float32) @ b.astype(np.float32), scale=10)


@pytest.mark.parametrize("kwargs, error, expected", [
    (dict(sg_layout=[2, 0], sg_data=[8, 8]), ValueError, "Layout sg_layout must be a non-empty list of positive ints"),
    (dict(sg_layout=[2, 2], sg_data=[8, 8], inst_data=[0, 8]), ValueError,
     "Layout inst_data must be a non-empty list of positive ints"),
    (dict(sg_layout=[2, 2], sg_data=[8, 8], lane_layout=[1, 16, 1]), ValueError,
     "Layout fields must all have the same rank"),
    (dict(sg_layout=[2, 2], sg_data=None), ValueError, "Layout needs sg_layout and sg_data"),
    (dict(sg_layout=2, sg_data=[8, 8]), TypeError, "Layout sg_layout must be a list of ints, got 2"),
    (dict(sg_layout=[True, 2], sg_data=[8, 8]), ValueError, "Layout sg_layout must be a non-empty list"),
], ids=["zero", "inst-zero", "rank", "none", "int", "bool"])
def test_bad_layout_values(kwargs, error, expected):
    with pytest.raises(error, match=re.escape(expected)):
        xetile.Layout(**kwargs)


def test_layout_normalizes_lists_to_tuples():
    lay = xetile.Layout([2, 2], [16, 16], lane_layout=[1, 16])
    assert (lay.sg_layout, lay.sg_data, lay.lane_layout, lay.inst_data) == ((2, 2), (16, 16), (1, 16), None)
    assert lay == xetile.Layout((2, 2), (16, 16), lane_layout=(1, 16))
    assert str(lay) == "#xetile.wg_map<sg_layout = [2, 2], sg_data = [16, 16], lane_layout = [1, 16]>"


def test_device_numpy(xy, monkeypatch):
    x, y = xy
    monkeypatch.delenv("XETILE_DEVICE", raising=False)
    scale_copy[(2, 2)](x, y, 2.0, BM=8, BN=8, device="numpy")
    assert_close(y, x * 2)
    monkeypatch.setenv("XETILE_DEVICE", "numpy")
    y[:] = 0
    scale_copy[(2, 2)](x, y, 3.0, BM=8, BN=8)
    assert_close(y, x * 3)


@pytest.mark.parametrize("how", ["option", "env"])
def test_sycl_device_runs_the_spirv(xy, monkeypatch, how):
    x, y = xy
    kwargs = {}
    if how == "env":
        monkeypatch.setenv("XETILE_DEVICE", "opencl:cpu")
    else:
        monkeypatch.delenv("XETILE_DEVICE", raising=False)
        kwargs = dict(device="opencl:cpu")
    scale_copy[(2, 1)](x, y, 2.0, BM=8, BN=16, **kwargs)
    assert_close(y, x * 2)
    assert scale_copy.warmup(x, y, 2.0, BM=8, BN=16, **kwargs).target == "cpu"


def test_absent_device_is_a_launch_error(xy):
    x, y = xy
    expect_launch_error("device 'level_zero:gpu:0'",
                        lambda: scale_copy[(2, 2)](x, y, 2.0, BM=8, BN=16, device="level_zero:gpu:0"), x, y)


@xetile.kernel
def shared_atomic_old_values(x, old):
    """sg_layout x sg_data (16 rows) is twice the tile's 8: both subgroups hold the same data."""
    layout = xetile.Layout([2, 1], [8, 16])
    t = xetile.init_tile(x, [0, 0], [8, 16], layout=layout)
    previous = xetile.atomic_rmw_tile("add", xetile.full([8, 16], 1.0, xetile.float32), t)
    xetile.store_tile(xetile.init_tile(old, [0, 0], [8, 16], layout=layout), previous)


def test_shared_atomic_is_done_once_and_its_old_values_reach_every_subgroup(rng):
    """The first subgroup of those sharing the data does the atomic and hands the old values on through SLM."""
    x, old = rand(rng, (8, 16), np.float32), np.zeros((8, 16), np.float32)
    y = x.copy()
    shared_atomic_old_values[(1,)](y, old)
    np.testing.assert_array_equal(old, x)
    np.testing.assert_array_equal(y, x + 1)


def test_device_option_beats_env(xy, monkeypatch):
    x, y = xy
    monkeypatch.setenv("XETILE_DEVICE", "opencl:cpu")
    scale_copy[(2, 2)](x, y, 2.0, BM=8, BN=8, device="numpy")
    assert_close(y, x * 2)


def test_device_must_be_a_string(xy):
    x, y = xy
    expect_launch_error("device must be a dpctl filter string, a dpctl.SyclDevice, a dpctl.SyclQueue or 'numpy', "
                        "got int",
                        lambda: scale_copy[(2, 2)](x, y, 2.0, BM=8, BN=8, device=0), x, y)


def test_warmup_unknown_target(xy):
    x, y = xy
    with pytest.raises(xetile.LaunchError, match=re.escape("unknown target 'spirv'; targets: numpy, xe-hpc, xe2, xe3, "
                                                           "xe-hpg, cpu")):
        scale_copy.warmup(x, y, 1.0, BM=8, BN=8, target="spirv")


# ---- reserved parameter names ----------------------------------------------------------------------------------

def test_reserved_device_parameter_message():
    with pytest.raises(xetile.CompilationError,
                       match=re.escape("kernel uses_device: parameter names ['device'] are reserved for launch "
                                       "options")) as info:
        @xetile.kernel
        def uses_device(x, device):
            pass
    assert "test_launch.py:" in str(info.value)
    assert str(info.value).endswith("def uses_device(x, device):")


def test_reserved_grid_and_sg_layout_message():
    with pytest.raises(xetile.CompilationError,
                       match=re.escape("parameter names ['grid', 'sg_layout'] are reserved for launch options")):
        @xetile.kernel
        def uses_two(x, sg_layout, grid):
            pass


def test_reserved_sg_data_and_target_message():
    with pytest.raises(xetile.CompilationError,
                       match=re.escape("parameter names ['sg_data', 'target'] are reserved for launch options")):
        @xetile.kernel
        def uses_other_two(target, x, sg_data: xetile.constexpr):
            pass


# ---- compile cache and warmup --------------------------------------------------------------------------------

@xetile.kernel
def cached(x, y, s, BM: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [BM, 8]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [BM, 8]), v + s)


@pytest.fixture
def traces(monkeypatch, tmp_path):
    """Counts Tracer.trace calls (one per compile), with an empty disk cache of the test's own."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path / "cache"))
    calls = []
    original = Tracer.trace

    def counting(self):
        calls.append(self.function.fn.__name__)
        return original(self)

    monkeypatch.setattr(Tracer, "trace", counting)
    return calls


def test_second_launch_does_not_retrace(rng, traces):
    cached.cache.clear()
    x, y = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    cached[(1,)](x, y, 1.0, BM=8)
    cached[(1,)](x, y, 2.0, BM=8)                      # another scalar value: same specialization
    x2, y2 = rand(rng, (16, 8), np.float32), np.zeros((16, 8), np.float32)
    cached[(1,)](x2, y2, 3.0, BM=8)                    # another array shape: shapes are dynamic
    assert traces == ["cached"]
    assert len(cached.cache) == 1
    assert_close(y, x + 2)
    assert_close(y2[:8], x2[:8] + 3)


@pytest.mark.parametrize("change", ["constexpr", "dtype", "order", "scalar type", "option"])
def test_new_specialization_compiles_again(rng, traces, change):
    cached.cache.clear()
    x, y = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    cached[(1,)](x, y, 1.0, BM=8)
    if change == "constexpr":
        args, kwargs = (x, y, 1.0), dict(BM=4)
    elif change == "dtype":
        args, kwargs = (x.astype(np.float16), y, 1.0), dict(BM=8)
    elif change == "order":
        args, kwargs = (np.ascontiguousarray(x.T).T, y, 1.0), dict(BM=8)
    elif change == "scalar type":
        args, kwargs = (x, y, 1), dict(BM=8)
    else:
        args, kwargs = (x, y, 1.0), dict(BM=8, sg_layout=[1, 1], sg_data=[8, 8])
    y[:] = 0
    cached[(1,)](*args, **kwargs)
    assert traces == ["cached", "cached"]
    assert len(cached.cache) == 2
    rows = kwargs["BM"]
    assert_close(y[:rows], args[0][:rows].astype(np.float32) + 1)
    cached[(1,)](*args, **kwargs)                      # and that one is cached too
    assert len(traces) == 2


@xetile.kernel
def add_optional(x, bias, scale, y, BM: xetile.constexpr):
    """y = x (+ bias) (* scale[0]): Triton's optional pointers, None or an array at each launch."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [BM, 8]))
    if bias is not None:
        v = v + xetile.load_tile(xetile.init_tile(bias, [0, 0], [BM, 8]))
    if scale is None:
        v = v * 3.0
    else:
        v = v * xetile.load(scale + 0)
    xetile.store_tile(xetile.init_tile(y, [0, 0], [BM, 8]), v)


def test_none_for_an_array_specializes_as_a_constexpr(rng, traces):
    """None for a parameter that is not a constexpr is specialized as one (Kernel.specialize): each pattern of Nones
    compiles once, takes no kernel argument for the None, and its later launches take their plan; `is None` on an
    array is False while tracing."""
    add_optional.cache.clear()
    x, bias, scale = rand(rng, (8, 8), np.float32), rand(rng, (8, 8), np.float32), np.array([0.5], np.float32)
    cases = [(None, None, x * 3), (bias, None, (x + bias) * 3), (None, scale, x * 0.5), (bias, scale, (x + bias) * 0.5)]
    for b, s, expected in cases * 2:
        y = np.zeros((8, 8), np.float32)
        add_optional[(1,)](x, b, s, y, BM=8)
        assert_close(y, expected)
    assert traces == ["add_optional"] * 4
    assert len(add_optional.cache) == 4 and len(add_optional.cache.plans) == 4
    compiled = add_optional.warmup(x, None, None, x.copy(), BM=8)
    assert list(compiled.specs) == ["x", "y"]


@xetile.heuristics({"BN": lambda args: 16 if args["n"] % 16 == 0 else 8,
                    "EVEN": lambda args: args["n"] % args["BN"] == 0})
@xetile.kernel
def scaled_columns(x, y, n, BN: xetile.constexpr, EVEN: xetile.constexpr):
    """y = 2x over n columns, BN at a time; EVEN (from BN, the heuristic before it) drops the column mask."""
    offs = xetile.program_id(0) * BN + xetile.arange(0, BN)
    if EVEN:
        xetile.store(y + offs, xetile.load(x + offs) * 2)
    else:
        xetile.store(y + offs, xetile.load(x + offs, mask=offs < n) * 2, mask=offs < n)


def test_heuristics_set_constexprs_from_the_arguments(rng, traces):
    """Triton's @heuristics: each parameter's value a function of the launch's arguments, the heuristics before it
    included; one kernel a value, under @autotune too."""
    scaled_columns.cache.clear()
    for n, expected in ((48, (16, True)), (20, (8, False)), (24, (8, True))):
        x, y = rand(rng, (n,), np.float32), np.zeros(n, np.float32)
        scaled_columns[lambda meta: (xetile.cdiv(meta["n"], meta["BN"]),)](x, y, n)
        np.testing.assert_array_equal(y, 2 * x)
        bn, even = expected
        assert f"attributes {{BN = {bn}, EVEN = {str(even).lower()}}}" in scaled_columns.warmup(x, y, n).asm["xetile"]
    assert len(traces) == 3
    with pytest.raises(xetile.LaunchError, match=r"\['BN'\] are set by its @xetile.heuristics; neither a launch "):
        scaled_columns[(1,)](x, y, n, BN=8)
    with pytest.raises(TypeError, match="@xetile.heuristics goes above @xetile.kernel and below @xetile.autotune"):
        xetile.heuristics({"BN": len})(xetile.autotune([xetile.Config(BM=8)], key=[])(cached))
    with_bn = xetile.heuristics({"BN": lambda a: 8})(scale_n)
    assert with_bn is not scale_n and scale_n.heuristics == {}   # the kernel itself launches as before
    tuned = xetile.autotune([xetile.Config(SCALE=1.0)], key=["n"])(with_bn)
    x, y = rand(rng, (20,), np.float32), np.zeros(20, np.float32)
    tuned[lambda meta: (xetile.cdiv(meta["n"], meta["BN"]),)](x, y, 20)
    np.testing.assert_array_equal(y, x)


@xetile.kernel
def scale_n(x, y, n, BN: xetile.constexpr, SCALE: xetile.constexpr):
    offs = xetile.program_id(0) * BN + xetile.arange(0, BN)
    xetile.store(y + offs, xetile.load(x + offs, mask=offs < n) * SCALE, mask=offs < n)


@xetile.kernel
def times_const(x, out, S: xetile.constexpr):
    xetile.store_tile(xetile.init_tile(out, [0, 0], [2, 2]), xetile.load_tile(xetile.init_tile(x, [0, 0], [2, 2])) * S)


def test_equal_constexprs_of_different_types_compile_separately():
    """2 and 2.0 are equal Python values but different constexprs: i8 * 2 wraps in i8, i8 * 2.0 is an f32."""
    times_const.cache.clear()
    x = np.full((2, 2), 100, np.int8)
    out = np.zeros((2, 2), np.float32)
    times_const[(1,)](x, out, S=2)
    np.testing.assert_array_equal(out, np.full((2, 2), -56, np.float32))   # 200 wraps to -56 in i8
    times_const[(1,)](x, out, S=2.0)
    np.testing.assert_array_equal(out, np.full((2, 2), 200, np.float32))
    assert len(times_const.cache) == 2


def test_warmup_compiles_without_running(rng, traces):
    cached.cache.clear()
    x, y = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    compiled = cached.warmup(x, y, 1.0, BM=8, grid=(1,))
    assert isinstance(compiled, xetile.CompiledKernel)
    assert compiled.asm["xetile"].splitlines()[0] == (
        "func.func @cached(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>, "
        "%s: f32) attributes {BM = 8} {")
    np.testing.assert_array_equal(y, 0)                # nothing ran
    assert cached.warmup(x, y, 5.0, BM=8) is compiled
    cached[(1,)](x, y, 4.0, BM=8)                       # the launch reuses the warmed-up kernel
    assert traces == ["cached"]
    assert_close(y, x + 4)


def test_warmup_checks_arguments_and_grid(xy):
    x, y = xy
    with pytest.raises(xetile.LaunchError, match=re.escape("(missing constexpr BN)")):
        scale_copy.warmup(x, y, 1.0, BM=8)
    with pytest.raises(xetile.LaunchError, match=re.escape("grid must be a tuple of 1 to 3 non-negative ints")):
        scale_copy.warmup(x, y, 1.0, BM=8, BN=8, grid=(1, 2, 3, 4))
    compiled = scale_copy.warmup(x, y, 1.0, BM=8, BN=16, device="opencl:cpu")
    assert compiled.target == "cpu" and compiled.asm["spirv"][:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic


def test_compilation_error_is_not_cached(rng, traces):
    """A kernel that fails to compile fails again at the next launch (nothing half-built stays in the cache)."""
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    for _ in range(2):
        with pytest.raises(xetile.CompilationError, match=re.escape("[XeTile tiles and vectors are 1-D or 2-D]")):
            bad_shape[(1,)](x, out)
    assert traces == ["bad_shape", "bad_shape"]
    assert len(bad_shape.cache) == 0
    np.testing.assert_array_equal(out, 0)


@xetile.kernel
def bad_shape(x, out):
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), xetile.zeros([8, 8, 8]))


def test_kernel_without_source_is_a_clear_error():
    namespace = {}
    exec(compile("def no_source(a):\n    pass\n", "<string>", "exec"), namespace)
    with pytest.raises(xetile.CompilationError, match="no_source: its source code is not available"):
        xetile.kernel(namespace["no_source"])


# ---- constexpr values ----------------------------------------------------------------------------------------

@xetile.kernel
def padded_copy(x, y, PAD: xetile.constexpr):
    """y (8x8) = x (4x8) read as an 8x8 tile: rows 4..7 are the padding."""
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 8]),
                      xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]), padding=PAD))


def test_nan_constexpr_hits_the_cache(traces):
    """NaN != NaN, so a key of the value itself missed on every launch (and kept every compile)."""
    padded_copy.cache.clear()
    x, y = np.ones((4, 8), np.float32), np.zeros((8, 8), np.float32)
    for _ in range(3):
        padded_copy[(1,)](x, y, PAD=float("nan"))
    assert traces == ["padded_copy"] and len(padded_copy.cache) == 1
    assert np.isnan(y[4:]).all() and (y[:4] == 1).all()


def test_negative_zero_constexpr_is_its_own_kernel(traces):
    """0.0 == -0.0, so a key of the value itself gave `padding=-0.0` the +0.0 kernel: the key is the bits."""
    padded_copy.cache.clear()
    x = np.ones((4, 8), np.float32)
    for pad in (0.0, -0.0):
        y = np.full((8, 8), 5.0, np.float32)
        padded_copy[(1,)](x, y, PAD=pad)
        np.testing.assert_array_equal(y[4:], 0.0)
        assert (np.signbit(y[4:]) == np.signbit(pad)).all()
    assert len(traces) == 2 and len(padded_copy.cache) == 2


@pytest.mark.parametrize("value, type_name", [({"a": 1}, "dict"), ({1, 2}, "set"), (np.zeros(2), "ndarray"),
                                              (object(), "object"), ((1, [2, {3}]), "set")],
                         ids=["dict", "set", "ndarray", "object", "nested-set"])  # stable ids: xdist compares them
def test_constexpr_of_an_unsupported_type(xy, value, type_name):
    x, y = xy
    expect_launch_error(f"constexpr 'PAD' is a {type_name}; constexprs must be int, float, bool, str, None, an "
                        "xetile dtype, a Layout, or a tuple or list of these (numpy numbers count as Python ones)",
                        lambda: padded_copy[(1,)](x, y, PAD=value), x, y)


# ---- what the trace read: globals, closures, helper kernels --------------------------------------------------

OFFSET = 1.0


@xetile.kernel
def add_helper(v):
    return v + OFFSET


@xetile.kernel
def other_helper(v):
    return v * 10.0


@xetile.kernel
def uses_helper(x, y):
    tile = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 8]), add_helper(tile))


def test_changed_global_recompiles(rng, traces, monkeypatch):
    """A module-level constant a helper kernel reads is part of what was compiled: changing it recompiles."""
    uses_helper.cache.clear()
    x, y = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    uses_helper[(1,)](x, y)
    assert_close(y, x + 1)
    monkeypatch.setattr(sys.modules[__name__], "OFFSET", 5.0)
    uses_helper[(1,)](x, y)
    assert_close(y, x + 5)
    uses_helper[(1,)](x, y)                             # and that is a hit again
    assert traces == ["uses_helper", "uses_helper"]


def test_rebound_helper_kernel_recompiles(rng, traces, monkeypatch):
    uses_helper.cache.clear()
    x, y = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    uses_helper[(1,)](x, y)
    monkeypatch.setattr(sys.modules[__name__], "add_helper", other_helper)
    uses_helper[(1,)](x, y)
    assert_close(y, x * 10)
    assert traces == ["uses_helper", "uses_helper"]


def test_changed_closure_recompiles(rng, traces):
    scale = 2.0

    @xetile.kernel
    def scaled(x, y):
        xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 8]),
                          xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8])) * scale)

    x, y = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    scaled[(1,)](x, y)
    assert_close(y, x * 2)
    scale = 3.0
    scaled[(1,)](x, y)
    assert_close(y, x * 3)
    assert traces == ["scaled", "scaled"]


SCALES = [2.0]
SHIFTS = {"y": 0.5}


@xetile.kernel
def scaled_by_globals(x, y):
    tile = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 8]), tile * SCALES[0] + SHIFTS["y"])


def test_global_list_and_dict_changed_in_place_recompile(rng, traces, monkeypatch):
    """A list or dict the kernel reads, changed in place, is the same object with other contents: the next launch
    compiles again."""
    monkeypatch.setattr(sys.modules[__name__], "SCALES", [2.0])  # fresh objects, changed below, restored after
    monkeypatch.setattr(sys.modules[__name__], "SHIFTS", {"y": 0.5})
    scaled_by_globals.cache.clear()
    x, y = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    scaled_by_globals[(1,)](x, y)
    assert_close(y, x * 2 + 0.5)
    SCALES[0] = 3.0
    scaled_by_globals[(1,)](x, y)
    assert_close(y, x * 3 + 0.5)
    SHIFTS["y"] = -1.0
    scaled_by_globals[(1,)](x, y)
    assert_close(y, x * 3 - 1)
    scaled_by_globals[(1,)](x, y)                      # and that is a hit again
    assert traces == ["scaled_by_globals"] * 3


class Config:
    BM = 8


CONFIG = Config()


@xetile.kernel
def reads_an_object(x):
    xetile.store_tile(xetile.init_tile(x, [0, 0], [CONFIG.BM, 8]), 1.0)


def test_global_without_a_stable_form_is_a_compilation_error():
    x = np.zeros((8, 8), np.float32)
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "the kernel reads global 'CONFIG', a Config, which has no stable form for the compile cache")):
        reads_an_object[(1,)](x)
    np.testing.assert_array_equal(x, 0)


# ---- SYCL program build ----------------------------------------------------------------------------------------

@xetile.kernel
def fill_two(x):
    xetile.store_tile(xetile.init_tile(x, [0, 0], [2, 2]), 2.0)


def test_bad_build_options_are_a_launch_error(monkeypatch):
    """The driver refuses the options with an empty message; the LaunchError names the kernel and the options."""
    fill_two.cache.clear()
    monkeypatch.setenv("XETILE_BUILD_OPTIONS", "-no-such-option")
    x = np.zeros((2, 2), np.float32)
    expect_launch_error("the SYCL driver could not build kernel fill_two for opencl:cpu:0 with the build options "
                        "'' and XETILE_BUILD_OPTIONS='-no-such-option'",
                        lambda: fill_two[(1,)](x, device="opencl:cpu"), x)


def test_unoptimized_cpu_builds_are_refused(monkeypatch):
    """Fuzzer finding: with -cl-opt-disable the OpenCL CPU runtime gives every work-item lane 0 (its sub-groups come
    from the vectorizer), so every kernel computed wrong numbers silently; the option is a LaunchError there."""
    fill_two.cache.clear()
    monkeypatch.setenv("XETILE_BUILD_OPTIONS", "-cl-opt-disable")
    x = np.zeros((2, 2), np.float32)
    expect_launch_error("build option -cl-opt-disable on opencl:cpu:0: unoptimized, the OpenCL CPU runtime has no "
                        "sub-groups (every work-item reads lane 0)", lambda: fill_two[(1,)](x, device="opencl:cpu"), x)


@xetile.kernel
def add_row(x, w, y, BM: xetile.constexpr, BN: xetile.constexpr):
    """y[block] = x[block] + w's one row, broadcast down the block."""
    m = xetile.program_id(0) * BM
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), v + xetile.load_tile(xetile.init_tile(w, [0, 0], [1, BN])))


def test_a_row_made_by_none_indexing_reads_as_its_copy_does(rng):
    """`w[None]` has a stride of 0 along its one row: the kernel reads it as its C-order copy, in the same compiled
    code (the same LLVM IR), and the sums are numpy's."""
    x, w = rand(rng, (32, 64), np.float32), rand(rng, (64,), np.float32)
    y = np.zeros_like(x)
    add_row[(2,)](x, w[None], y, BM=16, BN=64)
    assert_close(y, x + w, np.float32)
    view, copy = (add_row.warmup(x, row, y, grid=(2,), target="cpu", BM=16, BN=64).asm["llir"]
                  for row in (w[None], w[None].copy()))
    assert view == copy
