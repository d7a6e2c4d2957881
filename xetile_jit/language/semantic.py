"""Typed op construction for the tracer and the DSL: promotion, casts, scalar splats and implicit broadcast.

Python numbers in a kernel are compile-time values; they take the type of the IR value they meet
(Triton's "weak" literals). Mixed types promote: float beats int, wider beats narrower, f16 with bf16
gives f32, equal-width signed with unsigned gives unsigned.
"""
from __future__ import annotations

import contextlib
import functools
import threading

from ..errors import CompilationError
from ..ir import core_ops as C
from ..ir import xetile_ops as X
from ..ir.core import Builder, Value
from ..ir.shape_ops import ShapeCastOp
from ..ir.elementwise import FLOAT, TERNARY, UNARY
from ..ir.verifier import verify_op
from ..ir.types import DType, IndexType, ScalarType, VectorType, bool_, float32, int32, int64

PY_SCALARS = (bool, int, float)

_active = threading.local()


def current() -> "Semantic":
    sem = getattr(_active, "sem", None)
    if sem is None:
        raise CompilationError("xetile ops can only be called inside an @xetile.kernel function")
    return sem


@contextlib.contextmanager
def activate(sem: "Semantic"):
    saved = getattr(_active, "sem", None)
    _active.sem = sem
    try:
        yield sem
    finally:
        _active.sem = saved


def builtin(fn):
    """Marks a function the tracer may call from a kernel."""
    fn.__xetile_builtin__ = True
    return fn


def describe(x) -> str:
    """An argument as an error message names it: its IR type, or its Python type and value."""
    return str(x.type) if isinstance(x, Value) else f"{type(x).__name__} {x!r}"


def is_py_scalar(x) -> bool:
    return isinstance(x, PY_SCALARS)


def default_dtype(x) -> DType:
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return int32 if -2**31 <= x < 2**31 else int64
    return float32


def promote(a: DType, b: DType) -> DType:
    if a == b:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits > b.bits else b if b.bits > a.bits else float32
        return a if a.is_float else b
    if a.is_bool or b.is_bool:
        return b if a.is_bool else a
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if a.kind == "u" else b


def literal_dtype(x, other: DType) -> DType:
    """The dtype a Python literal takes next to a value of dtype `other`."""
    if isinstance(x, float) and not other.is_float:
        return float32
    if isinstance(x, int) and not isinstance(x, bool) and other.is_int:
        lo, hi = (0, 2**other.bits) if other.kind == "u" else (-2**(other.bits - 1), 2**(other.bits - 1))
        return other if lo <= x < hi else promote(other, default_dtype(x))
    if isinstance(x, int) and not isinstance(x, bool) and other.is_bool:
        return default_dtype(x)
    return other


def common_dtype(xs) -> DType:
    """The promoted dtype of IR values and the Python literals beside them."""
    values = [x for x in xs if isinstance(x, Value)]
    if not values:
        return functools.reduce(promote, map(default_dtype, xs))
    dtype = values[0].type.dtype
    for v in values[1:]:
        dtype = promote(dtype, v.type.dtype)
    for x in xs:
        if not isinstance(x, Value):
            dtype = promote(dtype, literal_dtype(x, dtype))
    return dtype


ARITH = {  # python operator -> (float op, signed op, unsigned op)
    "+": ("arith.addf", "arith.addi", "arith.addi"),
    "-": ("arith.subf", "arith.subi", "arith.subi"),
    "*": ("arith.mulf", "arith.muli", "arith.muli"),
    "/": ("arith.divf", None, None),
    "//": (None, "arith.divsi", "arith.divui"),
    "%": ("arith.remf", "arith.remsi", "arith.remui"),
    "**": ("math.powf", None, None),
    "&": (None, "arith.andi", "arith.andi"),
    "|": (None, "arith.ori", "arith.ori"),
    "^": (None, "arith.xori", "arith.xori"),
    "<<": (None, "arith.shli", "arith.shli"),
    ">>": (None, "arith.shrsi", "arith.shrui"),
    "max": ("arith.maximumf", "arith.maxsi", "arith.maxui"),   # a NaN wins
    "min": ("arith.minimumf", "arith.minsi", "arith.minui"),
    "maxnum": ("arith.maxnumf", "arith.maxsi", "arith.maxui"),   # a NaN loses (maximum's PropagateNan.NONE)
    "minnum": ("arith.minnumf", "arith.minsi", "arith.minui"),
}
EXTREMES = ("max", "min", "maxnum", "minnum")
CMP = {  # python operator -> (cmpf predicate, signed cmpi, unsigned cmpi)
    "<": ("olt", "slt", "ult"), "<=": ("ole", "sle", "ule"), ">": ("ogt", "sgt", "ugt"),
    ">=": ("oge", "sge", "uge"), "==": ("oeq", "eq", "eq"), "!=": ("une", "ne", "ne"),
}
FLOAT_RESULT_OPS = ("/", "**")
INT_ONLY_OPS = ("&", "|", "^", "<<", ">>")


def _pick(row, dtype: DType):
    return row[0] if dtype.is_float else row[2] if dtype.kind in "ub" else row[1]


class Semantic:
    def __init__(self, builder: Builder, mma_layout=None):
        self.builder = builder
        self.mma_layout = mma_layout
        self.constants: dict = {}

    def create(self, op_class, *args, **kwargs):
        op = self.builder.create(op_class, *args, **kwargs)
        if not op.regions:
            verify_op(op)
        return op

    def error(self, message: str) -> CompilationError:
        return CompilationError(message, self.builder.loc)

    # ---- values and types -------------------------------------------------------------------
    def constant(self, value, dtype: DType, shape=()) -> Value:
        t = VectorType(tuple(shape), dtype) if shape else ScalarType(dtype)
        if dtype.is_bool:
            value = bool(value)
        elif dtype.is_int:
            value = int(value)
        else:
            value = float(value)
        return self.cached_constant(value, t)

    def cached_constant(self, value, t) -> Value:
        """One constant op per value and type in each block."""
        key = (self.builder.block, repr(value), t)
        if key not in self.constants:
            self.constants[key] = self.create(C.ConstantOp, value, t).result
        return self.constants[key]

    def to_value(self, x, dtype: DType | None = None, shape=()) -> Value:
        """An IR value of `dtype` from an IR value (cast) or a Python number (a constant of `shape`)."""
        if isinstance(x, Value):
            if not isinstance(x.type, (ScalarType, VectorType)):
                raise self.error(f"expected a number or a vector, got {x.type} (arrays are the bases of init_tile and "
                                 "of `array + integer offsets`, tiles are read with load_tile)")
            return x if dtype is None else self.cast(x, dtype)
        if not is_py_scalar(x):
            raise self.error(f"expected a number or an xetile value, got {type(x).__name__} {x!r}" + (
                " (an array argument launched as None is None in the kernel: guard its use with `if x is not None:`)"
                if x is None else ""))
        return self.constant(x, dtype or default_dtype(x), shape)

    def index(self, x) -> Value:
        """An `index` value for tile offsets: Python ints become constants, integer scalars are cast."""
        if isinstance(x, Value):
            if isinstance(x.type, IndexType):
                return x
            if not isinstance(x.type, ScalarType) or not x.type.dtype.is_int:
                raise self.error(f"tile offsets must be integer scalars, got {x.type}")
            return self.create(C.IndexCastOp, x).result
        if not isinstance(x, int) or isinstance(x, bool):
            raise self.error(f"tile offsets must be integers, got {x!r}")
        return self.cached_constant(x, IndexType())

    def load_element(self, array: Value, indices) -> Value:
        """`array[i, j]`: one element as a scalar (memref.load), 0 outside the array."""
        indices = indices if isinstance(indices, tuple) else (indices,)
        rank = array.type.rank
        if len(indices) != rank:
            raise self.error(f"an element of a {rank}-D array takes {rank} indices, one per dim, got {len(indices)} "
                             "[memref.load has one index per array dim]")
        return self.create(C.MemRefLoadOp, array, [self.index(i) for i in indices]).result

    def cast(self, v: Value, dtype: DType) -> Value:
        src = v.type.dtype
        if src == dtype:
            return v
        to = C.with_dtype(v.type, dtype)
        if dtype.is_bool:
            return self.compare("!=", v, 0)
        if src.is_float and dtype.is_float:
            if src.bits == dtype.bits:  # f16 <-> bf16 goes through f32
                return self.cast(self.cast(v, float32), dtype)
            return self.create(C.CastOp, "arith.extf" if dtype.bits > src.bits else "arith.truncf", v, to).result
        if dtype.is_float:
            return self.create(C.CastOp, "arith.sitofp" if src.kind == "i" else "arith.uitofp", v, to).result
        if src.is_float:
            return self.create(C.CastOp, "arith.fptosi" if dtype.kind == "i" else "arith.fptoui", v, to).result
        if dtype.bits == src.bits:
            return self.create(C.CastOp, "arith.bitcast", v, to).result
        if dtype.bits < src.bits:
            return self.create(C.CastOp, "arith.trunci", v, to).result
        return self.create(C.CastOp, "arith.extsi" if src.kind == "i" else "arith.extui", v, to).result

    def bitcast(self, x, dtype: DType) -> Value:
        """`x`'s bits read as `dtype` (arith.bitcast): numbers and floats of one width, bools excluded."""
        v = self.to_value(x)
        src = v.type.dtype
        if src.is_bool or dtype.is_bool:
            raise self.error(f"bitcast: {v.type} to {dtype}: a bool has no bit pattern to reinterpret; compare "
                             "(x != 0) or cast (x.to(...)) instead [arith.bitcast operand types]")
        if src.bits != dtype.bits:
            raise self.error(f"bitcast: {v.type} ({src.bits} bits) to {dtype} ({dtype.bits} bits): a bit cast keeps "
                             "the width; convert the value with x.to(dtype) instead [arith.bitcast keeps the width]")
        return v if src == dtype else self.create(C.CastOp, "arith.bitcast", v, C.with_dtype(v.type, dtype)).result

    def splat(self, v: Value, shape) -> Value:
        return self.create(C.SplatOp, v, shape).result

    def broadcast_to(self, v: Value, shape) -> Value:
        """Scalars splat; a vector of fewer dims gains leading unit dims (vector.shape_cast), then its size-1 dims
        broadcast with tile_broadcast (RFC tile_broadcast): numpy's rule, as `common_shape` checks it."""
        if isinstance(v.type, ScalarType):
            return self.splat(v, shape)
        shape = tuple(shape)
        if len(v.type.shape) < len(shape):
            v = self.create(ShapeCastOp, v, (1,) * (len(shape) - len(v.type.shape)) + v.type.shape).result
        if v.type.shape == shape:
            return v
        dims = [i for i, (s, d) in enumerate(zip(v.type.shape, shape)) if s != d]
        return self.create(X.TileBroadcastOp, v, dims, shape).result

    def common_shape(self, *values: Value):
        """The shape `values` broadcast to, by numpy's rule: shapes align at their last dims, a missing leading dim
        counts as 1, and each dim is equal or 1 (so a 1-D vector of N meets a 2-D one of [M, N] as a row)."""
        shapes = [v.type.shape for v in values if isinstance(v.type, VectorType)]
        if not shapes:
            return ()
        rank = max(map(len, shapes))
        out = []
        for dims in zip(*((1,) * (rank - len(s)) + s for s in shapes)):
            sizes = set(dims) - {1}
            if len(sizes) > 1:
                raise self.error(f"vector shapes {' and '.join(map(str, shapes))} are not compatible: "
                                 "dims must be equal or 1, aligned at the last dim (numpy broadcasting)")
            out.append(sizes.pop() if sizes else 1)
        return tuple(out)

    def unify(self, *xs, dtype: DType | None = None) -> list[Value]:
        """Values of one dtype and one shape from a mix of IR values and Python literals."""
        dtype = dtype or common_dtype(xs)
        shape = self.common_shape(*(x for x in xs if isinstance(x, Value)))
        converted = [self.to_value(x, dtype, shape) for x in xs]
        return [self.broadcast_to(v, shape) if shape else v for v in converted]

    # ---- element-wise -----------------------------------------------------------------------
    def binary(self, op: str, a, b) -> Value:
        dtype = common_dtype((a, b))
        if op in FLOAT_RESULT_OPS and not dtype.is_float:
            dtype = float32
        lhs, rhs = self.unify(a, b, dtype=dtype)
        t = lhs.type.dtype
        if op in INT_ONLY_OPS and t.is_float:
            raise self.error(f"operator {op} needs integer or bool operands, got {lhs.type}")
        if op in ("+", "-", "*", "//", "%", *EXTREMES) and t.is_bool:
            lhs, rhs = self.cast(lhs, int32), self.cast(rhs, int32)
            t = int32
        if op == "//" and t.is_float:
            return self.truncated_quotient(lhs, rhs)
        return self.create(C.BinaryOp, _pick(ARITH[op], t), lhs, rhs).result

    def truncated_quotient(self, a: Value, b: Value) -> Value:
        """Float `a // b` as C's integer division and `%` (arith.remf, fmod) go together, so that a == (a // b) * b
        + a % b: (a - fmod(a, b)) / b, within a rounding of a whole number, rounded to it (as CPython makes its
        floor division from fmod). a / b truncated differs: 1.0 // 0.1 in f32 would be 10, where fmod leaves
        0.0999999."""
        exact = self.binary("/", self.binary("-", a, self.binary("%", a, b)), b)
        whole = self.unary("math.floor", exact)
        return self.where(self.compare(">", self.binary("-", exact, whole), 0.5), self.binary("+", whole, 1), whole)

    def compare(self, op: str, a, b) -> Value:
        lhs, rhs = self.unify(a, b)
        t = lhs.type.dtype
        name = "arith.cmpf" if t.is_float else "arith.cmpi"
        return self.create(C.CmpOp, name, _pick(CMP[op], t), lhs, rhs).result

    def unary(self, name: str, x) -> Value:
        v = self.to_value(x)
        if UNARY[name].kinds == FLOAT and not v.type.dtype.is_float:
            v = self.cast(v, float32)
        return self.create(C.UnaryOp, name, v).result

    def ternary(self, name: str, a, b, c) -> Value:
        """A TERNARY row on `a, b, c` unified to one type and shape (float-only rows take integers as f32)."""
        dtype = common_dtype((a, b, c))
        if TERNARY[name].kinds == FLOAT and not dtype.is_float:
            dtype = float32
        return self.create(C.TernaryOp, name, *self.unify(a, b, c, dtype=dtype)).result

    def negate(self, x) -> Value:
        v = self.to_value(x)
        if v.type.dtype.is_float:
            return self.create(C.UnaryOp, "arith.negf", v).result
        return self.binary("-", 0, v)

    def invert(self, x) -> Value:
        v = self.to_value(x)
        if v.type.dtype.is_float:
            raise self.error(f"operator ~ needs integer or bool operands, got {v.type}")
        dtype = v.type.dtype
        all_ones = True if dtype.is_bool else 2**dtype.bits - 1 if dtype.kind == "u" else -1
        return self.binary("^", v, all_ones)

    def abs(self, x) -> Value:
        v = self.to_value(x)
        if v.type.dtype.is_float:
            return self.create(C.UnaryOp, "math.absf", v).result
        return self.create(C.UnaryOp, "math.absi", v).result if v.type.dtype.kind == "i" else v

    def where(self, cond, a, b) -> Value:
        cond = self.to_value(cond)
        if not cond.type.dtype.is_bool:
            cond = self.cast(cond, bool_)
        a, b = self.unify(a, b)
        shape = self.common_shape(cond, a, b)
        if shape:
            cond, a, b = (self.broadcast_to(v, shape) for v in (cond, a, b))
        return self.create(C.SelectOp, cond, a, b).result

    def condition(self, x) -> Value:
        """A scalar i1 for scf.if, scf.while and the exits: a scalar or the element of a one-element vector (a 1x1
        tile's value, a reduction over a whole 1-D tile: Triton's `tl.sum(x)` is a scalar), non-bool values
        compared != 0."""
        v = self.to_value(x)
        if isinstance(v.type, VectorType) and all(n == 1 for n in v.type.shape):
            v = self.create(C.ExtractElementOp, v).result
        if not isinstance(v.type, ScalarType):
            raise self.error(f"a condition must be a scalar or a one-element vector, the same for the whole "
                             f"workgroup, got {v.type}; use xetile.where for vectors, or reduce the tile first "
                             "(`xetile.tile_reduce(\"max\", t, [0, 1]) != 0`)")
        return v if v.type.dtype.is_bool else self.compare("!=", v, 0)
