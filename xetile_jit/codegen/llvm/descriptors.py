"""to-llvm: the tensor descriptors of the XeGPU lowering and the facts about their memory that decide how an access
is made (codegen/llvm/lowering.py's module docstring: the descriptor, its surface, the index-width rule).

A descriptor is its coordinates, <x = column, y = row> as <2 x i64>, and the index of its array as a third component
where a tile may come from several arrays (chosen at run time). `Descriptors` answers, for one kernel, where a
descriptor's memory is (`memref`, `surface`), its coordinates as a block message takes them (`block_coord`, `xy`), and
whether a 2D block message may address it (`block_surface`, `x_aligned`, `has_rows`).
"""
from __future__ import annotations

from llvmlite import ir

from ...ir import core_ops as C
from ...ir import xegpu_ops as G
from ...ir.analysis import known_multiples, may_be_empty, sources
from ...ir.core import walk
from ...ir.types import SlmMemRefType
from ...target.block_io import BLOCK_MAX_EXTENT
from ..xe import builtins as X
from .context import LoweringContext
from .core import I32, I64, MemRef, storage_bits

BLOCK_COORD_LIMIT = 2**30  # |coordinate| a block message gets (codegen/llvm/lowering.py: the index-width rule)
# the clamp of a stepped coordinate's start (codegen/llvm/lowering.py: the stepped-coordinate rule)
STEPPED_BELOW, STEPPED_ABOVE = 2**31 + 2**26, 2**26


class Descriptors:
    """The descriptors of the kernel `context.func` (their arrays found once, ir/analysis.sources)."""

    def __init__(self, context: LoweringContext):
        self.context = context
        func = context.func
        self.bases = sources(func, G.CreateNdDescOp, G.UpdateNdOffsetOp)
        self.x_multiples = known_multiples(func, G.CreateNdDescOp, G.UpdateNdOffsetOp, axis=1)
        arrays = [op.operands[0] for op in walk(func.body) if isinstance(op, G.CreateNdDescOp)]
        self.array_index = {array: i for i, array in enumerate(dict.fromkeys(arrays))}
        self.chosen_at_run_time = any(len(found) > 1 for found in self.bases.values())
        self.coord_type = ir.VectorType(I64, 3 if self.chosen_at_run_time else 2)
        # a descriptor a loop carries: its body argument -> (the loop, the index of its init among the loop's)
        self.carried = {arg: (op, i) for op in walk(func.body) if isinstance(op, C.ForOp)
                        for i, arg in enumerate(op.body.args[1:]) if isinstance(arg.type, G.TensorDescType)}

    @property
    def builder(self) -> ir.IRBuilder:
        return self.context.builder

    def create(self, op: G.CreateNdDescOp) -> ir.Value:
        row, col = (self.context.values[v] for v in op.operands[1:])  # index: i64, kept whole (the index-width rule)
        return self.coord(col, row, self.array_index[op.operands[0]])

    def update(self, op: G.UpdateNdOffsetOp) -> ir.Value:
        drow, dcol = (self.context.values[v] for v in op.operands[1:])
        return self.builder.add(self.context.values[op.operands[0]], self.coord(dcol, drow))

    def coord(self, x: ir.Value, y: ir.Value, array: int = 0) -> ir.Value:
        """A descriptor: <x, y>, and the index of its array when a tile may come from several (chosen at run
        time); an offset update adds a descriptor whose index is 0."""
        return self.context.lanes.assemble([x, y] + ([ir.Constant(I64, array)] if self.chosen_at_run_time else []))

    def offset(self, tdesc, axis: int) -> ir.Value:
        """Coordinate `axis` (0: x, the column; 1: y, the row) of the descriptor, i64."""
        return self.builder.extract_element(self.context.values[tdesc], ir.Constant(I32, axis))

    def block_coord(self, tdesc, axis: int, hint: bool = False) -> ir.Value:
        """Coordinate `axis` as a block message takes it: clamped into +-BLOCK_COORD_LIMIT, i32; on an empty
        slice the row is BLOCK_COORD_LIMIT, far below the stand-in surface (`surface`). A descriptor moved by
        constant offsets, or created at an offset plus a constant, is its source's (that offset's) block coordinate
        plus them (the index-width rule: no second clamp); one a loop carries unmoved is its init's, and one it
        moves by its step the iv's (`stepped_coord`). `hint`: for a prefetch, truncated, not clamped (the
        index-width rule: a prefetch reads no value, and a wrapped coordinate is still one of its surface, whose
        bounds the message checks)."""
        b = self.builder
        source, shift = self.constant_shift(tdesc, axis)
        if source is not tdesc:
            return self.shifted(self.block_coord(source, axis, hint), shift)
        carried = self.carried_shift(tdesc, axis)
        if carried is not None and carried[2] == 0:
            return self.block_coord(carried[1], axis, hint)
        stepped = None if carried is None else self.stepped_coord(tdesc, axis, carried)
        if stepped is not None:
            return stepped
        index, shift = self.created_shift(tdesc, axis)
        value = self.offset(tdesc, axis) if index is None else self.context.values[index]
        if not hint:
            value = self.clamped(value, -BLOCK_COORD_LIMIT, BLOCK_COORD_LIMIT)
        value = self.shifted(b.trunc(value, I32), shift)
        rows = self.has_rows(tdesc) if axis == 1 and not hint else None
        return value if rows is None else b.select(rows, value, ir.Constant(I32, BLOCK_COORD_LIMIT))

    def clamped(self, value: ir.Value, low: int, high: int) -> ir.Value:
        """The i64 `value` clamped into [low, high]: OpenCL's s_clamp for Intel's GPU compiler (which then sees a
        clamped coordinate plus a constant as one payload, docs/performance.md), compares and selects on a CPU. The
        OpenCL CPU compiler's vectorizer takes s_clamp's result as varying across the sub-group, and with it every
        address and bounds test the coordinate reaches: each block read and written lane by lane and both paths of
        each block under a mask (a load, scale and store of 4096x512 f16 rows 1.4 ms against 0.2 with the selects;
        docs/performance.md "CPU notes")."""
        low, high = ir.Constant(I64, low), ir.Constant(I64, high)
        if not self.context.target.abi.runs_on_cpu:
            return self.context.call("__spirv_ocl_s_clamp", I64, value, low, high)
        b = self.builder
        value = b.select(b.icmp_signed("<", value, low), low, value)
        return b.select(b.icmp_signed(">", value, high), high, value)

    def shifted(self, coord: ir.Value, shift: int) -> ir.Value:
        return self.builder.add(coord, ir.Constant(I32, shift)) if shift else coord

    def carried_shift(self, tdesc, axis: int) -> tuple | None:
        """(the loop, the init, the constant it moves `tdesc` by along `axis` an iteration) of a descriptor a loop
        carries and its body moves by constant offsets only; None for any other."""
        carrier = self.carried.get(tdesc)
        if carrier is None:
            return None
        loop, index = carrier
        source, shift = self.constant_shift(loop.body.terminator.operands[index], axis)
        return (loop, loop.operands[3 + index], shift) if source is tdesc else None

    @staticmethod
    def created_shift(tdesc, axis: int) -> tuple:
        """(the index value, the constant) a descriptor was created at along `axis` when that offset is an index
        plus constants summing to at most BLOCK_MAX_EXTENT (its block coordinate is the index's plus them, as
        `constant_shift`'s); (None, 0) for any other."""
        if not isinstance(tdesc.owner, G.CreateNdDescOp):
            return None, 0
        offset, shift = tdesc.owner.operands[2 - axis], 0  # operands: array, row, column
        while isinstance(offset.owner, C.BinaryOp) and offset.owner.name == "arith.addi":
            constants = [isinstance(v.owner, C.ConstantOp) for v in offset.owner.operands]
            if constants.count(True) != 1:
                break
            constant, other = offset.owner.operands[::1 if constants[0] else -1]
            if abs(shift + constant.owner.value) > BLOCK_MAX_EXTENT:
                break
            shift += constant.owner.value
            offset = other
        return (offset, shift) if shift else (None, 0)

    def stepped_coord(self, tdesc, axis: int, carried: tuple) -> ir.Value | None:
        """Coordinate `axis` of a descriptor a loop carries and moves by its step each iteration (`carried`: its
        carried_shift), as a block message takes it, without a clamp that depends on the iteration: the init's
        coordinate clamped into [-STEPPED_BELOW, STEPPED_ABOVE], loop-invariant (Intel's GPU compiler hoists it: no
        clamp in the loop's ISA), plus iv - lower in i32 (codegen/llvm/lowering.py: the stepped-coordinate rule);
        None where the rule does not hold: a loop whose iv is not i32 or whose lower (>= 0) and step (> 0) are not
        constants, an axis moved by another amount, memory that may exceed BLOCK_MAX_EXTENT. A row of a slice
        with no rows starts at STEPPED_ABOVE: every step of it lies far below the one-row stand-in surface."""
        if not self.xe_surface(tdesc):
            return None
        loop, init, shift = carried
        lower, _, step = (operand.owner for operand in loop.operands[:3])
        iv = loop.body.args[0]
        if not (isinstance(lower, C.ConstantOp) and isinstance(step, C.ConstantOp) and iv.type.dtype.kind == "i"
                and iv.type.dtype.bits == 32 and lower.value >= 0 and step.value == shift > 0):
            return None
        b = self.builder
        start = self.clamped(self.offset(init, axis), -STEPPED_BELOW, STEPPED_ABOVE)
        rows = self.has_rows(tdesc) if axis == 1 else None
        if rows is not None:
            start = b.select(rows, start, ir.Constant(I64, STEPPED_ABOVE))
        return b.add(b.trunc(start, I32), b.sub(self.context.values[iv], ir.Constant(I32, lower.value)))

    @staticmethod
    def constant_shift(tdesc, axis: int) -> tuple:
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

    def xy(self, tdesc, hint: bool = False) -> ir.Value:
        """The <x, y> the block builtins take (`hint`: block_coord's)."""
        return self.context.lanes.assemble([self.block_coord(tdesc, 0, hint), self.block_coord(tdesc, 1, hint)])

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
        chosen: MemRef = self.context.values[arrays[0]]
        b = self.builder
        for array in arrays[1:]:
            m: MemRef = self.context.values[array]
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

    def block_surface(self, tdesc) -> bool:
        """Whether 2D block messages may address `tdesc`'s memory: global memory whose surface passed the
        launch's checks (MemRefType.block_io), or only its extents' where the builtins take any layout
        (BlockIO.any_layout, MemRefType.within_extents)."""
        io = self.context.target.block_io
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
        bytes_per = storage_bits(tdesc.type.dtype) // 8
        unit = unit or self.context.target.block_io.start_bytes
        b = self.builder
        x = self.offset(tdesc, 0)
        return b.icmp_unsigned("==", b.and_(x, ir.Constant(I64, unit // bytes_per - 1)), ir.Constant(I64, 0))

    def aligned_start(self, tdesc, unit: int = 0) -> bool:
        """Whether every block of `tdesc` starts on a multiple of `unit` bytes for sure (x_aligned's None)."""
        bytes_per = storage_bits(tdesc.type.dtype) // 8
        unit = unit or self.context.target.block_io.start_bytes
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
