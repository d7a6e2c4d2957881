"""Work-item (SIMT) level: per-lane values and the XeGPU ops in their SIMT flavor (XeGPU RFC: with a lane
layout attached, load/store/dpas operate per work item).

A block of shape [R, C] lives in the lanes of a subgroup of N lanes by the RFC's lane_layout [ly, lx]:
lane l = ly_index * lx + lx_index holds the rows r = ly_index + ly * i and, of each, `chunk` columns from
lx_index * chunk (lane_data [1, chunk]); its components run over those rows, then the chunk.
The lane fields come from the block's layout (blocking writes the target's rule, Target.lane_fields):
- [1, N] with chunk C/N when N divides C. With chunk 1 this is the layout of DPAS C and of 2D block
  messages (component = row, lane = column); chunk 2 is DPAS int8 A.
- [N/C, C] with chunk 1 when C divides N and N/C divides R (a narrow block spreads its rows over lanes).
- [1, 1]: the block is `replicated`: every lane holds all of it, row-major (the RFC's `slice` of a
  reduction: squeezed lanes share the value).
A block wider than lx * chunk repeats the lanes' columns in `column_groups` side by side (the RFC's lane layout
tiling its block): a lane's components run over the groups first, then the rows, then the chunk. This is how a
2D block load of an array of blocks (array length > 1) fills a lane, and each group's rows are a run of
components, so a DPAS operand block inside it is a plain slice (layout completion gives such layouts only to
values that are loaded and regrouped, never computed on).
In the interpreter a per-lane value is an array with a leading lane axis (N, elements); uniform values
(offsets, descriptors, loop bounds) are plain scalars.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import numeric
from .attrs import Layout
from .core import Operation, Value, walk
from .cache_hints import CacheHints, hint_attrs
from .debug_ops import DevicePrintOp
from .effects import reads, writes
from .types import DType, ScalarType, VectorType, bool_, int32
from .xegpu_ops import vnni_unpack
from .elementwise import REDUCE_KINDS
from .xetile_ops import (AtomicRMWTileOp, TileRef, check_compare, check_precision, format_atomic,
                         mma_accumulator_dtype, parse_atomic, precision_attrs, valid_attr, valid_of)


def elements(t) -> int:
    return t.shape[0] if isinstance(t, VectorType) else 1


def per_lane_form(array: np.ndarray) -> np.ndarray:
    """A (lanes, n) array as the interpreter holds a per-lane value: (lanes,) when each lane has one element
    (a scalar per lane), so that it combines element-wise with every other one-element value."""
    return array[:, 0] if array.shape[1] == 1 else array


def to_lanes(x, count: int, lanes: int) -> np.ndarray:
    """A per-lane value as a (lanes, count) array; a uniform value (no lane axis) is repeated in every lane."""
    x = np.asarray(x)
    if count == 1:
        return x.reshape(lanes, 1) if x.ndim == 1 else np.full((lanes, 1), x)
    return x if x.ndim == 2 else np.broadcast_to(x, (lanes, count))


@dataclass(frozen=True)
class LaneLayout:
    """A block's lane fields (from its layout: the target's rule, Target.lane_fields) as lanes hold it."""

    block: tuple[int, int]
    lanes: int
    lane_layout: tuple[int, int]
    lane_data: tuple[int, int]

    @property
    def grid(self) -> tuple[int, int, int] | None:
        """(ly, lx, chunk), or None for a replicated block (lane_layout [1, 1])."""
        (ly, lx), (_, chunk) = self.lane_layout, self.lane_data
        return None if ly * lx == 1 else (ly, lx, chunk)

    @property
    def replicated(self) -> bool:
        return self.grid is None

    @property
    def per_lane(self) -> int:
        rows, cols = self.block
        return rows * cols if self.replicated else rows * cols // self.lanes

    @property
    def column_groups(self) -> int:
        """Repetitions of the lanes' lx * chunk columns across the block (1 for a replicated block)."""
        if self.replicated:
            return 1
        _, lx, chunk = self.grid
        return self.block[1] // (lx * chunk)

    @property
    def lane_shape(self) -> tuple[int, int]:
        """A lane's elements as a grid: its rows by its columns."""
        if self.replicated:
            return self.block
        if self.column_groups > 1:
            raise NotImplementedError("a lane's elements as a grid in a block of several column groups (a loaded "
                                      "array of blocks is only regrouped)")
        ly, _, chunk = self.grid
        return self.block[0] // ly, chunk

    def lane_type(self, dtype: DType):
        return ScalarType(dtype) if self.per_lane == 1 else VectorType((self.per_lane,), dtype)

    def elements(self, lane: int) -> list[tuple[int, int]]:
        """The (row, col) of each component of `lane`, in component order."""
        rows, cols = self.block
        if self.replicated:
            return [(r, c) for r in range(rows) for c in range(cols)]
        ly, lx, chunk = self.grid
        first_row, first_col = lane // lx, lane % lx * chunk
        return [(first_row + ly * i, g * lx * chunk + first_col + e) for g in range(self.column_groups)
                for i in range(rows // ly) for e in range(chunk)]

    def holder(self, lane: int, row: int, col: int) -> tuple[int, int]:
        """The lane and component that hold element (row, col); `lane` itself when every lane has it."""
        if self.replicated:
            return lane, row * self.block[1] + col
        ly, lx, chunk = self.grid
        group, col = divmod(col, lx * chunk)
        first = group * self.block[0] // ly * chunk
        return row % ly * lx + col // chunk, first + row // ly * chunk + col % chunk

    def indices(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols) index arrays of shape (lanes, per_lane), read-only: where each component comes from."""
        return index_table(self)

    def distribute(self, block: np.ndarray) -> np.ndarray:
        """[R, C] block -> (lanes, per_lane) array, (lanes,) for one element a lane (per_lane_form)."""
        return per_lane_form(np.ascontiguousarray(block[self.indices()]))

    def attr(self) -> Layout:
        """As the XeGPU RFC's layout attribute, printed on the SIMT ops: the block is its inst_data."""
        return Layout(inst_data=self.block, lane_layout=self.lane_layout, lane_data=self.lane_data)

    def gather(self, per_lane: np.ndarray) -> np.ndarray:
        """(lanes, per_lane) array -> [R, C] block (lane 0's copy for a replicated block)."""
        data = to_lanes(per_lane, self.per_lane, self.lanes)
        if self.replicated:
            return data[0].reshape(self.block)
        block = np.empty(self.block, dtype=data.dtype)
        block[self.indices()] = data
        return block


@functools.lru_cache(maxsize=4096)
def index_table(layout: LaneLayout) -> tuple[np.ndarray, np.ndarray]:
    """LaneLayout.indices, made once per layout: the interpreter asks for it at every SIMT load, store, mask and iota
    it runs, and building the table element by element in Python each time was a third of a SIMT level's run."""
    table = np.array([layout.elements(lane) for lane in range(layout.lanes)]).reshape(layout.lanes, -1, 2)
    rows, cols = table[..., 0], table[..., 1]
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


def lane_attrs(key: str, layout: LaneLayout | None) -> dict:
    """`{key: layout}` for the printer (`layout_result_0`, `layout_operand_N`: upstream XeGPU's names of a result's
    and an operand's layout); nothing without a layout."""
    return {} if layout is None else {key: layout.attr()}


def parse_lane_layout(p, attrs: dict, key: str, required: bool = True) -> LaneLayout | None:
    """The lane layout printed as `key` (lane_attrs), in subgroups of the function's `lanes`."""
    if key not in attrs and not required:
        return None
    attr = p.pop(attrs, key)
    if p.func is None or p.func.lanes is None:
        raise p.error("a lane layout needs the function's lanes attribute")
    if attr.inst_data is None or attr.lane_layout is None or attr.lane_data is None:
        raise p.error(f"{key} must give inst_data, lane_layout and lane_data")
    return LaneLayout(attr.inst_data, p.func.lanes, attr.lane_layout, attr.lane_data)


class SimtLoadNdOp(Operation):
    """xegpu.load_nd, SIMT flavor: each lane receives its part of the block (transposed first if asked); `valid` as
    the workgroup-level op's (xegpu_ops.LoadNdOp)."""

    name = "xegpu.load_nd"
    effects = (reads(0),)

    def __init__(self, tdesc: Value, layout: LaneLayout, transpose=None, padding=0,
                 cache: CacheHints | None = None, valid=None, loc=None):
        super().__init__([tdesc], [layout.lane_type(tdesc.type.dtype)], loc=loc)
        self.layout, self.transpose, self.padding, self.cache, self.valid = layout, transpose, padding, cache, valid

    def format(self, p) -> str:
        attrs = {"transpose": list(self.transpose)} if self.transpose else {}
        if self.padding != 0:
            attrs["padding"] = self.padding
        attrs.update({**valid_attr(self), **hint_attrs(self.cache, "xegpu")})
        attrs.update(lane_attrs("layout_result_0", self.layout))
        t = self.operands[0]
        return f" {p.name(t)}{p.attr_dict(self, attrs)} : {t.type} -> {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        tdesc = p.value()
        attrs = p.attrs()
        layout = parse_lane_layout(p, attrs, "layout_result_0")
        transpose = attrs.pop("transpose", None)
        op = cls(tdesc, layout, None if transpose is None else tuple(transpose), attrs.pop("padding", 0),
                 valid=valid_of(attrs), cache=p.hints(attrs, "load"))
        p.expect(":")
        p.type_of(tdesc)
        p.expect("->")
        return p.result_type(op, p.type())

    def interpret(self, interp, tile: TileRef):
        block = tile.load(self.padding, self.valid)
        return self.layout.distribute(block.T if self.transpose else block)


class SimtStoreNdOp(Operation):
    name = "xegpu.store_nd"
    effects = (writes(1),)

    def __init__(self, value: Value, tdesc: Value, layout: LaneLayout, valid=None, cache: CacheHints | None = None,
                 loc=None):
        super().__init__([value, tdesc], [], loc=loc)
        self.layout, self.valid, self.cache = layout, valid, cache

    def format(self, p) -> str:
        value, t = self.operands
        attrs = {**valid_attr(self), **hint_attrs(self.cache, "xegpu"), **lane_attrs("layout_operand_0", self.layout)}
        return f" {p.name(value)}, {p.name(t)}{p.attr_dict(self, attrs)} : {value.type}, {t.type}"

    @classmethod
    def parse(cls, p, name):
        value, tdesc = p.values_n(2)
        attrs = p.attrs()
        layout = parse_lane_layout(p, attrs, "layout_operand_0")
        op = cls(value, tdesc, layout, valid_of(attrs), p.hints(attrs, "store"))
        p.expect(":")
        p.typed([value, tdesc])
        return op

    def interpret(self, interp, value, tile: TileRef):
        tile.store(self.layout.gather(value), self.valid)


class SimtAtomicRMWOp(Operation):
    """xegpu.atomic_rmw, SIMT flavor; the rule is the XeTile op's (ATOMIC_KINDS)."""

    name = "xegpu.atomic_rmw"
    effects = (reads(1), writes(1))

    def __init__(self, kind: str, value: Value, tdesc: Value, layout: LaneLayout, valid=None,
                 compare: Value | None = None, loc=None):
        super().__init__([value, tdesc] + ([compare] if compare is not None else []), [value.type], loc=loc)
        self.kind, self.layout, self.valid = kind, layout, valid

    compare = AtomicRMWTileOp.compare

    def verify(self):
        check_compare(self)

    def format(self, p) -> str:
        return format_atomic(self, p, lane_attrs("layout_result_0", self.layout))

    @classmethod
    def parse(cls, p, name):
        kind, (value, tdesc, *compare), attrs, result_type = parse_atomic(p, 2, 3)
        layout = parse_lane_layout(p, attrs, "layout_result_0")
        return p.result_type(cls(kind, value, tdesc, layout, valid_of(attrs), *compare), result_type)

    def interpret(self, interp, value, tile: TileRef, *compare):
        return self.layout.distribute(tile.atomic(self.kind, self.layout.gather(value), self.valid,
                                                  *map(self.layout.gather, compare)))


class SimtConstantMaskOp(Operation):
    """vector.constant_mask, SIMT flavor: each lane's part of the mask in its lane layout."""

    name = "vector.constant_mask"
    effects = ()

    def __init__(self, sizes, layout: LaneLayout, loc=None):
        super().__init__(result_types=[layout.lane_type(bool_)], loc=loc)
        self.sizes, self.layout = tuple(sizes), layout

    def format(self, p) -> str:
        attrs = lane_attrs("layout_result_0", self.layout)
        return f" {list(self.sizes)}{p.attr_dict(self, attrs)} : {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        sizes = p.ints()
        op = cls(sizes, parse_lane_layout(p, p.attrs(), "layout_result_0"))
        p.expect(":")
        return p.result_type(op, p.type())

    def interpret(self, interp):
        rows, cols = self.layout.indices()
        return per_lane_form((rows < self.sizes[0]) & (cols < self.sizes[1]))


class SimtIotaOp(Operation):
    """vector.iota, SIMT flavor: each lane's components' indices along `dim` in its block, plus the offset."""

    name = "vector.iota"
    effects = ()

    def __init__(self, offset: Value, dim: int, layout: LaneLayout, loc=None):
        super().__init__([offset], [layout.lane_type(int32)], loc=loc)
        self.dim, self.layout = dim, layout

    def format(self, p) -> str:
        attrs = lane_attrs("layout_result_0", self.layout)
        return f" {p.name(self.operands[0])} [{self.dim}]{p.attr_dict(self, attrs)} : {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        offset = p.value()
        dim = p.dim()
        op = cls(offset, dim, parse_lane_layout(p, p.attrs(), "layout_result_0"))
        p.expect(":")
        return p.result_type(op, p.type())

    def interpret(self, interp, offset):
        return per_lane_form((self.layout.indices()[self.dim] + int(offset)).astype(np.int32))


class SimtPrintOp(DevicePrintOp):
    """gpu.printf of a vector, SIMT flavor: each lane prints its components at their indices in its block (lane 0
    alone when every lane holds the whole block)."""

    def __init__(self, prefix: str, values, origin, valid, layout: LaneLayout, loc=None):
        super().__init__(prefix, values, origin, valid, loc=loc)
        self.layout = layout

    def format_attrs(self) -> dict:
        return lane_attrs(f"layout_operand_{self.vector}", self.layout)

    @classmethod
    def build(cls, p, prefix, values, origin, valid, attrs):
        vector = next((i for i, v in enumerate(values) if isinstance(v.type, VectorType)), 0)
        return cls(prefix, values, origin, valid, parse_lane_layout(p, attrs, f"layout_operand_{vector}"))

    def interpret(self, interp, *operands):
        values, origin = operands[:self.count], operands[self.count:]
        layout = self.layout
        elements = to_lanes(values[self.vector], layout.per_lane, layout.lanes)
        rows, cols = layout.indices()
        for lane in range(1 if layout.replicated else layout.lanes):
            for k in range(layout.per_lane):
                if rows[lane, k] < self.valid[0] and cols[lane, k] < self.valid[1]:
                    index = (int(origin[0]) + int(rows[lane, k]), int(origin[1]) + int(cols[lane, k]))
                    self.write_element(interp, values, index, elements[lane, k])


class SimtDpasOp(Operation):
    """xegpu.dpas, SIMT flavor: A [M, K], B [K, N], C [M, N] in their lane layouts (docs/reference/xe_builtins.md
    §1.3)."""

    name = "xegpu.dpas"
    effects = ()

    def __init__(self, a: Value, b: Value, c: Value | None, layouts: tuple[LaneLayout, LaneLayout, LaneLayout],
                 result_dtype: DType, vnni_b: DType | None = None, precision: str = "ieee", loc=None):
        super().__init__([a, b] + ([c] if c is not None else []), [layouts[2].lane_type(result_dtype)], loc=loc)
        self.layouts, self.vnni_b, self.precision = layouts, vnni_b, precision

    def verify(self):
        a, b, *_ = self.operands
        if mma_accumulator_dtype(a.type.dtype, self.vnni_b or b.type.dtype) is None:
            raise self.error("unsupported operand types", "tile_mma operand element types")
        check_precision(self, self.precision, a.type.dtype, self.vnni_b or b.type.dtype)

    def format(self, p) -> str:
        names = ", ".join(p.name(v) for v in self.operands)
        attrs = {**precision_attrs(self.precision), **({} if self.vnni_b is None else {"vnni_b": self.vnni_b.mlir})}
        for key, layout in zip(("layout_operand_0", "layout_operand_1", "layout_result_0"), self.layouts):
            attrs.update(lane_attrs(key, layout))
        return (f" {names}{p.attr_dict(self, attrs)} : {', '.join(str(v.type) for v in self.operands)} -> "
                f"{self.result.type}")

    @classmethod
    def parse(cls, p, name):
        (a, b, *c), attrs, result_type = p.operands_to("->", (2, 3), name)
        layouts = tuple(parse_lane_layout(p, attrs, key)
                        for key in ("layout_operand_0", "layout_operand_1", "layout_result_0"))
        precision, vnni_b = attrs.pop("input_precision", "ieee"), p.dtype_attr(attrs, "vnni_b")
        op = cls(a, b, c[0] if c else None, layouts, result_type.dtype, vnni_b, precision)
        return p.result_type(op, result_type)

    def interpret(self, interp, a, b, c=None):
        la, lb, lc = self.layouts
        out = numeric.mma(la.gather(a), vnni_unpack(lb.gather(b), self.vnni_b), None if c is None else lc.gather(c),
                          self.result.type.dtype, self.precision)
        return lc.distribute(out)


class ShuffleOp(Operation):
    """vector.shuffle: result[i] = concat(a, b)[mask[i]], within each lane."""

    name = "vector.shuffle"
    effects = ()

    def __init__(self, a: Value, b: Value, mask, loc=None):
        mask = tuple(mask)
        t = ScalarType(a.type.dtype) if len(mask) == 1 else VectorType((len(mask),), a.type.dtype)
        super().__init__([a, b], [t], loc=loc)
        self.mask = mask

    def format(self, p) -> str:
        a, b = self.operands
        return f" {p.name(a)}, {p.name(b)} {list(self.mask)} : {a.type}, {b.type} -> {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        a, b = p.values_n(2)
        mask = p.ints()
        p.expect(":")
        p.typed([a, b])
        p.expect("->")
        return p.result_type(cls(a, b, mask), p.type())

    def interpret(self, interp, a, b):
        both = np.concatenate([to_lanes(x, elements(v.type), interp.lanes) for x, v in zip((a, b), self.operands)],
                              axis=1)
        return per_lane_form(both[:, list(self.mask)])


class LaneReduceOp(Operation):
    """vector.multi_reduction within each lane: the lane's elements seen as `shape`, reduced over `dims`."""

    name = "vector.multi_reduction"
    effects = ()

    def __init__(self, kind: str, v: Value, shape, dims, loc=None):
        shape, dims = tuple(shape), tuple(dims)
        kept = [n for d, n in enumerate(shape) if d not in dims]
        count = int(np.prod(kept)) if kept else 1
        t = ScalarType(v.type.dtype) if count == 1 else VectorType((count,), v.type.dtype)
        super().__init__([v], [t], loc=loc)
        self.kind, self.shape, self.dims = kind, shape, dims

    def format(self, p) -> str:
        v = self.operands[0]
        kind = REDUCE_KINDS[self.kind][v.type.dtype.kind].rfc
        return (f" <{kind}> {p.name(v)} {list(self.dims)} {{shape = {list(self.shape)}}} : {v.type} "
                f"to {self.result.type}")

    @classmethod
    def parse(cls, p, name):
        printed = p.angle_word()
        v = p.value()
        dims = p.ints()
        shape = p.pop(p.attrs(), "shape")
        p.expect(":")
        p.type_of(v)
        p.keyword("to")
        return p.result_type(cls(p.kind(REDUCE_KINDS, "rfc", printed, v.type.dtype), v, shape, dims), p.type())

    def interpret(self, interp, v):
        dtype = self.operands[0].type.dtype
        data = to_lanes(v, elements(self.operands[0].type), interp.lanes).reshape((interp.lanes,) + self.shape)
        wide = data.astype(np.float32) if dtype.is_float else data
        with np.errstate(all="ignore"):
            out = REDUCE_KINDS[self.kind][dtype.kind].numpy(wide, axis=tuple(d + 1 for d in self.dims))
        return per_lane_form(out.reshape(interp.lanes, -1).astype(dtype.np_dtype))


class SubgroupReduceOp(Operation):
    """gpu.subgroup_reduce: every lane gets the reduction, element by element, over the lanes of its cluster:
    `cluster_size` lanes `cluster_stride` apart (MLIR's clustered form; size N, stride 1 is the subgroup)."""

    name = "gpu.subgroup_reduce"
    effects = ()

    def __init__(self, kind: str, v: Value, cluster_size: int, cluster_stride: int = 1, loc=None):
        super().__init__([v], [v.type], loc=loc)
        self.kind, self.cluster_size, self.cluster_stride = kind, cluster_size, cluster_stride

    def format(self, p) -> str:
        v = self.operands[0]
        return (f" {REDUCE_KINDS[self.kind][v.type.dtype.kind].rfc} {p.name(v)} cluster(size = {self.cluster_size}, "
                f"stride = {self.cluster_stride}) : ({v.type}) -> {v.type}")

    @classmethod
    def parse(cls, p, name):
        printed = p.word()
        v = p.value()
        p.keyword("cluster")
        p.expect("(")
        size = p.field("size", p.int)
        p.expect(",")
        stride = p.field("stride", p.int)
        p.expect(")")
        p.expect(":")
        p.typed_list([v])
        p.expect("->")
        p.type_of(v)
        return cls(p.kind(REDUCE_KINDS, "rfc", printed, v.type.dtype), v, size, stride)

    def interpret(self, interp, v):
        t = self.operands[0].type
        data = to_lanes(v, elements(t), interp.lanes)
        size, stride = self.cluster_size, self.cluster_stride
        # lanes = (outer, size, stride): a cluster is the lanes that differ only in the middle index
        grouped = data.reshape(interp.lanes // (size * stride), size, stride, -1)
        wide = grouped.astype(np.float32) if t.dtype.is_float else grouped
        with np.errstate(all="ignore"):
            out = REDUCE_KINDS[self.kind][t.dtype.kind].numpy(wide, axis=1, keepdims=True).astype(t.dtype.np_dtype)
        return per_lane_form(np.ascontiguousarray(np.broadcast_to(out, grouped.shape)).reshape(data.shape))


class LaneGatherOp(Operation):
    """Moves data between lanes by static tables: result component c of lane l is component
    `components[c][l]` (counted over the sources set side by side) of lane `source_lanes[c][l]`.
    Lowered with subgroup shuffles."""

    name = "xegpu.lane_gather"
    effects = ()

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

    @classmethod
    def parse(cls, p, name):
        sources, attrs, result_type = p.operands_to("->", None, name)
        return cls(sources, result_type, p.pop(attrs, "source_lanes"), p.pop(attrs, "components"))

    def interpret(self, interp, *sources):
        both = np.concatenate([to_lanes(x, elements(v.type), interp.lanes) for x, v in zip(sources, self.operands)],
                              axis=1)
        return per_lane_form(both[self.source_lanes.T, self.components.T])


OWN, SHUFFLED = -1, -2  # row_moves' sources besides a lane number


def row_moves(source_lanes: np.ndarray, components: np.ndarray) -> list[tuple[int, int]]:
    """How a lane_gather row brings each source component t some lane reads: (t, OWN) where every lane wanting t
    reads its own, (t, lane) where they all read it from that one lane (a broadcast, which the OpenCL CPU compiler
    makes an extract and a splat: a row's maxima back from their lanes took 2,000 fewer instructions than as
    shuffles), else (t, SHUFFLED)."""
    moves = []
    for t in sorted(set(components.tolist())):
        wanting = np.flatnonzero(components == t)
        sources = source_lanes[wanting]
        if (sources == wanting).all():
            moves.append((t, OWN))
        elif (sources == sources[0]).all():
            moves.append((t, int(sources[0])))
        else:
            moves.append((t, SHUFFLED))
    return moves


def gather_plan(source_lanes: np.ndarray, components: np.ndarray) -> list[list[tuple[int, int]]]:
    """`row_moves` of each row of a lane_gather's tables."""
    return [row_moves(lanes_row, row) for lanes_row, row in zip(source_lanes, components)]


def moves_in(plan: list[list[tuple[int, int]]]) -> int:
    """The moves between lanes (shuffles and broadcasts) of a `gather_plan`."""
    return sum(source != OWN for row in plan for _, source in row)


# the ops a lane reads other lanes' values by: reductions across lanes, moves between them, and DPAS, whose A
# element of row r, column k a lane takes from lane k (docs/reference/xe_builtins.md §1.3)
LANE_EXCHANGES = (SubgroupReduceOp, LaneGatherOp, SimtDpasOp)


def exchanges_lanes(func) -> bool:
    """Whether the work-item-level kernel `func` has a lane read another lane's values (LANE_EXCHANGES): such a
    kernel is right only where its sub-groups run as such, which the OpenCL CPU compiler does where it vectorizes
    the kernel (runtime/opencl/build_log.py)."""
    return any(isinstance(op, LANE_EXCHANGES) for op in walk(func.body))
