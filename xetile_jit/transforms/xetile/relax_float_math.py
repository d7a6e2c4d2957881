"""Approximate functions (the `fast_math` compile option), as Triton and upstream MLIR allow them, at the XeTile
level before layouts are chosen: every element-wise op whose row in ir/elementwise.py has an approximate LLVM rule
(`fast`: exp, exp2, log, log2, sqrt, rsqrt, division, sigmoid) gets upstream's fast-math flag for it (`afn`,
approximate functions; `arcp` on a division), which device code lowers to the OpenCL `native_` built-ins.
`fast_math` also contracts multiply-adds (contract_float_math.py, which the pipeline runs for it).

The numpy interpreter runs the traced kernel, exactly: device code may differ from it within the bounds docs/guide.md
gives ("Fast math"). Rewrites `func` in place.
"""
from __future__ import annotations

from ...ir import core_ops as C
from ...ir.core import FuncOp, walk


def relax_float_math(func: FuncOp) -> FuncOp:
    for op in walk(func.body):
        if isinstance(op, C.ElementwiseOp) and op.table[op.name].fast is not None:
            op.fastmath = True
    return func
