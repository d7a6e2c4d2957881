"""torch tensors as kernel arguments (docs/guide.md "PyTorch").

torch is optional (the `torch` extra) and slow to import, so nothing here imports it: a value is a torch tensor when
the program has imported torch and the value is a `torch.Tensor`.

- A CPU tensor is launched as a numpy array sharing its memory (`host_view`): the launch treats it like any numpy array,
  on the numpy interpreter or on a CPU SYCL device, strided and transposed views included: in place where the device
  takes host memory (on `xe-emulated` when the view starts 64-byte aligned, as torch's CPU allocator aligns its
  tensors), else staged to USM memory and written back in place (runtime/memory.py). bfloat16, which numpy lacks, is viewed as ml_dtypes' bfloat16; a
  tensor that requires grad is launched as its `detach()`ed view (the same memory; a kernel is no autograd op). A launch
  finds the view of a tensor launched before by the tensor's address and layout, read at each launch (jit/launch_plan.py
  tensor_key), or checked for all of a launch's tensors at once by torch's TensorGuards (`layout_check`,
  jit/launch_plan.py HeldTensors); the view kept is made over the memory by address alone (`unowned_view`), so it keeps
  no tensor alive.
- An XPU tensor is launched zero copy as a USM array (`StreamArray`: `__sycl_usm_array_interface__` with the
  tensor's address, shape and strides) on the queue of torch's current stream on its device: the `sycl::queue*` of
  `torch._C._xpu_getCurrentRawStream(index)` (else `torch.xpu.current_stream(index).sycl_queue`), handed to dpctl as
  a PyCapsule named "SyclQueueRef". torch's queues are in order, so the launch, submitted there without a host wait
  (runtime/ordering.py), runs after the work torch queued before it and before what torch queues after it. DLPack
  is not used: torch exports XPU tensors with the oneAPI device type, but an import gets no stream to order with.
  The `sycl::queue*` is an object of torch's SYCL runtime; dpctl can use it only when both are the same library, so
  a process that has two SYCL runtimes loaded (two libsycl files mapped, say torch's libsycl.so.8 and dpctl's
  libsycl.so.9) is refused with a LaunchError naming them (`check_one_sycl_runtime`) rather than crash.
- All torch tensors of a launch must be on one torch device, and the launch must run there: a `cpu` tensor on the
  numpy interpreter or a CPU SYCL device, an `xpu:i` tensor on the device of its stream's queue
  (`check_tensor_devices`); anything else is a LaunchError naming both devices.
"""
from __future__ import annotations

import ctypes
import functools
import os
import sys

import dpctl
import ml_dtypes
import numpy as np

from ..errors import LaunchError
from .scratch import interface_typestr

QUEUE_CAPSULE = b"SyclQueueRef"  # the name dpctl.SyclQueue(capsule) takes a sycl::queue* under
_queues: dict[int, dpctl.SyclQueue] = {}  # sycl::queue* of a torch stream -> the dpctl queue over it


def is_tensor(value) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def is_tensor_type(kind: type) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and issubclass(kind, torch.Tensor)


@functools.cache
def numpy_dtype(torch_dtype) -> np.dtype:
    """The numpy dtype of torch's `torch_dtype` (ml_dtypes' for bfloat16); a LaunchError for dtypes numpy lacks."""
    torch = sys.modules["torch"]
    if torch_dtype is torch.bfloat16:
        return np.dtype(ml_dtypes.bfloat16)
    try:
        return torch.empty((), dtype=torch_dtype).numpy().dtype
    except TypeError:
        raise LaunchError(f"torch dtype {torch_dtype} has no numpy equivalent") from None


def as_numpy_dtype(dtype) -> np.dtype:
    """A numpy dtype of a torch dtype or of anything np.dtype takes."""
    torch = sys.modules.get("torch")
    return numpy_dtype(dtype) if torch is not None and isinstance(dtype, torch.dtype) else np.dtype(dtype)


@functools.cache
def torch_dtype(dtype: np.dtype):
    """The torch dtype of numpy's `dtype` (ml_dtypes' bfloat16 included)."""
    torch = sys.modules["torch"]
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return torch.bfloat16
    return torch.from_numpy(np.empty(0, dtype)).dtype


def host_view(tensor) -> np.ndarray:
    """A CPU tensor as a numpy array sharing its memory (module docstring). `Tensor.numpy()` first, the launch hot
    path (1.8 us; checking for grad and bfloat16 before it cost 0.9 us more); it refuses those two."""
    try:
        return tensor.numpy()
    except (TypeError, RuntimeError):
        return special_host_view(tensor)


def unowned_view(view: np.ndarray, address: int) -> np.ndarray:
    """A non-empty CPU tensor's host view (`host_view`), whose first element is at `address` (`data_ptr()`), made
    again over its memory by address alone, holding no reference to the tensor (`Tensor.numpy()`'s view holds the
    tensor): what a cache of views may keep without keeping tensors alive. torch strides are never negative, so the
    memory runs from the first element to the last."""
    span = sum((n - 1) * s for n, s in zip(view.shape, view.strides)) + view.itemsize
    return np.ndarray(view.shape, view.dtype, (ctypes.c_char * span).from_address(address), 0, view.strides)


def layout_check(tensors: tuple):
    """A function of as many tensors as `tensors`, True when they are distinct objects (TensorGuards' own rule) and
    each has the Python type, dispatch keys (its device's and the negative and conjugate bits among them), dtype,
    device index, requires_grad, shape and strides the tensor at its position in `tensors` has now: one C call for
    all of them, torch's TensorGuards (torch._C._dynamo.guards, what TorchDynamo's tensor guards were made of:
    ~0.13 us a tensor against ~0.76 for reading these from Python, docs/performance.md "The torch path"). It holds
    no tensor. None where this torch's TensorGuards is missing or fails `tensor_guards_work`."""
    if not (bits_visible() and tensor_guards_work()):
        return None
    return tensor_guards()(*tensors, dynamic_dims_sizes=None, dynamic_dims_strides=None).check


def bits_visible() -> bool:
    """Whether tensors' dispatch keys show their negative and conjugate bits here. Inside an operator's
    implementation (an `xetile.torch` op's, say) torch excludes those keys, its inputs' bits resolved, and a
    TensorGuards check would take a neg view for the tensor at its address: there tensors are read one by one."""
    c = sys.modules["torch"]._C
    return not (c._dispatch_tls_is_dispatch_key_excluded(c.DispatchKey.Negative)
                or c._dispatch_tls_is_dispatch_key_excluded(c.DispatchKey.Conjugate))


def tensor_data_ptr():
    """`torch.Tensor.data_ptr`, to map over tensors."""
    return sys.modules["torch"].Tensor.data_ptr


def tensor_guards():
    return sys.modules["torch"]._C._dynamo.guards.TensorGuards


@functools.cache
def tensor_guards_work() -> bool:
    """Whether TensorGuards, a torch internal, is there and sees what `layout_check` promises: each change of a
    tensor's layout at the same address that an in-place op, `.data = ...` or a neg view makes. Asked where
    `bits_visible` (layout_check), so that the answer cached holds wherever a check is made or used."""
    torch = sys.modules["torch"]
    try:
        with torch.inference_mode(False):  # ordinary tensors (requires_grad) also when first asked in inference mode
            x = torch.ones(2, 3)
            check = tensor_guards()(x, dynamic_dims_sizes=None, dynamic_dims_strides=None).check
            changed = (x.t(), torch._neg_view(x), x.view(torch.int32), x.view(6), x.detach().requires_grad_(),
                       x.as_subclass(type("Subclass", (torch.Tensor,), {})))
            return check(x) and not any(map(check, changed))
    except Exception:  # noqa: BLE001 - any failure of a torch internal means: read the tensors instead
        return False


def special_host_view(tensor) -> np.ndarray:
    """`host_view` of a tensor that requires grad or holds bfloat16 (or a dtype numpy lacks: LaunchError)."""
    if tensor.requires_grad:
        tensor = tensor.detach()
    dtype = numpy_dtype(tensor.dtype)  # a LaunchError where numpy has none
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return tensor.view(sys.modules["torch"].int16).numpy().view(dtype)
    return tensor.numpy()


class StreamArray:
    """An XPU tensor as a USM array on the queue of torch's current stream (module docstring); holds the tensor, so
    a launch that keeps its arguments until its kernel completes keeps the tensor's memory."""

    def __init__(self, tensor, queue: dpctl.SyclQueue):
        self.tensor = tensor
        self.__sycl_usm_array_interface__ = {
            "data": (tensor.data_ptr(), False), "shape": tuple(tensor.shape), "strides": tuple(tensor.stride()),
            "typestr": typestr(tensor.dtype), "version": 1, "syclobj": queue}


@functools.cache
def typestr(torch_dtype) -> str:
    """The interface's typestr of a torch dtype (scratch.interface_typestr)."""
    return interface_typestr(numpy_dtype(torch_dtype))


def as_array(tensor):
    """A tensor as the array a launch takes: a numpy view (CPU) or a StreamArray (XPU); LaunchError for others."""
    if tensor.is_cpu:  # the launch hot path: 0.1 us against 0.9 for `device.type`
        return host_view(tensor)
    kind = tensor.device.type
    if kind == "xpu":
        return StreamArray(tensor, stream_queue(tensor.device.index))
    raise LaunchError(f"a torch tensor on {tensor.device} is on no SYCL device; xetile_jit launches cpu and xpu "
                      "tensors")


def raw_stream(index: int) -> int:
    """The sycl::queue* of torch's current stream on XPU device `index`."""
    torch = sys.modules["torch"]
    current = getattr(torch._C, "_xpu_getCurrentRawStream", None)
    if current is not None:
        return current(index)
    return torch.xpu.current_stream(index).sycl_queue


def stream_queue(index: int | None) -> dpctl.SyclQueue:
    """The dpctl queue over torch's current stream on XPU device `index` (None: torch's current device), made once
    per stream: torch keeps its streams' queues for the life of the process."""
    torch = sys.modules["torch"]
    address = raw_stream(torch.xpu.current_device() if index is None else index)
    queue = _queues.get(address)
    if queue is None:
        check_one_sycl_runtime(mapped_sycl_runtimes())
        queue = _queues[address] = dpctl.SyclQueue(queue_capsule(address))
    return queue


def queue_capsule(address: int):
    """A PyCapsule named "SyclQueueRef" holding the sycl::queue* `address` (dpctl copies the queue out of it)."""
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(address, QUEUE_CAPSULE, None)


def mapped_sycl_runtimes(maps: str = "/proc/self/maps") -> list[str]:
    """The SYCL runtime libraries (libsycl.so*) mapped into this process, by real path; [] where unknown."""
    if not os.path.exists(maps):
        return []
    with open(maps) as lines:
        paths = {line.split()[-1] for line in lines if "/libsycl.so" in line}
    return sorted({os.path.realpath(path) for path in paths})


def check_one_sycl_runtime(runtimes: list[str]) -> None:
    """LaunchError when more than one SYCL runtime is loaded (module docstring)."""
    if len(runtimes) > 1:
        raise LaunchError(f"torch and dpctl use different SYCL runtimes ({', '.join(runtimes)}); a torch stream's "
                          "sycl::queue* is an object of torch's and cannot be used through dpctl's. Install the dpctl "
                          "built against the SYCL runtime of your torch (the same libsycl.so version)")


def tensor_device(value) -> str | None:
    """The torch device of a tensor as torch names it ("cpu", "xpu:0"), None for other values."""
    if not is_tensor(value):
        return None
    device = value.device
    return device.type if device.index is None else f"{device.type}:{device.index}"


def launch_device_name(queue) -> str:
    """The launch device as a LaunchError names it."""
    return "the numpy interpreter" if queue is None else f"{queue.sycl_device.filter_string} " \
                                                         f"({queue.sycl_device.name})"


def check_tensor_devices(values: dict, queue) -> None:
    """LaunchError unless the torch tensors among `values` (by argument name) are on one torch device and the
    launch (on `queue`; None: the numpy interpreter) runs there (module docstring)."""
    devices = {name: tensor_device(value) for name, value in values.items()}
    devices = {name: device for name, device in devices.items() if device is not None}
    if not devices:
        return
    (first, device), *others = devices.items()
    for name, other in others:
        if other != device:
            raise LaunchError(f"torch tensor arguments '{first}' and '{name}' are on different devices ({device} and "
                              f"{other}); a launch runs on one device: move them with .to()")
    if not runs_on(values[first], queue):
        raise LaunchError(f"argument '{first}' is a torch tensor on {device}, but the launch runs on "
                          f"{launch_device_name(queue)}; move it with .to() or pass device=")


def runs_on(tensor, queue) -> bool:
    """Whether a launch on `queue` (None: the numpy interpreter) may take `tensor` (module docstring)."""
    kind = tensor.device.type
    if kind == "cpu":
        return queue is None or queue.sycl_device.is_cpu
    if kind == "xpu":
        return queue is not None and queue.sycl_device == stream_queue(tensor.device.index).sycl_device
    return False


def new_tensor(like, shape, dtype: np.dtype):
    """An uninitialised tensor on `like`'s device (a tensor) of numpy `dtype`."""
    return sys.modules["torch"].empty(shape, dtype=torch_dtype(dtype), device=like.device)

