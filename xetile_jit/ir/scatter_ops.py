"""XeTile gather/scatter (XeTile RFC "support for load_gather and store_scatter"): `init_tile` with element
offsets makes a `#scatter` tile; `load_gather`, `store_scatter`, `update_tile_offset` and `atomic_rmw_tile` use it.

An offset is an element index into the base array, row-major over its logical 2-D view (RFC: address =
base + offset). `chunk_size` (XeGPU RFC `scatter_tdesc_attr`: 2, 3, 4, 8, 16, 32 or 64) gives each offset that
many consecutive elements: offsets and mask are [N, 1] and the tile [N, chunk_size] (a row gather). Every
element is bounds-checked against the array's extent on its own: one outside it, or in a masked-off row, reads
`padding` and is never written (the RFC's masked lanes, and our auto-padding rule for block tiles).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import numeric
from .attrs import format_list
from .core import Operation, Value
from .effects import GLOBAL, reads, writes
from .elementwise import ATOMIC_KINDS
from .types import MemRefType, TileType, VectorType, dtype_of_numpy
from .xetile_ops import ATOMICS, AtomicRMWTileOp, InitTileOp, UpdateTileOffsetOp, check_2d, parse_atomic

CHUNK_SIZES = (1, 2, 3, 4, 8, 16, 32, 64)  # 1: no chunk attribute


@dataclass(frozen=True)
class ScatterTileType(TileType):
    """`!xetile.tile<1x256xbf16, #scatter>`; a chunked tile prints `#scatter<chunk_size = 8>`."""

    chunk_size: int = 1
    scatter = True

    @property
    def index_shape(self) -> tuple[int, int]:
        """The shape of its offsets and mask: the tile's, or one column per chunk."""
        return (self.shape[0], 1) if self.chunk_size > 1 else tuple(self.shape)

    def __str__(self) -> str:
        body = f"{'x'.join(map(str, self.shape))}x{self.dtype.mlir}"
        scatter = f"#scatter<chunk_size = {self.chunk_size}>" if self.chunk_size > 1 else "#scatter"
        attr = self.attr_text()
        return f"!xetile.tile<{body}, {scatter}{', ' + attr if attr else ''}>"


def per_element(v: np.ndarray, shape, offsets: bool = False) -> np.ndarray:
    """An index-shaped operand (offsets, delta, mask) in the tile's shape (identity when the shapes agree): an
    [N, 1] operand of chunks is broadcast along each chunk; `offsets` count along it too, since a chunk's offset is
    the address of its first element (XeGPU RFC chunk_size). A delta moves the whole chunk by its value."""
    v = np.asarray(v)
    if v.shape == tuple(shape):
        return v
    wide = np.broadcast_to(v, tuple(shape))
    return wide + np.arange(shape[1], dtype=np.int64) if offsets else wide


@dataclass
class ScatterRef:
    """A scatter tile in the interpreter: the base array (logical 2-D view) and each element's offset."""

    base: np.ndarray
    offsets: np.ndarray  # int64, the tile's shape

    def active(self, mask=None, valid=None) -> np.ndarray:
        """Elements that access memory: inside the array and selected."""
        return self.inside() & self.selected(mask, valid)

    def inside(self) -> np.ndarray:
        return (self.offsets >= 0) & (self.offsets < self.base.size)

    def selected(self, mask=None, valid=None) -> np.ndarray:
        """Elements with their mask set (broadcast along a chunk), in the `valid` leading block (blocking's
        padding)."""
        ok = np.ones(self.offsets.shape, dtype=bool)
        if mask is not None:
            ok &= per_element(np.asarray(mask, dtype=bool), ok.shape)
        if valid is not None:
            inside = np.zeros(ok.shape, dtype=bool)
            inside[:valid[0], :valid[1]] = True
            ok &= inside
        return ok

    def where(self, ok: np.ndarray):
        return np.unravel_index(self.offsets[ok], self.base.shape)

    def load(self, padding, mask=None, valid=None) -> np.ndarray:
        out = np.full(self.offsets.shape, padding, dtype=self.base.dtype)
        ok = self.active(mask, valid)
        out[ok] = self.base[self.where(ok)]
        return out

    def store(self, value, mask=None, valid=None) -> None:
        """Where two elements share an offset one of them is written (which one is not defined, as on hardware)."""
        ok = self.active(mask, valid)
        self.base[self.where(ok)] = np.asarray(value)[ok]

    def atomic(self, kind: str, value, mask=None, valid=None) -> np.ndarray:
        """kind(old, value) element by element in row-major order (repeated offsets accumulate); returns the old
        values, 0 where nothing was accessed."""
        dtype = dtype_of_numpy(self.base.dtype)
        rule = ATOMIC_KINDS[kind][dtype.kind].numpy
        old = np.zeros(self.offsets.shape, dtype=self.base.dtype)
        ok = self.active(mask, valid)
        with ATOMICS:
            for place in zip(*np.nonzero(ok)):
                at = np.unravel_index(self.offsets[place], self.base.shape)
                old[place] = self.base[at]
                self.base[at] = numeric.apply(dtype, rule, self.base[at], value[place])
        return old

    def moved(self, delta) -> ScatterRef:
        delta = np.asarray(delta, dtype=np.int64)
        return ScatterRef(self.base, self.offsets + per_element(delta, self.offsets.shape))


def check_rank(op: Operation, tile: ScatterTileType) -> None:
    """A #scatter tile is 2-D, or 1-D (one row: as_rank2 makes it 1xN); a chunked one is [N, chunk_size]."""
    if len(tile.shape) == 1 and tile.chunk_size == 1:
        return
    check_2d(op, tile, "tile")


def check_scatter_tile(op: Operation, t) -> None:
    if not isinstance(t, ScatterTileType):
        raise op.error(f"operand must be a #scatter tile, got {t}", f"{op.name} takes a tile made with offsets")


def check_index_vector(op: Operation, v: Value, tile: ScatterTileType, what: str) -> None:
    """Offsets and deltas are integer vectors of the tile's index shape (one per chunk)."""
    t = v.type
    if not isinstance(t, VectorType) or not t.dtype.is_int:
        raise op.error(f"{what} must be an integer vector, got {t}", "scatter offsets are integer vectors")
    if t.shape != tile.index_shape:
        raise op.error(f"{what} {t} must have shape {format_list(tile.index_shape)} for {tile}",
                       "one offset per element, or per chunk with chunk_size")


def check_mask(op: Operation, mask: list[Value], tile: ScatterTileType) -> None:
    if not mask:
        return
    t = mask[0].type
    if not isinstance(t, VectorType) or not t.dtype.is_bool or t.shape != tile.index_shape:
        raise op.error(f"mask {t} must be vector<{'x'.join(map(str, tile.index_shape))}xi1>",
                       "the mask has one i1 per offset (chunk_size: per chunk)")


def mask_text(p, mask: list[Value]) -> str:
    return "".join(f", {p.name(m)}" for m in mask)


def mask_type_text(mask: list[Value]) -> str:
    return "".join(f", {m.type}" for m in mask)


class InitScatterTileOp(InitTileOp):
    """`xetile.init_tile %base, %offsets : memref, vector<NxMxindex> into tile<NxMxT, #scatter>`."""

    def __init__(self, base: Value, offsets: Value, tile_type: ScatterTileType, loc=None):
        Operation.__init__(self, [base, offsets], [tile_type], loc=loc)

    def verify(self):
        base, offsets = self.operands
        tile = self.result.type
        if not isinstance(base.type, MemRefType):
            raise self.error(f"base must be an array argument, got {base.type}", "init_tile takes a base array")
        check_rank(self, tile)
        if tile.chunk_size not in CHUNK_SIZES:
            raise self.error(f"chunk_size {tile.chunk_size} must be one of {', '.join(map(str, CHUNK_SIZES[1:]))}",
                             "chunk_size values of scatter_tdesc_attr")
        if tile.dtype != base.type.dtype:
            raise self.error(f"tile element type {tile.dtype} differs from the array's {base.type.dtype}",
                             "tile element type is the base matrix's")
        check_index_vector(self, offsets, tile, "offsets")

    def format(self, p) -> str:
        base, offsets = self.operands
        return f" {p.name(base)}, {p.name(offsets)} : {base.type}, {offsets.type} into {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        base, offsets = p.values_n(2)
        p.expect(":")
        p.typed([base, offsets])
        p.keyword("into")
        return cls(base, offsets, p.type())

    def interpret(self, interp, base, offsets):
        offsets = np.asarray(offsets, dtype=np.int64)
        return ScatterRef(base, per_element(offsets, self.result.type.shape, offsets=True))


class LoadGatherOp(Operation):
    """`xetile.load_gather %tile, %mask {padding = 1.0} : tile<..., #scatter>, vector<...xi1> into vector<...>`."""

    name = "xetile.load_gather"
    effects = (reads(0, GLOBAL),)

    def __init__(self, tile: Value, mask: Value | None = None, padding=0, loc=None):
        super().__init__([tile] + ([mask] if mask is not None else []), [VectorType(tile.type.shape,
                                                                                     tile.type.dtype)], loc=loc)
        self.padding = padding

    @property
    def mask(self) -> list[Value]:
        return list(self.operands[1:])

    def verify(self):
        tile = self.operands[0].type
        check_scatter_tile(self, tile)
        check_mask(self, self.mask, tile)
        if not numeric.representable(self.padding, tile.dtype):
            raise self.error(f"padding {self.padding} is not representable in {tile.dtype}",
                             "padding value has the tile's element type")

    def format(self, p) -> str:
        tile = self.operands[0]
        attrs = {"padding": self.padding} if self.padding != 0 else {}
        return (f" {p.name(tile)}{mask_text(p, self.mask)}{p.attr_dict(self, attrs)} : {tile.type}"
                f"{mask_type_text(self.mask)} into {self.result.type}")

    @classmethod
    def parse(cls, p, name):
        tile, *mask = operands = p.operands()
        attrs = p.attrs()
        p.expect(":")
        p.typed(operands)
        p.keyword("into")
        return p.result_type(cls(tile, *mask, padding=attrs.pop("padding", 0)), p.type())

    def interpret(self, interp, tile: ScatterRef, mask=None):
        return tile.load(self.padding, mask)


class StoreScatterOp(Operation):
    """`xetile.store_scatter %value, %mask, %tile : vector<...>, vector<...xi1> into tile<..., #scatter>`.
    Operands are (value, tile, mask) so that the write effect names operand 1, as store_tile's does."""

    name = "xetile.store_scatter"
    effects = (writes(1, GLOBAL),)

    def __init__(self, value: Value, tile: Value, mask: Value | None = None, loc=None):
        super().__init__([value, tile] + ([mask] if mask is not None else []), [], loc=loc)

    @property
    def mask(self) -> list[Value]:
        return list(self.operands[2:])

    def verify(self):
        value, tile = self.operands[:2]
        check_scatter_tile(self, tile.type)
        if not isinstance(value.type, VectorType) or value.type.shape != tile.type.shape or \
                value.type.dtype != tile.type.dtype:
            raise self.error(f"value {value.type} must be vector<{'x'.join(map(str, tile.type.shape))}x"
                             f"{tile.type.dtype}>", "store_scatter value matches the tile")
        check_mask(self, self.mask, tile.type)

    def format(self, p) -> str:
        value, tile = self.operands[:2]
        return (f" {p.name(value)}{mask_text(p, self.mask)}, {p.name(tile)} : {value.type}"
                f"{mask_type_text(self.mask)} into {tile.type}")

    @classmethod
    def parse(cls, p, name):
        *values, tile = p.operands()
        p.expect(":")
        p.typed(values)
        p.keyword("into")
        p.type_of(tile)
        value, *mask = values
        return cls(value, tile, *mask)

    def interpret(self, interp, value, tile: ScatterRef, mask=None):
        tile.store(value, mask)


class UpdateScatterOffsetOp(UpdateTileOffsetOp):
    """`xetile.update_tile_offset %tile, %delta : tile<..., #scatter>, vector<...xindex>`: each offset moves by
    its element of `delta` (XeGPU RFC update_offset)."""

    def __init__(self, tile: Value, delta: Value, loc=None):
        Operation.__init__(self, [tile, delta], [tile.type], loc=loc)

    def verify(self):
        tile, delta = self.operands
        check_scatter_tile(self, tile.type)
        check_index_vector(self, delta, tile.type, "delta")

    def format(self, p) -> str:
        tile, delta = self.operands
        return f" {p.name(tile)}, {p.name(delta)} : {tile.type}, {delta.type}"

    @classmethod
    def parse(cls, p, name):
        tile, delta = p.values_n(2)
        p.expect(":")
        p.typed([tile, delta])
        return cls(tile, delta)

    def interpret(self, interp, tile: ScatterRef, delta):
        return tile.moved(delta)


class AtomicRMWScatterOp(AtomicRMWTileOp):
    """`xetile.atomic_rmw_tile <addf> %value, %tile, %mask`: atomic_rmw (XeGPU RFC, scattered descriptor) on each
    active element of a #scatter tile; returns the old values (0 where masked off or out of bounds)."""

    def __init__(self, kind: str, value: Value, tile: Value, mask: Value | None = None, loc=None):
        Operation.__init__(self, [value, tile] + ([mask] if mask is not None else []), [value.type], loc=loc)
        self.kind = kind

    @property
    def mask(self) -> list[Value]:
        return list(self.operands[2:])

    def verify(self):
        check_scatter_tile(self, self.operands[1].type)
        super().verify()
        check_mask(self, self.mask, self.operands[1].type)

    def check_compare(self) -> None:
        """The operands after the tile are the mask."""
        if self.kind == "cas":
            raise self.error("compare-and-swap on a #scatter tile is not supported; use a block tile",
                             "atomic_cas takes a block tile")

    def format(self, p) -> str:
        value, tile = self.operands[:2]
        kind = ATOMIC_KINDS[self.kind][tile.type.dtype.kind].rmw
        return (f" <{kind}> {p.name(value)}, {p.name(tile)}{mask_text(p, self.mask)}{p.attr_dict(self)} : "
                f"{value.type}, {tile.type}{mask_type_text(self.mask)} -> {self.result.type}")

    @classmethod
    def parse(cls, p, name):
        kind, (value, tile, *mask), attrs, result_type = parse_atomic(p, 2, 3)
        if not tile.type.scatter:
            raise p.error(f"{name} with a mask takes a #scatter tile, not {tile.type}")
        return p.result_type(cls(kind, value, tile, *mask), result_type)

    def interpret(self, interp, value, tile: ScatterRef, mask=None):
        return tile.atomic(self.kind, value, mask)


def scatter_operands(op: Operation) -> tuple[Value, list[Value]] | None:
    """(the #scatter tile, the index-shaped operands: offsets, delta, mask) of a scatter op, else None."""
    if isinstance(op, InitScatterTileOp):
        return op.result, [op.operands[1]]
    if isinstance(op, UpdateScatterOffsetOp):
        return op.operands[0], [op.operands[1]]
    if isinstance(op, LoadGatherOp):
        return op.operands[0], op.mask
    if isinstance(op, (StoreScatterOp, AtomicRMWScatterOp)):
        return op.operands[1], op.mask
    return None


SCATTER_OPS = (InitScatterTileOp, LoadGatherOp, StoreScatterOp, UpdateScatterOffsetOp, AtomicRMWScatterOp)
