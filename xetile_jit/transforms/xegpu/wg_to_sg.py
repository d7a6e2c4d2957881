"""Workgroup -> subgroup distribution (XeGPU RFC "workgroup to subgroup distribution rule").

A workgroup-level tile or vector with layout (sg_layout L, sg_data D) over shape W becomes the pieces of
shape D that one subgroup owns. Along dim i, the subgroup's index j_i (from its linear id, in `order`)
owns offsets (j_i * D_i + r * L_i * D_i) mod W_i for r < max(1, W_i / (L_i * D_i)): round robin; when
L_i * D_i exceeds W_i the assignment wraps and subgroups share data, and D_i == W_i broadcasts it to all.
Ops then apply piece by piece. convert_layout goes through shared local memory between two barriers, as does a
vector.shape_cast that moves elements between rows (stored through a view of an SLM buffer in the source's shape,
loaded through one in the result's), and the value shape ops: a slice loads its pieces from the buffer shifted by its offsets,
a concat stores its second operand shifted by the first's extent, a flip stores each piece flipped (in the
subgroup's registers) at its mirrored offset. A roll rotates each piece in the subgroup's registers where the
pieces hold the whole axis, else stores them twice, one axis size apart, and loads from the shifted offsets.
Each such exchange takes a scratch buffer of its own, so that later passes move its stores past other exchanges'
barriers (exchange_stores.py), drop the barriers that then order nothing (needless_barriers.py) and let the buffers
that no window shares share memory (exchange_buffers.py); with `shared_scratch` (where those buffers outgrow the
target's shared local memory: compiler/pipeline.py) all exchanges of a dtype take one buffer, of its largest value.
An atomic on data that several subgroups share (a tile or a #scatter tile) is done by the first of them only,
which shares the old values through shared local memory when they are used. A reduction over dims
split between subgroups, or whose result has a layout of its own (not its input's with sg_data 1 along the
reduced dims), reduces each subgroup's pieces, then exchanges only these partial results through shared local
memory (f16/bf16 in f32, rounded once at the end, as the op does), which each subgroup loads in the result's
layout.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

from ...ir import core_ops as C
from ...ir import xegpu_ops as G
from ...ir import xegpu_scatter_ops as GS
from ...ir.analysis import wg_layout, workgroup_subgroups
from ...ir.attrs import Layout
from ...ir.conversion import converts
from ...ir.core import Block, Builder, FuncOp, Value, walk
from ...ir.debug_ops import DevicePrintOp
from ...ir.shape_ops import ConcatOp, FlipOp, MemRefReinterpretCastOp, RollOp, ShapeCastOp, SliceOp
from ...ir.types import IndexType, SlmMemRefType, VectorType
from ...ir.verifier import verify
from .piecewise import Grid, PiecewiseConversion
from ...target.targets import Target


@dataclass(frozen=True)
class Distribution(Grid):
    """The pieces of one (layout, shape) that the running subgroup owns."""

    offsets: tuple = ()   # per piece, row-major: (row, col) index values, relative to the workgroup tile
    wrapped: tuple = ()   # (start, extent) of the dims where subgroups share data


class WgToSg(PiecewiseConversion):
    # a convert_layout between subgroups is gone after this pass; one within a subgroup (instruction blocks only)
    # is left for blocking

    def __init__(self, func: FuncOp, target: Target, shared_scratch: bool = False):
        super().__init__(func)
        self.target = target
        self.subgroups = workgroup_subgroups(func)
        self.prologue = Block()
        self.early = Builder(self.prologue)
        self.sg_id = self.early.create(C.SubgroupIdOp).result
        self.constants: dict = {}  # index constants and prologue arithmetic, each emitted once
        self.indices: dict = {}
        self.distributions: dict = {}
        self.shared_scratch = shared_scratch
        self.scratch_buffers: dict = {}  # dtype -> its one scratch SlmAllocOp, with shared_scratch
        self.used = {v for op in walk(func.body) for v in op.operands}
        # the ops a loop may run again: an SLM buffer of their own is rewritten by the next iteration
        self.repeated = {nested for op in walk(func.body) if isinstance(op, (C.ForOp, C.WhileOp))
                         for region in op.regions for nested in walk(region.block)}

    def run(self) -> FuncOp:
        super().run()
        for i, op in enumerate(list(self.prologue.ops)):
            self.new.body.insert(i, op.detach())
        self.new.num_subgroups = self.subgroups
        self.subgroup_layouts()
        return self.new

    def subgroup_layouts(self) -> None:
        """Each piece keeps the subgroup level of its value's layout (inst_data, lanes: RFC distribution rule);
        the values this pass makes of its own (shared local memory traffic, partial reductions) take the target's
        default blocks."""
        for old, pieces in self.values.items():
            if has_layout(old) and wg_layout(old) is not None:
                for piece in pieces:
                    set_layout(piece, wg_layout(old).subgroup_level())
        for op in walk(self.new.body):
            for v in op.results:
                if has_layout(v) and wg_layout(v) is None:
                    set_layout(v, self.default_layout(v.type.shape))

    def default_layout(self, shape) -> Layout:
        inst = self.target.value_block(shape)
        lane_layout, lane_data = self.target.lane_fields(inst)
        return Layout(inst_data=inst, lane_layout=lane_layout, lane_data=lane_data)


    # ---- index arithmetic in the prologue (it only depends on the subgroup id) -----------------
    def const(self, n: int) -> Value:
        if n not in self.constants:
            self.constants[n] = self.early.create(C.ConstantOp, n, IndexType()).result
        return self.constants[n]

    def early_op(self, name: str, a: Value, b: int | Value) -> Value:
        """`a <name> b` in the prologue, computed once however many distributions need it."""
        key = (name, a, b)
        if key not in self.constants:
            operand = self.const(b) if isinstance(b, int) else b
            self.constants[key] = self.early.create(C.BinaryOp, name, a, operand).result
        return self.constants[key]

    def distribution(self, layout: Layout, shape) -> Distribution:
        key = (layout.workgroup_level(), tuple(shape))
        if key not in self.distributions:
            self.distributions[key] = self.distribute(layout, tuple(shape))
        return self.distributions[key]

    def subgroup_index(self, layout: Layout) -> list[Value]:
        """The subgroup's 2-D index in sg_layout; `order` lists the fastest-changing dim first."""
        (l0, l1), order = layout.sg_layout, layout.order or (1, 0)
        key = (layout.sg_layout, order)
        if key not in self.indices:
            if order == (1, 0):
                self.indices[key] = [self.early_op("arith.divsi", self.sg_id, l1),
                                     self.early_op("arith.remsi", self.sg_id, l1)]
            else:
                self.indices[key] = [self.early_op("arith.remsi", self.sg_id, l0),
                                     self.early_op("arith.divsi", self.sg_id, l0)]
        return self.indices[key]

    def distribute(self, layout: Layout, shape) -> Distribution:
        counts, starts, wrapped = [], [], []
        for j, n_sg, d, w in zip(self.subgroup_index(layout), layout.sg_layout, layout.sg_data, shape):
            unit = n_sg * d
            counts.append(max(1, w // unit))
            # a dim whole in every subgroup needs its start only to pick the owner among those that share it
            starts.append(self.early_op("arith.muli", j, d) if d != w or unit > w else None)
            if unit > w:
                wrapped.append((starts[-1], w))
        offsets = []
        for r0, r1 in itertools.product(range(counts[0]), range(counts[1])):
            offsets.append(tuple(self.piece_offset(s, r, n_sg * d, w, d) for s, r, n_sg, d, w in
                                 zip(starts, (r0, r1), layout.sg_layout, layout.sg_data, shape)))
        return Distribution(tuple(counts), tuple(layout.sg_data), tuple(offsets), tuple(wrapped))

    def piece_offset(self, start: Value | None, round: int, unit: int, extent: int, data: int) -> Value:
        """start + round * unit, wrapped into the tile only where the assignment can pass its end. Where every
        subgroup holds the whole extent, the offset is the constant 0, not a value of the subgroup id: what such
        pieces read is the same in every subgroup (an atomic's old values that one shares, so a loop on them is
        uniform: transforms/xegpu/barriers.py)."""
        if data == extent:
            return self.const(0)
        offset = self.early_op("arith.addi", start, round * unit) if round else start
        return self.early_op("arith.remsi", offset, extent) if unit > extent else offset

    def owner(self, dist: Distribution) -> Value:
        """i1: this subgroup is the first of those that share the data (its start lies inside the tile)."""
        flag = None
        for start, extent in dist.wrapped:
            first = self.early.create(C.CmpOp, "arith.cmpi", "slt", start, self.const(extent)).result
            flag = first if flag is None else self.early.create(C.BinaryOp, "arith.andi", flag, first).result
        return flag

    def grid_of(self, v: Value) -> Distribution:
        layout = wg_layout(v)
        if layout is None:
            raise NotImplementedError(f"wg-to-sg: {v.type} has no layout; run layout propagation first")
        return self.distribution(layout, v.type.shape)

    def result_layout(self, v: Value, piece: int):
        return None

    def piece_offsets(self, grid: Distribution) -> list[tuple[Value, Value]]:
        return list(grid.offsets)

    # ---- memory ----------------------------------------------------------------------------------
    @converts(G.AtomicRMWOp)
    def convert_AtomicRMWOp(self, op: G.AtomicRMWOp) -> None:
        dist = self.grid_of(op.operands[1])
        if not dist.wrapped:
            return self.clone(op)
        self.shared_atomics(op, dist, lambda: [
            self.emit(G.AtomicRMWOp, op.kind, value, tile, None, *compare).result
            for value, tile, *compare in zip(*(self.get(v) for v in [*op.operands[:2], *op.compare]))])

    @converts(GS.ScatterAtomicRMWOp)
    def convert_ScatterAtomicRMWOp(self, op: GS.ScatterAtomicRMWOp) -> None:
        dist = self.grid_of(op.operands[1])
        if not dist.wrapped:
            return super().convert_ScatterAtomicRMWOp(op)

        def atomics() -> list[Value]:
            super(WgToSg, self).convert_ScatterAtomicRMWOp(op)
            return self.get(op.result)

        self.shared_atomics(op, dist, atomics)

    def shared_atomics(self, op, dist: Distribution, atomics) -> None:
        """An atomic on data several subgroups hold updates each element once (XeTile RFC atomic_rmw_tile
        "atomically reads, modifies, and writes back data to the memory specified by the tile": the workgroup's
        tile, once): the first subgroup that holds it runs `atomics()` (which emits the atomics on its pieces, in
        `dist.offsets` order, and returns the old values); when the old values are used, it shares them with the
        others through shared local memory."""
        value_type = op.result.type
        slm = self.slm(value_type.dtype, value_type.shape) if op.result in self.used else None

        def owner_part():
            olds = atomics()
            if slm is not None:
                for old, offsets in zip(olds, dist.offsets):
                    self.slm_store(slm, old, offsets)

        self.only_owner(dist, owner_part)
        if slm is None:
            return self.set(op.result, [])
        self.emit(C.BarrierOp)
        olds = [self.slm_load(slm, offsets, dist.shape, value_type.dtype) for offsets in dist.offsets]
        self.buffer_read(op)
        self.set(op.result, olds)

    @converts(DevicePrintOp)
    def convert_DevicePrintOp(self, op: DevicePrintOp) -> None:
        """A vector several subgroups hold is printed by one of them."""
        dist = None if op.vector is None else self.grid_of(op.values[op.vector])
        if dist is None or not dist.wrapped:
            return super().convert_DevicePrintOp(op)
        self.only_owner(dist, lambda: super(WgToSg, self).convert_DevicePrintOp(op))

    def only_owner(self, dist: Distribution, body) -> None:
        """The ops `body()` emits, run by the first of the subgroups that share `dist`'s data (scf.if owner)."""
        then_block = Block()
        with self.builder.at_end_of(then_block):
            body()
            self.emit(C.YieldOp, [])
        else_block = Block()
        else_block.append(C.YieldOp([], loc=self.builder.loc))
        self.emit(C.IfOp, self.owner(dist), [], then_block, else_block)

    # ---- shared local memory ---------------------------------------------------------------------
    def buffer_read(self, op) -> None:
        """After the loads from the SLM buffer of `op`'s own: a barrier where a loop may run `op` again, whose
        stores would rewrite what another subgroup has yet to load. Elsewhere nothing writes that buffer again, so
        a barrier there orders nothing and only makes every subgroup wait for the slowest."""
        if op in self.repeated:
            self.emit(C.BarrierOp)

    def slm(self, dtype, shape) -> Value:
        return self.early.create(C.SlmAllocOp, SlmMemRefType(dtype, shape=tuple(shape))).result

    def scratch_buffer(self, dtype, count: int) -> C.SlmAllocOp:
        """The scratch buffer of `dtype`, of `count` elements at least, for the next exchange of a reshape or value
        shape op: a new one, or with `shared_scratch` the dtype's one, which holds the largest value that takes it."""
        alloc = self.scratch_buffers.get(dtype) if self.shared_scratch else None
        if alloc is None:
            alloc = self.early.create(C.SlmAllocOp, SlmMemRefType(dtype, shape=(1, count)))
            if self.shared_scratch:
                self.scratch_buffers[dtype] = alloc
        elif count > alloc.result.type.shape[1]:
            alloc.result.type = dataclasses.replace(alloc.result.type, shape=(1, count))
        return alloc

    def view(self, alloc: C.SlmAllocOp, shape) -> Value:
        """A row-major view in `shape` of scratch buffer `alloc`."""
        rows, cols = shape
        return self.early.create(MemRefReinterpretCastOp, alloc.result, [self.const(rows), self.const(cols)],
                                 [self.const(cols), self.const(1)], shape=(rows, cols)).result

    def scratch(self, dtype, shape) -> Value:
        """A view in `shape` of the next exchange's scratch buffer (`scratch_buffer`)."""
        return self.view(self.scratch_buffer(dtype, math.prod(shape)), shape)

    def slm_store(self, slm: Value, value: Value, offsets) -> None:
        tile = self.emit(G.CreateNdDescOp, slm, list(offsets), slm_tdesc_type(value.type.shape, value.type.dtype))
        self.emit(G.StoreNdOp, value, tile.result)

    def slm_load(self, slm: Value, offsets, shape, dtype, layout: Layout | None = None) -> Value:
        """The SLM block at `offsets`; in `layout` where given, else in the target's default (subgroup_layouts)."""
        tile = self.emit(G.CreateNdDescOp, slm, list(offsets), slm_tdesc_type(shape, dtype)).result
        value = self.emit(G.LoadNdOp, tile).result
        if layout is not None:
            set_layout(tile, layout)
            set_layout(value, layout)
        return value

    # ---- compute -----------------------------------------------------------------------------
    @converts(G.DpasOp)
    def convert_DpasOp(self, op: G.DpasOp) -> None:
        a, b, *c = (self.get(v) for v in op.operands)
        out = self.grid_of(op.result)
        if len(a) != out.counts[0] or len(b) != out.counts[1]:
            raise NotImplementedError("dpas whose K dimension is split between subgroups")
        piece = VectorType(out.shape, op.result.type.dtype)
        results = [self.emit(G.DpasOp, a[i], b[j], c[0][out.index(i, j)] if c else None, piece,
                             precision=op.precision).result
                   for i, j in out.cells()]
        self.set(op.result, results)

    @converts(G.MultiReductionOp)
    def convert_MultiReductionOp(self, op: G.MultiReductionOp) -> None:
        v = op.operands[0]
        layout, src = wg_layout(v), self.grid_of(v)
        split = [d for d in op.dims if layout.sg_layout[d] > 1 and layout.sg_data[d] < v.type.shape[d]]
        sliced = dataclasses.replace(layout.workgroup_level(), sg_data=tuple(
            1 if d in op.dims else n for d, n in enumerate(layout.sg_data)))
        if not split and all(src.counts[d] == 1 for d in op.dims) and \
                wg_layout(op.result).workgroup_level() == sliced:
            return self.pieces_from(op, lambda i, j: (0 if 0 in op.dims else i, 0 if 1 in op.dims else j))
        partials = self.local_partials(op)
        slm_shape = tuple(layout.sg_layout[d] if d in split else 1 if d in op.dims else n
                          for d, n in enumerate(v.type.shape))
        wide = partials[0][0].type.dtype
        slm = self.slm(wide, slm_shape)
        index = self.subgroup_index(layout)
        for partial, offsets in partials:
            self.slm_store(slm, partial, [index[d] if d in split else offsets[d] for d in range(2)])
        self.emit(C.BarrierOp)
        out = self.grid_of(op.result)
        results = []
        for offsets in out.offsets:
            shape = tuple(slm_shape[d] if d in op.dims else n for d, n in enumerate(out.shape))
            at = [self.const(0) if d in op.dims else offsets[d] for d in range(2)]
            partials = self.slm_load(slm, at, shape, wide, self.row_per_lane(shape, op.dims))
            total = self.emit(G.MultiReductionOp, op.kind, partials, op.dims).result
            results.append(self.float_cast(total, op.result.type.dtype))
        self.buffer_read(op)
        self.set(op.result, results)

    def row_per_lane(self, shape, dims) -> Layout | None:
        """The layout of the subgroups' partial results of a reduction along dim 1, read back from SLM ([rows,
        subgroups]): a row a lane, so that each lane reduces its row alone into the result's layout (a row a lane,
        the default of a column). With the default 4x4 lanes the partials went from lane to lane: the test GEMM's
        epilogue (256x256, subgroups [8, 4]) had 96 shuffles against 33, its driver build with AVX2 code took a
        fifth longer, and its PVC code 16 SLM loads against 4 (docs/performance.md "Driver builds"). None where
        the rows do not fill the lanes or the partials are no vector width."""
        lanes = self.target.subgroup_size
        if tuple(dims) != (1,) or shape[0] % lanes or shape[1] not in (2, 4, 8, 16):
            return None
        return Layout(inst_data=(lanes, shape[1]), lane_layout=(lanes, 1), lane_data=(1, shape[1]))

    def local_partials(self, op: G.MultiReductionOp) -> list[tuple[Value, tuple]]:
        """Per position along the kept dims: the subgroup's pieces there reduced and folded, and the offsets of
        the first of them."""
        src = self.grid_of(op.operands[0])
        groups: dict = {}
        for (i, j), piece, offsets in zip(src.cells(), self.get(op.operands[0]), src.offsets):
            reduced = self.emit(G.MultiReductionOp, op.kind, self.reduction_input(piece), op.dims).result
            key = (0 if 0 in op.dims else i, 0 if 1 in op.dims else j)
            groups.setdefault(key, (offsets, []))[1].append(reduced)
        return [(self.fold(op.kind, reduced), offsets) for offsets, reduced in groups.values()]

    @converts(G.XeGPUConvertLayoutOp)
    def convert_XeGPUConvertLayoutOp(self, op: G.XeGPUConvertLayoutOp) -> None:
        """Through SLM: every subgroup stores what it has, then loads what it needs; a conversion that keeps the
        pieces each subgroup owns (only inst_data or lanes change, or the layouts distribute alike) stays in each
        subgroup's registers."""
        v = op.operands[0]
        if wg_layout(v).distributes_like(op.result.layout, v.type.shape):
            level = op.result.layout.subgroup_level()
            self.set(op.result, [self.emit(G.XeGPUConvertLayoutOp, piece, level).result for piece in self.get(v)])
            return
        slm = self.slm(v.type.dtype, v.type.shape)
        self.exchange(v, op.result, slm, slm)

    @converts(ShapeCastOp)
    def convert_ShapeCastOp(self, op: ShapeCastOp) -> None:
        """vector.shape_cast keeps the elements in row-major order (XeGPU RFC vector ops on XeTile vectors) and
        moves them between rows, so between subgroups: every subgroup stores its pieces into a view of the scratch
        buffer in the source's shape, then loads its pieces of the result from a view in the result's shape (one
        row-major buffer, so the same elements in the same order)."""
        v = op.operands[0]
        buffer = self.scratch_buffer(v.type.dtype, math.prod(v.type.shape))
        self.exchange(v, op.result, self.view(buffer, v.type.shape), self.view(buffer, op.result.type.shape))

    @converts(SliceOp)
    def convert_SliceOp(self, op: SliceOp) -> None:
        v = op.operands[0]
        slm = self.scratch(v.type.dtype, v.type.shape)
        self.store_pieces(slm, self.get(v), self.grid_of(v).offsets)
        self.load_pieces(op.result, slm, [self.shifted(at, op.offsets) for at in self.grid_of(op.result).offsets])

    @converts(ConcatOp)
    def convert_ConcatOp(self, op: ConcatOp) -> None:
        a, b = op.operands
        slm = self.scratch(op.result.type.dtype, op.result.type.shape)
        shift = tuple(a.type.shape[d] if d == op.axis else 0 for d in range(2))
        self.store_pieces(slm, self.get(a), self.grid_of(a).offsets)
        self.store_pieces(slm, self.get(b), [self.shifted(offsets, shift) for offsets in self.grid_of(b).offsets])
        self.load_pieces(op.result, slm, self.grid_of(op.result).offsets)

    @converts(FlipOp)
    def convert_FlipOp(self, op: FlipOp) -> None:
        v, axis = op.operands[0], op.axis
        src = self.grid_of(v)
        slm = self.scratch(v.type.dtype, v.type.shape)
        last = v.type.shape[axis] - src.shape[axis]  # a piece at offset o lands at last - o
        flipped = [self.emit(FlipOp, piece, axis).result for piece in self.get(v)]
        mirrored = [tuple(self.early.create(C.BinaryOp, "arith.subi", self.const(last), o).result if d == axis else o
                          for d, o in enumerate(offsets)) for offsets in src.offsets]
        self.store_pieces(slm, flipped, mirrored)
        self.load_pieces(op.result, slm, self.grid_of(op.result).offsets)

    @converts(RollOp)
    def convert_RollOp(self, op: RollOp) -> None:
        """Piece by piece where each piece holds whole runs of the roll's span (source and result share a layout);
        else through SLM (`rotated`) where the pieces lie within the runs, and where they straddle them as two
        rotations of the whole axis and a select (`straddled`)."""
        v, axis = op.operands[0], op.axis
        src, span, size = self.grid_of(v), op.span, v.type.shape[op.axis]
        if src.shape[axis] % span == 0 and src == self.grid_of(op.result):
            self.set(op.result, [self.emit(RollOp, piece, op.shift, axis, span).result for piece in self.get(v)])
        elif span == size or span % src.shape[axis] == 0:
            self.set(op.result, self.rotated(v, (op.shift,), axis, span, self.grid_of(op.result))[0])
        else:
            self.set(op.result, self.straddled(op))

    def rotated(self, v: Value, shifts: tuple[int, ...], axis: int, span: int, out: Distribution) -> list[list[Value]]:
        """For each of `shifts`, the pieces of `out` of `v` rotated by it within runs of `span` that no piece
        straddles, through SLM: each run held twice over in a row of twice its length, every piece of `v` stored
        at its place in its run's first copy and in its second, and each piece of `out` loaded from the shift
        before its own place in the second copy (one store of `v` for every shift)."""
        src, size = self.grid_of(v), v.type.shape[axis]
        slm = self.scratch(v.type.dtype, [2 * n if d == axis else n for d, n in enumerate(v.type.shape)])
        first_copy = [self.doubled(offsets, axis, span, size) for offsets in src.offsets]
        self.store_pieces(slm, self.get(v), first_copy)
        self.store_pieces(slm, self.get(v), [self.shifted(at, self.on_axis(axis, span)) for at in first_copy])
        loads = [[self.shifted(self.doubled(at, axis, span, size), self.on_axis(axis, span - shift))
                  for at in out.offsets] for shift in shifts]
        pieces = self.loaded_pieces(slm, [at for each in loads for at in each], out.shape, v.type.dtype)
        return [pieces[i * len(out.offsets):(i + 1) * len(out.offsets)] for i in range(len(shifts))]

    def straddled(self, op: RollOp) -> list[Value]:
        """The pieces of a roll whose runs they straddle: position p's element is p - shift's, or, in the first
        `shift` positions of its run, p - shift + span's; so each result piece selects, by its positions, from
        the whole axis rotated by the shift and by the shift less the span (`rotated`: one store, two loads)."""
        v, axis, grid = op.operands[0], op.axis, self.grid_of(op.result)
        size, layout = v.type.shape[axis], wg_layout(op.result).subgroup_level()
        later, earlier = self.rotated(v, (op.shift, (op.shift - op.span) % size), axis, size, grid)
        results = []
        for offsets, late, early in zip(grid.offsets, later, earlier):
            positions = self.emit(C.IotaOp, offsets[axis], axis, grid.shape).result
            span, shift = (self.emit(C.ConstantOp, n, positions.type).result for n in (op.span, op.shift))
            in_run = self.emit(C.BinaryOp, "arith.remsi", positions, span).result
            first = self.emit(C.CmpOp, "arith.cmpi", "slt", in_run, shift).result
            results.append(self.emit(C.SelectOp, first, early, late).result)
            for value in (positions, span, shift, in_run, first, late, early):
                set_layout(value, layout)
        return results

    @staticmethod
    def on_axis(axis: int, n: int) -> tuple:
        return tuple(n if d == axis else 0 for d in range(2))

    def doubled(self, offsets, axis: int, span: int, size: int) -> tuple:
        """`offsets` in the SLM row that holds each run of `span` (of the axis' `size`) twice: the first copy of
        position o is at o plus the runs before it."""
        o = offsets[axis]
        if span == size:
            return tuple(offsets)
        moved = self.early_op("arith.addi", o, self.early_op("arith.subi", o, self.early_op("arith.remsi", o, span)))
        return tuple(moved if d == axis else x for d, x in enumerate(offsets))

    def shifted(self, offsets, shift) -> tuple:
        return tuple(self.early_op("arith.addi", o, n) if n else o for o, n in zip(offsets, shift))

    def exchange(self, v: Value, result: Value, stored: Value, loaded: Value) -> None:
        """`result` (`v`'s elements in its own layout) through SLM: `v`'s pieces stored into buffer `stored`,
        a barrier, `result`'s pieces loaded from `loaded` (that buffer, or a view of it)."""
        self.store_pieces(stored, self.get(v), self.grid_of(v).offsets)
        self.load_pieces(result, loaded, self.grid_of(result).offsets)

    def store_pieces(self, slm: Value, pieces, offsets) -> None:
        for value, at in zip(pieces, offsets):
            self.slm_store(slm, value, at)

    def load_pieces(self, result: Value, slm: Value, offsets) -> None:
        """`result`'s pieces from `slm` at `offsets` (`loaded_pieces`)."""
        self.set(result, self.loaded_pieces(slm, offsets, self.grid_of(result).shape, result.type.dtype))

    def loaded_pieces(self, slm: Value, offsets, shape, dtype) -> list[Value]:
        """Pieces of `shape` from `slm` at `offsets`, between two barriers: after the stores, and before the
        buffer is rewritten (by the next exchange, or by this one in a loop's next iteration); needless_barriers.py
        drops the second where another barrier comes first."""
        self.emit(C.BarrierOp)
        pieces = [self.slm_load(slm, at, shape, dtype) for at in offsets]
        self.emit(C.BarrierOp)
        return pieces


def slm_tdesc_type(shape, dtype) -> G.TensorDescType:
    """A descriptor of an exchange's SLM buffer: every piece stored or loaded lies inside it, so its accesses are
    not tested against the buffer's bounds (TensorDescType.boundary_check)."""
    return G.TensorDescType(tuple(shape), dtype, memory_space="slm", boundary_check=False)


def set_layout(v: Value, layout: Layout) -> None:
    """A descriptor's layout is in its type, a vector's on the value."""
    if isinstance(v.type, G.TensorDescType):
        v.type = dataclasses.replace(v.type, layout=layout)
    else:
        v.layout = layout


def has_layout(v: Value) -> bool:
    return isinstance(v.type, (VectorType, G.TensorDescType))


def wg_to_sg(func: FuncOp, target: Target, shared_scratch: bool = False) -> FuncOp:
    new = WgToSg(func, target, shared_scratch).run()
    verify(new)
    return new
