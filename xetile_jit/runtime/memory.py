"""Argument marshalling for SYCL launches (docs/DESIGN.md §1 "Array arguments", §4 "Launch").

Kernel ABI of an array argument (`ArrayArg`): a global pointer to element [0, ..., 0] followed by its shape and
then its strides, one i64 per dim each, strides in elements. For a 2-D array these are `rows`, `cols`, `row_stride`
and `col_stride`: element [i, j] is at `pointer[i * row_stride + j * col_stride]`: a row-major array has
col_stride 1, a column-major view such as `bt.T` row_stride 1, and a pitched view such as `big[:, 3:40]` keeps its
parent's row pitch.

- numpy arrays (and DLPack producers on the host, torch CPU tensors) go in place, zero copy, to a CPU device with
  USM system allocations (the OpenCL CPU device: `takes_host_memory`): the pointer is the array's element
  [0, ..., 0] (a `HostAddress`, which only dpctl's C submit passes: native_submit.py), when the array is not empty
  and has no negative stride, and, for a kernel whose block builtins need it (`xe-emulated`'s, not the `cpu`
  target's), that element is BLOCK_BASE_ALIGN-aligned, the alignment its kernel was specialized for
  (args.block_io_rule; torch's CPU allocator gives it, numpy's large arrays mostly sit 16 bytes past it). The kernel
  then reads and writes the host's own memory, as the launch waits for it. Other host arrays, and all of them on
  other devices, are copied into new USM device memory: the minimal buffer covering the elements, from the lowest
  byte to the highest, so the element strides stay as they are (a negative one too: the pointer is element
  [0, ..., 0] inside the buffer). Arguments whose host memory overlaps (one array passed twice, views of one base
  array) share one buffer covering them all, each pointer at its own place in it, so the kernel sees one memory as
  the host does. After the kernel, `finish()` copies back only the arrays the kernel writes, and writes only the
  array's own elements, in place: gaps between pitched rows are left alone. An array whose last two dims have no
  memory order a kernel reads (a negative stride there, a step along the dim of unit stride as in `x[::2]`, a
  broadcast's stride of 0, a stride of no whole element: args.copied_contiguous) goes as a C-contiguous copy of its
  own; one that shares an element with another argument, either of the two written, is a LaunchError
  (`copy_apart`).
- USM arrays (`__sycl_usm_array_interface__`: dpctl/dpnp arrays, and DLPack producers on a SYCL device,
  imported with `dpnp.tensor.from_dlpack`) are passed in place, zero copy: the pointer to element [0, ..., 0]
  (the interface's address plus its offset; dpctl's `as_usm_memory` starts at the lowest element instead, another
  one when a stride is negative), shape and strides. Their memory must belong to the launch queue's SYCL context.
- Scalars take the numpy type of their spec dtype and travel as the same-sized ctypes integer holding the
  same bits, because `dpctl.SyclQueue.submit` accepts only ctypes scalars (and no ctypes type exists for
  f16/bf16); pointers travel as `dpctl.memory` objects, the only pointer type `submit` accepts, or as a HostAddress
  (the C submit's only).
"""
from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

import dpctl
import dpctl.memory
import numpy as np

from ..errors import LaunchError
from .args import (ArraySpec, as_array, canonical_strides, copied_contiguous, runtime_value, usm_interface,
                   usm_ndarray_of, usm_strides)
from ..target.block_io import BLOCK_BASE_ALIGN
from . import native_submit, shared_memory
from .native_submit import HostAddress
from .sycl import scalar_arg

_SIZE_ARGS: dict = {}  # (shape, strides) -> the four i64 kernel arguments (ctypes values are copied at submit)
_HOST_SIZE_ARGS: dict = {}  # (shape, byte strides, itemsize) of a host array in place -> its size_args
MAX_SIZE_ARGS = 4096
SHARES_WORK = 10_000  # steps of numpy's exact overlap solver a launch allows (memory.shares_elements)


@dataclass(frozen=True)
class ArrayArg:
    pointer: object  # a dpctl.memory USM object or a HostAddress whose first byte is element [0, ..., 0]
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements

    def kernel_args(self) -> list:
        return [self.pointer, *size_args(self.shape, self.strides)]


def size_args(shape: tuple, strides: tuple) -> list:
    """The shape and strides (`canonical_strides`: a dim of one element as C order lays it out) as ctypes i64, made
    once per shape and strides (the launch hot path: four new ctypes objects cost 0.6 us, the lookup 0.1 us)."""
    key = (shape, strides)
    args = _SIZE_ARGS.get(key)
    if args is None:
        if len(_SIZE_ARGS) >= MAX_SIZE_ARGS:
            _SIZE_ARGS.clear()
        args = _SIZE_ARGS[key] = [ctypes.c_int64(v) for v in (*shape, *canonical_strides(shape, strides, 1))]
    return args


def usm_ndarray_memory(array):
    """The pointer argument of a dpnp.tensor.usm_ndarray whose queue is the launch queue (the launch plan's key
    says so): its allocation's memory object when the view starts there (`as_usm_memory` costs ~10 us a call),
    memory at element [0, ..., 0] by address when a stride is negative (module docstring)."""
    if array._element_offset == 0:
        return array.usm_data
    if min(array.strides) < 0 and array.size:
        return address_memory(array._pointer, array.shape, array.strides, array.itemsize, array.sycl_queue)
    return dpctl.memory.as_usm_memory(array)


class Address:
    """USM memory by its address alone, as `__sycl_usm_array_interface__` bytes: what `interface_memory` makes a
    memory object of."""

    def __init__(self, address: int, nbytes: int, syclobj):
        self.__sycl_usm_array_interface__ = dict(data=(address, False), shape=(nbytes,), strides=None, typestr="|u1",
                                                 version=1, syclobj=syclobj)


def interface_memory(usm: dict):
    """The pointer argument of a USM array with the interface `usm` (not empty): a memory object at element
    [0, ..., 0] that refers to the memory by its address alone, so that keeping it (runtime/usm_entries.py) keeps
    neither the array nor its memory alive (an asynchronous launch keeps the array itself: ordering.py).
    `as_usm_memory` of the array would hold the array (and costs ~25 us)."""
    item = np.dtype(usm["typestr"]).itemsize
    address = usm["data"][0] + (usm.get("offset") or 0) * item
    return address_memory(address, usm["shape"], usm_strides(usm), item, usm["syclobj"])


def interface_pointer(array):
    """The pointer argument of a non-empty USM array known by its interface (module docstring); an empty one's
    as dpctl makes it (no element is read)."""
    usm = usm_interface(array)
    return interface_memory(usm) if all(usm["shape"]) else dpctl.memory.as_usm_memory(array)


def address_memory(address: int, shape, strides, item: int, syclobj):
    """A memory object at `address`, element [0, ..., 0] of a non-empty array of `shape` and `strides` (in
    elements), reaching its furthest element, that refers to the memory by its address alone."""
    last = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)  # the furthest element
    return dpctl.memory.as_usm_memory(Address(address, (last + 1) * item, syclobj))


@dataclass(frozen=True)
class HostView:
    """A numpy array staged in a buffer: the byte offset of its element [0, ..., 0] there and its byte strides."""
    array: np.ndarray
    offset: int
    strides: tuple[int, ...]

    def of(self, buffer: np.ndarray) -> np.ndarray:
        """The array's elements in `buffer`, bytes laid out as the staging buffer."""
        return np.ndarray(self.array.shape, self.array.dtype, buffer, self.offset, self.strides)


@dataclass(frozen=True)
class HostCopy:
    """Host bytes staged in device memory: `covering` (1-D bytes), the host memory of its arrays from their lowest
    byte to their highest (`own`) or a C-contiguous copy of one array, and the arrays `written` back."""
    covering: np.ndarray
    memory: dpctl.memory.MemoryUSMDevice
    own: bool
    written: tuple[HostView, ...]

    def copy_back(self) -> None:
        if self.own and len(self.written) == 1 and self.written[0].array.nbytes == self.covering.nbytes:
            self.memory.copy_to_host(self.covering)  # no gaps: the covering is the array's memory
            return
        staged = np.empty_like(self.covering)
        self.memory.copy_to_host(staged)
        for view in self.written:
            view.array[...] = view.of(staged)


def prepare_arguments(queue: dpctl.SyclQueue, values: dict, specs: dict, written: set, any_base: bool = False):
    """The kernel arguments of a launch on `queue`, and `finish()`, to call once the kernel has completed;
    `any_base`: the kernel's block builtins read blocks at any base address (`in_place`)."""
    arrays = {name: as_array(name, values[name]) for name, spec in specs.items() if isinstance(spec, ArraySpec)}
    host = {name: array for name, array in arrays.items() if isinstance(array, np.ndarray)}
    shared = {name for name, array in host.items() if passed_in_place(array, queue)} if shared_memory.any_shared() \
        else set()
    host_args, copies = host_arguments(queue, {name: array for name, array in host.items() if name not in shared},
                                       written, any_base)
    kernel_args = []
    for name, spec in specs.items():
        if not isinstance(spec, ArraySpec):
            kernel_args.append(scalar_arg(runtime_value(spec, values[name])))
        elif name in host_args:
            kernel_args += host_args[name]
        elif name in shared:
            kernel_args += shared_arg(queue, host[name]).kernel_args()
        else:
            kernel_args += usm_arg(queue, name, arrays[name]).kernel_args()

    def finish() -> None:
        for copy in copies:
            if copy is not None:
                copy.copy_back()

    return kernel_args, finish


def host_arguments(queue: dpctl.SyclQueue, host: dict, written: set, any_base: bool) -> tuple[dict, list]:
    """The kernel arguments of the host arrays `host` by name, in place or staged (module docstring), and the
    HostCopies of those staged, kept until the kernel has run (the pointers into their buffers do not hold them)."""
    in_host_memory = takes_host_memory(queue)
    placed = all_in_place(host, any_base) if in_host_memory else None
    if placed is not None:
        return placed, []
    host_args, copies = {}, []
    for group in overlapping(host, written):  # a group in place whole or staged whole: the kernel sees one memory
        arrays = {name: host[name] for name in group}
        placed = all_in_place(arrays, any_base) if in_host_memory else None
        if placed is None:
            args, copy = stage_group(queue, arrays, written)
            placed = {name: arg.kernel_args() for name, arg in args.items()}
            copies.append(copy)
        host_args.update(placed)
    return host_args, copies


def takes_host_memory(queue: dpctl.SyclQueue) -> bool:
    """Whether a launch on `queue` passes host arrays in place (module docstring)."""
    return device_takes_host_memory(queue.sycl_device)


@functools.cache
def device_takes_host_memory(device: dpctl.SyclDevice) -> bool:
    """A CPU device with USM system allocations, which reads any host address, and dpctl's C submit, which passes
    one (a GPU's reads of host memory would cross its bus: its arrays stay staged)."""
    return device.is_cpu and device.has_aspect_usm_system_allocations and native_submit.c_interface() is not None


def in_place(array: np.ndarray, address: int, any_base: bool) -> bool:
    """Whether a host array whose element [0, ..., 0] is at `address` can go in place to a device that takes host
    memory (module docstring): that element BLOCK_BASE_ALIGN-aligned, as a host array's kernel is specialized for
    (args.block_io_rule), unless the kernel's block builtins read any base address (`any_base`: BlockIO.any_layout,
    the `cpu` target's)."""
    return bool(array.size) and array.flags.aligned and min(array.strides) >= 0 and not copied_contiguous(array) \
        and (any_base or address % BLOCK_BASE_ALIGN == 0)


def all_in_place(arrays: dict, any_base: bool) -> dict | None:
    """The kernel arguments of host arrays that all go in place, by name, or None when one does not. Arrays in place
    need no grouping by overlap (`overlapping`): the kernel sees the host's one memory as it is. The launch hot path
    of numpy arrays and torch CPU tensors: each array's address read once (numpy's `ctypes.data` costs 1 us)."""
    args = {}
    for name, array in arrays.items():
        address = array.ctypes.data
        if not in_place(array, address, any_base):
            return None
        args[name] = host_arg(array, address)
    return args


def host_arg(array: np.ndarray, address: int) -> list:
    """The kernel arguments of a host array in place whose element [0, ..., 0] is at `address`."""
    sizes = _HOST_SIZE_ARGS.get((array.shape, array.strides, array.itemsize))
    if sizes is None:
        sizes = host_size_args(array)
    return [HostAddress(address), *sizes]


def host_size_args(array: np.ndarray) -> list:
    """size_args of a host array, kept by its shape, byte strides and itemsize (the strides in elements and their
    ctypes values cost about 1 us)."""
    if len(_HOST_SIZE_ARGS) >= MAX_SIZE_ARGS:
        _HOST_SIZE_ARGS.clear()
    sizes = _HOST_SIZE_ARGS[array.shape, array.strides, array.itemsize] = \
        size_args(array.shape, element_strides(array))
    return sizes


def passed_in_place(array: np.ndarray, queue: dpctl.SyclQueue) -> bool:
    """Whether a host array lies in USM shared memory of the queue's context (runtime/shared_memory.py), so the
    kernel takes it by its address; not an empty array, nor one that goes as a C-contiguous copy."""
    return bool(array.size) and not copied_contiguous(array) and shared_memory.in_shared_memory(
        *byte_span(array), queue.sycl_context)


def shared_arg(queue: dpctl.SyclQueue, array: np.ndarray) -> ArrayArg:
    strides = element_strides(array)
    return ArrayArg(address_memory(array.ctypes.data, array.shape, strides, array.itemsize, queue), array.shape,
                    strides)


def byte_span(array: np.ndarray) -> tuple[int, int]:
    """The lowest byte of a non-empty array's elements and one past its highest."""
    start = array.ctypes.data
    low = start + sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s < 0)
    return low, start + sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s > 0) + array.itemsize


def overlapping(arrays: dict, written) -> list[list[str]]:
    """The names of `arrays` (numpy) in groups whose host memory overlaps (an empty array is a group of its own),
    each array that goes as a C-contiguous copy a group of its own (`copy_apart`)."""
    spans = sorted((byte_span(a), name) for name, a in arrays.items() if a.size)
    groups, high = [[name] for name, a in arrays.items() if not a.size], None
    for (low, end), name in spans:
        if high is not None and low < high:
            groups[-1].append(name)
            high = max(high, end)
        else:
            groups.append([name])
            high = end
    apart = []
    for group in groups:
        copied = [name for name in group if copied_contiguous(arrays[name])] if len(group) > 1 else []
        for name in copied:
            copy_apart(name, group, arrays, written)
        apart += [[name] for name in copied] + [[name for name in group if name not in copied]]
    return [group for group in apart if group]


def copy_apart(name: str, group: list[str], arrays: dict, written) -> None:
    """A LaunchError where array `name`'s copy of its own would part the kernel's writes from the host's one
    memory: an element it shares with another array of its group, either of the two written. Views that
    interleave (`x[::2]` and `x[1::2]`) share no element; arrays the kernel only reads may share them."""
    for other in group:
        if other != name and (name in written or other in written) and shares_elements(arrays[name], arrays[other]):
            raise LaunchError(f"arguments '{name}' and '{other}' share host memory, the kernel writes "
                              f"'{name if name in written else other}', and '{name}' has no memory order a kernel "
                              "reads along its last two dims (a step or a negative stride there), so it goes to the "
                              "device as a copy of its own; pass np.ascontiguousarray(...) of it")


def shares_elements(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two numpy arrays share a byte, solved exactly within SHARES_WORK steps (beyond: taken as shared)."""
    try:
        return bool(np.shares_memory(a, b, max_work=SHARES_WORK))
    except np.exceptions.TooHardError:
        return True


def stage(queue: dpctl.SyclQueue, name: str, array: np.ndarray) -> tuple[ArrayArg, HostCopy | None]:
    """Copies a numpy array to new device memory (see the module docstring); the copy writes it back."""
    args, copy = stage_group(queue, {name: array}, {name})
    return args[name], copy


def stage_group(queue: dpctl.SyclQueue, arrays: dict, written) -> tuple[dict, HostCopy | None]:
    """Copies numpy arrays whose host memory overlaps (`overlapping`) to one new device buffer; their ArrayArgs and
    the HostCopy that writes back those in `written` (None for an empty array)."""
    if len(arrays) == 1 and not next(iter(arrays.values())).size:  # a USM allocation must not be empty
        (name, array), = arrays.items()
        memory = dpctl.memory.MemoryUSMDevice(array.itemsize, queue=queue)
        return {name: ArrayArg(memory, array.shape, element_strides(array))}, None
    if len(arrays) == 1 and copied_contiguous(next(iter(arrays.values()))):
        (name, array), = arrays.items()
        copied = np.ascontiguousarray(array)
        covering, own, views = copied.reshape(-1).view(np.uint8), False, {name: HostView(array, 0, copied.strides)}
    else:
        low = min(byte_span(a)[0] for a in arrays.values())
        high = max(byte_span(a)[1] for a in arrays.values())
        covering = np.ctypeslib.as_array((ctypes.c_ubyte * (high - low)).from_address(low))
        own, views = True, {name: HostView(a, a.ctypes.data - low, a.strides) for name, a in arrays.items()}
    memory = dpctl.memory.MemoryUSMDevice(covering.nbytes, queue=queue)
    memory.copy_from_host(covering)
    strides = {name: element_strides(view.of(covering)) for name, view in views.items()}
    args = {name: ArrayArg(pointer_at(memory, view, strides[name], queue), view.array.shape, strides[name])
            for name, view in views.items()}
    return args, HostCopy(covering, memory, own, tuple(v for name, v in views.items() if name in written))


def pointer_at(memory, view: HostView, strides: tuple[int, ...], queue):
    """The pointer argument of a staged array: the buffer itself where the array's element [0, ..., 0] starts it."""
    if view.offset == 0:
        return memory
    return address_memory(memory._pointer + view.offset, view.array.shape, strides, view.array.itemsize, queue)


def usm_arg(queue: dpctl.SyclQueue, name: str, array) -> ArrayArg:
    dpnp_array = usm_ndarray_of(array)  # read by its attributes (args.py)
    memory = interface_pointer(array) if dpnp_array is None else usm_ndarray_memory(dpnp_array)
    if memory.sycl_context != queue.sycl_context:
        raise LaunchError(f"argument '{name}' is USM memory of another SYCL context ({memory.sycl_device.name}) "
                          f"than the launch queue's ({queue.sycl_device.name}); launch on the array's queue")
    if dpnp_array is not None:
        return ArrayArg(memory, dpnp_array.shape, dpnp_array.strides)
    usm = usm_interface(array)
    return ArrayArg(memory, tuple(usm["shape"]), usm_strides(usm))


def element_strides(array: np.ndarray) -> tuple[int, ...]:
    """A numpy array's strides in elements (one that goes as it is: whole elements, args.copied_contiguous)."""
    return tuple(s // array.itemsize for s in array.strides)
