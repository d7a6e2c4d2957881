"""The Intel GPU compiler, offline: SPIR-V -> ISA for an Xe target with `ocloc`, disassembled with `iga64`
(Debian intel-opencl-icd and libigc-tools). Used to check the GPU code on machines without a GPU."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile

from .targets import Target


def available() -> bool:
    return all(shutil.which(tool) for tool in ("ocloc", "iga64"))


def gpu_isa(spirv: bytes, target: Target, options: str = "") -> str | None:
    """The disassembly of every kernel in `spirv` built for `target` with the driver `options`; None without the
    tools or without an ocloc device for the target (this ocloc knows no Xe2 device)."""
    if target.ocloc_device is None or not available():
        return None
    device, platform = target.ocloc_device, target.iga_platform
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "x.spv"), "wb") as f:
            f.write(spirv)
        build = subprocess.run(["ocloc", "compile", "-file", "x.spv", "-spirv_input", "-device", device,
                                "-output", "o"] + (["-options", options] if options else []),
                               cwd=work, capture_output=True, text=True)
        if "Build succeeded" not in build.stdout:
            raise RuntimeError(f"ocloc could not build the {target.name} SPIR-V:\n{build.stdout}{build.stderr}")
        (program,) = glob.glob(os.path.join(work, "o*.bin"))
        subprocess.run(["ocloc", "disasm", "-file", program, "-device", device, "-dump", "dis"], cwd=work,
                       capture_output=True, check=True)
        heaps = sorted(glob.glob(os.path.join(work, "dis", "*_KernelHeap.dat")))
        return "\n".join(subprocess.run(["iga64", "-d", f"-p={platform}", heap], capture_output=True, text=True,
                                        check=True).stdout for heap in heaps)
