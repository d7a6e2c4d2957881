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
codegen/llvm/lanes.py). Pieces constructed with the context lower the ops the lowering dispatches to them:
descriptors and their surfaces (codegen/llvm/descriptors.py), block messages (codegen/llvm/block_messages.py),
transposed loads (codegen/llvm/transposed.py), the element path (codegen/llvm/elements.py), DPAS
(codegen/llvm/dpas.py), atomics (codegen/llvm/atomics.py), scattered descriptors (codegen/llvm/scatter.py),
device_print (codegen/llvm/printf.py).
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
own; a prefetch's coordinates are not clamped at all but truncated (a carried prefetch tile of its own layout,
transforms/xetile/prefetch_insertion.py): it reads no value, and a wrapped coordinate addresses the same surface,
whose bounds the message checks. Within 2**30 + 2**24 the emulation's and the padding's arithmetic cannot overflow i32 (block sizes are far
below 2**30).

The stepped-coordinate rule: a clamp in a loop costs an iteration four instructions (64-bit compares and selects),
so a descriptor a loop carries is not clamped by the iteration. Unmoved by the loop, it takes its init's block
coordinate, loop-invariant (Intel's compiler hoists it). Moved by the loop's step along an axis (the GEMM's K tiles;
scf.for with an i32 iv, a constant lower >= 0 and a constant step > 0, on memory within BLOCK_MAX_EXTENT), its
coordinate there is the init's, clamped into [-(2**31 + 2**26), 2**26] (loop-invariant too), plus iv - lower in i32,
wrapping: the loop's own iv, so Intel's compiler keeps one induction variable for the loop test and every payload.
iv - lower lies in [0, 2**31), so with a start inside the clamp the exact coordinate v (plus a constant shift of at
most 2**24: a prefetch ahead) lies within 2**31 + 2**27 of 0, and the i32 one is v modulo 2**32: v itself wherever
|v| <= 2**24, and of magnitude above 2**24 wherever |v| is. A block message reads or writes a block near its surface
at the exact place and leaves every other wholly outside (the message bound-checks the signed 32-bit x and y; the
emulation too, where a coordinate plus a block position that wraps is negative). A start below the clamp stays below
-2**26 + 2**24 over 2**31 steps, as its clamped stand-in does; one above stays above 2**26 - 2**24, as its stand-in
does: both outside.
"""
from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir

from ...ir import xegpu_ops as G
from ...ir import xegpu_scatter_ops as GS
from ...ir.simt_ops import OWN, SHUFFLED, gather_plan, moves_in
from ...ir.core import FuncOp
from ...ir.elementwise import BINARY, REDUCE_KINDS
from ..xe import builtins as X
from ..xe.llvm_helpers import BROADCAST
from ...target.targets import MAX_VECTOR_COMPONENTS, Target
from . import lane_slots
from .atomics import Atomics
from .block_messages import BlockMessages
from .components import Components
from .descriptors import Descriptors
from .elements import Elements
from .lanes import Lanes, PrivateBlock, in_block
from .transposed import TransposedLoads
from .dpas import Dpas
from .printf import Printer
from .scatter import Scatter
from .core import I32, I64, LLVMLowering, MemRef, NdMemRef, llvm_type

# a reduction's combine (a row of ir/elementwise.BINARY) -> the SPIR-V GroupNonUniform op that reduces with it
GROUP_REDUCTIONS = {"arith.addf": "FAdd", "arith.addi": "IAdd", "arith.mulf": "FMul", "arith.muli": "IMul",
                    "arith.maxnumf": "FMax", "arith.minnumf": "FMin", "arith.maxsi": "SMax", "arith.minsi": "SMin",
                    "arith.maxui": "UMax", "arith.minui": "UMin", "arith.andi": "BitwiseAnd", "arith.ori": "BitwiseOr",
                    "arith.xori": "BitwiseXor"}
GROUP_OPERATION_REDUCE, GROUP_OPERATION_CLUSTERED = 0, 3  # SPIR-V's GroupOperation Reduce and ClusteredReduce


def ordered_bits(b: ir.IRBuilder, bits: ir.Value) -> ir.Value:
    """An f32's bits as an i32 whose signed order is the floats' (-0.0 below 0.0): a negative float's magnitude
    bits flipped. Its own inverse; the keys past either end (-2**31, 2**31 - 1) map back to NaNs."""
    return b.xor(bits, b.and_(b.ashr(bits, ir.Constant(I32, 31)), ir.Constant(I32, 2 ** 31 - 1)))


class XeGPULowering(LLVMLowering):
    """The lowering of a GPU target; `definitions` are its builtin ABI's (codegen/backends.py chooses both). A
    subclass composes other pieces by naming their classes (`lanes_class`, `dpas_class`)."""

    lanes_class = Lanes
    dpas_class = Dpas

    def __init__(self, func: FuncOp, target: Target, definitions: X.Definitions):
        super().__init__(func, target)
        self.definitions = definitions
        self.printer = Printer(self.context)
        self.atomics = Atomics(self.context, self.combine)
        self.scatter = Scatter(self.context, self.atomics)
        self.context.lanes = self.lanes_class(self.context)
        self.components = Components(self.context, target.lane_scalars)
        self.descriptors = Descriptors(self.context)
        self.dpas = self.dpas_class(self.context, definitions, self.opencl, self.descriptors)
        self.messages = BlockMessages(self.context, self.descriptors, definitions)
        self.transposed = TransposedLoads(self.context, self.descriptors, self.messages)
        self.elements = Elements(self.context, self.descriptors)

    @property
    def lanes(self) -> Lanes:
        return self.context.lanes

    def value_type(self, t) -> ir.Type:
        if isinstance(t, GS.ScatterDescType):
            return self.scatter.desc_type(t)
        return self.descriptors.coord_type if isinstance(t, G.TensorDescType) else llvm_type(t)

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
        return self.descriptors.create(op)

    def lower_UpdateNdOffsetOp(self, op):
        return self.descriptors.update(op)

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

    def lower_SimtAtomicRMWOp(self, op):
        tdesc = op.operands[1]
        return self.atomics.atomic_elements(
            op, lambda k: self.elements.element(tdesc, *self.lanes.position_at(op.layout, k), op.valid))

    # ---- memory ----------------------------------------------------------------------------------------
    def lower_SimtLoadNdOp(self, op):
        tdesc = op.operands[0]
        messages, elements = self.messages, self.elements
        transposed = self.transposed.message(op) if op.transpose else None
        if transposed is not None:
            return messages.by_message(self.transposed.pairs_aligned(tdesc), lambda: transposed(op),
                                       lambda: elements.load(op))
        key = messages.block_key(tdesc, op.layout, X.BlockLoad, op.transpose)
        if key is None:
            return elements.load(op)
        return messages.by_message(self.descriptors.x_aligned(tdesc), lambda: messages.load(key, op),
                                   lambda: elements.load(op))

    def lower_SimtStoreNdOp(self, op):
        value, tdesc = op.operands
        messages, elements = self.messages, self.elements
        key = messages.block_key(tdesc, op.layout, X.BlockStore)
        if key is None or op.valid is not None:
            return elements.store(op)
        messages.by_message(self.descriptors.x_aligned(tdesc), lambda: messages.store(key, op),
                            lambda: elements.store(op))

    def lower_PrefetchNdOp(self, op):
        self.messages.prefetch(op)

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
        """`slot_reduction` where the kernel's lanes exchange values through their slots
        (LoweringContext.lockstep_lanes); else, for a value of several components of consecutive lanes,
        `scattered_reduction` over the whole sub-group (Target.scattered_reductions) and the driver's own reductions
        (`group_reduction`) over clusters (Target.group_reductions); else `butterfly`."""
        if self.context.lockstep_lanes():
            return self.slot_reduction(op)
        name = GROUP_REDUCTIONS.get(REDUCE_KINDS[op.kind][op.operands[0].type.dtype.kind].combine)
        value = self.values[op.operands[0]]
        target = self.target
        if (target is not None and op.cluster_stride == 1 and self.lanes.count(value) > 1
                and self.lanes.component_type(value) in (I32, ir.FloatType())):
            if op.cluster_size == self.lanes.size and target.scattered_reductions:
                return self.scattered_reduction(op, value)
            if op.cluster_size < self.lanes.size and target.group_reductions and name is not None:
                return self.group_reduction(op, name, value)
        return self.butterfly(op)

    def scattered_reduction(self, op, value: ir.Value | PrivateBlock) -> ir.Value | PrivateBlock:
        """A whole sub-group's reduction of a value of several components as a reduce-scatter and a broadcast: at
        each lane distance d (size / 2, ..., 1) a lane keeps the upper half of its held components where its bit d
        is set, the lower half else, sends the other half to its partner and combines what it keeps with what it
        receives, so that 32 components over 16 lanes take 16 + 8 + 4 + 2 shuffles and each lane ends with two
        results, which every lane then reads from the lane holding it (a broadcast from a constant lane). Once the
        held components are odd in number the remaining distances combine them as the butterfly does. The driver's
        own reduction of each component is a lane-by-lane scalar loop with AVX2 code: the tests' GEMM with a
        reducing epilogue (8x4 subgroups, bf16) is 60,123 instructions so, 53,665 scattered, and its three cases
        built faster in five rounds of six; with AVX-512 code 24,331 against 22,984, as fast to build, and the GEMM
        as fast on either (Zen 4, 2026-12-03; docs/performance.md "Driver builds")."""
        dtype = op.operands[0].type.dtype
        name = REDUCE_KINDS[op.kind][dtype.kind].combine
        b, lanes = self.builder, self.lanes
        lane = lanes.lane_id()
        held = lanes.elements(value)
        halvings = []  # (d, the held components' half) of each distance that halved them
        distance = lanes.size // 2
        while distance:
            partner = b.xor(lane, ir.Constant(I32, distance))
            if len(held) % 2:
                held = [self.combine(name, dtype, h, lanes.shuffle(h, partner)) for h in held]
            else:
                half = len(held) // 2
                upper = b.icmp_unsigned("!=", b.and_(lane, ir.Constant(I32, distance)), ir.Constant(I32, 0))
                held = [self.combine(name, dtype, b.select(upper, high, low),
                                     lanes.shuffle(b.select(upper, low, high), partner))
                        for low, high in zip(held[:half], held[half:])]
                halvings.append((distance, half))
            distance //= 2
        if not halvings:  # odd from the start: every lane holds every result
            return lanes.assemble(held)
        places = [held_at(halvings, c) for c in range(lanes.count(value))]
        return lanes.assemble([lanes.moved(held[slot], ir.Constant(I32, source), BROADCAST) for source, slot in places])

    def group_reduction(self, op, name: str, value: ir.Value | PrivateBlock) -> ir.Value | PrivateBlock:
        """Each component reduced by SPIR-V's OpGroupNonUniform<name> over the sub-group or, in clusters of
        consecutive lanes, as a ClusteredReduce. FMax and FMin leave a NaN's result undefined (the OpenCL CPU
        runtime's keeps it), where maxnumf and minnumf let it lose, so those reduce the floats' `ordered_bits`."""
        whole = op.cluster_size == self.lanes.size
        operation = ir.Constant(I32, GROUP_OPERATION_REDUCE if whole else GROUP_OPERATION_CLUSTERED)
        cluster = [] if whole else [ir.Constant(I32, op.cluster_size)]

        def reduce(function: str, e: ir.Value) -> ir.Value:
            overload = f"__spirv_GroupNonUniform{function}.{'' if whole else 'clustered.'}{e.type}"
            return self.context.call(overload, e.type, operation, e, *cluster)

        def component(e: ir.Value) -> ir.Value:
            if name not in ("FMax", "FMin"):
                return reduce(name, e)
            b = self.builder
            loser = ir.Constant(I32, -2 ** 31 if name == "FMax" else 2 ** 31 - 1)
            key = b.select(b.fcmp_unordered("uno", e, e), loser, ordered_bits(b, b.bitcast(e, I32)))
            return b.bitcast(ordered_bits(b, reduce("SMax" if name == "FMax" else "SMin", key)), e.type)
        return self.lanes.assemble([component(e) for e in self.lanes.elements(value)])

    def slot_reduction(self, op) -> ir.Value | PrivateBlock:
        """`butterfly`'s result, without its exchanges: each lane stores its components in its slots once
        (codegen/llvm/lane_slots.py) and combines its cluster's in the butterfly's pairs (member j with j + size / 2,
        then with j + size / 4, ...: the value every lane of the butterfly ends with, as each combine is
        commutative). A whole sub-group's members are the same on every lane, each a load from one address."""
        dtype = op.operands[0].type.dtype
        name = REDUCE_KINDS[op.kind][dtype.kind].combine
        b = self.builder
        elements = self.lanes.elements(self.values[op.operands[0]])
        words = [lane_slots.words_of(b, e) for e in elements]
        lane_slots.stage(b, [w for each in words for w in each])
        members = self.cluster_lanes(op)
        results, first = [], 0
        for e, each in zip(elements, words):
            places = [ir.Constant(I32, first + i) for i in range(len(each))]
            if op.cluster_size == self.lanes.size and e.type in (I32, ir.FloatType()):
                results.append(self.slot_row_reduction(name, dtype, places[0], e.type))
            else:
                values = [lane_slots.value_of(b, [b.load(lane_slots.slot(b, place, m)) for place in places], e.type)
                          for m in members]
                while len(values) > 1:
                    half = len(values) // 2
                    values = [self.combine(name, dtype, values[j], values[j + half]) for j in range(half)]
                results.append(values[0])
            first += len(each)
        return self.lanes.assemble(results)

    def slot_row_reduction(self, name: str, dtype, word: ir.Value, ty: ir.Type) -> ir.Value:
        """A whole sub-group's 32-bit values of slot word `word` combined in the butterfly's pairs, read as one
        vector of the lanes, the same on every lane, whose halves are combined: one load and four vector combines
        (Components.whole, on the CPU targets too) where 16 loads took 15 scalar ones (tutorial 6's attention ran
        10-17% slower so)."""
        b, size = self.builder, self.lanes.size
        row = b.bitcast(lane_slots.slot(b, word, ir.Constant(I32, 0)), ir.PointerType(ir.VectorType(I32, size), 3))
        values = b.bitcast(b.load(row, align=4), ir.VectorType(ty, size))
        with self.components.whole():
            while size > 2:
                size //= 2
                halves = [b.shuffle_vector(values, ir.Constant(values.type, None),
                                           ir.Constant(ir.VectorType(I32, size), list(range(start, start + size))))
                          for start in (0, size)]
                values = self.combine(name, dtype, *halves)
        return self.combine(name, dtype, *(b.extract_element(values, ir.Constant(I32, i)) for i in (0, 1)))

    def cluster_lanes(self, op) -> list[ir.Value]:
        """The lanes of this lane's cluster (i32), in order: `cluster_size` lanes `cluster_stride` apart."""
        size, stride = op.cluster_size, op.cluster_stride
        if size == self.lanes.size:
            return [ir.Constant(I32, j) for j in range(size)]
        b = self.builder
        lane = self.lanes.lane_id()
        place = b.urem(b.udiv(lane, ir.Constant(I32, stride)), ir.Constant(I32, size))
        first = b.sub(lane, b.mul(place, ir.Constant(I32, stride)))
        return [b.add(first, ir.Constant(I32, j * stride)) for j in range(size)]

    def butterfly(self, op) -> ir.Value:
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
        """Result component c: each source component t some lane reads, as `gather_plan` plans it (the lane's own,
        one lane's broadcast, or a shuffle from the lane the table names), kept where this lane wanted t; or, where
        the target reads private memory by index (Target.indexed_lane_reads) and that takes at most half the
        moves, in `exchange_rounds` (not where the lanes exchange values through their slots: there every move is a
        broadcast, LoweringContext.lockstep_lanes)."""
        bld = self.builder
        pool = [e for v in op.operands for e in self.lanes.elements(self.values[v])]
        plan = gather_plan(op.source_lanes, op.components)
        # not for i1: a bool pool in private memory read by index came out wrong on opencl:cpu (the bool case of
        # test_store_through_order01_tile_into_column_major_output); bools keep the unrolled form
        if (self.target is not None and self.target.indexed_lane_reads and pool[0].type != ir.IntType(1)
                and not self.context.lockstep_lanes()):
            rounds = exchange_rounds(op.source_lanes, op.components, self.lanes.size)
            if 2 * len(rounds) <= moves_in(plan):
                return self.gather_in_rounds(pool, rounds, len(op.source_lanes))
        lane = self.lanes.lane_id()
        results = []
        for lanes_row, components_row, row_plan in zip(op.source_lanes, op.components, plan):
            source_lane = bld.extract_element(self.table(lanes_row), lane)
            wanted = bld.extract_element(self.table(components_row), lane)
            result = None
            for t, source in row_plan:
                if source == OWN:
                    moved = pool[t]
                elif source == SHUFFLED:
                    moved = self.lanes.shuffle(pool[t], source_lane)
                else:
                    moved = self.lanes.moved(pool[t], ir.Constant(I32, source), BROADCAST)
                result = moved if result is None else bld.select(
                    bld.icmp_signed("==", wanted, ir.Constant(I32, t)), moved, result)
            results.append(result)
        return self.lanes.assemble(results)

    def gather_in_rounds(self, pool: list[ir.Value], rounds, count: int) -> ir.Value | PrivateBlock:
        """A lane_gather as `exchange_rounds`: in each, every lane reads the component it sends from its pool in
        private memory by index and shuffles; it keeps what it received in the result component its slot names
        (selects: no store by index, which AVX2 has no scatter for)."""
        b, lanes = self.builder, self.lanes
        lane = lanes.lane_id()
        sources = lanes.assemble(pool, into=PrivateBlock(lanes.private(ir.ArrayType(pool[0].type, len(pool)))))
        results = [ir.Constant(pool[0].type, 0)] * count
        for sent, source, slot in rounds:
            value = b.load(sources.slot(b, b.extract_element(self.table(sent), lane)))
            moved = lanes.shuffle(value, b.extract_element(self.table(source), lane))
            kept = sorted(set(slot.tolist()) - {count})
            if len(kept) == 1 and (slot == kept[0]).all():
                results[kept[0]] = moved
                continue
            where = b.extract_element(self.table(slot), lane)
            for c in kept:
                results[c] = b.select(b.icmp_signed("==", where, ir.Constant(I32, c)), moved, results[c])
        return lanes.assemble(results)

    def table(self, row) -> ir.Constant:
        return ir.Constant(ir.VectorType(I32, len(row)), [ir.Constant(I32, int(v)) for v in row])


def held_at(halvings: list[tuple[int, int]], component: int) -> tuple[int, int]:
    """(a lane holding it, its place there) of result `component` after `scattered_reduction`'s `halvings`: each
    halving left the upper half of the components with the lanes whose bit d is set."""
    lane = 0
    for distance, half in halvings:
        if component >= half:
            lane, component = lane | distance, component - half
    return lane, component


def exchange_rounds(source_lanes: np.ndarray, components: np.ndarray, lanes: int) -> list[tuple]:
    """A lane_gather (result component c of lane l is component components[c][l] of lane source_lanes[c][l]) as
    rounds of one shuffle each: (the component each lane sends, the lane each lane reads from, the result component
    each lane keeps it as; `len(components)` where it keeps nothing). A round serves each lane at most once and sends
    one component a lane, which every lane wanting it may read; built greedily, in table order."""
    pending = [(c, l, int(source_lanes[c][l]), int(components[c][l]))
               for c in range(len(components)) for l in range(lanes)]
    rounds = []
    while pending:
        sent = np.full(lanes, -1, np.int64)  # -1: sends nothing yet
        source, slot = np.arange(lanes), np.full(lanes, len(components), np.int64)
        left = []
        for c, l, s, t in pending:
            if slot[l] == len(components) and sent[s] in (-1, t):
                sent[s], source[l], slot[l] = t, s, c
            else:
                left.append((c, l, s, t))
        rounds.append((np.maximum(sent, 0), source, slot))
        pending = left
    return rounds
