"""The lane values of the XeGPU lowering (codegen/llvm/lowering.py) and what every piece of it does with them: a
lane's share of a block as one value (a scalar, a vector, or a `PrivateBlock` beyond a vector's size), read
component by component, assembled from components, moved between lanes by subgroup shuffles. `Lanes` works on the
lowering's context (codegen/llvm/context.py), which holds it (`LoweringContext.lanes`)."""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...target.targets import MAX_VECTOR_COMPONENTS
from ..xe.llvm_helpers import SHUFFLE
from .core import I32, I64, components


class Lanes:
    """The lane-value helpers on `context`; `size`: the subgroup's lanes (FuncOp.lanes)."""

    def __init__(self, context):
        self.context = context
        self.size = context.func.lanes

    def lane_id(self) -> ir.Value:
        return self.context.builtin("SubgroupLocalInvocationId")

    def shuffle(self, value: ir.Value, lane: ir.Value) -> ir.Value:
        """`value` as lane `lane` holds it. The emitter knows one overload of the shuffle, on i32 (as the
        builtins module declares it), so every component travels as one or two i32."""
        if isinstance(value.type, ir.VectorType):
            return self.assemble([self.shuffle(e, lane) for e in self.elements(value)])
        b = self.context.builder
        ty = value.type
        bits = {ir.HalfType: 16, ir.FloatType: 32}.get(type(ty)) or ty.width
        raw = value if isinstance(ty, ir.IntType) else b.bitcast(value, ir.IntType(bits))
        if bits == 64:
            low = self.context.call(SHUFFLE, I32, b.trunc(raw, I32), lane)
            high = self.context.call(SHUFFLE, I32, b.trunc(b.lshr(raw, ir.Constant(I64, 32)), I32), lane)
            moved = b.or_(b.zext(low, I64), b.shl(b.zext(high, I64), ir.Constant(I64, 32)))
        elif bits < 32:
            moved = b.trunc(self.context.call(SHUFFLE, I32, b.zext(raw, I32), lane), ir.IntType(bits))
        else:
            moved = self.context.call(SHUFFLE, I32, raw, lane)
        return b.bitcast(moved, ty) if moved.type != ty else moved

    def elements(self, v: ir.Value | PrivateBlock) -> list[ir.Value]:
        return [self.component(v, i) for i in range(self.count(v))]

    def component(self, v: ir.Value | PrivateBlock, i: int) -> ir.Value:
        """Component `i` of a lane value, read alone (a regrouping reads only the components it keeps)."""
        b = self.context.builder
        if isinstance(v, PrivateBlock):
            return b.load(v.slot(b, i))
        if isinstance(v.type, ir.VectorType):
            return b.extract_element(v, ir.Constant(I32, i))
        return v

    @staticmethod
    def count(v: ir.Value | PrivateBlock) -> int:
        if isinstance(v, PrivateBlock):
            return v.count
        return components(v.type)

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


@dataclass(frozen=True)
class PrivateBlock:
    """A lane's part of a loaded block with more elements than a SPIR-V vector holds, kept in private memory
    (BuiltinAbi.private_blocks): layout completion lets only layout conversions use such a block, which read it
    element by element (`elements`)."""
    pointer: ir.Value  # [count x T]*

    @property
    def count(self) -> int:
        return self.pointer.type.pointee.count

    def slot(self, b: ir.IRBuilder, i: int | ir.Value) -> ir.Value:
        """The address of component `i` (a constant, or an i32 value: a loop's index)."""
        return b.gep(self.pointer, [ir.Constant(I32, 0), i if isinstance(i, ir.Value) else ir.Constant(I32, i)])

    def part(self, b: ir.IRBuilder, start: int, count: int) -> PrivateBlock:
        """Components start .. start + count - 1 as a block of their own, in place (no copy): a run longer than a
        vector (8-bit DPAS B) read later by whoever takes it."""
        return PrivateBlock(b.bitcast(self.slot(b, start), ir.ArrayType(self.pointer.type.pointee.element,
                                                                          count).as_pointer()))

    def run(self, b: ir.IRBuilder, start: int, count: int) -> ir.Value:
        """Components start .. start + count - 1 as one vector, read in one load: the GPU compiler takes the run
        from the block's registers (a DPAS operand inside a loaded array of blocks; read element by element, the
        block of a VNNI load went to memory and came back unpacked by movs)."""
        element = self.pointer.type.pointee.element
        bits = element.width if isinstance(element, ir.IntType) else {ir.HalfType: 16, ir.FloatType: 32}[
            type(element)]
        return b.load(b.bitcast(self.slot(b, start), ir.VectorType(element, count).as_pointer()),
                      align=max(1, bits // 8))  # the run starts on an element, not on a vector's alignment
