"""Value shape ops as Triton writes them: `v[a:b, c:d]` (and `v[:, None]`), `cat`, `flip`, `join`, `split`,
`interleave`, `sort`, `topk`. Slicing, cat and flip are IR ops (ir/shape_ops.py); join, split and interleave are composed from them
and reshapes, with Triton's meaning restricted to values of at most 2 dims: join stacks two 1-D vectors as the
columns of an [N, 2] one, split is its inverse, interleave alternates the elements of two vectors along their last
dim ([M, N] and [M, N] -> [M, 2N]). sort is a bitonic network along the last dim in a runtime loop over its merge
stages: each compare-exchange step compares the whole value element-wise with its partners, brought by two
rotations (xetile.roll), so the code a lane runs holds log2(N) steps whatever the network's length."""
from __future__ import annotations

from ..ir import core_ops as C
from ..ir.core import Block, Value
from ..ir.shape_ops import ConcatOp, FlipOp, SliceOp
from ..ir.types import VectorType, int32
from .dsl import expand_dims, reshape
from .indexed import iota, partners
from .semantic import builtin, current, describe


def _vector(sem, v, op: str) -> Value:
    if not isinstance(v, Value) or not isinstance(v.type, VectorType):
        raise sem.error(f"{op}: expected a 1-D or 2-D vector, got {describe(v)}")
    return v


def _axis(sem, v: Value, axis, op: str) -> int:
    rank = len(v.type.shape)
    if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < rank:
        raise sem.error(f"{op}: axis {describe(axis)} is not a dim of {v.type} (a compile-time int in "
                        f"[{-rank}, {rank}))")
    return axis % rank


def _bound(sem, n, default: int, size: int) -> int:
    if n is None:
        return default
    if not isinstance(n, int) or isinstance(n, bool):
        raise sem.error(f"slicing: bound {describe(n)} must be a compile-time int (constexpr) [vector shapes "
                        "are static]")
    return max(0, min(size, n + size if n < 0 else n))


def _range(sem, v: Value, s: slice, size: int) -> tuple[int, int]:
    if s.step not in (None, 1):
        raise sem.error(f"slicing {v.type}: step {s.step!r}; only step 1 is supported (flip reverses)")
    start, stop = _bound(sem, s.start, 0, size), _bound(sem, s.stop, size, size)
    if stop <= start:
        raise sem.error(f"slicing {v.type}: [{start}:{stop}] is empty [vector dims are at least 1]")
    return start, stop


def subscript(v: Value, key) -> Value:
    """`v[...]` on a vector: slices with constant bounds (step 1) take a block of it (numpy's bounds: negative
    from the end, clipped); `None` adds a unit dim (`v[:, None]` of a 1-D vector is its column)."""
    sem = current()
    key = key if isinstance(key, tuple) else (key,)
    if any(k is None for k in key):
        if len(v.type.shape) != 1 or len(key) != 2 or key.count(None) != 1 or key[key.index(None) - 1] != slice(None):
            raise sem.error(f"indexing {v.type} with {key}: `None` expands a 1-D vector, as v[None, :] or v[:, None]")
        return expand_dims(v, key.index(None))
    if len(key) > len(v.type.shape) or not all(isinstance(k, slice) for k in key):
        raise sem.error(f"indexing {v.type} with {key}: a vector takes one slice a dim with constant bounds, "
                        "e.g. v[2:6] or v[:, 0:8] (an element is the 1-element slice v[i:i+1])")
    ranges = [_range(sem, v, s, n) for s, n in zip(key, v.type.shape)] + [(0, n) for n in v.type.shape[len(key):]]
    shape = tuple(stop - start for start, stop in ranges)
    if shape == v.type.shape:
        return v
    return sem.create(SliceOp, v, [start for start, _ in ranges], shape).result


@builtin
def cat(a, b, axis: int = 0) -> Value:
    """`a` then `b` along `axis` (numpy's concatenate): the same element type and sizes off the axis."""
    sem = current()
    a, b = _vector(sem, a, "cat"), _vector(sem, b, "cat")
    axis = _axis(sem, a, axis, "cat")
    others = [[n for d, n in enumerate(t.shape) if d != axis] for t in (a.type, b.type)]
    if len(a.type.shape) != len(b.type.shape) or others[0] != others[1] or a.type.dtype != b.type.dtype:
        raise sem.error(f"cat: {a.type} and {b.type} do not join along axis {axis} (one element type, the same "
                        "sizes off the axis)")
    return sem.create(ConcatOp, a, b, axis).result


@builtin
def flip(x, axis: int = -1) -> Value:
    """`x` with its elements along `axis` (default the last, as Triton's) in reverse order (numpy's flip)."""
    sem = current()
    x = _vector(sem, x, "flip")
    return sem.create(FlipOp, x, _axis(sem, x, axis, "flip")).result


@builtin
def join(a, b) -> Value:
    """Triton's join for 1-D vectors: [N] and [N] -> [N, 2], a in column 0, b in column 1."""
    sem = current()
    a, b = _vector(sem, a, "join"), _vector(sem, b, "join")
    if len(a.type.shape) != 1 or a.type != b.type:
        raise sem.error(f"join: {a.type} and {b.type}: takes two 1-D vectors of one type (the [N, 2] result is "
                        "2-D; joining 2-D values would make a 3-D one: interleave gives their elements as [M, 2N])")
    return cat(expand_dims(a, 1), expand_dims(b, 1), 1)


@builtin
def split(x) -> tuple[Value, Value]:
    """Triton's split, join's inverse: [N, 2] -> its columns, two [N] vectors."""
    sem = current()
    x = _vector(sem, x, "split")
    if len(x.type.shape) != 2 or x.type.shape[1] != 2:
        raise sem.error(f"split: {x.type} must be [N, 2] (its last dim of 2 splits in two 1-D vectors)")
    n = x.type.shape[0]
    return tuple(reshape(subscript(x, (slice(None), slice(c, c + 1))), [n]) for c in (0, 1))


@builtin
def interleave(a, b) -> Value:
    """Triton's interleave: the elements of `a` and `b` alternate along the last dim ([M, N] -> [M, 2N],
    [N] -> [2N]); reshapes around join."""
    sem = current()
    a, b = _vector(sem, a, "interleave"), _vector(sem, b, "interleave")
    if a.type != b.type:
        raise sem.error(f"interleave: {a.type} and {b.type} must have one shape and element type")
    shape, total = a.type.shape, a.type.shape[0] * (a.type.shape[1] if len(a.type.shape) == 2 else 1)
    joined = join(reshape(a, [total]), reshape(b, [total]))
    return reshape(joined, [*shape[:-1], 2 * shape[-1]])


def _out_of_order(sem, lo: Value, hi: Value) -> Value:
    """`lo` comes after `hi` in numpy's ascending order: greater, or a NaN before a number (NaNs sort last)."""
    greater = sem.compare(">", lo, hi)
    if not lo.type.dtype.is_float:
        return greater
    nan_before_number = sem.binary("&", sem.compare("!=", lo, lo), sem.compare("==", hi, hi))
    return sem.binary("|", greater, nan_before_number)


def _exchanged(sem, x: Value, lower: Value, descending_runs: Value, distance: int) -> Value:
    """One compare-exchange step at `distance` along the last dim: position i and its partner i ^ distance (a
    rotation within runs of twice the distance) swap where they are out of order for their run's direction.
    `lower` holds where i is the pair's first position."""
    axis = len(x.type.shape) - 1
    partner = partners(sem, x, axis, distance)
    takes_lesser = sem.binary("^", lower, descending_runs)
    swap = sem.where(takes_lesser, _out_of_order(sem, x, partner), _out_of_order(sem, partner, x))
    return sem.where(swap, partner, x)


def _when(sem, cond: Value, step, x: Value) -> Value:
    """`step(x)` where the scalar `cond` holds, else `x`: an scf.if, so a skipped step costs no work."""
    taken, skipped = Block(), Block()
    with sem.builder.at_end_of(taken):
        sem.builder.create(C.YieldOp, [step(x)])
    with sem.builder.at_end_of(skipped):
        sem.builder.create(C.YieldOp, [x])
    return sem.builder.create(C.IfOp, cond, [x.type], taken, skipped).results[0]


def _bitonic(sem, x: Value) -> Value:
    """`x` in ascending order along its last dim of n, a power of two: a runtime loop over the log2(n) merge
    stages of a bitonic network, each stage the log2(n) compare-exchange distances n/2 ... 1, of which the stage
    merging runs of k takes those below k (an scf.if around each skips the others). So the code holds log2(n)
    steps, not the network's log2(n) (log2(n) + 1) / 2, and does not grow with the stages: each step compares
    whole vectors, its partners brought by rotations along the dim (lane shuffles within a subgroup)."""
    n, axis = x.type.shape[-1], len(x.type.shape) - 1
    positions = iota(sem, x.type.shape, axis)
    distances = [n >> s for s in range(1, n.bit_length())]
    lower = {d: sem.compare("==", sem.binary("&", positions, d), 0) for d in distances}
    bounds = [sem.constant(v, int32) for v in (1, n.bit_length(), 1)]
    loop = sem.builder.create(C.ForOp, *bounds, [x], "stage", ["runs"])
    with sem.builder.at_end_of(loop.body):
        stage, x = loop.body.args
        run = sem.binary("<<", 1, stage)
        descending_runs = sem.compare("!=", sem.binary("&", positions, run), 0)
        for d in distances:
            x = _when(sem, sem.compare("<", d, run),
                      lambda v, d=d: _exchanged(sem, v, lower[d], descending_runs, d), x)
        sem.builder.create(C.YieldOp, [x])
    sem.builder.loc = loop.loc
    return loop.results[0]


@builtin
def sort(x, axis: int = -1, descending: bool = False) -> Value:
    """`x` sorted along its last dim (numpy's sort, NaNs last; `descending=True` its reverse): a bitonic network
    for a last dim of N, a power of two (`_bitonic`)."""
    sem = current()
    x = _vector(sem, x, "sort")
    shape = x.type.shape
    if _axis(sem, x, axis, "sort") != len(shape) - 1:
        raise sem.error(f"sort: axis {axis} of {x.type}: sorts along the last dim only (as Triton's)")
    n = shape[-1]
    if n & (n - 1):
        raise sem.error(f"sort: the last dim of {x.type} must be a power of two (a bitonic network)")
    x = _bitonic(sem, x) if n > 1 else x
    return flip(x, -1) if descending else x


@builtin
def topk(x, k: int) -> Value:
    """The `k` largest elements along the last dim, largest first (Triton's topk): `sort(x, descending=True)`
    sliced to `k`."""
    sem = current()
    x = _vector(sem, x, "topk")
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= x.type.shape[-1]:
        raise sem.error(f"topk: k {describe(k)} must be a compile-time int in [1, {x.type.shape[-1]}] for {x.type}")
    return subscript(sort(x, descending=True), (slice(None),) * (len(x.type.shape) - 1) + (slice(0, k),))
