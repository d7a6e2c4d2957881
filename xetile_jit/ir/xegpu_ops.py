"""XeGPU ops (XeGPU RFC op table) and the vector ops that sit beside them.

The same op classes serve the workgroup level (layouts with sg_layout/sg_data) and the subgroup level
(after distribution). Tensor descriptors are row-major views (innermost stride 1, RFC); a column-major
XeTile tile becomes a descriptor of the transposed matrix, read with `transpose = [1, 0]`.
Vector ops whose semantics equal an XeTile op's reuse that op's rules and only rename it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .attrs import Layout, format_list
from .cache_hints import CacheHints, hint_attrs
from .core import Operation, Value
from .effects import ADDRESSED, PREFETCH, Effect, reads, writes
from .types import ROW_MAJOR, DType, IndexType, MemRefType, Type, VectorType, int32
from .xetile_ops import (AtomicRMWTileOp, ConvertLayoutOp, TileBroadcastOp, TileMMAOp, TileRef, TileReduceOp,
                         TileTransposeOp, array_slice, check_cache_hints, check_compare, check_offsets, format_at_offsets,
                         parse_at_offsets, parse_atomic, valid_attr, valid_of)


@dataclass(frozen=True)
class TensorDescType(Type):
    """`memory_space`: global or slm; `boundary_check` False: every access through the descriptor lies inside its
    memory (the part its `valid` attribute names), so the code tests no element against the bounds (upstream
    XeGPU's block_tdesc_attr fields; printed when not the defaults, global and true). wg-to-sg's exchanges through
    SLM promise so; the interpreter holds them to it (TileRef)."""

    shape: tuple[int, ...]
    dtype: DType
    layout: Layout | None = None
    memory_space: str = "global"
    boundary_check: bool = True
    addresses_memory = True

    def __str__(self) -> str:
        parts = [f"{'x'.join(map(str, self.shape))}x{self.dtype.mlir}"]
        fields = [f"memory_space = {self.memory_space}"] if self.memory_space != "global" else []
        if not self.boundary_check:
            fields.append("boundary_check = false")
        if fields:
            parts.append(f"#xegpu.block_tdesc_attr<{', '.join(fields)}>")
        if self.layout:
            parts.append(self.layout.text("xegpu"))
        return f"!xegpu.tensor_desc<{', '.join(parts)}>"


class MemRefTransposeOp(Operation):
    """memref.transpose: the row-major physical matrix under a column-major view."""

    name = "memref.transpose"
    effects = ()
    views = True  # analysis.viewed_array

    def __init__(self, base: Value, loc=None):
        super().__init__([base], [dataclasses.replace(base.type, order=ROW_MAJOR)], loc=loc)

    def verify(self):
        if self.operands[0].type.order == ROW_MAJOR:
            raise self.error("the source is already row-major", "memref.transpose of a column-major view")

    def format(self, p) -> str:
        return f" {p.name(self.operands[0])} (d0, d1) -> (d1, d0) : {self.operands[0].type} to {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        base = p.value()
        for token in ("(", "d0", ",", "d1", ")", "->", "(", "d1", ",", "d0", ")", ":"):
            p.expect(token)
        p.type_of(base)
        p.keyword("to")
        return p.result_type(cls(base), p.type())

    def interpret(self, interp, base):
        return base.T


class MemRefSubviewOp(Operation):
    """memref.subview, rank-reducing: the 2-D matrix of an array at fixed offsets along its leading dims (a batch,
    a head), or a 1-D array as one row (printed with its one offset, size and stride; MLIR spells that
    memref.expand_shape). Offsets outside the leading dims give an empty matrix, so a tile there reads only padding
    and writes nothing (auto-padding per slice: a tile never reads across a batch boundary)."""

    name = "memref.subview"
    effects = ()
    views = True  # analysis.viewed_array

    def __init__(self, base: Value, offsets, loc=None):
        super().__init__([base, *offsets], [dataclasses.replace(base.type, rank=2)], loc=loc)

    @property
    def may_be_empty(self) -> bool:
        """analysis.may_be_empty: leading offsets may lie outside the array (a 1-D array's row is always there)."""
        return self.operands[0].type.rank > 2

    def verify(self):
        base, *offsets = self.operands
        if not isinstance(base.type, MemRefType) or base.type.rank == 2:
            raise self.error(f"the source must be an array of rank 1 or > 2, got {base.type}",
                             "memref.subview of a batched or 1-D array")
        if len(offsets) != max(0, base.type.rank - 2) or not all(isinstance(v.type, IndexType) for v in offsets):
            raise self.error(f"takes {max(0, base.type.rank - 2)} index offsets, one per leading dim, got "
                             f"{len(offsets)}", "memref.subview fixes the leading dims")

    def format(self, p) -> str:
        """MLIR's offsets, sizes and strides: the leading dims fixed (size 1), the last two whole."""
        base, *offsets = self.operands
        kept = min(2, base.type.rank)
        offsets = [p.name(v) for v in offsets] + ["0"] * kept
        sizes, strides = ["1"] * (base.type.rank - kept) + ["?"] * kept, ["1"] * base.type.rank
        return (f" {p.name(base)}[{', '.join(offsets)}] [{', '.join(sizes)}] [{', '.join(strides)}] : {base.type} "
                f"to {self.result.type}")

    @classmethod
    def parse(cls, p, name):
        base = p.value()
        entries = p.comma_list(lambda: p.value() if p.at("%") else p.int(), "[", "]")
        p.comma_list(lambda: p.accept("?") or p.int(), "[", "]")
        p.ints()
        p.expect(":")
        p.type_of(base)
        p.keyword("to")
        return p.result_type(cls(base, [v for v in entries if isinstance(v, Value)]), p.type())

    def interpret(self, interp, base, *offsets):
        return array_slice(base, offsets, 2)


def check_tdesc(op: Operation, t, what="operand") -> None:
    if not isinstance(t, TensorDescType):
        raise op.error(f"{what} must be a tensor descriptor, got {t}", "nd ops take a tensor_desc")


class CreateNdDescOp(Operation):
    name = "xegpu.create_nd_tdesc"
    effects = ()

    def __init__(self, base: Value, offsets, tdesc_type: TensorDescType, loc=None):
        super().__init__([base, *offsets], [tdesc_type], loc=loc)

    def verify(self):
        base, *offsets = self.operands
        if not isinstance(base.type, MemRefType) or base.type.order != ROW_MAJOR:
            raise self.error(f"base must be a row-major memref, got {base.type}",
                             "the innermost stride of the base matrix is 1")
        check_offsets(self, offsets)
        if self.result.type.dtype != base.type.dtype:
            raise self.error("element type differs from the base matrix", "tensor_desc element type")
        if self.result.type.memory_space != base.type.memory_space:
            raise self.error(f"memory_space = {self.result.type.memory_space} on a base in "
                             f"{base.type.memory_space} memory", "memory_space matches the base's memory")

    def format(self, p) -> str:
        return format_at_offsets(self, p)

    @classmethod
    def parse(cls, p, name):
        return cls(*parse_at_offsets(p))

    def interpret(self, interp, base, row, col):
        return TileRef(base, (int(row), int(col)), self.result.type.shape, self.result.type.boundary_check)


class LoadNdOp(Operation):
    """load_nd; `padding` (ours) is what out-of-bounds elements read, 0 being the hardware's own; `valid`, the
    leading part of the block (in the descriptor's dims) that the value uses: blocking pads a subgroup's piece to
    whole blocks, and the rest, maybe another subgroup's elements, is read and never seen (the checking
    interpreter counts no read of it: ir/checking.py)."""

    name = "xegpu.load_nd"
    effects = (reads(0),)

    def __init__(self, tdesc: Value, transpose=None, padding=0, cache: CacheHints | None = None, valid=None,
                 loc=None):
        shape = tdesc.type.shape[::-1] if transpose else tdesc.type.shape
        super().__init__([tdesc], [VectorType(shape, tdesc.type.dtype)], loc=loc)
        self.transpose = tuple(transpose) if transpose else None
        self.padding = padding
        self.cache = cache
        self.valid = valid

    def verify(self):
        check_tdesc(self, self.operands[0].type)
        if self.transpose not in (None, (1, 0)):
            raise self.error(f"transpose {self.transpose} must be [1, 0]", "load_nd transpose")
        check_cache_hints(self, "load")

    def format(self, p) -> str:
        t = self.operands[0]
        attrs = {}
        if self.transpose:
            attrs["transpose"] = format_list(self.transpose)
        if self.padding != 0:
            attrs["padding"] = self.padding
        attrs.update({**valid_attr(self), **hint_attrs(self.cache, "xegpu")})
        return f" {p.name(t)}{p.attr_dict(self, attrs)} : {t.type} -> {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        tdesc = p.value()
        attrs = p.attrs()
        op = cls(tdesc, attrs.pop("transpose", None), attrs.pop("padding", 0), valid=valid_of(attrs),
                 cache=p.hints(attrs, "load"))
        p.expect(":")
        p.type_of(tdesc)
        p.expect("->")
        return p.result_type(op, p.type())

    def interpret(self, interp, tile: TileRef):
        v = tile.load(self.padding, self.valid)
        return np.ascontiguousarray(v.T) if self.transpose else v


class StoreNdOp(Operation):
    name = "xegpu.store_nd"
    effects = (writes(1),)

    def __init__(self, value: Value, tdesc: Value, valid=None, cache: CacheHints | None = None, loc=None):
        super().__init__([value, tdesc], [], loc=loc)
        self.valid = valid  # the leading block written (TileRef.store): blocking pads values
        self.cache = cache

    def verify(self):
        value, tdesc = self.operands
        check_tdesc(self, tdesc.type)
        if value.type.shape != tdesc.type.shape or value.type.dtype != tdesc.type.dtype:
            raise self.error(f"value {value.type} does not match {tdesc.type}", "store_nd value matches the tile")
        check_cache_hints(self, "store")

    def format(self, p) -> str:
        value, t = self.operands
        attrs = {**valid_attr(self), **hint_attrs(self.cache, "xegpu")}
        return f" {p.name(value)}, {p.name(t)}{p.attr_dict(self, attrs)} : {value.type}, {t.type}"

    def interpret(self, interp, value, tile: TileRef):
        tile.store(value, self.valid)

    @classmethod
    def parse(cls, p, name):
        value, tdesc = p.values_n(2)
        attrs = p.attrs()
        cache = p.hints(attrs, "store")
        p.expect(":")
        p.typed([value, tdesc])
        return cls(value, tdesc, valid_of(attrs), cache)


class PrefetchNdOp(Operation):
    name = "xegpu.prefetch_nd"
    effects = (Effect(PREFETCH, ADDRESSED, 0),)

    def __init__(self, tdesc: Value, cache: CacheHints, loc=None):
        super().__init__([tdesc], [], loc=loc)
        self.cache = cache  # from prefetch_tile's locality (ir/cache_hints.py LOCALITY)

    def verify(self):
        check_tdesc(self, self.operands[0].type)
        check_cache_hints(self, "load")

    def format(self, p) -> str:
        t = self.operands[0]
        return f" {p.name(t)}{p.attr_dict(self, hint_attrs(self.cache, 'xegpu'))} : {t.type}"

    @classmethod
    def parse(cls, p, name):
        tdesc = p.value()
        cache = p.hints(p.attrs(), "load")
        p.expect(":")
        p.type_of(tdesc)
        return cls(tdesc, cache)

    def interpret(self, interp, tile):
        """A cache hint: no effect on values."""


class UpdateNdOffsetOp(Operation):
    name = "xegpu.update_nd_offset"
    effects = ()

    def __init__(self, tdesc: Value, offsets, loc=None):
        super().__init__([tdesc, *offsets], [tdesc.type], loc=loc)

    def verify(self):
        check_tdesc(self, self.operands[0].type)
        check_offsets(self, self.operands[1:])

    def format(self, p) -> str:
        t, *offsets = self.operands
        return f" {p.name(t)}, [{', '.join(p.name(v) for v in offsets)}] : {t.type}"

    @classmethod
    def parse(cls, p, name):
        tdesc = p.value()
        p.expect(",")
        offsets = p.bracketed()
        p.expect(":")
        p.type_of(tdesc)
        return cls(tdesc, offsets)

    def interpret(self, interp, tile: TileRef, d0, d1):
        return dataclasses.replace(tile, offsets=(tile.offsets[0] + int(d0), tile.offsets[1] + int(d1)))


class AtomicRMWOp(AtomicRMWTileOp):
    """xegpu.atomic_rmw on an nd descriptor: the XeTile op's rules and semantics at the XeGPU level."""

    name = "xegpu.atomic_rmw"
    effects = (reads(1), writes(1))

    def __init__(self, kind: str, value: Value, tile: Value, valid=None, compare: Value | None = None, loc=None):
        super().__init__(kind, value, tile, compare, loc=loc)
        self.valid = valid

    def verify(self):
        value, tdesc = self.operands[:2]
        check_tdesc(self, tdesc.type)
        if value.type.shape != tdesc.type.shape or value.type.dtype != tdesc.type.dtype:
            raise self.error(f"value {value.type} does not match {tdesc.type}", "atomic_rmw value matches the tile")
        check_compare(self)

    @classmethod
    def parse(cls, p, name):
        kind, (value, tdesc, *compare), attrs, result_type = parse_atomic(p, 2, 3)
        if type(tdesc.type) is not TensorDescType:
            raise p.error(f"{name} without a mask takes an nd tensor_desc, not {tdesc.type}")
        return p.result_type(cls(kind, value, tdesc, valid_of(attrs), *compare), result_type)


class DpasOp(TileMMAOp):
    """xegpu.dpas. With `vnni_b` (an 8-bit dtype) B comes as the hardware takes it (VNNI): [K/4, N] of i32,
    each word holding four K rows of `vnni_b`, the lowest row in the lowest byte."""

    name = "xegpu.dpas"

    def __init__(self, a: Value, b: Value, c: Value | None, result_type: VectorType, layout: Layout | None = None,
                 vnni_b: DType | None = None, precision: str = "ieee", loc=None):
        super().__init__(a, b, c, result_type, layout, precision, loc=loc)
        self.vnni_b = vnni_b

    def mma_types(self) -> list:
        a, b, *c = super().mma_types()
        if self.vnni_b is None:
            return [a, b, *c]
        if b.dtype != int32 or self.vnni_b.bits != 8:
            raise self.error(f"VNNI-packed B must be i32 words of 8-bit data, got {b} of {self.vnni_b}",
                             "dpas VNNI operand")
        return [a, VectorType((b.shape[0] * 4, b.shape[1]), self.vnni_b), *c]

    def accumulator_dtypes(self, operand: DType, acc: DType) -> tuple[DType, ...]:
        """Our DPAS accumulates in f32 (or i32): a 16-bit tile_mma accumulator is widened before it and rounded
        after it (xetile_to_xegpu)."""
        return (acc,)

    def format_attrs(self) -> dict:
        return {**super().format_attrs(), **({} if self.vnni_b is None else {"vnni_b": self.vnni_b.mlir})}

    @classmethod
    def parse_attrs(cls, p, attrs: dict) -> dict:
        return {**super().parse_attrs(p, attrs), "vnni_b": p.dtype_attr(attrs, "vnni_b")}

    def interpret(self, interp, a, b, c=None):
        return super().interpret(interp, a, vnni_unpack(b, self.vnni_b), c)


def vnni_unpack(words: np.ndarray, dtype: DType | None) -> np.ndarray:
    """[K/4, N] words of four 8-bit K rows each -> [K, N] of `dtype` (None: `words` are not packed)."""
    if dtype is None:
        return words
    data = np.ascontiguousarray(words.astype(np.int32)).view(np.uint8).reshape(words.shape[0], words.shape[1], 4)
    return data.transpose(0, 2, 1).reshape(words.shape[0] * 4, words.shape[1]).view(dtype.np_dtype)


class MultiReductionOp(TileReduceOp):
    """vector.multi_reduction keeping the reduced dims as size 1 (the XeTile tile_reduce semantics)."""

    name = "vector.multi_reduction"


class VectorBroadcastOp(TileBroadcastOp):
    name = "vector.broadcast"


class VectorTransposeOp(TileTransposeOp):
    name = "vector.transpose"


class XeGPUConvertLayoutOp(ConvertLayoutOp):
    name = "xegpu.convert_layout"

