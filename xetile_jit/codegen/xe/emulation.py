"""The CPU emulation of the 2D block messages (codegen/xe/builtins.py's module docstring: the per-lane layouts, padding 0
outside the surface, writes outside dropped, a prefetch does nothing), for the "xe-emulated" target; codegen/cpu/builtins.py
builds its faster versions on the same element addressing. Cache hints change no value: the emulation has no
caches, so it ignores them. `emulations` gives the "emulated" ABI's definitions (codegen/backends.py); the shared
LLVM helpers are codegen/xe/llvm_helpers.py's.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from llvmlite import ir

from ..llvm.core import I64, counted_loop
from . import builtins as X
from .dpas_emulation import emulate_dpas
from .llvm_helpers import ROLLED, field, i32, lane_id


@dataclass
class Surface:
    """The surface operands of a block message as LLVM values, and the element addressing of the emulation."""
    base: ir.Value
    width: ir.Value
    height: ir.Value
    pitch: ir.Value
    x: ir.Value
    y: ir.Value

    @classmethod
    def of(cls, b: ir.IRBuilder, fn: ir.Function) -> Surface:
        base, width, height, pitch, coord = fn.args[:5]
        x, y = (b.extract_element(coord, i32(axis)) for axis in (0, 1))
        return cls(base, width, height, pitch, x, y)

    def element(self, b: ir.IRBuilder, row: ir.Value, col: ir.Value, bits: int) -> tuple[ir.Value, ir.Value]:
        """(in bounds, pointer) of element (row, col); the pointer is the base when out of bounds, so that a load
        through it is always safe. The test multiplies nothing: `col < width // size` is `(col + 1) * size <=
        width` without its i32 overflow (a column near 2**31 / size would wrap into range). A row or column that
        wrapped while adding the block position to the coordinate is negative, hence outside too."""
        size = bits // 8
        width = self.width if size == 1 else b.udiv(self.width, i32(size))
        inside = b.and_(b.and_(b.icmp_signed(">=", row, i32(0)), b.icmp_signed("<", row, self.height)),
                        b.and_(b.icmp_signed(">=", col, i32(0)), b.icmp_signed("<", col, width)))
        offset = b.add(b.mul(b.sext(row, I64), b.sext(self.pitch, I64)),
                       b.mul(b.sext(col, I64), ir.Constant(I64, size)))
        offset = b.select(inside, offset, ir.Constant(I64, 0))
        return inside, b.bitcast(b.gep(self.base, [offset]), ir.PointerType(ir.IntType(bits), 1))

    def position(self, b: ir.IRBuilder, msg: X.Block2DBuiltin, lane: ir.Value, component: ir.Value, part: int):
        """(row, column) of element `part` of `component` on `lane` (the layouts of the module docstring): the
        component's `origin`, lane 0's, moved by the lane's `lane_step`."""
        (row, col), (rows, cols) = self.origin(b, msg, component, part), lane_step(b, msg, lane)
        return b.add(row, rows), b.add(col, cols)

    def origin(self, b: ir.IRBuilder, msg: X.Block2DBuiltin, component: ir.Value, part: int):
        """(row, column) of element `part` of `component` on lane 0, the same for every lane."""
        if msg.transpose:  # component c * g + h: row 16 h + lane, column c
            groups = i32(msg.row_groups)
            return (b.add(self.y, b.mul(b.urem(component, groups), i32(X.BLOCK_IO_SUBGROUP))),
                    b.add(self.x, b.udiv(component, groups)))
        if msg.vnni:  # block by block, each rows / per_lane words
            words = i32(msg.components // msg.blocks)
            block, word = b.udiv(component, words), b.urem(component, words)
            return (b.add(self.y, b.add(b.mul(word, i32(msg.per_lane)), i32(part))),
                    b.add(self.x, b.mul(block, i32(msg.cols))))
        words = i32(msg.rows // msg.lane_rows)
        block, row = b.udiv(component, words), b.urem(component, words)
        return (b.add(self.y, b.mul(row, i32(msg.lane_rows))),
                b.add(self.x, b.add(b.mul(block, i32(msg.cols)), i32(part))))


def lane_step(b: ir.IRBuilder, msg: X.Block2DBuiltin, lane: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(rows, columns) from lane 0's element to `lane`'s, in `lane`'s integer type: the same for every component
    and part."""
    def const(n):
        return ir.Constant(lane.type, n)
    if msg.transpose:
        return lane, const(0)
    if msg.vnni:
        return const(0), lane
    if msg.lane_rows > 1:  # a narrow block: row `row * lane_rows + lane / cols`, column lane % cols
        return b.udiv(lane, const(msg.cols)), b.mul(b.urem(lane, const(msg.cols)), const(msg.per_lane))
    return const(0), b.mul(lane, const(msg.per_lane))


def emulate_load(b: ir.IRBuilder, fn: ir.Function, msg: X.Block2DBuiltin) -> None:
    emulated_load_loop(b, fn.args[5], msg, Surface.of(b, fn), lane_id(b))
    b.ret_void()


def emulated_load_loop(b: ir.IRBuilder, out: ir.Value, msg: X.Block2DBuiltin, surface: Surface,
                        lane: ir.Value) -> None:
    """The load's components into the private array `out`."""
    counted_loop(b, msg.components, None, lambda b, index, _: b.store(
        emulated_load_word(b, msg, surface, lane, index), b.gep(out, [i32(0), index])), ROLLED)


def emulated_load_word(b: ir.IRBuilder, msg: X.Block2DBuiltin, surface: Surface, lane: ir.Value,
                       index: ir.Value) -> ir.Value:
    """Component `index` of the lane's data, each element tested against the surface (outside: 0)."""
    word = ir.Constant(msg.lane_type, 0)
    for part in range(msg.per_lane):
        inside, ptr = surface.element(b, *surface.position(b, msg, lane, index, part), msg.bits)
        value = b.select(inside, b.load(ptr), ir.Constant(ir.IntType(msg.bits), 0))
        if msg.per_lane > 1:
            value = b.shl(b.zext(value, msg.lane_type), ir.Constant(msg.lane_type, part * msg.bits))
        word = b.or_(word, value)
    return word


def emulate_store(b: ir.IRBuilder, fn: ir.Function, msg: X.Block2DBuiltin) -> None:
    emulated_store_loop(b, fn.args[5], msg, Surface.of(b, fn), lane_id(b))
    b.ret_void()


def emulated_store_loop(b: ir.IRBuilder, data: ir.Value, msg: X.Block2DBuiltin, surface: Surface,
                         lane: ir.Value) -> None:
    """The store's components (`data`), each element written only inside the surface."""
    def component(b, index, _):
        word = b.extract_element(data, index) if msg.components > 1 else data
        for part in range(msg.per_lane):
            inside, ptr = surface.element(b, *surface.position(b, msg, lane, index, part), msg.bits)
            with b.if_then(inside):
                b.store(field(b, word, part, msg.bits), ptr)

    counted_loop(b, msg.components, None, component, ROLLED)


def emulate_prefetch(b: ir.IRBuilder, fn: ir.Function, msg: X.Block2DBuiltin) -> None:
    b.ret_void()


def emulations(lane_reads: str) -> X.Definitions:
    """The "emulated" ABI's definitions for a kernel whose lanes read another lane's value as `lane_reads` says:
    through their slots (SLOTS) where they exchange values so (codegen/llvm/lane_slots.py), else by BROADCAST. Its
    DPAS read A[r][k] of lane k by OpGroupBroadcast in every kernel, so every kernel with a DPAS got the driver's
    masked copy (docs/performance.md "Driver builds"): the tests' 32x32x64 f16 product built in 4.6-5.0 s against
    1.8-2.6 through the slots (AVX2 EPYC)."""
    return {"dpas": partial(emulate_dpas, read=lane_reads), "load": emulate_load, "store": emulate_store,
            "prefetch": emulate_prefetch}
