"""1-D tiles and vectors as one-row 2-D ones. XeTile ops take 1-D tiles and vectors (`vector<128xf32>`),
but the XeGPU RFC's blocks, layouts and lanes are 2-D, so before layouts are chosen an N-element 1-D value becomes
1xN, and a layout a user gave it the layout of that row (sg_layout [4] -> [1, 4]): the dims of vector.iota,
tile_reduce, tile_broadcast, flip and concat on it shift by one, a slice of it starts in row 0, update_tile_offset on it moves row 0, and a vector.shape_cast
that only adds or removes a unit dim becomes nothing (N <-> 1xN) or a tile_transpose (N <-> Nx1; its elements go
from one row to one column). Other shape casts stay, between 2-D shapes (wg-to-sg moves their elements through
shared local memory). Rewrites `func` in place.
"""
from __future__ import annotations

import dataclasses

from ...ir import core_ops as C
from ...ir import xetile_ops as X
from ...ir.attrs import Layout
from ...ir.core import FuncOp, Value, walk
from ...ir.shape_ops import ConcatOp, FlipOp, RollOp, ShapeCastOp, SliceOp
from ...ir.types import IndexType, TileType, VectorType


def is_1d(v: Value) -> bool:
    return isinstance(v.type, (VectorType, TileType)) and len(v.type.shape) == 1


def as_row(v: Value) -> None:
    """The 1xN form of a 1-D value, its layout (a tile's is in its type) included."""
    if isinstance(v.type, TileType) and v.type.layout is not None:
        v.type = dataclasses.replace(v.type, layout=row_layout(v.type.layout))
    if v.layout is not None:
        v.layout = row_layout(v.layout)
    v.type = dataclasses.replace(v.type, shape=(1, *v.type.shape))


def row_layout(layout: Layout) -> Layout:
    """A 1-D layout as the layout of the 1xN form: one row of subgroups, of blocks, of lanes; `order` keeps
    the row's dim fastest."""
    fields = {name: (1, *value) for name, value in layout.set_fields().items() if name != "order"}
    if layout.order is not None:
        fields["order"] = (*(d + 1 for d in layout.order), 0)
    return Layout(**fields)


def as_rank2(func: FuncOp) -> FuncOp:
    ops = list(walk(func.body))
    for op in ops:
        shift_dims(op)
    for value in values(func, ops):
        if is_1d(value):
            as_row(value)
    for op in ops:
        if isinstance(op, ShapeCastOp):
            fold_shape_cast(op)
    return func


def values(func: FuncOp, ops) -> list[Value]:
    """Every value the function defines: block arguments (loop-carried vectors) and results."""
    found = list(func.body.args)
    for op in ops:
        found += op.results
        for region in op.regions:
            found += region.block.args
    return found


def shift_dims(op) -> None:
    """The dims of ops on 1-D values, counted in the 1xN form; update_tile_offset's row offset 0."""
    if isinstance(op, (X.TileReduceOp, X.TileBroadcastOp)) and is_1d(op.operands[0]):
        op.dims = tuple(d + 1 for d in op.dims)
    elif isinstance(op, (FlipOp, ConcatOp, RollOp)) and is_1d(op.operands[0]):
        op.axis += 1
    elif isinstance(op, SliceOp) and is_1d(op.operands[0]):
        op.offsets = (0, *op.offsets)
    elif isinstance(op, C.IotaOp) and is_1d(op.result):
        op.dim += 1
    elif isinstance(op, X.UpdateTileOffsetOp) and is_1d(op.operands[0]):
        zero = op.parent.insert_before(op, C.ConstantOp(0, IndexType(), loc=op.loc)).result
        op.set_operands([op.operands[0], zero, *op.operands[1:]])


def fold_shape_cast(op: ShapeCastOp) -> None:
    source, result = op.operands[0], op.result
    if source.type.shape == result.type.shape:
        result.replace_all_uses_with(source)
    elif source.type.shape == result.type.shape[::-1] and 1 in source.type.shape:
        transpose = op.parent.insert_before(op, X.TileTransposeOp(source, (1, 0), loc=op.loc))
        result.replace_all_uses_with(transpose.result)
    else:  # elements move between rows: wg-to-sg's
        return
    op.erase()
