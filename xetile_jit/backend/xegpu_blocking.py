"""Blocking (XeGPU RFC "blocking rule"): subgroup-level ops -> instruction-size ops for the target.

A subgroup vector is cut into blocks of [M, N], N the subgroup size and M the DPAS repeat count: the shape
of a DPAS C operand, one column per lane (shorter and narrower values: smaller power-of-two blocks, see
block_shape). A shape the blocks do not divide (13x37, or a tile_mma smaller than one DPAS) is padded: the
last blocks reach past it, as a 2D block message reaches past its surface. The padding is computed on and
never seen: stores and atomics write only each block's `valid` part, reductions mask it with their
identity, and DPAS with zeros along K. Every value of one shape is cut the same way, so element-wise ops and
loop-carried values need no regrouping. A tensor descriptor is cut like the values loaded through it
(swapped when the load transposes). DPAS runs on [M, K] x [K, N] blocks of the target's shape, accumulating
over the K blocks; a reduction reduces each block and folds the partial results element-wise. Where an op
needs other blocks than its operand has (DPAS A and B, transposes, stores), the operand is regrouped with
vector.insert/extract_strided_slice.
"""
from __future__ import annotations

from math import gcd

from ..ir import core_ops as C
from ..ir import xegpu_ops as G
from ..ir.analysis import UnionFind, carried_groups
from ..ir.conversion import converts
from ..ir.core import FuncOp, Value, walk
from ..ir.types import IndexType, VectorType, int32, uint8
from ..ir.verifier import verify
from ..ir.elementwise import reduce_identity
from .piecewise import Grid, PiecewiseConversion
from .targets import Target

REPEAT_COUNT = 8  # rows of a DPAS C block (M)


def padded(n: int, unit: int) -> int:
    """`n` rounded up to a multiple of `unit`, or, below it, to a power of two (which divides the unit)."""
    if n >= unit:
        return -(-n // unit) * unit
    return 1 << (n - 1).bit_length()


def padded_shape(shape, subgroup: int) -> tuple[int, int]:
    """The extent the blocks of a value cover: columns to a multiple of N (narrow ones to a power of two),
    rows to a multiple of the block height."""
    rows, cols = shape
    cols = padded(cols, subgroup)
    return padded(rows, REPEAT_COUNT if cols % subgroup == 0 else subgroup // cols), cols


def block_shape(shape, subgroup: int) -> tuple[int, int]:
    """[M, N] blocks, one column per lane, as a DPAS C operand; fewer rows for shorter values, and for narrow
    ones a power-of-two block of N elements, so that a lane holds 1 to N of them (SPIR-V vectors have 2, 4,
    8 or 16 components)."""
    rows, cols = padded_shape(shape, subgroup)
    if cols % subgroup == 0:
        return gcd(rows, REPEAT_COUNT), subgroup
    return gcd(rows, subgroup // cols), cols


def grid(shape, block) -> Grid:
    """The blocks covering `shape`; the last row and column of blocks may reach past it (padding)."""
    return Grid(tuple(-(-n // b) for n, b in zip(shape, block)), tuple(block))


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
            return grid(shape, self.transposed_block(shape[::-1], v.type.dtype)[::-1])
        return grid(shape, block_shape(shape, self.target.subgroup_size))

    def transposed_block(self, shape, dtype) -> tuple[int, int]:
        """The value blocks a transposed load reads: 16-bit data in [16, N] blocks where they fit, which a d32
        transposed message reads as pairs (to-llvm), as DPAS B takes them."""
        n = self.target.subgroup_size
        block = block_shape(shape, n)
        if dtype.bits == 16 and block == (REPEAT_COUNT, n) and padded_shape(shape, n)[0] % n == 0:
            return n, n
        return block

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
    @converts(G.LoadNdOp)
    def convert_LoadNdOp(self, op: G.LoadNdOp) -> None:
        src = self.grid_of(op.operands[0])
        self.grids[op.result] = Grid(src.counts[::-1], src.shape[::-1]) if op.transpose else src
        super().convert_LoadNdOp(op)

    @converts(G.StoreNdOp)
    def convert_StoreNdOp(self, op: G.StoreNdOp) -> None:
        value, tdesc = op.operands
        g = self.grid_of(tdesc)
        for piece, tile, origin in zip(self.pieces(value, g), self.get(tdesc), g.origins()):
            self.emit(G.StoreNdOp, piece, tile, valid_part(g, origin, tdesc.type.shape))

    @converts(G.AtomicRMWOp)
    def convert_AtomicRMWOp(self, op: G.AtomicRMWOp) -> None:
        value, tdesc = op.operands
        g = self.grid_of(tdesc)
        self.grids[op.result] = g
        self.set(op.result, [self.emit(G.AtomicRMWOp, op.kind, piece, tile, valid_part(g, origin, tdesc.type.shape)
                                       ).result
                             for piece, tile, origin in zip(self.pieces(value, g), self.get(tdesc), g.origins())])

    @converts(G.DpasOp)
    def convert_DpasOp(self, op: G.DpasOp) -> None:
        a, b, *c = op.operands
        m, n, k = self.target.dpas_shape(a.type.dtype)
        out = grid(op.result.type.shape, (m, n))
        steps = -(-a.type.shape[1] // k)
        blocks_a = self.zero_padded_k(a, Grid((out.counts[0], steps), (m, k)), 1)
        vnni = b.type.dtype if b.type.dtype.bits == 8 else None
        if vnni is None:
            blocks_b = self.zero_padded_k(b, Grid((steps, out.counts[1]), (k, n)), 0)
        else:
            blocks_b = self.vnni_packed(b, Grid((steps, out.counts[1]), (k, n)))
        blocks_c = self.pieces(c[0], out) if c else None
        piece = VectorType((m, n), op.result.type.dtype)
        results = []
        for i, j in out.cells():
            acc = blocks_c[out.index(i, j)] if c else None
            for kk in range(steps):
                acc = self.emit(G.DpasOp, blocks_a[i * steps + kk], blocks_b[kk * out.counts[1] + j], acc,
                                piece, vnni_b=vnni).result
            results.append(acc)
        self.grids[op.result] = out
        self.set(op.result, results)

    def vnni_packed(self, b: Value, g: Grid) -> list[Value]:
        """The [K, N] blocks `g` of 8-bit DPAS B as the hardware takes them: [K/4, N] words of four K rows (VNNI),
        built from [M, N] blocks (rows 4w..4w+3 make word row w), so that no lane holds more than 16 elements."""
        (steps, columns), (k, n) = g.counts, g.shape
        parts = k // REPEAT_COUNT
        blocks = self.zero_padded_k(b, Grid((steps * parts, columns), (REPEAT_COUNT, n)), 0)
        word_rows = [self.packed_words(block) for block in blocks]
        result = []
        for kk, j in g.cells():
            packed = self.emit(C.ConstantOp, 0, VectorType((k // 4, n), int32)).result
            for q in range(parts):
                part = word_rows[(kk * parts + q) * columns + j]
                packed = self.emit(C.InsertStridedSliceOp, part, packed, [q * REPEAT_COUNT // 4, 0]).result
            result.append(packed)
        return result

    def packed_words(self, block: Value) -> Value:
        """[R, N] of 8-bit data -> [R/4, N] of i32: word w = rows 4w..4w+3, the lowest row in the lowest byte."""
        (rows, n), dtype = block.type.shape, block.type.dtype
        shape = (rows // 4, n)
        words = None
        for byte in range(4):
            part = self.emit(C.ExtractStridedSliceOp, block, [byte, 0], shape, [4, 1]).result
            if dtype.kind == "i":
                part = self.emit(C.CastOp, "arith.bitcast", part, VectorType(shape, uint8)).result
            word = self.emit(C.CastOp, "arith.extui", part, VectorType(shape, int32)).result
            if byte:
                shift = self.emit(C.ConstantOp, 8 * byte, VectorType(shape, int32)).result
                word = self.emit(C.BinaryOp, "arith.shli", word, shift).result
            words = word if words is None else self.emit(C.BinaryOp, "arith.ori", words, word).result
        return words

    @converts(G.MultiReductionOp)
    def convert_MultiReductionOp(self, op: G.MultiReductionOp) -> None:
        """Each block reduces on its own, the partial results fold element-wise. f16 and bf16 reduce in f32
        and round once at the end, as the op does."""
        src = self.grid_of(op.operands[0])
        dtype = op.result.type.dtype
        blocks = [self.reduction_input(b) for b in self.get(op.operands[0])]
        out = Grid(tuple(1 if d in op.dims else n for d, n in enumerate(src.counts)),
                   tuple(1 if d in op.dims else n for d, n in enumerate(src.shape)))
        shape = op.operands[0].type.shape
        identity = reduce_identity(op.kind, blocks[0].type.dtype)
        blocks = [self.masked(block, origin, shape, op.dims, identity) for block, origin in zip(blocks, src.origins())]
        results = []
        for i, j in out.cells():
            group = [blocks[src.index(a, b)] for a, b in src.cells()
                     if (0 in op.dims or a == i) and (1 in op.dims or b == j)]
            partials = [self.emit(G.MultiReductionOp, op.kind, block, op.dims).result for block in group]
            results.append(self.float_cast(self.fold(op.kind, partials), dtype))
        self.grids[op.result] = out
        self.set(op.result, results)

    # ---- padding ---------------------------------------------------------------------------------
    def zero_padded_k(self, v: Value, g: Grid, k_dim: int) -> list[Value]:
        """DPAS operand blocks with the padding past K zeroed: it would otherwise add to the result."""
        return [self.masked(block, origin, v.type.shape, (k_dim,), 0)
                for block, origin in zip(self.pieces(v, g), g.origins())]

    def masked(self, block: Value, origin, shape, dims, fill) -> Value:
        """`block` (at `origin` in a value of `shape`) with the elements past the value's end along `dims` set
        to `fill`; `block` itself when it ends inside."""
        sizes = [max(0, min(b, n - o)) if d in dims else b
                 for d, (b, n, o) in enumerate(zip(block.type.shape, shape, origin))]
        if sizes == list(block.type.shape):
            return block
        mask = self.emit(C.ConstantMaskOp, sizes, block.type.shape).result
        padding = self.emit(C.ConstantOp, fill, block.type).result
        return self.emit(C.SelectOp, mask, block, padding).result



def valid_part(g: Grid, origin, shape) -> tuple[int, int] | None:
    """The leading part of the block at `origin` that lies inside `shape` (None: all of it)."""
    sizes = tuple(min(b, n - o) for b, n, o in zip(g.shape, shape, origin))
    return None if sizes == tuple(g.shape) else sizes


def block(func: FuncOp, target: Target) -> FuncOp:
    new = Blocking(func, target).run()
    verify(new)
    return new
