"""Blocking (XeGPU RFC "blocking rule"): subgroup-level ops -> instruction-size ops for the target.

A subgroup vector or tensor descriptor is cut into blocks of its layout's `inst_data`, which layout completion
wrote for the target (the default: Target.value_block, one column per lane as a DPAS C operand). A shape the
blocks do not divide (13x37, or a tile_mma smaller than one DPAS) is padded: the
last blocks reach past it, as a 2D block message reaches past its surface. The padding is computed on and
never seen: stores and atomics write only each block's `valid` part, loads name theirs too (what they read past it,
maybe another subgroup's elements, is no read for the checking interpreter), reductions mask it with their
identity, and DPAS with zeros along K. Values that must agree (loop-carried, element-wise operands) share one
layout and so one cut. A transposed load reads descriptor block (j, i) into value block (i, j). Every block
gets the lane fields of the target's distribution (Target.lane_fields). DPAS runs on [M, K] x [K, N] blocks
of the target's shape, accumulating over the K blocks; a reduction folds its blocks element-wise, then reduces the
folded block. Where an op needs other blocks than its operand has (DPAS A and B, transposes, stores,
a convert_layout within a subgroup), the operand is regrouped with vector.insert/extract_strided_slice.
"""
from __future__ import annotations

from ...ir import core_ops as C
from ...ir import xegpu_ops as G
from ...errors import CompilationError
from ...ir.attrs import Layout
from ...ir.conversion import converts
from ...ir.core import FuncOp, Operation, Value, walk
from ...ir.types import IndexType, VectorType, int32, uint8
from ...ir.shape_ops import FlipOp, RollOp
from ...ir.verifier import verify
from ...ir.elementwise import reduce_identity
from .piecewise import Grid, PiecewiseConversion
from ...target.targets import Target


def grid(shape, block) -> Grid:
    """The blocks covering `shape`; the last row and column of blocks may reach past it (padding)."""
    return Grid(tuple(-(-n // b) for n, b in zip(shape, block)), tuple(block))


def along(grid: Grid, cell: tuple[int, int], axis: int, k: int) -> int:
    """The index in `grid` of `cell` moved to block k (mod the blocks) along `axis`."""
    moved = list(cell)
    moved[axis] = k % grid.counts[axis]
    return grid.index(*moved)


class Blocking(PiecewiseConversion):
    illegal = (G.XeGPUConvertLayoutOp,)

    def __init__(self, func: FuncOp, target: Target):
        super().__init__(func)
        self.target = target
        self.grids: dict[Value, Grid] = {}  # values produced in another cut than their own inst_data

    def run(self) -> FuncOp:
        super().run()
        self.new.num_subgroups = self.old.num_subgroups
        self.lane_layouts()
        return self.new

    def lane_layouts(self) -> None:
        """Every block carries its lane fields (RFC: after blocking a layout keeps lane_layout and lane_data): a
        loaded block cut by its inst_data the ones completion gave it (convert_LoadNdOp), every other block the
        target's distribution of its shape, which completion held the user's lane fields to."""
        for op in walk(self.new.body):
            args = [a for region in op.regions for a in region.block.args]
            for v in op.results + args:
                if isinstance(v.type, VectorType) and (v.layout is None or v.layout.lane_layout is None):
                    lane_layout, lane_data = self.target.lane_fields(v.type.shape)
                    v.layout = Layout(lane_layout=lane_layout, lane_data=lane_data)

    # ---- how values are cut -------------------------------------------------------------------
    def default_grid(self, v: Value) -> Grid:
        """The value's own cut: its inst_data (layout completion wrote it, wg-to-sg kept it)."""
        layout = v.type.layout if isinstance(v.type, G.TensorDescType) else v.layout
        if layout is None or layout.inst_data is None:
            raise CompilationError(f"blocking: {v.type} has no inst_data; layout completion must run first",
                                   v.owner.loc if isinstance(v.owner, Operation) else None)
        return grid(v.type.shape, layout.inst_data)

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
        if len(parts) == 1 and [h - l for l, h in zip(*parts[0][2:])] == list(shape):  # inside one block
            block, start, lo, _ = parts[0]
            if tuple(have_shape) == tuple(shape):
                return block
            return self.emit(C.ExtractStridedSliceOp, block, [l - s for l, s in zip(lo, start)], list(shape)).result
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

    def valid_of(self, g: Grid, origin, shape):
        return valid_part(g, origin, shape)

    def produced(self, v: Value, g: Grid) -> None:
        self.grids[v] = g

    # ---- ops -------------------------------------------------------------------------------------
    @converts(G.LoadNdOp)
    def convert_LoadNdOp(self, op: G.LoadNdOp) -> None:
        src = self.grid_of(op.operands[0])
        got = Grid(src.counts[::-1], src.shape[::-1]) if op.transpose else src
        self.grids[op.result] = got
        super().convert_LoadNdOp(op)
        layout = op.result.layout
        if layout is not None and layout.lane_layout is not None and got.shape == tuple(layout.inst_data or ()):
            for block in self.get(op.result):
                block.layout = Layout(lane_layout=layout.lane_layout, lane_data=layout.lane_data)

    @converts(G.StoreNdOp)
    def convert_StoreNdOp(self, op: G.StoreNdOp) -> None:
        value, tdesc = op.operands
        g = self.grid_of(tdesc)
        for piece, tile, origin in zip(self.pieces(value, g), self.get(tdesc), g.origins()):
            self.emit(G.StoreNdOp, piece, tile, valid_part(g, origin, tdesc.type.shape), op.cache)

    @converts(G.AtomicRMWOp)
    def convert_AtomicRMWOp(self, op: G.AtomicRMWOp) -> None:
        value, tdesc = op.operands[:2]
        g = self.grid_of(tdesc)
        self.grids[op.result] = g
        self.set(op.result, [self.emit(G.AtomicRMWOp, op.kind, piece, tile, valid_part(g, origin, tdesc.type.shape),
                                       *compare).result
                             for piece, tile, origin, *compare in zip(self.pieces(value, g), self.get(tdesc),
                                                                      g.origins(), *(self.pieces(v, g)
                                                                                     for v in op.compare))])

    @converts(FlipOp)
    def convert_FlipOp(self, op: FlipOp) -> None:
        """Every block flips whole; result block at o along the axis then takes, from the flipped blocks, the
        elements x of the source it mirrors (x lands at size - 1 - x). Where the size is no multiple of the block,
        these straddle two blocks: they move in runs of power-of-two length, so that no lane holds a vector of a
        length SPIR-V lacks (a run of 5 rows is one of 4 and one of 1)."""
        v, axis, out = op.operands[0], op.axis, self.grid_of(op.result)
        flipped = [(self.emit(FlipOp, block, axis).result, start)
                   for block, start in zip(self.pieces(v, out), out.origins())]
        size, n = v.type.shape[axis], out.shape[axis]
        results = []
        for origin in out.origins():
            result = None
            for block, start in flipped:
                lo, hi = max(start[axis], size - origin[axis] - n, 0), min(start[axis] + n, size - origin[axis])
                if start[1 - axis] != origin[1 - axis] or lo >= hi:
                    continue
                if hi - lo == n:
                    result = block
                    continue
                if result is None:
                    result = self.emit(C.ConstantOp, 0, VectorType(out.shape, v.type.dtype)).result
                result = self.moved_runs(block, result, start[axis] + n - hi, size - hi - origin[axis], hi - lo, axis)
            results.append(result)
        self.set(op.result, results)

    @converts(RollOp)
    def convert_RollOp(self, op: RollOp) -> None:
        """Where a block holds whole runs of the roll's span, each block rolls in place. Else each block rolls by
        the shift within a block, then each result block takes the first part of its elements from one rolled
        block and the rest from the next of its run (a select on a constant mask): one lane shuffle and one select
        a block. Where the blocks pad the axis or straddle the runs, each result block gathers its elements in
        runs instead."""
        v, axis, out = op.operands[0], op.axis, self.grid_of(op.result)
        blocks, size, n, span = self.pieces(v, out), v.type.shape[axis], out.shape[axis], op.span
        if n % span == 0:
            return self.set(op.result, [self.emit(RollOp, block, op.shift, axis, span).result for block in blocks])
        if size % n or span % n:
            return self.set(op.result, self.gathered_roll(blocks, out, op))
        whole, part = divmod(op.shift, n)
        rolled = [self.emit(RollOp, block, part, axis).result if part else block for block in blocks]
        mask = self.emit(C.ConstantMaskOp, [part if d == axis else b for d, b in enumerate(out.shape)],
                         out.shape).result if part else None
        per_run, results = span // n, []
        for cell in out.cells():
            k = cell[axis]
            first = k - k % per_run
            this, before = (rolled[along(out, cell, axis, first + (k - first - whole - m) % per_run)] for m in (0, 1))
            results.append(self.emit(C.SelectOp, mask, before, this).result if part else this)
        self.set(op.result, results)

    def gathered_roll(self, blocks, out: Grid, op: RollOp) -> list[Value]:
        """The result blocks of `op` (whose axis the blocks pad, or whose runs they straddle), each built of runs
        of the source blocks' elements."""
        axis, size, span = op.axis, op.operands[0].type.shape[op.axis], op.span
        n, results = out.shape[axis], []
        for cell, origin in zip(out.cells(), out.origins()):
            result, at, valid = None, 0, min(n, size - origin[axis])
            while at < valid:
                p = origin[axis] + at
                q = op.source_position(p)       # the source position landing at `p`
                run = min(n - q % n, valid - at, span - q % span, span - p % span)
                block = blocks[along(out, cell, axis, q // n)]
                if run == n:
                    result = block
                else:
                    result = result or self.emit(C.ConstantOp, 0, VectorType(out.shape, block.type.dtype)).result
                    result = self.moved_runs(block, result, q % n, at, run, axis)
                at += run
            results.append(result)
        return results

    def moved_runs(self, source: Value, dest: Value, first: int, at: int, length: int, axis: int) -> Value:
        """`dest` with `length` rows (axis 0) or columns of `source` from index `first` inserted at `at`."""
        done = 0
        while done < length:
            run = 1 << ((length - done).bit_length() - 1)
            sizes = [run if d == axis else n for d, n in enumerate(source.type.shape)]
            part = self.emit(C.ExtractStridedSliceOp, source, [first + done if d == axis else 0 for d in range(2)],
                             sizes).result
            at_run = [at + done if d == axis else 0 for d in range(2)]
            dest = self.emit(C.InsertStridedSliceOp, part, dest, at_run).result
            done += run
        return dest

    @converts(G.DpasOp)
    def convert_DpasOp(self, op: G.DpasOp) -> None:
        a, b, *c = op.operands
        m, n, k = self.target.dpas_shape(a.type.dtype, op.precision)
        out = grid(op.result.type.shape, (m, n))
        steps = -(-a.type.shape[1] // k)
        blocks_a = self.zero_padded_k(a, Grid((out.counts[0], steps), (m, k)), 1)
        vnni = b.type.dtype if b.type.dtype.bits == 8 and not self.vnni_lanes(b, k) else None
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
                                piece, vnni_b=vnni, precision=op.precision).result
            results.append(acc)
        self.grids[op.result] = out
        self.set(op.result, results)

    def vnni_lanes(self, b: Value, k: int) -> bool:
        """Whether 8-bit B's own blocks already hold DPAS B blocks in the form the hardware takes: lanes of four K
        rows a word (lane_data [4, 1], read by VNNI-transform loads) in blocks of whole K steps, so that each DPAS
        block is a run of a lane's components, taken without repacking."""
        layout = b.layout
        return (layout is not None and tuple(layout.lane_layout or ()) == (1, self.target.subgroup_size)
                and tuple(layout.lane_data or ()) == (4, 1) and self.grid_of(b).shape[0] % k == 0)

    def vnni_packed(self, b: Value, g: Grid) -> list[Value]:
        """The [K, N] blocks `g` of 8-bit DPAS B as the hardware takes them: [K/4, N] words of four K rows (VNNI),
        built from [M, N] blocks (rows 4w..4w+3 make word row w), so that no lane holds more than 16 elements: for
        B whose blocks are not in that form already (vnni_lanes: a value other ops compute, odd shapes)."""
        (steps, columns), (k, n) = g.counts, g.shape
        rows = self.target.repeat_count
        parts = k // rows
        blocks = self.zero_padded_k(b, Grid((steps * parts, columns), (rows, n)), 0)
        word_rows = [self.packed_words(block) for block in blocks]
        result = []
        for kk, j in g.cells():
            packed = self.emit(C.ConstantOp, 0, VectorType((k // 4, n), int32)).result
            for q in range(parts):
                part = word_rows[(kk * parts + q) * columns + j]
                packed = self.emit(C.InsertStridedSliceOp, part, packed, [q * rows // 4, 0]).result
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

    @converts(G.XeGPUConvertLayoutOp)
    def convert_XeGPUConvertLayoutOp(self, op: G.XeGPUConvertLayoutOp) -> None:
        """A conversion between instruction blocks of one subgroup's piece: the blocks regrouped in registers."""
        self.set(op.result, self.pieces(op.operands[0], self.grid_of(op.result)))

    @converts(G.MultiReductionOp)
    def convert_MultiReductionOp(self, op: G.MultiReductionOp) -> None:
        """The blocks that reduce into one result block fold element-wise first, then that one block reduces:
        one reduction across lanes per result block, not one per block (a 1x2048 f32 row in 1x16 blocks: 128
        subgroup reductions before). f16 and bf16 reduce in f32 and round once at the end, as the op does."""
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
            folded = self.fold(op.kind, group)
            results.append(self.float_cast(self.emit(G.MultiReductionOp, op.kind, folded, op.dims).result, dtype))
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
