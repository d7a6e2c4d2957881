"""Subgroup-level XeGPU IR without the barriers that order nothing.

wg-to-sg brackets each exchange through shared local memory with barriers of its own (after the stores, and after
the loads where the buffer is written again), and the workgroup level put its own where global accesses conflict
(barriers.py). Between two exchanges through different buffers, or after a barrier with no access before the next,
such a barrier orders nothing, yet every one costs: each subgroup waits for the slowest, and the OpenCL CPU
compiler splits the kernel at each barrier, saving every value live across it (a tree of rolls through SLM, the
argmax over 48 rows of two subgroups, built in 9 s with 20 barriers; docs/performance.md "Driver builds").

The kernel's own barriers (`barrier()`) stay as written. A barrier in a block orders the accesses since the
barrier before it that stays (`earlier`) against those up to the next barrier (`later`): it is needless when no
access of one conflicts with an access of the other. Two accesses conflict when one writes and they may touch the
same memory: the same SLM allocation, or the same global array (different array arguments are taken not to alias,
as the workgroup level takes them). What the window cannot see counts as conflicting: an op with regions that
touches memory, a fence or a barrier in it, and, in a loop's or a branch's block, whatever lies before its first
barrier or after its last (another iteration's, or the enclosing block's). Ops declare their effects
(ir/effects.py); which memory an access touches is its descriptor's base (analysis.accessed_arrays).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import core_ops as C
from ...ir import xegpu_ops as G
from ...ir import xegpu_scatter_ops as GS
from ...ir.analysis import accessed_arrays, sources
from ...ir.core import Block, FuncOp, walk
from ...ir.effects import ALLOC, PREFETCH, READ, WRITE, memory_accesses

UNSEEN = None  # an access the window cannot place: it conflicts with every access


@dataclass(frozen=True)
class Touch:
    memory: frozenset  # the arrays or SLM allocations it may touch
    writes: bool

    def conflicts(self, other: "Touch") -> bool:
        return (self.writes or other.writes) and not self.memory.isdisjoint(other.memory)


class Window:
    """The accesses of a stretch of a block between barriers, or UNSEEN among them."""

    def __init__(self):
        self.touches: list = []

    def conflicts(self, later: "Window") -> bool:
        return any(a is UNSEEN or b is UNSEEN or a.conflicts(b) for a in self.touches for b in later.touches)


class NeedlessBarriers:
    def __init__(self, func: FuncOp):
        self.func = func
        self.bases = sources(func, (G.CreateNdDescOp, GS.CreateDescOp), (G.UpdateNdOffsetOp, GS.UpdateOffsetOp))

    def drop(self, block: Block) -> None:
        """Drops the needless barriers of `block` (module docstring); then those of the blocks nested in it."""
        bounded = block is self.func.body
        ops = list(block.ops)
        barriers = [i for i, op in enumerate(ops) if isinstance(op, C.BarrierOp)]
        earlier = self.window(ops[:barriers[0]] if barriers else [], seen=bounded)
        for n, i in enumerate(barriers):
            end = barriers[n + 1] if n + 1 < len(barriers) else len(ops)
            later = self.window(ops[i + 1:end], seen=bounded or n + 1 < len(barriers))
            if ops[i].by_user or earlier.conflicts(later):
                earlier = later
            else:
                ops[i].erase()
                earlier.touches += later.touches
        for op in block.ops:
            for region in op.regions:
                self.drop(region.block)

    def window(self, ops: list, seen: bool) -> Window:
        """The accesses of `ops`; with UNSEEN where the stretch reaches past what its block shows (`seen` False)."""
        window = Window()
        if not seen:
            window.touches.append(UNSEEN)
        for op in ops:
            window.touches += self.touches(op)
        return window

    def touches(self, op) -> list:
        if op.regions:
            return [UNSEEN] if any(nested.effects for region in op.regions for nested in walk(region.block)) else []
        if any(e.kind not in (READ, WRITE, ALLOC, PREFETCH) for e in op.effects):
            return [UNSEEN]
        touched = [(accessed_arrays(self.bases, operand), effect.kind == WRITE)
                   for effect, operand in memory_accesses(op)]
        return [Touch(memory, written) if memory else UNSEEN for memory, written in touched]


def drop_needless_barriers(func: FuncOp) -> FuncOp:
    """Subgroup-level `func` without the barriers that order no conflicting accesses (module docstring)."""
    NeedlessBarriers(func).drop(func.body)
    return func
