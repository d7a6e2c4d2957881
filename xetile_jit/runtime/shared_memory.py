"""Host arrays in USM shared memory, which launches read and write in place (docs/guide.md "PyTorch tensors").

A numpy array (or a torch CPU tensor over one) is ordinary host memory to every library, so a launch copies it to device
memory and back (runtime/memory.py), but where the device takes any host memory and the array is aligned. Memory that
`allocate` takes from a SYCL context as USM *shared* memory is host memory too, and also the device's: a launch on a
queue of that context passes such an array, or any view of it, by its address, with no copy either way. The registry
knows these allocations by their address range for as long as their array lives (a view or a tensor over it keeps it
alive); memory of another context is staged as any host array is.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import dpctl
import dpctl.memory
import numpy as np


@dataclass(frozen=True)
class SharedBlock:
    end: int  # one past the allocation's last byte
    context: dpctl.SyclContext


_blocks: dict[int, SharedBlock] = {}  # first byte -> the allocation, while its array lives


def allocate(shape, dtype: np.dtype, queue: dpctl.SyclQueue) -> np.ndarray:
    """A C-contiguous host array of `shape` and `dtype` in USM shared memory of `queue`'s context, registered."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    memory = dpctl.memory.MemoryUSMShared(max(count, 1) * dtype.itemsize, queue=queue)
    flat = np.frombuffer(memory, dtype=dtype, count=count)  # holds `memory`
    start = flat.ctypes.data
    _blocks[start] = SharedBlock(start + memory.nbytes, queue.sycl_context)
    weakref.finalize(flat, _blocks.pop, start, None)  # the base of every view of it, which keeps it alive
    return flat.reshape(shape)


def in_shared_memory(low: int, high: int, context: dpctl.SyclContext) -> bool:
    """Whether bytes [low, high) lie in one registered allocation of `context`."""
    blocks = tuple(_blocks.items())  # a copy: a collected array's finalizer may drop an entry mid-way
    return any(start <= low and high <= block.end and block.context == context for start, block in blocks)


def any_shared() -> bool:
    """Whether any shared allocation lives: the launch looks no further for host arrays when none does."""
    return bool(_blocks)
