"""Programs built through dpctl are freed with their SYCL objects (runtime/opencl/leaks.py): the OpenCL references
dpctl 0.22 leaks are released, so a process that builds many kernels does not keep every one."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import xetile_jit as xetile
import xetile_jit.language.dsl as xt
from xetile_jit.runtime.opencl import driver_binaries, leaks as opencl_leaks
from xetile_jit.runtime.device import cached_queue
from xetile_jit.runtime.sycl import SyclProgram

@xetile.kernel
def scale(x, y, C: xetile.constexpr):
    xt.store_tile(xt.init_tile(y, [0, 0], [16, 64]), xt.load_tile(xt.init_tile(x, [0, 0], [16, 64])) * C)


def spirv(c: float) -> tuple[bytes, str]:
    x = np.ones((16, 64), np.float32)
    compiled = scale.warmup(x, x.copy(), C=c, device="opencl:cpu")
    return compiled.asm["spirv"], compiled.name


def counts(kernel) -> tuple[int, int]:
    """(the native kernel's, its program's) OpenCL reference counts, less the one this query takes."""
    api = opencl_leaks.opencl_api()
    handle, program = opencl_leaks.native_kernel_and_program(api, kernel)
    kernel_count = opencl_leaks.count(api.kernel_info, handle, opencl_leaks.CL_KERNEL_REFERENCE_COUNT)
    api.release_kernel(handle)
    return kernel_count - 1, opencl_leaks.count(api.program_info, program, opencl_leaks.CL_PROGRAM_REFERENCE_COUNT)


def resident_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


@pytest.fixture(params=["spirv", "binary"])
def build_path(request, monkeypatch, tmp_path):
    """Programs built from SPIR-V (no binaries kept), or loaded from the binary the first build kept
    (runtime/opencl/driver_binaries.py; a fresh cache directory)."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    if request.param == "spirv":
        monkeypatch.setattr(driver_binaries, "binary_key", lambda *args: None)
    return request.param


def test_the_sycl_objects_hold_the_only_references(build_path):
    SyclProgram(*spirv(2.0)[:1], cached_queue("opencl:cpu")).kernel(spirv(2.0)[1])  # keeps its binary
    program = SyclProgram(*spirv(2.0)[:1], cached_queue("opencl:cpu"))
    assert program.from_binary == (build_path == "binary" and opencl_leaks.opencl_api() is not None)
    if opencl_leaks.opencl_api() is None:
        pytest.skip(f"dpctl {opencl_leaks.dpctl.__version__}: its leak is not the one measured")
    name = spirv(2.0)[1]
    kernel = program.kernel(name)
    assert counts(kernel) == (1, 1)  # the sycl::kernel's, the kernel bundle's
    with pytest.raises(KeyError, match="no kernel 'missing'"):  # not has_sycl_kernel: a null kernel is missing
        program.kernel("missing")


def test_programs_that_die_give_their_memory_back(monkeypatch):
    """Built from SPIR-V (a leaked one held 7.5 MB; one loaded from a binary 0.25 MB, which this cannot tell apart:
    the reference counts above are the test of those)."""
    monkeypatch.setattr(driver_binaries, "binary_key", lambda *args: None)
    queue = cached_queue("opencl:cpu")
    code, name = spirv(3.0)
    SyclProgram(code, queue).kernel(name)  # the driver's one-time allocations
    gc.collect()
    before = resident_mb()
    for _ in range(12):  # each a driver build of about a second
        SyclProgram(code, queue).kernel(name)
    gc.collect()
    assert resident_mb() - before < 10  # freed, they hold under 1 MB; leaked, ~27 MB
