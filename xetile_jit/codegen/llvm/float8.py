"""FP8 values in LLVM IR: held as their i8 bits (LLVM and SPIR-V have no FP8 type), computed in f32. Both conversions
are integer arithmetic and selects, bit-exact with ml_dtypes for every code and every f32:

* FP8 -> f32 is exact: a normal's exponent is rebiased and its mantissa shifted into place, a subnormal (exponent
  0) is its mantissa times the smallest subnormal (exact in f32); every NaN becomes the quiet NaN of its sign, as
  ml_dtypes gives it.
* FP8 -> f16, the conversion FP8 tile_mma operands take (transforms/xetile/float8_mma.py), is exact and a few
  operations on an i16 word: the byte sign-extended and shifted into an f16's places is the sign and code, the
  value times 2**(bias - 15). e5m2 (f16's bias) is then the f16's upper byte; its NaN codes, past the infinity (one
  compare of the word shifted left, the sign out), select the quiet NaN of their sign. e4m3fn drops the sign's copy
  below bit 15, and one f16 multiply by 2**8 rebiases it exactly (a subnormal code lands on an f16 subnormal and
  becomes a normal); its NaN code becomes +-480, which no code reaches, turned into the quiet NaN by an xor masked by
  the compare. These are the forms Intel's compiler builds into the fewest instructions of the FP8 GEMM without
  spilling (bench/bench_xe_isa.py; docs/performance.md): with the NaN tested in f16 it spilled, with the quiet NaN
  selected on the code it took more instructions.
  The cast of a tile_mma operand frees the NaN payload (CastOp.any_nan_payload: a DPAS product of any NaN operand
  is NaN). There e5m2 is the shifted byte alone, already an f16 NaN for a NaN code: most of its cost was the quiet
  NaN. e4m3fn keeps its exact form: its NaN code's word is the number +-480 until a compare finds it, and the
  compare and the masked xor are the same instructions whatever NaN they make (a select of one NaN took more).
* f32 -> FP8 rounds to nearest even: a value in the format's normal range adds half a unit of the kept last place
  minus one plus that place's bit (as bf16 rounds, codegen/llvm/core.py) and rebiases; one below it is scaled so
  that the smallest subnormal is 1 and rounded to an integer by adding and taking away 2**23 (f32 arithmetic that
  rounds to nearest even: no fast-math flags); a result past the largest finite code is the overflow code
  (e5m2: infinity, e4m3fn, which has none: NaN), as ml_dtypes overflows; a NaN becomes the format's NaN of its sign.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...ir.types import DType, float8_e4m3fn, float8_e5m2
from .values import shaped, splat

F32_MANTISSA = 23
F32_BIAS = 127
F32_INFINITY, F32_QUIET_NAN = 0x7F800000, 0x7FC00000
F16_MANTISSA, F16_BIAS, F16_QUIET_NAN = 10, 15, 0x7E00
ROUNDING_MAGIC = float(2 ** F32_MANTISSA)  # x + 2**23 - 2**23 rounds 0 <= x < 2**22 to an integer, ties to even


@dataclass(frozen=True)
class Float8Format:
    """Codes are magnitudes: the sign is bit 7 in both formats."""

    exponent_bits: int
    mantissa_bits: int
    max_finite: int  # the largest finite code
    nan: int  # the NaN code ml_dtypes gives
    infinity: int | None  # None: the format has no infinity

    @property
    def bias(self) -> int:
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def last_number(self) -> int:
        """The largest code that is not a NaN."""
        return self.max_finite if self.infinity is None else self.infinity

    @property
    def overflow(self) -> int:
        """The code a finite value past max_finite rounds to."""
        return self.nan if self.infinity is None else self.infinity

    @property
    def shift(self) -> int:
        """How far an FP8 code moves to sit in an f32 word."""
        return F32_MANTISSA - self.mantissa_bits

    @property
    def rebias(self) -> int:
        """What rebiasing a shifted code to an f32 word adds."""
        return (F32_BIAS - self.bias) << F32_MANTISSA

    @property
    def smallest_normal(self) -> int:
        """The f32 word of the format's smallest normal."""
        return (F32_BIAS - self.bias + 1) << F32_MANTISSA

    @property
    def subnormal_unit(self) -> float:
        """The smallest subnormal: 2**(1 - bias - mantissa bits)."""
        return 2.0 ** (1 - self.bias - self.mantissa_bits)


FORMATS = {
    float8_e4m3fn: Float8Format(4, 3, max_finite=0x7E, nan=0x7F, infinity=None),
    float8_e5m2: Float8Format(5, 2, max_finite=0x7B, nan=0x7E, infinity=0x7C),
}


def is_float8(dtype: DType) -> bool:
    return dtype in FORMATS


def split_code(b: ir.IRBuilder, x: ir.Value, width: int) -> tuple[ir.Type, ir.Value, ir.Value]:
    """FP8 bits `x` as (the integer type of `width` bits shaped like `x`, the magnitude code, the sign bit at the
    top of a word of that width)."""
    ty = shaped(x.type, ir.IntType(width))
    bits = b.zext(x, ty)
    return ty, b.and_(bits, splat(ty, 0x7F)), b.shl(b.and_(bits, splat(ty, 0x80)), splat(ty, width - 8))


def nan_or(b: ir.IRBuilder, fmt: Float8Format, code: ir.Value, word: ir.Value, nan: int) -> ir.Value:
    """`word`, or the quiet NaN word `nan` where `code` is one of the format's NaNs."""
    return b.select(b.icmp_unsigned(">", code, splat(code.type, fmt.last_number)), splat(word.type, nan), word)


def float8_to_f32(b: ir.IRBuilder, x: ir.Value, dtype: DType) -> ir.Value:
    """The f32 of FP8 bits `x` (i8, or a vector of them), exactly."""
    fmt = FORMATS[dtype]
    i32, code, sign = split_code(b, x, 32)
    f32 = shaped(x.type, ir.FloatType())
    normal = b.add(b.shl(code, splat(i32, fmt.shift)), splat(i32, fmt.rebias))
    mantissa = b.and_(code, splat(i32, (1 << fmt.mantissa_bits) - 1))
    subnormal = b.bitcast(b.fmul(b.uitofp(mantissa, f32), splat(f32, fmt.subnormal_unit)), i32)
    word = b.select(b.icmp_unsigned("<", code, splat(i32, 1 << fmt.mantissa_bits)), subnormal, normal)
    if fmt.infinity is not None:
        word = b.select(b.icmp_unsigned("==", code, splat(i32, fmt.infinity)), splat(i32, F32_INFINITY), word)
    return b.bitcast(b.or_(nan_or(b, fmt, code, word, F32_QUIET_NAN), sign), f32)


def float8_to_f16(b: ir.IRBuilder, x: ir.Value, dtype: DType, any_nan_payload: bool = False) -> ir.Value:
    """The f16 of FP8 bits `x` (i8, or a vector of them), exactly, or with `any_nan_payload` any f16 NaN for a NaN
    code (module docstring)."""
    fmt = FORMATS[dtype]
    i16 = shaped(x.type, ir.IntType(16))
    shift = F16_MANTISSA - fmt.mantissa_bits
    word = b.shl(b.sext(x, i16), splat(i16, shift))  # the sign at bit 15
    if fmt.bias != F16_BIAS:
        word = rebiased(b, fmt, word, shift)
    elif not any_nan_payload:  # the upper byte alone is an f16 NaN for a NaN code, of another payload
        word = quieted(b, fmt, word, shift)
    return b.bitcast(word, shaped(x.type, ir.HalfType()))


def quieted(b: ir.IRBuilder, fmt: Float8Format, word: ir.Value, shift: int) -> ir.Value:
    """The f16 word of an FP8 code of f16's bias (e5m2) in the upper byte `word`: itself, or for a code past the
    infinity, an f16 NaN of another payload, the quiet NaN of its sign."""
    ty = word.type
    nan = b.icmp_unsigned(">", b.shl(word, splat(ty, 1)), splat(ty, fmt.infinity << (shift + 1)))
    return b.select(nan, b.or_(b.and_(word, splat(ty, 0x8000)), splat(ty, F16_QUIET_NAN)), word)


def rebiased(b: ir.IRBuilder, fmt: Float8Format, word: ir.Value, shift: int) -> ir.Value:
    """The f16 word of an FP8 code of a smaller bias and no infinity (e4m3fn) shifted into `word`'s places (the
    sign extended below bit 15 too): the value times 2**(bias - 15), which one multiply by a power of two undoes,
    exactly; the NaN code's magnitude becomes a number no code reaches, `nan_image`, flipped to the quiet NaN."""
    ty = word.type
    word = b.and_(word, splat(ty, 0x8000 | 0x7F << shift))
    nan = b.icmp_unsigned("==", b.shl(word, splat(ty, 1)), splat(ty, fmt.nan << (shift + 1)))
    f16 = shaped(ty, ir.HalfType())
    word = b.bitcast(b.fmul(b.bitcast(word, f16), splat(f16, 2.0 ** (F16_BIAS - fmt.bias))), ty)
    return b.xor(word, b.and_(b.sext(nan, ty), splat(ty, nan_image(fmt) ^ F16_QUIET_NAN)))


def nan_image(fmt: Float8Format) -> int:
    """The f16 word of the number the NaN code of `fmt` would be if its exponent were a normal one."""
    mantissa = fmt.nan & ((1 << fmt.mantissa_bits) - 1)
    exponent = (fmt.nan >> fmt.mantissa_bits) - fmt.bias + F16_BIAS
    return exponent << F16_MANTISSA | mantissa << (F16_MANTISSA - fmt.mantissa_bits)


def f32_to_float8(b: ir.IRBuilder, x: ir.Value, dtype: DType) -> ir.Value:
    """The FP8 bits (i8) of f32 `x`, rounded to nearest even (module docstring)."""
    fmt = FORMATS[dtype]
    i32, f32 = shaped(x.type, ir.IntType(32)), shaped(x.type, ir.FloatType())
    bits = b.bitcast(x, i32)
    sign = b.and_(b.lshr(bits, splat(i32, 24)), splat(i32, 0x80))
    magnitude = b.and_(bits, splat(i32, 0x7FFFFFFF))
    kept_bit = b.and_(b.lshr(magnitude, splat(i32, fmt.shift)), splat(i32, 1))
    half_unit = b.add(kept_bit, splat(i32, (1 << (fmt.shift - 1)) - 1))
    normal = b.lshr(b.sub(b.add(magnitude, half_unit), splat(i32, fmt.rebias)), splat(i32, fmt.shift))
    normal = b.select(b.icmp_unsigned(">", normal, splat(i32, fmt.max_finite)), splat(i32, fmt.overflow), normal)
    scaled = b.fmul(b.bitcast(magnitude, f32), splat(f32, 1 / fmt.subnormal_unit))
    rounded = b.fsub(b.fadd(scaled, splat(f32, ROUNDING_MAGIC)), splat(f32, ROUNDING_MAGIC))
    subnormal = b.fptoui(rounded, i32)
    code = b.select(b.icmp_unsigned("<", magnitude, splat(i32, fmt.smallest_normal)), subnormal, normal)
    code = b.select(b.icmp_unsigned(">", magnitude, splat(i32, F32_INFINITY)), splat(i32, fmt.nan), code)
    return b.trunc(b.or_(code, sign), shaped(x.type, ir.IntType(8)))
