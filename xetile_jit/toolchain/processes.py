"""Running the toolchain's executables (ocloc, iga64, mlir-opt, spirv-val) from the process that compiles.

That process usually holds the OpenCL runtime, its built programs and often torch: hundreds of MB mapped. Python
starts a child by `posix_spawn` (vfork and exec: the caller's memory is not copied) only when it is given the
executable's path, keeps the caller's descriptors (close_fds=False) and changes no directory (no cwd); otherwise its
own fork-and-exec may fork the caller (it did, from such a process, under strace), copying its page tables, and the
child takes copy-on-write faults until it execs. So the tools run by path, given absolute file paths rather than a
working directory. `spirv-val` of an 11 KB module, from a process that had launched a kernel, cost 4-6 ms of CPU
time in the caller and 7-11 ms in the child when forked, and 0.7-1.0 ms and 5-6 ms by `posix_spawn` (AVX2 EPYC,
2026-12-02).

Keeping the descriptors is safe here: Python opens its own files and pipes non-inheritable (PEP 446), so a tool
inherits only what a C library opened inheritable, and every tool run here is short-lived.
"""
from __future__ import annotations

import shutil
import subprocess


def run_tool(command: list, **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run(command, **kwargs)` by `posix_spawn` (module docstring): the executable by its path, the
    caller's inheritable descriptors kept. `kwargs` must not set cwd, which would make Python fork."""
    executable = shutil.which(command[0]) or command[0]
    return subprocess.run([executable, *command[1:]], close_fds=False, **kwargs)
