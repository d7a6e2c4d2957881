"""torch tensors as kernel arguments (runtime/torch_tensors.py): CPU tensors of every dtype and rank 1-4, strided and
transposed views written in place, on the numpy interpreter and opencl:cpu; xetile.ops.matmul on tensors; tensors
on another device refused. The XPU path with stand-ins for torch's XPU calls (this machine has no XPU): an "XPU
tensor" in USM memory of an in-order opencl:cpu queue that stands for torch's current stream, whose `sycl::queue*`
the stand-in `torch._C._xpu_getCurrentRawStream` (or `torch.xpu.current_stream().sycl_queue`) returns."""
from __future__ import annotations

import gc
import sys
import types
import weakref

import dpctl
import dpctl.memory
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import ALL_NP_DTYPES, dtype_id
from xetile_jit.jit import launch_plan
from xetile_jit.runtime import torch_tensors
from xetile_jit.runtime.torch_tensors import check_one_sycl_runtime, mapped_sycl_runtimes

torch = pytest.importorskip("torch")


@xetile.kernel
def copy1(x, y, B: xetile.constexpr):
    xetile.store_tile(xetile.init_tile(y, [0], [B]), xetile.load_tile(xetile.init_tile(x, [0], [B])))


@xetile.kernel
def copy2(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [BM, BN]), xetile.load_tile(xetile.init_tile(x, [0, 0], [BM, BN])))


@xetile.kernel
def copy3(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    i = xetile.program_id(0)
    xetile.store_tile(xetile.init_tile(y, [i, 0, 0], [BM, BN]),
                      xetile.load_tile(xetile.init_tile(x, [i, 0, 0], [BM, BN])))


@xetile.kernel
def copy4(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    i, j = xetile.program_id(0), xetile.program_id(1)
    xetile.store_tile(xetile.init_tile(y, [i, j, 0, 0], [BM, BN]),
                      xetile.load_tile(xetile.init_tile(x, [i, j, 0, 0], [BM, BN])))


@xetile.kernel
def add_one(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [BM, BN]),
                      xetile.load_tile(xetile.init_tile(x, [0, 0], [BM, BN])) + 1)


def copy(x, y):
    """Copies x into y (same shape, rank 1-4) with the kernel of their rank."""
    *lead, rows, cols = (1, *x.shape) if x.dim() == 1 else x.shape
    if x.dim() == 1:
        copy1[(1,)](x, y, B=cols)
    else:
        kernel = {2: copy2, 3: copy3, 4: copy4}[x.dim()]
        kernel[tuple(lead) or (1,)](x, y, BM=rows, BN=cols)


def random_tensor(shape, np_dtype) -> "torch.Tensor":
    values = torch.randint(-4, 5, shape)
    if np_dtype == np.bool_:
        return values > 0
    return values.to(torch_tensors.torch_dtype(np.dtype(np_dtype)))


@pytest.mark.parametrize("np_dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_cpu_tensors_of_every_dtype(on_each_device, np_dtype):
    x = random_tensor((8, 16), np_dtype)
    y = torch.zeros_like(x)
    copy(x, y)
    assert torch.equal(y, x)


@pytest.mark.parametrize("shape", [(32,), (2, 8, 16), (2, 3, 4, 16)], ids=len)
@pytest.mark.parametrize("np_dtype", [np.float32, "bfloat16"], ids=str)
def test_cpu_tensors_of_every_rank(on_each_device, shape, np_dtype):
    x = random_tensor(shape, np_dtype)
    y = torch.zeros_like(x)
    copy(x, y)
    assert torch.equal(y, x)


def test_strided_and_transposed_views_are_written_in_place(on_each_device):
    """A pitched view of a larger tensor and a transposed one, read and written; nothing outside them changes."""
    base = torch.arange(40 * 24, dtype=torch.float16).reshape(40, 24)
    out = torch.full((20, 40), -1.0, dtype=torch.float16)
    add_one[(1,)](base[3:11, 5:21], out[2:10, 7:23], BM=8, BN=16)
    assert torch.equal(out[2:10, 7:23], base[3:11, 5:21] + 1)
    out[2:10, 7:23] = -1
    assert torch.all(out == -1)
    transposed = torch.zeros(16, 8, dtype=torch.float16)
    add_one[(1,)](base[:16, :8].T, transposed.T, BM=8, BN=16)
    assert torch.equal(transposed, base[:16, :8] + 1)


def test_views_with_a_step_go_as_copies_and_are_written_back(on_each_device):
    """`t[::2]` and `t[:, 1::2]` have no memory order a kernel reads (runtime/args.py copied_contiguous): each goes
    as a copy, the written one copied back into its own elements; the elements between them stay as they were."""
    x = torch.arange(64, dtype=torch.float32)
    y = torch.full((64,), -1.0)
    copy1[(1,)](x[::2], y[1::2], B=32)
    assert torch.equal(y[1::2], x[::2]) and torch.all(y[::2] == -1)
    base = torch.arange(8 * 32, dtype=torch.float16).reshape(8, 32)
    out = torch.full((8, 32), -1.0, dtype=torch.float16)
    add_one[(1,)](base[:, ::2], out[:, 1::2], BM=8, BN=16)
    assert torch.equal(out[:, 1::2], base[:, ::2] + 1) and torch.all(out[:, ::2] == -1)


def test_a_tensor_that_requires_grad_is_read_through_its_data():
    x = torch.randn(8, 16, requires_grad=True)
    y = torch.zeros(8, 16)
    add_one[(1,)](x, y, BM=8, BN=16)
    assert torch.equal(y, x.detach() + 1)


def test_a_relaunched_tensor_is_read_as_it_is_at_each_launch():
    """The host view kept for a CPU tensor (jit/launch_plan.py tensor_key) is found by its address and layout at
    each launch: transposed in place (`t_`: same address), its memory given a neg bit (refused, as
    `Tensor.numpy()` refuses it), the launch reads what the tensor is now; the view keeps no tensor alive."""
    x, y = torch.arange(256, dtype=torch.float32).reshape(16, 16), torch.zeros(16, 16)
    for _ in range(3):  # kept from the second launch on
        add_one[(1,)](x, y, BM=16, BN=16, device="numpy")
    assert torch.equal(y, x + 1)
    x.t_()
    add_one[(1,)](x, y, BM=16, BN=16, device="numpy")
    assert torch.equal(y, x + 1) and not torch.equal(x, x.T)
    with pytest.raises(RuntimeError, match="negative bit"):
        add_one[(1,)](torch._neg_view(x), y, BM=16, BN=16, device="numpy")
    alive = weakref.ref(x)
    del x
    gc.collect()
    assert alive() is None


# in-place changes of a 16 x 16 f32 tensor's layout or memory (its view as int32 needs the other tensor in int32
# too); all but set_ keep its address. resize_ stays within the memory: a launched tensor's storage is shared
# with numpy (Tensor.numpy()), which torch then never grows
CHANGES = {
    "t_": lambda x: x.t_(),
    "as_strided_": lambda x: x.as_strided_((16, 16), (1, 16)),
    "resize_": lambda x: x.resize_(8, 16),
    "data = t()": lambda x: setattr(x, "data", x.t()),
    "data = view(int32)": lambda x: setattr(x, "data", x.view(torch.int32)),
    "data = neg view": lambda x: setattr(x, "data", torch._neg_view(x)),
    "set_": lambda x: x.set_(torch.arange(256, dtype=torch.float32).reshape(16, 16) * 2),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_layout_check_sees_each_change_at_the_address(change):
    """torch_tensors.layout_check (torch's TensorGuards) sees each change that keeps the address; the others move
    the tensor's memory."""
    assert torch_tensors.tensor_guards_work()
    x = torch.arange(256, dtype=torch.float32).reshape(16, 16)
    address, check = x.data_ptr(), torch_tensors.layout_check((x,))
    assert check(x)
    CHANGES[change](x)
    assert not check(x) if x.data_ptr() == address else change == "set_"


def test_tensorguards_pass_their_test_also_first_asked_in_inference_mode():
    torch_tensors.tensor_guards_work.cache_clear()
    with torch.inference_mode():
        assert torch_tensors.tensor_guards_work()


def held_views(kernel, *tensors):
    """What a launch of `kernel` with `tensors` takes from its HeldTensors (jit/launch_plan.py)."""
    held = kernel.specializer.__globals__["_xt_held"]
    return None if held.pattern is None else held.views(tensors)


@pytest.mark.parametrize("change", CHANGES)
def test_held_tensors_are_read_as_they_are_at_each_launch(change):
    """Tensors launched three times are held (jit/launch_plan.py HeldTensors: one check of all their layouts, their
    views kept); after each in-place change the launch reads what the tensor is now, and holds it again."""
    x, y = torch.arange(256, dtype=torch.float32).reshape(16, 16), torch.zeros(16, 16)
    for _ in range(3):
        add_one[(1,)](x, y, BM=16, BN=16, device="numpy")
    assert held_views(add_one, x, y) is not None
    CHANGES[change](x)
    assert held_views(add_one, x, y) is None
    if change == "data = view(int32)":
        y.data = y.view(torch.int32)
    if change == "data = neg view":
        with pytest.raises(RuntimeError, match="negative bit"):
            add_one[(1,)](x, y, BM=16, BN=16, device="numpy")
        return
    rows = len(x)
    for _ in range(3):
        y.zero_()
        add_one[(1,)](x, y, BM=rows, BN=16, device="numpy")
        assert torch.equal(y[:rows], x + 1) and not y[rows:].any()
    assert held_views(add_one, x, y) is not None


def test_a_neg_view_at_a_held_tensors_address_is_refused():
    x, y = torch.arange(256, dtype=torch.float32).reshape(16, 16), torch.zeros(16, 16)
    for _ in range(3):
        add_one[(1,)](x, y, BM=16, BN=16, device="numpy")
    with pytest.raises(RuntimeError, match="negative bit"):
        add_one[(1,)](torch._neg_view(x), y, BM=16, BN=16, device="numpy")


def test_inside_an_operators_implementation_tensors_are_read_one_by_one():
    """Where torch excludes the negative bit's dispatch key (an operator's implementation), TensorGuards would take
    a neg view for the held tensor at its address: there nothing is held, a neg view is refused, and what the
    self-test would see there is not what it remembers for everywhere else."""
    torch_tensors.tensor_guards_work.cache_clear()
    x, y = torch.arange(256, dtype=torch.float32).reshape(16, 16), torch.zeros(16, 16)
    for _ in range(3):
        add_one[(1,)](x, y, BM=16, BN=16, device="numpy")
    with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.Negative)):
        assert not torch_tensors.bits_visible() and torch_tensors.layout_check((x,)) is None
        for _ in range(3):
            add_one[(1,)](x, y, BM=16, BN=16, device="numpy")
        with pytest.raises(RuntimeError, match="negative bit"):
            add_one[(1,)](torch._neg_view(x), y, BM=16, BN=16, device="numpy")
    assert torch.equal(y, x + 1) and torch_tensors.tensor_guards_work()


def test_tensors_that_take_turns_are_held_and_so_is_an_input_beside_new_outputs():
    """Two sets of tensors launched in turns are both held; an input stays held beside a new output at each
    launch."""
    a, b = (torch.full((16, 16), float(v)) for v in (1, 2))
    for _ in range(3):
        add_one[(1,)](a, b, BM=16, BN=16, device="numpy")
        add_one[(1,)](b, a, BM=16, BN=16, device="numpy")
    assert held_views(add_one, a, b) is not None and held_views(add_one, b, a) is not None
    assert torch.equal(a, torch.full((16, 16), 7.0)) and torch.equal(b, torch.full((16, 16), 6.0))
    outputs = []  # all alive: a freed output's address and id, taken again by the next, would make it held too
    for _ in range(3):
        outputs.append(torch.zeros(16, 16))
        add_one[(1,)](a, outputs[-1], BM=16, BN=16, device="numpy")
        assert torch.equal(outputs[-1], a + 1)
    assert held_views(add_one, a, torch.zeros(16, 16))[0] is not None


def test_without_tensorguards_tensors_are_read_one_by_one(monkeypatch):
    monkeypatch.setattr(launch_plan, "layout_check", lambda tensors: None)
    x, y = torch.arange(256, dtype=torch.float32).reshape(16, 16), torch.zeros(16, 16)
    add_one.cache.clear()
    add_one.specializer.__globals__["_xt_held"].pattern = None
    for _ in range(3):
        add_one[(1,)](x, y, BM=16, BN=16, device="numpy")
    assert held_views(add_one, x, y) is None
    x.t_()
    add_one[(1,)](x, y, BM=16, BN=16, device="numpy")
    assert torch.equal(y, x + 1)


def test_tensors_of_one_layout_launch_with_one_plan():
    """A CPU tensor's key part is a token for its view's layout (jit/launch_plan.py tensor_key), the same whether its
    view was made at the launch or kept from the one before: new tensors of one layout, launched twice each, find
    the plan the first made; another dtype makes another."""
    add_one.cache.clear()
    for value in range(3):
        x, y = torch.full((8, 16), float(value)), torch.zeros(8, 16)
        for _ in range(2):
            add_one[(1,)](x, y, BM=8, BN=16, device="numpy")
        assert torch.equal(y, x + 1)
    assert len(add_one.cache.plans) == 1
    add_one[(1,)](torch.zeros(8, 16, dtype=torch.float16), torch.zeros(8, 16), BM=8, BN=16, device="numpy")
    assert len(add_one.cache.plans) == 2


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_a_dtype_numpy_lacks_or_the_kernels_lack_is_a_launch_error():
    with pytest.raises(xetile.LaunchError, match="dtype float64 is not supported"):
        add_one[(1,)](torch.zeros(8, 16, dtype=torch.float64), torch.zeros(8, 16), BM=8, BN=16)
    with pytest.raises(xetile.LaunchError, match="torch.complex32 has no numpy equivalent"):
        add_one[(1,)](torch.zeros(8, 16, dtype=torch.complex32), torch.zeros(8, 16), BM=8, BN=16)


def test_matmul_takes_and_returns_tensors():
    torch.manual_seed(0)
    a, b = torch.randn(70, 40), torch.randn(50, 40).T  # b column-major, read in place
    c = xetile.ops.matmul(a, b)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.float32
    torch.testing.assert_close(c, a @ b, atol=1e-4, rtol=1e-4)
    a16, b16, bias = a.to(torch.bfloat16), b.to(torch.bfloat16), torch.ones(50, dtype=torch.bfloat16)
    c16 = xetile.ops.matmul(a16, b16, bias=bias, out_dtype=torch.bfloat16)
    assert c16.dtype == torch.bfloat16
    torch.testing.assert_close(c16.float(), a16.float() @ b16.float() + 1, atol=0.05, rtol=0.01)


def test_matmul_of_a_few_tokens_through_a_linear_layer_on_the_cpu_device():
    """A torch Linear's y = x W.T + b for 4 tokens: W.T column-major, read in place by the few-row kernel of a CPU
    device (ops.matmul's gemv_dot_kernel), the result torch's."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(96, 40)
    x = torch.randn(4, 96)
    with torch.no_grad():
        y = xetile.ops.matmul(x, layer.weight.T, bias=layer.bias, activation="silu", device="opencl:cpu")
        torch.testing.assert_close(y, torch.nn.functional.silu(layer(x)), atol=1e-5, rtol=1e-5)


def test_a_tensor_on_no_sycl_device_is_a_launch_error():
    with pytest.raises(xetile.LaunchError, match="'x' is a torch tensor on meta, but the launch runs on opencl:cpu"):
        add_one[(1,)](torch.zeros(8, 16, device="meta"), torch.zeros(8, 16, device="meta"), BM=8, BN=16,
                      device="opencl:cpu")
    with pytest.raises(xetile.LaunchError, match="a torch tensor on meta is on no SYCL device"):
        torch_tensors.as_array(torch.zeros(8, 16, device="meta"))


# ---- the XPU path, with stand-ins -------------------------------------------------------------------------------


class XpuTensor:
    """What the launch reads of an XPU tensor (is_cpu, device, dtype, shape, stride(), data_ptr()), over USM memory
    of the stand-in stream's queue."""

    def __init__(self, stream: dpctl.SyclQueue, shape, index: int = 0):
        self.shape, self.dtype, self.requires_grad, self.is_cpu = shape, torch.float32, False, False
        self.memory = dpctl.memory.MemoryUSMDevice(int(np.prod(shape)) * 4, queue=stream)
        self.device = types.SimpleNamespace(type="xpu", index=index)

    def data_ptr(self) -> int:
        return self.memory._pointer

    def stride(self) -> tuple[int, ...]:
        return (self.shape[1], 1)

    def __dlpack_device__(self):
        return (14, self.device.index)  # torch exports XPU tensors with the oneAPI device type


@pytest.fixture
def stream():
    """An in-order queue standing for torch's current XPU stream (torch's queues are in order)."""
    return dpctl.SyclQueue("opencl:cpu", property="in_order")


def stand_in_torch(monkeypatch, stream, raw_stream: bool = True):
    """torch with the stand-in XPU calls: torch._C._xpu_getCurrentRawStream, or only torch.xpu.current_stream."""
    calls = []

    def current_raw_stream(index):
        calls.append(index)
        return stream.addressof_ref()  # dpctl's queue reference is a sycl::queue*

    xpu = types.SimpleNamespace(current_device=lambda: 0,
                                current_stream=lambda index: types.SimpleNamespace(sycl_queue=current_raw_stream(index)))
    fake = types.SimpleNamespace(Tensor=(torch.Tensor, XpuTensor), bfloat16=torch.bfloat16, empty=torch.empty,
                                 from_numpy=torch.from_numpy, xpu=xpu,
                                 _C=types.SimpleNamespace(**({"_xpu_getCurrentRawStream": current_raw_stream}
                                                             if raw_stream else {})))
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(torch_tensors, "_queues", {})
    # CPU tensors an earlier test launched add_one with are held (HeldTensors), and a launch would check them with
    # dispatch-key calls the stand-in lacks
    monkeypatch.setitem(add_one.specializer.__globals__, "_xt_held", launch_plan.HeldTensors())
    return calls


@pytest.mark.parametrize("raw_stream", [True, False], ids=["raw_stream", "current_stream"])
def test_xpu_tensors_launch_on_the_current_stream_in_its_order(monkeypatch, stream, raw_stream):
    """The launch joins the stream's queue without a host wait: a copy into x queued before it and a copy out of y
    queued after it, with no wait between, see its result."""
    calls = stand_in_torch(monkeypatch, stream, raw_stream)
    x, y = XpuTensor(stream, (8, 16)), XpuTensor(stream, (8, 16))
    source, result = np.arange(128, dtype=np.float32).reshape(8, 16), np.zeros((8, 16), np.float32)
    stream.memcpy_async(x.memory, source, source.nbytes)
    event = add_one.run((1,), (x, y), {"BM": 8, "BN": 16})
    assert event is not None  # an asynchronous launch: the numpy-staging path waits and returns after
    stream.memcpy_async(result, y.memory, result.nbytes).wait()
    np.testing.assert_array_equal(result, source + 1)
    assert calls and set(calls) == {0}


def test_xpu_and_cpu_tensors_in_one_launch_are_refused_with_both_devices(monkeypatch, stream):
    stand_in_torch(monkeypatch, stream)
    x = XpuTensor(stream, (8, 16))
    with pytest.raises(xetile.LaunchError, match=r"'x' and 'y' are on different devices \(xpu:0 and cpu\)"):
        add_one[(1,)](x, torch.zeros(8, 16), BM=8, BN=16)


def test_an_xpu_tensor_on_another_launch_device_is_refused_with_both_names(monkeypatch, stream):
    stand_in_torch(monkeypatch, stream)
    x, y = XpuTensor(stream, (8, 16)), XpuTensor(stream, (8, 16))
    with pytest.raises(xetile.LaunchError, match="'x' is a torch tensor on xpu:0, but the launch runs on the numpy "
                                                 "interpreter"):
        add_one[(1,)](x, y, BM=8, BN=16, device="numpy")


def test_two_sycl_runtimes_are_refused_by_name(tmp_path):
    maps = tmp_path / "maps"
    lines = ["7f00-7f01 r-xp 0 08:01 1 /opt/torch/lib/libsycl.so.8", "7f02-7f03 r-xp 0 08:01 2 /venv/lib/libsycl.so.9",
             "7f04-7f05 r-xp 0 08:01 3 /venv/lib/libsycl.so.9", "7f06-7f07 r-xp 0 08:01 4 /lib/libc.so.6"]
    maps.write_text("\n".join(lines) + "\n")
    runtimes = mapped_sycl_runtimes(str(maps))
    assert runtimes == ["/opt/torch/lib/libsycl.so.8", "/venv/lib/libsycl.so.9"]
    with pytest.raises(xetile.LaunchError, match=r"different SYCL runtimes \(/opt/torch/lib/libsycl.so.8, "
                                                 r"/venv/lib/libsycl.so.9\)"):
        check_one_sycl_runtime(runtimes)
    check_one_sycl_runtime(runtimes[:1])
    assert len(mapped_sycl_runtimes()) == 1  # this process: dpctl's alone (a CPU torch loads none)
