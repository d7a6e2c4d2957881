"""Test doubles for array arguments: a minimal USM array and a DLPack-only wrapper; `needs_dpnp`."""
from __future__ import annotations

import dpctl.memory
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

# dpnp is the bench extra (`pip install -e ".[bench]"`), not a test dependency; dpctl 0.22 moved its usm_ndarray
# (dpctl.tensor) into dpnp (dpnp.tensor), so without dpnp there is no usm_ndarray and no asynchronous launch
NO_DPNP = "dpnp is not installed (the bench extra; dpctl 0.22 moved usm_ndarray, dpctl.tensor, into dpnp.tensor)"


def needs_dpnp():
    """dpnp, for a test of dpnp arrays, usm_ndarray or asynchronous launches; skips the test without it."""
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
            offset=offset, typestr=base.dtype.str, version=1, syclobj=queue)

    def contents(self) -> np.ndarray:
        """The device contents of the whole of `base`, copied to the host."""
        host = np.empty_like(self.base)
        self.memory.copy_to_host(host.reshape(-1).view(np.uint8))
        return host

    def view(self) -> np.ndarray:
        """The device contents of the array, copied to the host."""
        host = self.contents()
        usm = self.__sycl_usm_array_interface__
        item = host.itemsize
        strides = usm["strides"] or (usm["shape"][1], 1)
        return as_strided(host.reshape(-1)[usm["offset"]:], usm["shape"], [s * item for s in strides])


class DLPackOnly:
    """Exposes nothing of the wrapped array but the DLPack protocol."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, *args, **kwargs):
        return self.array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()
