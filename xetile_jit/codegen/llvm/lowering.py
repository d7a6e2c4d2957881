"""to-llvm for the XeGPU ops at the work-item level: DPAS and 2D block IO through the target's Xe builtins
(codegen/xe/builtins.py), reductions and data moving between lanes through subgroup shuffles. An access no 2D
block message fits (another block shape, most transposed reads, shared local memory, bools) goes element by
element: reads from addresses clamped into the array, keeping the padding outside it; writes only inside.

A tensor descriptor is its coordinates, <x = column, y = row> as <2 x i64>; the surface the builtins read
(base address, width and pitch in bytes, height in rows) is that of the memref the descriptor was created
on, known statically (ir/analysis.py) or, where a tile may come from several arrays, chosen by a third
component, the array's index. Block messages are used only where the rules of docs/reference/xe_builtins.md §6
hold: a surface the launch checked (MemRefType.block_io; the compiler driver warns once per kernel for an array
that fails it; on the `cpu` target, whose builtins take any layout, only its extents, MemRefType.within_extents)
and, for 8/16-bit data, a start on a 4-byte boundary (checked here, with the element path as the other branch). A
slice outside its batched array has no rows: the message addresses a one-row stand-in surface with the block far
below it (`surface`), so it reads padding and drops writes without an element path.

What the lowering works on is its context (codegen/llvm/context.py), which holds the lane values (`Lanes`,
codegen/llvm/lanes.py). Pieces constructed with the context lower the ops the lowering dispatches to them: DPAS
(codegen/llvm/dpas.py), atomics (codegen/llvm/atomics.py), scattered descriptors (codegen/llvm/scatter.py),
device_print (codegen/llvm/printf.py). Mixins still lower the rest, reading the lowering's descriptor and
block-message helpers: transposed loads (codegen/llvm/transposed.py), the element path (codegen/llvm/elements.py).
`XeGPULowering` is the GPU targets' lowering; the CPU targets' lowerings are subclasses of it (codegen/cpu/lowering.py),
and codegen/backends.py chooses the class and the builtin definitions by the target's builtin ABI.

The index-width rule: offsets are i64 from the kernel's index arithmetic to the descriptor and on through every
element address and bounds check (the element path), so no offset or extent wraps. Block messages take i32
coordinates: each is clamped into [-BLOCK_COORD_LIMIT, BLOCK_COORD_LIMIT] on its way to the message. A block
message's surface is at most 2**24 bytes or rows (launch-checked, BLOCK_MAX_EXTENT; 2**29 for the `cpu` target's
own builtins, ANY_LAYOUT_MAX_EXTENT), so a coordinate the clamp changes lies, like the clamped one, so far outside
the surface that the whole block is: every element reads padding and every write is dropped either way. A
descriptor moved by constant offsets summing to at most BLOCK_MAX_EXTENT (a prefetch `distance` steps ahead of a
load) takes its source's clamped coordinate plus them: exact where the clamp changes nothing, and beyond 2**30 -
2**24 (outside every surface, as the exact one is) where it does. So a prefetch costs one add, not a clamp of its
own. Within 2**30 + 2**24 the emulation's and the padding's arithmetic cannot overflow i32 (block sizes are far
below 2**30).
"""
from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir

from ...ir import core_ops as C
from ...ir import simt_ops as S
from ...ir import xegpu_ops as G
from ...ir import xegpu_scatter_ops as GS
from ...ir.analysis import known_multiples, may_be_empty, sources
from ...ir.core import FuncOp, walk
from ...ir.types import ScalarType, SlmMemRefType
from ...target.block_io import BLOCK_MAX_EXTENT
from ...ir.elementwise import BINARY, REDUCE_KINDS
from ..xe import builtins as X
from ..xe import prefetch_payload as payload
from ...target.targets import MAX_VECTOR_COMPONENTS, Target
from .atomics import Atomics
from .elements import ElementLowering
from .lanes import Lanes, PrivateBlock, in_block
from .transposed import TransposedLoadLowering, hardware_padding
from .dpas import Dpas
from .printf import Printer
from .scatter import Scatter
from .core import I32, I64, LLVMLowering, MemRef, NdMemRef, components, literal, llvm_type

BLOCK_COORD_LIMIT = 2**30  # |coordinate| a block message gets (module docstring: the index-width rule)


class XeGPULowering(TransposedLoadLowering, ElementLowering, LLVMLowering):
    """The lowering of a GPU target; `definitions` are its builtin ABI's (codegen/backends.py chooses both). A
    subclass composes other pieces by naming their classes (`lanes_class`, `dpas_class`)."""

    lanes_class = Lanes
    dpas_class = Dpas

    def __init__(self, func: FuncOp, target: Target, definitions: X.Definitions):
        super().__init__(func, target)
        self.definitions = definitions
        self.dpas = self.dpas_class(self.context, definitions, self.opencl)
        self.printer = Printer(self.context)
        self.atomics = Atomics(self.context, self.combine)
        self.scatter = Scatter(self.context, self.atomics)
        self.context.lanes = self.lanes_class(self.context)
        self.bases = sources(func, G.CreateNdDescOp, G.UpdateNdOffsetOp)
        self.x_multiples = known_multiples(func, G.CreateNdDescOp, G.UpdateNdOffsetOp, axis=1)
        arrays = [op.operands[0] for op in walk(func.body) if isinstance(op, G.CreateNdDescOp)]
        self.array_index = {array: i for i, array in enumerate(dict.fromkeys(arrays))}
        self.chosen_at_run_time = any(len(found) > 1 for found in self.bases.values())
        self.coord_type = ir.VectorType(I64, 3 if self.chosen_at_run_time else 2)

    @property
    def lanes(self) -> Lanes:
        return self.context.lanes

    def lane_scalars(self) -> bool:
        return self.target.lane_scalars

    def value_type(self, t) -> ir.Type:
        if isinstance(t, GS.ScatterDescType):
            return self.scatter.desc_type(t)
        return self.coord_type if isinstance(t, G.TensorDescType) else llvm_type(t)

    # ---- helpers -------------------------------------------------------------------------------------
    def combine(self, name: str, dtype, x: ir.Value, y: ir.Value) -> ir.Value:
        """The element-wise op `name` (a row of ir/elementwise.BINARY) on LLVM values of `dtype`."""
        return self.elementwise(BINARY[name].llvm, dtype, x, y)

    # ---- descriptors ---------------------------------------------------------------------------------
    def lower_MemRefTransposeOp(self, op):
        m = self.values[op.operands[0]]
        return MemRef(m.pointer, m.dtype, m.cols, m.rows, m.col_stride, m.row_stride)

    def lower_MemRefSubviewOp(self, op):
        """The slice's matrix: the pointer moved along the leading dims; no rows when an offset lies outside them."""
        m: NdMemRef = self.values[op.operands[0]]
        b = self.builder
        if len(m.sizes) == 1:  # one row
            return MemRef(m.pointer, m.dtype, ir.Constant(I64, 1), m.sizes[0], m.sizes[0], m.strides[0])
        offsets = [self.values[v] for v in op.operands[1:]]
        inside = functools.reduce(b.and_, [b.icmp_unsigned("<", o, n) for o, n in zip(offsets, m.sizes)])  # o >= 0 too
        start = functools.reduce(b.add, [b.mul(o, stride) for o, stride in zip(offsets, m.strides)])
        start = b.select(inside, start, ir.Constant(I64, 0))
        rows = b.select(inside, m.sizes[-2], ir.Constant(I64, 0))
        return MemRef(b.gep(m.pointer, [start]), m.dtype, rows, m.sizes[-1], m.strides[-2], m.strides[-1])

    def lower_MemRefReinterpretCastOp(self, op):
        m = self.values[op.operands[0]]
        return MemRef(m.pointer, m.dtype, *(self.values[v] for v in op.operands[1:]))

    def lower_CreateNdDescOp(self, op):
        row, col = (self.values[v] for v in op.operands[1:])  # index: i64, kept whole (the index-width rule)
        return self.coord(col, row, self.array_index[op.operands[0]])

    def lower_UpdateNdOffsetOp(self, op):
        drow, dcol = (self.values[v] for v in op.operands[1:])
        return self.builder.add(self.values[op.operands[0]], self.coord(dcol, drow))

    def coord(self, x: ir.Value, y: ir.Value, array: int = 0) -> ir.Value:
        """A descriptor: <x, y>, and the index of its array when a tile may come from several (chosen at run
        time); an offset update adds a descriptor whose index is 0."""
        return self.lanes.assemble([x, y] + ([ir.Constant(I64, array)] if self.chosen_at_run_time else []))

    def offset(self, tdesc, axis: int) -> ir.Value:
        """Coordinate `axis` (0: x, the column; 1: y, the row) of the descriptor, i64."""
        return self.builder.extract_element(self.values[tdesc], ir.Constant(I32, axis))

    def block_coord(self, tdesc, axis: int) -> ir.Value:
        """Coordinate `axis` as a block message takes it: clamped into +-BLOCK_COORD_LIMIT, i32; on an empty
        slice the row is BLOCK_COORD_LIMIT, far below the stand-in surface (`surface`). A descriptor moved by
        constant offsets is its source's block coordinate plus them (the index-width rule: no second clamp)."""
        b = self.builder
        source, shift = self.constant_shift(tdesc, axis)
        if source is not tdesc:
            coord = self.block_coord(source, axis)
            return b.add(coord, ir.Constant(I32, shift)) if shift else coord
        value = self.offset(tdesc, axis)
        low, high = ir.Constant(I64, -BLOCK_COORD_LIMIT), ir.Constant(I64, BLOCK_COORD_LIMIT)
        value = b.select(b.icmp_signed("<", value, low), low, b.select(b.icmp_signed(">", value, high), high, value))
        value = b.trunc(value, I32)
        rows = self.has_rows(tdesc) if axis == 1 else None
        return value if rows is None else b.select(rows, value, ir.Constant(I32, BLOCK_COORD_LIMIT))

    def constant_shift(self, tdesc, axis: int) -> tuple:
        """The descriptor `tdesc` was moved from by constant offsets (update_nd_offset), and their sum along `axis`,
        as long as that stays within BLOCK_MAX_EXTENT: a prefetch ahead of a load, or the load of a moved tile,
        takes the load's clamped coordinate plus a constant."""
        shift = 0
        while isinstance(tdesc.owner, G.UpdateNdOffsetOp):
            offset = tdesc.owner.operands[2 - axis]  # operands: descriptor, row offset, column offset
            if not isinstance(offset.owner, C.ConstantOp) or abs(shift + offset.owner.value) > BLOCK_MAX_EXTENT:
                break
            shift += offset.owner.value
            tdesc = tdesc.owner.operands[0]
        return tdesc, shift

    def xy(self, tdesc) -> ir.Value:
        """The <x, y> the block builtins take."""
        return self.lanes.assemble([self.block_coord(tdesc, 0), self.block_coord(tdesc, 1)])

    def in_slm(self, tdesc) -> bool:
        kinds = {isinstance(array.type, SlmMemRefType) for array in self.bases[tdesc]}
        if len(kinds) > 1:
            raise NotImplementedError("a tile that may come from shared local memory or from a global array")
        return kinds.pop()

    def memref(self, tdesc) -> MemRef:
        """The memref `tdesc` was created on; when it may be one of several, each field is chosen by the
        descriptor's array index."""
        self.in_slm(tdesc)  # one kind of memory
        arrays = sorted(self.bases[tdesc], key=self.array_index.get)
        chosen: MemRef = self.values[arrays[0]]
        b = self.builder
        for array in arrays[1:]:
            m: MemRef = self.values[array]
            this = b.icmp_unsigned("==", self.offset(tdesc, 2), ir.Constant(I64, self.array_index[array]))
            chosen = MemRef(b.select(this, m.pointer, chosen.pointer), m.dtype,
                            *(b.select(this, getattr(m, f), getattr(chosen, f))
                              for f in ("rows", "cols", "row_stride", "col_stride")))
        return chosen

    def surface(self, tdesc) -> list[ir.Value]:
        """base, width (bytes), height (rows), pitch (bytes) of the memref `tdesc` was created on. A slice outside
        its batched array has no rows, which no message may address: it stands in as one row (at the array's
        base, the launch-checked width and pitch) with the block far below it (block_coord), so the message reads
        padding and drops writes, as for any block outside its surface, with no element-by-element path."""
        m = self.memref(tdesc)
        b = self.builder
        size = ir.Constant(I64, max(1, m.dtype.bits // 8))
        pointer = b.bitcast(m.pointer, X.GLOBAL_BYTES)
        height = b.trunc(m.rows, I32)
        rows = self.has_rows(tdesc)
        if rows is not None:
            height = b.select(rows, height, ir.Constant(I32, 1))
        return [pointer, b.trunc(b.mul(m.cols, size), I32), height, b.trunc(b.mul(m.row_stride, size), I32)]

    def block_call(self, key, tdesc, *data: ir.Value, xy: ir.Value | None = None, cache=None) -> ir.Value:
        """The block message `key` on `tdesc`, with the op's `cache` hints (X.builtin: where the target has caches
        to steer)."""
        fn = X.builtin(self.module, self.target, key, self.definitions, cache)
        return self.builder.call(fn, self.surface(tdesc) + [xy or self.xy(tdesc), *data])

    def block_key(self, tdesc, layout: S.LaneLayout, kind, transpose=None):
        """The 2D block message for this access, or None when none fits: the general path does it then. Lanes
        [1, N] holding `chunk` adjacent columns are a message of blocks N * chunk wide (a lane's chunk is one
        component word of the message); a block of several column groups is one load of that many blocks side by
        side (array length). A load whose lanes pack two rows a word (lane_data [2, 1]) is a VNNI-transform read
        where the target has it: the same elements in each lane, in the register form DPAS B takes. Lanes
        [N / C, C] of one 32-bit element (C < N columns a block) are a load of C-wide blocks: their rows go to
        groups of C lanes (tf32 DPAS A: a d32 8-wide block; narrower data keeps the element path)."""
        rows, cols = layout.block
        dtype = tdesc.type.dtype
        if transpose or layout.replicated or dtype.is_bool or not self.block_surface(tdesc):
            return None
        groups = layout.column_groups
        width = cols // groups
        narrow = kind is X.BlockLoad and dtype.bits == 32 and width < self.lanes.size and \
            layout.grid == (self.lanes.size // width, width, 1)
        if layout.grid[:2] != (1, self.lanes.size) and not narrow:
            return None
        if kind is X.BlockStore:
            keys = [X.BlockStore(dtype.bits, rows, cols)] if groups == 1 else []
        else:
            keys = [X.BlockLoad(dtype.bits, rows, cols // groups, groups)]
            if layout.lane_data[0] == 32 // dtype.bits > 1:
                keys.insert(0, X.BlockLoad(dtype.bits, rows, cols // groups, groups, vnni=True))
        return next((key for key in keys if X.provides(self.target, key)), None)

    def block_surface(self, tdesc) -> bool:
        """Whether 2D block messages may address `tdesc`'s memory: global memory whose surface passed the
        launch's checks (MemRefType.block_io), or only its extents' where the builtins take any layout
        (BlockIO.any_layout, MemRefType.within_extents)."""
        io = self.target.block_io
        return (io is not None and not self.in_slm(tdesc)
                and all(array.type.block_io or (io.any_layout and array.type.within_extents)
                        for array in self.bases[tdesc]))

    def xe_surface(self, tdesc) -> bool:
        """Whether `tdesc`'s memory meets every surface rule of Xe's block messages (MemRefType.block_io)."""
        return all(array.type.block_io for array in self.bases[tdesc])

    def x_aligned(self, tdesc, unit: int = 0) -> ir.Value | None:
        """i1: the block starts on a multiple of `unit` bytes (default: the target's BlockIO.start_bytes, 4 on Xe, as
        8- and 16-bit messages need); None when every start is for sure: 32- and 64-bit data on Xe, any on a CPU,
        or a column offset the IR shows to be a multiple of `unit` bytes (ir/analysis.known_multiples: no
        element-by-element path to generate, the tutorial GEMM's case)."""
        if self.aligned_start(tdesc, unit):
            return None
        bytes_per = tdesc.type.dtype.bits // 8
        unit = unit or self.target.block_io.start_bytes
        b = self.builder
        x = self.offset(tdesc, 0)
        return b.icmp_unsigned("==", b.and_(x, ir.Constant(I64, unit // bytes_per - 1)), ir.Constant(I64, 0))

    def aligned_start(self, tdesc, unit: int = 0) -> bool:
        """Whether every block of `tdesc` starts on a multiple of `unit` bytes for sure (x_aligned's None)."""
        bytes_per = tdesc.type.dtype.bits // 8
        unit = unit or self.target.block_io.start_bytes
        return bytes_per >= unit or self.x_multiples.get(tdesc, 1) * bytes_per % unit == 0

    def slice_of_batch(self, tdesc) -> bool:
        """Whether `tdesc`'s surface may have no rows: a slice of a batched array (memref.subview)."""
        return any(may_be_empty(array) for array in self.bases[tdesc])

    def has_rows(self, tdesc) -> ir.Value | None:
        """i1: the surface has rows; a slice outside a batched array has none (memref.subview; its columns are the
        array's, launch-checked). None: not a slice."""
        if not self.slice_of_batch(tdesc):
            return None
        return self.builder.icmp_unsigned("!=", self.memref(tdesc).rows, ir.Constant(I64, 0))

    def by_message(self, aligned: ir.Value | None, message, elements):
        """message() where `aligned` (x_aligned, pairs_aligned: None for sure) lets a 2D block message address the
        block, else elements(); the value they give, if any."""
        if aligned is None:
            return message()
        b = self.builder
        with b.if_else(aligned) as (then, otherwise):
            with then:
                by_block, block_end = message(), b.block
            with otherwise:
                one_by_one = elements()
                if isinstance(by_block, PrivateBlock):  # both write one variable: no phi of pointers
                    self.lanes.assemble(self.lanes.elements(one_by_one), into=by_block)
                elements_end = b.block
        if by_block is None:
            return None
        if isinstance(by_block, PrivateBlock):
            return by_block
        merged = b.phi(by_block.type)
        merged.add_incoming(by_block, block_end)
        merged.add_incoming(one_by_one, elements_end)
        return merged

    def lower_SimtConstantMaskOp(self, op):
        return self.lanes.assemble([in_block(self.builder, row, col, op.sizes)
                                    for row, col in self.lanes.positions(op.layout)])

    def lower_SimtIotaOp(self, op):
        b, offset = self.builder, self.values[op.operands[0]]  # index: i64
        return self.lanes.assemble([b.trunc(b.add(position[op.dim], offset), I32)
                                    for position in self.lanes.positions(op.layout)])

    def lower_SimtPrintOp(self, op):
        """Each component in the valid part of the block (not its padding), at its index in the whole vector; in a
        replicated block lane 0 alone prints."""
        b = self.builder
        values = self.context.operands(op)
        origin = values[op.count:]
        vector = values[op.vector]
        lane_zero = b.icmp_unsigned("==", self.lanes.lane_id(), ir.Constant(I32, 0))
        for k, position in enumerate(self.lanes.positions(op.layout)):
            index = [b.add(p, o) for p, o in zip(position, origin)]
            show = b.and_(*(b.icmp_signed("<", p, ir.Constant(I64, n)) for p, n in zip(position, op.valid)))
            with b.if_then(b.and_(show, lane_zero) if op.layout.replicated else show):
                element = b.extract_element(vector, ir.Constant(I32, k)) if op.layout.per_lane > 1 else vector
                printed = [element if i == op.vector else v for i, v in enumerate(values[:op.count])]
                self.printer.call_printf(op, printed, index)

    def lower_CreateDescOp(self, op):
        return self.scatter.create(op)

    def lower_UpdateOffsetOp(self, op):
        return self.scatter.update(op)

    def lower_LoadGatherXOp(self, op):
        return self.scatter.load(op)

    def lower_StoreScatterXOp(self, op):
        return self.scatter.store(op)

    def lower_ScatterAtomicRMWOp(self, op):
        return self.scatter.atomic(op)

    def lower_SimtDpasOp(self, op):
        return self.dpas.lower(op)

    def lower_DevicePrintOp(self, op):
        self.printer.lower(op)

    def scalar_type(self, t):
        return llvm_type(ScalarType(t.dtype))

    def lower_SimtAtomicRMWOp(self, op):
        tdesc = op.operands[1]
        return self.atomics.atomic_elements(op, (self.element(tdesc, row, col, op.valid) for row, col in
                                         self.lanes.positions(op.layout)))

    # ---- memory ----------------------------------------------------------------------------------------
    def lower_SimtLoadNdOp(self, op):
        tdesc = op.operands[0]
        transposed = self.transposed_message(op) if op.transpose else None
        if transposed is not None:
            return self.by_message(self.pairs_aligned(tdesc), lambda: transposed(op), lambda: self.load_elements(op))
        key = self.block_key(tdesc, op.layout, X.BlockLoad, op.transpose)
        if key is None:
            return self.load_elements(op)
        return self.by_message(self.x_aligned(tdesc), lambda: self.block_load(key, op), lambda: self.load_elements(op))

    def block_load(self, key, op, xy: tuple | None = None) -> ir.Value | PrivateBlock:
        """The load `op` as message `key`; at the coordinates `xy` (x, y) when given, not its descriptor's (a block
        of a run's grid, codegen/cpu/pieces.py)."""
        tdesc = op.operands[0]
        result_type = llvm_type(op.result.type)
        words = self.block_read(key, tdesc, None if xy is None else self.lanes.assemble(list(xy)),
                                components(result_type), cache=op.cache)
        value = self.lanes.reinterpret(words, result_type)
        return value if hardware_padding(op) else self.padded(value, op, tdesc, xy)

    def block_read(self, key, tdesc, xy: ir.Value | None = None, elements: int = 1,
                   cache=None) -> ir.Value | PrivateBlock:
        """A lane's data of the block load `key`: the builtin writes it to private memory, from where a vector
        is read, or which is kept as a PrivateBlock when larger than a vector, in its words or in the `elements`
        the lane holds (16 words of a 16-bit VNNI load are 32 elements)."""
        data_type = X.describe(self.target, key).data_type
        dst = self.lanes.private(data_type)
        self.block_call(key, tdesc, dst, xy=xy, cache=cache)
        return self.lane_words(dst, data_type, elements)

    def lane_words(self, dst: ir.Value, data_type: ir.ArrayType, elements: int) -> ir.Value | PrivateBlock:
        """A lane's data of a block load, from the private array `dst` the load wrote (block_read)."""
        if max(data_type.count, elements) > MAX_VECTOR_COMPONENTS:
            return PrivateBlock(dst)
        return self.lanes.lane_vector(dst, data_type)

    def padded(self, value: ir.Value | PrivateBlock, op, tdesc, xy: tuple | None = None) -> ir.Value | PrivateBlock:
        """Elements outside the surface read as `padding` instead of the hardware's 0. The coordinates are the
        message's (clamped, i32; `xy` when given) plus each component's place in the block; the column test
        divides the width rather than multiply the column, which could overflow."""
        b = self.builder
        _, width, height, _ = self.surface(tdesc)
        columns = b.udiv(width, ir.Constant(I32, max(1, op.result.type.dtype.bits // 8)))
        x, y = xy or (self.block_coord(tdesc, 0), self.block_coord(tdesc, 1))
        pad = ir.Constant(self.scalar_type(op.result.type), literal(op.padding, op.result.type.dtype))
        zero = ir.Constant(I32, 0)
        items = []
        for (r, c), item in zip(self.lanes.positions(op.layout), self.lanes.elements(value)):
            row, col = b.add(y, b.trunc(r, I32)), b.add(x, b.trunc(c, I32))
            inside = b.and_(b.and_(b.icmp_signed(">=", row, zero), b.icmp_signed("<", row, height)),
                            b.and_(b.icmp_signed(">=", col, zero), b.icmp_signed("<", col, columns)))
            items.append(b.select(inside, item, pad))
        return self.lanes.assemble(items, into=value if isinstance(value, PrivateBlock) else None)

    def lower_SimtStoreNdOp(self, op):
        value, tdesc = op.operands
        key = self.block_key(tdesc, op.layout, X.BlockStore)
        if key is None or op.valid is not None:
            return self.store_elements(op)
        self.by_message(self.x_aligned(tdesc), lambda: self.block_store(key, op), lambda: self.store_elements(op))

    def block_store(self, key, op, data: ir.Value | None = None, xy: tuple | None = None) -> None:
        """The store `op` as message `key`; of `data` at (x, y) `xy` when given, not its operand at its descriptor's
        (a block of a run's grid, codegen/cpu/pieces.py)."""
        value, tdesc = op.operands
        raw_type = X.describe(self.target, key).signature.args[-1]
        data = self.values[value] if data is None else data
        message_xy = None if xy is None else self.lanes.assemble(list(xy))
        self.block_call(key, tdesc, self.builder.bitcast(data, raw_type), xy=message_xy, cache=op.cache)

    def lower_PrefetchNdOp(self, op):
        """A cache hint: emitted, with the op's L1/L3 controls, where the target has the prefetch message of this
        shape, else dropped; through a payload built once where xe_prefetch_payload applies."""
        t = op.operands[0].type
        key = X.BlockPrefetch(t.dtype.bits, *t.shape)
        tdesc = op.operands[0]
        if not (X.provides(self.target, key) and self.block_surface(tdesc)):
            return
        if payload.applies(self, key, tdesc):
            self.by_message(self.x_aligned(tdesc), lambda: payload.prefetch(self, key, tdesc, op.cache), lambda: None)
        else:
            self.by_message(self.x_aligned(tdesc), lambda: self.block_call(key, tdesc, cache=op.cache), lambda: None)

    # ---- moving and reducing data ------------------------------------------------------------------------
    def lower_ShuffleOp(self, op):
        first, second = (self.values[v] for v in op.operands)
        n = self.lanes.count(first)
        mask = list(op.mask)
        if isinstance(first, PrivateBlock) and len(mask) > 1 and \
                mask == list(range(mask[0], mask[0] + len(mask))) and mask[-1] < n:
            if len(mask) <= MAX_VECTOR_COMPONENTS:
                return self.lanes.read_run(first, mask[0], len(mask))
            with self.builder.goto_entry_block():  # beside the variable, as `reinterpret` wants it
                return first.part(self.builder, mask[0], len(mask))
        lanes = self.lanes
        return lanes.assemble([lanes.component(first, i) if i < n else lanes.component(second, i - n) for i in mask])

    def lower_LaneReduceOp(self, op):
        dtype = op.operands[0].type.dtype
        name = REDUCE_KINDS[op.kind][dtype.kind].combine
        data = np.array(self.lanes.elements(self.values[op.operands[0]]), dtype=object).reshape(op.shape)
        kept = [d for d in range(len(op.shape)) if d not in op.dims]
        groups = np.moveaxis(data, kept, list(range(len(kept)))).reshape(int(np.prod([op.shape[d] for d in kept])), -1)
        results = []
        for group in groups:
            value = group[0]
            for item in group[1:]:
                value = self.combine(name, dtype, value, item)
            results.append(value)
        return self.lanes.assemble(results)

    def lower_SubgroupReduceOp(self, op):
        """Butterfly over the lanes of a cluster: after log2(size) exchanges every lane holds the result."""
        dtype = op.operands[0].type.dtype
        name = REDUCE_KINDS[op.kind][dtype.kind].combine
        value = self.values[op.operands[0]]
        distance = op.cluster_size // 2
        while distance:
            lane = self.builder.xor(self.lanes.lane_id(), ir.Constant(I32, distance * op.cluster_stride))
            value = self.combine(name, dtype, value, self.lanes.shuffle(value, lane))
            distance //= 2
        return value

    def lower_LaneGatherOp(self, op):
        """Result component c: for each source component t some lane reads, shuffle it from the lane the table
        names and keep it where this lane wanted t."""
        bld = self.builder
        pool = [e for v in op.operands for e in self.lanes.elements(self.values[v])]
        lane = self.lanes.lane_id()
        results = []
        for lanes_row, components_row in zip(op.source_lanes, op.components):
            own = (lanes_row == np.arange(self.lanes.size)).all()  # only the component differs between lanes
            source_lane = bld.extract_element(self.table(lanes_row), lane)
            wanted = bld.extract_element(self.table(components_row), lane)
            result = None
            for t in sorted(set(components_row.tolist())):
                moved = pool[t] if own else self.lanes.shuffle(pool[t], source_lane)
                result = moved if result is None else bld.select(
                    bld.icmp_signed("==", wanted, ir.Constant(I32, t)), moved, result)
            results.append(result)
        return self.lanes.assemble(results)

    def table(self, row) -> ir.Constant:
        return ir.Constant(ir.VectorType(I32, len(row)), [ir.Constant(I32, int(v)) for v in row])

