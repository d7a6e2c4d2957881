"""to-llvm on the CPU targets: negation as -0.0 - x, a workaround for the OpenCL CPU compiler.

That compiler takes an `fneg` of a work-item's value for a value all work-items share. In a kernel with a
workgroup barrier it then computes the `fneg` once, after its loop over the work-items and from the last one's
registers, so every work-item used after the barrier read the last one's value. On `xe-emulated` a 320-wide row
split over two subgroups came back with 8 of subgroup 0's 10 blocks holding subgroup 1's (docs/guide.md "The
differential fuzzer"; the symptom of intel/llvm#23220). So on the CPU targets -x is -0.0 - x, with a -0.0
the compiler cannot fold: its sign bit ORed with NumWorkgroups >> 63, which is 0. That is -x but for a NaN's
sign bit. The literal forms of a negation (x * -1.0, x / -1.0, -0.0 - x), which the compiler also turns into an
`fneg`, take the same path (`negation_operand`). GPU targets keep `fneg`. The CPU lowering (codegen/cpu/lowering.py)
negates through `OpaqueNegativeZeros`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from llvmlite import ir

from ..llvm.context import LoweringContext
from ..llvm.core import I32, I64, broadcast


@dataclass
class OpaqueNegativeZeros:
    """Negation on `context`, with each function's opaque -0.0 per element type (`made`)."""
    context: LoweringContext
    made: dict = field(default_factory=dict)

    def negate(self, x: ir.Value) -> ir.Value:
        """-x as -0.0 - x with a -0.0 the compiler cannot fold (the module docstring)."""
        b = self.context.builder
        element = getattr(x.type, "element", x.type)
        return b.fsub(broadcast(b, self.of(element), x.type), x)

    def of(self, element: ir.Type) -> ir.Value:
        """The function's -0.0 of `element`, made once in its entry block (which dominates every negation)."""
        b = self.context.builder
        key = (b.function, element)
        if key not in self.made:
            with b.goto_entry_block():
                zero = b.bitcast(b.or_(b.trunc(opaque_zero(self.context), I32), ir.Constant(I32, -2**31)),
                                 ir.FloatType())
                self.made[key] = zero if element == ir.FloatType() else b.fptrunc(zero, element)
        return self.made[key]


def opaque_zero(context: LoweringContext) -> ir.Value:
    """An i64 0 the compiler cannot fold: NumWorkgroups >> 63 (made where the builder stands)."""
    b = context.builder
    return b.lshr(context.builtin("NumWorkgroups", 0), ir.Constant(I64, 63))


def negation_operand(instruction: str, xs: tuple) -> ir.Value | None:
    """x if `instruction` on `xs` is x * -1.0, -1.0 * x, x / -1.0 or -0.0 - x (each -x exactly), else None."""
    if instruction == "fmul":
        return xs[0] if is_literal(xs[1], -1.0) else xs[1] if is_literal(xs[0], -1.0) else None
    if instruction == "fdiv":
        return xs[0] if is_literal(xs[1], -1.0) else None
    if instruction == "fsub":
        return xs[1] if is_literal(xs[0], -0.0) else None
    return None


def is_literal(value: ir.Value, wanted: float) -> bool:
    """Whether `value` is the constant `wanted` (sign of zero included), in every component of a vector."""
    if not isinstance(value, ir.Constant):
        return False
    parts = value.constant if isinstance(value.constant, list) else [value]
    return all(isinstance(p.constant, float) and p.constant == wanted
               and math.copysign(1.0, p.constant) == math.copysign(1.0, wanted) for p in parts)
