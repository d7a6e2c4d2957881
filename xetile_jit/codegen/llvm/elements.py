"""to-llvm of the general memory path: a lane's part of a block read or written one element at a time (XeGPU RFC
load_nd/store_nd where no 2D block message can address the block: the block-IO rules of the Target, an unaligned
start, 8-bit transposes), each element's address clamped into the array and its access masked by the bounds.

A lane's component k sits at block position `position(layout, k)` (simt_ops.LaneLayout: column groups, then rows,
then the lane's chunk). On GPU targets the components are unrolled: registers, no private memory. On the CPU
targets (Target.element_loops) they are a loop over k through a private array: the OpenCL CPU compiler's build
time grows with straight-line code, and a 13x37 f16 add (48 components a lane, three arrays) was 4,900 lines of
LLVM IR and a 10 s driver build unrolled.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir import simt_ops as S
from ...target.targets import MAX_VECTOR_COMPONENTS
from .block_messages import scalar_type
from .context import LoweringContext
from .core import I32, I64, clamp, counted_loop, from_storage, literal, to_storage, within
from .descriptors import Descriptors
from .lanes import PrivateBlock, in_block


class Elements:
    """The element path of one kernel, on its `descriptors`."""

    def __init__(self, context: LoweringContext, descriptors: Descriptors):
        self.context, self.descriptors = context, descriptors

    @property
    def builder(self) -> ir.IRBuilder:
        return self.context.builder

    @property
    def lanes(self):
        return self.context.lanes

    def element(self, tdesc, row: ir.Value, col: ir.Value, valid=None):
        """The address of element (row, col) of the descriptor's block, clamped into the array, and whether
        the element really is inside it (and inside the block's `valid` part, when given)."""
        b = self.builder
        m = self.descriptors.memref(tdesc)
        inside = ir.Constant(ir.IntType(1), 1) if valid is None else in_block(b, row, col, valid)
        row = b.add(self.descriptors.offset(tdesc, 1), row)
        col = b.add(self.descriptors.offset(tdesc, 0), col)
        inside = b.and_(inside, b.and_(within(b, row, m.rows), within(b, col, m.cols)))
        return m.element_pointer(b, clamp(b, row, m.rows), clamp(b, col, m.cols)), inside

    def looped(self, layout: S.LaneLayout, dtype) -> bool:
        """Whether the components go through a private array in a loop (module docstring); not for i1, whose
        vectors are bit-packed in memory while an array of them takes a byte each."""
        return self.context.target.element_loops and not layout.replicated and layout.per_lane > 1 and dtype.bits > 1

    # ---- loads and stores ------------------------------------------------------------------------------------
    def load(self, op):
        if self.looped(op.layout, op.result.type.dtype):
            return self.load_looped(op)
        tdesc = op.operands[0]
        positions = self.lanes.positions(op.layout, op.transpose)
        items = [self.load_element(op, tdesc, row, col) for row, col in positions]
        return self.lanes.assemble(items)

    def load_element(self, op, tdesc, row: ir.Value, col: ir.Value) -> ir.Value:
        """Element (row, col) of the block, or the padding outside the array."""
        b = self.builder
        dtype = op.result.type.dtype
        address, inside = self.element(tdesc, row, col)
        pad = ir.Constant(scalar_type(op.result.type), literal(op.padding, dtype))
        return b.select(inside, from_storage(b, b.load(address, name="element"), dtype), pad)  # named: tests find it

    def load_looped(self, op):
        """The components in a loop into a private array, then read as the lane value (a vector, or the array
        itself as a PrivateBlock beyond a vector's size)."""
        tdesc, count = op.operands[0], op.layout.per_lane
        block = PrivateBlock(self.lanes.private(ir.ArrayType(scalar_type(op.result.type), count)))

        def component(b, k, _):
            row, col = self.lanes.position(op.layout, b.zext(k, I64))
            if op.transpose:
                row, col = col, row
            b.store(self.load_element(op, tdesc, row, col), b.gep(block.pointer, [ir.Constant(I32, 0), k]))

        counted_loop(self.builder, count, None, component)
        return block if count > MAX_VECTOR_COMPONENTS else self.lanes.read_run(block, 0, count)

    def store(self, op) -> None:
        if self.looped(op.layout, op.operands[0].type.dtype):
            return self.store_looped(op)
        value, tdesc = op.operands
        for (row, col), item in zip(self.lanes.positions(op.layout), self.lanes.elements(self.context.values[value])):
            self.store_element(op, tdesc, row, col, item)

    def store_element(self, op, tdesc, row: ir.Value, col: ir.Value, item: ir.Value) -> None:
        """`item` into element (row, col) of the block when it lies in the array and the block's valid part."""
        address, inside = self.element(tdesc, row, col, op.valid)
        with self.builder.if_then(inside):
            self.builder.store(to_storage(self.builder, item, op.operands[0].type.dtype), address)

    def store_looped(self, op) -> None:
        """The lane value into a private array (where it is not one already), then its components in a loop."""
        value, tdesc = op.operands
        lane_value, count = self.context.values[value], op.layout.per_lane
        block = lane_value if isinstance(lane_value, PrivateBlock) else self.spilled(lane_value, count)

        def component(b, k, _):
            row, col = self.lanes.position(op.layout, b.zext(k, I64))
            self.store_element(op, tdesc, row, col, b.load(b.gep(block.pointer, [ir.Constant(I32, 0), k])))

        counted_loop(self.builder, count, None, component)

    def spilled(self, vector: ir.Value, count: int) -> PrivateBlock:
        """A vector lane value stored into a new private array, in one store."""
        b = self.builder
        block = PrivateBlock(self.lanes.private(ir.ArrayType(vector.type.element, count)))
        b.store(vector, b.bitcast(block.pointer, vector.type.as_pointer()))
        return block
