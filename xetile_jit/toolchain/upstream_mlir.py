"""Upstream MLIR's tools (`mlir-opt` 23, installed by `install-gpu-compiler --with-mlir`, found like ocloc by
toolchain/gpu_compiler.py): they parse and verify the kernels compiler/mlir_export.py prints, and lower them
through upstream's own XeGPU pipeline to SPIR-V, which toolchain/ocloc.py builds like ours."""
from __future__ import annotations

import re
import subprocess

from . import gpu_compiler

ASSEMBLY = re.compile(r'assembly = "((?:[^"\\]|\\.)*)"')
ESCAPE = re.compile(rb"\\([0-9A-Fa-f]{2}|\\|\"|n|t)")
NAMED_ESCAPES = {b"\\": b"\\", b'"': b'"', b"n": b"\n", b"t": b"\t"}


class MlirError(RuntimeError):
    """mlir-opt refused a module; the message holds its diagnostics."""


def mlir_opt() -> str | None:
    """The installed mlir-opt's launcher, None when it is not installed."""
    return gpu_compiler.find_tool("mlir-opt")


def run_mlir_opt(text: str, *options: str) -> str:
    """`mlir-opt OPTIONS` on `text` (parsed and verified, then the passes of OPTIONS); its output."""
    tool = mlir_opt()
    if tool is None:
        raise MlirError("mlir-opt is not installed (python -m xetile_jit install-gpu-compiler --with-mlir)")
    result = subprocess.run([tool, *options, "-"], input=text, capture_output=True, text=True)
    if result.returncode != 0:
        raise MlirError(f"mlir-opt {' '.join(options)} failed:\n{result.stderr}")
    return result.stdout


def workgroup_pipeline(chip: str, igc_options: str = "") -> str:
    """The pipeline option taking a workgroup-level XeGPU module to a SPIR-V `gpu.binary` for `chip`."""
    options = f"xegpu-op-level=workgroup binary-format=isa zebin-chip={chip}"
    return f"--gpu-lower-to-xevm-pipeline={options}" + (f" igc-cmd-options={igc_options}" if igc_options else "")


def lower_to_spirv(text: str, chip: str) -> bytes:
    """The SPIR-V upstream's pipeline makes of the workgroup-level module `text` (the `gpu.binary`'s assembly)."""
    lowered = run_mlir_opt(text, workgroup_pipeline(chip))
    found = ASSEMBLY.search(lowered)
    if found is None:
        raise MlirError("upstream's pipeline made no gpu.binary with an assembly")
    return unescape(found.group(1))


def unescape(literal: str) -> bytes:
    """An MLIR string literal's bytes: `\\XX` is a hex byte, `\\\\`, `\\"`, `\\n`, `\\t` their characters."""
    raw = literal.encode("latin-1")
    return ESCAPE.sub(lambda m: NAMED_ESCAPES.get(m.group(1)) or bytes([int(m.group(1), 16)]), raw)
