"""Test helpers for SPIR-V binaries: validate with `spirv-val`, disassemble with `spirv-dis` (the test skips when
the tool is missing), and the `opencl:cpu` SYCL queue (the test skips when there is none)."""
from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile

import pytest

import xetile_jit  # noqa: F401  (points the OpenCL ICD loader at the CPU runtime; must precede dpctl)
import dpctl  # isort: skip
from xetile_jit.toolchain.processes import run_tool  # noqa: E402


def _run(tool: str, binary: bytes, *args: str) -> subprocess.CompletedProcess:
    if tool is None or shutil.which(tool) is None:
        pytest.skip(f"{tool or 'the current spirv-val'} is not installed")
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(binary)
        f.flush()
        return run_tool([tool, *args, f.name], capture_output=True, text=True)


def validate(binary: bytes, target_env: str | None = None, tool: str | None = "spirv-val") -> None:
    """spirv-val `tool` (the PATH's by default; the current stack's for the 2025 extensions) accepts `binary`, for
    `target_env` or the SPIR-V version its header names (1.2, or 1.3 where it takes GroupNonUniform ops)."""
    version = int.from_bytes(binary[4:8], "little")
    result = _run(tool, binary, "--target-env", target_env or f"spv{version >> 16 & 0xff}.{version >> 8 & 0xff}")
    assert result.returncode == 0, result.stderr + result.stdout


def disassemble(binary: bytes) -> str:
    result = _run("spirv-dis", binary)
    assert result.returncode == 0, result.stderr
    return result.stdout


@functools.cache
def _cpu_queue() -> dpctl.SyclQueue | None:
    try:
        return dpctl.SyclQueue("opencl:cpu")
    except dpctl.SyclQueueCreationError:
        return None


def cpu_queue():
    """The `opencl:cpu` SYCL queue shared by the tests."""
    queue = _cpu_queue()
    if queue is None:
        pytest.skip("no opencl:cpu SYCL device")
    return queue
