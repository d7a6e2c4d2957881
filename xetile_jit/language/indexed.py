"""Reductions and scans that need each element's position, traced into `vector.iota` and the
ops the backend already lowers (tile_reduce, compares, selects, scf.for, xetile.roll), so they run at every level
and on the device with no rules of their own.

- argmax / argmin along one dim: the first index holding the extreme, as numpy's (a NaN counts as the extreme, so
  the first NaN wins); int32, the reduced dim kept as size 1 (tile_reduce's shape).
- tile_scan(kind, v, dim) (cumsum is kind "add"): the inclusive prefix along `dim` in v's dtype. Position j is the
  `kind` reduction of the elements up to j, one reduction per position in a runtime loop (so the code does not grow
  with the tile): the sums come in a tree order, within the dtype's rounding of numpy's sequential ones.
- reduce / associative_scan with a combine function of the user's: traced into an `xetile.reduce` / `xetile.scan`
  op whose region holds the combine on scalars (ir/combine_ops.py); `expand_combines` (the first lowering step)
  rewrites each into the tree the op's interpreter computes, log2 of the dim's size strides: at each, the region's
  ops on whole vectors, each position's partner brought by a rotation along the dim (`xetile.roll`), and a
  `where` on the positions that combine at that stride. So the interpreter at every level and the device compute the
  same combines in the same order; a rotation within a subgroup's registers is a lane shuffle, one across subgroups
  goes through SLM. A reduction's partner at stride s is position p XOR s, a rotation within runs of 2s where those
  divide the dim, so only the strides past a subgroup's piece go through SLM.
"""
from __future__ import annotations

from ..ir import core_ops as C
from ..ir import xetile_ops as X
from ..ir.combine_ops import COMBINE_OPS, CombineOp, strides
from ..ir.core import Block, Builder, FuncOp, Value, walk
from ..ir.elementwise import REDUCE_KINDS, reduce_identity
from ..ir.shape_ops import RollOp, SliceOp
from ..ir.types import VectorType, int32
from ..ir.verifier import verify_op
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


def traced_combine(sem: Semantic, op_class, values, dim: int, combine) -> list[Value]:
    """An `op_class` (ir/combine_ops.py) over `values` whose region is `combine` traced on scalars."""
    op = sem.builder.create(op_class, values, dim)
    n = len(values)
    with sem.builder.at_end_of(op.body):
        results = combine(*op.body.args)
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        if len(results) != n:
            raise sem.error(f"combine returned {len(results)} values for {n} tiles [combine returns one value per "
                            "tile]")
        results = [r if isinstance(r, Value) else sem.to_value(r, a.type.dtype) for r, a in zip(results, op.body.args)]
        for r, a in zip(results, op.body.args):
            if r.type != a.type:
                raise sem.error(f"combine returned {r.type} for a tile of {a.type.dtype} [combine returns one element "
                                "of each tile's element type]")
        sem.builder.create(C.YieldOp, results)
    sem.builder.loc = op.loc
    if any(o.regions for o in op.body.ops):
        raise sem.error("combine: if statements and loops inside a combine function are not supported; choose with "
                        "xetile.where")
    verify_op(op)
    return op.results


def vector_body(sem: Semantic, body: Block, args) -> list[Value]:
    """The ops of a combine region applied to vectors `args` (one per block argument, of one shape): each op again
    with vector results; scalars from outside the region splat."""
    shape = args[0].type.shape
    mapping = dict(zip(body.args, args))

    def operand(v: Value) -> Value:
        return mapping[v] if v in mapping else sem.splat(v, shape)

    for op in body.ops[:-1]:
        new = op.copy_with([operand(v) for v in op.operands], [VectorType(shape, r.type.dtype) for r in op.results])
        new.loc = op.loc
        sem.builder.block.append(new)
        verify_op(new)
        mapping.update(zip(op.results, new.results))
    return [operand(v) for v in body.terminator.operands]


def rolled(sem: Semantic, v: Value, dim: int, shift: int) -> Value:
    """`v` with element p along `dim` taken from position p - shift (mod the dim's size)."""
    return sem.create(RollOp, v, shift % v.type.shape[dim], dim).result


def partners(sem: Semantic, v: Value, dim: int, distance: int) -> Value:
    """`v` with element p along `dim` taken from position p XOR `distance` (a power of two; twice it divides the
    dim): a rotation by `distance` within runs of twice it, which stays in a subgroup's piece where that holds such
    runs."""
    return sem.create(RollOp, v, distance, dim, 2 * distance).result


def following(sem: Semantic, v: Value, dim: int, stride: int) -> Value:
    """`v` with element p along `dim`, a multiple of 2 * `stride`, taken from position p + `stride` (below the dim's
    size): its partner where twice the stride divides the dim, else a rotation of the whole dim."""
    if v.type.shape[dim] % (2 * stride) == 0:
        return partners(sem, v, dim, stride)
    return rolled(sem, v, dim, -stride)


def first_position(sem: Semantic, v: Value, dim: int) -> Value:
    shape = [1 if d == dim else n for d, n in enumerate(v.type.shape)]
    return v if tuple(shape) == v.type.shape else sem.create(SliceOp, v, [0, 0], shape).result


def combine_tree(sem: Semantic, op: CombineOp) -> list[Value]:
    """The tree of `op`'s combine along its dim (ir/combine_ops.py): per stride, every position's combine on whole
    vectors, its partner's elements brought by a rotation, kept where the position combines at that stride. Per
    operand, the reduction (dim kept as size 1) or, for a scan, the inclusive prefixes."""
    values, dim = list(op.operands), op.dim
    n = values[0].type.shape[dim]
    positions = iota(sem, values[0].type.shape, dim)
    for s in strides(n):
        if op.scan:     # position p: combine(prefix[p - s], prefix[p]) for p >= s
            totals = vector_body(sem, op.body, [rolled(sem, v, dim, s) for v in values] + values)
            combines = sem.compare(">=", positions, s)
        else:           # position p, a multiple of 2s: combine(partial[p], partial[p + s]) for p + s < n
            totals = vector_body(sem, op.body, values + [following(sem, v, dim, s) for v in values])
            run_start = sem.compare("==", sem.binary("&", positions, 2 * s - 1), 0)
            combines = sem.binary("&", run_start, sem.compare("<", positions, n - s))
        values = [sem.where(combines, t, v) for t, v in zip(totals, values)]
    return values if op.scan else [first_position(sem, v, dim) for v in values]


def expand_combines(func: FuncOp) -> FuncOp:
    """Every xetile.reduce and xetile.scan of `func` rewritten in place as its tree of built-in ops."""
    for op in [o for o in walk(func.body) if isinstance(o, COMBINE_OPS)]:
        sem = Semantic(Builder(Block()))
        sem.builder.loc = op.loc
        results = combine_tree(sem, op)
        for new in list(sem.builder.block.ops):
            op.parent.insert_before(op, new.detach())
        for old, new in zip(op.results, results):
            old.replace_all_uses_with(new)
        op.erase()
    return func
