"""Shape ops: casts and views of vectors and arrays.

- vector.shape_cast at the XeTile level (XeGPU RFC: vector ops on XeTile vectors): the same elements, in row-major
  order, in another shape of rank 1 or 2. `v.reshape(shape)` and `xetile.expand_dims(v, axis)` trace to it. On
  devices one that adds or removes a unit dim costs nothing or a transpose (transforms/xetile/rank2.py); one that moves
  elements between rows goes through shared local memory (transforms/xegpu/wg_to_sg.py).
- memref.reinterpret_cast: an array's memory, from its element [0, ..., 0], as a 2-D matrix of runtime sizes and
  strides (in elements): the XeTile RFC's init_tile on a raw address with dynamic shape and strides, for packed or
  strided layouts (`init_tile(..., base_shape=, base_strides=)`). One stride is the compile-time 1 (the `order`).
  The launch checked nothing about this view, so tiles on it go element by element (block_io False); a view that
  reaches past the array is the kernel's bug, which the interpreter reports: at the view, or in checking mode
  (ir/checking.py) at the op that accesses an element past the array, before it does. wg-to-sg views an SLM
  buffer in another static shape this way (a shape cast through SLM).
- xetile.slice, xetile.concat, xetile.flip: the value shape ops of `v[a:b, c:d]`, `xetile.cat` and `xetile.flip`
  (and, composed from them and shape casts, `join`, `split`, `interleave`). Each result element is one source
  element at a position known at compile time; wg-to-sg moves them between subgroups through SLM, so layout
  propagation relates no layout across them (each side takes its own).
- xetile.roll: a rotation along one dim (numpy's roll), or within each run of a span along it, which the trees of
  user combines and the steps of a sort use; its source and result share one layout, so a subgroup whose pieces
  hold whole runs rotates them in its registers.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .attrs import format_list
from .core import Operation, Value
from .types import ROW_MAJOR, IndexType, MemRefType, VectorType


class ShapeCastOp(Operation):
    name = "vector.shape_cast"
    effects = ()

    def __init__(self, v: Value, shape, loc=None):
        super().__init__([v], [VectorType(tuple(shape), v.type.dtype)], loc=loc)

    def verify(self):
        src, dst = self.operands[0].type, self.result.type
        if not isinstance(src, VectorType):
            raise self.error(f"source must be a vector, got {src}", "vector.shape_cast of a vector")
        if len(dst.shape) not in (1, 2) or not all(isinstance(n, int) and n > 0 for n in dst.shape):
            raise self.error(f"result shape {format_list(dst.shape)} must be 1-D or 2-D and positive",
                             "XeTile tiles and vectors are 1-D or 2-D")
        if math.prod(src.shape) != math.prod(dst.shape):
            raise self.error(f"{src} has {math.prod(src.shape)} elements, {dst} {math.prod(dst.shape)}",
                             "vector.shape_cast keeps the element count")

    def format(self, p) -> str:
        v = self.operands[0]
        return f" {p.name(v)}{p.attr_dict(self)} : {v.type} to {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        v, t = p.conversion()
        return p.result_type(cls(v, getattr(t, "shape", ())), t)

    def interpret(self, interp, v):
        return v.reshape(self.result.type.shape)


class MemRefReinterpretCastOp(Operation):
    name = "memref.reinterpret_cast"
    effects = ()
    views = True  # analysis.viewed_array

    def __init__(self, base: Value, sizes, strides, order=ROW_MAJOR, loc=None, shape=None):
        """`shape`: the view's static shape when `sizes` are these constants (an SLM buffer's view has one)."""
        view = dataclasses.replace(base.type, order=tuple(order), block_io=False, rank=2, within_extents=False,
                                   strided=True)
        if shape is not None:
            view = dataclasses.replace(view, shape=tuple(shape))
        super().__init__([base, *sizes, *strides], [view], loc=loc)

    def verify(self):
        base, *rest = self.operands
        if not isinstance(base.type, MemRefType):
            raise self.error(f"the source must be an array, got {base.type}", "memref.reinterpret_cast of an array")
        if len(rest) != 4 or not all(isinstance(v.type, IndexType) for v in rest):
            raise self.error(f"takes two index sizes and two index strides, got {len(rest)} operands",
                             "memref.reinterpret_cast to a 2-D matrix")

    def format(self, p) -> str:
        base, s0, s1, t0, t1 = self.operands
        return (f" {p.name(base)} to sizes: [{p.name(s0)}, {p.name(s1)}], strides: [{p.name(t0)}, {p.name(t1)}] : "
                f"{base.type} to {self.result.type}")

    @classmethod
    def parse(cls, p, name):
        base = p.value()
        p.keyword("to")
        sizes = p.field("sizes", p.bracketed, ":")
        p.expect(",")
        strides = p.field("strides", p.bracketed, ":")
        p.expect(":")
        p.type_of(base)
        p.keyword("to")
        t = p.type()
        if not isinstance(t, MemRefType):
            raise p.error(f"memref.reinterpret_cast gives a memref, not {t}")
        return p.result_type(cls(base, sizes, strides, t.order, shape=getattr(t, "shape", None)), t)

    def interpret(self, interp, base, *sizes_and_strides):
        sizes, strides = [int(n) for n in sizes_and_strides[:2]], [int(n) for n in sizes_and_strides[2:]]
        span = 1 + sum((n - 1) * abs(s) for n, s in zip(base.shape, base.strides)) // base.itemsize
        reach = sum((n - 1) * s for n, s in zip(sizes, strides)) if all(sizes) else -1
        if min(strides) < 0 or (reach >= span and interp.check is None):
            raise self.error(f"sizes {sizes} and strides {strides} reach element {reach} of an array of {span}",
                             "the view stays inside the array")
        return np.lib.stride_tricks.as_strided(base, sizes, [s * base.itemsize for s in strides])


def _check_vector(op: Operation, v: Value, what: str) -> VectorType:
    if not isinstance(v.type, VectorType):
        raise op.error(f"{what} must be a vector, got {v.type}", f"{op.name} of vectors")
    return v.type


def _check_axis(op: Operation, t: VectorType, axis: int) -> None:
    if not 0 <= axis < len(t.shape):
        raise op.error(f"axis {axis} is not a dim of {t}", f"{op.name} along a dim of its vector")


def _format_one(op: Operation, p, attrs: dict) -> str:
    """`%v {attrs} : T to U`, the text of an op on one vector."""
    v = op.operands[0]
    return f" {p.name(v)}{p.attr_dict(op, attrs)} : {v.type} to {op.result.type}"


class SliceOp(Operation):
    """The block of the result's shape at the constant `offsets` of the source (`v[a:b, c:d]`)."""

    name = "xetile.slice"
    effects = ()

    def __init__(self, v: Value, offsets, shape, loc=None):
        super().__init__([v], [VectorType(tuple(shape), v.type.dtype)], loc=loc)
        self.offsets = tuple(offsets)

    def verify(self):
        full = _check_vector(self, self.operands[0], "the source").shape
        part = self.result.type.shape
        if len(self.offsets) != len(full) or len(part) != len(full):
            raise self.error(f"slice {format_list(part)} at {format_list(self.offsets)} of {self.operands[0].type}: "
                             "one offset and one size a dim", "xetile.slice keeps the rank")
        if any(o < 0 or s < 1 or o + s > n for o, s, n in zip(self.offsets, part, full)):
            raise self.error(f"slice {format_list(part)} at {format_list(self.offsets)} exceeds "
                             f"{format_list(full)}", "a slice stays inside its vector")

    def format(self, p) -> str:
        return _format_one(self, p, {"offsets": list(self.offsets)})

    @classmethod
    def parse(cls, p, name):
        (v,), attrs, t = p.operands_to("to", (1,), name)
        return p.result_type(cls(v, p.pop(attrs, "offsets"), getattr(t, "shape", ())), t)

    def interpret(self, interp, v):
        return np.ascontiguousarray(v[tuple(slice(o, o + n) for o, n in zip(self.offsets, self.result.type.shape))])


class ConcatOp(Operation):
    """`a` then `b` along `axis` (numpy's concatenate); the other dims agree."""

    name = "xetile.concat"
    effects = ()

    def __init__(self, a: Value, b: Value, axis: int, loc=None):
        shape = list(a.type.shape)
        if 0 <= axis < len(shape) and len(b.type.shape) == len(shape):
            shape[axis] += b.type.shape[axis]
        super().__init__([a, b], [VectorType(tuple(shape), a.type.dtype)], loc=loc)
        self.axis = axis

    def verify(self):
        a, b = (_check_vector(self, v, "each operand") for v in self.operands)
        _check_axis(self, a, self.axis)
        others = [n for d, n in enumerate(a.shape) if d != self.axis]
        if (len(a.shape) != len(b.shape) or a.dtype != b.dtype
                or others != [n for d, n in enumerate(b.shape) if d != self.axis]):
            raise self.error(f"{a} and {b} do not join along axis {self.axis}",
                             "xetile.concat of one element type, the same sizes off the axis")

    def format(self, p) -> str:
        a, b = self.operands
        return (f" {p.name(a)}, {p.name(b)}{p.attr_dict(self, {'axis': self.axis})} : {a.type}, {b.type} to "
                f"{self.result.type}")

    @classmethod
    def parse(cls, p, name):
        (a, b), attrs, t = p.operands_to("to", (2,), name)
        return p.result_type(cls(a, b, p.pop(attrs, "axis")), t)

    def interpret(self, interp, a, b):
        return np.concatenate([a, b], axis=self.axis)


class FlipOp(Operation):
    """The source with the order of its elements along `axis` reversed (numpy's flip)."""

    name = "xetile.flip"
    effects = ()

    def __init__(self, v: Value, axis: int, loc=None):
        super().__init__([v], [v.type], loc=loc)
        self.axis = axis

    def verify(self):
        _check_axis(self, _check_vector(self, self.operands[0], "the source"), self.axis)

    def format(self, p) -> str:
        return _format_one(self, p, {"axis": self.axis})

    @classmethod
    def parse(cls, p, name):
        (v,), attrs, t = p.operands_to("to", (1,), name)
        return p.result_type(cls(v, p.pop(attrs, "axis")), t)

    def interpret(self, interp, v):
        return np.ascontiguousarray(np.flip(v, self.axis))


class RollOp(Operation):
    """The source rotated by `shift` along `axis` (numpy's roll) within each aligned run of `span` elements (the
    whole axis unless given): result element p is source element r + (p - r - shift) mod span, r the start of p's
    run. With a span of twice the shift that is element p XOR shift, the partner the trees of user combines and a
    sort's compare-exchanges take (language/indexed.py, language/shapes.py): the runs of a short span stay within a
    subgroup's piece, so the tree's short strides move no data between subgroups. Source and result share one
    layout, so where a subgroup's piece holds whole runs it rotates them in the subgroup's registers (lane
    shuffles), else through SLM."""

    name = "xetile.roll"
    effects = ()

    def __init__(self, v: Value, shift: int, axis: int, span: int | None = None, loc=None):
        super().__init__([v], [v.type], loc=loc)
        self.shift, self.axis = shift, axis
        size = v.type.shape[axis] if isinstance(v.type, VectorType) and 0 <= axis < len(v.type.shape) else None
        self.span = size if span is None else span

    def verify(self):
        t = _check_vector(self, self.operands[0], "the source")
        _check_axis(self, t, self.axis)
        size = t.shape[self.axis]
        if self.span <= 0 or size % self.span:
            raise self.error(f"span {self.span} does not divide the axis size {size} of {t}",
                             "xetile.roll within runs that divide the axis")
        if not 0 < self.shift < self.span:
            raise self.error(f"shift {self.shift} of {t} along axis {self.axis} is not in (0, {self.span})",
                             "xetile.roll shifts by less than its span")

    def whole_axis(self) -> bool:
        return self.span == self.operands[0].type.shape[self.axis]

    def format(self, p) -> str:
        span = {} if self.whole_axis() else {"span": self.span}
        return _format_one(self, p, {"shift": self.shift, "axis": self.axis, **span})

    @classmethod
    def parse(cls, p, name):
        (v,), attrs, t = p.operands_to("to", (1,), name)
        return p.result_type(cls(v, p.pop(attrs, "shift"), p.pop(attrs, "axis"), attrs.pop("span", None)), t)

    def source_position(self, p: int) -> int:
        """The source position whose element lands at position `p` along the axis."""
        start = p - p % self.span
        return start + (p - start - self.shift) % self.span

    def interpret(self, interp, v):
        runs = v.shape[:self.axis] + (v.shape[self.axis] // self.span, self.span) + v.shape[self.axis + 1:]
        return np.roll(v.reshape(runs), self.shift, self.axis + 1).reshape(v.shape)


VALUE_SHAPE_OPS = (SliceOp, ConcatOp, FlipOp, RollOp)
