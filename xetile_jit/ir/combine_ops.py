"""Reductions and inclusive scans of n same-shape vectors with a combine function of the user's (Triton's tl.reduce
and tl.associative_scan): `xetile.reduce` and `xetile.scan`, each with a region holding the combine on scalars
(block arguments: the n accumulators, then the n next elements; scf.yield of the n new accumulators).

The association order is a tree of log2(size) levels along `dim` (`strides`), each combine taking a left range of
positions and the range just right of it, in that order, so the combine needs to be associative, not commutative:
- a reduction combines pairs: at stride s (1, 2, 4, ...) the partial at each position p that is a multiple of 2s
  becomes combine(partial[p], partial[p + s]) where p + s is in the dim; a position with no partner passes on. The
  result is at position 0: for 5 positions combine(combine(combine(x0, x1), combine(x2, x3)), x4).
- a scan is Kogge-Stone's: at stride s every position p >= s becomes combine(prefix[p - s], prefix[p]), from the
  prefixes of the stride before; position p then holds positions 0..p.
The interpreter runs the region once per stride on numpy vectors of the positions that combine; the lowering
(language/indexed.py, expand_combines) builds the same tree from the built-in ops, so every level computes the same
combines in the same order.
"""
from __future__ import annotations

import numpy as np

from .core import Block, Operation, Region
from .core_ops import check_yield
from .types import ScalarType, VectorType
from .xetile_ops import reduced_shape


def strides(n: int) -> list[int]:
    """The tree's strides over `n` positions: 1, 2, 4, ... below n (none for one position)."""
    return [1 << k for k in range((n - 1).bit_length())]


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

    def combined(self, interp, values, lefts, rights) -> list[np.ndarray]:
        """The combine of the elements at positions `lefts` (accumulators) with those at `rights` (next elements)."""
        picked = [v.take(lefts, axis=self.dim) for v in values] + [v.take(rights, axis=self.dim) for v in values]
        with np.errstate(all="ignore"):
            out = interp.run_block(self.body, picked)
        return [np.asarray(r).astype(v.dtype) for r, v in zip(out, values)]

    def tree(self, interp, values) -> list[np.ndarray]:
        """`values` after every stride of the tree (module docstring): the reduction at position 0 of `dim`, or the
        inclusive prefixes."""
        values, n = [np.array(v) for v in values], values[0].shape[self.dim]
        for s in strides(n):
            rights = np.arange(s, n) if self.scan else np.arange(s, n, 2 * s)
            lands = rights if self.scan else rights - s
            for v, r in zip(values, self.combined(interp, values, rights - s, rights)):
                index = [slice(None)] * v.ndim
                index[self.dim] = lands
                v[tuple(index)] = r
        return values


class CombineReduceOp(CombineOp):
    name = "xetile.reduce"

    def interpret(self, interp, *values):
        return [v.take([0], axis=self.dim) for v in self.tree(interp, values)]


class CombineScanOp(CombineOp):
    name = "xetile.scan"
    scan = True

    def interpret(self, interp, *values):
        return self.tree(interp, values)


COMBINE_OPS = (CombineReduceOp, CombineScanOp)
