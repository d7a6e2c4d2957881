"""SYCL argument marshalling (runtime/memory.py) on the real opencl:cpu device, through OpenCL C kernels written to
the ArrayArg ABI: round trips for numpy (row-major, column-major, pitched), USM and DLPack arrays, copy-back of
written arrays only, zero copy for USM arrays, scalar bits; and how args.classify sees USM and DLPack arrays."""
from __future__ import annotations

import ctypes
import sys

import dpctl
import dpctl.memory
import dpctl.utils
import ml_dtypes
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import xetile_jit as xetile
from conftest import ALL_NP_DTYPES, dtype_id, host_array_at, rand
from usm_arrays import DLPackOnly, UsmArray, needs_dpnp
from xetile_jit.ir.types import COL_MAJOR, ROW_MAJOR, float32
from xetile_jit.runtime.args import ArraySpec, ScalarSpec, UsmView, classify, runtime_value, transposed
from xetile_jit.runtime import memory
from xetile_jit.runtime.memory import ArrayArg, prepare_arguments
from xetile_jit.runtime.native_submit import HostAddress, submit_async
from xetile_jit.target.block_io import (BASE_RULE, BUILTIN_HEIGHT_RULE, BUILTIN_PITCH_RULE, HEIGHT_RULE, PITCH_RULE,
                                        SLICE_RULE, WIDTH_RULE)

ARRAY = "__global {0} *{1}, long {1}_rows, long {1}_cols, long {1}_rs, long {1}_cs"
SOURCE = f"""
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define AT(x, i, j) x[(i) * x##_rs + (j) * x##_cs]
// a += s; b = 2 * a, over a's shape, one work item per element
__kernel void add_double({ARRAY.format("float", "a")}, {ARRAY.format("float", "b")}, float s) {{
    long i = get_global_id(0) / a_cols, j = get_global_id(0) % a_cols;
    AT(a, i, j) += s;
    AT(b, i, j) = 2 * AT(a, i, j);
}}
__kernel void scalars({ARRAY.format("long", "out")}, char i8, uchar u8, short i16, half f16, ushort bf16, int i32,
                      long i64, float f32, uchar b) {{
    out[0] = i8; out[1] = u8; out[2] = i16; out[3] = (long)(f16 * 8); out[4] = bf16; out[5] = i32; out[6] = i64;
    out[7] = (long)(f32 * 8); out[8] = b;
}}
"""


@pytest.fixture(autouse=True)
def staging(monkeypatch):
    """Host arrays staged, as on a device that does not take host memory in place; the tests of the in-place path
    (`in_host_memory`) undo it."""
    monkeypatch.setattr(memory, "takes_host_memory", lambda queue: False)


@pytest.fixture
def in_host_memory(monkeypatch, queue):
    monkeypatch.undo()
    assert memory.takes_host_memory(queue)  # the OpenCL CPU device has USM system allocations


def launch(queue, program, values: dict, written: set, shape):
    """Runs add_double over `shape` with prepare_arguments; returns the kernel arguments."""
    specs = {name: classify(name, value) for name, value in values.items()}
    args, finish = prepare_arguments(queue, values, specs, written)
    # dpnp's own work on the arrays (a fill, a copy) first, as a launch orders itself: the raw submit takes no
    # dependencies, and reading a dpnp array's __sycl_usm_array_interface__, which used to wait for it, is gone
    dpctl.utils.SequentialOrderManager[queue].wait()
    submit_async(queue, program.get_sycl_kernel("add_double"), args, [shape[0] * shape[1]], [1], []).wait()
    finish()
    return args


# ---- numpy arrays: copied in, copied back in place when written -------------------------------------------------

def f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


HOST_VIEWS = {  # 5x7 f32 host arrays in the memory orders and pitches a kernel accepts
    "row-major": lambda rng: f32(rng, (5, 7)),
    "column-major": lambda rng: np.asfortranarray(f32(rng, (5, 7))),
    "transposed": lambda rng: f32(rng, (7, 5)).T,
    "pitched": lambda rng: f32(rng, (5, 48))[:, 3:10],
    "pitched column-major": lambda rng: np.asfortranarray(f32(rng, (9, 11)))[2:7, 1:8],
}


@pytest.mark.parametrize("kind", HOST_VIEWS)
def test_numpy_round_trip(queue, program, rng, kind):
    a = HOST_VIEWS[kind](rng)
    b = np.zeros((5, 7), np.float32)
    a0, parent = a.copy(), a.base.copy() if a.base is not None else None
    launch(queue, program, dict(a=a, b=b, s=1.5), {"a", "b"}, a.shape)
    np.testing.assert_array_equal(a, a0 + 1.5)
    np.testing.assert_array_equal(b, 2 * (a0 + 1.5))
    if parent is not None:  # the rest of the parent (the gaps between pitched rows) is untouched
        a[...] = a0
        np.testing.assert_array_equal(a.base, parent)


@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_copy_back_of_every_dtype(queue, rng, dtype):
    parent = rand(rng, (6, 9), dtype, low=1)
    a = parent[1:5, 2:7]
    expected = parent.copy()
    expected[1:5, 2:7] = 0
    args, finish = prepare_arguments(queue, {"a": a}, {"a": classify("a", a)}, {"a"})
    args[0].memset(0)  # what a kernel zeroing its argument would leave
    finish()
    np.testing.assert_array_equal(parent, expected)


def test_only_written_arrays_are_copied_back(queue, program, rng):
    a = rng.standard_normal((5, 7)).astype(np.float32)
    a.flags.writeable = False  # inputs may be read-only
    b = np.zeros((5, 7), np.float32)
    a0 = a.copy()
    args = launch(queue, program, dict(a=a, b=b, s=1.5), {"b"}, a.shape)
    np.testing.assert_array_equal(a, a0)  # the kernel changed a's device copy, but a is not written back
    device_a = np.empty_like(a)
    args[0].copy_to_host(device_a.reshape(-1).view(np.uint8))
    np.testing.assert_array_equal(device_a, a0 + 1.5)
    np.testing.assert_array_equal(b, 2 * (a0 + 1.5))


def test_overlapping_views_of_one_buffer(queue, program, rng):
    """Two written arguments that share a host buffer: each copy-back writes only its own elements."""
    big = rng.standard_normal((5, 20)).astype(np.float32)
    expected = big.copy()
    expected[:, :7] += 1.5
    expected[:, 8:15] = 2 * expected[:, :7]
    launch(queue, program, dict(a=big[:, :7], b=big[:, 8:15], s=1.5), {"a", "b"}, (5, 7))
    np.testing.assert_array_equal(big, expected)


def test_views_of_one_array_share_one_device_buffer(queue, rng):
    """Arguments whose host memory overlaps get pointers into one device buffer, at their distance on the host."""
    big = rng.standard_normal((6, 20)).astype(np.float32)
    values = dict(a=big[1:, 2:9], b=big[:5, :7], c=np.zeros((5, 7), np.float32))
    args, _ = prepare_arguments(queue, values, {n: classify(n, v) for n, v in values.items()}, set())
    a, b, c = args[0], args[5], args[10]
    assert a._pointer - b._pointer == (20 + 2) * 4
    assert b.nbytes == (5 * 20 + 8 + 1) * 4  # from big[0, 0] to big[5, 8], a's last element
    assert c.nbytes == 5 * 7 * 4             # the third array has a buffer of its own


def test_a_copied_array_sharing_an_element_written_is_refused(queue):
    """An array with a negative stride or a step along its last two dims goes as a copy of its own: one that shares
    an element with another argument, either of them written, would part the two."""
    x = np.zeros((4, 8), np.float32)
    specs = dict(a=classify("a", x[:, ::-1]), b=classify("b", x))
    with pytest.raises(xetile.LaunchError, match="arguments 'a' and 'b' share host memory, the kernel writes 'b', "
                                                 "and 'a' has no memory order"):
        prepare_arguments(queue, dict(a=x[:, ::-1], b=x), specs, {"b"})
    specs = dict(a=classify("a", x[:, ::2]), b=classify("b", x[:, 2:4]))
    with pytest.raises(xetile.LaunchError, match="the kernel writes 'a'"):
        prepare_arguments(queue, dict(a=x[:, ::2], b=x[:, 2:4]), specs, {"a"})


def test_copies_of_interleaved_views_or_of_arrays_only_read_may_share_memory(queue, rng):
    """`x[:, ::2]` and `x[:, 1::2]` share no element: each goes as its copy, written or not, and each written one
    lands in its own elements; a copy of an array the kernel only reads may share elements with another read."""
    x = f32(rng, (4, 8))
    x0 = x.copy()
    values = dict(a=x[:, ::2], b=x[:, 1::2])
    args, finish = prepare_arguments(queue, values, {n: classify(n, v) for n, v in values.items()}, {"a", "b"})
    assert [a.value for a in args[1:5]] == [a.value for a in args[6:10]] == [4, 4, 4, 1]  # two C-contiguous copies
    assert args[0].nbytes == args[5].nbytes == 4 * 4 * 4
    finish()
    np.testing.assert_array_equal(x, x0)
    values = dict(a=x[:, ::-1], b=x)
    args, _ = prepare_arguments(queue, values, {n: classify(n, v) for n, v in values.items()}, set())
    assert args[0].nbytes == x.nbytes and args[5].nbytes == x.nbytes


def test_array_abi(queue, rng):
    """An array is a pointer to element [0, ..., 0], then its shape and its strides as i64, in elements: for 2-D
    rows, cols, row_stride, col_stride."""
    big = rng.standard_normal((6, 40)).astype(np.float32)
    empty = np.zeros((0, 3), np.float32)
    cases = [(big[:, 3:10], (6, 7, 40, 1)), (big[:4, :9].T, (9, 4, 1, 40)), (empty, (0, 3, 0, 0)),
             (big.reshape(3, 2, 40)[:, :, 1:4], (3, 2, 3, 80, 40, 1)), (big[2, 5:9], (4, 1))]
    for array, abi in cases:
        args, _ = prepare_arguments(queue, {"x": array}, {"x": classify("x", array)}, set())
        rank = array.ndim
        expected = ArrayArg(args[0], abi[:rank], abi[rank:]).kernel_args()
        assert isinstance(args[0], dpctl.memory.MemoryUSMDevice) and len(args) == len(expected) == 1 + 2 * rank
        assert [(type(a), a.value) for a in args[1:]] == [(type(a), a.value) for a in expected[1:]]
        assert [a.value for a in args[1:]] == list(abi) and isinstance(args[1], ctypes.c_int64)


def test_strides_not_in_whole_elements_go_as_a_copy(queue):
    """A stride of no whole number of elements, which no kernel argument gives, goes as a C-contiguous copy."""
    base = np.arange(16, dtype=np.float32)
    weird = as_strided(base, (2, 2), (6, 4))  # a row pitch of 1.5 elements
    args, _ = prepare_arguments(queue, {"w": weird}, {"w": classify("w", weird)}, set())
    assert [a.value for a in args[1:]] == [2, 2, 2, 1]
    staged = np.empty((2, 2), np.float32)
    args[0].copy_to_host(staged.reshape(-1).view(np.uint8))
    np.testing.assert_array_equal(staged, weird)


# ---- host arrays in place on a device that takes host memory -----------------------------------------------------

def test_an_aligned_host_array_goes_in_place(queue, program, rng, in_host_memory):
    """No copy either way: the kernel reads and writes the arrays' own memory, pitched rows' gaps untouched."""
    parent = host_array_at(f32(rng, (5, 48)), 0)
    a, b = parent[:, :7], host_array_at(np.zeros((5, 7), np.float32), 0)
    before = parent.copy()
    args = launch(queue, program, dict(a=a, b=b, s=1.5), {"a", "b"}, a.shape)
    assert args[0] == HostAddress(a.ctypes.data) and args[5] == HostAddress(b.ctypes.data)
    assert [v.value for v in args[1:5]] == [5, 7, 48, 1]
    np.testing.assert_array_equal(a, before[:, :7] + 1.5)
    np.testing.assert_array_equal(b, 2 * a)
    np.testing.assert_array_equal(parent[:, 7:], before[:, 7:])


def test_overlapping_host_arrays_in_place_see_one_memory(queue, program, rng, in_host_memory):
    """One array passed as both arguments: the kernel's write of `a` is what it reads back for `b`."""
    x = host_array_at(f32(rng, (4, 16)), 0)
    x0 = x.copy()
    args = launch(queue, program, dict(a=x, b=x, s=1.0), {"a", "b"}, x.shape)
    assert args[0] == args[5] == HostAddress(x.ctypes.data)
    np.testing.assert_array_equal(x, 2 * (x0 + 1.0))


def test_host_arrays_a_device_cannot_take_in_place_are_staged(queue, rng, in_host_memory):
    """In place only an array not empty, with no negative stride, its first element 64-byte aligned for a kernel whose
    block builtins need it (what the kernel was specialized for: args.block_io_rule); the others go to device memory
    as before."""
    base = host_array_at(f32(rng, (8, 32)), 0)
    cases = {"unaligned": base[:, 4:20], "negative stride": base[::-1], "empty": base[:0]}
    for kind, array in cases.items():
        args, _ = prepare_arguments(queue, {"x": array}, {"x": classify("x", array)}, set())
        assert isinstance(args[0], dpctl.memory.MemoryUSMDevice), kind
    args, _ = prepare_arguments(queue, {"x": base[:, 16:]}, {"x": classify("x", base[:, 16:])}, set())
    assert args[0] == HostAddress(base[:, 16:].ctypes.data)


def test_a_torch_cpu_tensor_goes_in_place(in_host_memory, staged):
    """torch's CPU allocator aligns its tensors to 64 bytes: a launch on them copies nothing, on any CPU target."""
    torch = pytest.importorskip("torch")
    x = torch.arange(64 * 16, dtype=torch.float32).reshape(64, 16)
    assert x.data_ptr() % 64 == 0
    for target in ("cpu", "xe-emulated"):
        y = torch.zeros(64, 16)
        doubled[(4,)](x, y, BM=16, BN=16, device="opencl:cpu", target=target)
        assert torch.equal(y, x * 2)
    assert staged == []


@pytest.mark.parametrize("offset, dtype", [(16, np.float32), (4, np.float32), (2, np.float16)])
def test_an_unaligned_host_array_goes_in_place_where_the_builtins_read_any_base(offset, dtype, in_host_memory,
                                                                                staged):
    """numpy's large arrays sit 16 bytes past 64-byte alignment: the `cpu` target's block builtins read any address
    (BlockIO.any_layout), so its launch copies nothing; `xe-emulated`'s messages need the aligned base its kernel was
    specialized for, so each array is staged at the start of new memory there."""
    rng = np.random.default_rng(1)
    x = host_array_at(rng.standard_normal((64, 16)).astype(dtype), offset)
    for target, copies in (("cpu", []), ("xe-emulated", [["x"], ["y"]])):
        y = host_array_at(np.zeros((64, 16), dtype), offset)
        doubled[(4,)](x, y, BM=16, BN=16, device="opencl:cpu", target=target)
        np.testing.assert_array_equal(y, x * 2)
        assert sorted(staged) == copies, target
        staged.clear()


@xetile.kernel
def doubled(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    p = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [p * BM, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(y, [p * BM, 0], [BM, BN]), v * 2)


# ---- USM arrays: zero copy ---------------------------------------------------------------------------------------

USM_VIEWS = {  # 5x7 f32 USM arrays in the memory orders and pitches a kernel accepts
    "row-major": lambda queue, rng: UsmArray(queue, f32(rng, (5, 7)), (5, 7), None),
    "column-major": lambda queue, rng: UsmArray(queue, f32(rng, (7, 5)), (5, 7), (1, 5)),
    "pitched": lambda queue, rng: UsmArray(queue, f32(rng, (6, 40)), (5, 7), (40, 1), 43),
}


@pytest.mark.parametrize("kind", USM_VIEWS)
def test_usm_zero_copy(queue, program, rng, kind):
    a = USM_VIEWS[kind](queue, rng)
    b = UsmArray(queue, np.zeros((5, 7), np.float32), (5, 7), None)
    a0, base0 = a.view().copy(), a.base.copy()
    args = launch(queue, program, dict(a=a, b=b, s=1.5), {"a", "b"}, (5, 7))
    usm = a.__sycl_usm_array_interface__
    assert args[0].__sycl_usm_array_interface__["data"][0] == usm["data"][0] + 4 * usm["offset"]  # same pointer
    np.testing.assert_array_equal(a.view(), a0 + 1.5)
    np.testing.assert_array_equal(b.view(), 2 * (a0 + 1.5))
    np.testing.assert_array_equal(a.base, base0)  # a lives on the device only: nothing is copied to the host


def test_usm_array_of_another_context(queue):
    try:
        sub_device = dpctl.SyclDevice("opencl:cpu").create_sub_devices(partition=1)[0]
    except dpctl.SyclSubDeviceCreationError:
        pytest.skip("the CPU has one compute unit: no sub-device to make a second context from")
    a = UsmArray(dpctl.SyclQueue(sub_device), np.zeros((2, 2), np.float32), (2, 2), None)  # a context of its own
    with pytest.raises(xetile.LaunchError, match="argument 'a' is USM memory of another SYCL context"):
        prepare_arguments(queue, {"a": a}, {"a": classify("a", a)}, {"a"})


def test_dpnp_arrays_zero_copy(queue, program, rng):
    dpnp = needs_dpnp()
    host = rng.standard_normal((7, 9)).astype(np.float32)
    parent = dpnp.asarray(host, sycl_queue=queue)
    a = parent[1:6, 2:9]  # pitched, with an offset
    b = dpnp.zeros((7, 5), dtype=dpnp.float32, sycl_queue=queue).T  # column-major
    assert classify("a", a) == ArraySpec(float32, ROW_MAJOR, block_io_rule=BASE_RULE)  # 44 bytes into the array
    assert classify("b", b) == ArraySpec(float32, COL_MAJOR, block_io_rule=WIDTH_RULE)
    args = launch(queue, program, dict(a=a, b=b, s=1.5), {"a", "b"}, (5, 7))
    usm = a.__sycl_usm_array_interface__
    assert args[0].__sycl_usm_array_interface__["data"][0] == usm["data"][0] + 4 * usm["offset"]
    expected = host.copy()
    expected[1:6, 2:9] += 1.5
    np.testing.assert_array_equal(dpnp.asnumpy(parent), expected)
    np.testing.assert_array_equal(dpnp.asnumpy(b), 2 * expected[1:6, 2:9])


# ---- DLPack producers --------------------------------------------------------------------------------------------

def test_dlpack_host_round_trip(queue, program, rng):
    a_host = rng.standard_normal((5, 7)).astype(np.float32)
    b_host = np.zeros((5, 7), np.float32)
    a0 = a_host.copy()
    a, b = DLPackOnly(a_host), DLPackOnly(b_host)
    assert classify("a", a) == ArraySpec(float32, ROW_MAJOR, block_io_rule=WIDTH_RULE, dense=True)  # 28 bytes: under 64
    assert classify("t", DLPackOnly(a_host.T)) == ArraySpec(float32, COL_MAJOR, block_io_rule=WIDTH_RULE)
    launch(queue, program, dict(a=a, b=b, s=1.5), {"b"}, (5, 7))
    np.testing.assert_array_equal(a_host, a0)  # not written: not copied back
    np.testing.assert_array_equal(b_host, 2 * (a0 + 1.5))  # written into the producer's memory


def test_dlpack_sycl_zero_copy(queue, program, rng):
    dpnp = needs_dpnp()
    host = rng.standard_normal((5, 7)).astype(np.float32)
    a = dpnp.asarray(host, sycl_queue=queue)
    b = dpnp.zeros((5, 7), dtype=dpnp.float32, sycl_queue=queue)
    args = launch(queue, program, dict(a=DLPackOnly(a), b=DLPackOnly(b), s=1.5),
                  set(), (5, 7))
    assert args[0].__sycl_usm_array_interface__["data"][0] == a.__sycl_usm_array_interface__["data"][0]
    np.testing.assert_array_equal(dpnp.asnumpy(a), host + 1.5)
    np.testing.assert_array_equal(dpnp.asnumpy(b), 2 * (host + 1.5))


def test_numpy_interpreter_takes_host_dlpack_only(queue):
    host = np.ones((2, 2), np.float32)
    spec = classify("a", host)
    assert runtime_value(spec, DLPackOnly(host)).ctypes.data == host.ctypes.data
    with pytest.raises(xetile.LaunchError, match="the numpy interpreter runs on host arrays"):
        runtime_value(spec, UsmArray(queue, host, (2, 2), None))


def test_an_array_is_dense_where_c_order_lays_it_out():
    """ArraySpec.dense (MemRefType.strided false, which a gather reads with no division): C-contiguous arrays, of
    any rank, a dim of one element with any stride; not a pitched, column-major or batch-strided one."""
    base = np.zeros((4, 6, 8), np.float32)
    dense = {"c": base, "row": base[0, 1], "one_row": base[0, 1:2], "w[None]": base[0, 0][None], "empty": base[:0]}
    strided = {"pitched": base[0, :, :5], "column_major": base[0].T, "batch_step": base[::2], "rows_step": base[:, ::2]}
    for name, array in {**dense, **strided}.items():
        assert classify(name, array).dense == (name in dense), name
        assert classify(name, array).ir_type().strided == (name in strided), name


def test_classify_usm_dtype_and_order(queue):
    base = np.zeros((4, 6), np.int16)
    assert classify("x", UsmArray(queue, base, (4, 6), None)) == classify("x", base)
    assert classify("x", UsmArray(queue, base, (6, 4), (1, 6))) == classify("x", base.T)
    assert classify("x", UsmArray(queue, base, (24,), None)) == classify("x", base.ravel())
    assert classify("x", UsmArray(queue, base, (2, 2, 6), (12, 6, 1))).rank == 3
    with pytest.raises(xetile.LaunchError, match="argument 'x': a 1-D array on a device needs unit stride; got stride 4 "
                                                 "bytes"):
        classify("x", UsmArray(queue, base, (12,), (2,)))
    with pytest.raises(xetile.LaunchError, match="argument 'x': expected an array of rank >= 1, got a 0-d array"):
        classify("x", UsmArray(queue, base, (), None))
    with pytest.raises(xetile.LaunchError, match="argument 'x': dtype float64 is not supported"):
        classify("x", UsmArray(queue, np.zeros((2, 2)), (2, 2), None))
    with pytest.raises(xetile.LaunchError, match="unit stride along one of its last two dims"):
        classify("x", UsmArray(queue, base, (2, 2), (2, 2)))


def test_a_dim_of_one_element_with_a_stride_below_c_orders_reads_as_c_order(queue):
    """numpy's `w[None]` and `x[:, None]` and dpnp's reshape leave a stride of 0 on a dim of extent 1: the array
    classifies, and its kernel arguments read, as its C-contiguous copy (before, a row of N read as a column-major
    array of one row, whose blocks no 2D message addresses); one row of a pitched array keeps its pitch."""
    w, x = np.arange(64, dtype=np.float32), np.arange(48, dtype=np.float32)
    for view in (w[None], x[:, None], w[None, None]):
        assert 0 in view.strides
        contiguous = view.copy()
        assert classify("v", view) == classify("v", contiguous)
        assert classify("v", UsmArray(queue, contiguous, view.shape, tuple(s // 4 for s in view.strides))) == \
            classify("v", contiguous)
        sizes = [arg.value for arg in memory.host_size_args(view)]
        assert sizes == [*contiguous.shape, *(s // 4 for s in contiguous.strides)]
    assert classify("v", w[None]).order == ROW_MAJOR and classify("v", w[None]).block_io
    one_row = np.zeros((4, 80), np.float32)[2:3, :64]  # a row of a pitched array keeps its pitch
    assert [arg.value for arg in memory.host_size_args(one_row)] == [1, 64, 80, 1]


# ---- scalars -----------------------------------------------------------------------------------------------------

def test_scalars_travel_as_their_spec_dtype(queue, program):
    values = dict(out=np.zeros((1, 9), np.int64), i8=np.int8(-3), u8=np.uint8(200), i16=np.int16(-5),
                  f16=np.float16(1.25), bf16=ml_dtypes.bfloat16(-2.5), i32=7, i64=-2**40, f32=2.5, b=True)
    specs = {name: classify(name, value) for name, value in values.items()}
    assert specs["i32"] == ScalarSpec(xetile.int32) and specs["f32"] == ScalarSpec(float32)
    args, finish = prepare_arguments(queue, values, specs, {"out"})
    queue.submit(program.get_sycl_kernel("scalars"), args, [1])
    finish()
    bf16_bits = int(np.array(-2.5, ml_dtypes.bfloat16).view(np.uint16))
    assert values["out"].tolist() == [[-3, 200, -5, 10, bf16_bits, 7, -2**40, 20, 1]]


class OnDevice(DLPackOnly):
    """A DLPack producer that says it lives on DLPack device `device_type`."""

    def __init__(self, device_type):
        super().__init__(np.zeros((2, 2), np.float32))
        self.device_type = device_type

    def __dlpack_device__(self):
        return self.device_type, 0


def test_dlpack_device_types(monkeypatch):
    with pytest.raises(xetile.LaunchError, match="argument 'x': DLPack device type 2 is neither the host"):
        classify("x", OnDevice(2))
    monkeypatch.setitem(sys.modules, "dpnp.tensor", None)  # as if dpnp were not installed
    with pytest.raises(xetile.LaunchError, match="argument 'x': a DLPack array on a SYCL device needs dpnp"):
        classify("x", OnDevice(14))


# ---- 2D block message surfaces ----------------------------------------------------------------------------------

def test_block_io_rules_of_any_rank():
    """Each slice along the leading dims starts 64-byte aligned (its matrix is a surface of its own); a 1-D array
    is one row."""
    assert classify("a", np.zeros((3, 16, 32), np.float32)).block_io
    assert classify("a", np.zeros((3, 4, 16, 32), np.float32)[:, ::2]).block_io                 # skips slices
    assert classify("a", np.zeros((3, 9, 20), np.float32)).block_io_rule == SLICE_RULE           # 720-byte slices
    assert classify("a", np.zeros((16, 3, 24), np.float32).transpose(1, 0, 2)).block_io_rule == SLICE_RULE  # 96 B
    assert classify("a", np.zeros(32, np.float16)).block_io and classify("a", np.zeros(32, np.float16)).rank == 1
    assert classify("a", np.zeros(17, np.float16)).block_io_rule == WIDTH_RULE                  # 34 bytes wide
    assert classify("t", np.zeros((2, 32, 16), np.float32).transpose(0, 2, 1)).order == COL_MAJOR


def test_block_io_surface_rules(queue):
    """Reference note "Restrictions": a 64-byte aligned base, a pitch of 16-byte units, 64 bytes to 2^24 wide.
    numpy arrays are staged at the start of an allocation; USM arrays are used where they are."""
    assert classify("a", np.zeros((16, 32), np.float32)).block_io
    assert classify("a", np.zeros((16, 8), np.float32)).block_io_rule == WIDTH_RULE            # 32 bytes wide
    assert classify("a", np.zeros((16, 45), np.float32)[:, 3:40]).block_io_rule == PITCH_RULE  # a 180-byte pitch
    assert classify("a", np.zeros((16, 48), np.float16)[:, 8:40]).block_io        # 96-byte pitch, 64 wide
    assert classify("t", np.zeros((32, 16), np.float32).T).block_io               # column-major: 16 x 32 rows
    base = np.zeros((16, 64), np.float32)
    assert classify("u", UsmArray(queue, base, (16, 32), (64, 1))).block_io
    assert classify("u", UsmArray(queue, base, (16, 32), (64, 1), offset=1)).block_io_rule == BASE_RULE  # 4 B off


def test_the_cpu_targets_block_builtins_need_only_the_layout_free_rules(queue):
    """BlockIO.any_layout (the `cpu` target): its block builtins read and write any base, pitch and row width, so
    only the extents decide (ArraySpec.surface_rule); Xe targets keep every rule."""
    base = np.zeros((16, 64), np.float32)
    for array, rule in ((np.zeros((16, 45), np.float32)[:, 3:40], PITCH_RULE),
                        (np.zeros((16, 8), np.float32), WIDTH_RULE),
                        (UsmArray(queue, base, (16, 32), (64, 1), offset=1), BASE_RULE),
                        (np.zeros((3, 9, 20), np.float32), SLICE_RULE)):
        spec = classify("a", array)
        assert (spec.surface_rule(), spec.surface_rule(any_layout=True)) == (rule, None)
        assert (spec.ir_type().block_io, spec.ir_type().within_extents) == (False, True)
    taller = UsmArray(queue, base, (2**24 + 1, 1), (1, 1))  # more rows than Xe's messages address
    tallest = UsmArray(queue, base, (2**29 + 1, 1), (1, 1))  # and than the cpu target's builtins do
    assert classify("a", taller).surface_rule() == HEIGHT_RULE and classify("a", taller).ir_type().within_extents
    spec = classify("a", tallest)
    assert spec.surface_rule(any_layout=True) == BUILTIN_HEIGHT_RULE and not spec.ir_type().within_extents
    far_apart = UsmArray(queue, base, (2, 16), (2**27 + 16, 1))  # rows 2**29 + 64 bytes apart: past an i32 pitch's
    assert classify("a", far_apart).surface_rule(any_layout=True) == BUILTIN_PITCH_RULE


def test_the_transpose_of_every_array_kind_is_a_view_of_its_memory(queue, rng):
    """runtime/args.py transposed: numpy's and torch's own `.T`; a USM array known by its interface alone as a UsmView
    of the same memory, offset kept, shape and strides reversed (tests/jit/test_ops.py launches one); a DLPack
    producer's as the launch takes it."""
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((3, 5)).astype(np.float32)
    assert transposed(x).base is x and transposed(torch.from_numpy(x)).shape == (5, 3)
    np.testing.assert_array_equal(transposed(DLPackOnly(x)), x.T)
    base = rng.standard_normal((4, 6)).astype(np.float32)
    usm = UsmArray(queue, base, (3, 5), (6, 1), offset=7)
    view = transposed(usm)
    assert isinstance(view, UsmView) and view.owner is usm
    interface = view.__sycl_usm_array_interface__
    assert (interface["shape"], interface["strides"], interface["offset"]) == ((5, 3), (1, 6), 7)
    assert interface["data"] == usm.__sycl_usm_array_interface__["data"]
