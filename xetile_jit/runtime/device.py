"""Which device runs a launch (docs/DESIGN.md §4 Runtime, first rule) and which target it compiles for
(docs/DESIGN.md §3 Targets).

`select_device(device, arrays)` follows docs/DESIGN.md §4's order: the explicit `device=` launch option (a dpctl filter
string, a `dpctl.SyclDevice`, a `dpctl.SyclQueue`, or "numpy") -> the queue of the USM array arguments (their
`__sycl_usm_array_interface__["syclobj"]`, and of XPU torch tensors the queue of torch's current stream; arrays on
two different queues are a LaunchError; other DLPack producers are not consulted) -> the `XETILE_DEVICE` environment
variable (a filter string or "numpy") -> `opencl:cpu` (else the numpy interpreter) when a torch CPU tensor is among
the arguments -> a Level Zero GPU
-> `opencl:cpu` -> the numpy interpreter, with a warning the first time. The automatic choice is made once per
process. A filter string dpctl cannot use is a LaunchError carrying dpctl's message.

Queues come from dpctl's per-device queue cache (`dpctl.get_device_cached_queue`), looked up once per filter
string, so `device="opencl:cpu"` and `dpnp.ones(..., device="opencl:cpu")` share one queue.

The target follows from the device by name, as drivers report it (`SyclDevice.name`): any device that is not an
Intel GPU is `cpu` (the fast CPU path; `xe-emulated`, the bit-exact Xe emulation, runs there too); an Intel GPU
whose name says Flex is `xe-hpg` (Data Center GPU Flex is DG2 silicon), one that says Max, PVC or Data Center is
`xe-hpc` (Data Center GPU Max, Ponte Vecchio), Arc B-series (Arc B580, Arc Pro B60) and Lunar Lake (Arc 130V/140V)
are `xe2`, and every other Intel GPU (Arc A-series, integrated Xe) is `xe-hpg`. The `target=` launch option,
else the `XETILE_TARGET` environment variable, picks another target the device runs (`choose_target`): on a CPU
device one of CPU_TARGETS, on an Intel GPU one of the GPU targets; anything else is a LaunchError naming the ones
it may be.

Launch limits, checked by `check_launch` before any argument is copied: a workgroup (num_subgroups x
lanes work-items, along dimension 0) must fit the device's `max_work_group_size` and `max_work_item_sizes3d`,
and the whole launch must be at most 2**31 - 1 work-items: dpctl's runtime is DPC++ built with
`-fsycl-id-queries-fit-in-int`, which refuses an ND-range whose global linear size (the product of its
dimensions) does not fit in an int ("Provided range and/or offset does not fit in int").
"""
from __future__ import annotations

import functools
import os
import re
import warnings
from dataclasses import dataclass

import dpctl
import dpctl.memory
import numpy as np

from ..target.targets import CPU_TARGETS, TARGETS
from ..errors import LaunchError
from . import shared_memory
from .args import is_usm, usm_interface, usm_ndarray_of
from .torch_tensors import is_tensor, stream_queue

NUMPY = "numpy"
CPU_FILTER = "opencl:cpu"
AUTOMATIC_FILTERS = ("level_zero:gpu", CPU_FILTER)
MAX_WORK_ITEMS = 2**31 - 1  # INT_MAX, DPC++'s id-queries-fit-in-int limit (module docstring)
GPU_TARGETS = (  # first match wins; names like "Intel(R) Data Center GPU Max 1550", "Intel(R) Arc(TM) B580 Graphics"
    (re.compile(r"\bFlex\b"), "xe-hpg"),
    (re.compile(r"\bMax\b|\bPVC\b|Data Center"), "xe-hpc"),
    (re.compile(r"\bArc(\(TM\))? (Pro )?B\d|Lunar Lake|\b1[34]0V\b"), "xe2"),
)


@dataclass(frozen=True)
class Device:
    kind: str                      # "sycl" or "numpy"
    queue: dpctl.SyclQueue | None  # None for the numpy interpreter
    target: str                    # a name of target/targets.TARGETS, or "numpy"

    @property
    def is_cpu(self) -> bool:
        """A SYCL CPU device (the numpy interpreter is none)."""
        return self.queue is not None and self.queue.sycl_device.is_cpu


NUMPY_DEVICE = Device(NUMPY, None, NUMPY)


def default_device() -> str:
    """Where a launch without `device=` and with numpy arrays runs: "numpy" or a dpctl filter string."""
    device = select_device()
    return NUMPY if device.queue is None else device.queue.sycl_device.filter_string


def default_target(device=None, arrays=()) -> str:
    """The target a launch with `device=` (None: the default) and these arrays compiles for unless it names one:
    "cpu", "xe-emulated", "xe-hpc", "xe2", "xe3", "xe-hpg" or "numpy". For choosing configurations per device."""
    return select_device(device, arrays).target


def select_device(device=None, arrays=()) -> Device:
    """The device of a launch: `device=`, else the arrays' queue, else XETILE_DEVICE, else the first available."""
    if device is not None:
        return named_device(device)
    queue = arrays_queue(arrays)
    if queue is not None:
        return sycl_device(queue)
    if os.environ.get("XETILE_DEVICE"):
        return named_device(os.environ["XETILE_DEVICE"])
    if any(is_tensor(a) and a.device.type == "cpu" for a in arrays):
        return cpu_device()
    return automatic_device()


@functools.cache
def cpu_device() -> Device:
    """Where torch CPU tensors run without `device=`: opencl:cpu, else the numpy interpreter."""
    try:
        return sycl_device(cached_queue(CPU_FILTER))
    except LaunchError:
        return NUMPY_DEVICE


def named_device(device) -> Device:
    if isinstance(device, str):
        return numpy_device() if device == NUMPY else sycl_device(cached_queue(device))
    if isinstance(device, dpctl.SyclQueue):
        return sycl_device(device)
    if isinstance(device, dpctl.SyclDevice):
        return sycl_device(dpctl.get_device_cached_queue(device))
    raise LaunchError("device must be a dpctl filter string, a dpctl.SyclDevice, a dpctl.SyclQueue or 'numpy', "
                      f"got {type(device).__name__}")


@functools.cache
def cached_queue(filter_string: str) -> dpctl.SyclQueue:
    try:
        return dpctl.get_device_cached_queue(filter_string)
    except dpctl.SyclQueueCreationError as e:
        raise LaunchError(f"device {filter_string!r}: {e}") from None


def numpy_device() -> Device:
    """The numpy interpreter, which has no target; XETILE_TARGET is checked all the same (`choose_target`)."""
    choose_target(NUMPY, os.environ.get("XETILE_TARGET"), "XETILE_TARGET")
    return NUMPY_DEVICE


def sycl_device(queue: dpctl.SyclQueue) -> Device:
    return Device("sycl", queue, device_target(queue.sycl_device))


MAX_QUEUE_NAMES = 64  # queue_name's remembered queues; a full table starts over
_queue_names: dict = {}  # queue -> its device's filter string (a SyclQueue takes no weak reference)


def queue_name(queue: dpctl.SyclQueue) -> str:
    """The filter string of `queue`'s device, remembered by queue: dpctl builds it anew at each call."""
    name = _queue_names.get(queue)
    if name is None:
        if len(_queue_names) >= MAX_QUEUE_NAMES:
            _queue_names.clear()
        name = _queue_names[queue] = queue.sycl_device.filter_string
    return name


def arrays_queue(arrays) -> dpctl.SyclQueue | None:
    """The queue of the USM arrays among `arrays` (None when there are none): the first array's. Arrays on other
    queues of the same context and device are fine (USM memory belongs to the context, not the queue)."""
    queues = [array_queue(a) for a in arrays if is_usm(a) or is_tensor(a) and a.device.type == "xpu"]
    for other in queues[1:]:
        if (other.sycl_context, other.sycl_device) != (queues[0].sycl_context, queues[0].sycl_device):
            devices = f"{queues[0].sycl_device.filter_string} and {other.sycl_device.filter_string}"
            raise LaunchError(f"USM array arguments are on queues of different SYCL contexts or devices (on "
                              f"{devices}); a kernel reads memory of one context on one device: put them on "
                              "one queue or pass device=")
    return queues[0] if queues else None


def array_queue(array) -> dpctl.SyclQueue:
    if is_tensor(array):  # an XPU one: the queue of torch's current stream on its device
        return stream_queue(array.device.index)
    dpnp_array = usm_ndarray_of(array)
    if dpnp_array is not None:
        return dpnp_array.sycl_queue
    syclobj = usm_interface(array)["syclobj"]
    if isinstance(syclobj, dpctl.SyclQueue):
        return syclobj
    return dpctl.memory.as_usm_memory(array).sycl_queue  # the interface also allows a SyclContext or a capsule


@functools.cache
def automatic_device() -> Device:
    """The first of a Level Zero GPU and opencl:cpu that exists and runs XETILE_TARGET (when set), else the numpy
    interpreter (warned once) where neither exists; where devices exist and none runs XETILE_TARGET, the first's
    LaunchError saying which targets it runs."""
    refusal = None
    for filter_string in AUTOMATIC_FILTERS:
        try:
            queue = cached_queue(filter_string)
        except LaunchError:  # no such device: the next
            continue
        try:
            return sycl_device(queue)
        except LaunchError as e:
            refusal = refusal or e
    if refusal is not None:
        raise refusal
    warnings.warn("xetile_jit: no SYCL device (Level Zero GPU or OpenCL CPU) found; kernels run in the numpy "
                  "interpreter", RuntimeWarning)
    return NUMPY_DEVICE


def device_target(device: dpctl.SyclDevice) -> str:
    """The target a launch on `device` compiles for: XETILE_TARGET when set (checked), else the device's own."""
    if not (device.is_gpu and "intel" in device.vendor.lower()):
        return choose_target("cpu", os.environ.get("XETILE_TARGET"), "XETILE_TARGET")
    return choose_target(gpu_target(device.name), os.environ.get("XETILE_TARGET"), "XETILE_TARGET")


def choose_target(own: str, requested: str | None, source: str = "target=") -> str:
    """`requested` when a device whose own target is `own` runs it (the module docstring's rule), else `own`
    when nothing is requested; a LaunchError naming the targets the device runs otherwise. The numpy interpreter
    has no target: it runs whatever target is requested, but a name that is no target is a LaunchError too."""
    if not requested or requested == own:
        return own
    if own == NUMPY:
        if requested in TARGETS:
            return own
        raise LaunchError(f"{source} {requested!r}: no target has that name; targets: {', '.join(TARGETS)}")
    runnable = CPU_TARGETS if own in CPU_TARGETS else tuple(t for t in TARGETS if t not in CPU_TARGETS)
    if requested not in runnable:
        kind = "a CPU device" if own in CPU_TARGETS else "an Intel GPU"
        raise LaunchError(f"{source} {requested!r}: {kind} runs the targets {', '.join(runnable)}")
    return requested


def gpu_target(name: str) -> str:
    """The target of an Intel GPU by its name (the rule in the module docstring)."""
    return next((target for pattern, target in GPU_TARGETS if pattern.search(name)), "xe-hpg")


def check_launch(device: dpctl.SyclDevice, grid: tuple[int, int, int], workgroup_size: int) -> None:
    """LaunchError when `grid` workgroups of `workgroup_size` work-items exceed `device`'s limits (module docstring)."""
    # SYCL lists the fastest dimension last: our dimension 0 is max_work_item_sizes3d[2]
    max_size = min(device.max_work_group_size, device.max_work_item_sizes3d[2])
    if workgroup_size > max_size:
        raise LaunchError(f"a workgroup of {workgroup_size} work-items (num_subgroups x lanes) exceeds the {max_size} "
                          f"that {device.filter_string} allows (max_work_group_size {device.max_work_group_size}, "
                          f"max_work_item_sizes3d {device.max_work_item_sizes3d})")
    check_work_items(grid, workgroup_size)


def check_work_items(grid: tuple[int, int, int], workgroup_size: int) -> None:
    """The part of `check_launch` that depends on the grid alone."""
    work_items = grid[0] * grid[1] * grid[2] * workgroup_size
    if work_items > MAX_WORK_ITEMS:
        raise LaunchError(f"grid {grid} of {workgroup_size}-work-item workgroups is {work_items} work-items; a SYCL "
                          f"launch takes at most 2**31 - 1 = {MAX_WORK_ITEMS} (DPC++ assumes ids fit in an int)")


def empty_shared(shape, dtype=np.float32, device=None) -> np.ndarray:
    """A host array (uninitialized, C-contiguous) in USM shared memory of `device`'s SYCL context (default: the
    default device), which launches there read and write in place, with no copy either way
    (runtime/shared_memory.py). `dtype`: a numpy dtype or an xetile one."""
    queue = select_device(device).queue
    if queue is None:
        raise LaunchError("empty_shared: the numpy interpreter has no shared memory; name a SYCL device")
    return shared_memory.allocate(shape, getattr(dtype, "np_dtype", dtype), queue)
