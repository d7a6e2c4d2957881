"""The GPU driver's own cache of programs built from SPIR-V (docs/guide.md "Driver build cache").

A launch's slowest step in a fresh process is the driver building the SPIR-V into native code; xetile_jit's disk
cache saves the compile before it, and the built program is kept as follows:
- the OpenCL CPU runtime has no cache of its own (none of its CL_CONFIG_* variables is one), so xetile_jit keeps
  its programs' native binaries in the compile cache itself (runtime/opencl/driver_binaries.py);
- Intel's GPU driver (compute-runtime) caches on disk what it builds from SPIR-V, keyed by the SPIR-V, the build
  options, the device and the driver's compiler, when `NEO_CACHE_PERSISTENT=1` (directory `NEO_CACHE_DIR`, size
  `NEO_CACHE_MAX_SIZE`). `enable_gpu_driver_cache` turns it on unless the user set the variable; the driver reads
  it when it initializes, so `xetile_jit/__init__.py` calls it before anything imports dpctl.
"""
from __future__ import annotations

import os

VARIABLE = "NEO_CACHE_PERSISTENT"


def enable_gpu_driver_cache() -> None:
    """NEO_CACHE_PERSISTENT=1 unless already set (to anything, "0" included)."""
    os.environ.setdefault(VARIABLE, "1")
