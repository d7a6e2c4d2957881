"""to-llvm on the `cpu` target: a GEMM's K loop turned inside out, each group of C's rows summed over all of K at once.

A GEMM's K loop (scf.for) loads a K step of A and B each iteration and multiplies them into the accumulators it
carries. Lowered as it is written, each iteration runs a loop over the step's k for every group of C's rows
(codegen/cpu/lowering.py): the rows' sums are loaded before and stored after each, B's step is copied into private
columns, and with AVX2 A's lines touched, once a K step. Such a loop runs its multiply-adds at about the FMA units'
pace, but those costs of a K step held `xetile.ops.matmul` to 0.78 of the multiply-add peak at 2048^3 f32 with AVX2
code (`bench/profile_cpu.py`: 7% of the kernel's time in the copies of B, 10% outside the loops over k) and 0.62 with
AVX-512 code. Here the K loop becomes a loop over all of K for each group of rows and B columns: A[r][k] one
broadcast load from A's row, B's row across the lanes one load from B's memory, the sums in registers from the first
k to the last, as a BLAS kernel keeps them (dpas_emulation.whole_k_loops: how many, and for which kinds). A
hand-written OpenCL C kernel of that shape ran at 0.94 of the peak with AVX2 code (docs/performance.md "What bounds
the tutorial GEMM").

The sums are the loop's, k ascending, each the same multiply-add as before (dpas_emulation.multiply_add for the kinds
the DPAS emulation widens): the same numbers. A K loop qualifies (`plan`) when its step is a positive constant (the
iterations are counted from it), its body block loads, DPAS ops of those kinds in chains over a K step
(lowering.VectorDpas.a_in_memory_groups), constant offsets and the yield; each chain's C a value the loop carries and
the chain's result its next value; each A and B descriptor a value the loop carries, moved each iteration by the chain's
K along A's rows and down B's columns, and none read after the loop. At run time it takes this path where every A and B
block of every iteration lies inside its array and B's rows lie close together (B_ROW_BYTES); else the loop as written
(`InterchangedK.lower`).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from llvmlite import ir

from ...ir import core_ops as C
from ...ir import simt_ops as S
from ...ir import xegpu_ops as G
from ..llvm.core import I32, I64, ranged_loop
from ..xe.dpas_emulation import row_groups, widen
from .in_place_a import InPlaceA, products_loop
from .in_place_b import b_source

BODY_OPS = (S.SimtLoadNdOp, S.SimtDpasOp, C.ConstantOp, G.UpdateNdOffsetOp)
# The loops over all of K read B's rows one after another down its column: where they lie more than this many bytes
# apart the CPU's prefetchers fell behind, and the K loop as written (B's K step copied into private columns) ran
# faster. The tutorial GEMM at 2048 x N x 2048 f32, interchanged against as written, GFLOP/s: rows 256 bytes apart
# 207.5 against 201.0, 512 233.7 against 194.8, 1024 176.9 against 214.7, 8192 82.7 against 191.7 with AVX2 code;
# with AVX-512 code 512 bytes 451.3 against 275.2, 1024 293.0 against 321.1 (Zen 5, 2026-12-05). So a GEMM's B in
# panels (xetile.ops.matmul's `b_panels`, rows of 64 f32 columns) takes this path, a B as it is of 128 columns or fewer.
B_ROW_BYTES = 512


@dataclass(frozen=True)
class Chain:
    """A chain of DPAS ops over one K step (each op's result the next one's C), its C the loop's carried value
    `carried` (an index among the loop's results), its A and B block loads in order."""
    ops: list
    carried: int
    a_loads: list
    b_loads: list


@dataclass(frozen=True)
class KPlan:
    """A K loop `loop` the interchange takes: its chains, the same chains by B column (`columns`: each column's on
    the same rows of A, in one order), the K of a step (`step_k`, every chain's K) and the loop's constant step
    (`step`, positive)."""
    loop: C.ForOp
    chains: list
    columns: list
    step_k: int
    step: int


class InterchangedK:
    """The interchange for one kernel (`dpas`: its VectorDpas, `descriptors`: its Descriptors)."""

    def __init__(self, dpas, descriptors):
        self.dpas = dpas
        self.descriptors = descriptors
        self.context = dpas.context

    def plan(self, loop: C.ForOp) -> KPlan | None:
        """The plan of `loop`, or None where it does not qualify (the module docstring)."""
        whole_k = self.dpas.loops().whole_k
        if whole_k is None or self.descriptors.chosen_at_run_time:
            return None
        iv, *args = loop.body.args
        ops, yielded = loop.body.ops[:-1], loop.body.terminator.operands
        step = loop.operands[2].owner
        if iv.uses or not all(isinstance(op, BODY_OPS) for op in ops) or not isinstance(step, C.ConstantOp) or \
                step.value <= 0:
            return None
        run = [op for op in ops if isinstance(op, S.SimtDpasOp)]
        if not run or any(self.dpas.kind(op) not in whole_k.kinds for op in run):
            return None
        groups = self.dpas.a_in_memory_groups(run)
        if groups is None:
            return None
        chains = [self.chain(chain, args, yielded) for chains in groups for chain in chains]
        if any(chain is None for chain in chains) or len({self.k_of(c) for c in chains}) != 1:
            return None
        columns = {}
        for chain in chains:
            columns.setdefault(tuple(op.operands[1] for op in chain.ops), []).append(chain)
        columns = list(columns.values())
        if any([chain.a_loads[0] for chain in column] != [chain.a_loads[0] for chain in columns[0]]
               for column in columns):
            return None  # every B column's chains on the same rows of A, in one order
        step_k = self.k_of(chains[0])
        if not all(self.moved_by(load, (step_k, 0)) for chain in chains for load in chain.a_loads) or \
                not all(self.moved_by(load, (0, step_k)) for chain in chains for load in chain.b_loads):
            return None
        carried = {chain.carried for chain in chains}
        if any(index not in carried and (not isinstance(arg.type, G.TensorDescType) or loop.results[index].uses)
               for index, arg in enumerate(args)):
            return None
        loads = [op for op in ops if isinstance(op, S.SimtLoadNdOp)]
        if any(not all(isinstance(user, S.SimtDpasOp) for user, _ in op.result.uses) for op in loads):
            return None
        return KPlan(loop, chains, columns, step_k, step.value)

    def chain(self, ops: list, args: list, yielded: list) -> Chain | None:
        """The Chain of DPAS `ops`, where its C is carried (a body argument the loop yields the chain's result
        for) and its Bs are block loads whose columns may be read in B's memory."""
        if len(ops[0].operands) < 3 or ops[0].operands[2] not in args:
            return None
        carried = args.index(ops[0].operands[2])
        if yielded[carried] is not ops[-1].result or len(ops[-1].result.uses) != 1:
            return None
        b_loads = [b_source(op) for op in ops]
        if not all(b_loads):
            return None
        return Chain(ops, carried, [op.operands[0].owner for op in ops], b_loads)

    @staticmethod
    def k_of(chain: Chain) -> int:
        """The K of a chain: its A blocks' columns."""
        return sum(load.layout.block[1] for load in chain.a_loads)

    def moved_by(self, load: S.SimtLoadNdOp, shift: tuple[int, int]) -> bool:
        """Whether the loop carries `load`'s descriptor and moves it by `shift` (x, y) each iteration."""
        along = [self.descriptors.carried_shift(load.operands[0], axis) for axis in (0, 1)]
        return all(moved is not None for moved in along) and (along[0][2], along[1][2]) == shift

    def lower(self, plan: KPlan, as_written) -> list:
        """The loop's results: interchanged where every block of every iteration lies inside its array, else
        `as_written()` (the loop's lowering as written)."""
        b, loop = self.context.builder, plan.loop
        lower, upper, _, *inits = self.context.operands(loop)
        args = loop.body.args[1:]
        for arg, init in zip(args, inits):  # each block as the first iteration reads it
            self.context.values[arg] = init
        trips = self.trips(lower, upper, plan.step)
        taken = [chain.carried for chain in plan.chains]
        with b.if_else(self.inside(plan, trips)) as (then, otherwise):
            with then:
                interchanged = self.interchanged(plan, trips, inits)
                then_values = {i: self.context.lanes.elements(interchanged[i]) for i in taken}
                then_end = b.block
            with otherwise:
                written = as_written()
                other_values = {i: self.context.lanes.elements(written[i]) for i in taken}
                other_end = b.block
        results = list(inits)  # the descriptors: not read after the loop
        for i, value in self.context.lanes.joined([(then_values, then_end), (other_values, other_end)]).items():
            results[i] = value
        return results

    def trips(self, lower: ir.Value, upper: ir.Value, step: int) -> ir.Value:
        """The loop's iterations (i64; 0 where upper <= lower) by a positive `step`."""
        b = self.context.builder
        low, high = (b.sext(v, I64) if v.type != I64 else v for v in (lower, upper))
        span = b.sub(high, low)
        count = b.sdiv(b.add(span, ir.Constant(I64, step - 1)), ir.Constant(I64, step))
        return b.select(b.icmp_signed(">", span, ir.Constant(I64, 0)), count, ir.Constant(I64, 0))

    def inside(self, plan: KPlan, trips: ir.Value) -> ir.Value:
        """i1: the loop runs, every A and B block of every iteration lies inside its array (the first iteration's
        blocks inside, each chain's A blocks one after another along the row and its B blocks down the column, and
        the last iteration's K step ending inside), and B's rows lie at most B_ROW_BYTES apart."""
        b, in_place = self.context.builder, InPlaceA(self.descriptors)
        span = b.mul(trips, ir.Constant(I64, plan.step_k))
        tests = [b.icmp_signed(">", trips, ir.Constant(I64, 0))]
        for chain in plan.chains:
            tests += [in_place.inside(b, load) for load in chain.a_loads + chain.b_loads]
            tests += [in_place.follows(b, load, before) for before, load in zip(chain.a_loads, chain.a_loads[1:])]
            tests += [self.below(load, before) for before, load in zip(chain.b_loads, chain.b_loads[1:])]
            (a_array, a_x, _), (b_array, _, b_y) = in_place.place(chain.a_loads[0]), in_place.place(chain.b_loads[0])
            tests.append(b.icmp_signed("<=", b.add(a_x, span), a_array.cols))
            tests.append(b.icmp_signed("<=", b.add(b_y, span), b_array.rows))
            row_bytes = b.mul(b_array.row_stride, ir.Constant(I64, b_array.dtype.bits // 8))
            tests.append(b.icmp_signed("<=", row_bytes, ir.Constant(I64, B_ROW_BYTES)))
        return functools.reduce(b.and_, tests)

    def below(self, load: S.SimtLoadNdOp, before: S.SimtLoadNdOp) -> ir.Value:
        """i1: `load`'s block starts in the columns of `before`'s, in the row after its last."""
        b = self.context.builder
        (x, y), (x0, y0) = ([self.descriptors.offset(op.operands[0], axis) for axis in (0, 1)] for op in (load, before))
        height = ir.Constant(I64, before.layout.block[0])
        return b.and_(b.icmp_signed("==", y, b.add(y0, height)), b.icmp_signed("==", x, x0))

    def interchanged(self, plan: KPlan, trips: ir.Value, inits: list) -> dict:
        """The chains' sums over all of K: C's B columns WholeK.columns at a time, their rows (which every B column's
        chains share) in groups of WholeK.sums sums, a loop over all k for each group."""
        b, in_place, lanes = self.context.builder, InPlaceA(self.descriptors), self.context.lanes
        total = b.trunc(b.mul(trips, ir.Constant(I64, plan.step_k)), I32)
        operations = self.dpas.products(plan.chains[0].ops[0]).operations()
        whole_k, columns = self.dpas.loops().whole_k, plan.columns
        rows, stride = [], None
        for chain in columns[0]:
            addresses, stride = in_place.rows(b, chain.a_loads[0])
            rows += addresses
        results = {}
        for first in range(0, len(columns), whole_k.columns):
            part = columns[first:first + whole_k.columns]
            sums = [[total for chain in chains for total in lanes.elements(inits[chain.carried])] for chains in part]
            b_reads = [self.b_read(chains[0]) for chains in part]
            for group in row_groups(len(rows), len(part), whole_k.sums):
                looped = products_loop(b, lambda bld, carried, step: ranged_loop(bld, ir.Constant(I32, 0), total,
                                                                                   carried, step),
                                       [rows[r] for r in group], stride, b_reads,
                                       [column[group.start:group.stop] for column in sums], operations)
                for column, carried in zip(sums, looped):
                    column[group.start:group.stop] = carried
            for chains, column in zip(part, sums):
                start = 0
                for chain in chains:
                    count = len(lanes.elements(inits[chain.carried]))
                    results[chain.carried] = lanes.assemble(column[start:start + count])
                    start += count
        return results

    def b_element(self, op: S.SimtDpasOp) -> tuple[ir.Type, object]:
        """How the loops read an element of `op`'s B in its memory: its type, and what makes it the multiply-adds'
        operand (f32: as tile_mma's precision takes it; f16 and bf16: widened, as the DPAS emulation widens it)."""
        if self.dpas.kind(op) == "f32":
            return ir.FloatType(), lambda x: self.dpas.mma_element(x, op.precision)
        mad = self.dpas.mad(op)
        return ir.IntType(mad.bits), lambda bits: widen(self.context.builder, bits, mad.b)

    def b_read(self, chain: Chain):
        """(builder, k) -> element k of this lane's column of `chain`'s B blocks, read in B's memory as the
        multiply-adds take it (b_element): B[y + k][x + lane], k rows on (codegen/cpu/in_place_b.py)."""
        b = self.context.builder
        element, widened = self.b_element(chain.ops[0])
        array, x, y = InPlaceA(self.descriptors).place(chain.b_loads[0])
        address = b.bitcast(b.gep(array.element_pointer(b, y, x), [self.context.lane_index()]),
                            element.as_pointer(array.pointer.type.addrspace))
        return lambda bld, k: widened(bld.load(bld.gep(address, [bld.mul(bld.zext(k, I64), array.row_stride)])))
