"""XETILE_TIMING=1: the time of each compile stage on stderr (docs/guide.md "Debugging and IR dumps").

One line per stage as it ends, `xetile timing: <kernel>: <stage> <ms> ms`: the trace, each lowering pass
(compiler/pipeline.py), the LLVM IR, the SPIR-V, the GPU ISA (ocloc, GPU targets), the disk cache lookup, the
driver's build of the SYCL program, and the first launch of each launch plan (a plan's later launches take the
hot path, which is not timed). Only compiles and first launches read the variable. Each stage is also the stage
a progress line shows (runtime/progress.py), with or without the variable.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time

from . import progress


def enabled() -> bool:
    return os.environ.get("XETILE_TIMING") == "1"


@contextlib.contextmanager
def stage(kernel: str, name: str):
    """Times the block as stage `name` of `kernel` when XETILE_TIMING=1; a block that raises prints nothing."""
    progress.at_stage(name)
    if not enabled():
        yield
        return
    start = time.perf_counter()
    yield
    print(f"xetile timing: {kernel}: {name} {(time.perf_counter() - start) * 1e3:.1f} ms", file=sys.stderr)
