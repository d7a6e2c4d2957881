"""FMA contraction (the `fp_fusion` compile option, and part of `fast_math`), as Triton's `enable_fp_fusion` and
upstream MLIR's `contract` flag allow it, at the XeTile level before layouts are chosen:

- a float multiply whose one use is an add or a subtract in its block contracts with it into `math.fma`:
  a * b + c, c + a * b, a * b - c (as fma(a, b, -c)) and c - a * b (as fma(-a, b, c));
- a float multiply whose one use is an add `tile_reduce` in its block gets upstream's `contract` flag: the adds that
  reduce the products may fuse them (the CPU targets' loops over blocks, codegen/cpu/block_loops.py: a sum of
  squares, a dot product along a row). A reduction has no single add to rewrite here: blocking makes them.

A product used twice, or made outside the block of its add (before a loop), stays a multiply. The numpy interpreter
runs the traced kernel, exactly: a contracted result differs from it by the rounding contraction removes.
Rewrites `func` in place.
"""
from __future__ import annotations

from ...ir import core_ops as C
from ...ir import xetile_ops as X
from ...ir.core import FuncOp, Operation, Value, walk

CONTRACTED = ("arith.addf", "arith.subf")


def contract_float_math(func: FuncOp) -> FuncOp:
    for op in list(walk(func.body)):
        if isinstance(op, C.BinaryOp) and op.name in CONTRACTED:
            contract(op)
        elif isinstance(op, X.TileReduceOp) and op.kind == "add" and is_lone_product(op.operands[0], op):
            op.operands[0].owner.contract = True
    return func


def contract(op: C.BinaryOp) -> None:
    """`op` (an add or a subtract) and the multiply giving one of its operands as one fma, when the product has no
    other use and lives in `op`'s block (a product made before a loop stays there)."""
    for index, operand in enumerate(op.operands):
        product = operand.owner
        if is_lone_product(operand, op):
            a, b = product.operands
            addend = op.operands[1 - index]
            if op.name == "arith.subf" and index == 0:
                addend = negated(addend, op)
            elif op.name == "arith.subf":
                a = negated(a, op)
            fma = op.parent.insert_before(op, C.TernaryOp("math.fma", a, b, addend, loc=op.loc))
            fma.result.layout, fma.result.name_hint = op.result.layout, op.result.name_hint
            op.result.replace_all_uses_with(fma.result)
            op.erase()
            product.erase()
            return


def is_lone_product(value: Value, user: Operation) -> bool:
    product = value.owner
    return (isinstance(product, C.BinaryOp) and product.name == "arith.mulf" and len(value.uses) == 1
            and product.parent is user.parent)


def negated(value: Value, before: Operation) -> Value:
    negation = before.parent.insert_before(before, C.UnaryOp("arith.negf", value, loc=before.loc))
    negation.result.layout = value.layout
    return negation.result
