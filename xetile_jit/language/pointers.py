"""Pointer arithmetic, Triton's spelling of gather and scatter: `x + offsets` names the elements of array `x` at
`offsets` (an integer vector, 1-D or 2-D, or a number added to one), and `load`, `store` and the `atomic_*`
functions read, write and combine there, masked like Triton's `tl.load(ptr + offs, mask, other)`.

Offsets count elements in the array's row-major order (`x.flat`), whatever its rank: for a contiguous array they are
Triton's pointer offsets; a strided view is indexed by the order of its elements, not by its memory, since the
launch passes its strides. Each call is a #scatter tile of those offsets (language/scatter.py): lanes outside the
array read `other` or are dropped, as every gather's are (XeTile RFC "load_gather and store_scatter").
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir import core_ops as C
from ..ir import numeric
from ..ir.core import Value
from ..ir.types import MemRefType, ScalarType, TileType, VectorType, bool_
from . import scatter
from .dsl import atomic_rmw_tile, init_tile, reshape, tile_cas
from .semantic import builtin, current, describe, is_py_scalar


@dataclass(frozen=True)
class Pointers:
    """Array `array` at element `offsets` (an integer vector, a scalar value or a Python int)."""

    array: Value
    offsets: object

    def __repr__(self) -> str:
        """As error messages name it: `array + offsets` by their types."""
        offsets = self.offsets.type if isinstance(self.offsets, Value) else self.offsets
        return f"{self.array.type} + {offsets}"


def is_array(x) -> bool:
    return isinstance(x, Value) and isinstance(x.type, MemRefType)


def is_pointer(x) -> bool:
    return is_array(x) or isinstance(x, Pointers)


def is_integer(x) -> bool:
    if isinstance(x, Value):
        return isinstance(x.type, (ScalarType, VectorType)) and x.type.dtype.kind in "iu"
    return isinstance(x, int) and not isinstance(x, bool)


def offset(op: str, a, b) -> Pointers | None:
    """`a op b` where one side is an array or Pointers and the other integer offsets: the moved Pointers (+ either
    way round, - by offsets). None where neither side is a pointer, or an array meets a non-integer (an array
    passed where a number was meant: the semantic layer's error names it)."""
    if not (is_pointer(a) or is_pointer(b)):
        return None
    sem = current()
    if is_pointer(a) and is_pointer(b):
        raise sem.error("pointer arithmetic adds offsets to one array, not two arrays")
    base, delta = (a, b) if is_pointer(a) else (b, a)
    if not is_integer(delta):
        if is_array(base):
            return None
        raise sem.error(f"offsets must be integers, got {describe(delta)}")
    if op not in ("+", "-") or base is b and op == "-":
        raise sem.error(f"operator {op} on an array: arrays take `+ offsets` and `- offsets` (pointer arithmetic: "
                        "x + offs names the elements xetile.load reads)")
    if op == "-":
        delta = sem.negate(delta) if isinstance(delta, Value) else -delta
    if is_array(base):
        return Pointers(base, delta)
    return Pointers(base.array, sem.binary("+", base.offsets, delta))


def _pointers(sem, pointer, op: str) -> Pointers:
    if is_array(pointer):
        pointer = Pointers(pointer, 0)
    if not isinstance(pointer, Pointers):
        raise sem.error(f"{op}: expected `array + offsets` (an array argument plus an integer vector or scalar), "
                        f"got {describe(pointer)}")
    return pointer


def _gather_tile(sem, pointer, op: str) -> tuple[Value, bool]:
    """The #scatter tile of `pointer`'s elements, and whether its offset is one scalar (`x + i`, Triton's scalar
    pointer): a tile of one element then, whose value the op gives back as a scalar (`_scalar`)."""
    p = _pointers(sem, pointer, op)
    one = not (isinstance(p.offsets, Value) and isinstance(p.offsets.type, VectorType))
    offsets = sem.broadcast_to(sem.to_value(p.offsets), (1,)) if one else p.offsets
    return scatter.init_scatter_tile(p.array, offsets, None, 1), one


def _scalar(sem, value: Value, one: bool) -> Value:
    """An op's one-element result as the scalar a scalar pointer gives (vector.extract), else the vector."""
    return sem.create(C.ExtractElementOp, value).result if one else value


def _mask(sem, mask, shape):
    """`mask` broadcast to the offsets' shape, as Triton broadcasts it (a Python bool is all lanes on or off)."""
    if mask is None or mask is True:
        return None
    if is_py_scalar(mask):
        return sem.constant(bool(mask), bool_, shape)
    return sem.broadcast_to(sem.to_value(mask), shape)


# Triton's tl.load and tl.store options, which a gather or scatter here has no place for
TRITON_ACCESS_OPTIONS = ("cache_modifier", "eviction_policy", "volatile", "boundary_check", "padding_option")


def _refuse_triton_options(sem, op: str, options: dict) -> None:
    """The error for a keyword `load` or `store` does not take, naming the place of Triton's own options."""
    if options:
        name = next(iter(options))
        known = name in TRITON_ACCESS_OPTIONS
        raise sem.error(f"{op}() got an unexpected keyword argument '{name}'" + (
            f" ({name} is an option of Triton's tl.{op}, which `array + offsets` does not take: drop it; a block "
            f"tile, `init_tile(x, [r, c], [M, N])`, takes cache hints (`cache=`) and reads `padding` past the "
            f"array)" if known else ""))


@builtin
def load(pointer, mask=None, other=None, **options) -> Value:
    """The elements at `pointer` (`array + offsets`): Triton's `tl.load(ptr + offs, mask, other)`. Masked-off lanes
    and lanes outside the array read `other` (a number, cast to the elements' type as Triton casts it, or a vector
    taken where the mask is off; default 0)."""
    sem = current()
    _refuse_triton_options(sem, "load", options)
    tile, one = _gather_tile(sem, pointer, "load")
    mask = _mask(sem, mask, tile.type.shape)
    if other is None or is_py_scalar(other):
        padding = _as_element(sem, other or 0, tile.type.dtype)
        return _scalar(sem, scatter.load_gather(tile, mask, padding=padding), one)
    value = scatter.load_gather(tile, mask)
    return _scalar(sem, value if mask is None else sem.where(mask, value, other), one)


def _as_element(sem, number, dtype):
    """A number `other` as Triton's tl.load casts it to the pointer's element type: into an integer type a float
    rounded toward zero and an integer wrapped into its bits, as the kernel's own cast (numeric.convert) does (-1
    reads 255 from uint8 elements), so a kernel ported from Triton reads what it did there; a float type takes it
    as it is."""
    if not dtype.is_int:
        return number
    if isinstance(number, float) and not math.isfinite(number):
        raise sem.error(f"load(): other={number} has no value in {dtype} elements")
    return int(numeric.convert(np.int64(numeric.wrap_i64(int(number))), dtype))


@builtin
def store(pointer, value, mask=None, **options) -> None:
    """Writes `value` (broadcast to the offsets' shape) at `pointer` (`array + offsets`), except masked-off lanes
    and lanes outside the array: Triton's `tl.store(ptr + offs, value, mask)`."""
    sem = current()
    _refuse_triton_options(sem, "store", options)
    tile, _ = _gather_tile(sem, pointer, "store")
    scatter.store_scatter(tile, _broadcast(sem, value, tile), _mask(sem, mask, tile.type.shape))


def _broadcast(sem, value, tile: Value):
    """A vector or scalar `value` broadcast to the tile's shape (numbers are splat by the scatter ops)."""
    if isinstance(value, Value) and isinstance(value.type, (VectorType, ScalarType)):
        return sem.broadcast_to(_unit_dims_dropped(sem, value, tile.type.shape), tile.type.shape)
    return value


def _unit_dims_dropped(sem, value: Value, shape) -> Value:
    """A vector of more dims than the offsets, whose extra dims are of size 1, as one of the offsets' rank, its
    elements in the same order: tile_reduce keeps the dims it reduces (`[M, 1]`), where Triton's `tl.sum` drops
    them, so `store(out + rows, tile_reduce("add", v, [1]))` stores the row sums."""
    if not isinstance(value.type, VectorType) or len(value.type.shape) <= len(shape):
        return value
    kept = tuple(n for n in value.type.shape if n != 1)
    if len(kept) > len(shape):
        raise sem.error(f"a value of {value.type} does not fit offsets of shape {list(shape)}: it has more dims of "
                        "more than one element [reshape the value to the offsets' shape]")
    return reshape(value, (1,) * (len(shape) - len(kept)) + kept)


@builtin
def atomic_cas(pointer, cmp, val) -> Value:
    """Atomically, element by element: where memory holds `cmp` (bit for bit), writes `val`; returns the old values
    (32- and 64-bit elements). On a block tile the workgroup's tile is swapped once, as atomic_rmw_tile; through a
    scalar pointer of a 1-D array (`locks + i`, Triton's `tl.atomic_cas(ptr, cmp, val)`) the one element is, and the
    old value is a scalar."""
    sem = current()
    if isinstance(pointer, Value) and isinstance(pointer.type, TileType):
        return tile_cas(sem, pointer, cmp, val)
    p = _pointers(sem, pointer, "atomic_cas")
    if isinstance(p.offsets, Value) and isinstance(p.offsets.type, VectorType):
        raise sem.error(f"atomic_cas: through {p!r}, an element a lane, is not supported; through a scalar pointer "
                        "(`locks + i`) or a block tile (init_tile) it is")
    if p.array.type.rank != 1:
        raise sem.error(f"atomic_cas: a scalar pointer into {p.array.type} is not supported; one into a 1-D array "
                        "(`locks + i`) or a block tile (init_tile) is")
    return _scalar(sem, tile_cas(sem, init_tile(p.array, [p.offsets], [1]), cmp, val), True)


def _atomic(kind: str):
    def atomic(pointer, value, mask=None) -> Value:
        sem = current()
        if isinstance(pointer, Value) and isinstance(pointer.type, TileType):  # block or #scatter tiles
            return atomic_rmw_tile(kind, value, pointer, mask)
        tile, one = _gather_tile(sem, pointer, f"atomic_{kind}")
        old = scatter.atomic_rmw_scatter(kind, _broadcast(sem, value, tile), tile, _mask(sem, mask, tile.type.shape))
        return _scalar(sem, old, one)

    atomic.__name__ = atomic.__qualname__ = f"atomic_{kind}"
    atomic.__doc__ = (f"Atomically {kind}s `value` into the elements at `pointer` (`array + offsets`, or a tile) and "
                      f"returns the old values; masked-off lanes and lanes outside the array are left alone: "
                      f"Triton's `tl.atomic_{kind}(ptr + offs, value, mask)`.")
    return builtin(atomic)


atomic_add = _atomic("add")
atomic_max = _atomic("max")
atomic_min = _atomic("min")
atomic_and = _atomic("and")
atomic_or = _atomic("or")
atomic_xor = _atomic("xor")
atomic_xchg = _atomic("xchg")
