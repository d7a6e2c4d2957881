"""Subgroup-level XeGPU IR with each exchange's stores as early as their values allow.

wg-to-sg writes each exchange through shared local memory as its stores, a barrier and its loads, one exchange
after another, each through a buffer of its own. Where a later exchange's values are known before an earlier one's
barrier (a reduction tree over several operands: argmax's values and indices, welford's three sums, at each
stride; two independent row reductions), the later stores move above that barrier, which then orders both
exchanges' stores before their loads: the barrier before the later loads orders nothing, and drop_needless_barriers
drops it.

A store moves above a compiler barrier (never the kernel's own `barrier()`) when it writes only wg-to-sg's SLM
buffers, no access between the barrier before that one and the store's place conflicts with it (access_windows.py;
the stores that move with it were beside it, unordered between subgroups, already), and each of its operands is
defined before the barrier, or by a pure op after it whose operands are (its descriptor), which moves with it.
Barriers are taken last to first, so a store rises over several.
"""
from __future__ import annotations

from ...ir import core_ops as C
from ...ir import xegpu_ops as G
from ...ir.core import Block, FuncOp, Operation, Value
from .access_windows import UNSEEN, Accesses, Window


class ExchangeStores:
    def __init__(self, func: FuncOp):
        self.func = func
        self.accesses = Accesses(func)

    def hoist(self, block: Block) -> None:
        """Hoists the exchange stores of `block` (module docstring), then those of the blocks nested in it."""
        for barrier in reversed([op for op in block.ops if isinstance(op, C.BarrierOp) and not op.by_user]):
            self.hoist_over(block, barrier)
        for op in block.ops:
            for region in op.regions:
                self.hoist(region.block)

    def hoist_over(self, block: Block, barrier: C.BarrierOp) -> None:
        """Moves above `barrier` the stores between it and the next barrier that may go there."""
        ops = list(block.ops)
        at = ops.index(barrier)
        start = max((i for i, op in enumerate(ops[:at]) if isinstance(op, C.BarrierOp)), default=-1)
        before = self.accesses.window(ops[start + 1:at], seen=block is self.func.body or start >= 0)
        defined = set(ops[:at])
        passed = Window()  # the accesses between the barrier and the store
        for op in ops[at + 1:]:
            if isinstance(op, C.BarrierOp):
                break
            moving = self.movable(op, defined)
            touches = Window(self.accesses.touches(op))
            if moving is None or not exchange_writes(touches) or before.conflicts(touches) or \
                    passed.conflicts(touches):
                passed.touches += touches.touches
                continue
            for moved in moving:
                block.insert_before(barrier, moved.detach())
                defined.add(moved)

    def movable(self, op: Operation, defined: set) -> list[Operation] | None:
        """A store and the pure ops after the barrier that give its operands (theirs defined before it), in order,
        or None where it may not move (module docstring)."""
        if not isinstance(op, G.StoreNdOp):
            return None
        producers = []
        for v in op.operands:
            if defined_before(v, op.parent, defined):
                continue
            producer = v.owner
            if not producer.pure or producer.regions or \
                    not all(defined_before(u, op.parent, defined) for u in producer.operands):
                return None
            producers.append(producer)
        return [*dict.fromkeys(producers), op]


def exchange_writes(touches: Window) -> bool:
    """Whether the touches are writes into wg-to-sg's SLM buffers alone."""
    return bool(touches.touches) and all(
        touch is not UNSEEN and touch.writes and
        all(isinstance(m.owner, C.SlmAllocOp) and not m.owner.by_user for m in touch.memory)
        for touch in touches.touches)


def defined_before(v: Value, block: Block, defined: set) -> bool:
    """Whether `v` is defined before the barrier: an argument of a block, an op of an enclosing block (SSA dominance:
    no op nested in one of `block`'s ops defines an operand of `block`'s), or one of `defined`."""
    owner = v.owner
    return not isinstance(owner, Operation) or owner.parent is not block or owner in defined


def hoist_exchange_stores(func: FuncOp) -> FuncOp:
    """Subgroup-level `func` with exchange stores moved above earlier barriers where they may go (module
    docstring)."""
    ExchangeStores(func).hoist(func.body)
    return func
