"""The OpenCL references dpctl leaks when it builds a program from SPIR-V and gets a kernel.

dpctl 0.22 (`libsyclinterface`, kernel bundle interface, OpenCL path) builds a program with
`clCreateProgramWithIL` + `clBuildProgram` and wraps it with SYCL's `make_kernel_bundle`, which retains it, without
releasing its own reference. `get_sycl_kernel` then takes the bundle's programs with `get_native` (one more
reference each) and makes the kernel with `clCreateKernel` + `make_kernel` (which retains it), releasing neither.
So no program dpctl builds is ever freed, nor the native code the driver made for it: on opencl:cpu 7.5 MB for a
small kernel, hundreds of MB for a GEMM, and the test suite's workers grew to 7.8 GB.

`release_leaked(kernel)`, called once per kernel right after `get_sycl_kernel`, finds the native kernel (SYCL's
`kernel::getNative`, which retains it for the caller) and its program, and when their reference counts are exactly
those of the leak (kernel: the leaked one, SYCL's and ours; program: the leaked one, the bundle's and the leaked
`get_native`'s), releases the leaked ones, so that the SYCL objects own the last references and free them when
they die. With any other counts (a dpctl that fixed the leak, another path) it releases only its own reference.
`SyclProgram.kernel` looks a kernel up with `get_sycl_kernel` only: `has_sycl_kernel` leaks a kernel per call.
A program loaded from a kept binary (runtime/opencl/driver_binaries.py) has the same counts: `clCreateProgramWithBinary`'s reference
(not released by us), the bundle's (`make_kernel_bundle` retains it) and get_native's.
"""
from __future__ import annotations

import dpctl

from .api import CL_KERNEL_REFERENCE_COUNT, CL_PROGRAM_REFERENCE_COUNT, count, native_kernel_and_program, opencl_api

LEAKED_KERNEL_COUNT = 3   # clCreateKernel's (leaked), make_kernel's (SYCL's), getNative's (ours)
LEAKED_PROGRAM_COUNT = 3  # clCreateProgramWith*'s (leaked), the bundle's, get_native's in get_sycl_kernel (leaked)


def release_leaked(kernel, queue: dpctl.SyclQueue) -> None:
    """Releases the references dpctl leaked in building `kernel`'s program and getting `kernel` (module docstring)."""
    api = opencl_api() if queue.backend == dpctl.backend_type.opencl else None
    if api is None:
        return
    handle, program = native_kernel_and_program(api, kernel)
    if (count(api.kernel_info, handle, CL_KERNEL_REFERENCE_COUNT) == LEAKED_KERNEL_COUNT
            and count(api.program_info, program, CL_PROGRAM_REFERENCE_COUNT) == LEAKED_PROGRAM_COUNT):
        api.release_kernel(handle)
        api.release_program(program)
        api.release_program(program)
    api.release_kernel(handle)
