"""XeTile -> XeGPU at the workgroup level (the XeTile RFC's op mapping onto the XeGPU RFC's ops).

init_tile/load_tile/store_tile/update_tile_offset/prefetch_tile/atomic_rmw_tile become create_nd_tdesc,
load_nd, store_nd, update_nd_offset, prefetch_nd and atomic_rmw; tile_mma becomes dpas; tile_reduce,
tile_broadcast and tile_transpose become vector ops; tile_conv_layout becomes convert_layout; vector.shape_cast and the value shape ops
(xetile.slice, concat, flip) stay, with their layouts (wg-to-sg moves their elements). Tensor
descriptors are row-major (XeGPU RFC: innermost stride 1), so a column-major tile (order = [0, 1], XeTile
RFC Appendix 1) becomes a descriptor of the transposed matrix: offsets, shape and layout swap, loads use
`transpose = [1, 0]`, stores and atomics transpose the value first. A load_tile read only by a tile_transpose
into the swapped layout (XeTile RFC Appendix 2.2's B^T, attention's K^T) is one load with `transpose = [1, 0]`:
the transposed block messages read it, with no register shuffle holding both copies live. Descriptors address 2-D matrices: a tile of
an array of rank > 2 reads the matrix memref.subview takes at its leading offsets, a tile of a 1-D array that
array as one row.
A #scatter tile becomes a scattered descriptor (create_tdesc, load, store, update_offset, atomic_rmw) of one offset
per element: a chunk's [N, 1] offsets, deltas and mask are broadcast along it, the offsets plus each element's
place in its chunk (XeGPU RFC chunk_size: consecutive elements per offset).
"""
from __future__ import annotations

from ...ir import core_ops as C
from ...ir import xegpu_ops as G
from ...ir import scatter_ops as SC
from ...ir import xegpu_scatter_ops as GS
from ...ir import xetile_ops as X
from ...ir.combine_ops import COMBINE_OPS
from ...ir.conversion import Conversion, converts
from ...ir.core import FuncOp, Value
from ...ir.shape_ops import VALUE_SHAPE_OPS, ShapeCastOp
from ...ir.types import COL_MAJOR, IndexType, TileType, VectorType
from .layout_completion import only_transpose
from .layout_propagation import swapped
from ...ir.cache_hints import locality_hints


def is_col_major(tile: Value) -> bool:
    return tile.type.order == COL_MAJOR


def read_transposed(load: X.LoadTileOp) -> bool:
    """Whether `load` (of a row-major tile) is read only by a 2-D tile_transpose whose layout is the load's
    swapped, blocks included (layout completion gives such a load the transposed DPAS block): a transposed load of
    the same descriptor gives the transpose's value in its own layout, block for block."""
    transpose = only_transpose(load)
    if transpose is None or is_col_major(load.operands[0]) or load.result.layout is None:
        return False
    want, got = swapped(load.result.layout), transpose.result.layout
    return got is not None and (got.sg_layout, got.sg_data, got.order, got.inst_data) == (
        want.sg_layout, want.sg_data, want.order, want.inst_data)


def tdesc_type(t: TileType, memory_space: str) -> G.TensorDescType:
    if t.order == COL_MAJOR:
        return G.TensorDescType(t.shape[::-1], t.dtype, swapped(t.layout) if t.layout else None, memory_space)
    return G.TensorDescType(t.shape, t.dtype, t.layout, memory_space)


class XeTileToXeGPU(Conversion):
    dialect = "xegpu"
    legal = C.SHARED_OPS + (ShapeCastOp, *VALUE_SHAPE_OPS)
    illegal = X.XETILE_OPS + SC.SCATTER_OPS + COMBINE_OPS

    def __init__(self, func: FuncOp):
        super().__init__(func)
        self.physical: dict[Value, Value] = {}  # column-major memref -> its memref.transpose

    def row_major_base(self, base: Value) -> Value:
        if base.type.order != COL_MAJOR:
            return base
        if base not in self.new.args:  # a view (subview, reinterpret_cast): transposed where it is taken
            return self.emit(G.MemRefTransposeOp, base).result
        if base not in self.physical:  # defined first in the kernel, so it dominates every use
            op = G.MemRefTransposeOp(base, loc=self.new.loc)
            self.new.body.prepend(op)
            self.physical[base] = op.result
        return self.physical[base]

    def offsets(self, tile: Value, offsets) -> list[Value]:
        mapped = [self.one(v) for v in offsets]
        return mapped[::-1] if is_col_major(tile) else mapped

    def matrix(self, base: Value, offsets: list[Value]) -> tuple[Value, list[Value]]:
        """The 2-D matrix a tile of `base` at `offsets` reads, and the tile's two offsets in it."""
        rank = base.type.rank
        if rank == 2:
            return base, offsets
        lead = max(0, rank - 2)
        view = self.emit(G.MemRefSubviewOp, base, offsets[:lead]).result
        if rank == 1:  # one row
            return view, [self.emit(C.ConstantOp, 0, IndexType()).result, *offsets]
        return view, offsets[lead:]

    def transposed(self, v: Value) -> Value:
        op = self.emit(G.VectorTransposeOp, v, (1, 0))
        op.result.layout = swapped(v.layout) if v.layout else None
        return op.result

    @converts(X.InitTileOp)
    def convert_InitTileOp(self, op: X.InitTileOp) -> None:
        base, offsets = self.matrix(self.one(op.operands[0]), [self.one(v) for v in op.operands[1:]])
        offsets = offsets[::-1] if is_col_major(op.result) else offsets
        new = self.emit(G.CreateNdDescOp, self.row_major_base(base), offsets,
                        tdesc_type(op.result.type, base.type.memory_space))
        self.set(op.result, new.result)

    @converts(X.LoadTileOp)
    def convert_LoadTileOp(self, op: X.LoadTileOp) -> None:
        if read_transposed(op):
            return  # the transpose reading it is the load (convert_TileTransposeOp)
        tile = op.operands[0]
        new = self.emit(G.LoadNdOp, self.one(tile), (1, 0) if is_col_major(tile) else None, op.padding, op.cache)
        new.result.layout = op.result.layout
        self.set(op.result, new.result)

    @converts(X.StoreTileOp)
    def convert_StoreTileOp(self, op: X.StoreTileOp) -> None:
        value, tile = self.one(op.operands[0]), op.operands[1]
        self.emit(G.StoreNdOp, self.transposed(value) if is_col_major(tile) else value, self.one(tile), None, op.cache)

    @converts(X.AtomicRMWTileOp)
    def convert_AtomicRMWTileOp(self, op: X.AtomicRMWTileOp) -> None:
        tile, col = op.operands[1], is_col_major(op.operands[1])
        value, *compare = (self.transposed(self.one(v)) if col else self.one(v) for v in [op.operands[0], *op.compare])
        new = self.emit(G.AtomicRMWOp, op.kind, value, self.one(tile), None, *compare)
        new.result.layout = swapped(op.result.layout) if col and op.result.layout else op.result.layout
        self.set(op.result, self.transposed(new.result) if col else new.result)

    # ---- #scatter tiles ------------------------------------------------------------------------------
    def per_element(self, v: Value, tile: SC.ScatterTileType, offsets: bool = False) -> Value:
        """An index-shaped operand in the tile's shape: broadcast along the chunk; offsets count along it."""
        if tile.chunk_size == 1:
            return v
        wide = self.emit(G.VectorBroadcastOp, v, (1,), tile.shape).result
        wide.layout = tile.layout
        if not offsets:
            return wide
        place = self.emit(C.IotaOp, self.emit(C.ConstantOp, 0, IndexType()).result, 1, tile.shape).result
        place.layout = tile.layout
        if v.type.dtype != place.type.dtype:
            place = self.cast("arith.extsi", place, VectorType(tile.shape, v.type.dtype))
        new = self.emit(C.BinaryOp, "arith.addi", wide, place).result
        new.layout = tile.layout
        return new

    def mask(self, op, tile: SC.ScatterTileType) -> Value | None:
        return self.per_element(self.one(op.mask[0]), tile) if op.mask else None

    @converts(SC.InitScatterTileOp)
    def convert_InitScatterTileOp(self, op: SC.InitScatterTileOp) -> None:
        tile = op.result.type
        offsets = self.per_element(self.one(op.operands[1]), tile, offsets=True)
        desc = GS.ScatterDescType(tile.shape, tile.dtype, tile.layout)
        self.set(op.result, self.emit(GS.CreateDescOp, self.one(op.operands[0]), offsets, desc).result)

    @converts(SC.LoadGatherOp)
    def convert_LoadGatherOp(self, op: SC.LoadGatherOp) -> None:
        tile = op.operands[0]
        new = self.emit(GS.LoadGatherXOp, self.one(tile), self.mask(op, tile.type), op.result.type, op.padding)
        new.result.layout = op.result.layout
        self.set(op.result, new.result)

    @converts(SC.StoreScatterOp)
    def convert_StoreScatterOp(self, op: SC.StoreScatterOp) -> None:
        value, tile = op.operands[:2]
        self.emit(GS.StoreScatterXOp, self.one(value), self.one(tile), self.mask(op, tile.type))

    @converts(SC.UpdateScatterOffsetOp)
    def convert_UpdateScatterOffsetOp(self, op: SC.UpdateScatterOffsetOp) -> None:
        tile, delta = op.operands
        new = self.emit(GS.UpdateOffsetOp, self.one(tile), self.per_element(self.one(delta), tile.type))
        self.set(op.result, new.result)

    @converts(SC.AtomicRMWScatterOp)
    def convert_AtomicRMWScatterOp(self, op: SC.AtomicRMWScatterOp) -> None:
        value, tile = op.operands[:2]
        new = self.emit(GS.ScatterAtomicRMWOp, op.kind, self.one(value), self.one(tile), self.mask(op, tile.type))
        new.result.layout = op.result.layout
        self.set(op.result, new.result)

    @converts(X.UpdateTileOffsetOp)
    def convert_UpdateTileOffsetOp(self, op: X.UpdateTileOffsetOp) -> None:
        tile = op.operands[0]
        new = self.emit(G.UpdateNdOffsetOp, self.one(tile), self.offsets(tile, op.operands[1:]))
        self.set(op.result, new.result)

    @converts(X.PrefetchTileOp)
    def convert_PrefetchTileOp(self, op: X.PrefetchTileOp) -> None:
        self.emit(G.PrefetchNdOp, self.one(op.operands[0]), locality_hints(op.locality))

    @converts(X.TileMMAOp)
    def convert_TileMMAOp(self, op: X.TileMMAOp) -> None:
        """dpas; a 16-bit float accumulator is extended to f32 before it and truncated after it, so the op rounds
        once, as its interpreter rule does."""
        a, b, *c = (self.one(v) for v in op.operands)
        result = op.result.type
        acc = VectorType(result.shape, X.mma_accumulator_dtype(a.type.dtype, b.type.dtype))
        c = [self.cast("arith.extf", c[0], acc)] if c and acc != result else c
        new = self.emit(G.DpasOp, a, b, c[0] if c else None, acc, layout=op.result.layout, precision=op.precision)
        self.set(op.result, new.result if acc == result else self.cast("arith.truncf", new.result, result))

    def cast(self, name: str, v: Value, t: VectorType) -> Value:
        new = self.emit(C.CastOp, name, v, t)
        new.result.layout = v.layout
        return new.result

    def renamed(self, op, op_class, *args) -> None:
        new = self.emit(op_class, self.one(op.operands[0]), *args)
        new.result.layout = op.result.layout
        self.set(op.result, new.result)

    @converts(X.TileReduceOp)
    def convert_TileReduceOp(self, op: X.TileReduceOp) -> None:
        new = self.emit(G.MultiReductionOp, op.kind, self.one(op.operands[0]), op.dims)
        new.result.layout = op.result.layout
        self.set(op.result, new.result)

    @converts(X.TileBroadcastOp)
    def convert_TileBroadcastOp(self, op: X.TileBroadcastOp) -> None:
        self.renamed(op, G.VectorBroadcastOp, op.dims, op.result.type.shape)

    @converts(X.TileTransposeOp)
    def convert_TileTransposeOp(self, op: X.TileTransposeOp) -> None:
        load = op.operands[0].owner
        if not (isinstance(load, X.LoadTileOp) and read_transposed(load)):
            self.renamed(op, G.VectorTransposeOp, op.perm)
            return
        new = self.emit(G.LoadNdOp, self.one(load.operands[0]), (1, 0), load.padding, load.cache)
        new.result.layout = op.result.layout
        self.set(op.result, new.result)

    @converts(X.ConvertLayoutOp)
    def convert_ConvertLayoutOp(self, op: X.ConvertLayoutOp) -> None:
        self.renamed(op, G.XeGPUConvertLayoutOp, op.result.layout)


def xetile_to_xegpu(func: FuncOp) -> FuncOp:
    return XeTileToXeGPU(func).run()
