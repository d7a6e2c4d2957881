"""Layout completion, the last step of layout propagation: every layout gets its `inst_data` and every vector
layout its `lane_layout`/`lane_data`, for the target (XeGPU RFC "blocking rule" and "subgroup to work item
distribution rule"). Blocking cuts each subgroup piece into `inst_data` blocks and lane distribution gives each
lane what the lane fields say; neither decides anything of its own.

Values that must share a layout (a tile, the tiles loops and updates make of it, what is loaded through them,
element-wise operands, loop-carried values: layout propagation's classes) share one completion:
- a layout the user gave keeps its inst_data and lane fields where the target allows them for every op that uses
  the class: inst_data divides sg_data (RFC), fits the 2D block limits of the loads, stores and prefetches
  (Target.inst_rule), gives each lane a SPIR-V vector; the lane fields are the target's distribution of that
  block (Target.lane_fields). Anything else is a CompilationError naming the rule;
- otherwise a class that is a tile_mma operand takes the DPAS operand block (A [M, K], B [K, N]) where the
  target allows it (loads included), and every other class the target's default block of its piece
  (Target.value_block); a class of tiles only prefetched, the largest 2D prefetch message that tiles its piece
  (prefetch_message: the cooperative prefetch layouts of layout propagation make that piece one message); a class
  of tiles only stored, the blocks of the values it stores where they share one and the target stores it (the
  values go out as they are: a tile_mma result stored as f16 keeps its DPAS C blocks where the `cpu` target's
  default for f16 is one row, Target.one_row_rolled_blocks). A row-major operand tile that is only loaded and
  fed to tile_mma (no other use of the loaded value) takes instead the largest 2D block load message its piece
  covers (BlockIO.load_shapes: up to 32 rows, DPAS blocks side by side up to 64 bytes, VNNI for 16-bit B; e.g. f16
  A 32x32 in one message of two 32x16 blocks) whose lanes the ABI allows (Target.inst_rule), on targets that ask
  for them (Target.largest_loads);
- a class that is a tile_mma operand and only regrouped keeps the DPAS block's lane fields, repeated over its
  wider blocks (ir/simt_ops.py column groups: the lane layout of an array-of-blocks load), so each DPAS block
  is a run of a lane's components, taken with no data movement;
- a row-major tile whose loaded value is only transposed (tile_transpose) into a tile_mma operand takes that
  operand's DPAS block, transposed: XeTile-to-XeGPU reads it with transposed block loads straight into the DPAS
  blocks (RFC Appendix 2.2's B^T; attention's K^T), not a load and a register shuffle. The transposed value takes
  the load's blocks swapped; where those are several DPAS blocks (a user's inst_data [32, 16] on 16-bit B^T: one
  32-row message), with the DPAS block's lane fields repeated (column groups, as for an array-of-blocks load).
  The default stays the DPAS block: the 32-row message gives a lane two rows taking turns column by column, which
  DPAS cannot take without register moves, and IGC splits it back into two 16-row messages (docs/DESIGN.md);
- a tile_mma operand whose instruction blocks are not its DPAS block gets an explicit `tile_conv_layout` to it:
  same sg_layout and sg_data, so it moves no data between subgroups and lowers in registers (a 16x16 load block
  is two 8x16 DPAS A blocks).
"""
from __future__ import annotations

import dataclasses

from ...ir import xetile_ops as X
from ...ir.analysis import UnionFind
from ...ir.attrs import Layout, format_list
from ...ir.core import FuncOp, Operation, Value, walk
from ...ir.types import ROW_MAJOR, DType, TileType, VectorType
from ...target.targets import MAX_VECTOR_COMPONENTS, Target


def convert_operand(op: Operation, index: int, layout: Layout) -> None:
    """Operand `index` of `op` through a tile_conv_layout to `layout`, inserted right before `op`."""
    convert = X.ConvertLayoutOp(op.operands[index], layout, loc=op.loc)
    op.parent.insert_before(op, convert)
    op.set_operand(index, convert.result)

INST_RULE = "inst_data fits the target's instruction blocks"
LANE_RULE = "lane_layout and lane_data are the target's distribution of inst_data"
USE_KINDS = {X.LoadTileOp: "load", X.StoreTileOp: "store", X.PrefetchTileOp: "prefetch"}


@dataclasses.dataclass
class LayoutClass:
    """Values sharing one layout, and what the target must allow for them."""

    values: list[Value]
    kinds: set[str] = dataclasses.field(default_factory=set)  # "value": a vector other ops than conversions use
    mma_operand: int | None = None  # 0 (A) or 1 (B) when the class feeds a tile_mma operand
    mma_dtype: DType | None = None  # that operand's element type (a class may mix types: a mask, the scores)
    mma_precision: str = "ieee"  # that tile_mma's input_precision (tf32 has its own DPAS blocks)
    transposed: "LayoutClass | None" = None  # the class its loaded value is only transposed into
    transposed_from: "LayoutClass | None" = None  # the loads whose transposes (folded into them) give this class
    stored: list["LayoutClass"] = dataclasses.field(default_factory=list)  # the classes of the values it stores

    @property
    def layout(self) -> Layout:
        return X.layout_of(self.values[0])

    @property
    def owner(self) -> Operation:
        """The op blamed for a bad layout: the first producer of the class (the one a user's layout is on)."""
        return next(v.owner for v in self.values if isinstance(v.owner, Operation))


class LayoutCompletion:
    def __init__(self, func: FuncOp, target: Target, classes: UnionFind):
        self.func = func
        self.target = target
        self.union_find = classes
        self.classes: dict[Value, LayoutClass] = {}
        for v in values_with_layouts(func):
            self.classes.setdefault(classes.find(v), LayoutClass([])).values.append(v)

    def find(self, v: Value) -> LayoutClass:
        return self.classes[self.union_find.find(v)]

    def run(self) -> None:
        ops = list(walk(self.func.body))
        for op in ops:
            self.note_use(op)
            if isinstance(op, X.LoadTileOp) and only_transpose(op) is not None:
                source, result = self.find(op.result), self.find(only_transpose(op).result)
                source.transposed = result
                if folded(only_transpose(op)):
                    result.transposed_from = source
            if isinstance(op, X.StoreTileOp):
                self.find(op.operands[1]).stored.append(self.find(op.operands[0]))
        for group in self.classes.values():
            self.complete(group)
        for op in ops:
            if isinstance(op, X.TileMMAOp):
                self.convert_mma_operands(op)

    def note_use(self, op: Operation) -> None:
        loads = isinstance(op, X.LoadTileOp) or folded(op)
        for v in op.results + [a for region in op.regions for a in region.block.args]:
            if isinstance(v.type, VectorType) and not loads:
                self.find(v).kinds.add("value")
        for index, v in enumerate(op.operands):
            if isinstance(v.type, VectorType) and not (loads or converts_use(op, index)):
                self.find(v).kinds.add("value")
        kind = USE_KINDS.get(type(op))
        if kind is not None:
            tile = op.operands[1] if isinstance(op, X.StoreTileOp) else op.operands[0]
            self.find(tile).kinds.add(kind)
        if isinstance(op, X.TileMMAOp):
            for index in (0, 1):
                group = self.find(op.operands[index])
                group.mma_operand, group.mma_dtype = index, op.operands[index].type.dtype
                group.mma_precision = op.precision

    # ---- one class -------------------------------------------------------------------------------------
    def complete(self, group: LayoutClass) -> None:
        layout, dtype = group.layout, group.mma_dtype or group.values[0].type.dtype
        piece = layout.sg_data
        inst = layout.inst_data or self.default_inst(group, piece, dtype)
        self.check_inst(group, piece, inst, dtype)
        lane_block = self.mma_block(group, dtype) if self.only_regrouped(group) else None
        if lane_block is None or not divides(lane_block, inst):
            lane_block = inst
        packed = self.target.packed_rows(dtype, group.mma_operand, lane_block[0])
        lane_layout, lane_data = self.target.lane_fields(lane_block, packed)
        if layout.lane_layout is not None and (layout.lane_layout, layout.lane_data or (1, 1)) != (
                lane_layout, lane_data):
            given = f"{format_list(layout.lane_layout)} with lane_data {format_list(layout.lane_data or (1, 1))}"
            raise group.owner.error(
                f"lane_layout {given} is not how target {self.target.name} distributes a {inst[0]}x{inst[1]} block "
                f"(lane_layout {format_list(lane_layout)}, lane_data {format_list(lane_data)})", LANE_RULE)
        for v in group.values:
            if isinstance(v.type, TileType):
                v.type = dataclasses.replace(v.type, layout=dataclasses.replace(layout, inst_data=inst))
            else:
                v.layout = dataclasses.replace(layout, inst_data=inst, lane_layout=lane_layout, lane_data=lane_data)

    def default_inst(self, group: LayoutClass, piece, dtype) -> tuple[int, int]:
        block = self.mma_block(group, dtype)
        if group.transposed_from is not None:  # the load's blocks, swapped, when they are whole DPAS blocks
            inst = tuple(reversed(self.inst_of(group.transposed_from)))
            if block is None or divides(block, inst):
                return inst
        if block is None and group.transposed is not None and self.mma_block(group.transposed, dtype) is not None:
            block = self.mma_block(group.transposed, dtype)[::-1]
            if divides(block, piece) and self.target.inst_rule(group.kinds, block, dtype) is None:
                return block
        if block is not None and divides(block, piece) and self.target.inst_rule(group.kinds, block, dtype) is None:
            largest = self.only_regrouped(group) and self.target.largest_loads
            return self.load_message(group, piece, block, dtype) if largest else block
        if (inst := self.stored_blocks(group, piece, dtype)) is not None:
            return inst
        if group.kinds == {"prefetch"}:  # a tile only prefetched: its piece in the fewest messages
            return prefetch_message(piece, dtype, self.target) or self.target.value_block(piece)
        moved = {v.type.dtype.bits for v in group.values if isinstance(v.type, TileType)}  # by block loads, stores
        return self.target.value_block(piece, moved)

    def stored_blocks(self, group: LayoutClass, piece, dtype) -> tuple[int, int] | None:
        """The blocks of the values a class of tiles only stored stores, where they share one block and the piece,
        and the target stores that block: the values go out as they are, with no regrouping (with AVX2 code a
        tile_mma result stored as f16 took one-row blocks, `Target.one_row_rolled_blocks`: tutorial 6's output
        was 64 shuffles and 64 one-row stores)."""
        if group.kinds != {"store"} or any(value.layout.sg_data != piece for value in group.stored):
            return None
        insts = {self.inst_of(value) for value in group.stored}
        if len(insts) != 1:
            return None
        inst = insts.pop()
        return inst if self.target.inst_rule(group.kinds, inst, dtype) is None else None

    def inst_of(self, group: LayoutClass) -> tuple[int, int]:
        """The instruction block `group` has or will have."""
        layout = group.layout
        dtype = group.mma_dtype or group.values[0].type.dtype
        return layout.inst_data or self.default_inst(group, layout.sg_data, dtype)

    def mma_block(self, group: LayoutClass, dtype) -> tuple[int, int] | None:
        """The DPAS operand block of a tile_mma operand class (None for other classes)."""
        if group.mma_operand is None:
            return None
        return self.target.dpas_blocks(dtype, group.mma_precision)[group.mma_operand]

    def only_regrouped(self, group: LayoutClass) -> bool:
        """A tile_mma operand class of row-major tiles whose loaded values are only regrouped into DPAS blocks
        (no other op computes on them, nothing stores them), read by 2D block messages: such values may be arrays
        of blocks; or that a folded transpose of such loads gives (transposed_from)."""
        loaded = "load" in group.kinds or group.transposed_from is not None
        return (group.mma_operand is not None and self.target.block_io is not None and loaded
                and not {"value", "store"} & group.kinds
                and all(v.type.order == ROW_MAJOR for v in group.values if isinstance(v.type, TileType)))

    def load_message(self, group: LayoutClass, piece, block, dtype) -> tuple[int, int]:
        """The largest load message of DPAS blocks `block` that tiles `piece` and whose lanes the ABI allows."""
        vnni = self.target.packed_rows(dtype, group.mma_operand, block[0]) > 1
        for rows, blocks in self.target.block_io.load_shapes(dtype.bits, piece, block, vnni):
            inst = (rows, blocks * block[1])
            if self.target.inst_rule(group.kinds, inst, dtype) is None:
                return inst
        return block

    def check_inst(self, group: LayoutClass, piece, inst, dtype) -> None:
        if group.layout.inst_data is None:
            return  # the defaults pad odd pieces, as blocking does
        X.check_inst_divides(group.owner, group.layout, group.values[0].type.shape)
        rule = self.target.inst_rule(group.kinds, inst, dtype)
        if rule is not None:
            raise group.owner.error(f"inst_data {format_list(inst)} on target {self.target.name}: {rule}", INST_RULE)

    # ---- tile_mma operands -------------------------------------------------------------------------------
    def convert_mma_operands(self, op: X.TileMMAOp) -> None:
        """An operand cut in other blocks than DPAS takes is converted explicitly, in registers."""
        for index in (0, 1):
            v = op.operands[index]
            block = self.target.dpas_blocks(v.type.dtype, op.precision)[index]
            self.check_dpas_lanes(v.type.dtype, index, block)
            inst = v.layout.inst_data
            if inst == block or not divides(block, v.layout.sg_data) or \
                    self.target.inst_rule(("value",), block, v.type.dtype) is not None:
                continue  # DPAS regroups blocks it cannot take as whole values (8-bit B, odd shapes) itself
            lane_layout, lane_data = self.target.lane_fields(
                block, self.target.packed_rows(v.type.dtype, index, block[0]))
            wanted = dataclasses.replace(v.layout, inst_data=block, lane_layout=lane_layout, lane_data=lane_data)
            convert_operand(op, index, wanted)

    def check_dpas_lanes(self, dtype: DType, index: int, block) -> None:
        """A DPAS operand block whose lane holds more values than a SPIR-V vector needs private blocks (8-bit A on
        sub-group 8: 32 a lane; 8-bit B packs four K rows a word), which the legacy builtin ABI has not (xe-hpg)."""
        values = self.target.lane_components(block) // self.target.packed_rows(dtype, index, block[0])
        if values > MAX_VECTOR_COMPONENTS and not self.target.abi.private_blocks:
            raise NotImplementedError(
                f"{dtype} tile_mma on target {self.target.name} with the {self.target.abi.name} builtin ABI: a "
                f"lane's DPAS {'AB'[index]} block {format_list(block)} holds {values} values, more than a SPIR-V "
                f"vector, and this ABI reads no block into private memory; the operand as the words DPAS takes is "
                f"not implemented")


def only_transpose(load: X.LoadTileOp) -> X.TileTransposeOp | None:
    """The 2-D tile_transpose that is the only reader of `load`'s value, if there is one."""
    uses = load.result.uses
    if len(uses) == 1 and isinstance(uses[0][0], X.TileTransposeOp) and uses[0][0].perm == (1, 0):
        return uses[0][0]
    return None


def folded(op: Operation) -> bool:
    """Whether `op` is a tile_transpose XeTile-to-XeGPU folds into the load it reads (read_transposed): the only
    reader of a row-major tile's load, its value given no instruction block of its own (so it takes the load's,
    swapped) and only regrouped (tile_mma operands). The load and the transpose are then one transposed load,
    neither a value computed on."""
    if not isinstance(op, X.TileTransposeOp):
        return False
    load = op.operands[0].owner
    layout = X.layout_of(op.result)
    return (isinstance(load, X.LoadTileOp) and only_transpose(load) is op and load.operands[0].type.order == ROW_MAJOR
            and layout is not None and layout.inst_data is None
            and all(converts_use(user, index) for user, index in op.result.uses))


def converts_use(op: Operation, index: int) -> bool:
    """Whether operand `index` of `op` is only regrouped into other blocks: a tile_conv_layout, or a tile_mma A or
    B operand (converted to DPAS blocks below). A load block larger than a vector may have only such uses."""
    return isinstance(op, X.ConvertLayoutOp) or (isinstance(op, X.TileMMAOp) and index < 2)


def prefetch_message(piece, dtype, target: Target) -> tuple[int, int] | None:
    """The largest 2D prefetch message that tiles `piece` on `target` (Target.inst_rule: its block limits and
    lanes), the widest of those as large; None where none does."""
    shapes = [(rows, cols) for rows in range(1, piece[0] + 1) if piece[0] % rows == 0
              for cols in range(1, piece[1] + 1) if piece[1] % cols == 0]
    legal = [shape for shape in shapes if target.inst_rule(("prefetch",), shape, dtype) is None]
    return max(legal, key=lambda shape: (shape[0] * shape[1], shape[1]), default=None)


def divides(block, piece) -> bool:
    return all(p % b == 0 for b, p in zip(block, piece))


def values_with_layouts(func: FuncOp):
    """Every tile and vector `func` defines: op results and region arguments, in program order."""
    for op in walk(func.body):
        yield from (v for v in op.results if isinstance(v.type, (TileType, VectorType)))
        for region in op.regions:
            yield from (a for a in region.block.args if isinstance(a.type, (TileType, VectorType)))


def complete_layouts(func: FuncOp, target: Target, classes: UnionFind) -> None:
    LayoutCompletion(func, target, classes).run()
