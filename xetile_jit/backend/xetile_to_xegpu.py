"""XeTile -> XeGPU at the workgroup level (the XeTile RFC's op mapping onto the XeGPU RFC's ops).

init_tile/load_tile/store_tile/update_tile_offset/prefetch_tile/atomic_rmw_tile become create_nd_tdesc,
load_nd, store_nd, update_nd_offset, prefetch_nd and atomic_rmw; tile_mma becomes dpas; tile_reduce,
tile_broadcast and tile_transpose become vector ops; tile_conv_layout becomes convert_layout. Tensor
descriptors are row-major (XeGPU RFC: innermost stride 1), so a column-major tile (order = [0, 1], XeTile
RFC Appendix 1) becomes a descriptor of the transposed matrix: offsets, shape and layout swap, loads use
`transpose = [1, 0]`, stores and atomics transpose the value first. Descriptors address 2-D matrices: a tile of
an array of rank > 2 reads the matrix memref.subview takes at its leading offsets, a tile of a 1-D array that
array as one row.
"""
from __future__ import annotations

from ..ir import core_ops as C
from ..ir import xegpu_ops as G
from ..ir import xetile_ops as X
from ..ir.conversion import Conversion, converts
from ..ir.core import FuncOp, Value
from ..ir.types import COL_MAJOR, IndexType, TileType
from .xetile_layout_propagation import swapped


def is_col_major(tile: Value) -> bool:
    return tile.type.order == COL_MAJOR


def tdesc_type(t: TileType) -> G.TensorDescType:
    if t.order == COL_MAJOR:
        return G.TensorDescType(t.shape[::-1], t.dtype, swapped(t.layout) if t.layout else None)
    return G.TensorDescType(t.shape, t.dtype, t.layout)


class XeTileToXeGPU(Conversion):
    dialect = "xegpu"
    legal = C.SHARED_OPS
    illegal = X.XETILE_OPS

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
        new = self.emit(G.CreateNdDescOp, self.row_major_base(base), offsets, tdesc_type(op.result.type))
        self.set(op.result, new.result)

    @converts(X.LoadTileOp)
    def convert_LoadTileOp(self, op: X.LoadTileOp) -> None:
        tile = op.operands[0]
        new = self.emit(G.LoadNdOp, self.one(tile), (1, 0) if is_col_major(tile) else None, op.padding)
        new.result.layout = op.result.layout
        self.set(op.result, new.result)

    @converts(X.StoreTileOp)
    def convert_StoreTileOp(self, op: X.StoreTileOp) -> None:
        value, tile = self.one(op.operands[0]), op.operands[1]
        self.emit(G.StoreNdOp, self.transposed(value) if is_col_major(tile) else value, self.one(tile))

    @converts(X.AtomicRMWTileOp)
    def convert_AtomicRMWTileOp(self, op: X.AtomicRMWTileOp) -> None:
        value, tile = self.one(op.operands[0]), op.operands[1]
        col = is_col_major(tile)
        new = self.emit(G.AtomicRMWOp, op.kind, self.transposed(value) if col else value, self.one(tile))
        new.result.layout = swapped(op.result.layout) if col and op.result.layout else op.result.layout
        self.set(op.result, self.transposed(new.result) if col else new.result)

    @converts(X.UpdateTileOffsetOp)
    def convert_UpdateTileOffsetOp(self, op: X.UpdateTileOffsetOp) -> None:
        tile = op.operands[0]
        new = self.emit(G.UpdateNdOffsetOp, self.one(tile), self.offsets(tile, op.operands[1:]))
        self.set(op.result, new.result)

    @converts(X.PrefetchTileOp)
    def convert_PrefetchTileOp(self, op: X.PrefetchTileOp) -> None:
        self.emit(G.PrefetchNdOp, self.one(op.operands[0]), op.locality)

    @converts(X.TileMMAOp)
    def convert_TileMMAOp(self, op: X.TileMMAOp) -> None:
        a, b, *c = (self.one(v) for v in op.operands)
        new = self.emit(G.DpasOp, a, b, c[0] if c else None, op.result.type, layout=op.result.layout)
        self.set(op.result, new.result)

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
        self.renamed(op, G.VectorTransposeOp, op.perm)

    @converts(X.ConvertLayoutOp)
    def convert_ConvertLayoutOp(self, op: X.ConvertLayoutOp) -> None:
        self.renamed(op, G.XeGPUConvertLayoutOp, op.result.layout)


def xetile_to_xegpu(func: FuncOp) -> FuncOp:
    return XeTileToXeGPU(func).run()
