"""Lane distribution (XeGPU RFC "subgroup to work item distribution rule"): blocked subgroup IR -> work-item
(SIMT) IR, each block becoming the per-lane value of its lane layout (ir/simt_ops.py).

Loads, stores, atomics and DPAS take the SIMT flavor of their op. A reduction reduces each lane's elements,
then across the lanes (gpu.subgroup_reduce) when the reduced dim is spread over them. Broadcasts and the
regrouping slices of blocking become per-lane vector.shuffle where every lane already holds what it needs,
and a lane_gather (static tables, lowered with subgroup shuffles) where data moves between lanes, as in a
transpose. DPAS runs in SIMT form for f16, bf16 and f32 operands (f32 as multiply-adds, targets.py).
"""
from __future__ import annotations

import numpy as np

from ..ir import core_ops as C
from ..ir import simt_ops as S
from ..ir import xegpu_ops as G
from ..ir.conversion import Conversion
from ..ir.core import FuncOp, Value
from ..ir.types import VectorType
from ..ir.verifier import verify
from .targets import Target


class LaneDistribution(Conversion):
    dialect = "xegpu"

    def __init__(self, func: FuncOp, target: Target):
        super().__init__(func)
        self.lanes = target.subgroup_size

    def run(self) -> FuncOp:
        super().run()
        self.new.num_subgroups = self.old.num_subgroups
        self.new.lanes = self.lanes
        return self.new

    def layout(self, v: Value) -> S.LaneLayout:
        return S.lane_layout(v.type.shape, self.lanes)

    def result_type(self, v: Value, piece: int):
        return self.layout(v).lane_type(v.type.dtype) if isinstance(v.type, VectorType) else v.type

    def result_layout(self, v: Value, piece: int):
        return None

    # ---- data movement -----------------------------------------------------------------------------
    def tables(self, dst: Value, sources: list[Value], locate):
        """For each component of `dst` and each lane: the lane and the component (over the sources side by
        side) that hold it. `locate(row, col)` gives the source index and (row, col) of an element of dst;
        a lane takes its own copy where it has one."""
        layouts = [self.layout(s) for s in sources]
        firsts = [sum(lay.per_lane for lay in layouts[:i]) for i in range(len(layouts))]
        lanes_table, components = [], []
        for lane in range(self.lanes):
            row_lanes, row_components = [], []
            for r, c in lane_elements(self.layout(dst), lane):
                index, (sr, sc) = locate(r, c)
                owner, component = holder(layouts[index], lane, sr, sc)
                row_lanes.append(owner)
                row_components.append(firsts[index] + component)
            lanes_table.append(row_lanes)
            components.append(row_components)
        return np.array(lanes_table).T, np.array(components).T

    def move(self, dst: Value, sources: list[Value], locate) -> None:
        """`dst` from `sources`: a per-lane vector.shuffle when every lane holds what it needs and all lanes
        pick the same components, else a lane_gather; nothing at all when `dst` is `sources[0]` as it is."""
        lanes_table, components = self.tables(dst, sources, locate)
        operands = [self.one(s) for s in sources]
        local = (lanes_table == np.arange(self.lanes)).all() and (components == components[:, :1]).all()
        if not local:
            t = self.result_type(dst, 0)
            self.set(dst, self.emit(S.LaneGatherOp, operands, t, lanes_table, components).result)
            return
        mask = components[:, 0].tolist()
        if len(sources) == 1 and mask == list(range(self.layout(sources[0]).per_lane)):
            self.set(dst, operands[0])
            return
        self.set(dst, self.emit(S.ShuffleOp, operands[0], operands[-1], mask).result)

    # ---- ops -----------------------------------------------------------------------------------
    def convert_ConstantOp(self, op: C.ConstantOp) -> None:
        self.set(op.result, self.emit(C.ConstantOp, op.value, self.result_type(op.result, 0)).result)

    def convert_SplatOp(self, op: C.SplatOp) -> None:
        scalar = self.one(op.operands[0])
        t = self.result_type(op.result, 0)
        self.set(op.result, self.emit(C.SplatOp, scalar, t.shape).result if isinstance(t, VectorType) else scalar)

    def convert_LoadNdOp(self, op: G.LoadNdOp) -> None:
        new = self.emit(S.SimtLoadNdOp, self.one(op.operands[0]), self.layout(op.result), op.transpose, op.padding)
        self.set(op.result, new.result)

    def convert_StoreNdOp(self, op: G.StoreNdOp) -> None:
        value, tdesc = op.operands
        self.emit(S.SimtStoreNdOp, self.one(value), self.one(tdesc), self.layout(value))

    def convert_AtomicRMWOp(self, op: G.AtomicRMWOp) -> None:
        value, tdesc = op.operands
        new = self.emit(S.SimtAtomicRMWOp, op.kind, self.one(value), self.one(tdesc), self.layout(value))
        self.set(op.result, new.result)

    def convert_DpasOp(self, op: G.DpasOp) -> None:
        a, b, *c = op.operands
        if a.type.dtype.is_int:
            raise NotImplementedError(f"DPAS on {a.type.dtype} operands at the work-item level (the packed "
                                      "32-element B operand of 8-bit DPAS is not distributed yet)")
        layouts = (self.layout(a), self.layout(b), self.layout(op.result))
        new = self.emit(S.SimtDpasOp, self.one(a), self.one(b), self.one(c[0]) if c else None, layouts,
                        op.result.type.dtype)
        self.set(op.result, new.result)

    def convert_MultiReductionOp(self, op: G.MultiReductionOp) -> None:
        v = op.operands[0]
        src = self.layout(v)
        rows, cols = v.type.shape
        lane_shape = (rows, cols // self.lanes) if src.columns else (rows, cols)
        value = self.one(v)
        if any(lane_shape[d] > 1 for d in op.dims):
            value = self.emit(S.LaneReduceOp, op.kind, value, lane_shape, op.dims).result
        if src.columns and 1 in op.dims:  # the columns are spread over the lanes
            value = self.emit(S.SubgroupReduceOp, op.kind, value).result
        self.set(op.result, value)

    def convert_VectorBroadcastOp(self, op: G.VectorBroadcastOp) -> None:
        src_shape = op.operands[0].type.shape
        self.move(op.result, [op.operands[0]],
                     lambda r, c: (0, (0 if src_shape[0] == 1 else r, 0 if src_shape[1] == 1 else c)))

    def convert_VectorTransposeOp(self, op: G.VectorTransposeOp) -> None:
        self.move(op.result, [op.operands[0]], lambda r, c: (0, (c, r)))

    def convert_ExtractStridedSliceOp(self, op: C.ExtractStridedSliceOp) -> None:
        r0, c0 = op.offsets
        self.move(op.result, [op.operands[0]], lambda r, c: (0, (r + r0, c + c0)))

    def convert_InsertStridedSliceOp(self, op: C.InsertStridedSliceOp) -> None:
        src, dest = op.operands
        (r0, c0), (h, w) = op.offsets, src.type.shape

        def locate(r, c):
            inside = r0 <= r < r0 + h and c0 <= c < c0 + w
            return (1, (r - r0, c - c0)) if inside else (0, (r, c))
        self.move(op.result, [dest, src], locate)


def lane_elements(layout: S.LaneLayout, lane: int):
    """The (row, col) of each per-lane component of `lane`, in component order."""
    rows, cols = layout.block
    if layout.columns:
        k = cols // layout.lanes
        return [(r, lane * k + e) for r in range(rows) for e in range(k)]
    return [(r, c) for r in range(rows) for c in range(cols)]


def holder(layout: S.LaneLayout, lane: int, row: int, col: int) -> tuple[int, int]:
    """The lane and component that hold element (row, col); `lane` itself when every lane has it."""
    rows, cols = layout.block
    if not layout.columns:
        return lane, row * cols + col
    k = cols // layout.lanes
    return col // k, row * k + col % k


def distribute_lanes(func: FuncOp, target: Target) -> FuncOp:
    new = LaneDistribution(func, target).run()
    verify(new)
    return new

