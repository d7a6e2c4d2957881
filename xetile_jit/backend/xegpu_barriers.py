"""Barriers for workgroup program order (XeTile RFC: tile ops act on whole workgroup tiles, one after another).

After wg-to-sg every subgroup runs its own part of each op. Two accesses of one array, one of them a write,
through different descriptors may touch an element in different subgroups, so the later waits at a
gpu.barrier for the earlier: a tile loaded and stored back through the same descriptor is owned alike and
needs none. A loop whose body writes an array also orders its iterations. Different array arguments are
taken not to alias (as C's `restrict`); shared local memory is ordered by the layout conversions' own
barriers. Which ops read or write memory, and through which operand, is what they declare (ir/effects.py).
A branch on a value that depends on the subgroup id (wg-to-sg's "first subgroup that shares the data") runs in
some subgroups only, so a barrier inside it would wait forever: such a branch is ordered as one access, with the
barrier before it; inside, one subgroup runs its accesses in program order.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import core_ops as C
from ..ir import xegpu_ops as G
from ..ir.analysis import sources, viewed_array
from ..ir.core import Block, FuncOp, Value, walk
from ..ir.effects import SLM, WRITE, memory_accesses, synchronizes
from ..ir.types import SlmMemRefType


@dataclass(frozen=True)
class Access:
    tdesc: Value
    arrays: frozenset
    writes: bool

    def conflicts(self, other: "Access") -> bool:
        return ((self.writes or other.writes) and self.tdesc is not other.tdesc
                and not self.arrays.isdisjoint(other.arrays))


class Barriers:
    def __init__(self, func: FuncOp):
        self.func = func
        self.arrays = sources(func, G.CreateNdDescOp, G.UpdateNdOffsetOp)
        self.divergent = subgroup_dependent(func)

    def access(self, op) -> list[Access]:
        """The global memory `op` reads or writes, through which descriptors."""
        found: dict[Value, bool] = {}  # descriptor -> written
        for effect, tdesc in memory_accesses(op):
            if effect.memory != SLM:
                found[tdesc] = found.get(tdesc, False) or effect.kind == WRITE
        out = []
        for tdesc, written in found.items():
            arrays = frozenset(viewed_array(a) for a in self.arrays[tdesc] if not isinstance(a.type, SlmMemRefType))
            if arrays:
                out.append(Access(tdesc, arrays, written))
        return out

    def order(self, block: Block, pending: list[Access]) -> list[Access]:
        """Inserts the barriers `block` needs after the accesses `pending`; the accesses still unordered after it."""
        for op in list(block.ops):
            if synchronizes(op):
                pending = []
            elif isinstance(op, C.ForOp):
                body = op.regions[0].block
                pending = pending + self.order(body, pending + self.accesses(body))
            elif isinstance(op, C.IfOp) and op.operands[0] in self.divergent:
                inside = [a for region in op.regions for a in self.accesses(region.block)]
                if any(access.conflicts(earlier) for access in inside for earlier in pending):
                    block.insert_before(op, C.BarrierOp(loc=op.loc))
                    pending = []
                pending = pending + inside
            elif op.regions:
                pending = pending + [a for region in op.regions for a in self.order(region.block, list(pending))]
            accesses = self.access(op)
            if any(access.conflicts(earlier) for access in accesses for earlier in pending):
                block.insert_before(op, C.BarrierOp(loc=op.loc))
                pending = []
            pending = pending + accesses
        return pending

    def accesses(self, block: Block) -> list[Access]:
        """Every access in `block`, nested ones too: what the previous iteration of a loop left unordered."""
        return [a for op in walk(block) for a in self.access(op)]


def subgroup_dependent(func: FuncOp) -> set[Value]:
    """The values computed from the subgroup id: they may differ between the subgroups of a workgroup."""
    found: set[Value] = set()
    for op in walk(func.body):
        if isinstance(op, C.SubgroupIdOp) or any(v in found for v in op.operands):
            found.update(op.results)
    return found


def insert_barriers(func: FuncOp) -> FuncOp:
    if func.num_subgroups and func.num_subgroups > 1:
        Barriers(func).order(func.body, [])
    return func
