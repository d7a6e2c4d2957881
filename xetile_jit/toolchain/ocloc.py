"""The Intel GPU compiler, offline: SPIR-V -> ISA for an Xe target, to check the GPU code on machines without a
GPU. The builtin ABI picks the compiler: "legacy" modules go to Debian 12's 2022 stack (`ocloc`, disassembled with
`iga64`, on the PATH), "spirv" modules to the current stack (toolchain/gpu_compiler.py), whose `ocloc disasm` writes the
ISA text itself and whose `spirv-val` knows the 2025 extensions."""
from __future__ import annotations

import glob
import os
import re
import shutil
import tempfile
from dataclasses import dataclass

from . import gpu_compiler
from .processes import run_tool
from ..target.targets import LARGE_GRF, Target


def tools(target: Target) -> dict[str, str] | None:
    """The executables that check `target`'s code ("ocloc", and "iga64" for the legacy stack), None when they are
    not installed or the target has no ocloc device."""
    if target.ocloc_device is None:
        return None
    if target.abi.legacy_stack:
        found = {tool: shutil.which(tool) for tool in ("ocloc", "iga64")}
    else:
        found = {"ocloc": gpu_compiler.find_tool("ocloc")}
    return found if all(found.values()) else None


def available(target: Target) -> bool:
    return tools(target) is not None


def identity(target: Target) -> str:
    """Which compiler makes `target`'s ISA, as a cache key part: its ocloc's path and modification time, "" when
    none is installed (a compile then has no "isa")."""
    found = tools(target)
    if found is None:
        return ""
    return f"{found['ocloc']}@{os.stat(found['ocloc']).st_mtime_ns}"


def spirv_validator(target: Target) -> str | None:
    """The spirv-val that knows `target`'s SPIR-V: the current stack's for the 2025 extensions, else the PATH's."""
    if target.abi.spirv_extensions:
        return gpu_compiler.find_tool("spirv-val")
    return shutil.which("spirv-val")


@dataclass(frozen=True)
class GpuBuild:
    """What Intel's compiler made of a module: the ISA text of every kernel, the register file size it chose (GRFs
    per thread) and the bytes a thread spills to scratch (the current stack's zeInfo says; None from the 2022 stack,
    whose ISA still shows each scratch message)."""
    isa: str
    grf_count: int
    spill_bytes: int | None


def gpu_build(spirv: bytes, target: Target, options: str = "") -> GpuBuild | None:
    """`spirv` built for `target` with the driver `options`, disassembled; None without the tools or without an
    ocloc device for the target."""
    found = tools(target)
    if found is None:
        return None
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "x.spv"), "wb") as f:
            f.write(spirv)
        build = run_tool([found["ocloc"], "compile", "-file", os.path.join(work, "x.spv"), "-spirv_input", "-device",
                          target.ocloc_device, "-out_dir", work, "-output", "o"]
                         + (["-options", options] if options else []), capture_output=True, text=True)
        if "Build succeeded" not in build.stdout:
            raise RuntimeError(f"ocloc could not build the {target.name} SPIR-V:\n{build.stdout}{build.stderr}")
        (program,) = glob.glob(os.path.join(work, "o*.bin"))
        return disassembled(program, target, found, options)


def disassemble(program: bytes, target: Target) -> GpuBuild:
    """A device binary (zebin) another compiler made for `target` with the current stack's ocloc (upstream MLIR's
    pipeline), read like ours."""
    found = tools(target)
    if found is None or "iga64" in found:
        raise RuntimeError(f"no current-stack ocloc disassembles {target.name} binaries here")
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "program.bin")
        with open(path, "wb") as f:
            f.write(program)
        return disassembled(path, target, found, "")


def disassembled(program: str, target: Target, found: dict[str, str], options: str) -> GpuBuild:
    """The build of the device binary at `program` (made with the driver `options`), disassembled beside it."""
    work = os.path.dirname(program)
    dump = os.path.join(work, "dis")
    run_tool([found["ocloc"], "disasm", "-file", program, "-device", target.ocloc_device, "-dump", dump],
             capture_output=True, check=True)
    if "iga64" not in found:
        return current_stack_build(dump)
    heaps = sorted(glob.glob(os.path.join(dump, "*_KernelHeap.dat")))
    isa = "\n".join(run_tool([found["iga64"], "-d", f"-p={target.iga_platform}", heap],
                             capture_output=True, text=True, check=True).stdout for heap in heaps)
    grfs = target.large_grf_count if LARGE_GRF in options else target.grf_count
    return GpuBuild(isa, grfs, None)


def current_stack_build(dump: str) -> GpuBuild:
    """The current stack's disassembly dump: `.text.<kernel>.asm` files and the zeInfo, whose execution
    environment names the GRF count and, when a kernel spills, its `spill_size` (the largest over the kernels)."""
    isa = "\n".join(open(path).read() for path in sorted(glob.glob(os.path.join(dump, ".text.*.asm"))))
    info = open(os.path.join(dump, ".ze_info")).read()
    grfs = max(int(n) for n in re.findall(r"^\s*grf_count:\s*(\d+)", info, re.MULTILINE))
    spills = [int(n) for n in re.findall(r"^\s*spill_size:\s*(\d+)", info, re.MULTILINE)]
    return GpuBuild(isa, grfs, max(spills, default=0))
