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
from .core import I32, I64, counted_loop, from_storage, literal, to_storage
from .lanes import PrivateBlock


class ElementLowering:
    """Mixed into XeGPULowering (which gives builder, values, target, lane_id, memref, offset, within, clamp,
    elements, assemble, private, scalar_type)."""

    def positions(self, layout: S.LaneLayout, transpose=None) -> list[tuple[ir.Value, ir.Value]]:
        """(row, col) in the block, as i64, of each component of this lane (transposed: in the memory block)."""
        if layout.replicated:
            result = [(ir.Constant(I64, r), ir.Constant(I64, c)) for r, c in layout.elements(0)]
        else:
            result = [self.position(layout, ir.Constant(I64, k)) for k in range(layout.per_lane)]
        return [(c, r) for r, c in result] if transpose else result

    def position(self, layout: S.LaneLayout, k: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(row, col) in the block, as i64, of component `k` (i64) of this lane, for a layout that is not
        replicated: k = (group * rows + i) * chunk + e is row first_row + ly * i, column first_col + group * lx *
        chunk + e."""
        b = self.builder
        ly, lx, chunk = layout.grid
        rows = layout.block[0] // ly
        lane = b.zext(self.lanes.lane_id(), I64)
        first_row = b.udiv(lane, ir.Constant(I64, lx))
        first_col = b.mul(b.urem(lane, ir.Constant(I64, lx)), ir.Constant(I64, chunk))
        group, i, e = (b.udiv(k, ir.Constant(I64, rows * chunk)),
                       b.urem(b.udiv(k, ir.Constant(I64, chunk)), ir.Constant(I64, rows)),
                       b.urem(k, ir.Constant(I64, chunk)))
        return (b.add(first_row, b.mul(i, ir.Constant(I64, ly))),
                b.add(first_col, b.add(b.mul(group, ir.Constant(I64, lx * chunk)), e)))

    def element(self, tdesc, row: ir.Value, col: ir.Value, valid=None):
        """The address of element (row, col) of the descriptor's block, clamped into the array, and whether
        the element really is inside it (and inside the block's `valid` part, when given)."""
        b = self.builder
        m = self.memref(tdesc)
        inside = ir.Constant(ir.IntType(1), 1) if valid is None else self.in_block(row, col, valid)
        row = b.add(self.offset(tdesc, 1), row)
        col = b.add(self.offset(tdesc, 0), col)
        inside = b.and_(inside, b.and_(self.within(row, m.rows), self.within(col, m.cols)))
        return m.element_pointer(b, self.clamp(row, m.rows), self.clamp(col, m.cols)), inside

    def in_block(self, row: ir.Value, col: ir.Value, sizes) -> ir.Value:
        """Whether block position (row, col) lies in the leading `sizes` part."""
        b = self.builder
        return b.and_(b.icmp_signed("<", row, ir.Constant(I64, sizes[0])),
                      b.icmp_signed("<", col, ir.Constant(I64, sizes[1])))

    def looped(self, layout: S.LaneLayout, dtype) -> bool:
        """Whether the components go through a private array in a loop (module docstring); not for i1, whose
        vectors are bit-packed in memory while an array of them takes a byte each."""
        return self.target.element_loops and not layout.replicated and layout.per_lane > 1 and dtype.bits > 1

    # ---- loads and stores ------------------------------------------------------------------------------------
    def load_elements(self, op):
        if self.looped(op.layout, op.result.type.dtype):
            return self.load_elements_looped(op)
        tdesc = op.operands[0]
        items = [self.load_element(op, tdesc, row, col) for row, col in self.positions(op.layout, op.transpose)]
        return self.lanes.assemble(items)

    def load_element(self, op, tdesc, row: ir.Value, col: ir.Value) -> ir.Value:
        """Element (row, col) of the block, or the padding outside the array."""
        b = self.builder
        dtype = op.result.type.dtype
        address, inside = self.element(tdesc, row, col)
        pad = ir.Constant(self.scalar_type(op.result.type), literal(op.padding, dtype))
        return b.select(inside, from_storage(b, b.load(address, name="element"), dtype), pad)  # named: tests find it

    def load_elements_looped(self, op):
        """The components in a loop into a private array, then read as the lane value (a vector, or the array
        itself as a PrivateBlock beyond a vector's size)."""
        tdesc, count = op.operands[0], op.layout.per_lane
        block = PrivateBlock(self.lanes.private(ir.ArrayType(self.scalar_type(op.result.type), count)))

        def component(b, k, _):
            row, col = self.position(op.layout, b.zext(k, I64))
            if op.transpose:
                row, col = col, row
            b.store(self.load_element(op, tdesc, row, col), b.gep(block.pointer, [ir.Constant(I32, 0), k]))

        counted_loop(self.builder, count, None, component)
        return block if count > MAX_VECTOR_COMPONENTS else self.read_run(block, 0, count)

    def read_run(self, block: PrivateBlock, start: int, count: int) -> ir.Value:
        """Components start .. start + count - 1 of `block` as one vector, in one load (PrivateBlock.run; the CPU
        lowering reads them word by word, codegen/cpu/lowering.py)."""
        return block.run(self.builder, start, count)

    def store_elements(self, op) -> None:
        if self.looped(op.layout, op.operands[0].type.dtype):
            return self.store_elements_looped(op)
        value, tdesc = op.operands
        for (row, col), item in zip(self.positions(op.layout), self.lanes.elements(self.values[value])):
            self.store_element(op, tdesc, row, col, item)

    def store_element(self, op, tdesc, row: ir.Value, col: ir.Value, item: ir.Value) -> None:
        """`item` into element (row, col) of the block when it lies in the array and the block's valid part."""
        address, inside = self.element(tdesc, row, col, op.valid)
        with self.builder.if_then(inside):
            self.builder.store(to_storage(self.builder, item, op.operands[0].type.dtype), address)

    def store_elements_looped(self, op) -> None:
        """The lane value into a private array (where it is not one already), then its components in a loop."""
        value, tdesc = op.operands
        lane_value, count = self.values[value], op.layout.per_lane
        block = lane_value if isinstance(lane_value, PrivateBlock) else self.spilled(lane_value, count)

        def component(b, k, _):
            row, col = self.position(op.layout, b.zext(k, I64))
            self.store_element(op, tdesc, row, col, b.load(b.gep(block.pointer, [ir.Constant(I32, 0), k])))

        counted_loop(self.builder, count, None, component)

    def spilled(self, vector: ir.Value, count: int) -> PrivateBlock:
        """A vector lane value stored into a new private array, in one store."""
        b = self.builder
        block = PrivateBlock(self.lanes.private(ir.ArrayType(vector.type.element, count)))
        b.store(vector, b.bitcast(block.pointer, vector.type.as_pointer()))
        return block
