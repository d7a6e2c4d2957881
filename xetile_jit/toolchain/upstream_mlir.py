"""Upstream MLIR's tools (`mlir-opt` 23, installed by `install-gpu-compiler --with-mlir`, found like ocloc by
toolchain/gpu_compiler.py): they parse and verify the kernels compiler/mlir_export.py prints, and lower them
through upstream's own XeGPU pipeline to SPIR-V, which toolchain/ocloc.py builds like ours, or to a zebin, which the
pipeline has the current stack's ocloc build (`gpu_build`: what benchmarks set beside our own build)."""
from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass

from . import gpu_compiler, ocloc
from .processes import run_tool
from ..target.targets import Target

ASSEMBLY = re.compile(r'assembly = "((?:[^"\\]|\\.)*)"')
ZEBIN = re.compile(r'"(\\7FELF(?:[^"\\]|\\.)*)"')  # the gpu.object's string holding the ELF device binary
ESCAPE = re.compile(rb"\\([0-9A-Fa-f]{2}|\\|\"|n|t)")
NAMED_ESCAPES = {b"\\": b"\\", b'"': b'"', b"n": b"\n", b"t": b"\t"}


class MlirError(RuntimeError):
    """mlir-opt refused a module; the message holds its diagnostics."""

    @property
    def reason(self) -> str:
        """The first error mlir-opt reported, without its source location (its warnings left out), else the
        message's first line."""
        lines = str(self).splitlines()
        return next((line.split("error: ", 1)[1] for line in lines if "error: " in line), lines[0])


def mlir_opt() -> str | None:
    """The installed mlir-opt's launcher, None when it is not installed."""
    return gpu_compiler.find_tool("mlir-opt")


def run_mlir_opt(text: str, *options: str) -> str:
    """`mlir-opt OPTIONS` on `text` (parsed and verified, then the passes of OPTIONS); its output."""
    tool = mlir_opt()
    if tool is None:
        raise MlirError("mlir-opt is not installed (python -m xetile_jit install-gpu-compiler --with-mlir)")
    # the pipeline without binary-format=isa builds its SPIR-V with the first ocloc on the PATH (the current
    # stack's, here) in files under TMPDIR, some of which it leaves: a directory of its own, removed after
    ocloc_dir = os.path.dirname(gpu_compiler.find_tool("ocloc") or "")
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, PATH=os.pathsep.join(filter(None, (ocloc_dir, os.environ.get("PATH")))), TMPDIR=work)
        result = run_tool([tool, *options, "-"], input=text, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise MlirError(f"mlir-opt {' '.join(options)} failed:\n{result.stderr}")
    return result.stdout


def workgroup_pipeline(chip: str, igc_options: str = "", binary_format: str | None = "isa") -> str:
    """The pipeline option taking a workgroup-level XeGPU module to a `gpu.binary` for `chip`: SPIR-V with
    `binary_format` "isa", with None the device binary ocloc builds with the driver options `igc_options`."""
    options = f"xegpu-op-level=workgroup zebin-chip={chip}" + (f" binary-format={binary_format}" if binary_format
                                                                else "")
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


@dataclass(frozen=True)
class UpstreamBuild:
    """What upstream's pipeline and Intel's compiler made of an exported kernel: the disassembled build and the
    seconds it took (mlir-opt with the ocloc build it runs, and the disassembly)."""
    build: ocloc.GpuBuild
    seconds: float


def zebin(text: str, chip: str, igc_options: str = "") -> bytes:
    """The device binary upstream's pipeline makes of the workgroup-level module `text` for `chip`, built by ocloc
    with the driver option `igc_options` (the pipeline passes none of its own: a GRF mode must be given here)."""
    if len(igc_options.split()) > 1:
        # ocloc 26.27 gets them as `-options "A B"`, quotes included, and IGC misses the first: the large register
        # file followed by a second option built with 128 GRFs
        raise NotImplementedError(f"upstream_mlir.zebin with more than one driver option ({igc_options}): upstream's "
                                  "pipeline hands them to ocloc in quotes, and IGC misses the first")
    lowered = run_mlir_opt(text, workgroup_pipeline(chip, igc_options, binary_format=None))
    found = ZEBIN.search(lowered)
    if found is None:
        raise MlirError("upstream's pipeline made no gpu.binary with a device binary")
    return unescape(found.group(1))


def gpu_build(text: str, target: Target, igc_options: str = "") -> UpstreamBuild:
    """The workgroup-level module `text` through upstream's pipeline to a zebin for `target`'s ocloc device, with
    the driver options `igc_options`, disassembled like our builds (ocloc.GpuBuild: ISA, GRFs, spilled bytes)."""
    start = time.perf_counter()
    build = ocloc.disassemble(zebin(text, target.ocloc_device, igc_options), target)
    return UpstreamBuild(build, time.perf_counter() - start)
