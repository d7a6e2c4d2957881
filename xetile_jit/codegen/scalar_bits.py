"""The bits of an llvmlite scalar type, which llvmlite's float types do not carry: one table for the LLVM lowering and
the SPIR-V emitter, which are independent of each other."""
from __future__ import annotations

from llvmlite import ir

FLOAT_BITS = {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}


def scalar_bits(ty: ir.Type) -> int:
    """The bits of the integer or float type `ty`."""
    return ty.width if isinstance(ty, ir.IntType) else FLOAT_BITS[type(ty)]
