"""vector.shape_cast at the XeTile level (XeGPU RFC: vector ops on XeTile vectors; issue 13): the same elements, in
row-major order, in another shape of rank 1 or 2. `v.reshape(shape)` and `xetile.expand_dims(v, axis)` trace to it.

Devices run the shape casts that add or remove unit dims (backend/xetile_rank2.py); the numpy interpreter runs
every one.
"""
from __future__ import annotations

import math

from .attrs import format_list
from .core import Operation, Value
from .types import VectorType


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

    def interpret(self, interp, v):
        return v.reshape(self.result.type.shape)
