"""Reductions and inclusive scans of n same-shape vectors with a combine function of the user's (Triton's tl.reduce
and tl.associative_scan): `xetile.reduce` and `xetile.scan`, each with a region holding the combine on scalars
(block arguments: the n accumulators, then the n next elements; scf.yield of the n new accumulators).

The association order is a left fold along `dim`: combine(...combine(combine(x0, x1), x2)..., x[n-1]). The
interpreter runs the region once per position on numpy vectors of all the other positions' elements; the lowering
(language/indexed.py, expand_combines) builds the same fold from the built-in ops, so every level computes the same
combines in the same order.
"""
from __future__ import annotations

import numpy as np

from .attrs import format_list
from .core import Block, Operation, Region
from .core_ops import check_yield
from .types import ScalarType, VectorType
from .xetile_ops import reduced_shape


def names(p, values) -> str:
    return ", ".join(p.name(v) for v in values)


def types(values) -> str:
    return ", ".join(str(v.type) for v in values)


class CombineOp(Operation):
    effects = ()  # the combine's scalar ops touch no memory
    scan = False  # a scan's results have the operands' shape; a reduction's keep dim as size 1

    def __init__(self, values, dim: int, loc=None):
        values = list(values)
        scalars = [ScalarType(v.type.dtype) for v in values]
        arg_names = [f"{side}{i}" for side in ("acc", "next") for i in range(len(values))]
        shapes = [v.type.shape if self.scan else reduced_shape(v.type.shape, (dim,)) for v in values]
        super().__init__(values, [VectorType(s, v.type.dtype) for s, v in zip(shapes, values)],
                         [Region(Block(scalars * 2, arg_names))], loc=loc)
        self.dim = dim

    @property
    def body(self) -> Block:
        return self.regions[0].block

    def verify(self):
        operand_types = [v.type for v in self.operands]
        if not operand_types or any(not isinstance(t, VectorType) or len(t.shape) != 2 for t in operand_types):
            raise self.error(f"takes 2-D vectors, got {types(self.operands)}", "combine operands")
        if len({t.shape for t in operand_types}) != 1:
            raise self.error(f"vectors of one shape, got {types(self.operands)}", "combine operands")
        if self.dim not in (0, 1):
            raise self.error(f"dim {self.dim} is not a dim of the 2-D vectors", "combine dim")
        scalars = [ScalarType(t.dtype) for t in operand_types]
        if [a.type for a in self.body.args] != scalars * 2:
            raise self.error(f"combine takes ({types(self.body.args)}), not the element "
                             f"types ({', '.join(map(str, scalars * 2))})", "combine arguments")
        check_yield(self, self.body, scalars)

    def format(self, p) -> str:
        operands, results = self.operands, self.results
        return (f" {names(p, operands)} [{self.dim}] combine({names(p, self.body.args)}) : {types(operands)} into "
                f"{types(results)}")

    @classmethod
    def parse(cls, p, name):
        values = p.operands()
        dims = p.ints()
        p.keyword("combine")
        args = p.comma_list(p.value_name, "(", ")")
        p.expect(":")
        p.typed(values)
        p.keyword("into")
        if len(dims) != 1 or len(args) != 2 * len(values):
            raise p.error(f"{name} takes one dim and two combine arguments per operand")
        op = cls(values, dims[0])
        p.typed(op.results)
        for text, arg in zip(args, op.body.args):
            p.define(text, arg)
        return op

    def fold(self, interp, values) -> list[list[np.ndarray]]:
        """Per position along dim, the accumulators after it (each with dim kept as size 1)."""
        at = [[v.take([j], axis=self.dim) for v in values] for j in range(values[0].shape[self.dim])]
        totals = [at[0]]
        with np.errstate(all="ignore"):
            for nexts in at[1:]:
                out = interp.run_block(self.body, totals[-1] + nexts)
                totals.append([np.asarray(r).astype(v.dtype) for r, v in zip(out, values)])
        return totals


class CombineReduceOp(CombineOp):
    name = "xetile.reduce"

    def interpret(self, interp, *values):
        return self.fold(interp, values)[-1]


class CombineScanOp(CombineOp):
    name = "xetile.scan"
    scan = True

    def interpret(self, interp, *values):
        totals = self.fold(interp, values)
        return [np.concatenate([t[i] for t in totals], axis=self.dim) for i in range(len(values))]


COMBINE_OPS = (CombineReduceOp, CombineScanOp)
