"""Make the OpenCL CPU runtime from PyPI visible to dpctl (docs/DESIGN.md §4 Runtime, second rule).

`intel-opencl-rt` installs `lib/libintelocl.so` into the environment (`sys.prefix`), but the ICD file it
installs next to it (`etc/OpenCL/vendors/intel-cpu.icd`) names a build-machine placeholder path, so the
OpenCL ICD loader finds no platform and `dpctl.get_devices() == []`. The loader also loads every library
listed in `OCL_ICD_FILENAMES` (in addition to the vendor directories, so system GPU drivers stay visible);
it reads the variable when OpenCL is first initialized, so `xetile_jit/__init__.py` calls
`expose_cpu_runtime()` before anything imports dpctl. A value the user has set, even an empty one, is left
alone, and nothing is set when the library is absent (e.g. a conda environment whose ICD file is correct).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

VARIABLE = "OCL_ICD_FILENAMES"


def cpu_runtime_library() -> Path:
    """Where intel-opencl-rt puts the OpenCL CPU runtime in this environment."""
    return Path(sys.prefix) / "lib" / "libintelocl.so"


def expose_cpu_runtime() -> None:
    """Point the OpenCL ICD loader at the environment's CPU runtime unless the user already chose ICDs."""
    library = cpu_runtime_library()
    if VARIABLE not in os.environ and library.is_file():
        os.environ[VARIABLE] = str(library)
