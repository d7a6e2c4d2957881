"""Blocking (XeGPU RFC "blocking rule"): subgroup-level ops -> instruction-size ops for the target.

A subgroup vector of shape S is cut into blocks of [gcd(S0, M), N] when the subgroup size N divides S1,
M being the DPAS repeat count: the shape of a DPAS C operand, one column per lane (other shapes: small
power-of-two blocks, see block_shape). Every
value of one shape is cut the same way, so element-wise ops and loop-carried values need no regrouping.
A tensor descriptor is cut like the values loaded through it (swapped when the load transposes). DPAS
runs on [M, K] x [K, N] blocks of the target's shape, accumulating over the K blocks; a reduction reduces
each block and folds the partial results element-wise. Where an op needs other blocks than its operand has (DPAS A and
B, transposes, stores), the operand is regrouped with vector.insert/extract_strided_slice.
"""
from __future__ import annotations

from math import gcd

from ..ir import core_ops as C
from ..ir import xegpu_ops as G
from ..ir.analysis import UnionFind, carried_groups
from ..ir.core import FuncOp, Value, walk
from ..ir.types import IndexType, VectorType, float32
from ..ir.verifier import verify
from ..ir.xetile_ops import REDUCE_KINDS
from .piecewise import Grid, PiecewiseConversion
from .targets import Target

REPEAT_COUNT = 8  # rows of a DPAS C block (M)


def block_shape(shape, subgroup: int) -> tuple[int, int]:
    """[gcd(rows, M), N] when N divides the columns; otherwise a power-of-two block of at most N elements, so
    that a lane holds 1 to N of them (SPIR-V vectors have 2, 4, 8 or 16 components)."""
    rows, cols = shape
    if cols % subgroup == 0:
        return gcd(rows, REPEAT_COUNT), subgroup
    width = gcd(cols, subgroup)
    return gcd(rows, subgroup // width), width


def grid(shape, block) -> Grid:
    return Grid((shape[0] // block[0], shape[1] // block[1]), tuple(block))


class DescriptorClasses:
    """Descriptors joined by update_nd_offset, loops and branches share one cut; a class is cut transposed
    when any load through it transposes."""

    def __init__(self, func: FuncOp):
        self.classes = UnionFind(lambda v: isinstance(v.type, G.TensorDescType))
        for op in walk(func.body):
            if isinstance(op, G.UpdateNdOffsetOp):
                self.classes.union(op.operands[0], op.result)
            for group in carried_groups(op):
                self.classes.union(*group)
        self.transposed = {self.classes.find(op.operands[0]) for op in walk(func.body)
                           if isinstance(op, G.LoadNdOp) and op.transpose}

    def is_transposed(self, v: Value) -> bool:
        return self.classes.find(v) in self.transposed


class Blocking(PiecewiseConversion):
    def __init__(self, func: FuncOp, target: Target):
        super().__init__(func)
        self.target = target
        self.descriptors = DescriptorClasses(func)
        self.grids: dict[Value, Grid] = {}  # values produced in another cut than their shape's own

    def run(self) -> FuncOp:
        super().run()
        self.new.num_subgroups = self.old.num_subgroups
        return self.new

    # ---- how values are cut -------------------------------------------------------------------
    def default_grid(self, v: Value) -> Grid:
        shape = v.type.shape
        if isinstance(v.type, G.TensorDescType) and self.descriptors.is_transposed(v):
            return grid(shape, block_shape(shape[::-1], self.target.subgroup_size)[::-1])
        return grid(shape, block_shape(shape, self.target.subgroup_size))

    def grid_of(self, v: Value) -> Grid:
        return self.grids.get(v) or self.default_grid(v)

    def pieces(self, v: Value, want: Grid) -> list[Value]:
        """`v` cut as `want`: each wanted block is built from the blocks it overlaps, so values never grow
        beyond a block (and stay in their lanes where the columns line up)."""
        have = self.grid_of(v)
        if have == want:
            return self.get(v)
        blocks = list(zip(self.get(v), have.origins()))
        return [self.regroup(blocks, have.shape, origin, want.shape, v.type.dtype) for origin in want.origins()]

    def regroup(self, blocks, have_shape, origin, shape, dtype) -> Value:
        parts = []
        for block, start in blocks:
            lo = [max(a, b) for a, b in zip(origin, start)]
            hi = [min(a + n, b + m) for a, n, b, m in zip(origin, shape, start, have_shape)]
            if all(l < h for l, h in zip(lo, hi)):
                parts.append((block, start, lo, hi))
        if len(parts) == 1 and tuple(parts[0][1]) == tuple(origin) and tuple(have_shape) == tuple(shape):
            return parts[0][0]
        result = self.emit(C.ConstantOp, 0, VectorType(tuple(shape), dtype)).result
        for block, start, lo, hi in parts:
            size = [h - l for l, h in zip(lo, hi)]
            if size != list(have_shape):
                block = self.emit(C.ExtractStridedSliceOp, block, [l - s for l, s in zip(lo, start)], size).result
            result = self.emit(C.InsertStridedSliceOp, block, result, [l - o for l, o in zip(lo, origin)]).result
        return result

    def carried(self, v: Value) -> list[Value]:
        """Loop-carried and yielded vectors travel in their shape's own cut."""
        return self.pieces(v, self.default_grid(v)) if isinstance(v.type, VectorType) else self.get(v)

    def carried_count(self, v: Value) -> int:
        return len(list(self.default_grid(v).cells())) if isinstance(v.type, VectorType) else len(self.get(v))

    def piece_offsets(self, g: Grid) -> list[tuple[Value, Value]]:
        return [tuple(self.emit(C.ConstantOp, n, IndexType()).result for n in origin) for origin in g.origins()]

    def result_layout(self, v: Value, piece: int):
        return None

    # ---- ops -------------------------------------------------------------------------------------
    def convert_LoadNdOp(self, op: G.LoadNdOp) -> None:
        src = self.grid_of(op.operands[0])
        self.grids[op.result] = Grid(src.counts[::-1], src.shape[::-1]) if op.transpose else src
        super().convert_LoadNdOp(op)

    def convert_AtomicRMWOp(self, op: G.AtomicRMWOp) -> None:
        tiles, g = self.get(op.operands[1]), self.grid_of(op.operands[1])
        values = self.pieces(op.operands[0], g)
        self.grids[op.result] = g
        self.set(op.result, [self.emit(G.AtomicRMWOp, op.kind, v, t).result for v, t in zip(values, tiles)])

    def convert_DpasOp(self, op: G.DpasOp) -> None:
        a, b, *c = op.operands
        m, n, k = self.target.dpas_shape(a.type.dtype)
        (rows, depth), cols = a.type.shape, b.type.shape[1]
        if rows % m or cols % n or depth % k:
            raise NotImplementedError(f"tile_mma of {rows}x{depth} by {depth}x{cols} per subgroup: the DPAS "
                                      f"shape {m}x{n}x{k} must divide it")
        out = grid(op.result.type.shape, (m, n))
        blocks_a = self.pieces(a, grid(a.type.shape, (m, k)))
        blocks_b = self.pieces(b, grid(b.type.shape, (k, n)))
        blocks_c = self.pieces(c[0], out) if c else None
        piece = VectorType((m, n), op.result.type.dtype)
        results = []
        for i, j in out.cells():
            acc = blocks_c[out.index(i, j)] if c else None
            for kk in range(depth // k):
                acc = self.emit(G.DpasOp, blocks_a[i * (depth // k) + kk], blocks_b[kk * out.counts[1] + j], acc,
                                piece).result
            results.append(acc)
        self.grids[op.result] = out
        self.set(op.result, results)

    def convert_MultiReductionOp(self, op: G.MultiReductionOp) -> None:
        """Each block reduces on its own, the partial results fold element-wise. f16 and bf16 reduce in f32
        and round once at the end, as the op does."""
        src = self.grid_of(op.operands[0])
        dtype = op.result.type.dtype
        blocks = [self.widened(b) for b in self.get(op.operands[0])]
        out = Grid(tuple(1 if d in op.dims else n for d, n in enumerate(src.counts)),
                   tuple(1 if d in op.dims else n for d, n in enumerate(src.shape)))
        results = []
        for i, j in out.cells():
            group = [blocks[src.index(a, b)] for a, b in src.cells()
                     if (0 in op.dims or a == i) and (1 in op.dims or b == j)]
            partials = [self.emit(G.MultiReductionOp, op.kind, block, op.dims).result for block in group]
            results.append(self.narrowed(self.combine(op, partials), dtype))
        self.grids[op.result] = out
        self.set(op.result, results)

    def widened(self, block: Value) -> Value:
        t = block.type
        if t.dtype.is_float and t.dtype.bits == 16:
            return self.emit(C.CastOp, "arith.extf", block, VectorType(t.shape, float32)).result
        return block

    def narrowed(self, value: Value, dtype) -> Value:
        if value.type.dtype == dtype:
            return value
        return self.emit(C.CastOp, "arith.truncf", value, VectorType(value.type.shape, dtype)).result

    def combine(self, op: G.MultiReductionOp, partials) -> Value:
        """The partial results folded with the kind's element-wise op (maxnumf for max: a NaN loses)."""
        name = REDUCE_KINDS[op.kind][partials[0].type.dtype.kind][2]
        result = partials[0]
        for partial in partials[1:]:
            result = self.emit(C.BinaryOp, name, result, partial).result
        return result


def block(func: FuncOp, target: Target) -> FuncOp:
    new = Blocking(func, target).run()
    verify(new)
    return new
