"""Which elements of an array each subgroup touches in one workgroup-level tile access, for the barrier pass.

A tensor descriptor made by create_nd_tdesc (and moved by update_nd_offset) on a view of an array (memref.subview,
memref.transpose, ...) addresses a tile at index offsets. The offsets are read as affine forms of opaque index
values (kernel arguments, program ids, loop variables): two accesses whose offsets differ by constants can be
compared element by element; the layout (XeGPU RFC distribution rule: round robin, wrapping where sg_layout x
sg_data exceeds the tile) says which subgroups hold each element. Anything else (a descriptor carried by a loop,
offsets that differ by a runtime value, a reinterpreted view) is no Place, and the barrier pass orders it as
before: by descriptor.

Two accesses need a barrier between them when one subgroup may see another's write too early, or overwrite what
another has yet to read. The subgroups that share an element store the same value (the pieces of one op need no
order among themselves), so for an element e with writers W(e) and readers R(e):
  a write, then a read: some subgroup reads e that it did not write itself (R(e) not within W(e), W(e) not empty);
  a write, then a write: some earlier writer of e does not write it again (W1(e) not within W2(e), W2(e) not empty);
  a read, then a write: e is read and written, by two subgroups or more.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ...ir import core_ops as C
from ...ir import xegpu_ops as G
from ...ir.attrs import Layout
from ...ir.core import Value
from ...ir.types import VectorType

MAX_SUBGROUPS = 64  # one bit each in a uint64 per element


@dataclass(frozen=True)
class Affine:
    """const + sum(coefficient * value) over opaque index values."""

    const: int = 0
    terms: frozenset = field(default_factory=frozenset)  # of (Value, coefficient), coefficients nonzero

    @staticmethod
    def of(v: Value) -> "Affine":
        return Affine(0, frozenset([(v, 1)]))

    def __add__(self, other: "Affine") -> "Affine":
        merged: dict = dict(self.terms)
        for v, k in other.terms:
            merged[v] = merged.get(v, 0) + k
        return Affine(self.const + other.const, frozenset((v, k) for v, k in merged.items() if k))

    def scaled(self, k: int) -> "Affine":
        return Affine(self.const * k, frozenset((v, c * k) for v, c in self.terms if c * k))

    def __sub__(self, other: "Affine") -> "Affine":
        return self + other.scaled(-1)

    @property
    def constant(self) -> int | None:
        return None if self.terms else self.const


def affine(v: Value) -> Affine:
    """`v` as an affine form: constants, index casts, additions, subtractions and products by constants are
    followed; any other value is a term of its own."""
    op = v.owner
    if isinstance(op, C.ConstantOp) and not isinstance(v.type, VectorType):
        return Affine(int(op.value))
    if isinstance(op, C.IndexCastOp):
        return affine(op.operands[0])
    if isinstance(op, C.BinaryOp) and op.name in ("arith.addi", "arith.subi", "arith.muli"):
        a, b = (affine(x) for x in op.operands)
        if op.name == "arith.addi":
            return a + b
        if op.name == "arith.subi":
            return a - b
        if a.constant is not None or b.constant is not None:
            return b.scaled(a.constant) if a.constant is not None else a.scaled(b.constant)
    return Affine.of(v)


@dataclass(frozen=True)
class View:
    """One view op between the array and the matrix a descriptor addresses, with its index operands."""

    kind: type
    operands: tuple[Affine, ...]

    def disjoint_from(self, other: "View") -> bool | None:
        """True: the two views select different slices (memref.subview at leading offsets that differ by a
        constant); False: the same matrix; None: cannot tell."""
        if self.kind is not other.kind or len(self.operands) != len(other.operands):
            return None
        differences = [(a - b).constant for a, b in zip(self.operands, other.operands)]
        if any(d is None for d in differences):
            return None
        if any(differences):
            return True if self.kind is G.MemRefSubviewOp else None
        return False


@dataclass(frozen=True)
class Place:
    """A tile at `offsets` on the matrix `views` make of an array, each element held by the subgroups its
    layout says."""

    views: tuple[View, ...]
    offsets: tuple[Affine, Affine]
    shape: tuple[int, int]
    layout: Layout  # workgroup level: sg_layout, sg_data, order

    @lru_cache(maxsize=4096)  # the barrier pass compares every access with every earlier one
    def conflicts(self, writes: bool, later: "Place", later_writes: bool) -> bool:
        """Whether the access at `later` needs a barrier after this one (module docstring)."""
        shift = self.shift_to(later)
        if shift is None:
            return True
        if shift is False or any(d >= e or -d >= f for d, e, f in zip(shift, self.extent, later.extent)):
            return False  # different slices, or tiles that do not meet
        mine = tuple(max(0, -d) for d in shift)  # both tiles in one frame, the upper left one at 0
        theirs = tuple(a + d for a, d in zip(mine, shift))
        frame = tuple(max(a + e, b + f) for a, e, b, f in zip(mine, self.extent, theirs, later.extent))
        first, then = self.owners_in(frame, mine), later.owners_in(frame, theirs)
        if writes and later_writes:
            return bool(((then != 0) & ((first & ~then) != 0)).any())
        if writes:
            return bool(((first != 0) & ((then & ~first) != 0)).any())
        both = first | then
        return bool(((first != 0) & (then != 0) & ((both & (both - np.uint64(1))) != 0)).any())

    def shift_to(self, later: "Place"):
        """`later`'s offsets minus these (constants), False when the two are in different slices, None when the
        offsets do not tell."""
        if len(self.views) != len(later.views):
            return None
        for mine, theirs in zip(self.views, later.views):
            disjoint = mine.disjoint_from(theirs)
            if disjoint is None or disjoint:
                return None if disjoint is None else False
        shift = tuple((b - a).constant for a, b in zip(self.offsets, later.offsets))
        return None if None in shift else shift

    @property
    def extent(self) -> tuple[int, int]:
        """How far from the tile's origin its subgroups' pieces reach (a piece may pass the tile's end)."""
        return tuple(max(start + size for start, size in dim) for dim in pieces(self.layout, self.shape))

    def owners_in(self, frame, origin) -> np.ndarray:
        """Per element of `frame`, the bits of the subgroups that touch it, the tile's origin at `origin`."""
        out = np.zeros(frame, np.uint64)
        out[origin[0]:origin[0] + self.extent[0], origin[1]:origin[1] + self.extent[1]] = owners(self.layout,
                                                                                                 self.shape)
        return out


@lru_cache(maxsize=256)
def pieces(layout: Layout, shape) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per dim, the (start, size) of every piece of any subgroup (for `extent`)."""
    return tuple(tuple(run for j in range(n) for run in runs(j, n, d, w))
                 for n, d, w in zip(layout.sg_layout, layout.sg_data, shape))


def runs(j: int, n: int, d: int, w: int) -> list[tuple[int, int]]:
    """The (start, size) runs subgroup index j of n holds along a dim of extent w with sg_data d (wg-to-sg's
    round robin: start j * d + r * n * d, wrapped into the dim where n * d passes it)."""
    unit = n * d
    return [((j * d + r * unit) % w if unit > w else j * d + r * unit, d) for r in range(max(1, w // unit))]


@lru_cache(maxsize=256)
def owners(layout: Layout, shape) -> np.ndarray:
    """Per element the pieces of `layout` over `shape` reach, the bits of the subgroups that hold it."""
    (l0, l1), extent = layout.sg_layout, [max(a + b for a, b in dim) for dim in pieces(layout, shape)]
    out = np.zeros(extent, np.uint64)
    for s in range(l0 * l1):
        index = divmod(s, l1) if (layout.order or (1, 0)) == (1, 0) else divmod(s, l0)[::-1]
        for r0, h in runs(index[0], l0, layout.sg_data[0], shape[0]):
            for c0, w in runs(index[1], l1, layout.sg_data[1], shape[1]):
                out[r0:r0 + h, c0:c0 + w] |= np.uint64(1 << s)
    out.flags.writeable = False
    return out


def place_of(tdesc: Value) -> Place | None:
    """The Place of a tile descriptor, or None when its offsets or layout do not tell."""
    t, op = tdesc.type, tdesc.owner
    layout = getattr(t, "layout", None)
    if layout is None or layout.sg_layout is None or layout.num_subgroups > MAX_SUBGROUPS:
        return None
    if isinstance(op, G.UpdateNdOffsetOp):
        base = place_of(op.operands[0])
        if base is None:
            return None
        moved = tuple(o + affine(d) for o, d in zip(base.offsets, op.operands[1:]))
        return Place(base.views, moved, base.shape, base.layout)
    if not isinstance(op, G.CreateNdDescOp):
        return None
    views, memref = [], op.operands[0]
    while getattr(memref.owner, "views", False):
        view = memref.owner
        views.append(View(type(view), tuple(affine(x) for x in view.operands[1:])))
        memref = view.operands[0]
    return Place(tuple(views), tuple(affine(x) for x in op.operands[1:]), tuple(t.shape), layout.workgroup_level())
