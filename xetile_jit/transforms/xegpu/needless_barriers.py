"""Subgroup-level XeGPU IR without the barriers that order nothing.

wg-to-sg brackets each exchange through shared local memory with barriers of its own (after the stores, and after
the loads where the buffer is written again), and the workgroup level put its own where global accesses conflict
(barriers.py). Between two exchanges through different buffers, or after a barrier with no access before the next,
such a barrier orders nothing, yet every one costs: each subgroup waits for the slowest, and the OpenCL CPU
compiler splits the kernel at each barrier, saving every value live across it (a tree of rolls through SLM, the
argmax over 48 rows of two subgroups, built in 9 s with 20 barriers; docs/performance.md "Driver builds").

The kernel's own barriers (`barrier()`) stay as written. A barrier in a block orders the accesses since the
barrier before it that stays (`earlier`) against those up to the next barrier (`later`): it is needless when no
access of one conflicts with an access of the other (access_windows.py says which conflict, and what a window
cannot see).
"""
from __future__ import annotations

from ...ir import core_ops as C
from ...ir.core import Block, FuncOp
from .access_windows import Accesses


class NeedlessBarriers:
    def __init__(self, func: FuncOp):
        self.func = func
        self.accesses = Accesses(func)

    def drop(self, block: Block) -> None:
        """Drops the needless barriers of `block` (module docstring); then those of the blocks nested in it."""
        bounded = block is self.func.body
        ops = list(block.ops)
        barriers = [i for i, op in enumerate(ops) if isinstance(op, C.BarrierOp)]
        earlier = self.accesses.window(ops[:barriers[0]] if barriers else [], seen=bounded)
        for n, i in enumerate(barriers):
            end = barriers[n + 1] if n + 1 < len(barriers) else len(ops)
            later = self.accesses.window(ops[i + 1:end], seen=bounded or n + 1 < len(barriers))
            if ops[i].by_user or earlier.conflicts(later):
                earlier = later
            else:
                ops[i].erase()
                earlier.touches += later.touches
        for op in block.ops:
            for region in op.regions:
                self.drop(region.block)


def drop_needless_barriers(func: FuncOp) -> FuncOp:
    """Subgroup-level `func` without the barriers that order no conflicting accesses (module docstring)."""
    NeedlessBarriers(func).drop(func.body)
    return func
