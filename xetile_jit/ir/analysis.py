"""Dataflow over the IR: where a tile or tensor descriptor comes from, through updates, loops and branches;
which values loops and branches make one (they must share a layout or a cut)."""
from __future__ import annotations

from .core import FuncOp, Value, walk
from .core_ops import ForOp, IfOp


def viewed_array(memref: Value) -> Value:
    """The array argument a memref views, through the view ops (`views = True`: memref.transpose, memref.subview,
    memref.reinterpret_cast). Views of one array may overlap."""
    while getattr(memref.owner, "views", False):
        memref = memref.owner.operands[0]
    return memref


def may_be_empty(memref: Value) -> bool:
    """Whether `memref` views a slice that may lie outside its array (`may_be_empty`: memref.subview of a batched
    array): its matrix then has no rows."""
    while getattr(memref.owner, "views", False):
        if getattr(memref.owner, "may_be_empty", False):
            return True
        memref = memref.owner.operands[0]
    return False


def carried_groups(op):
    """The values a loop or branch makes one: each init, body argument, yielded value and result of an
    scf.for; each result of an scf.if with what both regions yield for it."""
    if isinstance(op, ForOp):
        yields = op.body.terminator.operands
        yield from (list(group) for group in zip(op.operands[3:], op.body.args[1:], yields, op.results))
    elif isinstance(op, IfOp):
        for i, result in enumerate(op.results):
            yield [result] + [region.block.terminator.operands[i] for region in op.regions]


class UnionFind:
    """Classes of values; `union` joins those for which `keep(value)` holds."""

    def __init__(self, keep):
        self.keep = keep
        self.parent: dict[Value, Value] = {}

    def find(self, v: Value) -> Value:
        while self.parent.get(v, v) is not v:
            v = self.parent[v]
        return v

    def union(self, *values: Value) -> None:
        roots = [self.find(v) for v in values if self.keep(v)]
        for r in roots[1:]:
            if r is not roots[0]:
                self.parent[r] = roots[0]


def sources(func: FuncOp, creators, updaters) -> dict[Value, frozenset]:
    """For every value: the base operands (operand 0) of the `creators` ops it may come from; `updaters` pass
    their operand 0's sources on to their result, as do loop-carried values and branch results."""
    found: dict[Value, frozenset] = {}

    def add(dst: Value, more: frozenset) -> bool:
        new = found.get(dst, frozenset()) | more
        changed = new != found.get(dst, frozenset())
        found[dst] = new
        return changed

    def flow(dst: Value, src: Value) -> bool:
        return add(dst, found.get(src, frozenset()))

    changed = True
    while changed:
        changed = False
        for op in walk(func.body):
            if isinstance(op, creators):
                changed |= add(op.result, frozenset([op.operands[0]]))
            elif isinstance(op, updaters):
                changed |= flow(op.result, op.operands[0])
            else:
                for group in carried_groups(op):
                    for value in group:
                        changed |= flow(group[0], value)
                    for value in group[1:]:
                        changed |= flow(value, group[0])
    return found
