"""Minimal SYCL launch of a SPIR-V kernel through dpctl: build a program, look kernels up by name, submit
(waiting, or in the queue's order: ordering.py).

dpctl 0.22.1's `SyclQueue.submit` accepts dpctl.memory USM objects, ctypes scalars, `LocalAccessor` and
`RawKernelArg`; it rejects numpy scalars, Python numbers and USM arrays (`usm_ndarray`), so `kernel_arg`
converts those. Sizes are given in SPIR-V order (dimension 0 = `GlobalInvocationId.x`); SYCL ranges list
the fastest dimension last, so they are reversed for dpctl.
"""
from __future__ import annotations

import ctypes
import os

import dpctl
import dpctl.memory
import numpy as np

from ..errors import LaunchError
from .kernel_bundles import kernel_bundle_api
from .opencl import build_log, driver_binaries
from . import ordering
from .opencl.leaks import release_leaked
from .profiling import record

CTYPE_OF_SIZE = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64}
_NATIVE_ARGS = (dpctl.memory.MemoryUSMDevice, dpctl.memory.MemoryUSMShared, dpctl.memory.MemoryUSMHost,
                ctypes._SimpleCData, dpctl.LocalAccessor, dpctl.RawKernelArg)


# Options a device builds kernels wrongly with: the OpenCL CPU runtime makes sub-groups with its vectorizer, so
# unoptimized every work-item is lane 0 of its own sub-group (measured: SubgroupLocalInvocationId reads 0 in all).
CPU_REFUSED_OPTIONS = {"-cl-opt-disable": "unoptimized, the OpenCL CPU runtime has no sub-groups (every work-item "
                                          "reads lane 0), and every xetile kernel works in sub-groups of 16"}


def check_options(device: dpctl.SyclDevice, options: str) -> None:
    if not device.is_cpu:
        return
    for option in options.split():
        if option in CPU_REFUSED_OPTIONS:
            raise LaunchError(f"build option {option} on {device.filter_string}: {CPU_REFUSED_OPTIONS[option]}")


class SyclProgram:
    """A SPIR-V module built for `queue`'s device with the driver `options` and those of XETILE_BUILD_OPTIONS, or
    loaded from the native binary an earlier build kept (`from_binary`; runtime/opencl/driver_binaries.py); `kernel(name)` gives
    its kernels."""

    def __init__(self, spirv: bytes, queue: dpctl.SyclQueue, options: str = ""):
        self.queue = queue
        options = " ".join(filter(None, [options, os.environ.get("XETILE_BUILD_OPTIONS", "")]))
        check_options(queue.sycl_device, options)
        self.spirv, self.options = spirv, options
        key = driver_binaries.binary_key(spirv, queue, options)
        loaded = None if key is None else driver_binaries.load(key, queue, options)
        self.program, unvectorized = loaded or (None, frozenset())
        self.from_binary = self.program is not None
        # name -> whether the compiler did not vectorize it (`unvectorized`): a kept binary's, as kept
        self._unvectorized: dict = dict.fromkeys(unvectorized, True)
        self.key = key
        self.unkept = key if self.program is None else None  # kept once a kernel gives its native program
        if self.program is None:
            self.build()
        self._kernels: dict = {}  # name -> dpctl SyclKernel

    def build(self) -> None:
        """The program built from the SPIR-V, its native binary to keep under its key: through the OpenCL API where
        programs are kept (driver_binaries.from_spirv), else, or when that build fails, by dpctl (whose error has the
        driver's build log)."""
        program = None if self.key is None else driver_binaries.from_spirv(self.spirv, self.queue, self.options)
        self.program = program or kernel_bundle_api().from_spirv(self.queue, self.spirv, self.options)
        self.from_binary, self.unkept, self._unvectorized = False, self.key, {}

    def kernel(self, name: str):
        if name not in self._kernels:
            kernel = self.program.get_sycl_kernel(name)  # not has_sycl_kernel: it leaks a kernel (runtime/opencl/leaks.py)
            if not kernel.addressof_ref() and self.from_binary:  # a kept binary of another program: replaced
                driver_binaries.discard(self.key)
                self.build()
                kernel = self.program.get_sycl_kernel(name)
            if not kernel.addressof_ref():  # dpctl wraps a null kernel when the name is not in the program
                raise KeyError(f"no kernel {name!r} in the SPIR-V program")
            release_leaked(kernel, self.queue)
            self._kernels[name] = kernel
            if self.unkept is not None:
                driver_binaries.keep(self.unkept, kernel, self.unvectorized(name))
                self.unkept = None
        return self._kernels[name]

    def unvectorized(self, name: str) -> bool:
        """Whether the OpenCL CPU compiler did not vectorize kernel `name` when it built this program
        (runtime/opencl/build_log.py; for a kept binary, as driver_binaries.keep kept it)."""
        if name not in self._unvectorized:
            self._unvectorized[name] = not self.from_binary and build_log.unvectorized(self.kernel(name), self.queue)
        return self._unvectorized[name]


def scalar_arg(value: np.generic):
    """The ctypes integer of the scalar's size holding its bits: `submit` takes only ctypes scalars, and
    ctypes has no half or bfloat16."""
    return CTYPE_OF_SIZE[value.itemsize].from_buffer_copy(value.tobytes())


def kernel_arg(value):
    """`value` in a form `SyclQueue.submit` accepts: USM arrays as USM memory (at the view's first element),
    numpy scalars as ctypes scalars."""
    if isinstance(value, _NATIVE_ARGS):
        return value
    if hasattr(value, "__sycl_usm_array_interface__"):
        return dpctl.memory.as_usm_memory(value)
    if isinstance(value, np.generic) and value.itemsize in CTYPE_OF_SIZE:
        return scalar_arg(value)
    raise TypeError(f"unsupported kernel argument of type {type(value).__name__} (pass a USM array or memory, "
                    "a numpy scalar or a ctypes scalar)")


def launch(queue: dpctl.SyclQueue, kernel, global_size, local_size, args) -> None:
    """Run `kernel` over `global_size` work-items in workgroups of `local_size` (None: the runtime picks)
    and wait for it; both sizes in SPIR-V dimension order."""
    submit(queue, kernel, global_size, local_size, [kernel_arg(a) for a in args], wait=True)


def submit(queue: dpctl.SyclQueue, kernel, global_size, local_size, args,
           wait: bool, after=(), ordered_with: dpctl.SyclQueue | None = None) -> dpctl.SyclEvent:
    """Submit `kernel` with `args` already in a form `SyclQueue.submit` accepts, after the work dpctl and dpnp
    ordered on `queue` and on the queues `after` (ordering.py); `wait`: return once it has finished, else record
    its event in that order (`ordered_with`: ordering.submit's). The event goes to `profiling.record`."""
    local_range = None if local_size is None else list(reversed(local_size))
    return submit_ranges(queue, kernel, list(reversed(global_size)), local_range, args, wait, after,
                         ordered_with=ordered_with)


def submit_ranges(queue: dpctl.SyclQueue, kernel, global_range: list, local_range, args,
                  wait: bool, after=(), owners=(), ordered_with: dpctl.SyclQueue | None = None) -> dpctl.SyclEvent:
    """`submit` with the sizes as SYCL ranges (the fastest dimension last); `owners`: what keeps the arguments'
    memory alive, kept with them while the kernel may run (ordering.py)."""
    event = ordering.submit(queue, kernel, args, global_range, local_range, wait, after, owners, ordered_with)
    record(queue, event)
    return event
