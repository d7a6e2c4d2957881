"""The DPAS builtin defined for a CPU (both CPU ABIs, "emulated" and "vector"): the call ABI and lane layouts of
xe_builtins.py (docs/reference/xe_builtins.md §1.3), computed with shuffles and scalar arithmetic.

Numerics: bf16, f16 and 8-bit inputs are converted exactly to f32 / i32; tf32 inputs are f32 words whose low 13
mantissa bits are dropped (truncation, as tf32 DPAS reads an f32 register: ir/numeric.py `tf32`). Each product
is then exact in f32 (at most 22 significant bits). The accumulation is `d = c; for k in 0..K-1: d = d + a[k] *
b[k]` per output element, rounding to nearest even after every addition (integers: exact i32 with wrap-around).
The hardware's systolic adder tree may round differently in the last bit; this order is what the tests reproduce
in numpy.

Where A's element A[r][k] is: lane k / per_lane, component r, field k % per_lane (f16, bf16, 8-bit); tf32 (K 8
on sub-group 16): lane k for the even rows and k + 8 for the odd ones, component r / 2 (tf32_lane).
"""
from __future__ import annotations

from llvmlite import ir

from ..ir.numeric import TF32_MASK
from .xe_builtins import F32, I32, DpasBuiltin, _constant, _declared, _field, _i32, _like, _shuffle


def _widen(b: ir.IRBuilder, value: ir.Value, dtype: str) -> ir.Value:
    """Exact conversion of f16 / bf16 bits to f32 and of i8 / ui8 to i32; tf32: the f32 word truncated."""
    if dtype == "f16":
        return b.fpext(b.bitcast(value, _like(value.type, ir.HalfType())), _like(value.type, F32))
    if dtype == "bf16":
        wide = b.zext(value, _like(value.type, I32))
        return b.bitcast(b.shl(wide, _constant(wide.type, 16)), _like(value.type, F32))
    if dtype == "tf32":
        return tf32(b, value)
    return (b.sext if dtype == "i8" else b.zext)(value, _like(value.type, I32))


def tf32(b: ir.IRBuilder, words: ir.Value) -> ir.Value:
    """f32 words (i32, or a vector of them) as tf32 DPAS reads them: f32 values without their low 13 mantissa bits."""
    mask = _constant(words.type, TF32_MASK - (1 << 32))  # the mask's bits as a signed i32
    return b.bitcast(b.and_(words, mask), _like(words.type, F32))


def _components(b: ir.IRBuilder, value: ir.Value, count: int) -> list[ir.Value]:
    return [b.extract_element(value, _i32(i)) for i in range(count)] if count > 1 else [value]


def _as_words(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """An f32 operand (tf32 A and B) as its i32 words: shuffles and fields work on integers."""
    element = value.type.element if isinstance(value.type, ir.VectorType) else value.type
    return b.bitcast(value, _like(value.type, I32)) if element == F32 else value


def tf32_lane(mad: DpasBuiltin, r: int, k: int) -> tuple[int, int]:
    """(lane, component) holding tf32 A[r][k]: lanes 0-7 the even rows, 8-15 the odd ones (§1.3)."""
    return k + mad.k * (r % 2), r // 2


def _a_columns(b: ir.IRBuilder, mad: DpasBuiltin, parts: list[ir.Value]):
    """(k, [A[r][k] for every row r], widened), k ascending, on every lane."""
    if mad.a == "tf32":
        for k in range(mad.k):
            places = [tf32_lane(mad, r, k) for r in range(mad.m)]
            yield k, [_widen(b, _shuffle(b, parts[part], _i32(lane)), "tf32") for lane, part in places]
        return
    if mad.per_lane == 1 and mad.is_float:  # widened once, shuffled as words: the driver built the GEMM 1 s sooner
        wide = [b.bitcast(_widen(b, part, mad.a), I32) for part in parts]
        for lane in range(mad.subgroup):
            yield lane, [b.bitcast(_shuffle(b, column, _i32(lane)), F32) for column in wide]
        return
    for lane in range(mad.subgroup):  # unrolled: constant indices into the packed operands
        columns = [_shuffle(b, row, _i32(lane)) for row in parts]  # A[r, lane * per_lane + e], on every lane
        for e in range(mad.per_lane):
            yield lane * mad.per_lane + e, [_widen(b, _field(b, column, e, mad.bits), mad.a) for column in columns]


def _multiply_add(b: ir.IRBuilder, mad: DpasBuiltin):
    """`(a, b, c) -> c + a * b` rounded as the module docstring says. f16 x f16 uses OpenCL's `fma`: a product
    of two f16 values is exact and normal in f32 (at most 22 significant bits, 2**-48 to 2**32), so the fused
    operation rounds once, as the add alone does, and a CPU does it in one instruction. Not for bf16 and tf32,
    whose products can leave f32's range (and then round differently unfused)."""
    if not mad.is_float:
        return lambda x, y, acc: b.add(acc, b.mul(x, y))
    if mad.a == mad.b == "f16":
        fma = _declared(b.module, "__spirv_ocl_fma", ir.FunctionType(F32, [F32] * 3))
        return lambda x, y, acc: b.call(fma, [x, y, acc])
    return lambda x, y, acc: b.fadd(acc, b.fmul(x, y))


def emulate_dpas(b: ir.IRBuilder, fn: ir.Function, mad: DpasBuiltin) -> None:
    """The builtin's body (the "emulated" ABI; the "vector" ABI's lowering inlines `dpas_result` instead)."""
    a, packed_b, acc = fn.args
    b.ret(dpas_result(b, mad, acc, packed_b, a_columns(b, mad, a)))


def a_columns(b: ir.IRBuilder, mad: DpasBuiltin, a: ir.Value) -> list[list[ir.Value]]:
    """[A[r][k] for every row r], widened, for k ascending, on every lane."""
    return [column for _, column in _a_columns(b, mad, _components(b, _as_words(b, a), mad.a_components))]


def dpas_result(b: ir.IRBuilder, mad: DpasBuiltin, acc: ir.Value, packed_b: ir.Value,
                columns: list[list[ir.Value]]) -> ir.Value:
    """Lane n: d[r] = c[r] + A[r][k] * B[k][n] for k = 0..K-1 in order, A's column k being `columns[k]`. Row by
    row in scalars: the OpenCL CPU compiler builds that in half the time of the same work on the lane's vectors
    (docs/DESIGN.md "CPU notes")."""
    per_word = 32 // mad.bits
    words = _as_words(b, packed_b)
    sums = _components(b, acc, mad.m)
    multiply_add = _multiply_add(b, mad)
    for k, column in enumerate(columns):
        word = b.extract_element(words, _i32(k // per_word))
        b_k = _widen(b, _field(b, word, k % per_word, mad.bits), mad.b)
        for r, a_k in enumerate(column):
            sums[r] = multiply_add(a_k, b_k, sums[r])
    result = acc
    if mad.m > 1:
        for r, value in enumerate(sums):
            result = b.insert_element(result, value, _i32(r))
    return result if mad.m > 1 else sums[0]
