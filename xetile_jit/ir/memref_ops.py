"""memref.load: one element of an array argument or SLM buffer as a scalar, the same for every work-item (MLIR's
`memref.load %a[%i, %j]`, written `a[i, j]` in a kernel, one index per array dim). It reads sizes and offsets a kernel takes from memory:
a grouped GEMM's table of problems, a batch's lengths. An index outside the array reads 0, as a tile's padding does.
Shared by every IR level: a uniform read needs no distribution."""
from __future__ import annotations

import numpy as np

from .core import Operation, Value
from .effects import reads
from .types import IndexType, MemRefType, ScalarType


class MemRefLoadOp(Operation):
    name = "memref.load"
    effects = (reads(0),)

    def __init__(self, array: Value, indices: list[Value], loc=None):
        super().__init__([array, *indices], [ScalarType(array.type.dtype)], loc=loc)

    def verify(self):
        array, *indices = self.operands
        if not isinstance(array.type, MemRefType):
            raise self.error(f"operand 0 must be an array, got {array.type}", "memref.load reads an array")
        rank = array.type.rank
        if len(indices) != rank or not all(isinstance(i.type, IndexType) for i in indices):
            raise self.error(f"takes {rank} index operands (one per array dim), got {len(indices)}",
                             "memref.load has one index per array dim")

    def format(self, p) -> str:
        array, *indices = self.operands
        return f" {p.name(array)}[{', '.join(p.name(i) for i in indices)}] : {array.type}"

    @classmethod
    def parse(cls, p, name):
        array = p.value()
        indices = p.bracketed()
        p.expect(":")
        p.type_of(array)
        return cls(array, indices)

    def interpret(self, interp, array: np.ndarray, *indices):
        inside = all(0 <= i < n for i, n in zip(indices, array.shape))
        return array[tuple(indices)] if inside else array.dtype.type(0)
