"""The driver's own cache of programs built from SPIR-V (issue 10, item 4; README "Driver build cache").

A launch's slowest step in a fresh process is the driver building the SPIR-V into native code (13 s of the tutorial
GEMM's 13.3 s first launch on opencl:cpu); xetile_jit's disk cache only saves the compile before it. Keeping the
built program needs either dpctl to hand out and take program binaries, or the driver to cache them:
- dpctl (0.22) can do neither: `dpctl.program` builds from SPIR-V or OpenCL C only, `SyclProgram` exposes
  `get_sycl_kernel`, `has_sycl_kernel` and `addressof_ref`, and its C API's kernel bundles are made from SPIR-V or
  OpenCL C (`DPCTLKernelBundle_CreateFromSpirv`, `..._CreateFromOCLSource`). It builds through
  `clCreateProgramWithIL` and `clBuildProgram` and wraps the result with `make_kernel_bundle`, outside the SYCL
  runtime's own persistent cache (`SYCL_CACHE_PERSISTENT` writes nothing for it).
- The OpenCL CPU runtime has no cache setting (none of its CL_CONFIG_* variables is one); its binaries can be read
  and loaded through OpenCL (`CL_PROGRAM_BINARIES`, `clCreateProgramWithBinary`), but dpctl cannot wrap such a
  program. So on opencl:cpu every process builds again.
- Intel's GPU driver (compute-runtime) caches on disk what it builds from SPIR-V, keyed by the SPIR-V, the build
  options, the device and the driver's compiler, when `NEO_CACHE_PERSISTENT=1` (directory `NEO_CACHE_DIR`, size
  `NEO_CACHE_MAX_SIZE`). `enable_gpu_driver_cache` turns it on unless the user set the variable; the driver reads it
  when it initializes, so `xetile_jit/__init__.py` calls it before anything imports dpctl.
"""
from __future__ import annotations

import os

VARIABLE = "NEO_CACHE_PERSISTENT"


def enable_gpu_driver_cache() -> None:
    """NEO_CACHE_PERSISTENT=1 unless already set (to anything, "0" included)."""
    os.environ.setdefault(VARIABLE, "1")
