"""dpctl's API for SYCL kernel bundles (programs built from SPIR-V) under whichever names the installed dpctl has.

dpctl 0.22 calls it `dpctl.program` (`SyclProgram`, `create_program_from_spirv`, `SyclProgramCompilationError`, the
C API's `SyclProgram_Make`); its next release renames the class and its functions to `SyclKernelBundle`,
`create_kernel_bundle_from_spirv`, `SyclKernelBundleCompilationError` and `SyclKernelBundle_Make`, and moves the
module to `dpctl.compiler` (the old names deprecated, then gone). `find_api` tests for the features, in NAMINGS'
order (the newest first, so no deprecated name is called where the new one exists), rather than reading dpctl's
version: a dpctl between the two (the class renamed, the module not yet moved) is found too.
"""
from __future__ import annotations

import functools
import importlib
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Callable


@dataclass(frozen=True)
class Naming:
    """One spelling of the API: its module, the bundle class, the builders from SPIR-V and from OpenCL C source,
    the build error and the C API function making a Python bundle object from a `DPCTLSyclKernelBundleRef`."""
    module: str
    bundle: str
    from_spirv: str
    from_source: str
    error: str
    make: str


NAMINGS = (
    Naming("dpctl.compiler", "SyclKernelBundle", "create_kernel_bundle_from_spirv", "create_kernel_bundle_from_source",
           "SyclKernelBundleCompilationError", "SyclKernelBundle_Make"),
    Naming("dpctl.program", "SyclKernelBundle", "create_kernel_bundle_from_spirv", "create_kernel_bundle_from_source",
           "SyclKernelBundleCompilationError", "SyclKernelBundle_Make"),
    Naming("dpctl.program", "SyclProgram", "create_program_from_spirv", "create_program_from_source",
           "SyclProgramCompilationError", "SyclProgram_Make"),
)


@dataclass(frozen=True)
class KernelBundleApi:
    """The API found: `from_spirv(queue, spirv, options)` and `from_source(queue, source, options)` build a bundle
    whose `get_sycl_kernel(name)` gives a kernel; `compilation_error` is what a failed build raises; `make_capsule`
    is the C API's PyCapsule of the function making a bundle object (runtime/opencl/api.py)."""
    naming: Naming
    from_spirv: Callable
    from_source: Callable
    compilation_error: type
    bundle_type: type
    make_capsule: object


def api_of(module: ModuleType, naming: Naming) -> KernelBundleApi | None:
    """The API `module` offers under `naming`, or None when it lacks any of its names."""
    names = (naming.from_spirv, naming.from_source, naming.error, naming.bundle)
    if not all(hasattr(module, name) for name in names):
        return None
    bundle_type = getattr(module, naming.bundle)
    extension = sys.modules.get(bundle_type.__module__)  # the Cython module that exports the C API
    capsule = getattr(extension, "__pyx_capi__", {}).get(naming.make)
    return KernelBundleApi(naming, getattr(module, naming.from_spirv), getattr(module, naming.from_source),
                           getattr(module, naming.error), bundle_type, capsule)


def find_api(import_module: Callable[[str], ModuleType] = importlib.import_module) -> KernelBundleApi:
    """The first of NAMINGS the installed dpctl has (module docstring); `import_module` imports a module by name."""
    for naming in NAMINGS:
        try:
            module = import_module(naming.module)
        except ImportError:
            continue
        found = api_of(module, naming)
        if found is not None:
            return found
    tried = ", ".join(f"{n.module}.{n.from_spirv}" for n in NAMINGS)
    raise ImportError(f"this dpctl builds SYCL kernels from SPIR-V under none of the names xetile_jit knows ({tried})")


@functools.cache
def kernel_bundle_api() -> KernelBundleApi:
    """The installed dpctl's API, found once."""
    return find_api()
