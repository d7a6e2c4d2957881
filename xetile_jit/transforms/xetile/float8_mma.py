"""FP8 tile_mma operands up-converted to f16 where the target's DPAS has no FP8 (Target.fp8_dpas; no target here
has it: PVC, Xe2 and Xe3 DPAS take f16, bf16, tf32 and 8-bit integers), at the XeTile level before layouts are
chosen, so that every later level and every target sees an f16 x f16 -> f32 tile_mma and blocks, distributes and
lowers it as it does any other.

The conversion (arith.extf) goes right after the op that made the operand (a load, usually: in registers, once per
loaded value, however many tile_mma ops read it); an operand that is a block argument (a loop-carried value) is
converted at the start of its block. Both FP8 formats are exact in f16: e5m2 is the upper byte of an f16, and every
e4m3fn value, its subnormals (2**-9 .. 7 * 2**-9) included, is an f16 normal; NaN stays NaN, of any payload: the
cast is marked `any_nan_payload` (ir/core_ops.py CastOp), as a DPAS product of any NaN operand is NaN, which lets
e5m2 be its byte shifted alone (codegen/llvm/float8.py). So D = A @ B + C is the same product of the same values
as in FP8, NaN at the same places: the interpreter gives the same numbers before and after this pass. Rewrites
`func` in place.
"""
from __future__ import annotations

from ...ir import core_ops as C
from ...ir import xetile_ops as X
from ...ir.core import Block, FuncOp, Value, walk
from ...ir.types import FLOAT8_DTYPES, VectorType, float16
from ...target.targets import Target


def upconvert_float8_mma(func: FuncOp, target: Target) -> FuncOp:
    converted: dict[Value, Value] = {}
    for op in [op for op in walk(func.body) if isinstance(op, X.TileMMAOp)]:
        for index, operand in enumerate(op.operands[:2]):
            if operand.type.dtype in FLOAT8_DTYPES:
                if target.fp8_dpas:
                    raise NotImplementedError(f"tile_mma on FP8 DPAS (target {target.name}): FP8 operands are "
                                              "lowered through f16 DPAS only")
                if operand not in converted:
                    converted[operand] = as_float16(operand)
                op.set_operand(index, converted[operand])
    return func


def as_float16(value: Value) -> Value:
    """`value` extended to f16, right after it is made; its NaN payload is free (core_ops.CastOp): DPAS makes a
    product of any NaN operand NaN."""
    cast = C.CastOp("arith.extf", value, VectorType(value.type.shape, float16), any_nan_payload=True)
    if isinstance(value.owner, Block):
        value.owner.prepend(cast)
    else:
        cast.loc = value.owner.loc
        value.owner.parent.insert_after(value.owner, cast)
    return cast.result
