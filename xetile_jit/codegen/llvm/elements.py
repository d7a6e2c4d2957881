"""to-llvm of the general memory path: a lane's part of a block read or written one element at a time (XeGPU RFC
load_nd/store_nd where no 2D block message can address the block: the block-IO rules of the Target, an unaligned
start, 8-bit transposes), each element's address clamped into the array and its access masked by the bounds.

A lane's component k sits at block position `position(layout, k)` (simt_ops.LaneLayout: column groups, then rows,
then the lane's chunk). On GPU targets the components are unrolled: registers, no private memory. On the CPU
targets (Target.element_loops, Lanes.looped) they are a loop over k through a private array, as are gathers,
scatters and atomics (codegen/llvm/scatter.py, atomics.py): the OpenCL CPU compiler's build time grows with
straight-line code, and a 13x37 f16 add (48 components a lane, three arrays) was 4,900 lines of LLVM IR and a 10 s
driver build unrolled.
"""
from __future__ import annotations

from llvmlite import ir

from .block_messages import scalar_type
from .context import LoweringContext
from .core import clamp, from_storage, literal, to_storage, within
from .descriptors import Descriptors
from .lanes import in_block


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

    def element(self, tdesc, row: ir.Value, col: ir.Value, valid=None, origin: tuple | None = None,
                checked: bool | None = None):
        """The address of element (row, col) of the descriptor's block, clamped into the array, and whether
        the element really is inside it (and inside the block's `valid` part, when given). `origin`: the block's
        (row, col), i64, where it is not the descriptor's (a block of a run's grid, codegen/cpu/pieces.py). A
        descriptor without boundary_check has each element of its block (its `valid` part) inside its memory: the
        address as it is, tested against `valid` alone (none: the constant True, which the callers then do not
        test; the driver reads and writes the lanes' consecutive elements as vectors), unless `checked` says
        otherwise."""
        b = self.builder
        m = self.descriptors.memref(tdesc)
        inside = ir.Constant(ir.IntType(1), 1) if valid is None else in_block(b, row, col, valid)
        origin = origin or (self.descriptors.offset(tdesc, 1), self.descriptors.offset(tdesc, 0))
        row, col = b.add(origin[0], row), b.add(origin[1], col)
        if not (tdesc.type.boundary_check if checked is None else checked):
            return m.element_pointer(b, row, col), inside
        inside = b.and_(inside, b.and_(within(b, row, m.rows), within(b, col, m.cols)))
        return m.element_pointer(b, clamp(b, row, m.rows), clamp(b, col, m.cols)), inside

    # ---- loads and stores ------------------------------------------------------------------------------------
    def load(self, op, origin: tuple | None = None):
        """Each component read alone: a loop on the CPU targets (Lanes.looped), a PrivateBlock beyond a vector's
        size; the block at `origin` when given (`element`)."""
        tdesc, layout, lanes = op.operands[0], op.layout, self.lanes
        return lanes.made(layout, op.result.type.dtype, scalar_type(op.result.type),
                          lambda k: self.load_element(op, tdesc, *lanes.position_at(layout, k, op.transpose),
                                                      origin))

    def load_element(self, op, tdesc, row: ir.Value, col: ir.Value, origin: tuple | None = None) -> ir.Value:
        """Element (row, col) of the block, or the padding outside the array."""
        b = self.builder
        dtype = op.result.type.dtype
        # a load reads every element, its block's padding past `valid` too: unchecked only without one
        checked = tdesc.type.boundary_check or op.valid is not None
        address, inside = self.element(tdesc, row, col, origin=origin, checked=checked)
        if not checked:
            return from_storage(b, b.load(address, name="element"), dtype)
        pad = ir.Constant(scalar_type(op.result.type), literal(op.padding, dtype))
        return b.select(inside, from_storage(b, b.load(address, name="element"), dtype), pad)  # named: tests find it

    def store(self, op, data: ir.Value | None = None, origin: tuple | None = None) -> None:
        """Each component written alone: `data` (by default the op's value) into the block, at `origin` when given
        (`element`)."""
        value, tdesc = op.operands
        dtype, lanes = value.type.dtype, self.lanes
        lane_value = lanes.addressable(op.layout, dtype, self.context.values[value] if data is None else data)
        lanes.for_each(op.layout, dtype, lambda k: self.store_element(op, tdesc, *lanes.position_at(op.layout, k),
                                                                      lanes.component(lane_value, k), origin))

    def store_element(self, op, tdesc, row: ir.Value, col: ir.Value, item: ir.Value,
                      origin: tuple | None = None) -> None:
        """`item` into element (row, col) of the block when it lies in the array and the block's valid part."""
        address, inside = self.element(tdesc, row, col, op.valid, origin)
        stored = to_storage(self.builder, item, op.operands[0].type.dtype)
        if isinstance(inside, ir.Constant):
            self.builder.store(stored, address)
            return
        with self.builder.if_then(inside):
            self.builder.store(stored, address)
