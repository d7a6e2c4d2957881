"""Lane distribution (XeGPU RFC "subgroup to work item distribution rule"): blocked subgroup IR -> work-item
(SIMT) IR, each block becoming the per-lane value of its lane layout (ir/simt_ops.py).

Loads, stores, atomics and DPAS take the SIMT flavor of their op. A reduction reduces each lane's elements,
then across the lanes of each cluster the reduced dim is spread over (clustered gpu.subgroup_reduce). Broadcasts and the
regrouping slices of blocking become per-lane vector.shuffle where every lane already holds what it needs,
and a lane_gather (static tables, lowered with subgroup shuffles) where data moves between lanes, as in a
transpose. DPAS runs in SIMT form for every operand type (f32 as multiply-adds, target/targets.py; 8-bit B comes
VNNI-packed from blocking).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...ir import core_ops as C
from ...ir import simt_ops as S
from ...ir import xegpu_ops as G
from ...ir import xegpu_scatter_ops as GS
from ...ir.attrs import Layout
from ...errors import CompilationError
from ...ir.conversion import Conversion, converts
from ...ir.core import FuncOp, Operation, Value
from ...ir.debug_ops import DevicePrintOp
from ...ir.shape_ops import FlipOp, RollOp
from ...ir.types import VectorType
from ...ir.verifier import verify
from ...target.targets import Target


class LaneDistribution(Conversion):
    dialect = "xegpu"
    legal = C.SHARED_OPS + (G.MemRefTransposeOp, G.MemRefSubviewOp, G.CreateNdDescOp, G.UpdateNdOffsetOp,
                            G.PrefetchNdOp)
    illegal = (G.LoadNdOp, G.StoreNdOp, G.AtomicRMWOp, G.DpasOp, G.MultiReductionOp, G.VectorBroadcastOp,
               G.VectorTransposeOp, C.ConstantMaskOp, C.ExtractStridedSliceOp, C.InsertStridedSliceOp)

    def __init__(self, func: FuncOp, target: Target):
        super().__init__(func)
        self.lanes = target.subgroup_size

    def run(self) -> FuncOp:
        super().run()
        self.new.num_subgroups = self.old.num_subgroups
        self.new.lanes = self.lanes
        return self.new

    def layout(self, v: Value) -> S.LaneLayout:
        """The block's lanes, as its layout's lane fields say (blocking wrote them for every block)."""
        layout = v.layout
        if layout is None or layout.lane_layout is None:
            raise CompilationError(f"lane distribution: {v.type} has no lane_layout; blocking must run first",
                                   v.owner.loc if isinstance(v.owner, Operation) else None)
        return S.LaneLayout(tuple(v.type.shape), self.lanes, layout.lane_layout, layout.lane_data)

    def result_type(self, v: Value, piece: int):
        return self.layout(v).lane_type(v.type.dtype) if isinstance(v.type, VectorType) else v.type

    def result_layout(self, v: Value, piece: int):
        return None

    # ---- data movement -----------------------------------------------------------------------------
    def source(self, old: Value) -> Source:
        layout = self.layout(old)
        return Source(self.one(old), layout.per_lane, layout.holder)

    def move(self, dst: Value, sources: list[Source], locate) -> None:
        """`dst` from `sources`: `locate(row, col)` gives the source index and (row, col) of each element of dst.
        A per-lane vector.shuffle when every lane holds what it needs and all lanes pick the same components,
        else a lane_gather; nothing at all when `dst` is the first source as it is."""
        layout = self.layout(dst)
        firsts = [sum(s.per_lane for s in sources[:i]) for i in range(len(sources))]
        lanes_table, components = [], []
        for lane in range(self.lanes):
            row_lanes, row_components = [], []
            for r, c in layout.elements(lane):
                index, (sr, sc) = locate(r, c)
                owner, component = sources[index].holder(lane, sr, sc)
                row_lanes.append(owner)
                row_components.append(firsts[index] + component)
            lanes_table.append(row_lanes)
            components.append(row_components)
        lanes_table, components = np.array(lanes_table).T, np.array(components).T
        operands = [s.value for s in sources]
        if not ((lanes_table == np.arange(self.lanes)).all() and (components == components[:, :1]).all()):
            t = self.result_type(dst, 0)
            self.set(dst, self.emit(S.LaneGatherOp, operands, t, lanes_table, components).result)
            return
        mask = components[:, 0].tolist()
        if len(sources) == 1 and mask == list(range(sources[0].per_lane)):
            self.set(dst, operands[0])
            return
        self.set(dst, self.emit(S.ShuffleOp, operands[0], operands[-1], mask).result)

    # ---- ops -----------------------------------------------------------------------------------
    @converts(C.ConstantOp)
    def convert_ConstantOp(self, op: C.ConstantOp) -> None:
        self.set(op.result, self.emit(C.ConstantOp, op.value, self.result_type(op.result, 0)).result)

    @converts(C.SplatOp)
    def convert_SplatOp(self, op: C.SplatOp) -> None:
        scalar = self.one(op.operands[0])
        t = self.result_type(op.result, 0)
        self.set(op.result, self.emit(C.SplatOp, scalar, t.shape).result if isinstance(t, VectorType) else scalar)

    @converts(C.IotaOp)
    def convert_IotaOp(self, op: C.IotaOp) -> None:
        self.set(op.result, self.emit(S.SimtIotaOp, self.one(op.operands[0]), op.dim, self.layout(op.result)).result)

    @converts(DevicePrintOp)
    def convert_DevicePrintOp(self, op: DevicePrintOp) -> None:
        if op.vector is None:
            return self.clone(op)
        values = [self.one(v) for v in op.values]
        self.emit(S.SimtPrintOp, op.prefix, values, [self.one(v) for v in op.origin], op.valid,
                  self.layout(op.values[op.vector]))

    @converts(G.LoadNdOp)
    def convert_LoadNdOp(self, op: G.LoadNdOp) -> None:
        new = self.emit(S.SimtLoadNdOp, self.one(op.operands[0]), self.layout(op.result), op.transpose, op.padding,
                        op.cache, op.valid)
        self.set(op.result, new.result)

    @converts(C.ConstantMaskOp)
    def convert_ConstantMaskOp(self, op: C.ConstantMaskOp) -> None:
        self.set(op.result, self.emit(S.SimtConstantMaskOp, op.sizes, self.layout(op.result)).result)

    @converts(G.StoreNdOp)
    def convert_StoreNdOp(self, op: G.StoreNdOp) -> None:
        value, tdesc = op.operands
        self.emit(S.SimtStoreNdOp, self.one(value), self.one(tdesc), self.layout(value), op.valid, op.cache)

    @converts(G.AtomicRMWOp)
    def convert_AtomicRMWOp(self, op: G.AtomicRMWOp) -> None:
        value, tdesc = op.operands[:2]
        new = self.emit(S.SimtAtomicRMWOp, op.kind, self.one(value), self.one(tdesc), self.layout(value), op.valid,
                        *map(self.one, op.compare))
        self.set(op.result, new.result)

    # ---- scattered descriptors: offsets, masks and values share the block's lane layout ----------------
    def scatter_layout(self, op, values) -> S.LaneLayout:
        """The one lane layout of a scattered access's offsets/mask/value blocks (they share one layout class)."""
        layouts = {self.layout(v) for v in values}
        if len(layouts) != 1:
            raise NotImplementedError(f"{op.name}: offsets, mask and value in different lane layouts")
        return layouts.pop()

    def simt_mask(self, op) -> Value | None:
        return self.one(op.mask[0]) if op.mask else None

    @converts(GS.CreateDescOp)
    def convert_CreateDescOp(self, op: GS.CreateDescOp) -> None:
        base, offsets = op.operands
        layout = self.layout(offsets)
        desc = GS.ScatterDescType(layout.block, op.result.type.dtype,
                                  Layout(lane_layout=layout.lane_layout, lane_data=layout.lane_data))
        self.set(op.result, self.emit(GS.CreateDescOp, self.one(base), self.one(offsets), desc, layout).result)

    def desc_layout(self, tdesc: Value) -> S.LaneLayout:
        t = self.one(tdesc).type
        return S.LaneLayout(tuple(t.shape), self.lanes, t.layout.lane_layout, t.layout.lane_data)

    @converts(GS.UpdateOffsetOp)
    def convert_UpdateOffsetOp(self, op: GS.UpdateOffsetOp) -> None:
        tdesc, delta = op.operands
        layout = self.scatter_layout(op, [delta])
        if layout != self.desc_layout(tdesc):
            raise NotImplementedError(f"{op.name}: delta in another lane layout than the offsets")
        self.set(op.result, self.emit(GS.UpdateOffsetOp, self.one(tdesc), self.one(delta), layout).result)

    @converts(GS.LoadGatherXOp)
    def convert_LoadGatherXOp(self, op: GS.LoadGatherXOp) -> None:
        layout = self.scatter_layout(op, [op.result] + op.mask)
        if layout != self.desc_layout(op.operands[0]):
            raise NotImplementedError(f"{op.name}: the value in another lane layout than the offsets")
        new = self.emit(GS.LoadGatherXOp, self.one(op.operands[0]), self.simt_mask(op),
                        layout.lane_type(op.result.type.dtype), op.padding, op.valid, layout)
        self.set(op.result, new.result)

    @converts(GS.StoreScatterXOp)
    def convert_StoreScatterXOp(self, op: GS.StoreScatterXOp) -> None:
        value, tdesc = op.operands[:2]
        layout = self.scatter_layout(op, [value] + op.mask)
        if layout != self.desc_layout(tdesc):
            raise NotImplementedError(f"{op.name}: the value in another lane layout than the offsets")
        self.emit(GS.StoreScatterXOp, self.one(value), self.one(tdesc), self.simt_mask(op), op.valid, layout)

    @converts(GS.ScatterAtomicRMWOp)
    def convert_ScatterAtomicRMWOp(self, op: GS.ScatterAtomicRMWOp) -> None:
        value, tdesc = op.operands[:2]
        layout = self.scatter_layout(op, [value] + op.mask)
        if layout != self.desc_layout(tdesc):
            raise NotImplementedError(f"{op.name}: the value in another lane layout than the offsets")
        new = self.emit(GS.ScatterAtomicRMWOp, op.kind, self.one(value), self.one(tdesc), self.simt_mask(op),
                        op.valid, layout)
        self.set(op.result, new.result)

    @converts(G.DpasOp)
    def convert_DpasOp(self, op: G.DpasOp) -> None:
        a, b, *c = op.operands
        layouts = (self.layout(a), self.layout(b), self.layout(op.result))
        new = self.emit(S.SimtDpasOp, self.one(a), self.one(b), self.one(c[0]) if c else None, layouts,
                        op.result.type.dtype, op.vnni_b, op.precision)
        self.set(op.result, new.result)

    @converts(G.MultiReductionOp)
    def convert_MultiReductionOp(self, op: G.MultiReductionOp) -> None:
        """Within each lane first, then across the lanes of each cluster sharing the reduced dim; the reduced
        values then move to the result's own layout."""
        v = op.operands[0]
        src = self.layout(v)
        value = self.one(v)
        lane_shape = src.lane_shape
        if any(lane_shape[d] > 1 for d in op.dims):
            value = self.emit(S.LaneReduceOp, op.kind, value, lane_shape, op.dims).result
        if not src.replicated:
            ly, lx, _ = src.grid
            if 1 in op.dims and lx > 1:
                value = self.emit(S.SubgroupReduceOp, op.kind, value, lx, 1).result
            if 0 in op.dims and ly > 1:
                value = self.emit(S.SubgroupReduceOp, op.kind, value, ly, lx).result
        reduced = tuple(1 if d in op.dims else n for d, n in enumerate(lane_shape))
        self.move(op.result, [Source(value, reduced[0] * reduced[1], reduced_holder(src, op.dims, reduced))],
                  lambda r, c: (0, (r, c)))

    @converts(G.VectorBroadcastOp)
    def convert_VectorBroadcastOp(self, op: G.VectorBroadcastOp) -> None:
        src_shape = op.operands[0].type.shape
        self.move(op.result, [self.source(op.operands[0])],
                     lambda r, c: (0, (0 if src_shape[0] == 1 else r, 0 if src_shape[1] == 1 else c)))

    @converts(G.VectorTransposeOp)
    def convert_VectorTransposeOp(self, op: G.VectorTransposeOp) -> None:
        self.move(op.result, [self.source(op.operands[0])], lambda r, c: (0, (c, r)))

    @converts(C.ExtractStridedSliceOp)
    def convert_ExtractStridedSliceOp(self, op: C.ExtractStridedSliceOp) -> None:
        (r0, c0), (sr, sc) = op.offsets, op.strides
        self.move(op.result, [self.source(op.operands[0])], lambda r, c: (0, (r0 + r * sr, c0 + c * sc)))

    @converts(FlipOp)
    def convert_FlipOp(self, op: FlipOp) -> None:
        rows, cols = op.result.type.shape
        self.move(op.result, [self.source(op.operands[0])],
                  lambda r, c: (0, (rows - 1 - r, c) if op.axis == 0 else (r, cols - 1 - c)))

    @converts(RollOp)
    def convert_RollOp(self, op: RollOp) -> None:
        at = op.source_position
        self.move(op.result, [self.source(op.operands[0])],
                  lambda r, c: (0, (at(r), c) if op.axis == 0 else (r, at(c))))

    @converts(C.InsertStridedSliceOp)
    def convert_InsertStridedSliceOp(self, op: C.InsertStridedSliceOp) -> None:
        src, dest = op.operands
        (r0, c0), (h, w) = op.offsets, src.type.shape

        def locate(r, c):
            inside = r0 <= r < r0 + h and c0 <= c < c0 + w
            return (1, (r - r0, c - c0)) if inside else (0, (r, c))
        self.move(op.result, [self.source(dest), self.source(src)], locate)


@dataclass(frozen=True)
class Source:
    """A per-lane value to move data from, and who holds which element of it."""

    value: Value
    per_lane: int
    holder: Callable[[int, int, int], tuple[int, int]]  # (lane, row, col) -> (lane, component)


def reduced_holder(src: S.LaneLayout, dims, reduced: tuple[int, int]):
    """Who holds element (row, col) of a reduction's result right after the lane and cluster reductions:
    along a reduced dim every lane of the cluster has it, so a lane takes its own copy."""
    def holder(lane: int, row: int, col: int) -> tuple[int, int]:
        if src.replicated:
            return lane, row * reduced[1] + col
        ly, lx, chunk = src.grid
        row_group = lane // lx if 0 in dims else row % ly
        column_group = lane % lx if 1 in dims else col // chunk
        index = (0 if 0 in dims else row // ly) * reduced[1] + (0 if 1 in dims else col % chunk)
        return row_group * lx + column_group, index
    return holder


def distribute_lanes(func: FuncOp, target: Target) -> FuncOp:
    new = LaneDistribution(func, target).run()
    verify(new)
    return new

