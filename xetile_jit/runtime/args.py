"""Kernel arguments: what each one is (array, scalar, constexpr), its IR type, and the checks of a launch.

Arrays are 2-D with unit stride along one dim: row-major (stride 1 along dim 1) or column-major views such
as `bt.T` (stride 1 along dim 0), which `order=[0, 1]` tiles read (RFC Appendix 1). A row pitch larger
than the width is fine. Python ints are i32 (i64 when they do not fit), floats f32, bools i1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import LaunchError
from ..ir.types import (ALL_DTYPES, COL_MAJOR, ROW_MAJOR, DType, MemRefType, ScalarType, bool_, dtype_of_numpy,
                        float32, int32, int64)

SUPPORTED = ", ".join(d.name for d in ALL_DTYPES)


@dataclass(frozen=True)
class ArraySpec:
    dtype: DType
    order: tuple[int, int]

    def ir_type(self):
        return MemRefType(self.dtype, self.order)


@dataclass(frozen=True)
class ScalarSpec:
    dtype: DType

    def ir_type(self):
        return ScalarType(self.dtype)


def array_order(name: str, a: np.ndarray) -> tuple[int, int]:
    item = a.itemsize
    (rows, cols), (s0, s1) = a.shape, a.strides
    if (s1 == item or cols <= 1) and s0 >= cols * item:
        return ROW_MAJOR
    if (s0 == item or rows <= 1) and s1 >= rows * item:
        return COL_MAJOR
    raise LaunchError(f"argument '{name}': a 2-D array needs unit stride along one dimension (row- or "
                      f"column-major, no overlap); got strides {a.strides} for shape {a.shape} "
                      f"(itemsize {item}); pass np.ascontiguousarray(...)")


def classify_array(name: str, a: np.ndarray) -> ArraySpec:
    if a.ndim != 2:
        raise LaunchError(f"argument '{name}': expected a 2-D array, got shape {a.shape}")
    dtype = dtype_of_numpy(a.dtype)
    if dtype is None:
        raise LaunchError(f"argument '{name}': dtype {a.dtype} is not supported (supported: {SUPPORTED})")
    return ArraySpec(dtype, array_order(name, a))


def scalar_dtype(name: str, x) -> DType:
    if isinstance(x, np.generic):
        dtype = dtype_of_numpy(x.dtype)
        if dtype is not None:
            return dtype
        if x.dtype.kind == "f":
            return float32
        raise LaunchError(f"argument '{name}': scalar dtype {x.dtype} is not supported (supported: {SUPPORTED})")
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        if -2**31 <= x < 2**31:
            return int32
        if -2**63 <= x < 2**63:
            return int64
        raise LaunchError(f"argument '{name}': integer {x} does not fit in 64 bits")
    return float32


def classify(name: str, value):
    if isinstance(value, np.ndarray):
        return classify_array(name, value)
    if isinstance(value, (bool, int, float, np.generic)):
        return ScalarSpec(scalar_dtype(name, value))
    raise LaunchError(f"argument '{name}': expected a 2-D numpy array or a number, got {type(value).__name__}")


def runtime_value(spec, value):
    """What the interpreter receives: the array itself (written in place) or a typed numpy scalar."""
    if isinstance(spec, ArraySpec):
        return value
    return spec.dtype.np_dtype.type(value)
