"""The OpenCL and SYCL entry points xetile_jit calls through ctypes, from the libraries dpctl already loaded
(runtime/opencl/leaks.py: the references dpctl leaks; runtime/opencl/driver_binaries.py: built programs kept across processes).

The SYCL ones are C++ functions of the SYCL runtime dpctl 0.22 ships (`libsycl.so.9`), called by their mangled
names with the Itanium ABI's conventions: a `const T&` is a pointer, and a class returned by value
(`std::shared_ptr`) is written to storage the caller passes first. Other dpctl versions were not measured, so
`opencl_api()` gives None there and both users fall back to dpctl's own path.
"""
from __future__ import annotations

import ctypes
import os

import dpctl

from ..capsules import capsule_function
from ..kernel_bundles import kernel_bundle_api

MEASURED_DPCTL = ("0.22.",)
CL_KERNEL_REFERENCE_COUNT = 0x1192
CL_KERNEL_PROGRAM = 0x1194
CL_PROGRAM_REFERENCE_COUNT = 0x1160
CL_PROGRAM_BINARY_SIZES = 0x1165
CL_PROGRAM_BINARIES = 0x1166
CL_PROGRAM_BUILD_LOG = 0x1183
BUNDLE_EXECUTABLE = 2  # sycl::bundle_state::executable
BACKEND_OPENCL = 1     # sycl::backend::opencl
SYCL_OBJECT_BYTES = 16  # a sycl::kernel_bundle: one std::shared_ptr to its implementation

handle, uint, size = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t


class OpenCLApi:
    """The entry points, typed."""

    def __init__(self, opencl: ctypes.CDLL, sycl: ctypes.CDLL, stdcxx: ctypes.CDLL):
        self.kernel_native = typed(sycl._ZNK4sycl3_V16kernel9getNativeEv, handle, handle)  # kernel::getNative()
        self.context_native = typed(sycl._ZNK4sycl3_V17context9getNativeEv, handle, handle)
        self.device_native = typed(sycl._ZNK4sycl3_V16device9getNativeEv, handle, handle)
        # detail::make_kernel_bundle(native handle, const context&, bool keep ownership, bundle_state, backend)
        self.make_kernel_bundle = typed(
            sycl._ZN4sycl3_V16detail18make_kernel_bundleEmRKNS0_7contextEbNS0_12bundle_stateENS0_7backendE,
            handle, handle, ctypes.c_uint64, handle, ctypes.c_bool, ctypes.c_int, ctypes.c_int)
        self.operator_new = typed(stdcxx._Znwm, handle, size)
        self.kernel_info = typed(opencl.clGetKernelInfo, ctypes.c_int, handle, uint, size, handle, handle)
        self.program_info = typed(opencl.clGetProgramInfo, ctypes.c_int, handle, uint, size, handle, handle)
        self.build_info = typed(opencl.clGetProgramBuildInfo, ctypes.c_int, handle, handle, uint, size, handle,
                                ctypes.POINTER(size))
        self.release_kernel = typed(opencl.clReleaseKernel, ctypes.c_int, handle)
        self.release_program = typed(opencl.clReleaseProgram, ctypes.c_int, handle)
        self.release_context = typed(opencl.clReleaseContext, ctypes.c_int, handle)
        self.release_device = typed(opencl.clReleaseDevice, ctypes.c_int, handle)
        self.create_program_with_binary = typed(
            opencl.clCreateProgramWithBinary, handle, handle, uint, ctypes.POINTER(handle), ctypes.POINTER(size),
            ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
        self.create_program_with_il = typed(opencl.clCreateProgramWithIL, handle, handle, ctypes.c_char_p, size,
                                            ctypes.POINTER(ctypes.c_int))
        self.build_program = typed(opencl.clBuildProgram, ctypes.c_int, handle, uint, ctypes.POINTER(handle),
                                   ctypes.c_char_p, handle, handle)
        # dpctl's C API: a new kernel bundle object
        self.program_make = capsule_function(kernel_bundle_api().make_capsule, ctypes.py_object, handle)


def typed(function, restype, *argtypes):
    function.restype, function.argtypes = restype, list(argtypes)
    return function


def native_kernel_and_program(api: OpenCLApi, kernel) -> tuple[int, ctypes.c_void_p]:
    """A dpctl SyclKernel's native kernel (a reference the caller releases) and its program (none taken)."""
    native = api.kernel_native(kernel.addressof_ref())
    program = ctypes.c_void_p()
    api.kernel_info(native, CL_KERNEL_PROGRAM, ctypes.sizeof(program), ctypes.byref(program), None)
    return native, program


def count(info, native, name: int) -> int:
    """A reference count (`name`) of a native kernel or program, by its info function."""
    value = ctypes.c_uint()
    info(native, name, ctypes.sizeof(value), ctypes.byref(value), None)
    return value.value


_found: list[OpenCLApi] = []


def opencl_api() -> OpenCLApi | None:
    """The entry points, or None under a dpctl not measured or before a library is loaded (SYCL loads its OpenCL
    adapter with the first queue: asked again next time)."""
    if _found or not dpctl.__version__.startswith(MEASURED_DPCTL):
        return _found[0] if _found else None
    sycl = loaded_library("libsycl.so.")
    opencl = loaded_library("libOpenCL.so")
    stdcxx = loaded_library("libstdc++.so.")
    if sycl is None or opencl is None or stdcxx is None:
        return None
    _found.append(OpenCLApi(opencl, sycl, stdcxx))
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
