"""Numpy arithmetic in the IR's dtypes: f16/bf16 compute in f32 and round once per op, as Xe hardware does."""
from __future__ import annotations

import numpy as np

from .types import DType, index_dtype


def wrap_i64(x) -> int:
    """An integer as a 64-bit register holds it (two's complement): index values, so tile offsets, are i64 on
    every device, and a sum past 2**63 - 1 wraps there; the interpreter wraps it the same way."""
    return (int(x) + 2**63) % 2**64 - 2**63


def apply(dtype: DType, fn, *xs):
    """fn over xs, with the result in `dtype`; half-precision and FP8 inputs are widened to f32 first, index operands
    (Python ints) computed in wrapping int64."""
    if dtype.is_float and dtype.bits < 32:
        xs = [np.asarray(x).astype(np.float32) for x in xs]
    if dtype == index_dtype:
        xs = [np.int64(wrap_i64(x)) if type(x) is int else x for x in xs]
    with np.errstate(all="ignore"):
        return np.asarray(fn(*xs)).astype(dtype.np_dtype)


def convert(x, dtype: DType):
    """Value conversion (arith casts): floats to ints truncate toward zero; to bf16 and FP8 rounds to nearest even,
    and a finite value past an FP8 format's largest rounds to its overflow code as ml_dtypes does (e5m2: infinity;
    e4m3fn, which has none: NaN), not to the largest finite value."""
    x = np.asarray(x)
    if x.dtype == dtype.np_dtype:
        return x
    if dtype.is_float and dtype.bits < 32 and x.dtype.kind not in "f":
        x = x.astype(np.float32)
    if dtype.is_int and x.dtype.kind == "f":
        x = np.asarray(x, dtype=np.float32) if x.dtype.itemsize < 4 else x
        x = np.trunc(x)
    with np.errstate(all="ignore"):
        return x.astype(dtype.np_dtype)


def bitcast(x, dtype: DType):
    """The bits of `x` read as `dtype`, of the same width (arith.bitcast)."""
    return np.asarray(x).view(dtype.np_dtype)


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


TF32_MASK = 0xFFFFE000  # sign, 8 exponent bits, the 10 high mantissa bits of an f32 word


def tf32(x: np.ndarray) -> np.ndarray:
    """f32 values as tf32 DPAS reads them: the low 13 mantissa bits dropped (truncation toward zero, docs/guide.md
    "Precision"); the result is still f32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) & np.uint32(TF32_MASK)
    return bits.view(np.float32)


def mma(a: np.ndarray, b: np.ndarray, c, acc: DType, precision: str = "ieee") -> np.ndarray:
    """a @ b (+ c) in the accumulator's type: floats multiply and add in f32 (tf32 `precision`: operands truncated to
    tf32 first, so every product is exact), integers exactly, then wrapped to i32."""
    wide = np.float32 if acc.is_float else np.int64
    a, b = a.astype(wide), b.astype(wide)
    if precision == "tf32":
        a, b = tf32(a), tf32(b)
    out = a @ b
    if c is not None:
        out = out + c
    return out.astype(acc.np_dtype)
