"""LLVM values shaped like others: the scalar-or-vector helpers every lowering module uses."""
from __future__ import annotations

from llvmlite import ir


def shaped(like: ir.Type, element: ir.Type) -> ir.Type:
    """`element`, or a vector of it as long as `like` when `like` is a vector."""
    return ir.VectorType(element, like.count) if isinstance(like, ir.VectorType) else element


def splat(ty: ir.Type, value) -> ir.Constant:
    """`value` as a constant of `ty`, in every component when `ty` is a vector."""
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, value)] * ty.count)
    return ir.Constant(ty, value)
