"""Dataflow over the IR: where a tile or tensor descriptor comes from, through updates, loops and branches."""
from __future__ import annotations

from .core import FuncOp, Value, walk
from .core_ops import ForOp, IfOp


def sources(func: FuncOp, creators, updaters) -> dict[Value, frozenset]:
    """For every value: the base operands (operand 0) of the `creators` ops it may come from; `updaters` pass
    their operand 0's sources on to their result, as do loop-carried values and branch results."""
    found: dict[Value, frozenset] = {}

    def flow(dst: Value, src: Value) -> bool:
        new = found.get(dst, frozenset()) | found.get(src, frozenset())
        changed = new != found.get(dst, frozenset())
        found[dst] = new
        return changed

    changed = True
    while changed:
        changed = False
        for op in walk(func.body):
            if isinstance(op, creators):
                found[op.result] = frozenset([op.operands[0]])
            elif isinstance(op, updaters):
                changed |= flow(op.result, op.operands[0])
            elif isinstance(op, ForOp):
                yields = op.body.terminator.operands
                for init, arg, yielded, result in zip(op.operands[3:], op.body.args[1:], yields, op.results):
                    changed |= flow(arg, init) | flow(arg, yielded) | flow(result, arg)
            elif isinstance(op, IfOp):
                for region in op.regions:
                    for yielded, result in zip(region.block.terminator.operands, op.results):
                        changed |= flow(result, yielded)
    return found
