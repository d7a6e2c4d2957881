"""The element-wise kinds, one row each (one table, not one per consumer). An arith/math op's row holds its operand
kinds, its numpy rule and its LLVM rule; a reduction kind's row its RFC name, numpy reduction and the op folding
two partial results (whose row gives the rest); an atomic kind's row its atomic_rmw name, the op combining old
and new, and the LLVM atomicrmw operation for integers. The interpreter (core_ops, xetile_ops, simt_ops), the
passes and to-llvm all read these rows. An LLVM rule is data, `(rule, argument)`, that codegen/llvm/core.py interprets
with its `rule_<rule>` method, so ir/ does not import llvmlite.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from . import numeric
from .types import DType

FLOAT, INT, INT_OR_BOOL = "f", "iu", "iub"


@dataclass(frozen=True)
class Elementwise:
    kinds: str  # the dtype kinds its operands may have
    numpy: Callable
    llvm: tuple[str, str]  # (to_llvm rule method, its argument); rules compute in f32 for every float
    fast: tuple[str, str] | None = None  # the approximate LLVM rule an op flagged fast math takes (None: none)
    # upstream MLIR's fast-math flag that allows that rule: approximate functions, or a reciprocal for a division
    fast_flag: str = "afn"


def _rsqrt(x):
    return 1.0 / np.sqrt(x)


def _sigmoid(x):
    """Triton's sigmoid, 1 / (1 + exp(-x)), one rounding per step as the LLVM rule computes it."""
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


_erf_f64 = np.vectorize(math.erf, otypes=[np.float64])


def _erf(x):
    return _erf_f64(x).astype(x.dtype)


def _fma(a, b, c):
    """a * b + c rounded once: the f32 product is exact in f64 (48 significant bits)."""
    wide = np.float64
    return (a.astype(wide) * b.astype(wide) + c.astype(wide)).astype(a.dtype)


BINARY = {
    "arith.addf": Elementwise(FLOAT, np.add, ("instruction", "fadd")),
    "arith.addi": Elementwise(INT, np.add, ("instruction", "add")),
    "arith.subf": Elementwise(FLOAT, np.subtract, ("instruction", "fsub")),
    "arith.subi": Elementwise(INT, np.subtract, ("instruction", "sub")),
    "arith.mulf": Elementwise(FLOAT, np.multiply, ("instruction", "fmul")),
    "arith.muli": Elementwise(INT, np.multiply, ("instruction", "mul")),
    "arith.divf": Elementwise(FLOAT, np.divide, ("instruction", "fdiv"), ("opencl", "native_divide"), "arcp"),
    "arith.divsi": Elementwise("i", numeric.div_trunc, ("int_division", "sdiv")),
    "arith.divui": Elementwise("u", np.floor_divide, ("int_division", "udiv")),
    "arith.remf": Elementwise(FLOAT, np.fmod, ("instruction", "frem")),
    "arith.remsi": Elementwise("i", np.fmod, ("int_division", "srem")),
    "arith.remui": Elementwise("u", np.remainder, ("int_division", "urem")),
    "arith.andi": Elementwise(INT_OR_BOOL, np.bitwise_and, ("instruction", "and_")),
    "arith.ori": Elementwise(INT_OR_BOOL, np.bitwise_or, ("instruction", "or_")),
    "arith.xori": Elementwise(INT_OR_BOOL, np.bitwise_xor, ("instruction", "xor")),
    "arith.shli": Elementwise(INT, np.left_shift, ("shift", "shl")),
    "arith.shrsi": Elementwise("i", np.right_shift, ("shift", "ashr")),
    "arith.shrui": Elementwise("u", np.right_shift, ("shift", "lshr")),
    "arith.maximumf": Elementwise(FLOAT, np.maximum, ("float_extreme", ">")),
    "arith.minimumf": Elementwise(FLOAT, np.minimum, ("float_extreme", "<")),
    "arith.maxnumf": Elementwise(FLOAT, np.fmax, ("opencl", "fmax")),  # a NaN loses, in both rules
    "arith.minnumf": Elementwise(FLOAT, np.fmin, ("opencl", "fmin")),
    "arith.maxsi": Elementwise("i", np.maximum, ("int_extreme", ">")),
    "arith.minsi": Elementwise("i", np.minimum, ("int_extreme", "<")),
    "arith.maxui": Elementwise("u", np.maximum, ("int_extreme", ">")),
    "arith.minui": Elementwise("u", np.minimum, ("int_extreme", "<")),
    "math.powf": Elementwise(FLOAT, np.power, ("opencl", "pow")),
}

UNARY = {
    "arith.negf": Elementwise(FLOAT, np.negative, ("negate", "")),
    "math.exp": Elementwise(FLOAT, np.exp, ("opencl", "exp"), ("opencl", "native_exp")),
    "math.exp2": Elementwise(FLOAT, np.exp2, ("opencl", "exp2"), ("opencl", "native_exp2")),
    "math.log": Elementwise(FLOAT, np.log, ("opencl", "log"), ("opencl", "native_log")),
    "math.sqrt": Elementwise(FLOAT, np.sqrt, ("opencl", "sqrt"), ("opencl", "native_sqrt")),
    "math.rsqrt": Elementwise(FLOAT, _rsqrt, ("opencl", "rsqrt"), ("opencl", "native_rsqrt")),
    "math.absf": Elementwise(FLOAT, np.abs, ("opencl", "fabs")),
    "math.absi": Elementwise("i", np.abs, ("opencl", "s_abs")),
    "math.tanh": Elementwise(FLOAT, np.tanh, ("opencl", "tanh")),
    "math.floor": Elementwise(FLOAT, np.floor, ("opencl", "floor")),
    "math.ceil": Elementwise(FLOAT, np.ceil, ("opencl", "ceil")),
    "math.log2": Elementwise(FLOAT, np.log2, ("opencl", "log2"), ("opencl", "native_log2")),
    "math.sin": Elementwise(FLOAT, np.sin, ("opencl", "sin")),
    "math.cos": Elementwise(FLOAT, np.cos, ("opencl", "cos")),
    "math.erf": Elementwise(FLOAT, _erf, ("opencl", "erf")),
    "math.sigmoid": Elementwise(FLOAT, _sigmoid, ("sigmoid", ""), ("sigmoid", "native_")),
}

TERNARY = {
    "math.fma": Elementwise(FLOAT, _fma, ("opencl", "fma")),
}


@dataclass(frozen=True)
class Cast:
    source_kinds: str
    dest_kinds: str
    width: str | None  # "wider", "narrower" or "same": the verifier checks it
    llvm: str | None  # the LLVM cast between the compute types (None: they already agree, rounding does the rest)

    @property
    def reinterprets(self) -> bool:
        """A cast that keeps the width keeps the bits (numpy's .view, LLVM's bitcast of the storage types)."""
        return self.width == "same"


CASTS = {
    "arith.extf": Cast("f", "f", "wider", None),
    "arith.truncf": Cast("f", "f", "narrower", None),
    "arith.sitofp": Cast("i", "f", None, "sitofp"),
    "arith.uitofp": Cast("ub", "f", None, "uitofp"),
    "arith.fptosi": Cast("f", "i", None, "fptosi"),
    "arith.fptoui": Cast("f", "u", None, "fptoui"),
    "arith.extsi": Cast("i", "iu", "wider", "sext"),
    "arith.extui": Cast("ub", "iu", "wider", "zext"),
    "arith.trunci": Cast("iu", "iu", "narrower", "trunc"),
    "arith.bitcast": Cast("iuf", "iuf", "same", "bitcast"),
}


@dataclass(frozen=True)
class Reduction:
    rfc: str  # the RFC's name of the kind for this element type
    numpy: Callable  # reduces along the given axes
    combine: str  # the element-wise op folding two partial results (a row of BINARY)


REDUCE_KINDS = {  # user kind -> {dtype kind: Reduction}
    "add": {"f": Reduction("add", partial(np.add.reduce, initial=-0.0), "arith.addf"),  # numpy's 0 made -0.0s +0.0
            **{k: Reduction("add", np.add.reduce, "arith.addi") for k in "iu"}},
    "mul": {"f": Reduction("mul", np.multiply.reduce, "arith.mulf"),
            **{k: Reduction("mul", np.multiply.reduce, "arith.muli") for k in "iu"}},
    "max": {"f": Reduction("maxnumf", np.fmax.reduce, "arith.maxnumf"),  # a NaN loses against any number
            "i": Reduction("maxsi", np.maximum.reduce, "arith.maxsi"),
            "u": Reduction("maxui", np.maximum.reduce, "arith.maxui"),
            "b": Reduction("maxui", np.maximum.reduce, "arith.ori")},
    "min": {"f": Reduction("minnumf", np.fmin.reduce, "arith.minnumf"),
            "i": Reduction("minsi", np.minimum.reduce, "arith.minsi"),
            "u": Reduction("minui", np.minimum.reduce, "arith.minui"),
            "b": Reduction("minui", np.minimum.reduce, "arith.andi")},
    "maximum": {"f": Reduction("maximumf", np.maximum.reduce, "arith.maximumf")},  # a NaN wins
    "minimum": {"f": Reduction("minimumf", np.minimum.reduce, "arith.minimumf")},
    "and": {k: Reduction("and", np.bitwise_and.reduce, "arith.andi") for k in "iub"},
    "or": {k: Reduction("or", np.bitwise_or.reduce, "arith.ori") for k in "iub"},
    "xor": {k: Reduction("xor", np.bitwise_xor.reduce, "arith.xori") for k in "iub"},
}


def reduce_identity(kind: str, dtype: DType):
    """The value that leaves a `kind` reduction over `dtype` unchanged bit for bit (the padding of a padded block).
    For float max and min that is NaN, which loses there: with -inf or +inf a row of NaNs reduced to the infinity,
    not NaN. For float add it is -0.0: +0.0 turned a sum of -0.0s into +0.0."""
    if kind == "add" and dtype.is_float:
        return -0.0
    if kind in ("add", "or", "xor"):
        return 0
    if kind == "mul":
        return 1
    if dtype.is_bool:
        return kind != "max"
    if dtype.is_float:
        return {"max": np.nan, "maximum": -np.inf, "min": np.nan, "minimum": np.inf}[kind]
    info = np.iinfo(dtype.np_dtype)
    return {"max": int(info.min), "min": int(info.max), "and": -1 if dtype.kind == "i" else int(info.max)}[kind]


def combine_identity(name: str, dtype: DType):
    """reduce_identity of the reduction whose partial results the BINARY op `name` folds over `dtype`; None where
    `name` folds no reduction (sub, div, shifts, ...)."""
    for kind, reductions in REDUCE_KINDS.items():
        reduction = reductions.get(dtype.kind)
        if reduction is not None and reduction.combine == name:
            return reduce_identity(kind, dtype)
    return None


@dataclass(frozen=True)
class Atomic:
    rmw: str  # the arith.atomic_rmw kind (xori, which arith lacks, is ours)
    combine: str | None  # the element-wise op giving the new contents from old and value; None: the value
    hardware: str | None  # LLVM's atomicrmw operation on the bits, where SPIR-V has one; None: compare-exchange

    def numpy(self, old, value):
        return value if self.combine is None else BINARY[self.combine].numpy(old, value)


def _int_atomics(rmw: str, combine: str, hardware: str | None, kinds: str = INT) -> dict:
    return {k: Atomic(rmw, combine, hardware) for k in kinds}


ATOMIC_KINDS = {  # user kind -> {dtype kind: Atomic}
    "add": {"f": Atomic("addf", "arith.addf", None), **_int_atomics("addi", "arith.addi", "add")},
    "mul": {"f": Atomic("mulf", "arith.mulf", None), **_int_atomics("muli", "arith.muli", None)},
    "max": {"f": Atomic("maximumf", "arith.maximumf", None), "i": Atomic("maxs", "arith.maxsi", "max"),
            "u": Atomic("maxu", "arith.maxui", "umax")},
    "min": {"f": Atomic("minimumf", "arith.minimumf", None), "i": Atomic("mins", "arith.minsi", "min"),
            "u": Atomic("minu", "arith.minui", "umin")},
    "and": _int_atomics("andi", "arith.andi", "and"),
    "or": _int_atomics("ori", "arith.ori", "or"),
    "xor": _int_atomics("xori", "arith.xori", "xor"),
    "xchg": {k: Atomic("assign", None, "xchg") for k in "fiu"},
    # compare-and-swap: the value where the old contents equal the compared value bit for bit (its own rule:
    # TileRef.atomic, Atomics.atomic), on 32- and 64-bit elements (CAS_BITS)
    "cas": {k: Atomic("cas", None, None) for k in "fiu"},
}
CAS_BITS = (32, 64)
ATOMIC_DTYPES = ("f16", "bf16", "f32", "i32", "ui32", "i64", "ui64")


def kind_named(table: dict, field: str, printed: str, dtype_kind: str) -> str | None:
    """The user kind whose row for `dtype_kind` prints as `printed` (REDUCE_KINDS by `rfc`, ATOMIC_KINDS by
    `rmw`): how the IR parser reads a kind back."""
    return next((kind for kind, rows in table.items()
                 if dtype_kind in rows and getattr(rows[dtype_kind], field) == printed), None)
