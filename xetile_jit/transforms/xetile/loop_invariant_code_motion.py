"""Loop-invariant code motion (upstream MLIR's `loop-invariant-code-motion`), on XeTile IR before layouts: an op of
an scf.for body that touches no memory and whose operands all come from outside the loop moves before the loop, so
it runs once. Triton-style kernels compute their masks in the loop (`offs_m[:, None] < M` at each K step), and a
1-D vector broadcast to a tile moves values between lanes wherever it is computed (layout propagation gives a
column of values the lanes of a column), so a mask computed at each step exchanged lanes at each step.

Moved: pure ops (`effects == ()`) without regions, whose speculative run when the loop runs no iteration is harmless
(integer division by 0 gives 0: ir/elementwise.py). Not moved: the debug ops, pure by their effects but visible
(an assert stops the kernel, a print prints), and ops under an `if` in the body. Inner loops first, so an op leaves
a nest as far as its operands allow.
"""
from __future__ import annotations

from ...ir.core import Block, FuncOp, Operation, Value, walk
from ...ir.core_ops import ForOp
from ...ir.debug_ops import DeviceAssertOp, DevicePrintOp

VISIBLE = (DeviceAssertOp, DevicePrintOp)  # pure by their effects, yet seen when they run


def hoist_loop_invariants(func: FuncOp) -> FuncOp:
    """Moves each loop's invariant ops before it (module docstring), innermost loops first."""
    for loop in reversed([op for op in walk(func.body) if isinstance(op, ForOp)]):
        hoist(loop)
    return func


def hoist(loop: ForOp) -> None:
    inside = defined_in(loop.body)
    for op in list(loop.body.ops):
        if movable(op) and not any(v in inside for v in op.operands):
            loop.parent.insert_before(loop, op.detach())
            inside.difference_update(op.results)


def movable(op: Operation) -> bool:
    return op.pure and not op.regions and not isinstance(op, VISIBLE) and bool(op.results)


def defined_in(block: Block) -> set[Value]:
    """The values a block and the regions in it define: its arguments and its ops' results, nested ones too."""
    values = set(block.args)
    for op in walk(block):
        values.update(op.results)
        for region in op.regions:
            values.update(region.block.args)
    return values
