"""Numpy arithmetic in the IR's dtypes: f16/bf16 compute in f32 and round once per op, as Xe hardware does."""
from __future__ import annotations

import numpy as np

from .types import DType


def apply(dtype: DType, fn, *xs):
    """fn over xs, with the result in `dtype`; half-precision inputs are widened to f32 first."""
    if dtype.is_float and dtype.bits == 16:
        xs = [np.asarray(x).astype(np.float32) for x in xs]
    with np.errstate(all="ignore"):
        return np.asarray(fn(*xs)).astype(dtype.np_dtype)


def convert(x, dtype: DType):
    """Value conversion (arith casts): floats to ints truncate toward zero; to bf16 rounds to nearest even."""
    x = np.asarray(x)
    if x.dtype == dtype.np_dtype:
        return x
    if dtype.is_float and dtype.bits == 16 and x.dtype.kind not in "f":
        x = x.astype(np.float32)
    if dtype.is_int and x.dtype.kind == "f":
        x = np.asarray(x, dtype=np.float32) if x.dtype.itemsize < 4 else x
        x = np.trunc(x)
    with np.errstate(all="ignore"):
        return x.astype(dtype.np_dtype)


def representable(value, dtype: DType) -> bool:
    """Whether a Python number converts to `dtype` without loss."""
    if dtype.is_float:
        return True
    if isinstance(value, float) and not value.is_integer():
        return False
    if dtype.is_bool:
        return value in (0, 1)
    info = np.iinfo(dtype.np_dtype)
    return info.min <= int(value) <= info.max


def div_trunc(a, b):
    """Signed integer division rounding toward zero (arith.divsi, C semantics)."""
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, b)
        r = np.remainder(a, b)
    fix = (r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
    return q + fix.astype(q.dtype)
