"""The OpenCL references dpctl leaks when it builds a program from SPIR-V and gets a kernel (issue 14: memory).

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
"""
from __future__ import annotations

import ctypes
import os

import dpctl

CL_KERNEL_REFERENCE_COUNT = 0x1192
CL_KERNEL_PROGRAM = 0x1194
CL_PROGRAM_REFERENCE_COUNT = 0x1160
LEAKED_KERNEL_COUNT = 3   # clCreateKernel's (leaked), make_kernel's (SYCL's), getNative's (ours)
LEAKED_PROGRAM_COUNT = 3  # clCreateProgramWithIL's (leaked), the bundle's, get_native's in get_sycl_kernel (leaked)
LEAKY_DPCTL = ("0.22.",)  # versions whose counts were measured as above


def release_leaked(kernel: dpctl.program.SyclKernel, queue: dpctl.SyclQueue) -> None:
    """Releases the references dpctl leaked in building `kernel`'s program and getting `kernel` (module docstring)."""
    api = opencl_api() if queue.backend == dpctl.backend_type.opencl else None
    if api is None:
        return
    handle = api.kernel_native(kernel.addressof_ref())
    program = ctypes.c_void_p()
    api.kernel_info(handle, CL_KERNEL_PROGRAM, ctypes.sizeof(program), ctypes.byref(program), None)
    if (count(api.kernel_info, handle, CL_KERNEL_REFERENCE_COUNT) == LEAKED_KERNEL_COUNT
            and count(api.program_info, program, CL_PROGRAM_REFERENCE_COUNT) == LEAKED_PROGRAM_COUNT):
        api.release_kernel(handle)
        api.release_program(program)
        api.release_program(program)
    api.release_kernel(handle)


def count(info, handle, name: int) -> int:
    value = ctypes.c_uint()
    info(handle, name, ctypes.sizeof(value), ctypes.byref(value), None)
    return value.value


class OpenCLApi:
    """The OpenCL and SYCL entry points release_leaked calls, from the libraries dpctl already loaded."""

    def __init__(self, opencl: ctypes.CDLL, sycl: ctypes.CDLL):
        self.kernel_native = sycl._ZNK4sycl3_V16kernel9getNativeEv  # sycl::kernel::getNative() const
        self.kernel_native.restype, self.kernel_native.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
        self.kernel_info, self.program_info = opencl.clGetKernelInfo, opencl.clGetProgramInfo
        for info in (self.kernel_info, self.program_info):
            info.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p]
        self.release_kernel, self.release_program = opencl.clReleaseKernel, opencl.clReleaseProgram
        self.release_kernel.argtypes = self.release_program.argtypes = [ctypes.c_void_p]


_found: list[OpenCLApi] = []


def opencl_api() -> OpenCLApi | None:
    """The entry points, or None where the leak is not known (another dpctl) or a library is not loaded yet (SYCL
    loads its OpenCL adapter with the first queue: asked again next time)."""
    if _found or not dpctl.__version__.startswith(LEAKY_DPCTL):
        return _found[0] if _found else None
    sycl = loaded_library("libsycl.so.")
    opencl = loaded_library("libOpenCL.so")
    if sycl is None or opencl is None:
        return None
    _found.append(OpenCLApi(opencl, sycl))
    return _found[0]


def loaded_library(prefix: str) -> ctypes.CDLL | None:
    """The library already mapped into this process whose file name starts with `prefix` (the copy SYCL uses:
    a wheel may ship the same library under two file names, and opening the other one would load a second,
    uninitialized copy)."""
    if not os.path.exists("/proc/self/maps"):  # not Linux: dpctl's libraries are not the ones measured
        return None
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith(prefix):
                return ctypes.CDLL(path, mode=os.RTLD_NOLOAD)
    return None
