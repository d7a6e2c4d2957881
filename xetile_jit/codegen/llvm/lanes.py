"""The lane values of the XeGPU lowering (codegen/llvm/lowering.py) and what every piece of it does with them: a
lane's share of a block as one value (a scalar, a vector, or a `PrivateBlock` beyond a vector's size), read
component by component, assembled from components, moved between lanes by subgroup shuffles. `Lanes` works on the
lowering's context (codegen/llvm/context.py), which holds it (`LoweringContext.lanes`)."""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...ir import simt_ops as S
from ...target.targets import MAX_VECTOR_COMPONENTS
from ..scalar_bits import scalar_bits
from ..xe.llvm_helpers import SHUFFLE, SLOTS, moved
from .core import I32, I64, components, counted_loop, phis


class Lanes:
    """The lane-value helpers on `context`; `size`: the subgroup's lanes (FuncOp.lanes)."""

    def __init__(self, context):
        self.context = context
        self.size = context.func.lanes

    def lane_id(self) -> ir.Value:
        return self.context.lane_id()

    def positions(self, layout: S.LaneLayout, transpose=None) -> list[tuple[ir.Value, ir.Value]]:
        """(row, col) in the block, as i64, of each component of this lane (transposed: in the memory block)."""
        if layout.replicated:
            result = [(ir.Constant(I64, r), ir.Constant(I64, c)) for r, c in layout.elements(0)]
        else:
            result = [self.position(layout, ir.Constant(I64, k)) for k in range(layout.per_lane)]
        return [(c, r) for r, c in result] if transpose else result

    def position_at(self, layout: S.LaneLayout, k: int | ir.Value, transpose=None) -> tuple[ir.Value, ir.Value]:
        """`positions(layout, transpose)[k]` for component `k`: an int, or an i32 loop index (`for_each`)."""
        if isinstance(k, int):
            row, col = ([ir.Constant(I64, x) for x in layout.elements(0)[k]] if layout.replicated
                        else self.position(layout, ir.Constant(I64, k)))
        else:
            row, col = self.position(layout, self.context.builder.zext(k, I64))
        return (col, row) if transpose else (row, col)

    def position(self, layout: S.LaneLayout, k: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(row, col) in the block, as i64, of component `k` (i64) of this lane, for a layout that is not
        replicated: k = (group * rows + i) * chunk + e is row first_row + ly * i, column first_col + group * lx *
        chunk + e."""
        b = self.context.builder
        ly, lx, chunk = layout.grid
        rows = layout.block[0] // ly
        lane = self.context.lane_index()
        first_row = b.udiv(lane, ir.Constant(I64, lx))
        first_col = b.mul(b.urem(lane, ir.Constant(I64, lx)), ir.Constant(I64, chunk))
        group, i, e = (b.udiv(k, ir.Constant(I64, rows * chunk)),
                       b.urem(b.udiv(k, ir.Constant(I64, chunk)), ir.Constant(I64, rows)),
                       b.urem(k, ir.Constant(I64, chunk)))
        return (b.add(first_row, b.mul(i, ir.Constant(I64, ly))),
                b.add(first_col, b.add(b.mul(group, ir.Constant(I64, lx * chunk)), e)))

    def shuffle(self, value: ir.Value, lane: ir.Value) -> ir.Value:
        """`value` as lane `lane` holds it. The emitter knows one overload of the shuffle, on i32 (as the
        builtins module declares it), so every component travels as one or two i32."""
        return self.moved(value, lane, SHUFFLE)

    def moved(self, value: ir.Value, lane: ir.Value, name: str) -> ir.Value:
        """`value` from lane `lane` through the i32 builtin `name` (SHUFFLE or BROADCAST; llvm_helpers.moved), or
        through the lanes' slots in a kernel whose lanes exchange values so (LoweringContext.lockstep_lanes)."""
        if isinstance(value.type, ir.VectorType):
            return self.assemble([self.moved(e, lane, name) for e in self.elements(value)])
        return moved(self.context.builder, SLOTS if self.context.lockstep_lanes() else name, value, lane)

    def elements(self, v: ir.Value | PrivateBlock) -> list[ir.Value]:
        return [self.component(v, i) for i in range(self.count(v))]

    def component(self, v: ir.Value | PrivateBlock, i: int | ir.Value) -> ir.Value:
        """Component `i` (an int, or an i32 loop index) of a lane value, read alone (a regrouping reads only the
        components it keeps)."""
        b = self.context.builder
        if isinstance(v, PrivateBlock):
            return b.load(v.slot(b, i))
        if isinstance(v.type, ir.VectorType):
            return b.extract_element(v, i if isinstance(i, ir.Value) else ir.Constant(I32, i))
        return v

    # ---- a lane's components one at a time: unrolled, or a loop on the CPU targets -----------------------------
    def looped(self, layout: S.LaneLayout, dtype) -> bool:
        """Whether an access element by element (codegen/llvm/elements.py, scatter.py, atomics.py) takes a lane's
        components in a loop through private memory (Target.element_loops: the CPU targets, whose driver build
        time follows the straight-line code); not for a replicated block, nor for i1, whose vectors are bit-packed
        in memory while an array of them takes a byte each."""
        return (self.context.target.element_loops and not layout.replicated and layout.per_lane > 1
                and dtype.bits > 1)

    def for_each(self, layout: S.LaneLayout, dtype, body) -> None:
        """`body(k)` for each component k of this lane: in a loop (k an i32 index) where `looped`, else unrolled
        (k an int). Values `body` reads by k come from `addressable`."""
        if self.looped(layout, dtype):
            counted_loop(self.context.builder, layout.per_lane, None, lambda b, k, _: body(k))
        else:
            for k in range(layout.per_lane):
                body(k)

    def made(self, layout: S.LaneLayout, dtype, element_type: ir.Type, element) -> ir.Value | PrivateBlock:
        """The lane value whose component k is `element(k)`, k as `for_each` gives it (looped: stored into a
        private array, then read as one vector up to a vector's size)."""
        if not self.looped(layout, dtype):
            return self.assemble([element(k) for k in range(layout.per_lane)])
        b, count = self.context.builder, layout.per_lane
        block = PrivateBlock(self.private(ir.ArrayType(element_type, count)))
        self.for_each(layout, dtype, lambda k: b.store(element(k), block.slot(b, k)))
        return block if count > MAX_VECTOR_COMPONENTS else self.read_run(block, 0, count)

    def addressable(self, layout: S.LaneLayout, dtype, v: ir.Value | PrivateBlock) -> ir.Value | PrivateBlock:
        """`v` as `for_each`'s body reads it by k: a vector stored into a private array in one store where the
        components go in a loop (a CPU reads a component by a loop index from memory either way), else `v` (an i1
        vector too: bit-packed in memory, it is read by an extract at the index)."""
        if (not self.looped(layout, dtype) or isinstance(v, PrivateBlock) or not isinstance(v.type, ir.VectorType)
                or v.type.element == ir.IntType(1)):
            return v
        b = self.context.builder
        block = PrivateBlock(self.private(ir.ArrayType(v.type.element, v.type.count)))
        b.store(v, b.bitcast(block.pointer, v.type.as_pointer()))
        return block

    @staticmethod
    def component_type(v: ir.Value | PrivateBlock) -> ir.Type:
        if isinstance(v, PrivateBlock):
            return v.element
        return v.type.element if isinstance(v.type, ir.VectorType) else v.type

    @staticmethod
    def count(v: ir.Value | PrivateBlock) -> int:
        if isinstance(v, PrivateBlock):
            return v.count
        return components(v.type)

    def joined(self, paths: list[tuple[dict, ir.Block]]) -> dict:
        """Each key's lane value where `paths` meet, each ({key: the value's components on that path}, the path's last
        block): a phi a component (Target.lane_scalars: the driver kept a vector phi lane after lane in memory), every
        phi before the first insert of the values assembled from them."""
        first = paths[0][0]
        made = phis(self.context.builder, [x.type for key in first for x in first[key]],
                    [([x for key in first for x in values[key]], block) for values, block in paths])
        result, start = {}, 0
        for key in first:
            result[key] = self.assemble(made[start:start + len(first[key])])
            start += len(first[key])
        return result

    def assemble(self, items: list[ir.Value], into: PrivateBlock | None = None) -> ir.Value | PrivateBlock:
        """One lane value of `items`: a vector, or a PrivateBlock (`into`, or a new one) beyond a vector's size."""
        b = self.context.builder
        if len(items) > MAX_VECTOR_COMPONENTS or into is not None:
            block = into or PrivateBlock(self.private(ir.ArrayType(items[0].type, len(items))))
            for i, item in enumerate(items):
                b.store(item, block.slot(b, i))
            return block
        if len(items) == 1:
            return items[0]
        result = ir.Constant(ir.VectorType(items[0].type, len(items)), ir.Undefined)
        for i, item in enumerate(items):
            result = b.insert_element(result, item, ir.Constant(I32, i))
        return result

    def read_run(self, block: PrivateBlock, start: int, count: int) -> ir.Value:
        """Components start .. start + count - 1 of `block` as one vector, in one load (PrivateBlock.run; the CPU
        lowerings read them word by word, codegen/cpu/lowering.py)."""
        return block.run(self.context.builder, start, count)

    def lane_vector(self, dst: ir.Value, data_type: ir.ArrayType) -> ir.Value:
        """The private array `dst` of a vector's size as that vector (a scalar for one word), in one load."""
        lane_type = data_type.element if data_type.count == 1 else ir.VectorType(data_type.element, data_type.count)
        b = self.context.builder
        return b.load(b.bitcast(dst, lane_type.as_pointer()))

    def private(self, ty: ir.Type) -> ir.Value:
        """A new variable of type `ty` in private memory; in the entry block, as SPIR-V wants."""
        b = self.context.builder
        with b.goto_entry_block():
            return b.alloca(ty)

    def reinterpret(self, value: ir.Value | PrivateBlock, ty: ir.Type) -> ir.Value | PrivateBlock:
        """`value`'s bits as `ty` (a vector type; a PrivateBlock stays in private memory)."""
        b = self.context.builder
        if isinstance(value, PrivateBlock):  # next to the variable, which dominates every use
            with b.goto_entry_block():
                pointer = b.bitcast(value.pointer, ir.ArrayType(ty.element, ty.count).as_pointer())
            return PrivateBlock(pointer)
        return b.bitcast(value, ty)


def in_block(b: ir.IRBuilder, row: ir.Value, col: ir.Value, sizes) -> ir.Value:
    """Whether block position (row, col) lies in the leading `sizes` part."""
    return b.and_(b.icmp_signed("<", row, ir.Constant(I64, sizes[0])),
                  b.icmp_signed("<", col, ir.Constant(I64, sizes[1])))


@dataclass(frozen=True)
class PrivateBlock:
    """A lane's part of a loaded block with more elements than a SPIR-V vector holds, kept in private memory
    (BuiltinAbi.private_blocks): layout completion lets only layout conversions use such a block, which read it
    element by element (`elements`)."""
    pointer: ir.Value  # [count x T]*

    @property
    def count(self) -> int:
        return self.pointer.type.pointee.count

    @property
    def element(self) -> ir.Type:
        return self.pointer.type.pointee.element

    def slot(self, b: ir.IRBuilder, i: int | ir.Value) -> ir.Value:
        """The address of component `i` (a constant, or an i32 value: a loop's index)."""
        return b.gep(self.pointer, [ir.Constant(I32, 0), i if isinstance(i, ir.Value) else ir.Constant(I32, i)])

    def part(self, b: ir.IRBuilder, start: int, count: int) -> PrivateBlock:
        """Components start .. start + count - 1 as a block of their own, in place (no copy): a run longer than a
        vector (8-bit DPAS B) read later by whoever takes it."""
        return PrivateBlock(b.bitcast(self.slot(b, start), ir.ArrayType(self.element, count).as_pointer()))

    def run(self, b: ir.IRBuilder, start: int, count: int) -> ir.Value:
        """Components start .. start + count - 1 as one vector, read in one load: the GPU compiler takes the run
        from the block's registers (a DPAS operand inside a loaded array of blocks; read element by element, the
        block of a VNNI load went to memory and came back unpacked by movs)."""
        element = self.element
        return b.load(b.bitcast(self.slot(b, start), ir.VectorType(element, count).as_pointer()),
                      align=max(1, scalar_bits(element) // 8))  # the run starts on an element, not on a vector's alignment
