"""to-llvm for atomic_rmw (XeTile RFC atomic_rmw_tile, XeGPU atomic_rmw), element by element, for block and
scattered descriptors alike: the hardware's atomicrmw on the bits where SPIR-V has the operation on 32 or 64 bits,
else a compare-exchange loop (SPIR-V has no float atomics but exchange, no multiply, and no 16-bit atomics: those
loop on the 32-bit word that holds the element), on the CPU targets in a function out of line
(Target.out_of_line_atomics). The rule per kind and element type is ir/elementwise.ATOMIC_KINDS.
`Atomics` works on the lowering's context (codegen/llvm/context.py); the XeGPU lowering (codegen/llvm/lowering.py)
holds one, and its scatter piece (codegen/llvm/scatter.py) shares it.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.elementwise import ATOMIC_KINDS
from .context import LoweringContext
from .core import I32, I64


def guarded(b: ir.IRBuilder, condition: ir.Value, make, otherwise: ir.Value) -> ir.Value:
    """`make()` where `condition` holds, else `otherwise`."""
    before = b.block
    with b.if_then(condition):
        value = make()
        last = b.block
    merged = b.phi(value.type)
    merged.add_incoming(value, last)
    merged.add_incoming(otherwise, before)
    return merged


class Atomics:
    """atomic_rmw on `context`; `combine(name, dtype, x, y)` is the lowering's element-wise op of a row of
    ir/elementwise.BINARY (the CPU lowerings write some of them otherwise)."""

    def __init__(self, context: LoweringContext, combine):
        self.context = context
        self.combine = combine

    def atomic_elements(self, op, place) -> ir.Value:
        """`op`'s atomic element by element, component k at `place(k)` ((address, inside), k as Lanes.for_each
        gives it: a loop on the CPU targets, whose driver build time grew with each unrolled exchange loop); a
        block every lane holds is updated by lane 0 alone, which then shares the old values."""
        value = op.operands[0]
        dtype = value.type.dtype
        b, lanes = self.context.builder, self.context.lanes
        operands = [lanes.addressable(op.layout, dtype, self.context.values[v]) for v in [value, *op.compare]]
        first_lane = b.icmp_unsigned("==", lanes.lane_id(), ir.Constant(I32, 0)) if op.layout.replicated else None

        def element(k):
            address, inside = place(k)
            if first_lane is not None:
                inside = b.and_(inside, first_lane)
            item, *compare = (lanes.component(v, k) for v in operands)
            return guarded(b, inside, lambda: self.atomic(op.kind, dtype, address, item, *compare),
                           ir.Constant(item.type, 0))
        old = lanes.made(op.layout, dtype, lanes.component_type(operands[0]), element)
        return old if first_lane is None else lanes.shuffle(old, ir.Constant(I32, 0))

    def atomic(self, kind: str, dtype, address: ir.Value, value: ir.Value, compare: ir.Value | None = None
               ) -> ir.Value:
        """The hardware's atomicrmw on the bits where SPIR-V has the operation on 32 or 64 bits, else a
        compare-exchange loop: SPIR-V has no float atomics but exchange, no multiply, and no 16-bit atomics (those
        loop on the 32-bit word that holds the element). A compare-and-swap is one cmpxchg on the bits
        (OpAtomicCompareExchange), which compares floats bit for bit."""
        b = self.context.builder
        rule = ATOMIC_KINDS[kind][dtype.kind]
        bits = ir.IntType(dtype.bits)
        raw = b.bitcast(address, ir.PointerType(bits, address.type.addrspace))
        if kind == "cas":
            pair = b.cmpxchg(raw, self.as_type(compare, bits), self.as_type(value, bits), "seq_cst", "seq_cst")
            return self.as_type(b.extract_value(pair, 0), value.type)
        if rule.hardware is not None and dtype.bits >= 32:
            return self.as_type(b.atomic_rmw(rule.hardware, raw, self.as_type(value, bits), "seq_cst"), value.type)
        target = self.context.target
        if target is not None and target.out_of_line_atomics:
            return b.call(self.exchange_function(kind, dtype, raw.type, value.type), [raw, value])
        return self.exchange(kind, dtype, raw, value)

    def exchange(self, kind: str, dtype, raw: ir.Value, value: ir.Value) -> ir.Value:
        """The compare-exchange loop of `kind` on the element at `raw`: on its 32-bit word where it is narrower."""
        combine = ATOMIC_KINDS[kind][dtype.kind].combine
        if dtype.bits < 32:
            return self.subword_exchange_loop(raw, value, combine, dtype)
        return self.compare_exchange_loop(raw, value, combine, dtype)

    def exchange_function(self, kind: str, dtype, pointer: ir.Type, value: ir.Type) -> ir.Function:
        """The module's function (pointer, value) -> old element that runs `exchange` (Target.out_of_line_atomics),
        written at its first use: `noinline`, which the OpenCL CPU compiler honours (SPIR-V DontInline)."""
        module = self.context.builder.module
        name = f"xetile.atomic.{kind}.{dtype}.{pointer.addrspace}"
        if name in module.globals:
            return module.globals[name]
        fn = ir.Function(module, ir.FunctionType(value, [pointer, value]), name)
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        outer = self.context.builder
        self.context.builder = ir.IRBuilder(fn.append_basic_block("entry"))
        try:
            self.context.builder.ret(self.exchange(kind, dtype, *fn.args))
        finally:
            self.context.builder = outer
        return fn

    def compare_exchange_loop(self, raw: ir.Value, value: ir.Value, name: str, dtype) -> ir.Value:
        """old = *p; retry *p = op(old, value) until no other work-item wrote in between."""
        def update(expected):
            old = self.as_type(expected, value.type)
            return old, self.as_type(self.new_contents(name, dtype, old, value), expected.type)
        return self.exchange_loop(raw, update)

    def subword_exchange_loop(self, raw: ir.Value, value: ir.Value, name: str | None, dtype) -> ir.Value:
        """The compare-exchange loop on the aligned 32-bit word holding a 16-bit element: the element's half
        of the word changes, the other half is what the word held (a neighbour's update makes the exchange
        retry)."""
        b = self.context.builder
        address = b.ptrtoint(raw, I64)
        word = b.inttoptr(b.and_(address, ir.Constant(I64, -4)), ir.PointerType(I32, raw.type.addrspace))
        shift = b.trunc(b.shl(b.and_(address, ir.Constant(I64, 2)), ir.Constant(I64, 3)), I32)
        half = raw.type.pointee
        keep = b.xor(b.shl(ir.Constant(I32, (1 << half.width) - 1), shift), ir.Constant(I32, -1))

        def update(expected):
            old = self.as_type(b.trunc(b.lshr(expected, shift), half), value.type)
            new = b.zext(self.as_type(self.new_contents(name, dtype, old, value), half), I32)
            return old, b.or_(b.and_(expected, keep), b.shl(new, shift))
        return self.exchange_loop(word, update)

    def as_type(self, x: ir.Value, ty: ir.Type) -> ir.Value:
        """`x`'s bits as `ty` (no instruction when they are already)."""
        return x if x.type == ty else self.context.builder.bitcast(x, ty)

    def new_contents(self, name: str | None, dtype, old: ir.Value, value: ir.Value) -> ir.Value:
        return value if name is None else self.combine(name, dtype, old, value)

    def exchange_loop(self, pointer: ir.Value, update) -> ir.Value:
        """Retries `*pointer = desired` while another work-item wrote in between; `update(expected)` gives
        (the old element, desired). Returns the old element of the exchange that took."""
        b = self.context.builder
        entry = b.block
        start = b.load(pointer)
        loop, done = b.append_basic_block("atomic.loop"), b.append_basic_block("atomic.done")
        b.branch(loop)
        b.position_at_end(loop)
        expected = b.phi(start.type)
        expected.add_incoming(start, entry)
        old, desired = update(expected)
        pair = b.cmpxchg(pointer, expected, desired, "seq_cst", "seq_cst")
        seen = b.extract_value(pair, 0)
        expected.add_incoming(seen, loop)
        b.cbranch(b.extract_value(pair, 1), done, loop)
        b.position_at_end(done)
        return old

