"""The functions a kernel calls (`xetile.load_tile`, `xetile.tile_mma`, ...). Each builds XeTile IR
through the active `Semantic`; the op classes in `ir/` hold the rules and the semantics."""
from __future__ import annotations

import enum
import functools
import math

from ..errors import did_you_mean
from ..ir import core_ops as C
from ..ir import debug_ops as D
from ..ir import sync_ops as S
from ..ir import xetile_ops as X
from ..ir.shape_ops import MemRefReinterpretCastOp, ShapeCastOp
from ..ir.attrs import Layout
from ..ir.cache_hints import cache_hints
from ..ir.combine_ops import CombineReduceOp, CombineScanOp
from ..ir.scatter_ops import ScatterTileType
from ..ir.core import Value
from ..ir.types import (COL_MAJOR, ROW_MAJOR, DType, MemRefType, ScalarType, SlmMemRefType, TileType, VectorType, bool_,
                        float32, int32, uint32)
from . import indexed, scatter
from .semantic import builtin, current, describe as _describe, is_py_scalar


class constexpr:
    """Annotation of a kernel parameter whose value is known at compile time (part of the cache key)."""


def _tile(sem, t, op: str) -> Value:
    if not isinstance(t, Value) or not isinstance(t.type, TileType):
        raise sem.error(f"{op}: expected a tile made by init_tile, got {_describe(t)}")
    return t


def _vector(sem, v, op: str, what: str = "a 2-D vector") -> Value:
    if not isinstance(v, Value) or not isinstance(v.type, VectorType):
        raise sem.error(f"{op}: expected {what}, got {_describe(v)}")
    return v


def _static_shape(sem, shape, op: str, ranks=(2,)) -> tuple[int, ...]:
    shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in shape):
        raise sem.error(f"{op}: shape {list(map(_describe, shape))} must be compile-time ints "
                        "(constexpr) [tile shape is static]")
    if len(shape) not in ranks:
        dims = " or ".join(f"{r}-D" for r in ranks)
        raise sem.error(f"{op}: shape {list(shape)} must be {dims} [XeTile tiles and vectors are {dims}]")
    if not all(n > 0 for n in shape):
        raise sem.error(f"{op}: shape {list(shape)} must be positive")
    return shape


def _user_layout(sem, layout, op: str) -> Layout | None:
    if layout is not None and not isinstance(layout, Layout):
        raise sem.error(f"{op}: layout must be an xetile.Layout, got {_describe(layout)}")
    return layout


def _anchored(sem, v: Value, layout, op: str) -> Value:
    """`v` with the layout the user gave its op (XeGPU RFC: a layout on an op's result), an anchor of layout
    propagation like an init_tile layout; the op's other values follow it by the RFC's propagation rules."""
    layout = _user_layout(sem, layout, op)
    if layout is not None:
        v.layout = layout
        X.check_inst_divides(v.owner, layout, v.type.shape)
        X.check_result_layouts(v.owner)
    return v


def _dims(dims) -> tuple[int, ...]:
    return tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)


def _vector_dims(v: Value, dims) -> tuple[int, ...]:
    """`dims` of the vector `v` as numpy and Triton write axes: None is every dim, a negative one counts from the
    last. Others are left as they are, for the op to refuse."""
    rank = len(v.type.shape)
    if dims is None:
        return tuple(range(rank))
    return tuple(d + rank if isinstance(d, int) and not isinstance(d, bool) and -rank <= d < 0 else d
                 for d in _dims(dims))


def _offsets(sem, offsets, op: str, count: int = 2):
    if not isinstance(offsets, (list, tuple)) or len(offsets) != count:
        raise sem.error(f"{op}: offsets must be a list of {count} integers, one per dimension "
                        "[one tile offset per dimension]")
    return [sem.index(o) for o in offsets]


@builtin
def program_id(axis: int) -> Value:
    """The id of this workgroup along grid axis 0, 1 or 2."""
    return current().create(C.ProgramIdOp, axis).result


@builtin
def subgroup_id() -> Value:
    """This subgroup's id in the workgroup (int32, 0 to the kernel's subgroups - 1, row-major over sg_layout), for
    roles such as producers and consumers around named barriers. An op in a branch on it is done by the subgroups
    that take the branch, each its own part of the op as the layout gives it (so a tile one subgroup handles alone has
    a layout whose sg_data is the whole tile); the numpy interpreter runs such a kernel at the subgroup level."""
    sem = current()
    return sem.create(C.IndexCastOp, sem.create(C.SubgroupIdOp).result, ScalarType(int32)).result


@builtin
def num_programs(axis: int) -> Value:
    """The number of workgroups along grid axis 0, 1 or 2."""
    return current().create(C.NumProgramsOp, axis).result


@builtin
def cdiv(a, b):
    """Ceiling division; plain ints on the host and for constexprs, an IR value otherwise."""
    if is_py_scalar(a) and is_py_scalar(b):
        return -(-a // b)
    sem = current()
    return sem.binary("//", sem.binary("-", sem.binary("+", a, b), 1), b)


@builtin
def init_tile(array, offsets=None, shape=None, *, order=None, layout: Layout | None = None, base_shape=None,
              base_strides=None, indices=None, chunk_size: int = 1) -> Value:
    """A `shape` tile (1-D or 2-D, over the array's last dims) of `array` at `offsets`, one per array dim: the
    leading ones select a slice (a batch, a head), which the tile never reads past. order=[0, 1] views a
    column-major array (RFC App. 1). With `base_shape` and `base_strides` (in elements; one of them the
    compile-time 1) the tile reads the array's memory as a matrix of that shape (the RFC's dynamic-shape form).
    With `indices` (and optionally `chunk_size`), a #scatter tile of those element offsets (language/scatter.py)."""
    if indices is not None:
        return scatter.init_scatter_tile(array, indices, shape, chunk_size)
    sem = current()
    if not isinstance(array, Value) or not isinstance(array.type, MemRefType):
        raise sem.error("init_tile: base must be an array argument of the kernel or an alloc_slm buffer, got "
                        f"{_describe(array)}")
    if base_shape is not None or base_strides is not None:
        array = _reinterpret(sem, array, base_shape, base_strides)
    shape = _static_shape(sem, shape, "init_tile", (1, 2))
    if len(shape) > array.type.rank:
        raise sem.error(f"init_tile: a {len(shape)}-D tile of a {array.type.rank}-D array [a tile spans at most the "
                        "array's dims]")
    order = array.type.order if order is None else tuple(order)
    tile_type = TileType(shape, array.type.dtype, order, _user_layout(sem, layout, "init_tile"))
    op = sem.create(X.InitTileOp, array, _offsets(sem, offsets, "init_tile", array.type.rank), tile_type)
    if layout is not None:
        X.check_inst_divides(op, layout, shape)
    return op.result


def _reinterpret(sem, array: Value, base_shape, base_strides) -> Value:
    """`array`'s memory as the matrix of `base_shape` and `base_strides` (memref.reinterpret_cast)."""
    pairs = [x for x in (base_shape, base_strides) if isinstance(x, (list, tuple)) and len(x) == 2]
    if len(pairs) != 2:
        raise sem.error("init_tile: base_shape and base_strides go together, two entries each [the dynamic-shape "
                        "init_tile views a 2-D matrix]")
    unit = [not isinstance(s, Value) and s == 1 for s in base_strides]
    if unit[1]:
        order = ROW_MAJOR
    elif unit[0]:
        order = COL_MAJOR
    else:
        raise sem.error(f"init_tile: base_strides {list(map(_describe, base_strides))} need a compile-time 1 "
                        "[the innermost stride of the base matrix is 1]")
    sizes = [sem.index(n) for n in (*base_shape, *base_strides)]
    return sem.create(MemRefReinterpretCastOp, array, sizes[:2], sizes[2:], order).result


@builtin
def alloc_slm(shape, dtype: DType) -> Value:
    """A buffer in the workgroup's shared local memory, seen by all its subgroups, for `init_tile` (XeTile RFC
    Appendix 2.4: `memref<..., slm>`). A 1-D shape [N] is the 2-D buffer [1, N]. Its contents start undefined."""
    sem = current()
    shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    shape = _static_shape(sem, (1, *shape) if len(shape) == 1 else shape, "alloc_slm")
    dtype = _check_dtype(sem, dtype, "alloc_slm")
    return sem.create(C.SlmAllocOp, SlmMemRefType(dtype, shape=shape), by_user=True).result


@builtin
def barrier() -> None:
    """gpu.barrier: every subgroup of the workgroup arrives before any goes on; SLM and global accesses before it
    are seen by all after it (XeTile RFC Appendix 2.4)."""
    current().create(C.BarrierOp, by_user=True)


@builtin
def fence(scope: str = "workgroup", memory: str = "global") -> None:
    """xegpu.fence: this subgroup's `memory` ("global" or "slm") accesses before it are seen by `scope`
    ("workgroup" or "gpu") before those after it. Orders; does not wait for other subgroups."""
    current().create(S.FenceOp, scope, memory)


@builtin
def named_barrier(id: int, num_subgroups: int) -> Value:
    """xegpu.init_nbarrier: named barrier `id` (0..31), met by `num_subgroups` subgroups."""
    sem = current()
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (id, num_subgroups)):
        raise sem.error(f"named_barrier: id and num_subgroups must be compile-time ints, got {_describe(id)}, "
                        f"{_describe(num_subgroups)}")
    return sem.create(S.InitNbarrierOp, id, num_subgroups).result


def _nbarrier(sem, nb, op: str) -> Value:
    if not isinstance(nb, Value) or not isinstance(nb.type, S.NbarrierType):
        raise sem.error(f"{op}: expected a named barrier made by named_barrier, got {_describe(nb)}")
    return nb


@builtin
def nbarrier_arrive(nb) -> None:
    """xegpu.nbarrier_arrive: signals this subgroup's arrival at `nb` and goes on."""
    sem = current()
    sem.create(S.NbarrierArriveOp, _nbarrier(sem, nb, "nbarrier_arrive"))


@builtin
def nbarrier_wait(nb) -> None:
    """xegpu.nbarrier_wait: waits until every participant of `nb` has arrived."""
    sem = current()
    sem.create(S.NbarrierWaitOp, _nbarrier(sem, nb, "nbarrier_wait"))


@builtin
def load_tile(tile, *, padding=0, layout: Layout | None = None, cache=None) -> Value:
    """The tile's elements as a vector; out-of-bounds elements read as `padding`. `layout` is the vector's (and so
    the tile's: a load shares its tile's layout). `cache`: a hint, "cached", "uncached", "streaming" or
    "read_invalidate", or an (l1, l3) pair of them (ir/cache_hints.py); it changes no value."""
    sem = current()
    hints = _cache_hints(sem, "load", cache, "load_tile")
    if not is_py_scalar(padding):
        raise sem.error(f"load_tile: padding must be a compile-time number, got {_describe(padding)}")
    tile = _tile(sem, tile, "load_tile")
    given = tile.type.layout
    if layout is not None and given is not None and given != layout:
        raise sem.error(f"load_tile: layout {layout} differs from the tile's; the tile's layout is {given} "
                        "[a load shares its tile's layout]")
    return _anchored(sem, sem.create(X.LoadTileOp, tile, padding, hints).result, layout, "load_tile")


def _cache_hints(sem, kind: str, cache, op: str):
    try:
        return cache_hints(kind, cache)
    except ValueError as e:
        raise sem.error(f"{op}: {e}") from None


def _value_for_tile(sem, tile: Value, value, op: str) -> Value:
    """`value` in the tile's element type; numbers and scalars fill the whole tile."""
    if is_py_scalar(value):
        return sem.constant(value, tile.type.dtype, tile.type.shape)
    if isinstance(value, Value) and isinstance(value.type, ScalarType):
        return sem.splat(sem.cast(value, tile.type.dtype), tile.type.shape)
    return sem.cast(_vector(sem, value, op), tile.type.dtype)


@builtin
def store_tile(tile, value, *, cache=None) -> None:
    """Writes `value` (converted to the tile's element type) to the in-bounds elements of `tile`. `cache`: a hint,
    "write_back", "write_through", "streaming" or "uncached", or an (l1, l3) pair of them (ir/cache_hints.py)."""
    sem = current()
    hints = _cache_hints(sem, "store", cache, "store_tile")
    tile = _tile(sem, tile, "store_tile")
    sem.create(X.StoreTileOp, _value_for_tile(sem, tile, value, "store_tile"), tile, hints)


@builtin
def update_tile_offset(tile, offsets) -> Value:
    """The tile moved by `offsets` elements (relative)."""
    sem = current()
    tile = _tile(sem, tile, "update_tile_offset")
    if isinstance(tile.type, ScatterTileType):
        return scatter.update_scatter_offset(tile, offsets)
    count = len(tile.type.shape)
    return sem.create(X.UpdateTileOffsetOp, tile, _offsets(sem, offsets, "update_tile_offset", count)).result


@builtin
def prefetch_tile(tile, *, locality: int = 3) -> None:
    """A cache hint; locality 0 (none) to 3 (keep in cache), mapped to the L1/L3 controls of the 2D block
    prefetch as ir/cache_hints.py LOCALITY says (3: L1 and L3 cached; 2: L3 only; 1: L1 streaming, L3; 0: L1
    streaming only)."""
    sem = current()
    sem.create(X.PrefetchTileOp, _tile(sem, tile, "prefetch_tile"), locality)


@builtin
def tile_mma(a, b, c=None, *, layout: Layout | None = None, input_precision: str = "ieee") -> Value:
    """a @ b (+ c): f16/bf16/f32 accumulate in f32, int8/uint8 in i32. `layout` is the result's (default: the
    launch's sg_layout/sg_data); A and B follow it (RFC: A [sg_m, K], B [K, sg_n] on the same sg_layout).
    `input_precision` (Triton's option, f32 x f32 only): "ieee" (default) multiplies in exact f32; "tf32" reads
    each operand as tf32 (10 mantissa bits, truncated as tf32 DPAS reads them), products and sums in f32."""
    sem = current()
    a, b = _vector(sem, a, "tile_mma"), _vector(sem, b, "tile_mma")
    acc = X.mma_accumulator_dtype(a.type.dtype, b.type.dtype)
    if c is not None:
        c = sem.to_value(c, acc) if is_py_scalar(c) else _vector(sem, c, "tile_mma")
        if isinstance(c.type, ScalarType):
            c = sem.splat(c, (a.type.shape[0], b.type.shape[-1]))
    dtype = c.type.dtype if c is not None else acc
    if dtype is None:
        raise sem.error(f"tile_mma: unsupported operand types {a.type.dtype} x {b.type.dtype}; takes f16 x f16, "
                        "bf16 x bf16, f32 x f32, FP8 x FP8 or 8-bit integers [tile_mma operand element types]")
    result = VectorType((a.type.shape[0], b.type.shape[-1]), dtype)
    # the op's verifier checks input_precision (X.check_precision)
    op = sem.create(X.TileMMAOp, a, b, c, result, layout=_user_layout(sem, layout, "tile_mma") or sem.mma_layout,
                    precision=input_precision)
    return _anchored(sem, op.result, layout, "tile_mma")


@builtin
def tile_transpose(v, perm=(1, 0), *, layout: Layout | None = None) -> Value:
    """`v` transposed; `layout` is the result's (RFC Appendix 2.2's #mp_b: the transpose then moves data between
    subgroups where the operand's layout is not its swap)."""
    sem = current()
    op = sem.create(X.TileTransposeOp, _vector(sem, v, "tile_transpose"), _dims(perm))
    return _anchored(sem, op.result, layout, "tile_transpose")


def _accumulated(sem, kind: str, v: Value, dtype, op: str) -> Value:
    """`v` in the element type a reduction or scan computes and returns in: `dtype` if given, else 32 bits of the
    same signedness for a sum of bools or 8- or 16-bit integers (Triton's rule: the sum does not wrap at the narrow
    type's range; a bool counts as unsigned), else v's own."""
    if dtype is not None:
        return sem.cast(v, _check_dtype(sem, dtype, op))
    if kind == "add" and v.type.dtype.bits < 32 and not v.type.dtype.is_float:
        return sem.cast(v, int32 if v.type.dtype.kind == "i" else uint32)
    return v


@builtin
def tile_reduce(kind: str, v, dims, *, layout: Layout | None = None, dtype: DType | None = None) -> Value:
    """Reduces `dims` with `kind` (add, mul, max, min, maximum, minimum, and, or, xor; argmax and argmin along one
    dim give the first index of the extreme as int32); reduced dims keep size 1. A dim may count from the last
    (-1), and None is every dim, as numpy's and Triton's axes. `layout` is the result's. The
    result has v's element type, but `add` of bools and 8- or 16-bit integers sums in (u)int32 (Triton's rule);
    `dtype` converts v first."""
    sem = current()
    v = _accumulated(sem, kind, _vector(sem, v, "tile_reduce"), dtype, "tile_reduce")
    dims = _vector_dims(v, dims)
    if kind in indexed.ARG_KINDS:
        return _anchored(sem, indexed.arg_reduce(sem, kind, v, dims), layout, "tile_reduce")
    return _anchored(sem, sem.create(X.TileReduceOp, kind, v, dims).result, layout, "tile_reduce")


@builtin
def tile_scan(kind: str, v, dim, *, dtype: DType | None = None) -> Value:
    """The inclusive prefix reduction (kinds of tile_reduce) of `v` along `dim` (-1: the last), in v's dtype, but
    `add` of bools and 8- or 16-bit integers sums in (u)int32 (as tile_reduce); `dtype` converts v first."""
    sem = current()
    v = _accumulated(sem, kind, _vector(sem, v, "tile_scan"), dtype, "tile_scan")
    return indexed.scan(sem, kind, v, indexed.single_dim(sem, _vector_dims(v, dim), "tile_scan"))


def _combined(sem, op_class, values, axis, combine, op: str) -> Value | tuple[Value, ...]:
    """A reduce or associative_scan (`op_class`) of one tile or a tuple of tiles: a tile for one tile, else a tuple.
    1-D tiles go as one row each (the combine ops take 2-D vectors), and their results back as 1-D."""
    single = not isinstance(values, (list, tuple))
    tiles = [_vector(sem, v, op) for v in ([values] if single else values)]
    if not tiles:
        raise sem.error(f"{op}: takes at least one tile")
    if not callable(combine):
        raise sem.error(f"{op}: combine must be a @xetile.kernel function, got {_describe(combine)}")
    dim = indexed.single_dim(sem, _vector_dims(tiles[0], axis), op)
    if len(tiles[0].type.shape) != 1:
        results = indexed.traced_combine(sem, op_class, tiles, dim, combine)
    elif dim != 0:
        raise sem.error(f"{op}: axis {axis} of the 1-D vector {tiles[0].type}: takes axis 0 or -1")
    else:
        rows = [reshape(t, (1, t.type.shape[0])) if len(t.type.shape) == 1 else t for t in tiles]
        results = [reshape(r, r.type.shape[1:]) for r in indexed.traced_combine(sem, op_class, rows, 1, combine)]
    return results[0] if single else tuple(results)


@builtin
def reduce(values, axis, combine) -> Value | tuple[Value, ...]:
    """Reduces one tile or a tuple of tiles along `axis` (0 or 1, or -1; a 1-D tile's 0 or -1) with `combine`, a
    @xetile.kernel function of 2n values (the n accumulators, then the n next elements) returning n: Triton's
    tl.reduce. A tree of pairs in operand order (combine must be associative, not commutative): at stride s = 1, 2,
    4, ... position p, a multiple of 2s, combines with p + s (ir/combine_ops.py); the reduced axis keeps size 1. A
    tile for one tile, else a tuple."""
    return _combined(current(), CombineReduceOp, values, axis, combine, "reduce")


@builtin
def associative_scan(values, axis, combine) -> Value | tuple[Value, ...]:
    """The inclusive scan of one tile or a tuple of tiles along `axis` with `combine` (as `reduce`): position j holds
    the combine of positions 0..j, by Kogge-Stone's tree: at stride s = 1, 2, 4, ... position p >= s becomes
    combine(prefix[p - s], prefix[p]). Triton's tl.associative_scan; combine must be associative."""
    return _combined(current(), CombineScanOp, values, axis, combine, "associative_scan")


@builtin
def cumsum(v, dim, *, dtype: DType | None = None) -> Value:
    """The inclusive prefix sum of `v` along `dim` (tile_scan "add")."""
    return tile_scan("add", v, dim, dtype=dtype)


@builtin
def iota(shape, dim) -> Value:
    """An int32 vector of `shape` holding each element's index along `dim`."""
    sem = current()
    return indexed.iota(sem, _static_shape(sem, shape, "iota"), indexed.single_dim(sem, _dims(dim), "iota"))


@builtin
def tile_broadcast(v, dims, shape, *, layout: Layout | None = None) -> Value:
    """Repeats the size-1 `dims` of `v` to `shape`; `layout` is the result's."""
    sem = current()
    v = _vector(sem, v, "tile_broadcast", "a vector")
    op = sem.create(X.TileBroadcastOp, v, _dims(dims), _static_shape(sem, shape, "tile_broadcast", (1, 2)))
    return _anchored(sem, op.result, layout, "tile_broadcast")


@builtin
def arange(start, end) -> Value:
    """The 1-D int32 vector start, start + 1, ..., end - 1 (`iota` gives each element's index along a dim)."""
    sem = current()
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (start, end)):
        raise sem.error(f"arange: start and end must be compile-time ints (constexpr), got {_describe(start)} and "
                        f"{_describe(end)} [vector shape is static]")
    if end <= start:
        raise sem.error(f"arange: end {end} must exceed start {start}")
    return sem.create(C.IotaOp, sem.index(start), 0, (end - start,)).result


@builtin
def reshape(v, shape) -> Value:
    """`v`'s elements, in row-major order, as a 1-D or 2-D vector of `shape` (vector.shape_cast)."""
    sem = current()
    v = _vector(sem, v, "reshape", "a vector")
    shape = _static_shape(sem, shape, "reshape", (1, 2))
    if math.prod(shape) != math.prod(v.type.shape):
        raise sem.error(f"reshape: {v.type} has {math.prod(v.type.shape)} elements, shape {list(shape)} "
                        f"{math.prod(shape)} [vector.shape_cast keeps the element count]")
    return v if shape == v.type.shape else sem.create(ShapeCastOp, v, shape).result


@builtin
def expand_dims(v, axis: int) -> Value:
    """The 1-D vector `v` as a 2-D one with a unit dim at `axis` (0: one row, 1 or -1: one column)."""
    sem = current()
    v = _vector(sem, v, "expand_dims", "a 1-D vector")
    if len(v.type.shape) != 1 or axis not in (0, 1, -1, -2):
        raise sem.error(f"expand_dims: axis {axis} of {v.type}: takes a 1-D vector and axis 0 or 1 "
                        "[XeTile tiles and vectors are 1-D or 2-D]")
    n = v.type.shape[0]
    return reshape(v, (1, n) if axis in (0, -2) else (n, 1))


@builtin
def broadcast_to(v, shape) -> Value:
    """`v` repeated to `shape` as numpy broadcasts: a missing leading dim and the size-1 dims repeat (a scalar
    fills the vector); tile_broadcast after a shape_cast."""
    sem = current()
    shape = _static_shape(sem, shape, "broadcast_to", (1, 2))
    if is_py_scalar(v) or (isinstance(v, Value) and isinstance(v.type, ScalarType)):
        return full(shape, v, v.type.dtype if isinstance(v, Value) else float32)
    v = _vector(sem, v, "broadcast_to", "a vector")
    src = v.type.shape
    padded = (1,) * (len(shape) - len(src)) + src
    if len(src) > len(shape) or any(s not in (1, d) for s, d in zip(padded, shape)):
        raise sem.error(f"broadcast_to: cannot broadcast {v.type} to {list(shape)} [numpy broadcasting: dims "
                        "equal or 1]")
    return sem.broadcast_to(v, shape)


@builtin
def convert_layout(v, layout: Layout) -> Value:
    """`v` redistributed to `layout` (the RFC's tile_conv_layout / XeGPU convert_layout): the same values, held by
    other subgroups (through shared local memory) or cut in other blocks."""
    sem = current()
    v = _vector(sem, v, "convert_layout")
    if not isinstance(layout, Layout):
        raise sem.error(f"convert_layout: layout must be an xetile.Layout, got {_describe(layout)}")
    return _anchored(sem, sem.create(X.ConvertLayoutOp, v, layout).result, layout, "convert_layout")


@builtin
def atomic_rmw_tile(kind: str, value, tile, mask=None) -> Value:
    """Atomically combines `value` into the tile's memory (add, max, min, and, or, xchg); returns the old values.
    `mask` (#scatter tiles only) leaves the masked-off elements alone."""
    sem = current()
    tile = _tile(sem, tile, "atomic_rmw_tile")
    if isinstance(tile.type, ScatterTileType):
        return scatter.atomic_rmw_scatter(kind, value, tile, mask)
    if mask is not None:
        raise sem.error("atomic_rmw_tile: mask applies to #scatter tiles only (a block tile is bounds-checked)")
    return sem.create(X.AtomicRMWTileOp, kind, _value_for_tile(sem, tile, value, "atomic_rmw_tile"), tile).result


def tile_cas(sem, tile: Value, cmp, val) -> Value:
    """atomic_cas on a block tile (language/pointers.py atomic_cas: the builtin, which also takes a scalar pointer):
    where the tile's memory holds `cmp` (bit for bit), writes `val`; the old values."""
    if isinstance(tile.type, ScatterTileType):
        raise sem.error("atomic_cas: a #scatter tile is not supported; use a block tile")
    cmp, val = (_value_for_tile(sem, tile, v, "atomic_cas") for v in (cmp, val))
    return sem.create(X.AtomicRMWTileOp, "cas", val, tile, cmp).result


def _check_dtype(sem, dtype, op: str) -> DType:
    if not isinstance(dtype, DType):
        raise sem.error(f"{op}: dtype must be an xetile dtype such as xetile.float32, got {_describe(dtype)}")
    return dtype


@builtin
def full(shape, value, dtype: DType = float32) -> Value:
    sem = current()
    shape = _static_shape(sem, shape, "full", (1, 2))
    dtype = _check_dtype(sem, dtype, "full")
    if isinstance(value, Value):
        return sem.splat(sem.cast(value, dtype), shape)
    return sem.constant(value, dtype, shape)


@builtin
def zeros(shape, dtype: DType = float32) -> Value:
    return full(shape, 0, dtype)


@builtin
def where(cond, a, b) -> Value:
    """Element-wise `a` where `cond` else `b`."""
    return current().where(cond, a, b)


class PropagateNan(enum.Enum):
    """What maximum and minimum of floats give where an operand is NaN (Triton's `tl.PropagateNan`). ALL (the
    default here, numpy's np.maximum): NaN. NONE (Triton's default, which promises no NaN; defined here as numpy's
    np.fmax): the other operand."""
    ALL = "all"
    NONE = "none"


def _extreme(sem, op: str, propagate_nan, name: str) -> str:
    """The `binary` op of maximum or minimum (`op`: "max" or "min") for `propagate_nan`."""
    if not isinstance(propagate_nan, (PropagateNan, bool)):
        raise sem.error(f"{name}: propagate_nan must be xetile.PropagateNan.ALL or .NONE (or True or False), got "
                        f"{_describe(propagate_nan)}")
    return op if propagate_nan in (PropagateNan.ALL, True) else op + "num"


@builtin
def maximum(a, b, propagate_nan=PropagateNan.ALL):
    """The element-wise larger of `a` and `b`; for floats `propagate_nan` says what a NaN gives (PropagateNan)."""
    sem = current()
    return sem.binary(_extreme(sem, "max", propagate_nan, "maximum"), a, b)


@builtin
def minimum(a, b, propagate_nan=PropagateNan.ALL):
    """The element-wise smaller of `a` and `b`; for floats `propagate_nan` says what a NaN gives (PropagateNan)."""
    sem = current()
    return sem.binary(_extreme(sem, "min", propagate_nan, "minimum"), a, b)


def _math(name: str, doc: str):
    @builtin
    def op(x):
        return current().unary(name, x)
    op.__name__ = op.__qualname__ = name.split(".")[1]
    op.__doc__ = doc
    return op


exp = _math("math.exp", "e ** x")
exp2 = _math("math.exp2", "2 ** x")
log = _math("math.log", "natural logarithm")
sqrt = _math("math.sqrt", "square root")
rsqrt = _math("math.rsqrt", "1 / sqrt(x)")
tanh = _math("math.tanh", "hyperbolic tangent")
sin = _math("math.sin", "sine (radians)")
cos = _math("math.cos", "cosine (radians)")
erf = _math("math.erf", "the error function")
sigmoid = _math("math.sigmoid", "1 / (1 + exp(-x))")
floor = _math("math.floor", "the largest integer <= x")
ceil = _math("math.ceil", "the smallest integer >= x")
log2 = _math("math.log2", "base-2 logarithm")


@builtin
def fma(a, b, c):
    """a * b + c rounded once (computed in f32 for f16/bf16, rounded once more to their type)."""
    return current().ternary("math.fma", a, b, c)


@builtin
def abs(x):
    return current().abs(x)


@builtin
def cast(x, dtype: DType, bitcast: bool = False):
    """`x` converted to `dtype` (also spelled `x.to(dtype)`); with bitcast=True its bits read as `dtype`."""
    sem = current()
    dtype = _check_dtype(sem, dtype, "to")
    return sem.bitcast(x, dtype) if bitcast else sem.to_value(x, dtype)


@builtin
def bitcast(x, dtype: DType):
    """The bits of `x` read as `dtype` of the same width (numpy's `x.view(dtype)`), e.g. f32 <-> i32, f16 <-> bf16;
    also spelled `x.to(dtype, bitcast=True)`. Bools have no bit pattern to reinterpret."""
    sem = current()
    return sem.bitcast(x, _check_dtype(sem, dtype, "bitcast"))


def _message(sem, msg, op: str) -> str:
    if not isinstance(msg, str):
        raise sem.error(f"{op}: the message must be a compile-time string, got {_describe(msg)}")
    return msg


@builtin
def static_assert(cond, msg: str = "") -> None:
    """Checked while tracing: a false compile-time `cond` is a CompilationError naming this line and `msg`."""
    sem = current()
    msg = _message(sem, msg, "static_assert")
    if isinstance(cond, Value):
        raise sem.error(f"static_assert: the condition must be a compile-time value, got {_describe(cond)} "
                        "(use device_assert for runtime values)")
    if not cond:
        raise sem.error(f"static_assert failed{': ' + msg if msg else ''}")


@builtin
def device_assert(cond, msg: str = "") -> None:
    """Every element of `cond` must be true: checked by the numpy interpreter (DeviceAssertionError naming `msg`),
    not by device code (ir/debug_ops.py)."""
    sem = current()
    msg = _message(sem, msg, "device_assert")
    sem.create(D.DeviceAssertOp, sem.cast(sem.to_value(cond), bool_), msg)


@builtin
def device_print(prefix: str, *values) -> None:
    """Prints `pid (x, y, z) prefix v1 v2 ...` once per workgroup, or with a vector among the values one line per
    element, `pid (x, y, z) idx (i, j) prefix ...` (ir/debug_ops.py); a 1-D vector prints as its one row, (0, j)."""
    sem = current()
    prefix = _message(sem, prefix, "device_print")
    values = [sem.to_value(v) for v in values]
    values = [reshape(v, (1, *v.type.shape)) if isinstance(v.type, VectorType) and len(v.type.shape) == 1 else v
              for v in values]
    vectors = [v for v in values if isinstance(v.type, VectorType)]
    if len(vectors) > 1:
        raise sem.error(f"device_print: prints at most one vector, got {len(vectors)}")
    valid = vectors[0].type.shape if vectors else None
    sem.create(D.DevicePrintOp, prefix, values, [sem.index(0)] * 2 * len(vectors), valid)


class static_range:
    """`for i in xetile.static_range(...)` unrolls at trace time; `i` is a compile-time int."""

    def __init__(self, *args):
        self.range = range(*args)

    def __iter__(self):
        return iter(self.range)


VALUE_ATTRIBUTES = ("shape", "dtype", "to", "reshape", "T")


def value_attribute(v: Value, name: str):
    """Attributes of IR values in kernels: v.shape, v.dtype, v.to(dtype), v.T."""
    if name == "shape" and hasattr(v.type, "shape"):
        return tuple(v.type.shape)
    if name == "dtype" and hasattr(v.type, "dtype"):
        return v.type.dtype
    if name == "to":
        return builtin(functools.partial(cast, v))
    if name == "reshape" and isinstance(v.type, VectorType):
        return builtin(functools.partial(reshape, v))
    if name == "T" and isinstance(v.type, VectorType):
        return tile_transpose(v)
    raise current().error(f"{_describe(v)} has no attribute '{name}'{did_you_mean(name, VALUE_ATTRIBUTES)}")

