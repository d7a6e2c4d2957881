"""The environment the OpenCL drivers read when they initialize, set by `xetile_jit/__init__.py` before anything
imports dpctl (docs/DESIGN.md §4 Runtime). A value the user has set, even an empty one, is left alone.

The CPU runtime (`expose_cpu_runtime`): `intel-opencl-rt` installs `lib/libintelocl.so` into the environment
(`sys.prefix`), but the ICD file it installs next to it (`etc/OpenCL/vendors/intel-cpu.icd`) names a build-machine
placeholder path, so the OpenCL ICD loader finds no platform and `dpctl.get_devices() == []`. The loader also loads
every library listed in `OCL_ICD_FILENAMES` (in addition to the vendor directories, so system GPU drivers stay
visible); nothing is set when the library is absent (e.g. a conda environment whose ICD file is correct).

The GPU driver's own cache of programs built from SPIR-V (`enable_gpu_driver_cache`; docs/guide.md "Driver build
cache"): a launch's slowest step in a fresh process is the driver building the SPIR-V into native code; xetile_jit's
disk cache saves the compile before it. The OpenCL CPU runtime has no cache of its own (none of its CL_CONFIG_*
variables is one), so xetile_jit keeps its programs' native binaries itself (runtime/opencl/driver_binaries.py).
Intel's GPU driver (compute-runtime) caches on disk what it builds from SPIR-V, keyed by the SPIR-V, the build
options, the device and the driver's compiler, when `NEO_CACHE_PERSISTENT=1` (directory `NEO_CACHE_DIR`, size
`NEO_CACHE_MAX_SIZE`).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ICD_VARIABLE = "OCL_ICD_FILENAMES"
DRIVER_CACHE_VARIABLE = "NEO_CACHE_PERSISTENT"


def cpu_runtime_library() -> Path:
    """Where intel-opencl-rt puts the OpenCL CPU runtime in this environment."""
    return Path(sys.prefix) / "lib" / "libintelocl.so"


def expose_cpu_runtime() -> None:
    """Point the OpenCL ICD loader at the environment's CPU runtime unless the user already chose ICDs."""
    library = cpu_runtime_library()
    if ICD_VARIABLE not in os.environ and library.is_file():
        os.environ[ICD_VARIABLE] = str(library)


def enable_gpu_driver_cache() -> None:
    """NEO_CACHE_PERSISTENT=1 unless already set (to anything, "0" included)."""
    os.environ.setdefault(DRIVER_CACHE_VARIABLE, "1")
