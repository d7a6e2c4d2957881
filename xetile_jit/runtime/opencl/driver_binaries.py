"""Programs the OpenCL CPU runtime built, kept in the compile cache for later processes (docs/guide.md §6.6).

On opencl:cpu the driver's build is most of a kernel's first launch in a process, and that runtime keeps nothing
between processes. So once it has built a program from SPIR-V, the program's native binary (`CL_PROGRAM_BINARIES`:
an ELF object of the host CPU's code) is stored as a compile cache entry (runtime/cache.py: private, checksummed,
size-capped), keyed by the SPIR-V, the build options and the device: its name, the runtime's version and the
CPU's feature flags (target/cpu_features.py), since the code uses the host's vector instructions; beside it the
kernels the compiler did not vectorize (build_log.py), which a program from the binary cannot tell. A later process
loads it with `clCreateProgramWithBinary` and `clBuildProgram` (about a millisecond) and hands it to SYCL's OpenCL interop
(`make_kernel_bundle`), whose kernel bundle, in storage from C++'s operator new so that dpctl's
`DPCTLKernelBundle_Delete` can free it, becomes a dpctl kernel bundle through dpctl's C API (`SyclProgram_Make`; runtime/kernel_bundles.py).
Only on OpenCL CPU devices under the dpctl measured (runtime/opencl/api.py); a binary the runtime refuses, or whose
program lacks the kernel launched (another program's), is deleted and the program built from SPIR-V (sycl.py).
Intel's GPU driver keeps a cache of its own (runtime/opencl/environment.py).
"""
from __future__ import annotations

import ctypes
import hashlib

import dpctl

from ...target.cpu_features import host_cpu
from ..cache import DiskCache
from .api import (BACKEND_OPENCL, BUNDLE_EXECUTABLE, CL_PROGRAM_BINARIES, CL_PROGRAM_BINARY_SIZES, SYCL_OBJECT_BYTES,
                  OpenCLApi, native_kernel_and_program, opencl_api)

FIELD = "binary"
# the entry field naming the program's kernels the compiler did not vectorize (build_log.py), one a line: a program
# loaded from the binary has no build log to ask
UNVECTORIZED = "unvectorized"


def binary_key(spirv: bytes, queue: dpctl.SyclQueue, options: str) -> str | None:
    """The cache key of the program `spirv` builds to on `queue`'s device with `options`; None where programs are not
    kept (not an OpenCL CPU device, another dpctl)."""
    device = queue.sycl_device
    if not device.is_cpu or queue.backend != dpctl.backend_type.opencl or opencl_api() is None:
        return None
    return DiskCache.key("driver binary", hashlib.sha256(spirv).hexdigest(), options, device.name,
                         device.driver_version, host_cpu().key)


def load(key: str, queue: dpctl.SyclQueue, options: str) -> tuple[object, frozenset[str]] | None:
    """The program kept under `key`, built for `queue`'s device, and its kernels the compiler did not vectorize;
    None when there is none, or the runtime refuses it or its entry lacks those names (then the entry is
    deleted)."""
    entry = DiskCache().get(key)
    if entry is None:
        return None
    names = entry.get(UNVECTORIZED)
    program = from_binary(opencl_api(), entry.get(FIELD), queue, options) if isinstance(names, str) else None
    if program is None:
        discard(key)
        return None
    return program, frozenset(names.split())


def discard(key: str) -> None:
    """Deletes the program kept under `key`: the runtime refused it, or it is not the program of its SPIR-V."""
    DiskCache().discard(key)


def keep(key: str, kernel, unvectorized: bool) -> None:
    """Stores the native binary of `kernel`'s program under `key`, and whether the compiler did not vectorize the
    kernel (`unvectorized`, from its build log: build_log.py) as UNVECTORIZED."""
    api = opencl_api()
    native, program = native_kernel_and_program(api, kernel)
    binary = program_binary(api, program)
    api.release_kernel(native)
    if binary:
        DiskCache().put(key, {FIELD: binary, UNVECTORIZED: kernel.get_function_name() if unvectorized else ""})


def program_binary(api: OpenCLApi, program: ctypes.c_void_p) -> bytes | None:
    """The native binary of a program built for one device."""
    size = ctypes.c_size_t()
    if api.program_info(program, CL_PROGRAM_BINARY_SIZES, ctypes.sizeof(size), ctypes.byref(size), None):
        return None
    data = ctypes.create_string_buffer(size.value)
    pointers = (ctypes.c_char_p * 1)(ctypes.cast(data, ctypes.c_char_p))
    if api.program_info(program, CL_PROGRAM_BINARIES, ctypes.sizeof(pointers), pointers, None):
        return None
    return data.raw


def from_binary(api: OpenCLApi, binary, queue: dpctl.SyclQueue, options: str):
    """A dpctl kernel bundle (SyclProgram) of the native `binary` built for `queue`'s device (None when the runtime refuses it)."""
    if not isinstance(binary, bytes) or not binary:
        return None

    def create(context, devices, error):
        status = ctypes.c_int()
        program = api.create_program_with_binary(context, 1, devices, (ctypes.c_size_t * 1)(len(binary)),
                                                 (ctypes.c_char_p * 1)(binary), ctypes.byref(status), error)
        if program and status.value:
            api.release_program(program)
            return None
        return program
    return built(api, create, queue, options)


def from_spirv(spirv: bytes, queue: dpctl.SyclQueue, options: str):
    """A dpctl kernel bundle (runtime/kernel_bundles.py) of `spirv` built for `queue`'s device (an OpenCL CPU device: `binary_key` is not None) by
    the OpenCL runtime, as dpctl builds one, but through ctypes, which lets other threads run meanwhile (the progress
    line, runtime/progress.py: dpctl's build holds the interpreter's lock for its seconds); None when the runtime
    refuses it (dpctl's build then reports why)."""
    api = opencl_api()
    return built(api, lambda context, devices, error: api.create_program_with_il(context, spirv, len(spirv), error),
                 queue, options)


def built(api: OpenCLApi, create, queue: dpctl.SyclQueue, options: str):
    """The program `create(context, devices, error)` makes on `queue`'s context, built for its device with
    `options`, as a dpctl kernel bundle; None when it is not made or not built."""
    context, device = (api.context_native(queue.sycl_context.addressof_ref()),
                       api.device_native(queue.sycl_device.addressof_ref()))
    devices = (ctypes.c_void_p * 1)(device)
    error = ctypes.c_int()
    program = create(context, devices, ctypes.byref(error))
    api.release_context(context)
    api.release_device(device)
    if not program or error.value:
        return None
    if api.build_program(program, 1, devices, options.encode(), None, None):
        api.release_program(program)
        return None
    bundle = api.operator_new(SYCL_OBJECT_BYTES)
    api.make_kernel_bundle(bundle, program, queue.sycl_context.addressof_ref(), False, BUNDLE_EXECUTABLE,
                           BACKEND_OPENCL)
    return api.program_make(bundle)
