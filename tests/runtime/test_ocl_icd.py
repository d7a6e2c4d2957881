"""docs/DESIGN.md §4: importing xetile_jit makes PyPI's OpenCL CPU runtime visible to dpctl, and leaves a user's
OCL_ICD_FILENAMES alone."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from xetile_jit.runtime.opencl import environment

PROBE = """
import os, xetile_jit, dpctl
print(os.environ.get("OCL_ICD_FILENAMES"))
print(" ".join(d.filter_string for d in dpctl.get_devices()))
"""


def probe(**env) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "OCL_ICD_FILENAMES"} | env
    result = subprocess.run([sys.executable, "-c", PROBE], env=clean, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_clean_environment_sees_the_opencl_cpu():
    variable, devices = probe()
    assert variable == str(environment.cpu_runtime_library())
    assert "opencl:cpu:0" in devices.split()


def test_user_value_is_left_alone():
    variable, _ = probe(OCL_ICD_FILENAMES="/nonexistent/libOpenCL-vendor.so")
    assert variable == "/nonexistent/libOpenCL-vendor.so"


@pytest.mark.parametrize("installed", [True, False])
def test_set_only_when_the_library_exists(tmp_path, monkeypatch, installed):
    if installed:
        (tmp_path / "lib").mkdir()
        (tmp_path / "lib" / "libintelocl.so").touch()
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.delenv("OCL_ICD_FILENAMES", raising=False)
    environment.expose_cpu_runtime()
    expected = str(tmp_path / "lib" / "libintelocl.so") if installed else None
    assert os.environ.get("OCL_ICD_FILENAMES") == expected
