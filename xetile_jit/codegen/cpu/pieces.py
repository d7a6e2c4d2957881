"""to-llvm on the `cpu` target: the block loads (or stores) of a subgroup's piece behind one bounds test.

Blocking cuts a subgroup's piece of a tile into instruction blocks (XeGPU RFC blocking rule), one xegpu.load_nd or
store_nd each, on descriptors that are the piece's origin plus constants. Each block's builtin tests whether its block
lies inside the surface and calls the out-of-line border function when not (codegen/cpu/builtins.py). On the OpenCL CPU
device the per-block tests and the calls they guard were most of a narrow row's cost: a copy kernel of 16M f32 elements
in rows of 512 ran at 0.52 of dpnp's copy with them and at 0.93 with the test forced true (docs/performance.md "CPU
notes"). So a run of at least MIN_RUN (blocks of one row: Target.row_run_blocks) consecutive block loads (or stores) on
one array, whose descriptors are a row-major grid of blocks a constant apart (`Access`, `Grid`), is tested once
(`Pieces.inside`): inside, each block is read or written with plain loads or stores (`block_access`, the builtin's own
inside path without its test), otherwise element by element (the builtin's border path written in the loop rather than
called). codegen/cpu/block_loops.py lowers the runs in loops over the blocks, so the driver builds one block's border
code, not the run's. Both paths read and write the same elements: the result is the builtin's either way. Blocks no
message can address (Xe's surface rules on `xe-emulated`, lanes a message does not take), or whose start's alignment
only a test at run time tells, are runs too: the element path in the loop, or the message and the element path behind
the first block's test, as for the op alone; they take no fast path. Loads that only DPAS ops read stay out of runs
(`feeds_dpas_only`).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from llvmlite import ir

from ...ir import core_ops as C
from ...ir import simt_ops as S
from ...ir import xegpu_ops as G
from ...ir.core import Operation, Value
from ..xe import builtins as X
from .builtins import fast_load_word, fast_store_word
from ...target.targets import MAX_VECTOR_COMPONENTS
from ..llvm.core import I32, I64, components, counted_loop, llvm_type, smaller, storage_bits
from ..llvm.block_messages import BlockMessages
from ..llvm.context import LoweringContext
from ..llvm.descriptors import Descriptors
from ..llvm.elements import Elements
from ..llvm.lanes import PrivateBlock
from ..xe.emulation import Surface, emulated_load_word, emulated_store_loop
from ..xe.llvm_helpers import ROLLED

I8, BOOL = ir.IntType(8), ir.IntType(1)


# How a block of a run is read or written (block_access): plain memory ops (the block lies inside its surface) or
# element by element (it may not)
PLAIN, ELEMENTS = "plain", "elements"

# the fewest blocks a run needs to be lowered together: each block of a run saves its test, each run costs two
# paths of driver build (the tutorial GEMM's 8-block C store grouped made its first launch 4.4-4.5 s against 4.0-4.1).
# Blocks of one row from the target's row_run_blocks on (Target.row_run_blocks says why). Blocks of several rows stay
# straight-line below MIN_RUN: in a loop the driver kept a lane's rows of a block side by side in private memory, read
# and written by gathers and scatters (16x128 f32 layer norm and softmax in blocks of two rows: 0.24-0.39x).
MIN_RUN = 16


@dataclass(frozen=True)
class Access:
    """One block load or store of a run: its op, message (None: no 2D block message can address the block, the
    element path reads or writes it), array, and descriptor origin as (base, constant). `aligned`: the block
    starts where its message may, for sure; else a test at run time picks the message or the element path, as
    for the op alone (BlockMessages.by_message)."""
    op: Operation
    key: object
    array: Value
    row: tuple[Value, int]
    col: tuple[Value, int]
    aligned: bool = True

    @property
    def plain(self) -> bool:
        """Whether the block is a message at an aligned start: only then may it take the fast paths (`inside`)."""
        return self.key is not None and self.aligned

    def joins(self, first: Access) -> bool:
        """Whether this access extends the run that starts with `first`: the same kind of op, lanes, padding and
        message on the same array, its origin the run's plus constants (the loop over the blocks lowers every block as
        the first, codegen/cpu/block_loops.py)."""
        return (type(self.op) is type(first.op) and self.key == first.key and self.array is first.array
                and self.aligned == first.aligned and self.op.layout == first.op.layout
                and getattr(self.op, "padding", None) == getattr(first.op, "padding", None)
                and self.row[0] is first.row[0] and self.col[0] is first.col[0])


@dataclass(frozen=True)
class Origin:
    """A run's first block as its loop reads it, computed before the loop: the surface and (x, y) block
    coordinates its messages take (None on the element path), the (row, col) i64 offsets the element path adds
    its elements to (None for a `plain` run), and the run-time test of an aligned start (None: sure)."""
    surface: list | None
    xy: tuple | None
    offsets: tuple | None
    aligned: ir.Value | None


@dataclass(frozen=True)
class Grid:
    """A run's blocks as blocking makes them: a row-major grid of `rows` x `cols` blocks, `step` (row, column)
    apart, from the first access's descriptor."""
    rows: int
    cols: int
    step: tuple[int, int]

    @classmethod
    def of(cls, run: list[Access]) -> Grid | None:
        shifts = [(a.row[1], a.col[1]) for a in run]
        ys, xs = sorted({y for y, _ in shifts}), sorted({x for _, x in shifts})
        step = (ys[1] - ys[0] if len(ys) > 1 else 0, xs[1] - xs[0] if len(xs) > 1 else 0)
        grid = cls(len(ys), len(xs), step)
        return grid if shifts == [(ys[0] + r * step[0], xs[0] + c * step[1]) for r, c in grid.cells()] else None

    def cells(self) -> list[tuple[int, int]]:
        return [(r, c) for r in range(self.rows) for c in range(self.cols)]

    def shift(self, b: ir.IRBuilder, index: ir.Value) -> tuple:
        """(x, y), i32, of block `index` from the first: its place in the grid."""
        cols = ir.Constant(I32, self.cols)
        row, col = b.udiv(index, cols), b.urem(index, cols)
        return b.mul(col, ir.Constant(I32, self.step[1])), b.mul(row, ir.Constant(I32, self.step[0]))


class Stash:
    """`count` values of `value_type` (a scalar or a vector) in one private block of their components, on the
    lowering's `context`; booleans as bytes (a SPIR-V kernel's memory holds no OpTypeBool). With `outside`, a
    block of one value more: the value of every index from a `limit` on (block_loops: blocks wholly outside their
    surfaces all compute the same value, kept once), in a variable of its own, so that the row's array keeps its
    size."""

    def __init__(self, context: LoweringContext, value_type: ir.Type, count: int, outside: bool = False):
        self.context, self.width, self.value_type, self.count = context, components(value_type), value_type, count
        element = value_type.element if isinstance(value_type, ir.VectorType) else value_type
        self.bools = element == BOOL
        self.block = self.variable(I8 if self.bools else element, count)
        self.outside = self.variable(I8 if self.bools else element, 1) if outside else None

    def variable(self, element: ir.Type, count: int) -> PrivateBlock:
        """A private block of `count` values' components."""
        return PrivateBlock(self.context.lanes.private(ir.ArrayType(element, count * self.width)))

    def put(self, index: ir.Value, value: ir.Value, block: PrivateBlock | None = None) -> None:
        """Value `index` (of `block`: the outside one)."""
        b = self.context.builder
        for j, component in enumerate(self.context.lanes.elements(value)):
            b.store(b.zext(component, I8) if self.bools else component, self.slot(index, j, block or self.block))

    def put_outside(self, value: ir.Value) -> None:
        self.put(ir.Constant(I32, 0), value, self.outside)

    def get(self, index: ir.Value, limit: ir.Value | None = None) -> ir.Value:
        """Value `index`; where a `limit` (i32) is given, the outside value for an index from it on."""
        b = self.context.builder
        before = None if limit is None else b.icmp_unsigned("<", index, limit)
        if before is not None:
            index = b.select(before, index, ir.Constant(I32, 0))
        words = [b.load(self.slot(index, j)) for j in range(self.width)]
        if before is not None:
            words = [b.select(before, word, b.load(self.slot(ir.Constant(I32, 0), j, self.outside)))
                     for j, word in enumerate(words)]
        return self.context.lanes.assemble([b.trunc(w, BOOL) for w in words] if self.bools else words)

    def slot(self, index: ir.Value, component: int, block: PrivateBlock | None = None) -> ir.Value:
        b = self.context.builder
        if isinstance(index, ir.Constant):  # filled before a loop: one constant, not two instructions a component
            position = ir.Constant(I32, index.constant * self.width + component)
        else:
            position = b.add(b.mul(index, ir.Constant(I32, self.width)), ir.Constant(I32, component))
        return (block or self.block).slot(b, position)


def descriptor(op: Operation) -> Value:
    """The tensor descriptor of a block load or store."""
    return op.operands[0] if isinstance(op, S.SimtLoadNdOp) else op.operands[1]


def feeds_dpas_only(load: S.SimtLoadNdOp) -> bool:
    """Whether only DPAS ops read the block `load` loads. Such a load stays out of runs: a run keeps its blocks in a
    private array its loop indexes, which the DPAS lowering then reads block by block, and the driver moved those
    blocks between lanes and components with shuffles (a 64x64x64 f16 tile_mma a workgroup over 1024 workgroups,
    with AVX2 code: 3.5 s of first launch and 38 GFLOP/s in runs, 1.5 s and 87 out of them; with AVX-512 code 1.5
    and 1.0 s, as fast; docs/performance.md "Driver builds")."""
    uses = load.result.uses
    return bool(uses) and all(isinstance(user, S.SimtDpasOp) for user, _ in uses)


def lane_elements(load: S.SimtLoadNdOp) -> int:
    return components(llvm_type(load.result.type))


def base_and_shift(value: Value) -> tuple[Value | None, int]:
    """`value` as base + constant (arith.addi of constants, folded), else (value, 0); a constant as (None, itself):
    the surface's origin is the base of the pieces every subgroup holds whole (wg_to_sg gives them constant offsets).
    Blocking adds each block's constant offset to the first block's: on a constant origin block 0 is (None, c) and
    block j (None, c + j * step), in the same run."""
    op = value.owner
    if isinstance(op, C.ConstantOp):
        return None, int(op.value)
    if isinstance(op, C.BinaryOp) and op.name == "arith.addi":
        for index in (0, 1):
            other = op.operands[1 - index].owner
            if isinstance(other, C.ConstantOp):
                base, shift = base_and_shift(op.operands[index])
                return base, shift + int(other.value)
    return value, 0


class Pieces:
    """The block accesses of one kernel's pieces on a CPU target, on its `descriptors` through its block
    `messages` (codegen/cpu/block_loops.py finds their runs and lowers them together)."""

    def __init__(self, context: LoweringContext, descriptors: Descriptors, messages: BlockMessages,
                 elements: Elements):
        self.context, self.descriptors, self.messages, self.elements = context, descriptors, messages, elements

    def access(self, op: Operation) -> Access | None:
        """`op` as an Access of a run: a block load or store of global memory, through a builtin message or the
        element path, on a descriptor made where it is used (create_nd_tdesc on the one array it may come from,
        with rows), a lane's data in a vector, the lanes' blocks not replicated, a load read by other ops than DPAS
        (`feeds_dpas_only`); else None."""
        if isinstance(op, S.SimtLoadNdOp) and not op.transpose and not feeds_dpas_only(op):
            key = self.messages.block_key(op.operands[0], op.layout, X.BlockLoad)
            words = 0 if key is None else X.describe(self.context.target, key).data_type.count
            if max(words, lane_elements(op)) > MAX_VECTOR_COMPONENTS:
                return None
        elif isinstance(op, S.SimtStoreNdOp) and op.valid is None:
            key = self.messages.block_key(op.operands[1], op.layout, X.BlockStore)
        else:
            return None
        tdesc = descriptor(op)
        create = tdesc.owner
        descriptors = self.descriptors
        if (op.layout.replicated or not isinstance(create, G.CreateNdDescOp) or len(descriptors.bases[tdesc]) != 1
                or descriptors.slice_of_batch(tdesc) or descriptors.in_slm(tdesc)):
            return None
        return Access(op, key, create.operands[0], base_and_shift(create.operands[1]),
                      base_and_shift(create.operands[2]), key is None or descriptors.aligned_start(tdesc))

    def min_run(self, access: Access) -> int:
        """The fewest blocks a run of `access`'s blocks needs (MIN_RUN; blocks of one row the target's
        row_run_blocks)."""
        return self.context.target.row_run_blocks if descriptor(access.op).type.shape[0] == 1 else MIN_RUN

    def starts_alike(self, run: list[Access], grid: Grid) -> bool:
        """Whether every block of `run` starts as aligned as the first, so that the first's run-time test
        (`Access.aligned`) holds for all: the grid's column step is a whole number of the target's start units."""
        tdesc = descriptor(run[0].op)
        bytes_per = max(1, storage_bits(tdesc.type.dtype) // 8)
        return run[0].aligned or grid.step[1] * bytes_per % self.context.target.block_io.start_bytes == 0

    def origin(self, access: Access) -> Origin:
        """The Origin of the run `access` is the first block of, before the loop."""
        tdesc = descriptor(access.op)
        descriptors = self.descriptors
        message = access.key is not None
        return Origin(descriptors.surface(tdesc) if message else None,
                      (descriptors.block_coord(tdesc, 0), descriptors.block_coord(tdesc, 1)) if message else None,
                      None if access.plain else (descriptors.offset(tdesc, 1), descriptors.offset(tdesc, 0)),
                      None if access.aligned else descriptors.x_aligned(tdesc))

    def by_elements(self, access: Access, origin: Origin, shift: tuple, data: ir.Value | None = None):
        """The block of `access` `shift` (x, y) from the run's first, on the element path (Elements): read (its
        value) or written (`data`)."""
        b = self.context.builder
        row, col = origin.offsets
        at = (b.add(row, b.zext(shift[1], I64)), b.add(col, b.zext(shift[0], I64)))
        if data is None:
            return self.elements.load(access.op, at)
        self.elements.store(access.op, data, at)
        return None

    def inside(self, run: list[Access]) -> ir.Value:
        """i1: every block of `run` lies inside its surface, tested on the origin's i64 coordinates (no clamp)."""
        b = self.context.builder
        first = run[0]
        extent, columns, height = self.extents(first, self.descriptors.surface(descriptor(first.op)))
        tests = []
        for (base, _), shifts, size, end in ((first.col, [a.col[1] for a in run], extent[0], columns),
                                             (first.row, [a.row[1] for a in run], extent[1], height)):
            origin = ir.Constant(I64, 0) if base is None else self.context.values[base]
            tests += spans_inside(b, origin, min(shifts), max(shifts) + size, end)
        return functools.reduce(b.and_, tests)

    def block_test(self, access: Access, surface: list, xy: tuple) -> BlockTest:
        """Whether the block of `access` at `xy` (x, y: i32) lies inside `surface`, or wholly outside it: a block's
        own test, in the loop over the blocks that may cross the surface's end (`inside_blocks`)."""
        b = self.context.builder
        extent, columns, height = self.extents(access, surface)
        x, y = (b.sext(v, I64) for v in xy)
        zero = ir.Constant(I64, 0)
        inside = functools.reduce(b.and_, [*spans_inside(b, x, 0, extent[0], columns),
                                           *spans_inside(b, y, 0, extent[1], height)])
        outside = functools.reduce(b.or_, [b.icmp_signed(">=", x, columns), b.icmp_signed(">=", y, height),
                                           b.icmp_signed("<=", b.add(x, ir.Constant(I64, extent[0])), zero),
                                           b.icmp_signed("<=", b.add(y, ir.Constant(I64, extent[1])), zero)])
        return BlockTest(inside, outside)

    def extents(self, access: Access, surface: list) -> tuple[tuple[int, int], ir.Value, ir.Value]:
        """A block's (columns, rows), and the surface's columns and rows (i64)."""
        b = self.context.builder
        desc = X.describe(self.context.target, access.key)
        _, width, height, _ = surface
        columns = b.zext(b.udiv(width, ir.Constant(I32, max(1, desc.bits // 8))), I64)
        return (desc.cols * desc.blocks, desc.rows), columns, b.zext(height, I64)

    def row_place(self, access: Access, grid: Grid, origin: Origin) -> tuple | None:
        """For a run that is one row of blocks along x: a block's (columns, rows), the surface's columns and rows,
        and the run's first block's x and y (i64); None for another grid."""
        if grid.rows != 1 or grid.step[1] <= 0:
            return None
        b = self.context.builder
        extent, columns, height = self.extents(access, origin.surface)
        return (extent, columns, height, *(b.sext(v, I64) for v in origin.xy))

    def inside_blocks(self, access: Access, grid: Grid, origin: Origin) -> ir.Value | None:
        """i32: how many of the run's first blocks lie inside their surface, for a run that is one row of blocks
        along x (None for another grid): such a row crosses the surface's end at most once, so a loop over those
        blocks takes plain loads and stores, and only the blocks after them test each one (Triton-style rows: 768
        columns in tiles of 1024)."""
        place = self.row_place(access, grid, origin)
        if place is None:
            return None
        b, (extent, columns, height, x, y) = self.context.builder, place
        zero, count = ir.Constant(I64, 0), ir.Constant(I64, grid.cols)
        room = b.sub(b.sub(columns, x), ir.Constant(I64, extent[0]))  # block i is inside while i * step <= room
        inside = smaller(b, b.add(b.sdiv(room, ir.Constant(I64, grid.step[1])), ir.Constant(I64, 1)), count)
        starts_inside = functools.reduce(b.and_, [b.icmp_signed(">=", room, zero), b.icmp_signed(">=", x, zero),
                                                  *spans_inside(b, y, 0, extent[1], height)])
        return b.trunc(b.select(starts_inside, inside, zero), I32)

    def touched_blocks(self, access: Access, grid: Grid, origin: Origin) -> ir.Value | None:
        """i32: how many of a row of blocks' first blocks start before the surface's right edge, none where the row
        lies wholly above or below the surface (None for another grid): every block after them is wholly outside,
        reads only the padding and writes nothing."""
        place = self.row_place(access, grid, origin)
        if place is None:
            return None
        b, (extent, columns, height, x, y) = self.context.builder, place
        step, zero, count = ir.Constant(I64, grid.step[1]), ir.Constant(I64, 0), ir.Constant(I64, grid.cols)
        # ceil((columns - x) / step): rounded towards zero, a row starting past the end counts none
        touched = smaller(b, b.sdiv(b.add(b.sub(columns, x), ir.Constant(I64, grid.step[1] - 1)), step), count)
        meets = b.and_(b.icmp_signed("<", y, height), b.icmp_signed(">", b.add(y, ir.Constant(I64, extent[1])), zero))
        return b.trunc(b.select(b.and_(meets, b.icmp_signed(">", touched, zero)), touched, zero), I32)

    def block_access(self, access: Access, surface: list, xy: tuple, data: ir.Value | None = None,
                     path: str | BlockTest = PLAIN) -> ir.Value | None:
        """The block of `access` at `xy` (x, y) of `surface`, a loop over a lane's components as in the builtin: read
        (its value, the op's padding outside the surface) or written (`data`; None). On `path` PLAIN (the block is
        inside): plain loads or stores, no bounds test; ELEMENTS: element by element, each tested against the
        surface (the builtin's border path, codegen/xe/emulation.py, in a rolled loop); a BlockTest: PLAIN where
        the block is inside, no memory access where it is wholly outside (the padding read: a select, so that no
        loop stores a constant, which the driver made a memset, a call a lane, that kept the whole kernel's values
        in memory around it; ELEMENTS there too where the lane's value is a private array), ELEMENTS where it
        crosses the surface's end. Written here rather than called: a call clobbers the vector registers, and the
        OpenCL CPU compiler then kept the values live across a region's two loops in memory on the fast path as
        well (layer norm's mean, scale and weight and bias pointers reloaded every block; docs/performance.md "CPU
        notes")."""
        b, op, lanes = self.context.builder, access.op, self.context.lanes
        desc = X.describe(self.context.target, access.key)
        surface = Surface(*surface, *xy)
        lane, index64 = lanes.lane_id(), self.context.lane_index()
        if isinstance(op, S.SimtStoreNdOp):
            raw = self.messages.raw_data(data, op.operands[0].type, desc.signature.args[-1])
            by_paths(b, path, lambda: counted_loop(b, desc.components, None, lambda b, index, _: fast_store_word(
                b, surface, desc, index64, index, b.extract_element(raw, index) if desc.components > 1 else raw)),
                lambda: emulated_store_loop(b, raw, desc, surface, lane))
            return None
        if isinstance(path, BlockTest) and max(desc.data_type.count, lane_elements(op)) > MAX_VECTOR_COMPONENTS:
            path = BlockTest(path.inside, ir.Constant(BOOL, 0))  # a private array's value takes no select
        dst = PrivateBlock(lanes.private(desc.data_type))
        by_paths(b, path, lambda: counted_loop(b, desc.components, None, lambda b, index, _: b.store(
            fast_load_word(b, surface, desc, index64, index), dst.slot(b, index))),
            lambda: counted_loop(b, desc.components, None, lambda b, index, _: b.store(
                emulated_load_word(b, desc, surface, lane, index), dst.slot(b, index)), ROLLED))
        words = self.messages.lane_words(dst.pointer, desc.data_type, lane_elements(op))
        if path == PLAIN:  # every element read: no padding
            return self.messages.lane_value(words, op.result.type)
        value = self.messages.padded_value(words, op, descriptor(op), xy)
        if isinstance(path, BlockTest) and not isinstance(value, PrivateBlock):
            return b.select(path.outside, self.messages.padding_value(op), value)
        return value


def spans_inside(b: ir.IRBuilder, origin: ir.Value, low: int, high: int, end: ir.Value) -> list[ir.Value]:
    """The i1 tests that `origin` + `low` .. `origin` + `high` (i64, `high` exclusive) lies within 0 .. `end`."""
    return [b.icmp_signed(">=", b.add(origin, ir.Constant(I64, low)), ir.Constant(I64, 0)),
            b.icmp_signed("<=", b.add(origin, ir.Constant(I64, high)), end)]


@dataclass(frozen=True)
class BlockTest:
    """A block's own test (Pieces.block_test): i1 `inside` its surface, i1 wholly `outside` it."""
    inside: ir.Value
    outside: ir.Value


def by_paths(b: ir.IRBuilder, path: str | BlockTest, plain, elements) -> None:
    """`plain()` on path PLAIN, `elements()` on ELEMENTS; behind a BlockTest's branches, `plain()` where the block
    is inside, `elements()` where it is not wholly outside (block_access)."""
    if not isinstance(path, BlockTest):
        (plain if path == PLAIN else elements)()
        return
    with b.if_else(path.inside) as (then, otherwise):
        with then:
            plain()
        with otherwise:
            with b.if_then(b.not_(path.outside)):
                elements()
