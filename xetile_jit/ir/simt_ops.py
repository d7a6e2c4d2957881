"""Work-item (SIMT) level: per-lane values and the XeGPU ops in their SIMT flavor (XeGPU RFC: with a lane
layout attached, load/store/dpas operate per work item).

A block of shape [R, C] lives in the lanes of a subgroup of N lanes in one of two lane layouts:
- `columns` when N divides C: lane l holds columns l*k .. l*k+k-1 (k = C/N) of every row, row-major, so a
  per-lane vector of R*k elements. With k = 1 this is the RFC's lane_layout [1, N], lane_data [1, 1] and
  the layout of DPAS C and of 2D block messages (component = row, lane = column); k = 2 is DPAS int8 A.
- `replicated` otherwise: every lane holds the whole block, row-major (the RFC's `slice` of a reduction:
  squeezed lanes share the value).
In the interpreter a per-lane value is an array with a leading lane axis (N, elements); uniform values
(offsets, descriptors, loop bounds) are plain scalars.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import numeric
from .core import Operation, Value
from .types import DType, ScalarType, VectorType
from .xetile_ops import ATOMIC_KINDS, REDUCE_KINDS, TileRef, mma_accumulator_dtype


def elements(t) -> int:
    return t.shape[0] if isinstance(t, VectorType) else 1


def to_lanes(x, count: int, lanes: int) -> np.ndarray:
    """A per-lane value as a (lanes, count) array; a uniform value (no lane axis) is repeated in every lane."""
    x = np.asarray(x)
    if count == 1:
        return x.reshape(lanes, 1) if x.ndim == 1 else np.full((lanes, 1), x)
    return x if x.ndim == 2 else np.broadcast_to(x, (lanes, count))


@dataclass(frozen=True)
class LaneLayout:
    block: tuple[int, int]
    lanes: int

    @property
    def columns(self) -> bool:
        return self.block[1] % self.lanes == 0

    @property
    def per_lane(self) -> int:
        rows, cols = self.block
        return rows * cols // self.lanes if self.columns else rows * cols

    def lane_type(self, dtype: DType):
        return ScalarType(dtype) if self.per_lane == 1 else VectorType((self.per_lane,), dtype)

    def distribute(self, block: np.ndarray) -> np.ndarray:
        """[R, C] block -> (lanes, per_lane) array."""
        rows, cols = self.block
        if self.columns:
            k = cols // self.lanes
            return np.ascontiguousarray(block.reshape(rows, self.lanes, k).transpose(1, 0, 2).reshape(self.lanes, -1))
        return np.ascontiguousarray(np.broadcast_to(block.reshape(1, -1), (self.lanes, rows * cols)))

    def gather(self, per_lane: np.ndarray) -> np.ndarray:
        """(lanes, per_lane) array -> [R, C] block (lane 0's copy for a replicated block)."""
        rows, cols = self.block
        data = to_lanes(per_lane, self.per_lane, self.lanes)
        if self.columns:
            return np.ascontiguousarray(data.reshape(self.lanes, rows, cols // self.lanes).transpose(1, 0, 2)
                                        .reshape(rows, cols))
        return data[0].reshape(rows, cols)


def lane_layout(block, lanes: int) -> LaneLayout:
    return LaneLayout(tuple(block), lanes)


class SimtLoadNdOp(Operation):
    """xegpu.load_nd, SIMT flavor: each lane receives its part of the block (transposed first if asked)."""

    name = "xegpu.load_nd"

    def __init__(self, tdesc: Value, layout: LaneLayout, transpose=None, padding=0, loc=None):
        super().__init__([tdesc], [layout.lane_type(tdesc.type.dtype)], loc=loc)
        self.layout, self.transpose, self.padding = layout, transpose, padding

    def format(self, p) -> str:
        attrs = {"transpose": list(self.transpose)} if self.transpose else {}
        if self.padding != 0:
            attrs["padding"] = self.padding
        t = self.operands[0]
        return f" {p.name(t)}{p.attr_dict(self, attrs)} : {t.type} -> {self.result.type}"

    def interpret(self, interp, tile: TileRef):
        block = tile.load(self.padding)
        return self.layout.distribute(block.T if self.transpose else block)


class SimtStoreNdOp(Operation):
    name = "xegpu.store_nd"

    def __init__(self, value: Value, tdesc: Value, layout: LaneLayout, loc=None):
        super().__init__([value, tdesc], [], loc=loc)
        self.layout = layout

    def format(self, p) -> str:
        value, t = self.operands
        return f" {p.name(value)}, {p.name(t)} : {value.type}, {t.type}"

    def interpret(self, interp, value, tile: TileRef):
        tile.store(self.layout.gather(value))


class SimtAtomicRMWOp(Operation):
    """xegpu.atomic_rmw, SIMT flavor; the rule is the XeTile op's (ATOMIC_KINDS)."""

    name = "xegpu.atomic_rmw"

    def __init__(self, kind: str, value: Value, tdesc: Value, layout: LaneLayout, loc=None):
        super().__init__([value, tdesc], [value.type], loc=loc)
        self.kind, self.layout = kind, layout

    def format(self, p) -> str:
        value, t = self.operands
        kind = ATOMIC_KINDS[self.kind][t.type.dtype.kind][0]
        return f" <{kind}> {p.name(value)}, {p.name(t)} : {value.type}, {t.type} -> {self.result.type}"

    def interpret(self, interp, value, tile: TileRef):
        old = tile.load(0)
        dtype = self.operands[1].type.dtype
        tile.store(numeric.apply(dtype, ATOMIC_KINDS[self.kind][dtype.kind][1], old, self.layout.gather(value)))
        return self.layout.distribute(old)


class SimtDpasOp(Operation):
    """xegpu.dpas, SIMT flavor: A [M, K], B [K, N], C [M, N] in their lane layouts (reference note §1.3)."""

    name = "xegpu.dpas"

    def __init__(self, a: Value, b: Value, c: Value | None, layouts: tuple[LaneLayout, LaneLayout, LaneLayout],
                 result_dtype: DType, loc=None):
        super().__init__([a, b] + ([c] if c is not None else []), [layouts[2].lane_type(result_dtype)], loc=loc)
        self.layouts = layouts

    def verify(self):
        a, b, *_ = self.operands
        if mma_accumulator_dtype(a.type.dtype, b.type.dtype) is None:
            raise self.error("unsupported operand types", "tile_mma operand element types")

    def format(self, p) -> str:
        names = ", ".join(p.name(v) for v in self.operands)
        return f" {names} : {', '.join(str(v.type) for v in self.operands)} -> {self.result.type}"

    def interpret(self, interp, a, b, c=None):
        la, lb, lc = self.layouts
        acc = self.result.type.dtype
        wide = np.float32 if acc.is_float else np.int64
        out = la.gather(a).astype(wide) @ lb.gather(b).astype(wide)
        if c is not None:
            out = out + lc.gather(c)
        return lc.distribute(out.astype(acc.np_dtype))


class ShuffleOp(Operation):
    """vector.shuffle: result[i] = concat(a, b)[mask[i]], within each lane."""

    name = "vector.shuffle"

    def __init__(self, a: Value, b: Value, mask, loc=None):
        mask = tuple(mask)
        t = ScalarType(a.type.dtype) if len(mask) == 1 else VectorType((len(mask),), a.type.dtype)
        super().__init__([a, b], [t], loc=loc)
        self.mask = mask

    def format(self, p) -> str:
        a, b = self.operands
        return f" {p.name(a)}, {p.name(b)} {list(self.mask)} : {a.type}, {b.type} -> {self.result.type}"

    def interpret(self, interp, a, b):
        both = np.concatenate([to_lanes(x, elements(v.type), interp.lanes) for x, v in zip((a, b), self.operands)],
                              axis=1)
        out = both[:, list(self.mask)]
        return out[:, 0] if len(self.mask) == 1 else out


class LaneReduceOp(Operation):
    """vector.multi_reduction within each lane: the lane's elements seen as `shape`, reduced over `dims`."""

    name = "vector.multi_reduction"

    def __init__(self, kind: str, v: Value, shape, dims, loc=None):
        shape, dims = tuple(shape), tuple(dims)
        kept = [n for d, n in enumerate(shape) if d not in dims]
        count = int(np.prod(kept)) if kept else 1
        t = ScalarType(v.type.dtype) if count == 1 else VectorType((count,), v.type.dtype)
        super().__init__([v], [t], loc=loc)
        self.kind, self.shape, self.dims = kind, shape, dims

    def format(self, p) -> str:
        v = self.operands[0]
        kind = REDUCE_KINDS[self.kind][v.type.dtype.kind][0]
        return (f" <{kind}> {p.name(v)} {list(self.dims)} {{shape = {list(self.shape)}}} : {v.type} "
                f"to {self.result.type}")

    def interpret(self, interp, v):
        dtype = self.operands[0].type.dtype
        data = to_lanes(v, elements(self.operands[0].type), interp.lanes).reshape((interp.lanes,) + self.shape)
        wide = data.astype(np.float32) if dtype.is_float else data
        with np.errstate(all="ignore"):
            out = REDUCE_KINDS[self.kind][dtype.kind][1](wide, axis=tuple(d + 1 for d in self.dims))
        out = out.reshape(interp.lanes, -1).astype(dtype.np_dtype)
        return out[:, 0] if out.shape[1] == 1 else out


class SubgroupReduceOp(Operation):
    """gpu.subgroup_reduce: every lane gets the reduction of the value over all lanes, element by element."""

    name = "gpu.subgroup_reduce"

    def __init__(self, kind: str, v: Value, loc=None):
        super().__init__([v], [v.type], loc=loc)
        self.kind = kind

    def format(self, p) -> str:
        v = self.operands[0]
        return f" {REDUCE_KINDS[self.kind][v.type.dtype.kind][0]} {p.name(v)} : ({v.type}) -> {v.type}"

    def interpret(self, interp, v):
        t = self.operands[0].type
        data = to_lanes(v, elements(t), interp.lanes)
        wide = data.astype(np.float32) if t.dtype.is_float else data
        with np.errstate(all="ignore"):
            out = REDUCE_KINDS[self.kind][t.dtype.kind][1](wide, axis=0).astype(t.dtype.np_dtype)
        out = np.ascontiguousarray(np.broadcast_to(out, data.shape))
        return out[:, 0] if elements(t) == 1 else out


class LaneGatherOp(Operation):
    """Moves data between lanes by static tables: result component c of lane l is component
    `components[c][l]` (counted over the sources set side by side) of lane `source_lanes[c][l]`.
    Lowered with subgroup shuffles."""

    name = "xegpu.lane_gather"

    def __init__(self, sources, result_type, source_lanes, components, loc=None):
        super().__init__(list(sources), [result_type], loc=loc)
        self.source_lanes = np.asarray(source_lanes, dtype=np.int64)
        self.components = np.asarray(components, dtype=np.int64)

    def verify(self):
        if self.source_lanes.shape != self.components.shape or self.source_lanes.shape[0] != elements(self.result.type):
            raise self.error("tables must give a lane and a component for each result component of each lane",
                             "lane_gather tables")

    def format(self, p) -> str:
        names = ", ".join(p.name(v) for v in self.operands)
        return (f" {names} {{source_lanes = {self.source_lanes.tolist()}, components = {self.components.tolist()}}}"
                f" : {', '.join(str(v.type) for v in self.operands)} -> {self.result.type}")

    def interpret(self, interp, *sources):
        both = np.concatenate([to_lanes(x, elements(v.type), interp.lanes) for x, v in zip(sources, self.operands)],
                              axis=1)
        out = both[self.source_lanes.T, self.components.T]
        return out[:, 0] if out.shape[1] == 1 else out
