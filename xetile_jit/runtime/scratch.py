"""Scratch arrays a library op reuses from launch to launch (`xetile.ops.matmul`'s panels of B).

One buffer a thread and place (host memory, or device memory on a launch queue), grown to the largest size asked for
and viewed with each shape and dtype. A new array's pages cost their first write: copying a 1024x1024 f32 B into new
device memory took 0.84 ms on the Zen 5 of docs/performance.md, into memory written before 0.13 ms. Reusing a buffer
is safe where the launches that use it run one after another: a thread's launches on one queue run in their order
(ordering.py: each waits for the work submitted to the queue before it), and a launch of host arrays waits for its
kernel. Another thread has buffers of its own.
"""
from __future__ import annotations

import math
import threading

import dpctl
import dpctl.memory
import ml_dtypes
import numpy as np

_held = threading.local()  # .buffers: {(queue or None (host memory), use): MemoryUSMDevice or numpy bytes}


class DeviceArray:
    """A C-contiguous array in device memory, known by its `__sycl_usm_array_interface__` alone (so no dpnp, and
    any dtype a kernel takes, bfloat16 too); keeps `memory` alive."""

    def __init__(self, memory: dpctl.memory.MemoryUSMDevice, shape: tuple[int, ...], dtype: np.dtype):
        self.memory = memory
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.__sycl_usm_array_interface__ = dict(
            data=(memory.__sycl_usm_array_interface__["data"][0], False), shape=self.shape, strides=None,
            typestr=interface_typestr(self.dtype), version=1, syclobj=memory.sycl_queue)


def interface_typestr(dtype: np.dtype) -> str:
    """The interface's typestr of `dtype`: the name for bfloat16, whose numpy str ('<V2') names no dtype."""
    return dtype.name if dtype == np.dtype(ml_dtypes.bfloat16) else dtype.str


def scratch(shape: tuple[int, ...], dtype: np.dtype, queue: dpctl.SyclQueue | None, use: str = ""):
    """An uninitialised C-contiguous array of `shape` and `dtype` over this thread's buffer for `use` (a name: the
    arrays of one launch take a buffer each): in device memory on `queue` (a DeviceArray), or in host memory where
    `queue` is None (numpy)."""
    dtype, count = np.dtype(dtype), math.prod(shape)
    nbytes = max(count * dtype.itemsize, 1)
    buffers = _held.__dict__.setdefault("buffers", {})
    buffer = buffers.get((queue, use))
    if queue is None:
        if buffer is None or buffer.nbytes < nbytes:
            buffer = buffers[None, use] = np.empty(nbytes, np.uint8)
        return buffer[:count * dtype.itemsize].view(dtype).reshape(shape)
    if buffer is None or buffer.nbytes < nbytes:
        buffer = buffers[queue, use] = dpctl.memory.MemoryUSMDevice(nbytes, queue=queue)
    return DeviceArray(buffer, shape, dtype)
