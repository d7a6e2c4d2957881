"""Test doubles for array arguments: a minimal USM array and a DLPack-only wrapper; `needs_dpnp`; USM array makers
with and without dpnp (`Interface`, `Dpnp`)."""
from __future__ import annotations

import copy

import dpctl.memory
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import xetile_jit as xetile
from xetile_jit.runtime.scratch import interface_typestr

# dpnp is the bench extra (`pip install -e ".[bench]"`), not a test dependency; dpctl 0.22 moved its usm_ndarray
# (dpctl.tensor) into dpnp (dpnp.tensor), so without dpnp there is no usm_ndarray (UsmArray stands for USM arrays)
NO_DPNP = "dpnp is not installed (the bench extra; dpctl 0.22 moved usm_ndarray, dpctl.tensor, into dpnp.tensor)"


def needs_dpnp():
    """dpnp, for a test of dpnp arrays or usm_ndarray; skips the test without it."""
    return pytest.importorskip("dpnp", reason=NO_DPNP)


class UsmArray:
    """The least a USM array is: device memory and `__sycl_usm_array_interface__` (shape, strides and offset in
    elements) over a view of `base`, a C-contiguous host array copied to the device."""

    def __init__(self, queue, base: np.ndarray, shape, strides, offset=0):
        self.base = base
        self.memory = dpctl.memory.MemoryUSMDevice(base.nbytes, queue=queue)
        self.memory.copy_from_host(base.reshape(-1).view(np.uint8))
        self.__sycl_usm_array_interface__ = dict(
            data=(self.memory.__sycl_usm_array_interface__["data"][0], False), shape=shape, strides=strides,
            offset=offset, typestr=interface_typestr(base.dtype), version=1, syclobj=queue)

    def contents(self) -> np.ndarray:
        """The device contents of the whole of `base`, copied to the host."""
        host = np.empty_like(self.base)
        self.memory.copy_to_host(host.reshape(-1).view(np.uint8))
        return host

    def view(self) -> np.ndarray:
        """The device contents of the array, copied to the host."""
        host = self.contents()
        usm = self.__sycl_usm_array_interface__
        strides = usm["strides"] or np.empty(usm["shape"], np.int8).strides  # C order, in elements
        return as_strided(host.reshape(-1)[usm["offset"]:], usm["shape"], [s * host.itemsize for s in strides])


class Interface:
    """Makes and reads USM arrays known by their interface alone (UsmArray), without dpnp."""
    name = "interface"

    def __init__(self, queue):
        self.queue = queue

    def asarray(self, values, dtype=np.float32) -> UsmArray:
        base = np.ascontiguousarray(values, dtype)
        return UsmArray(self.queue, base, base.shape, None)

    def asnumpy(self, array: UsmArray) -> np.ndarray:
        """The array's contents once the launches on its queue have run (copy_to_host joins no order)."""
        xetile.synchronize(self.queue)
        return array.view().copy()

    @staticmethod
    def columns(array: UsmArray, start: int, stop: int) -> UsmArray:
        """array[:, start:stop] of a C-contiguous 2-D array, sharing its memory."""
        view, usm = copy.copy(array), array.__sycl_usm_array_interface__
        view.__sycl_usm_array_interface__ = dict(usm, shape=(usm["shape"][0], stop - start),
                                                 strides=(usm["shape"][1], 1), offset=start)
        return view

    @staticmethod
    def reshape_in_place(array: UsmArray, shape) -> None:
        """Changes the shape the array's interface says (C order)."""
        array.__sycl_usm_array_interface__["shape"] = shape

    @staticmethod
    def reversed(array: UsmArray) -> UsmArray:
        """array[::-1], sharing its memory: a negative stride along the first dim."""
        view, usm = copy.copy(array), array.__sycl_usm_array_interface__
        strides = usm["strides"] or np.empty(usm["shape"], np.int8).strides  # C order, in elements
        view.__sycl_usm_array_interface__ = dict(usm, strides=(-strides[0], *strides[1:]),
                                                 offset=(usm["offset"] or 0) + (usm["shape"][0] - 1) * strides[0])
        return view

    @staticmethod
    def read_only(array: UsmArray) -> UsmArray:
        """The array, its interface saying its memory is read-only."""
        view, usm = copy.copy(array), array.__sycl_usm_array_interface__
        view.__sycl_usm_array_interface__ = dict(usm, data=(usm["data"][0], True))
        return view


class Dpnp:
    """Makes and reads dpnp arrays (the test skips without dpnp)."""
    name = "dpnp"

    def __init__(self, queue):
        self.queue, self.dpnp = queue, needs_dpnp()

    def asarray(self, values, dtype=np.float32):
        return self.dpnp.asarray(np.asarray(values, dtype), sycl_queue=self.queue)

    def asnumpy(self, array) -> np.ndarray:
        return self.dpnp.asnumpy(array)

    @staticmethod
    def columns(array, start: int, stop: int):
        return array[:, start:stop]

    @staticmethod
    def reshape_in_place(array, shape) -> None:
        array.shape = shape

    @staticmethod
    def reversed(array):
        return array[::-1]


class DLPackOnly:
    """Exposes nothing of the wrapped array but the DLPack protocol."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, *args, **kwargs):
        return self.array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def count_interface_reads(monkeypatch, dpnp) -> list:
    """A list that grows by one at each read of a dpnp array's `__sycl_usm_array_interface__`: a read waits for the
    kernels queued on the array's queue (dpnp 0.20), so a launch must not make one."""
    reads = []
    interface = dpnp.ndarray.__sycl_usm_array_interface__

    def counted(array):
        reads.append(1)
        return interface.fget(array)

    monkeypatch.setattr(dpnp.ndarray, "__sycl_usm_array_interface__", property(counted))
    return reads
