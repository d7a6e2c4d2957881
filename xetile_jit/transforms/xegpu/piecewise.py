"""Shared machinery of the passes that split each value into a grid of pieces (wg-to-sg, blocking).

A value of shape S becomes `counts` pieces of `shape`, listed row-major. Element-wise ops, memory ops and
the vector ops run piece by piece; a subclass says how a value is cut (`grid_of`) and how an operand is
delivered in the grid an op needs (`pieces`).
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

from ...ir import core_ops as C
from ...ir import xegpu_ops as G
from ...ir import xegpu_scatter_ops as GS
from ...ir.conversion import Conversion, converts
from ...ir.core import Operation, Value
from ...ir.debug_ops import DevicePrintOp
from ...ir.types import VectorType, float32
from ...ir.elementwise import REDUCE_KINDS


@dataclass(frozen=True)
class Grid:
    counts: tuple[int, int]
    shape: tuple[int, int]  # of one piece

    def index(self, i: int, j: int) -> int:
        return i * self.counts[1] + j

    def cells(self):
        return itertools.product(range(self.counts[0]), range(self.counts[1]))

    def origins(self):
        """Each piece's offset in the whole value, row-major."""
        return [(i * self.shape[0], j * self.shape[1]) for i, j in self.cells()]


def is_zero(v: Value) -> bool:
    return isinstance(v.owner, C.ConstantOp) and v.owner.value == 0


class PiecewiseConversion(Conversion):
    dialect = "xegpu"
    legal = C.SHARED_OPS + (G.MemRefTransposeOp, G.MemRefSubviewOp)

    def grid_of(self, v: Value) -> Grid:
        raise NotImplementedError(f"{type(self).__name__} must say how values are cut into pieces")

    def piece_offsets(self, grid: Grid) -> list[tuple[Value, Value]]:
        """Index values of each piece's offset within the value."""
        raise NotImplementedError(f"{type(self).__name__} must say where pieces start")

    def pieces(self, v: Value, grid: Grid) -> list[Value]:
        """`v`'s pieces in `grid`; scalars are one piece that every piece of an op shares."""
        return self.get(v)

    def clone(self, op: Operation) -> None:
        vectors = [v for v in op.results if isinstance(v.type, VectorType)]
        if not vectors:
            return super().clone(op)
        grid = self.grid_of(vectors[0])
        operands = [self.pieces(v, grid) if isinstance(v.type, VectorType) else self.get(v) for v in op.operands]
        outs = [self.piece(op, [p[k] if len(p) > 1 else p[0] for p in operands], grid.shape)
                for k in range(len(list(grid.cells())))]
        for j, v in enumerate(op.results):
            self.set(v, [o.results[j] for o in outs])

    def piece(self, op: Operation, operands, shape) -> Operation:
        """`op` on one piece of its operands; vector results take the piece shape."""
        types = [VectorType(tuple(shape), v.type.dtype) if isinstance(v.type, VectorType) else v.type
                 for v in op.results]
        return self.builder.block.append(op.copy_with(operands, types))

    def pieces_from(self, op: Operation, source_index, source: Grid | None = None) -> None:
        """Each result piece (i, j) from operand 0's piece `source_index(i, j)` in grid `source`."""
        out = self.grid_of(op.result)
        source = source or self.grid_of(op.operands[0])
        inputs = self.pieces(op.operands[0], source)
        self.set(op.result, [self.piece(op, [inputs[source.index(*source_index(i, j))]], out.shape).result
                             for i, j in out.cells()])

    # ---- reductions in pieces: each piece reduces on its own, the partial results fold ----------------
    def float_cast(self, v: Value, dtype) -> Value:
        """`v` as float `dtype` (widened or rounded), or `v` itself when it has it."""
        if v.type.dtype == dtype:
            return v
        name = "arith.extf" if dtype.bits > v.type.dtype.bits else "arith.truncf"
        return self.emit(C.CastOp, name, v, VectorType(v.type.shape, dtype)).result

    def reduction_input(self, v: Value) -> Value:
        """f16 and bf16 reduce in f32 (and round once at the end, as the op does)."""
        return self.float_cast(v, float32) if v.type.dtype.is_float else v

    def fold(self, kind: str, partials: list[Value]) -> Value:
        """The partial results of a `kind` reduction folded with its element-wise op (maxnumf for max: a NaN
        loses)."""
        name = REDUCE_KINDS[kind][partials[0].type.dtype.kind].combine
        result = partials[0]
        for partial in partials[1:]:
            result = self.emit(C.BinaryOp, name, result, partial).result
        return result

    def add_index(self, a: Value, b: Value) -> Value:
        if is_zero(a):
            return b
        if is_zero(b):
            return a
        return self.emit(C.BinaryOp, "arith.addi", a, b).result

    @converts(C.IotaOp)
    def convert_IotaOp(self, op: C.IotaOp) -> None:
        """Each piece counts from its own offset in the whole value."""
        base = self.one(op.operands[0])
        grid = self.grid_of(op.result)
        self.set(op.result, [self.emit(C.IotaOp, self.add_index(base, offsets[op.dim]), op.dim, grid.shape).result
                             for offsets in self.piece_offsets(grid)])

    @converts(DevicePrintOp)
    def convert_DevicePrintOp(self, op: DevicePrintOp) -> None:
        """A vector's pieces print on their own, each from its first element's index in the whole and with its part
        of the valid elements: `op.valid` from the piece's start (`grid.origins()`; exact for blocks; a subgroup's
        piece starts where the subgroup id says, but its vector is valid whole and the piece lies inside it)."""
        if op.vector is None:
            return self.clone(op)
        values = [self.get(v) for v in op.values]
        origin = [self.one(v) for v in op.origin]
        grid = self.grid_of(op.values[op.vector])
        for k, (offsets, start) in enumerate(zip(self.piece_offsets(grid), grid.origins())):
            pieces = [v[k] if i == op.vector else v[0] for i, v in enumerate(values)]
            valid = tuple(min(n, v - o) for n, v, o in zip(grid.shape, op.valid, start))
            if min(valid) > 0:
                self.emit(DevicePrintOp, op.prefix, pieces, map(self.add_index, origin, offsets), valid)

    @converts(G.CreateNdDescOp)
    def convert_CreateNdDescOp(self, op: G.CreateNdDescOp) -> None:
        base, *offsets = (self.one(v) for v in op.operands)
        grid = self.grid_of(op.result)
        tdesc = dataclasses.replace(op.result.type, shape=grid.shape, layout=None)
        pieces = []
        for piece in self.piece_offsets(grid):
            at = [self.add_index(whole, part) for whole, part in zip(offsets, piece)]
            pieces.append(self.emit(G.CreateNdDescOp, base, at, tdesc).result)
        self.set(op.result, pieces)

    @converts(G.LoadNdOp)
    def convert_LoadNdOp(self, op: G.LoadNdOp) -> None:
        """A transposed load reads piece (j, i) of the descriptor into piece (i, j) of the value; each reads the
        `valid_of` its piece of the descriptor."""
        tiles, src = self.get(op.operands[0]), self.grid_of(op.operands[0])
        origins, shape = src.origins(), op.operands[0].type.shape
        indices = [src.index(j, i) if op.transpose else src.index(i, j) for i, j in self.grid_of(op.result).cells()]
        loads = [self.emit(G.LoadNdOp, tiles[k], op.transpose, op.padding, op.cache,
                           self.valid_of(src, origins[k], shape)).result for k in indices]
        self.set(op.result, loads)

    @converts(G.StoreNdOp)
    def convert_StoreNdOp(self, op: G.StoreNdOp) -> None:
        tiles = self.get(op.operands[1])
        for value, tile in zip(self.pieces(op.operands[0], self.grid_of(op.operands[1])), tiles):
            self.emit(G.StoreNdOp, value, tile, None, op.cache)

    @converts(G.PrefetchNdOp)
    def convert_PrefetchNdOp(self, op: G.PrefetchNdOp) -> None:
        for tile in self.get(op.operands[0]):
            self.emit(G.PrefetchNdOp, tile, op.cache)

    @converts(G.UpdateNdOffsetOp)
    def convert_UpdateNdOffsetOp(self, op: G.UpdateNdOffsetOp) -> None:
        deltas = [self.one(v) for v in op.operands[1:]]
        self.set(op.result, [self.emit(G.UpdateNdOffsetOp, t, deltas).result for t in self.get(op.operands[0])])

    # ---- scattered descriptors: offsets, masks and values cut as the descriptor is ----------------------
    def valid_of(self, g: Grid, origin, shape):
        """The leading part of the piece at `origin` inside `shape` that an access may touch (None: all of it)."""
        return None

    def produced(self, v: Value, g: Grid) -> None:
        """`v` was made in the cut `g` (blocking records it)."""

    def mask_pieces(self, op, g: Grid) -> list:
        return self.pieces(op.mask[0], g) if op.mask else [None] * len(list(g.cells()))

    @converts(GS.CreateDescOp)
    def convert_CreateDescOp(self, op: GS.CreateDescOp) -> None:
        base, offsets = op.operands
        g = self.grid_of(op.result)
        desc = GS.ScatterDescType(g.shape, op.result.type.dtype)
        self.set(op.result, [self.emit(GS.CreateDescOp, self.one(base), piece, desc).result
                             for piece in self.pieces(offsets, g)])

    @converts(GS.UpdateOffsetOp)
    def convert_UpdateOffsetOp(self, op: GS.UpdateOffsetOp) -> None:
        tdesc, delta = op.operands
        g = self.grid_of(tdesc)
        self.set(op.result, [self.emit(GS.UpdateOffsetOp, t, d).result
                             for t, d in zip(self.get(tdesc), self.pieces(delta, g))])

    @converts(GS.LoadGatherXOp)
    def convert_LoadGatherXOp(self, op: GS.LoadGatherXOp) -> None:
        tdesc = op.operands[0]
        g = self.grid_of(tdesc)
        piece = VectorType(g.shape, op.result.type.dtype)
        self.produced(op.result, g)
        self.set(op.result, [self.emit(GS.LoadGatherXOp, t, m, piece, op.padding,
                                       self.valid_of(g, origin, tdesc.type.shape)).result
                             for t, m, origin in zip(self.get(tdesc), self.mask_pieces(op, g), g.origins())])

    @converts(GS.StoreScatterXOp)
    def convert_StoreScatterXOp(self, op: GS.StoreScatterXOp) -> None:
        value, tdesc = op.operands[:2]
        g = self.grid_of(tdesc)
        for v, t, m, origin in zip(self.pieces(value, g), self.get(tdesc), self.mask_pieces(op, g), g.origins()):
            self.emit(GS.StoreScatterXOp, v, t, m, self.valid_of(g, origin, tdesc.type.shape))

    @converts(GS.ScatterAtomicRMWOp)
    def convert_ScatterAtomicRMWOp(self, op: GS.ScatterAtomicRMWOp) -> None:
        value, tdesc = op.operands[:2]
        g = self.grid_of(tdesc)
        self.produced(op.result, g)
        self.set(op.result, [self.emit(GS.ScatterAtomicRMWOp, op.kind, v, t, m,
                                       self.valid_of(g, origin, tdesc.type.shape)).result
                             for v, t, m, origin in zip(self.pieces(value, g), self.get(tdesc),
                                                        self.mask_pieces(op, g), g.origins())])

    @converts(G.VectorBroadcastOp)
    def convert_VectorBroadcastOp(self, op: G.VectorBroadcastOp) -> None:
        out = self.grid_of(op.result)
        dims = op.dims
        source = Grid(tuple(1 if d in dims else n for d, n in enumerate(out.counts)),
                      tuple(1 if d in dims else n for d, n in enumerate(out.shape)))
        self.pieces_from(op, lambda i, j: (0 if 0 in dims else i, 0 if 1 in dims else j), source)

    @converts(G.VectorTransposeOp)
    def convert_VectorTransposeOp(self, op: G.VectorTransposeOp) -> None:
        out = self.grid_of(op.result)
        self.pieces_from(op, lambda i, j: (j, i), Grid(out.counts[::-1], out.shape[::-1]))
