"""What the OpenCL CPU runtime's compiler says of a program it built from SPIR-V: its build log, and in it whether
it vectorized a kernel.

That compiler runs a workgroup's work-items as vectors of the kernel's sub-group size, or, where its vectorizer gives
up on a kernel, one work-item at a time (its log then says `Kernel "<name>" was not vectorized`). A kernel whose lanes
read each other's values is wrong so: a lane reads the others' before they are there. A fuzzed row kernel of 20
blocks, 19 of them left of its array, was built so for the `cpu` target and stored past its lanes' slots, killing the
process (Zen 5, 2026-12-05, AVX-512 and AVX2 code; through the sub-group built-ins instead of the slots it ran, and
gave wrong sums). jit/kernel.py Kernel.vectorized_fallback compiles such a kernel for its target's fallback.
"""
from __future__ import annotations

import ctypes

import dpctl

from .api import CL_PROGRAM_BUILD_LOG, OpenCLApi, native_kernel_and_program, opencl_api


def build_log(api: OpenCLApi, program: ctypes.c_void_p, queue: dpctl.SyclQueue) -> str:
    """The build log of the native `program` for `queue`'s device ("" where the runtime gives none)."""
    device = api.device_native(queue.sycl_device.addressof_ref())
    try:
        length = ctypes.c_size_t()
        if api.build_info(program, device, CL_PROGRAM_BUILD_LOG, 0, None, ctypes.byref(length)) or not length.value:
            return ""
        text = ctypes.create_string_buffer(length.value)
        if api.build_info(program, device, CL_PROGRAM_BUILD_LOG, length.value, text, None):
            return ""
        return text.value.decode(errors="replace")
    finally:
        api.release_device(device)


def not_vectorized(log: str, name: str) -> bool:
    """Whether the build `log` says the compiler did not vectorize kernel `name`."""
    return f'Kernel "{name}" was not vectorized' in log


def unvectorized(kernel, queue: dpctl.SyclQueue) -> bool:
    """Whether the OpenCL CPU compiler said it did not vectorize the dpctl SyclKernel `kernel` when it built its
    program for `queue`'s device (False where this dpctl's entry points are not known: runtime/opencl/api.py)."""
    api = opencl_api()
    if api is None or not queue.sycl_device.is_cpu or queue.backend != dpctl.backend_type.opencl:
        return False
    native, program = native_kernel_and_program(api, kernel)
    try:
        return not_vectorized(build_log(api, program, queue), kernel.get_function_name())
    finally:
        api.release_kernel(native)
