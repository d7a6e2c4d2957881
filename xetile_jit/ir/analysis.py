"""Dataflow over the IR: where a tile or tensor descriptor comes from, through updates, loops and branches;
which values loops and branches make one (they must share a layout or a cut)."""
from __future__ import annotations

from math import gcd
from numbers import Integral

from .core import FuncOp, Value, walk
from .core_ops import BinaryOp, CastOp, ConstantOp, ForOp, IfOp, IndexCastOp, WhileOp
from .types import MemRefType


def viewed_array(memref: Value) -> Value:
    """The array argument a memref views, through the view ops (`views = True`: memref.transpose, memref.subview,
    memref.reinterpret_cast). Views of one array may overlap."""
    while getattr(memref.owner, "views", False):
        memref = memref.owner.operands[0]
    return memref


def accessed_arrays(bases: dict, operand: Value) -> frozenset:
    """The arrays (or SLM allocations) an access through `operand` may touch, through their views: a memref is its
    own base, a descriptor has those `sources` found for it (`bases`)."""
    found = {operand} if isinstance(operand.type, MemRefType) else bases[operand]
    return frozenset(viewed_array(base) for base in found)


def wg_layout(v: Value):
    """A value's layout: a tile's or tensor descriptor's is in its type, a vector's on the value."""
    return getattr(v.type, "layout", None) or v.layout


def workgroup_subgroups(func: FuncOp) -> int:
    """The subgroups of a workgroup, as the layouts of workgroup-level `func` say (the one count layout propagation
    gave them all); 1 without layouts."""
    for op in walk(func.body):
        for v in op.results:
            layout = wg_layout(v)
            if layout is not None and layout.sg_layout is not None:
                return layout.num_subgroups
    return 1


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
    scf.for; each result of an scf.if with what both regions yield for it; each init of an scf.while with the
    arguments of both its regions, what its condition forwards, what its body yields and the result."""
    if isinstance(op, ForOp):
        yields = op.body.terminator.operands
        yield from (list(group) for group in zip(op.operands[3:], op.body.args[1:], yields, op.results))
    elif isinstance(op, WhileOp):
        yield from (list(group) for group in zip(op.operands, op.before.args, op.before.terminator.operands[1:],
                                                 op.after.args, op.after.terminator.operands, op.results))
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


def known_multiples(func: FuncOp, creators, updaters, axis: int) -> dict[Value, int]:
    """For integer scalars and index values: a number each is known to be a multiple of (0: it is 0; 1: nothing
    known), from constants through +, -, *, % and casts, loop induction variables and loop-carried values; and for
    the descriptors the `creators` ops make and the `updaters` move, the multiple of their offset operand `axis`
    (what a 2D block message's alignment depends on). Optimistic for loops: every value starts as 0 and takes the
    gcd of what its rule or its loop joins say until nothing changes."""
    found: dict[Value, int] = {}
    arguments = set(func.args)

    def of(v: Value) -> int:
        """What is known of `v` so far: nothing of a kernel argument; anything (0) of a value no rule has reached
        yet: a loop-carried one (a fixed point from the top)."""
        return found.get(v, 1 if v in arguments else 0)

    def rule(op) -> int | None:
        if isinstance(op, ConstantOp) and isinstance(op.value, Integral) and not isinstance(op.value, bool):
            return abs(int(op.value))
        if isinstance(op, BinaryOp) and op.name in ("arith.addi", "arith.subi", "arith.remsi", "arith.remui"):
            return gcd(of(op.operands[0]), of(op.operands[1]))  # a % b = a - q * b
        if isinstance(op, BinaryOp) and op.name == "arith.muli":
            return of(op.operands[0]) * of(op.operands[1])
        if isinstance(op, (IndexCastOp, CastOp)) and op.name in ("arith.index_cast", "arith.extsi", "arith.extui"):
            return of(op.operands[0])
        if isinstance(op, creators):
            return of(op.operands[1 + axis])
        if isinstance(op, updaters):
            return gcd(of(op.operands[0]), of(op.operands[1 + axis]))
        return None

    changed = True
    while changed:
        changed = False
        for op in walk(func.body):
            if isinstance(op, ForOp):
                changed |= settle(found, [op.body.args[0]], gcd(of(op.operands[0]), of(op.operands[2])))
            for joined, *incoming in joins(op):
                changed |= settle(found, joined, gcd(*map(of, incoming)))
            value = rule(op)
            if value is None and not isinstance(op, (ForOp, IfOp, WhileOp)):
                value = 1  # an op no rule knows (a program id, a division, a load): nothing known
            if value is not None:
                changed |= settle(found, op.results, value)
    return found


def joins(op):
    """(the values a loop or branch defines, the values that flow into them): an scf.for's body argument and
    result take its init and what the body yields; an scf.if's result what each region yields; an scf.while's
    condition arguments take its init and what the body yields, its body arguments and results what the condition
    forwards."""
    if isinstance(op, ForOp):
        yields = op.body.terminator.operands
        yield from (([arg, result], init, value) for init, arg, value, result in
                    zip(op.operands[3:], op.body.args[1:], yields, op.results))
    elif isinstance(op, WhileOp):
        yield from (([arg], init, value) for init, arg, value in
                    zip(op.operands, op.before.args, op.after.terminator.operands))
        yield from (([arg, result], value) for arg, result, value in
                    zip(op.after.args, op.results, op.before.terminator.operands[1:]))
    elif isinstance(op, IfOp):
        for i, result in enumerate(op.results):
            yield ([result], *(region.block.terminator.operands[i] for region in op.regions))


def settle(found: dict, values, multiple: int) -> bool:
    changed = any(found.get(v) != multiple for v in values)
    found.update((v, multiple) for v in values)
    return changed
