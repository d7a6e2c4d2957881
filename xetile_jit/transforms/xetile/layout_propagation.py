"""Layout propagation: XeTile IR -> XeTile IR with a layout (wg_map) on every tile and vector.

Implements the XeGPU RFC's "layout propagation rules" at the XeTile level:
- anchors: layouts the user gave (init_tile `layout=`, the tile_mma layout of the launch); a layout of only
  inst_data (and lane fields) is no anchor but the blocking of each subgroup's data (RFC inst_data): its class
  takes the workgroup map propagation gives it (the default one in whole blocks) with that blocking;
- a tile only prefetched (moved, carried, prefetched: prefetch_distance's prefetch tiles, a user's without a
  layout) gets the cooperative layout (`cooperative_layout`, RFC Appendix 2.1): all subgroups on different pieces,
  each the fewest 2D prefetch messages, so a workgroup prefetches each byte once;
- tile_mma: A gets sg_data [sg_m, K], B [K, sg_n], C the result's layout (same sg_layout);
- tile_reduce: the result has sg_data 1 along the reduced dims. The input may split them between subgroups
  (wg-to-sg then exchanges partial results through SLM) unless subgroups would hold the same data twice
  there; then it is converted to a layout that holds them whole (RFC Appendix 2.2). A result whose layout is
  not the input's (a user's) takes no conversion of the input either: the partial results go to it through
  SLM, the size of the result times the subgroups along the reduced dims, where converting the input would stage
  all of it. For the same reason a tile_conv_layout whose only reader is a tile_reduce that can take the
  conversion's source as it is goes (`fold_conversions_into_reductions`): RFC Appendix 2.2's conversion of the
  256x256 f32 C to whole rows (256 KiB of SLM, twice PVC's) before the row sum becomes a 4 KiB exchange of the
  four column subgroups' partial sums;
- tile_broadcast: the input has sg_data 1 along the broadcast dims;
- tile_transpose: sg_layout, sg_data and order swap;
- values that must agree (a tile and what it loads, loop-carried and branch values, element-wise operands)
  share one layout; where two layouts meet at a use, `tile_conv_layout` converts (RFC `convert_layout`), unless
  they give every subgroup the same pieces (RFC Appendix 2.3's "optimized mapping"): the value then takes the
  layout the use wants (`adopt_equivalent_layouts`).
  Propagation decides sg_layout, sg_data and order; layout completion (transforms/xetile/layout_completion.py) then adds
  inst_data and the lane fields for the target.
Values no rule reaches get the default layout (`default_layout`) for the kernel's subgroup count S: rows split over
the subgroups first, so that a reduction along rows stays inside each subgroup, columns over the subgroups the rows
cannot take; in a kernel whose ops along one dim all go down the columns (`along_columns`), the columns split, each
subgroup's piece at least a subgroup's lanes wide (`columns_first`). S is prod(sg_layout) of the anchors; without
any, the launch's `num_subgroups`, or else `default_subgroup_count`: enough subgroups that the kernel's largest
value takes at most Target.subgroup_value_bytes of each (a power of two, at most the target's max workgroup size /
subgroup size), halved while that value would not split exactly; where the target keeps rows whole
(Target.whole_row_bytes), at most its rows unless that takes more than whole_row_bytes a subgroup, and one row a
subgroup where the target says so (Target.one_row_a_subgroup) and no layout gives blocks; for a kernel with a
tile_mma, its largest result's count, halved until each piece is whole DPAS blocks (1 when the kernel also reduces).
The layout is the contract: wg-to-sg and the later passes read S from it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from math import gcd, prod
from typing import Callable

from ...ir import core_ops as C
from ...ir import scatter_ops as SC
from ...ir import xetile_ops as X
from ...ir.combine_ops import CombineOp
from ...ir.analysis import UnionFind, carried_groups
from ...ir.attrs import Layout
from ...ir.core import FuncOp, Operation, Value, walk
from ...ir.shape_ops import FlipOp, RollOp
from ...ir.types import ROW_MAJOR, TileType, VectorType
from ...target.code_budget import type_bytes
from ...target.targets import Target
from .layout_completion import convert_operand, prefetch_message, values_with_layouts


def with_sg_data(layout: Layout, updates: dict[int, int]) -> Layout:
    data = tuple(updates.get(i, n) for i, n in enumerate(layout.sg_data))
    return Layout(layout.sg_layout, data, order=layout.order)


def swapped(layout: Layout) -> Layout:
    """The transposed layout. Reversing `order` too keeps every element on its subgroup (RFC #mp_bt), so a
    transpose needs no data exchange between subgroups. inst_data swaps with the dims; the lanes of the
    transposed blocks are the target's to give again (blocking does)."""
    order = tuple(reversed(layout.order or ROW_MAJOR))
    inst = tuple(reversed(layout.inst_data)) if layout.inst_data else None
    return Layout(tuple(reversed(layout.sg_layout)), tuple(reversed(layout.sg_data)), inst_data=inst,
                  order=None if order == ROW_MAJOR else order)


def swapped_map(layout: Layout) -> Layout:
    """The transposed workgroup map, without inst_data: the blocks of one side need not be legal blocks of the
    other's loads and stores (a [1, 3] bf16 block is a legal load, its [3, 1] transpose 2 bytes wide), so layout
    completion blocks each side for its own uses (the load's blocks swapped where the transpose folds into it)."""
    return swapped(dataclasses.replace(layout, inst_data=None))


def default_layout(shape, subgroups: int) -> Layout:
    """`subgroups` over `shape`: rows first, columns taking the subgroups the rows cannot (splitting columns first
    would be exact for exactly the same shapes). When that is not exact, the dim that divides among more subgroups
    is split as far as it does, and the rest of the subgroups hold copies (sg_layout x sg_data a multiple of the
    dim: the RFC's wrap-around), as every subgroup holds the whole value when nothing divides."""
    rows, cols = shape
    down, across = gcd(rows, subgroups), gcd(cols, subgroups)
    if cols % (subgroups // down) == 0:
        return Layout((down, subgroups // down), (rows // down, cols * down // subgroups))
    if down >= across:
        return Layout((subgroups, 1), (rows // down, cols))
    return Layout((1, subgroups), (rows, cols // across))


def along_columns(ops: list[Operation]) -> bool:
    """Whether the kernel's ops along one dim of a 2-D value (tile_reduce, xetile.reduce/scan, roll, flip) all go
    down the columns (dim 0): its default layout then splits the columns (`columns_first`), so that each subgroup
    holds whole columns and none of these ops moves data between subgroups."""
    dims = set()
    for op in ops:
        if isinstance(op, X.TileReduceOp) and len(op.operands[0].type.shape) == 2:
            dims.update(op.dims if len(op.dims) == 1 else (0, 1))
        elif isinstance(op, CombineOp):
            dims.add(op.dim)
        elif isinstance(op, (RollOp, FlipOp)) and len(op.operands[0].type.shape) == 2:
            dims.add(op.axis)
    return dims == {0}


def columns_first(shape, subgroups: int, lanes: int) -> Layout | None:
    """`subgroups` over the columns of `shape`, each piece whole columns, at least `lanes` of them; None where the
    columns do not split so."""
    rows, cols = shape
    if cols % subgroups or cols // subgroups < lanes:
        return None
    return Layout((1, subgroups), (rows, cols // subgroups))


def copies(layout: Layout, shape) -> int:
    """How many subgroups hold each element of `shape` under `layout`."""
    return prod(max(1, n * d // w) for n, d, w in zip(layout.sg_layout, layout.sg_data, shape))


def value_bytes(v: Value) -> int:
    return type_bytes(v.type)


def default_subgroup_count(ops: list[Operation], target: Target, columns: bool) -> int:
    """The subgroups of a kernel without anchors or `num_subgroups`: Target.default_subgroups of its largest value,
    halved while that value's default layout would hold copies (an odd shape is better on fewer subgroups). In a
    kernel with a tile_mma that value is its largest result, halved also while a piece is not whole DPAS blocks
    (`mma_subgroup_count`), and a tile_mma kernel that also reduces keeps one subgroup: rows split for a row
    reduction are not DPAS blocks, so its layout is the launch's sg_layout/sg_data (or num_subgroups) to give. A
    kernel `along_columns` (`columns`) halves it until its largest value's columns split into pieces of a subgroup's
    lanes."""
    values = [v for op in ops for v in op.results if has_layout(v)]
    mmas = [op for op in ops if isinstance(op, X.TileMMAOp)]
    if not values or mmas and any(isinstance(op, (X.TileReduceOp, CombineOp)) for op in ops):
        return 1
    if mmas:
        return mma_subgroup_count(mmas, target)
    largest = max(values, key=value_bytes)
    subgroups = target.default_subgroups(value_bytes(largest))
    if columns and len(largest.type.shape) == 2:
        while subgroups > 1 and columns_first(largest.type.shape, subgroups, target.subgroup_size) is None:
            subgroups //= 2
        return subgroups
    if target.whole_row_bytes:
        rows = 1 << (largest.type.shape[0].bit_length() - 1)
        if subgroups > 1 and target.one_row_a_subgroup(largest.type.shape[-1]) and not given_blocks(values):
            subgroups = max(subgroups, rows)
        subgroups = max(min(subgroups, rows, target.max_subgroups),
                        target.default_subgroups(value_bytes(largest), target.whole_row_bytes))
    while subgroups > 1 and copies(default_layout(largest.type.shape, subgroups), largest.type.shape) > 1:
        subgroups //= 2
    return subgroups


def given_blocks(values: list[Value]) -> bool:
    """Whether a layout of the user's gives its blocks (inst_data): the subgroups' pieces must hold them."""
    return any(getattr(X.layout_of(v), "inst_data", None) for v in values)


def mma_subgroup_count(mmas: list[X.TileMMAOp], target: Target) -> int:
    """Subgroups for the largest tile_mma result, Target.accumulator_bytes each, halved until each piece of its
    default layout is whole DPAS blocks of every tile_mma (a 64x64 f32 accumulator is four 16x64 pieces, not 128
    DPAS ops on one subgroup)."""
    largest = max((op.result for op in mmas), key=value_bytes)
    blocks = [target.dpas_shape(op.operands[0].type.dtype, op.precision)[:2] for op in mmas]
    subgroups = target.default_subgroups(value_bytes(largest), target.accumulator_bytes)

    def splits(count: int) -> bool:
        layout = default_layout(largest.type.shape, count)
        return copies(layout, largest.type.shape) == 1 and all(
            layout.sg_data[0] % m == 0 and layout.sg_data[1] % n == 0 for m, n in blocks)

    while subgroups > 1 and not splits(subgroups):
        subgroups //= 2
    return subgroups


def reducible(layout: Layout, dims, shape) -> bool:
    """Each element of the reduced dims lies in exactly one subgroup, or in every one of them."""
    return all(layout.sg_layout[d] == 1 or layout.sg_data[d] == shape[d]
               or shape[d] % (layout.sg_layout[d] * layout.sg_data[d]) == 0 for d in dims)


def reduce_friendly(shape, dims, subgroups: int) -> Layout:
    """All subgroups on the kept dim (RFC Appendix 2.2: sg_layout [32, 1], sg_data [8, 256] before a row sum)."""
    kept = 1 - dims[0] if len(dims) == 1 else None
    layout = [1, 1]
    data = list(shape)
    if kept is not None and shape[kept] % subgroups == 0:
        layout[kept], data[kept] = subgroups, shape[kept] // subgroups
    else:
        layout[0] = subgroups
    return Layout(tuple(layout), tuple(data))


@dataclass
class Edge:
    """`dst` must have `rule(layout of src)`, or a layout `fits(dst layout, src layout)` accepts; `use` is the
    (op, operand index) a conversion would feed."""

    src: Value
    dst: Value
    rule: Callable[[Layout], Layout]
    use: tuple[Operation, int] | None = None
    fits: Callable[[Layout, Layout], bool] | None = None


class LayoutPropagation:
    def __init__(self, func: FuncOp, target: Target, num_subgroups: int | None = None):
        self.func = func
        self.target = target
        self.requested = num_subgroups
        self.classes = UnionFind(has_layout)
        self.layouts: dict[Value, Layout] = {}
        self.edges: list[Edge] = []
        self.blocking: dict[Value, tuple[Layout, Operation]] = {}  # class root -> (inst_data/lane fields, its op)
        self.subgroups = 1
        self.columns = False  # the kernel's ops along one dim go down the columns (`along_columns`)

    # ---- classes of values that share one layout ---------------------------------------------
    def find(self, v: Value) -> Value:
        return self.classes.find(v)

    def union(self, *values: Value) -> None:
        self.classes.union(*values)

    def layout(self, v: Value) -> Layout | None:
        return self.layouts.get(self.find(v))

    def assign(self, v: Value, layout: Layout, op: Operation) -> None:
        root = self.find(v)
        current = self.layouts.get(root)
        if current is not None and current != layout:
            raise conflict(op, current, layout)
        self.layouts[root] = layout

    # ---- the pass ----------------------------------------------------------------------------
    def run(self) -> None:
        ops = list(walk(self.func.body))
        for op in ops:
            self.relate(op)
        self.seed(ops)
        while self.propagate() or self.default_one(ops):
            pass
        self.adopt_equivalent_layouts()
        self.insert_conversions()
        self.write_back()
        fold_conversions_into_reductions(self.func)

    def relate(self, op: Operation) -> None:
        """Hard equalities (one layout) and soft edges (a rule; a conversion where it does not hold)."""
        self.relate_scatter(op)
        if isinstance(op, (X.LoadTileOp, X.UpdateTileOffsetOp)):
            self.union(op.operands[0], op.result)
        elif isinstance(op, X.AtomicRMWTileOp):
            self.union(op.operands[1], op.result)
            for index in (0, 2)[:1 + len(op.compare)]:  # the value and a compare-and-swap's compared values
                self.both_ways(op, index, op.operands[1], same, same)
        elif isinstance(op, X.StoreTileOp):
            self.both_ways(op, 0, op.operands[1], same, same)
        elif isinstance(op, (C.ElementwiseOp, C.CmpOp, C.SelectOp, C.CastOp, RollOp)):
            self.relate_elementwise(op)
        elif isinstance(op, (C.ForOp, C.IfOp, C.WhileOp)):
            for group in carried_groups(op):
                self.union(*group)
        elif isinstance(op, X.TileMMAOp):
            self.relate_mma(op)
        elif isinstance(op, X.TileReduceOp):
            self.relate_reduce(op)
        elif isinstance(op, X.TileBroadcastOp):
            dims, shape = op.dims, op.result.type.shape
            self.both_ways(op, 0, op.result, lambda l: with_sg_data(l, {d: 1 for d in dims}),
                           lambda l: broadcast_result(l, dims, shape))
        elif isinstance(op, X.TileTransposeOp):
            self.both_ways(op, 0, op.result, swapped_map, swapped_map)

    def relate_scatter(self, op: Operation) -> None:
        """A #scatter tile and the value it loads or stores share one layout; its offsets, delta and mask have
        it too, or, with chunk_size, its sg_data 1 along the chunk (they are broadcast along it)."""
        found = SC.scatter_operands(op)
        if found is None:
            return
        tile, indexed = found
        if isinstance(op, SC.LoadGatherOp):
            self.union(tile, op.result)
        elif isinstance(op, SC.StoreScatterOp):
            self.both_ways(op, 0, tile, same, same)
        shape = tile.type.shape
        for v in indexed:
            index = next(i for i, operand in enumerate(op.operands) if operand is v)
            if tile.type.chunk_size == 1:
                self.both_ways(op, index, tile, same, same)
            else:
                self.both_ways(op, index, tile, lambda l: with_sg_data(l, {1: 1}),
                               lambda l: broadcast_result(l, (1,), shape))

    def both_ways(self, op, index: int, other: Value, to_operand, from_operand) -> None:
        """Operand `index` of `op` relates to `other`: operand = to_operand(other), other = from_operand(operand)."""
        operand = op.operands[index]
        self.edges.append(Edge(other, operand, to_operand, (op, index)))
        self.edges.append(Edge(operand, other, from_operand))

    def relate_elementwise(self, op: Operation) -> None:
        """The result shares the first vector operand's layout; another operand is converted to it where its own
        layout differs (two anchored tiles meeting in `a + b`), so each operand keeps the layout it came with."""
        vectors = [v for v in op.operands if has_layout(v)]
        if not vectors:
            return
        self.union(vectors[0], op.result)
        for index, v in enumerate(op.operands):
            if has_layout(v) and v is not vectors[0]:
                self.both_ways(op, index, op.result, same, same)

    def relate_mma(self, op: X.TileMMAOp) -> None:
        """A and B take the result's sg_layout and order, so that a subgroup holds the rows of A and the columns of B
        its piece of the result needs."""
        k = op.operands[0].type.shape[1]
        self.edges.append(Edge(op.result, op.operands[0], lambda l: with_sg_data(l, {1: k}), (op, 0)))
        self.edges.append(Edge(op.result, op.operands[1], lambda l: with_sg_data(l, {0: k}), (op, 1)))
        if len(op.operands) == 3:
            self.both_ways(op, 2, op.result, same, same)

    def relate_reduce(self, op: X.TileReduceOp) -> None:
        dims, shape = op.dims, op.operands[0].type.shape

        def result_from_input(l: Layout) -> Layout:
            if reducible(l, dims, shape):
                return with_sg_data(l, {d: 1 for d in dims})
            return with_sg_data(reduce_friendly(shape, dims, self.subgroups), {d: 1 for d in dims})

        self.edges.append(Edge(op.result, op.operands[0], lambda l: with_sg_data(l, {d: shape[d] for d in dims}),
                               (op, 0), lambda operand, _: reducible(operand, dims, shape)))
        self.edges.append(Edge(op.operands[0], op.result, result_from_input))

    def seed(self, ops) -> None:
        """Layouts with a workgroup map are anchors; one of only inst_data (and lane fields) is the blocking of
        each subgroup's data (RFC inst_data), kept for its class whose workgroup map propagation gives."""
        anchors = [(op, v, X.layout_of(v)) for op in ops for v in op.results if X.layout_of(v) is not None]
        self.columns = along_columns(ops)
        self.subgroups = self.subgroup_count([a for a in anchors if a[2].sg_layout is not None], ops)
        for op, v, layout in anchors:
            if layout.sg_layout is not None:
                self.assign(v, layout, op)
            elif self.blocking.setdefault(self.find(v), (layout, op))[0] != layout:
                raise conflict(op, self.blocking[self.find(v)][0], layout)
        for root, tile in self.prefetched_only():
            if root not in self.layouts and root not in self.blocking:
                layout = cooperative_layout(tile.type, self.subgroups, self.target)
                if layout is not None:
                    self.layouts[root] = layout

    def prefetched_only(self) -> list[tuple[Value, Value]]:
        """(class root, one of its tiles) of each class of tiles that are only prefetched: moved, carried and
        prefetched, never loaded, stored or given to another op."""
        members: dict[Value, list[Value]] = {}
        for v in values_with_layouts(self.func):
            members.setdefault(self.find(v), []).append(v)
        found = []
        for root, values in members.items():
            uses = [use for v in values for use in v.uses]
            if all(isinstance(v.type, TileType) for v in values) and \
                    any(isinstance(op, X.PrefetchTileOp) for op, _ in uses) and \
                    all(isinstance(op, ONLY_PREFETCHED_USES) and (index == 0 or isinstance(op, CARRIERS))
                        for op, index in uses):
                found.append((root, values[0]))
        return found

    def subgroup_count(self, anchors, ops) -> int:
        if not anchors:
            return self.requested or default_subgroup_count(ops, self.target, self.columns)
        op, _, layout = anchors[0]
        if self.requested is not None and self.requested != layout.num_subgroups:
            raise op.error(f"num_subgroups={self.requested} but layout {layout} has {layout.num_subgroups} "
                           "subgroups", "prod(sg_layout) is the same for every layout of a kernel")
        return layout.num_subgroups

    def propagate(self) -> bool:
        changed = False
        for edge in self.edges:
            src = self.layout(edge.src)
            if src is not None and self.layout(edge.dst) is None:
                self.layouts[self.find(edge.dst)] = edge.rule(src)
                changed = True
        return changed

    def default_one(self, ops) -> bool:
        """Gives a value without a layout the default one: a tile_mma result first (the anchor the launch did not
        give), else the largest value (the first of them in program order), so that the rows of the data a kernel
        works on are split, not those of a [1, N] vector it broadcasts; propagation then goes on from it."""
        open_values = [v for op in ops for v in op.results if has_layout(v) and self.layout(v) is None]
        if not open_values:
            return False
        v = max(open_values, key=lambda v: (isinstance(v.owner, X.TileMMAOp), value_bytes(v)))
        blocking = self.blocking.get(self.find(v))
        block = blocking[0].inst_data if blocking and blocking[0].inst_data else (1, 1)
        columns = self.columns and len(v.type.shape) == 2 and block == (1, 1) and columns_first(
            v.type.shape, self.subgroups, self.target.subgroup_size)
        self.layouts[self.find(v)] = columns or default_in_blocks(v.type.shape, block, self.subgroups)
        return True

    def adopt_equivalent_layouts(self) -> None:
        """A value whose layout gives every subgroup the same pieces as the one a use wants
        (`Layout.distributes_like`) takes the wanted one, blocks and lanes kept: the use then needs no conversion,
        and the passes after see the layout they match (RFC Appendix 2.3's B^T in sg_layout [32, 1], sg_data
        [64, 32] is mp_b's transpose, sg_layout [4, 8] with order [0, 1]: read by transposed loads)."""
        for edge in self.edges:
            if edge.use is None:
                continue
            have, wanted = self.layout(edge.dst), edge.rule(self.layout(edge.src))
            if have.workgroup_level() != wanted.workgroup_level() and \
                    have.distributes_like(wanted, edge.dst.type.shape):
                self.layouts[self.find(edge.dst)] = dataclasses.replace(
                    have, sg_layout=wanted.sg_layout, sg_data=wanted.sg_data, order=wanted.order)

    def insert_conversions(self) -> None:
        for edge in self.edges:
            if edge.use is None:
                continue
            have, wanted = self.layout(edge.dst), edge.rule(self.layout(edge.src))
            if have.workgroup_level() != wanted.workgroup_level() and not (
                    edge.fits and edge.fits(have, self.layout(edge.src))):
                op, index = edge.use
                convert_operand(op, index, wanted)

    def with_blocking(self, v: Value) -> Layout:
        """v's class layout with the blocking a user gave the class without a workgroup map."""
        layout, blocking = self.layout(v), self.blocking.get(self.find(v))
        if blocking is None:
            return layout
        given, op = blocking
        if layout.subgroup_level() is not None and layout.subgroup_level() != given:
            raise conflict(op, layout, given)
        return dataclasses.replace(layout, **given.set_fields())

    def write_back(self) -> None:
        for v in values_with_layouts(self.func):
            if isinstance(v.owner, X.ConvertLayoutOp):  # its layout is the one it converts to
                continue
            layout = self.with_blocking(v)
            if isinstance(v.type, TileType):
                v.type = dataclasses.replace(v.type, layout=layout)
            else:
                v.layout = layout


def fold_conversions_into_reductions(func: FuncOp) -> None:
    """A tile_conv_layout read only by a tile_reduce that can reduce its source as it is (`reducible`) goes; the
    reduction reads the source (module docstring)."""
    for op in [op for op in walk(func.body) if isinstance(op, X.ConvertLayoutOp)]:
        uses = op.result.uses
        if len(uses) != 1 or not isinstance(uses[0][0], X.TileReduceOp):
            continue
        reduce, source = uses[0][0], op.operands[0]
        if reducible(X.layout_of(source), reduce.dims, source.type.shape):
            reduce.set_operand(0, source)
            op.erase()


def default_in_blocks(shape, block, subgroups: int) -> Layout:
    """The default layout of the shape counted in blocks, so that each subgroup's piece is whole blocks."""
    units = default_layout(tuple(n // b for n, b in zip(shape, block)), subgroups)
    return Layout(units.sg_layout, tuple(d * b for d, b in zip(units.sg_data, block)))


CARRIERS = (C.ForOp, C.YieldOp, C.WhileOp, C.ConditionOp)
ONLY_PREFETCHED_USES = (X.PrefetchTileOp, X.UpdateTileOffsetOp) + CARRIERS


def cooperative_layout(tile: TileType, subgroups: int, target: Target) -> Layout | None:
    """The layout of a row-major tile only prefetched (RFC Appendix 2.1's #mp_a_pfh, #mp_b_pfh): all `subgroups`
    share it, each holding a different piece, so that a workgroup prefetches each byte once, and each piece takes
    the fewest 2D prefetch messages of the target (prefetch_message, which layout completion makes its inst_data);
    of splits as good, the one of the widest messages (whole cache lines of a memory row before more rows), then of
    the widest pieces. f16 256x32 over 32 subgroups is [32, 1] pieces of 8x32, 32x256 [4, 8] of 8x32, one 512-byte
    message a subgroup each; 128x64 over 4 is [4, 1], 2 messages of 32x32 each. None where no split over all the
    subgroups is exact or has a legal message, or the target has no 2D block messages."""
    if target.block_io is None or tile.order != ROW_MAJOR or len(tile.shape) != 2:
        return None
    rows, cols = tile.shape
    best = None
    for down in (d for d in range(1, subgroups + 1) if subgroups % d == 0):
        across = subgroups // down
        if rows % down or cols % across:
            continue
        piece = (rows // down, cols // across)
        inst = prefetch_message(piece, tile.dtype, target)
        if inst is None:
            continue
        score = (piece[0] * piece[1] // (inst[0] * inst[1]), -inst[1], -piece[1])
        if best is None or score < best[0]:
            best = (score, Layout((down, across), piece))
    return None if best is None else best[1]


def conflict(op: Operation, layout: Layout, other: Layout):
    return op.error(f"values that must share a layout get both {layout} and {other}",
                    "loop-carried and branch values keep one layout")


def same(layout: Layout) -> Layout:
    return layout


def broadcast_result(layout: Layout, dims, shape) -> Layout:
    return with_sg_data(layout, {d: shape[d] // layout.sg_layout[d] if shape[d] % layout.sg_layout[d] == 0
                                 else shape[d] for d in dims})


def has_layout(v: Value) -> bool:
    return isinstance(v.type, (TileType, VectorType))


def propagate_layouts(func: FuncOp, target: Target, num_subgroups: int | None = None) -> UnionFind:
    """Annotates `func` in place with sg_layout, sg_data and order; returns the classes of values that share one
    layout, which layout completion (complete_layouts) then completes for `target`. `num_subgroups` (the launch
    option) is the subgroup count of a kernel without anchors; None chooses it."""
    propagation = LayoutPropagation(func, target, num_subgroups)
    propagation.run()
    return propagation.classes
