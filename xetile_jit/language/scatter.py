"""The gather/scatter functions a kernel calls (XeTile RFC "load_gather and store_scatter"; ir/scatter_ops.py has
the rules): `init_tile(array, indices=...)` makes a #scatter tile, `load_gather`/`store_scatter` use it, and
`update_tile_offset`/`atomic_rmw_tile` come here (from language/dsl.py) for #scatter tiles."""
from __future__ import annotations

from ..ir import scatter_ops as S
from ..ir.core import Value
from ..ir.types import MemRefType, SlmMemRefType, VectorType, bool_, int32
from .semantic import builtin, current, describe as _describe, is_py_scalar


def _scatter_tile(sem, t, op: str) -> Value:
    if not isinstance(t, Value) or not isinstance(t.type, S.ScatterTileType):
        raise sem.error(f"{op}: expected a #scatter tile made by init_tile(array, indices=...), got {_describe(t)}")
    return t


def _vector(sem, v, op: str, what: str) -> Value:
    if not isinstance(v, Value) or not isinstance(v.type, VectorType):
        raise sem.error(f"{op}: {what} must be a 1-D or 2-D vector, got {_describe(v)}")
    return v


def _mask(sem, mask, op: str):
    if mask is None:
        return None
    mask = _vector(sem, mask, op, "mask")
    return mask if mask.type.dtype == bool_ else sem.cast(mask, bool_)


def init_scatter_tile(array, indices, shape, chunk_size: int) -> Value:
    """A #scatter tile of `array` whose element i reads array.flat[indices[i]] (row-major over the array, of any
    rank), in the indices' shape (1-D or 2-D); with `chunk_size` C, indices are [N, 1] and the tile [N, C] (row i:
    C elements from indices[i])."""
    sem = current()
    if not isinstance(array, Value) or not isinstance(array.type, MemRefType):
        raise sem.error(f"init_tile: base must be an array argument of the kernel, got {_describe(array)}")
    if isinstance(array.type, SlmMemRefType):
        raise NotImplementedError("init_tile(indices=...) on shared local memory")
    indices = _vector(sem, indices, "init_tile", "indices")
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool):
        raise sem.error(f"init_tile: chunk_size must be a compile-time int, got {_describe(chunk_size)}")
    tile_shape = indices.type.shape
    if chunk_size > 1:
        if len(tile_shape) != 2:
            raise sem.error(f"init_tile: chunk_size {chunk_size} takes [N, 1] indices (one per chunk), got "
                            f"{list(tile_shape)}")
        tile_shape = (tile_shape[0], chunk_size)
    if shape is not None and tuple(shape) != tile_shape:
        raise sem.error(f"init_tile: shape {list(shape)} differs from {list(tile_shape)}, the indices' shape "
                        f"{list(indices.type.shape)} with chunk_size {chunk_size}")
    tile_type = S.ScatterTileType(tile_shape, array.type.dtype, chunk_size=chunk_size)
    return sem.create(S.InitScatterTileOp, array, indices, tile_type).result


@builtin
def load_gather(tile, mask=None, *, padding=0) -> Value:
    """The #scatter tile's elements; masked-off and out-of-bounds ones read `padding`."""
    sem = current()
    if not is_py_scalar(padding):
        raise sem.error(f"load_gather: padding must be a compile-time number, got {_describe(padding)}")
    tile = _scatter_tile(sem, tile, "load_gather")
    return sem.create(S.LoadGatherOp, tile, _mask(sem, mask, "load_gather"), padding).result


@builtin
def store_scatter(tile, value, mask=None) -> None:
    """Writes `value` to the #scatter tile's elements that are in bounds and not masked off."""
    sem = current()
    tile = _scatter_tile(sem, tile, "store_scatter")
    sem.create(S.StoreScatterOp, _value(sem, tile, value, "store_scatter"), tile, _mask(sem, mask, "store_scatter"))


def _value(sem, tile: Value, value, op: str) -> Value:
    if is_py_scalar(value):
        return sem.constant(value, tile.type.dtype, tile.type.shape)
    return sem.cast(_vector(sem, value, op, "value"), tile.type.dtype)


def update_scatter_offset(tile: Value, delta) -> Value:
    """Each element offset moves by its element of `delta` (per chunk with chunk_size); a number moves all."""
    sem = current()
    shape = tile.type.index_shape
    if is_py_scalar(delta):
        delta = sem.constant(delta, int32, shape)
    delta = _vector(sem, delta, "update_tile_offset", "delta")
    return sem.create(S.UpdateScatterOffsetOp, tile, delta).result


def atomic_rmw_scatter(kind: str, value, tile: Value, mask) -> Value:
    sem = current()
    return sem.create(S.AtomicRMWScatterOp, kind, _value(sem, tile, value, "atomic_rmw_tile"), tile,
                      _mask(sem, mask, "atomic_rmw_tile")).result
