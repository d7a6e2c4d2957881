"""Which device runs a launch: `device=` -> `XETILE_DEVICE` -> the numpy interpreter.

SYCL devices (dpctl filter strings such as "opencl:cpu") need the SPIR-V backend, which this version
does not have yet; naming one raises NotImplementedError.
"""
from __future__ import annotations

import os

from ..errors import LaunchError

NUMPY = "numpy"


def resolve_device(device) -> str:
    name = device if device is not None else os.environ.get("XETILE_DEVICE") or NUMPY
    if not isinstance(name, str):
        raise LaunchError(f"device must be a dpctl filter string or 'numpy', got {type(name).__name__}")
    if name == NUMPY:
        return NUMPY
    raise NotImplementedError(f"device {name!r}: SPIR-V code generation for SYCL devices is not implemented yet; "
                              "use device='numpy' (the numpy interpreter)")


def default_device() -> str:
    """The device a launch without `device=` uses."""
    return resolve_device(None)
