"""XeTile ops (XeTile RFC, "XeTile Dialect" op table): workgroup-level tiles and vectors, 2-D (the RFC's) or 1-D
(a tile over an array's last dim).

The numpy rule of each op works on whole tiles. A tile value in the interpreter is a `TileRef`: the slice of
the base array the tile reads (its logical view, picked by the leading offsets of an array of higher rank), the
tile's offsets in it and its shape. Out-of-bounds elements read as `padding` and are dropped on store: the RFC's
hardware auto-padding, per slice, so kernels never check bounds.
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

import numpy as np

from . import numeric
from .attrs import Layout, format_list
from .cache_hints import RULE as CACHE_RULE, CacheHints, hint_attrs
from .core import Operation, Value, walk
from .analysis import sources, viewed_array
from .elementwise import ATOMIC_DTYPES, ATOMIC_KINDS, CAS_BITS, REDUCE_KINDS
from .effects import GLOBAL, PREFETCH, SLM, WRITE, Effect, memory_accesses, reads, writes
from .types import (ROW_MAJOR, DType, IndexType, MemRefType, SlmMemRefType, TileType, VectorType, dtype_of_numpy,
                    float32, int32)

DISTRIBUTION_RULE = "workgroup to subgroup distribution rule"
# held by every atomic read-modify-write: the subgroup-level interpreter runs subgroups as threads, and Python may
# switch between them between an atomic's read and its write
ATOMICS = threading.Lock()


def array_slice(base: np.ndarray, offsets, rank: int) -> np.ndarray:
    """The `rank`-D part of `base` (a view) at `offsets` along its leading dims, a 1-D base as one row for rank 2;
    empty when an offset lies outside the leading dims (auto-padding per slice)."""
    if base.ndim < rank:
        return base[None, :]
    at = tuple(numeric.wrap_i64(o) for o in offsets)
    if all(0 <= o < n for o, n in zip(at, base.shape)):
        return base[at]
    return np.empty((0,) * rank, base.dtype)


@dataclass
class TileRef:
    base: np.ndarray  # the slice of the array the tile reads: as many dims as the tile
    offsets: tuple[int, ...]  # i64: a move past 2**63 - 1 wraps, as the device's index arithmetic does
    shape: tuple[int, ...]
    checked: bool = True  # False: a descriptor without boundary_check, whose every access lies inside `base`

    def __post_init__(self):
        self.offsets = tuple(numeric.wrap_i64(o) for o in self.offsets)

    def inside(self, shape) -> None:
        """An unchecked tile's access of its leading `shape` lies inside `base` (the compiler's promise where it
        made the descriptor: xegpu_ops.TensorDescType.boundary_check), or the lowering is wrong."""
        if not self.checked and any(o < 0 or o + n > extent for o, n, extent in zip(self.offsets, shape,
                                                                                 self.base.shape)):
            raise AssertionError(f"an access of {list(shape)} at {list(self.offsets)} through a descriptor without "
                                 f"boundary_check lies outside its memory of {list(self.base.shape)}")

    def window(self):
        """(slices into base, slices into the tile) of the in-bounds part, or None if there is none."""
        src, dst = [], []
        for off, size, extent in zip(self.offsets, self.shape, self.base.shape):
            lo, hi = max(off, 0), min(off + size, extent)
            if lo >= hi:
                return None
            src.append(slice(lo, hi))
            dst.append(slice(lo - off, hi - off))
        return tuple(src), tuple(dst)

    def load(self, padding, valid=None):
        self.inside(valid or self.shape)
        out = np.full(self.shape, padding, dtype=self.base.dtype)
        win = self.window()
        if win is not None:
            out[win[1]] = self.base[win[0]]
        return out

    def store(self, value, valid=None) -> None:
        """Writes `value`, or only its leading `valid` block: a padded block writes only the part inside its
        value's shape."""
        if valid is not None:
            return dataclasses.replace(self, shape=tuple(valid)).store(value[:valid[0], :valid[1]])
        self.inside(self.shape)
        win = self.window()
        if win is not None:
            self.base[win[0]] = value[win[1]]

    def atomic(self, kind: str, value, valid=None, compare=None):
        """The atomic_rmw rule (ATOMIC_KINDS): the tile becomes kind(old, value), or for "cas" `value` where old
        equals `compare` bit for bit (a float's NaN too) and old elsewhere; returns the old values."""
        dtype = dtype_of_numpy(self.base.dtype)
        with ATOMICS:
            old = self.load(0)
            if kind == "cas":
                new = np.where(same_bits(old, compare), value, old)
            else:
                new = numeric.apply(dtype, ATOMIC_KINDS[kind][dtype.kind].numpy, old, value)
            self.store(new, valid)
        return old


def same_bits(a: np.ndarray, b) -> np.ndarray:
    """Elementwise equality of the bits of `a` and `b` (of a's dtype): what a compare-exchange compares."""
    bits = np.dtype(f"u{a.dtype.itemsize}")
    return a.view(bits) == np.asarray(b, a.dtype).view(bits)


def valid_attr(op) -> dict:
    """The `valid` attribute of a write that TileRef.store cuts, for the printer."""
    return {} if op.valid is None else {"valid": list(op.valid)}


def valid_of(attrs: dict) -> tuple[int, ...] | None:
    """The `valid` attribute back from the parsed attributes (valid_attr)."""
    valid = attrs.pop("valid", None)
    return None if valid is None else tuple(valid)


def check_layout(op: Operation, layout: Layout, shape, what: str) -> None:
    """RFC constraints of a layout on a shape: a workgroup-level one (sg_layout, sg_data) distributes the whole
    shape; at the subgroup level the shape is one subgroup's piece. That inst_data divides sg_data is checked where
    a user gives it (check_inst_divides)."""
    if layout.rank != len(shape):
        raise op.error(f"{what} layout {layout} has rank {layout.rank} but the {what} is {len(shape)}-D",
                       "layout rank matches the tile")
    if layout.sg_layout is not None:
        check_distribution(op, layout, shape, what)
    if layout.lane_layout is not None:
        lane_data = layout.lane_data or (1,) * layout.rank
        inst = layout.inst_data or layout.sg_data or shape
        for i, (n, lanes, data) in enumerate(zip(inst, layout.lane_layout, lane_data)):
            if n % (lanes * data) != 0:
                raise op.error(f"lane_layout[{i}] x lane_data[{i}] = {lanes * data} does not divide "
                               f"inst_data[{i}] = {n}", "inst_data is divisible by lane_layout x lane_data")
    if layout.lane_data is not None and sum(d > 1 for d in layout.lane_data) > 1:
        raise op.error(f"lane_data {format_list(layout.lane_data)} spans two dimensions",
                       "lane_data elements are contiguous and come from a single dimension")


def check_inst_divides(op: Operation, layout: Layout, shape) -> None:
    """RFC: sg_data is divisible by inst_data. Without sg_data, inst_data is the blocking of each subgroup's data
    and layout propagation gives the workgroup map, splitting the value in whole blocks: inst_data divides the
    value. Checked on the layouts users give (the front end, layout completion); the blocks completion chooses
    for an odd piece pad it instead, as blocking does."""
    if layout.sg_data is None:
        for i, (n, inst) in enumerate(zip(shape, layout.inst_data or ())):
            if n % inst != 0:
                raise op.error(f"inst_data[{i}] = {inst} does not divide dim {i} = {n} of the value",
                               "without sg_layout, inst_data divides the value")
    for i, (sg, inst) in enumerate(zip(layout.sg_data or (), layout.inst_data or ())):
        if sg % inst != 0:
            raise op.error(f"inst_data[{i}] = {inst} does not divide sg_data[{i}] = {sg}",
                           "sg_data is divisible by inst_data")


def check_distribution(op: Operation, layout: Layout, shape, what: str) -> None:
    for i, (wg, lay, sg) in enumerate(zip(shape, layout.sg_layout, layout.sg_data)):
        if wg % sg != 0:
            raise op.error(f"sg_data[{i}] = {sg} does not divide the {what} dim {wg}", DISTRIBUTION_RULE)
        unit = lay * sg
        if wg % unit != 0 and unit % wg != 0:
            raise op.error(f"sg_layout[{i}] x sg_data[{i}] = {unit} must divide the {what} dim {wg} "
                           f"or be a multiple of it", DISTRIBUTION_RULE)


def check_2d(op: Operation, t, what: str) -> None:
    if len(t.shape) != 2:
        raise op.error(f"{what} must be 2-D, got {t}", "XeTile tiles and vectors are 2-D")


def check_block_tile(op: Operation, t) -> None:
    if not isinstance(t, TileType):
        raise op.error(f"operand must be a tile, got {t}", f"{op.name} takes a tile")
    if t.scatter:
        raise op.error(f"{t} is a #scatter tile; use load_gather, store_scatter", f"{op.name} takes a block tile")


def check_offsets(op: Operation, offsets, count: int = 2) -> None:
    if len(offsets) != count or not all(isinstance(v.type, IndexType) for v in offsets):
        raise op.error(f"takes {count} index offsets, one per dimension, got {len(offsets)}",
                       "one tile offset per dimension")


def check_rank(op: Operation, t, what: str) -> None:
    if len(t.shape) not in (1, 2):
        raise op.error(f"{what} must be 1-D or 2-D, got {t}", "XeTile tiles are 1-D or 2-D")


def format_at_offsets(op: Operation, p) -> str:
    """`base[offsets] : base type -> result type` (init_tile, create_nd_tdesc)."""
    base, *offsets = op.operands
    return f" {p.name(base)}[{', '.join(p.name(v) for v in offsets)}] : {base.type} -> {op.result.type}"


def parse_at_offsets(p) -> tuple[Value, list[Value], object]:
    """(base, offsets, result type) of format_at_offsets's text."""
    base = p.value()
    offsets = p.bracketed()
    p.expect(":")
    p.type_of(base)
    p.expect("->")
    return base, offsets, p.type()


class InitTileOp(Operation):
    name = "xetile.init_tile"
    effects = ()

    def __init__(self, base: Value, offsets, tile_type: TileType, loc=None):
        super().__init__([base, *offsets], [tile_type], loc=loc)

    def verify(self):
        base, *offsets = self.operands
        tile = self.result.type
        if not isinstance(base.type, MemRefType):
            raise self.error(f"base must be an array argument or SLM buffer, got {base.type}",
                             "init_tile takes a base array")
        check_offsets(self, offsets, base.type.rank)
        check_rank(self, tile, "tile")
        if len(tile.shape) > 1 and base.type.rank == 1 and tile.shape[0] != 1:
            raise self.error(f"a 2-D tile {format_list(tile.shape)} of a 1-D array must have one row",
                             "a 1-D array is one row")
        if not all(isinstance(n, int) and n > 0 for n in tile.shape):
            raise self.error(f"tile shape {format_list(tile.shape)} must be positive compile-time ints",
                             "tile shape is static")
        if tile.dtype != base.type.dtype:
            raise self.error(f"tile element type {tile.dtype} differs from the array's {base.type.dtype}",
                             "tile element type is the base matrix's")
        if tile.order != base.type.order:
            layout = "row-major" if base.type.order == ROW_MAJOR else "column-major"
            raise self.error(f"order = {format_list(tile.order)} does not match the {layout} base array "
                             f"(innermost stride 1 along dim {base.type.order[0]})",
                             "order is consistent with the base matrix layout")

    def format(self, p) -> str:
        return format_at_offsets(self, p)

    @classmethod
    def parse(cls, p, name):
        return cls(*parse_at_offsets(p))

    def interpret(self, interp, base, *offsets):
        shape = self.result.type.shape
        offsets = tuple(int(o) for o in offsets)
        if base.ndim < len(shape):  # a 1-D array as one row
            offsets = (0, *offsets)
        lead = len(offsets) - len(shape)
        return TileRef(array_slice(base, offsets[:lead], len(shape)), offsets[lead:], shape)


class LoadTileOp(Operation):
    name = "xetile.load_tile"
    effects = (reads(0),)  # global memory or SLM, as the tile's base is an argument or an alloc_slm buffer

    def __init__(self, tile: Value, padding=0, cache: CacheHints | None = None, loc=None):
        t = tile.type
        super().__init__([tile], [VectorType(t.shape, t.dtype)], loc=loc)
        self.padding = padding
        self.cache = cache

    def verify(self):
        t = self.operands[0].type
        check_block_tile(self, t)
        if not numeric.representable(self.padding, t.dtype):
            raise self.error(f"padding {self.padding} is not representable in {t.dtype}",
                             "padding value has the tile's element type")
        check_cache_hints(self, "load")

    def format(self, p) -> str:
        tile = self.operands[0]
        attrs = {"padding": self.padding} if self.padding != 0 else {}
        attrs.update(hint_attrs(self.cache, "xetile"))
        return f" {p.name(tile)}{p.attr_dict(self, attrs)} : {tile.type} -> {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        tile = p.value()
        attrs = p.attrs()
        op = cls(tile, attrs.pop("padding", 0), p.hints(attrs, "load"))
        p.expect(":")
        p.type_of(tile)
        p.expect("->")
        return p.result_type(op, p.type())

    def interpret(self, interp, tile: TileRef):
        return tile.load(self.padding)


def check_cache_hints(op: Operation, kind: str) -> None:
    """`op.cache`: None, or "load" / "store" hints of a pair an Xe LSC message accepts (ir/cache_hints.py)."""
    hints = op.cache
    if hints is None:
        return
    problem = hints.problem() if hints.kind == kind else f"{hints.kind} cache hints on a {kind}"
    if problem is not None:
        raise op.error(problem, CACHE_RULE)


def check_value_fits_tile(op: Operation, value: Value, tile: Value) -> None:
    if not isinstance(tile.type, TileType):
        raise op.error(f"operand must be a tile, got {tile.type}", "memory ops take a tile")
    vt, tt = value.type, tile.type
    if not isinstance(vt, VectorType) or vt.shape != tt.shape:
        raise op.error(f"value {vt} must have the tile's shape {format_list(tt.shape)}",
                       "vector dims match the tile dims exactly")
    if vt.dtype != tt.dtype:
        raise op.error(f"value element type {vt.dtype} differs from the tile's {tt.dtype}",
                       "vector element type matches the tile")


class StoreTileOp(Operation):
    name = "xetile.store_tile"
    effects = (writes(1),)

    def __init__(self, value: Value, tile: Value, cache: CacheHints | None = None, loc=None):
        super().__init__([value, tile], [], loc=loc)
        self.cache = cache

    def verify(self):
        check_value_fits_tile(self, *self.operands)
        check_block_tile(self, self.operands[1].type)
        check_cache_hints(self, "store")

    def format(self, p) -> str:
        value, tile = self.operands
        attrs = p.attr_dict(self, hint_attrs(self.cache, "xetile"))
        return f" {p.name(value)}, {p.name(tile)}{attrs} : {value.type}, {tile.type}"

    @classmethod
    def parse(cls, p, name):
        value, tile = p.values_n(2)
        cache = p.hints(p.attrs(), "store")
        p.expect(":")
        p.typed([value, tile])
        return cls(value, tile, cache)

    def interpret(self, interp, value, tile: TileRef):
        tile.store(value)


class UpdateTileOffsetOp(Operation):
    name = "xetile.update_tile_offset"
    effects = ()

    def __init__(self, tile: Value, offsets, loc=None):
        super().__init__([tile, *offsets], [tile.type], loc=loc)

    def verify(self):
        tile, *offsets = self.operands
        if not isinstance(tile.type, TileType):
            raise self.error(f"operand must be a tile, got {tile.type}", "update_tile_offset moves a tile")
        check_offsets(self, offsets, len(tile.type.shape))

    def format(self, p) -> str:
        tile, *offsets = self.operands
        return f" {p.name(tile)}, [{', '.join(p.name(v) for v in offsets)}] : {tile.type}"

    @classmethod
    def parse(cls, p, name):
        tile = p.value()
        p.expect(",")
        offsets = p.bracketed()
        p.expect(":")
        p.type_of(tile)
        return cls(tile, offsets)

    def interpret(self, interp, tile: TileRef, *deltas):
        """Moves the tile inside its slice: one offset per tile dim."""
        return TileRef(tile.base, tuple(o + int(d) for o, d in zip(tile.offsets, deltas)), tile.shape)


class PrefetchTileOp(Operation):
    name = "xetile.prefetch_tile"
    effects = (Effect(PREFETCH, GLOBAL, 0),)

    def __init__(self, tile: Value, locality: int = 3, loc=None):
        super().__init__([tile], [], loc=loc)
        self.locality = locality

    def verify(self):
        check_block_tile(self, self.operands[0].type)
        if self.locality not in (0, 1, 2, 3):
            raise self.error(f"locality must be 0..3, got {self.locality}", "prefetch locality hint is 0 to 3")

    def format(self, p) -> str:
        tile = self.operands[0]
        return f" {p.name(tile)} locality<{self.locality}> : {tile.type}"

    @classmethod
    def parse(cls, p, name):
        tile = p.value()
        p.keyword("locality")
        p.expect("<")
        locality = p.int()
        p.expect(">")
        p.expect(":")
        p.type_of(tile)
        return cls(tile, locality)

    def interpret(self, interp, tile):
        """A cache hint: no effect on values."""


def mma_accumulator_dtype(a: DType, b: DType) -> DType | None:
    """The RFC's DPAS type combinations: f16 x f16, bf16 x bf16 -> f32; f32 x f32 -> f32; (u)int8 -> i32; and FP8
    x FP8 (either format each) -> f32."""
    if a.is_float and b.is_float and (a == b or a.bits == b.bits == 8):
        return float32
    if a.is_int and b.is_int and a.bits == 8 and b.bits == 8:
        return int32
    return None


PRECISIONS = ("ieee", "tf32")  # tile_mma input_precision (Triton's names): exact f32, or f32 operands as tf32
PRECISION_RULE = "tile_mma input_precision"


class TileMMAOp(Operation):
    """a @ b (+ c). `precision` "tf32" (f32 x f32 only) reads the operands as tf32, as tf32 DPAS does: each
    truncated to 10 mantissa bits (numeric.tf32), products and sums in f32; "ieee" (the default) is exact f32."""

    name = "xetile.tile_mma"
    effects = ()

    def __init__(self, a: Value, b: Value, c: Value | None, result_type: VectorType, layout: Layout | None = None,
                 precision: str = "ieee", loc=None):
        super().__init__([a, b] + ([c] if c is not None else []), [result_type], loc=loc)
        self.result.layout = layout  # the anchor that layout propagation starts from
        self.precision = precision

    def mma_types(self) -> list:
        """The operand types as the matrix product sees them."""
        return [v.type for v in self.operands]

    def verify(self):
        a, b, *c = self.mma_types()
        for name, t in (("A", a), ("B", b), *(("C", t) for t in c)):
            if not isinstance(t, VectorType):
                raise self.error(f"operand {name} must be a vector, got {t}", "tile_mma takes 2-D vectors")
            check_2d(self, t, f"operand {name}")
        m, k = a.shape
        k2, n = b.shape
        if k != k2:
            raise self.error(f"A is {m}x{k} but B is {k2}x{n}: inner dims differ", "tile_mma operand shapes")
        acc = mma_accumulator_dtype(a.dtype, b.dtype)
        if acc is None:
            raise self.error(f"unsupported operand types {a.dtype} x {b.dtype}; takes f16 x f16, bf16 x bf16, "
                             "f32 x f32, FP8 x FP8 or 8-bit integers", "tile_mma operand element types")
        r = self.result.type
        allowed = self.accumulator_dtypes(a.dtype, acc)
        if r.shape != (m, n) or r.dtype not in allowed:
            wanted = " or ".join(f"vector<{m}x{n}x{d}>" for d in allowed)
            raise self.error(f"result {r} must be {wanted}", "tile_mma accumulator type")
        if c and c[0] != r:
            raise self.error(f"accumulator {c[0]} must be {r}", "tile_mma accumulator type")
        check_precision(self, self.precision, a.dtype, b.dtype)

    def accumulator_dtypes(self, operand: DType, acc: DType) -> tuple[DType, ...]:
        """f16 x f16 and bf16 x bf16 may also accumulate in their own type (the RFC's bf16 GEMMs into bf16): the
        product and sum are computed in f32 and rounded once, at the end of the op."""
        return (acc, operand) if operand.is_float and operand.bits == 16 else (acc,)

    def format_attrs(self) -> dict:
        return precision_attrs(self.precision)

    def format(self, p) -> str:
        names = ", ".join(p.name(v) for v in self.operands)
        types = ", ".join(str(v.type) for v in self.operands)
        return f" {names}{p.attr_dict(self, self.format_attrs())} : {types} into {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        (a, b, *c), attrs, result_type = p.operands_to("into", (2, 3), name)
        return cls(a, b, c[0] if c else None, result_type, **cls.parse_attrs(p, attrs))

    @classmethod
    def parse_attrs(cls, p, attrs: dict) -> dict:
        """The constructor's keywords from the printed attributes (format_attrs)."""
        return {"precision": attrs.pop("input_precision", "ieee")}

    def interpret(self, interp, a, b, c=None):
        return numeric.mma(a, b, c, self.result.type.dtype, self.precision)


def check_precision(op: Operation, precision: str, a: DType, b: DType) -> None:
    """The input_precision rule: "ieee" or "tf32", and tf32 only for f32 x f32 operands."""
    if precision not in PRECISIONS:
        raise op.error(f"input_precision {precision!r} is not one of {', '.join(map(repr, PRECISIONS))}",
                       PRECISION_RULE)
    if precision == "tf32" and not (a == b == float32):
        raise op.error(f"input_precision 'tf32' takes f32 x f32 operands, not {a} x {b}", PRECISION_RULE)


def precision_attrs(precision: str) -> dict:
    """The printed attribute: only the non-default precision, so f16 / int8 dumps stay as they were."""
    return {} if precision == "ieee" else {"input_precision": f'"{precision}"'}


class TileTransposeOp(Operation):
    name = "xetile.tile_transpose"
    effects = ()

    def __init__(self, v: Value, perm, loc=None):
        perm = tuple(perm)
        shape = tuple(v.type.shape[i] for i in perm) if sorted(perm) == list(range(len(v.type.shape))) \
            else v.type.shape
        super().__init__([v], [VectorType(shape, v.type.dtype)], loc=loc)
        self.perm = perm

    def verify(self):
        t = self.operands[0].type
        check_2d(self, t, "operand")
        if sorted(self.perm) != [0, 1]:
            raise self.error(f"permutation {format_list(self.perm)} must be a permutation of [0, 1]",
                             "tile_transpose permutes the two dims")

    def format(self, p) -> str:
        v = self.operands[0]
        return f" {p.name(v)} {format_list(self.perm)}{p.attr_dict(self)} : {v.type} into {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        v, perm, result_type = p.listed_into()
        return p.result_type(cls(v, perm), result_type)

    def interpret(self, interp, v):
        return np.ascontiguousarray(np.transpose(v, self.perm))


def reduced_shape(shape, dims) -> tuple[int, ...]:
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


class TileReduceOp(Operation):
    name = "xetile.tile_reduce"
    effects = ()

    def __init__(self, kind: str, v: Value, dims, loc=None):
        dims = tuple(dims)
        super().__init__([v], [VectorType(reduced_shape(v.type.shape, dims), v.type.dtype)], loc=loc)
        self.kind = kind
        self.dims = dims

    def verify(self):
        t = self.operands[0].type
        check_rank(self, t, "operand")
        if self.kind not in REDUCE_KINDS:
            raise self.error(f"unknown kind '{self.kind}'; kinds are {', '.join(REDUCE_KINDS)}", "tile_reduce kinds")
        if t.dtype.kind not in REDUCE_KINDS[self.kind]:
            raise self.error(f"kind '{self.kind}' does not apply to {t.dtype}", "tile_reduce kinds per element type")
        if not self.dims or len(set(self.dims)) != len(self.dims) or not set(self.dims) <= set(range(len(t.shape))):
            raise self.error(f"reduction dims {format_list(self.dims)} must be distinct dims of the {len(t.shape)}-D "
                             "vector", "tile_reduce dims")

    @property
    def rfc_kind(self) -> str:
        return REDUCE_KINDS[self.kind][self.operands[0].type.dtype.kind].rfc

    def format(self, p) -> str:
        v = self.operands[0]
        return (f" <{self.rfc_kind}> {p.name(v)} {format_list(self.dims)}{p.attr_dict(self)} : {v.type} "
                f"into {self.result.type}")

    @classmethod
    def parse(cls, p, name):
        printed = p.angle_word()
        v, dims, result_type = p.listed_into()
        return p.result_type(cls(p.kind(REDUCE_KINDS, "rfc", printed, v.type.dtype), v, dims), result_type)

    def interpret(self, interp, v):
        dtype = self.result.type.dtype
        reduce = REDUCE_KINDS[self.kind][dtype.kind].numpy
        wide = v.astype(np.float32) if dtype.is_float else v
        with np.errstate(all="ignore"):
            out = reduce(wide, axis=self.dims, keepdims=True)
        return out.astype(dtype.np_dtype)


class TileBroadcastOp(Operation):
    name = "xetile.tile_broadcast"
    effects = ()

    def __init__(self, v: Value, dims, shape, loc=None):
        super().__init__([v], [VectorType(tuple(shape), v.type.dtype)], loc=loc)
        self.dims = tuple(dims)

    def verify(self):
        src, dst = self.operands[0].type, self.result.type
        check_rank(self, dst, "result")
        if len(src.shape) != len(dst.shape):
            raise self.error(f"operand {src} and result {dst} differ in rank", "tile_broadcast keeps the rank")
        if not self.dims or not set(self.dims) <= set(range(len(dst.shape))):
            raise self.error(f"broadcast dims {format_list(self.dims)} must be dims of the {len(dst.shape)}-D vector",
                             "tile_broadcast dims")
        for i, (s, d) in enumerate(zip(src.shape, dst.shape)):
            if i in self.dims and s != 1:
                raise self.error(f"dim {i} of {src} is broadcast so it must be 1", "tile_broadcast source shape")
            if i not in self.dims and s != d:
                raise self.error(f"dim {i} of {src} is not broadcast so it must equal {d}",
                                 "tile_broadcast source shape")

    def format(self, p) -> str:
        v = self.operands[0]
        return f" {p.name(v)} {format_list(self.dims)}{p.attr_dict(self)} : {v.type} into {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        v, dims, result_type = p.listed_into()
        return p.result_type(cls(v, dims, getattr(result_type, "shape", ())), result_type)

    def interpret(self, interp, v):
        return np.ascontiguousarray(np.broadcast_to(v, self.result.type.shape))


class AtomicRMWTileOp(Operation):
    """xetile.atomic_rmw_tile; the kind "cas" (xetile.atomic_cas) takes the compared values as a third operand:
    `<cas> %value, %tile, %compare`."""

    name = "xetile.atomic_rmw_tile"
    effects = (reads(1), writes(1))
    valid = None  # the leading block it writes (TileRef.store); XeGPU's blocked ops set it

    def __init__(self, kind: str, value: Value, tile: Value, compare: Value | None = None, loc=None):
        super().__init__([value, tile] + ([compare] if compare is not None else []), [value.type], loc=loc)
        self.kind = kind

    @property
    def compare(self) -> list[Value]:
        """The compared values of a compare-and-swap ([] for the other kinds)."""
        return list(self.operands[2:3]) if self.kind == "cas" else []

    def verify(self):
        value, tile = self.operands[:2]  # a #scatter tile's op has a mask after them
        check_value_fits_tile(self, value, tile)
        self.check_compare()
        dtype = tile.type.dtype
        if dtype.mlir not in ATOMIC_DTYPES:
            raise self.error(f"element type {dtype} has no atomics; supported: {', '.join(ATOMIC_DTYPES)}",
                             "atomic_rmw_tile element types")
        if self.kind not in ATOMIC_KINDS or dtype.kind not in ATOMIC_KINDS[self.kind]:
            valid = [k for k, rules in ATOMIC_KINDS.items() if dtype.kind in rules]
            raise self.error(f"kind '{self.kind}' does not apply to {dtype}; kinds for it: {', '.join(valid)}",
                             "atomic_rmw_tile kinds")

    def format(self, p) -> str:
        return format_atomic(self, p)

    @classmethod
    def parse(cls, p, name):
        kind, (value, tile, *compare), attrs, result_type = parse_atomic(p, 2, 3)
        if not isinstance(tile.type, TileType) or tile.type.scatter:
            raise p.error(f"{name} without a mask takes a block tile, not {tile.type}")
        return p.result_type(cls(kind, value, tile, *compare), result_type)

    def interpret(self, interp, value, tile: TileRef, *compare):
        return tile.atomic(self.kind, value, self.valid, *compare)


    def check_compare(self) -> None:
        check_compare(self)


def check_compare(op: Operation) -> None:
    """A compare-and-swap has compared values of the value's type, of 32 or 64 bits; no other atomic has them."""
    value = op.operands[0]
    if len(op.operands) != 2 + (op.kind == "cas"):
        raise op.error(f"kind '{op.kind}' takes {2 + (op.kind == 'cas')} operands, got {len(op.operands)}",
                       "only a compare-and-swap has compared values")
    for compare in op.compare:
        if compare.type != value.type:
            raise op.error(f"compared values {compare.type} differ from the values {value.type}",
                           "atomic_cas compares values of the tile's type")
        if value.type.dtype.bits not in CAS_BITS:
            raise op.error(f"compare-and-swap on {value.type.dtype}: only 32- and 64-bit elements",
                           "atomic_cas element types")


def format_atomic(op: Operation, p, attrs: dict | None = None) -> str:
    """`<kind> value, tile[, compare] {valid, attrs} : types -> result`, at every level."""
    operands = op.operands
    kind = ATOMIC_KINDS[op.kind][operands[1].type.dtype.kind].rmw
    return (f" <{kind}> {', '.join(p.name(v) for v in operands)}"
            f"{p.attr_dict(op, {**valid_attr(op), **(attrs or {})})} : "
            f"{', '.join(str(v.type) for v in operands)} -> {op.result.type}")


def parse_atomic(p, *counts: int) -> tuple[str, list[Value], dict, object]:
    """`<kind> operands{attrs} : types -> result` of an atomic at any level: (the user kind, the operands, the
    attributes, the result type); `counts`: how many operands the op may take."""
    printed = p.angle_word()
    operands, attrs, result_type = p.operands_to("->", counts, "an atomic")
    return p.kind(ATOMIC_KINDS, "rmw", printed, operands[1].type.dtype), operands, attrs, result_type



class ConvertLayoutOp(Operation):
    """Redistributes a workgroup-level vector between subgroups (lowered through SLM); values are unchanged."""

    name = "xetile.tile_conv_layout"
    effects = ()  # a value op here; its SLM round trip comes with wg-to-sg

    def __init__(self, v: Value, layout: Layout, loc=None):
        super().__init__([v], [v.type], loc=loc)
        self.result.layout = layout

    def verify(self):
        src = self.operands[0]
        if not isinstance(src.type, VectorType):
            raise self.error(f"operand must be a vector, got {src.type}", "tile_conv_layout converts a vector")

    def format(self, p) -> str:
        v = self.operands[0]
        key = "src_wg_map" if p.dialect == "xetile" else "input_layout"
        attrs = {key: v.layout} if v.layout is not None else {}
        return f" {p.name(v)}{p.attr_dict(self, attrs)} : {v.type} into {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        v = p.value()
        attrs = p.attrs()
        source = attrs.pop("src_wg_map", None) or attrs.pop("input_layout", None)
        layout = p.pop(attrs, "wg_map" if "wg_map" in attrs else "layout")
        p.expect(":")
        p.type_of(v)
        p.keyword("into")
        p.type_of(v)
        if v.layout is None:  # a loop-carried value prints no layout; the conversion names it
            v.layout = source
        return cls(v, layout)

    def interpret(self, interp, v):
        return v


def layout_of(v: Value) -> Layout | None:
    """A tile's layout is in its type; a vector's is on the value."""
    return v.type.layout if isinstance(v.type, TileType) else v.layout


def check_result_layouts(op: Operation) -> None:
    for v in op.results:
        layout = layout_of(v)
        if layout is not None:
            check_layout(op, layout, v.type.shape, "tile" if isinstance(v.type, TileType) else "result")


def written_arrays(func) -> set:
    """The array arguments that an op with a global write effect (ir/effects.py) writes, following tiles
    through loops and ifs: the arrays the host copies back (an SLM buffer lives and dies with its workgroup)."""
    bases = sources(func, InitTileOp, UpdateTileOffsetOp)
    written = set()
    for op in walk(func.body):
        for effect, tile in memory_accesses(op):
            if effect.kind == WRITE and effect.memory != SLM:
                written |= {viewed_array(base) for base in bases.get(tile, frozenset())}
    return {array for array in written if not isinstance(array.type, SlmMemRefType)}


XETILE_OPS = (InitTileOp, LoadTileOp, StoreTileOp, UpdateTileOffsetOp, PrefetchTileOp, TileMMAOp, TileTransposeOp,
              TileReduceOp, TileBroadcastOp, AtomicRMWTileOp, ConvertLayoutOp)
