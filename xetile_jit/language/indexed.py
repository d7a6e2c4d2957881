"""Reductions and scans that need each element's position, traced into `vector.iota` and the
ops the backend already lowers (tile_reduce, compares, selects, scf.for), so they run at every level and on the
device with no rules of their own.

- argmax / argmin along one dim: the first index holding the extreme, as numpy's (a NaN counts as the extreme, so
  the first NaN wins); int32, the reduced dim kept as size 1 (tile_reduce's shape).
- tile_scan(kind, v, dim) (cumsum is kind "add"): the inclusive prefix along `dim` in v's dtype. Position j is the
  `kind` reduction of the elements up to j, one reduction per position in a runtime loop (so the code does not grow
  with the tile): the sums come in a tree order, within the dtype's rounding of numpy's sequential ones.
- combine_fold(values, dim, combine, scan): a reduction or inclusive scan of one or several vectors at once with a
  combine function of the user's, traced on the accumulators and the next elements. The association order is a left
  fold along `dim`: combine(...combine(combine(x0, x1), x2)..., x[n-1]), in a runtime loop over the positions; each
  position's elements are picked out exactly by a built-in reduction (every other element is the identity), so the
  interpreter at every level and the device compute the same combines in the same order.
"""
from __future__ import annotations

from ..ir import core_ops as C
from ..ir import xetile_ops as X
from ..ir.core import Value
from ..ir.elementwise import REDUCE_KINDS, reduce_identity
from ..ir.types import int32
from .semantic import Semantic

ARG_KINDS = {"argmax": "max", "argmin": "min"}


def iota(sem: Semantic, shape, dim: int) -> Value:
    return sem.create(C.IotaOp, sem.index(0), dim, shape).result


def single_dim(sem: Semantic, dims, what: str) -> int:
    if len(dims) != 1 or dims[0] not in (0, 1):
        raise sem.error(f"{what}: takes one dim of the 2-D vector, 0 or 1, got {list(dims)}")
    return dims[0]


def reduce(sem: Semantic, kind: str, v: Value, dim: int) -> Value:
    return sem.create(X.TileReduceOp, kind, v, (dim,)).result


def first_index(sem: Semantic, hit: Value, positions: Value, dim: int) -> Value:
    """The smallest position along `dim` where `hit` holds; the dim's size where it holds nowhere."""
    return reduce(sem, "min", sem.where(hit, positions, hit.type.shape[dim]), dim)


def arg_reduce(sem: Semantic, kind: str, v: Value, dims) -> Value:
    dim = single_dim(sem, dims, kind)
    shape = v.type.shape
    positions = iota(sem, shape, dim)
    extreme = sem.broadcast_to(reduce(sem, ARG_KINDS[kind], v, dim), shape)
    first = first_index(sem, sem.compare("==", v, extreme), positions, dim)
    if not v.type.dtype.is_float:
        return first
    first_nan = first_index(sem, sem.compare("!=", v, v), positions, dim)
    return sem.where(sem.compare("<", first_nan, shape[dim]), first_nan, first)


def scan(sem: Semantic, kind: str, v: Value, dim: int) -> Value:
    """The inclusive `kind` prefix of `v` along `dim`: an scf.for over the positions, each one reduction."""
    if kind not in REDUCE_KINDS or v.type.dtype.kind not in REDUCE_KINDS[kind]:
        raise sem.error(f"tile_scan: kind '{kind}' does not apply to {v.type}; kinds are {', '.join(REDUCE_KINDS)} "
                        "[tile_reduce kinds per element type]")
    shape, dtype = v.type.shape, v.type.dtype
    positions = iota(sem, shape, dim)
    identity = sem.constant(reduce_identity(kind, dtype), dtype, shape)
    bounds = [sem.constant(n, int32) for n in (0, shape[dim], 1)]
    loop = sem.builder.create(C.ForOp, *bounds, [sem.constant(0, dtype, shape)], "position", ["prefix"])
    with sem.builder.at_end_of(loop.body):
        j, prefix = loop.body.args
        upto = sem.where(sem.compare("<=", positions, j), v, identity)
        total = sem.broadcast_to(reduce(sem, kind, upto, dim), shape)
        sem.builder.create(C.YieldOp, [sem.where(sem.compare("==", positions, j), total, prefix)])
    sem.builder.loc = loop.loc
    return loop.results[0]



def element_at(sem: Semantic, v: Value, positions: Value, j, dim: int) -> Value:
    """The elements of `v` at position `j` along `dim` (dim kept as size 1), exactly: a sum of them and -0.0s for
    floats (-0.0 + x is x, signed zeros and NaNs included), an `or` with zeros for integers and bools."""
    kind, identity = ("add", -0.0) if v.type.dtype.is_float else ("or", 0)
    return reduce(sem, kind, sem.where(sem.compare("==", positions, j), v, identity), dim)


def combined(sem: Semantic, results, accumulators) -> list[Value]:
    """The combine function's results as the accumulators' types: one per accumulator, scalars splat."""
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    if len(results) != len(accumulators):
        raise sem.error(f"combine returned {len(results)} values for {len(accumulators)} tiles [combine returns one "
                        "value per tile]")
    values = []
    for r, acc in zip(results, accumulators):
        r = r if isinstance(r, Value) else sem.to_value(r, acc.type.dtype)
        if r.type.dtype != acc.type.dtype:
            raise sem.error(f"combine returned {r.type.dtype} for a tile of {acc.type.dtype} [combine keeps each "
                            "tile's element type]")
        values.append(sem.broadcast_to(r, acc.type.shape))
    return values


def combine_fold(sem: Semantic, values, dim: int, combine, scan: bool) -> list[Value]:
    """The left fold of `combine` over `values` along `dim` (module docstring): per tile, the reduction (dim kept as
    size 1) or, with `scan`, the inclusive prefixes (v's shape)."""
    shape = values[0].type.shape
    if any(v.type.shape != shape for v in values):
        raise sem.error("combine tiles must have one shape, got " + ", ".join(str(v.type) for v in values))
    positions = iota(sem, shape, dim)
    firsts = [element_at(sem, v, positions, 0, dim) for v in values]
    bounds = [sem.constant(n, int32) for n in (1, shape[dim], 1)]
    names = [f"acc{i}" for i in range(len(values))] + ([f"prefix{i}" for i in range(len(values))] if scan else [])
    loop = sem.builder.create(C.ForOp, *bounds, firsts + (list(values) if scan else []), "position", names)
    with sem.builder.at_end_of(loop.body):
        j, *carried = loop.body.args
        accumulators = carried[:len(values)]
        nexts = [element_at(sem, v, positions, j, dim) for v in values]
        totals = combined(sem, combine(*accumulators, *nexts), accumulators)
        at_j = sem.compare("==", positions, j)
        prefixes = [sem.where(at_j, sem.broadcast_to(t, shape), p) for t, p in zip(totals, carried[len(values):])]
        sem.builder.create(C.YieldOp, totals + prefixes)
    sem.builder.loc = loop.loc
    return loop.results[len(values):] if scan else loop.results[:len(values)]
