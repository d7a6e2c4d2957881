"""The memory a stretch of subgroup-level XeGPU IR touches between barriers, for the passes that move accesses or
barriers (exchange_stores.py, needless_barriers.py, exchange_buffers.py).

Two accesses conflict when one writes and they may touch the same memory: the same SLM allocation, or the same global
array (different array arguments are taken not to alias, as the workgroup level takes them). What a window cannot
see counts as conflicting (UNSEEN): an op with regions that touches memory, a fence or a barrier in it, and, in a
loop's or a branch's block, whatever lies before its first barrier or after its last (another iteration's, or the
enclosing block's). Ops declare their effects (ir/effects.py); which memory an access touches is its descriptor's
base (analysis.accessed_arrays).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import xegpu_ops as G
from ...ir import xegpu_scatter_ops as GS
from ...ir.analysis import accessed_arrays, sources
from ...ir.core import FuncOp, walk
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

    def __init__(self, touches=()):
        self.touches: list = list(touches)

    def conflicts(self, later: "Window") -> bool:
        return any(a is UNSEEN or b is UNSEEN or a.conflicts(b) for a in self.touches for b in later.touches)


class Accesses:
    """What the ops of one function touch (module docstring)."""

    def __init__(self, func: FuncOp):
        self.bases = sources(func, (G.CreateNdDescOp, GS.CreateDescOp), (G.UpdateNdOffsetOp, GS.UpdateOffsetOp))

    def window(self, ops: list, seen: bool) -> Window:
        """The accesses of `ops`; with UNSEEN where the stretch reaches past what its block shows (`seen` False)."""
        window = Window([] if seen else [UNSEEN])
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
