"""XETILE_TIMING=1: the time of each compile stage on stderr (docs/guide.md "Debugging and IR dumps"); XETILE_TIMING=
a file's path: the same lines appended to that file, so that a run whose stderr is captured or read (a test suite's
under pytest, where `-s` breaks the tests that read stderr) still gives every stage; processes sharing the file
append whole lines.

One line per stage as it ends, `xetile timing: <kernel>: <stage> <ms> ms`: the trace, each lowering pass
(compiler/pipeline.py), the LLVM IR, the SPIR-V, the GPU ISA (ocloc, GPU targets), the disk cache lookup, the
driver's build of the SYCL program, and the first launch of each launch plan (with the driver's build where the plan
did not make it: jit/kernel.py Kernel.compiled_for builds a kernel whose lanes exchange values first; a plan's later
launches take the hot path, which is not timed). Only compiles and first launches read the variable. Each stage is
also the stage a progress line shows (runtime/progress.py), with or without the variable.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time

from . import progress


def enabled() -> bool:
    return os.environ.get("XETILE_TIMING", "0") not in ("", "0")


@contextlib.contextmanager
def stage(kernel: str, name: str):
    """Times the block as stage `name` of `kernel` when XETILE_TIMING is set (module docstring); a block that raises
    prints nothing."""
    progress.at_stage(name)
    if not enabled():
        yield
        return
    start = time.perf_counter()
    yield
    report(f"xetile timing: {kernel}: {name} {(time.perf_counter() - start) * 1e3:.1f} ms\n")


def report(line: str) -> None:
    """`line` to stderr (XETILE_TIMING=1) or appended to the file XETILE_TIMING names."""
    where = os.environ.get("XETILE_TIMING")
    if where == "1":
        sys.stderr.write(line)
        return
    with open(where, "a") as log:  # one write of one line: appends from several processes do not interleave
        log.write(line)
