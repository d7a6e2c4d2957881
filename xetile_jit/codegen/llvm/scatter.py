"""to-llvm for scattered descriptors (XeGPU RFC create_tdesc/load/store/update_offset/atomic_rmw), SIMT flavor: a
lane's descriptor is its elements' offsets (i64, the index-width rule of codegen/llvm/lowering.py), and each access is a
plain per-lane load, store or atomic at the element's address (no block message).

An offset k addresses element k of the array in row-major order over its sizes (for a 2-D view: (k / cols, k % cols);
strides from the memref, so pitched and column-major arrays work too; a dense row-major array skips the division,
with no code for it where the launch found it dense: MemRefType.strided false);
an array argument of rank 1 or above 2 (a flattened table) is addressed the same way. It accesses memory only
when 0 <= k < the array's size, its mask bit is set and it lies in the block's `valid` part. Loads read a clamped
address and select the padding outside. `Scatter` works on the lowering's context (codegen/llvm/context.py); the
XeGPU lowering (codegen/llvm/lowering.py) holds one and dispatches the ops to it.
"""
from __future__ import annotations

import functools

from llvmlite import ir

from ...ir import xegpu_scatter_ops as GS
from ...ir.analysis import sources
from ...ir.simt_ops import LaneLayout
from .atomics import Atomics, guarded
from .context import LoweringContext
from .core import I64, MemRef, NdMemRef, clamp, from_storage, literal, llvm_type, to_storage, within
from .lanes import in_block
from ...ir.types import ScalarType


def extents(m: MemRef | NdMemRef) -> tuple[tuple[ir.Value, ...], tuple[ir.Value, ...]]:
    """An array's sizes and strides (in elements) along each dim: a kernel argument of any rank, or a 2-D view."""
    if isinstance(m, MemRef):
        return (m.rows, m.cols), (m.row_stride, m.col_stride)
    return m.sizes, m.strides


class Scatter:
    """The scattered-descriptor ops on `context`, their atomics through `atomics` (codegen/llvm/atomics.py)."""

    def __init__(self, context: LoweringContext, atomics: Atomics):
        self.context = context
        self.atomics = atomics

    @functools.cached_property
    def bases(self) -> dict:
        """The arrays each scattered descriptor may come from (ir/analysis.sources)."""
        return sources(self.context.func, GS.CreateDescOp, GS.UpdateOffsetOp)

    def desc_type(self, t: GS.ScatterDescType) -> ir.Type:
        """A lane's descriptor: the offsets of its elements."""
        lanes = self.context.lanes.size
        per_lane = LaneLayout(tuple(t.shape), lanes, t.layout.lane_layout, t.layout.lane_data).per_lane
        return I64 if per_lane == 1 else ir.VectorType(I64, per_lane)

    def array(self, tdesc):
        """The array (IR value) a scattered descriptor comes from."""
        arrays = self.bases[tdesc]
        if len(arrays) != 1:
            raise NotImplementedError("a #scatter tile that may come from several arrays")
        return next(iter(arrays))

    def widened(self, v) -> list[ir.Value]:
        """A per-lane integer vector's elements as i64 (sign- or zero-extended by its dtype)."""
        b = self.context.builder
        extend = b.zext if v.type.dtype.kind == "u" else b.sext
        return [e if e.type == I64 else extend(e, I64) for e in self.context.lanes.elements(self.context.values[v])]

    def create(self, op):
        """xegpu.create_tdesc: the offsets, as i64."""
        return self.context.lanes.assemble(self.widened(op.operands[1]))

    def update(self, op):
        """xegpu.update_offset: the offsets moved."""
        b, lanes = self.context.builder, self.context.lanes
        offsets = lanes.elements(self.context.values[op.operands[0]])
        return lanes.assemble([b.add(k, d) for k, d in zip(offsets, self.widened(op.operands[1]))])

    def place(self, op):
        """(address, accesses memory) of this lane's element k of the access `op`, as a function of k (as
        Lanes.for_each gives it); what all elements share is computed once, here."""
        b, lanes, values = self.context.builder, self.context.lanes, self.context.values
        writes = isinstance(op, (GS.StoreScatterXOp, GS.ScatterAtomicRMWOp))  # its value, then its descriptor
        tdesc = op.operands[1] if writes else op.operands[0]
        dtype = (op.operands[0] if writes else op.result).type.dtype
        array = self.array(tdesc)
        m = self.context.values[array]
        sizes, strides = extents(m)
        size = functools.reduce(b.mul, sizes)
        dense = self.dense(sizes, strides) if array.type.strided else None
        offsets = lanes.addressable(op.layout, dtype, values[tdesc])
        masks = lanes.addressable(op.layout, dtype, values[op.mask[0]]) if op.mask else None

        def at(k):
            offset = lanes.component(offsets, k)
            inside = within(b, offset, size)
            if masks is not None:
                inside = b.and_(inside, lanes.component(masks, k))
            if op.valid is not None:
                inside = b.and_(inside, in_block(b, *lanes.position_at(op.layout, k), op.valid))
            offset = clamp(b, offset, size)
            if dense is not None:  # `offset` where the array is dense, else `strided` divides
                offset = guarded(b, b.not_(dense), lambda: self.strided(sizes, strides, offset), offset)
            return b.gep(m.pointer, [offset], inbounds=True), inside
        return at

    def dense(self, sizes, strides) -> ir.Value:
        """Whether an array that may be strided (MemRefType.strided) is dense row-major at run time."""
        b = self.context.builder
        return functools.reduce(b.and_, [b.icmp_signed("==", stride, dense_stride)
                                         for stride, dense_stride in zip(strides, self.dense_strides(sizes))])

    def dense_strides(self, sizes) -> list[ir.Value]:
        """The strides of a dense row-major array of these sizes."""
        strides = [ir.Constant(I64, 1)]
        for n in reversed(sizes[1:]):
            strides.insert(0, self.context.builder.mul(strides[0], n))
        return strides

    def strided(self, sizes, strides, k: ir.Value) -> ir.Value:
        """The memory offset of element k (row-major over the array's sizes) of a pitched, transposed or
        column-major array (a dense row-major one: k itself, with no division)."""
        b = self.context.builder
        offset = ir.Constant(I64, 0)
        for n, stride in zip(reversed(sizes[1:]), reversed(strides[1:])):
            offset = b.add(offset, b.mul(b.srem(k, n), stride))
            k = b.sdiv(k, n)
        return b.add(offset, b.mul(k, strides[0]))

    def load(self, op):
        """xegpu.load (gather): each element, or the padding where it accesses no memory."""
        b = self.context.builder
        dtype = op.result.type.dtype
        element_type = llvm_type(ScalarType(dtype))
        pad = ir.Constant(element_type, literal(op.padding, dtype))
        place = self.place(op)

        def element(k):
            address, inside = place(k)
            return b.select(inside, from_storage(b, b.load(address), dtype), pad)
        return self.context.lanes.made(op.layout, dtype, element_type, element)

    def store(self, op) -> None:
        """xegpu.store (scatter): each element where it accesses memory."""
        b, lanes = self.context.builder, self.context.lanes
        dtype = op.operands[0].type.dtype
        items = lanes.addressable(op.layout, dtype, self.context.values[op.operands[0]])
        place = self.place(op)

        def element(k):
            address, inside = place(k)
            item = lanes.component(items, k)
            with b.if_then(inside):
                b.store(to_storage(b, item, dtype), address)
        lanes.for_each(op.layout, dtype, element)

    def atomic(self, op):
        """xegpu.atomic_rmw on a scattered descriptor."""
        return self.atomics.atomic_elements(op, self.place(op))
