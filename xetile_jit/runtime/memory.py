"""Argument marshalling for SYCL launches (docs/DESIGN.md §1 "Array arguments", §4 "Launch").

Kernel ABI of an array argument (`ArrayArg`): a global pointer to element [0, ..., 0] followed by its shape and
then its strides, one i64 per dim each, strides in elements. For a 2-D array these are `rows`, `cols`, `row_stride`
and `col_stride`: element [i, j] is at `pointer[i * row_stride + j * col_stride]`: a row-major array has
col_stride 1, a column-major view such as `bt.T` row_stride 1, and a pitched view such as `big[:, 3:40]` keeps its
parent's row pitch.

- numpy arrays (and DLPack producers on the host, imported with `np.from_dlpack`) are copied into new USM
  device memory: the minimal buffer covering the elements, from element [0, 0] to the last one, so the element
  strides stay as they are. After the kernel, `finish()` copies back only the arrays the kernel writes, and
  writes only the array's own elements, in place: gaps between pitched rows and other arguments that share
  the host buffer are left alone. Arguments that overlap in host memory get separate device copies.
- USM arrays (`__sycl_usm_array_interface__`: dpctl/dpnp arrays, and DLPack producers on a SYCL device,
  imported with `dpnp.tensor.from_dlpack`) are passed in place, zero copy: their pointer (plus the interface's
  offset), shape and strides. Their memory must belong to the launch queue's SYCL context.
- Scalars take the numpy type of their spec dtype and travel as the same-sized ctypes integer holding the
  same bits, because `dpctl.SyclQueue.submit` accepts only ctypes scalars (and no ctypes type exists for
  f16/bf16); pointers travel as `dpctl.memory` objects, the only pointer type `submit` accepts.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import dpctl
import dpctl.memory
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..errors import LaunchError
from .args import ArraySpec, as_array, runtime_value, usm_interface, usm_ndarray_of, usm_strides
from .sycl import scalar_arg

_SIZE_ARGS: dict = {}  # (shape, strides) -> the four i64 kernel arguments (ctypes values are copied at submit)
MAX_SIZE_ARGS = 4096


@dataclass(frozen=True)
class ArrayArg:
    pointer: object  # a dpctl.memory USM object whose first byte is element [0, ..., 0]
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements

    def kernel_args(self) -> list:
        return [self.pointer, *size_args(self.shape, self.strides)]


def size_args(shape: tuple, strides: tuple) -> list:
    """The shape and strides as ctypes i64, made once per shape and strides (the launch hot path: four new ctypes
    objects cost 0.6 us, the lookup 0.1 us)."""
    key = (shape, strides)
    args = _SIZE_ARGS.get(key)
    if args is None:
        if len(_SIZE_ARGS) >= MAX_SIZE_ARGS:
            _SIZE_ARGS.clear()
        args = _SIZE_ARGS[key] = [ctypes.c_int64(v) for v in (*shape, *strides)]
    return args


def usm_ndarray_memory(array):
    """The pointer argument of a dpnp.tensor.usm_ndarray whose queue is the launch queue (the launch plan's key
    says so): its allocation's memory object when the view starts there (`as_usm_memory` costs ~10 us a call)."""
    return array.usm_data if array._element_offset == 0 else dpctl.memory.as_usm_memory(array)


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
    last = sum((n - 1) * s for n, s in zip(usm["shape"], usm_strides(usm)) if s > 0)  # the furthest element
    address = usm["data"][0] + (usm.get("offset") or 0) * item
    return dpctl.memory.as_usm_memory(Address(address, (last + 1) * item, usm["syclobj"]))


@dataclass(frozen=True)
class HostCopy:
    """A numpy array staged in device memory as `covering`, the 1-D view of the buffer that covers it."""
    array: np.ndarray
    covering: np.ndarray
    memory: dpctl.memory.MemoryUSMDevice

    def copy_back(self) -> None:
        if self.covering.size == self.array.size:  # no gaps: the covering buffer is the array
            self.memory.copy_to_host(self.covering.view(np.uint8))
            return
        staged = np.empty_like(self.covering)
        self.memory.copy_to_host(staged.view(np.uint8))
        self.array[...] = as_strided(staged, self.array.shape, self.array.strides, writeable=False)


def prepare_arguments(queue: dpctl.SyclQueue, values: dict, specs: dict, written: set):
    """The kernel arguments of a launch on `queue`, and `finish()`, to call once the kernel has completed."""
    kernel_args, copies = [], []
    for name, spec in specs.items():
        if not isinstance(spec, ArraySpec):
            kernel_args.append(scalar_arg(runtime_value(spec, values[name])))
            continue
        arg, copy = array_arg(queue, name, as_array(name, values[name]))
        kernel_args += arg.kernel_args()
        if copy is not None and name in written:
            copies.append(copy)

    def finish() -> None:
        for copy in copies:
            copy.copy_back()

    return kernel_args, finish


def array_arg(queue: dpctl.SyclQueue, name: str, array) -> tuple[ArrayArg, HostCopy | None]:
    if isinstance(array, np.ndarray):
        return stage(queue, name, array)
    return usm_arg(queue, name, array), None


def usm_arg(queue: dpctl.SyclQueue, name: str, array) -> ArrayArg:
    dpnp_array = usm_ndarray_of(array)  # read by its attributes (args.py)
    memory = dpctl.memory.as_usm_memory(array) if dpnp_array is None else usm_ndarray_memory(dpnp_array)
    if memory.sycl_context != queue.sycl_context:
        raise LaunchError(f"argument '{name}' is USM memory of another SYCL context ({memory.sycl_device.name}) "
                          f"than the launch queue's ({queue.sycl_device.name}); launch on the array's queue")
    if dpnp_array is not None:
        return ArrayArg(memory, dpnp_array.shape, dpnp_array.strides)
    usm = usm_interface(array)
    return ArrayArg(memory, tuple(usm["shape"]), usm_strides(usm))


def stage(queue: dpctl.SyclQueue, name: str, array: np.ndarray) -> tuple[ArrayArg, HostCopy | None]:
    """Copies a numpy array to new device memory (see the module docstring)."""
    strides = element_strides(name, array)
    if array.size == 0:  # nothing to copy, but a USM allocation must not be empty
        return ArrayArg(dpctl.memory.MemoryUSMDevice(array.itemsize, queue=queue), array.shape, strides), None
    covering = as_strided(array, (1 + sum((n - 1) * s for n, s in zip(array.shape, strides)),), (array.itemsize,))
    memory = dpctl.memory.MemoryUSMDevice(covering.nbytes, queue=queue)
    memory.copy_from_host(covering.view(np.uint8))
    return ArrayArg(memory, array.shape, strides), HostCopy(array, covering, memory)


def element_strides(name: str, array: np.ndarray) -> tuple[int, ...]:
    if any(s % array.itemsize for s in array.strides):
        raise LaunchError(f"argument '{name}': strides {array.strides} are not multiples of the itemsize "
                          f"{array.itemsize}; pass np.ascontiguousarray(...)")
    return tuple(s // array.itemsize for s in array.strides)
