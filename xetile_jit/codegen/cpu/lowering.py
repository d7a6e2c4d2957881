"""to-llvm for an OpenCL CPU runtime: the XeGPU lowering (codegen/llvm/lowering.py) with the OpenCL CPU compiler's
workarounds, and for the `cpu` target its vector-unit strategy. codegen/backends.py chooses the class by the
target's builtin ABI:

* `CpuLowering` (the `xe-emulated` target, ABI "emulated"; the base of `VectorLowering`): negation as -0.0 - x
  (codegen/cpu/negation.py); `rsqrt` as 1 / sqrt(x) (`rule_opencl`); a vector read from private memory word by word,
  where read as one vector the CPU compiler kept the array lane after lane and transposed every block between the
  loads and the multiply-adds (docs/DESIGN.md "CPU notes"); f32 x f32 tile_mma as loops over k
  (dpas_emulation.row_loops), each B's components read from a private array stored once for the run, as the DPAS
  emulation (dpas_emulation.dpas_results says why); a block's runs of block ops in loops over the blocks
  (codegen/cpu/block_loops.py, codegen/cpu/pieces.py), every block load and store through its builtin: one call site
  a run, where one a block had the driver inline the emulated builtin into each (a 1024-element f32 vector add: 1414
  LLVM instructions unrolled, 228 in the loop; docs/performance.md "Driver builds").
* `VectorLowering` (the `cpu` target, ABI "vector"): the same loops, whose load and store runs take plain memory
  ops behind one bounds test of the pieces (`fast_block_paths`), and DPAS written inline (a call's vector arguments
  went through memory lane by lane) for the DPAS ops of a block that share A four at a time (`dpas_batches`), as
  loops over k on groups of C's rows, each B widened into a private column once for the block; chains of DPAS ops
  from zero (a flash attention's products over its head dim and its key block) as one loop over all of a chain's
  k (`chain_groups`): the driver built tutorial 6's attention in a quarter to a third less time. Where a lane's
  f32 takes several vector registers (AVX2), the loops read A in its memory (codegen/cpu/in_place_a.py).

The lowerings compose their pieces by class: `CpuLanes` (the lane values read word by word), `CpuDpas` and
`BlockLoops` with its `Pieces` for `CpuLowering`, `VectorDpas` for `VectorLowering`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from llvmlite import ir

from ...ir import simt_ops as S
from ...ir.core import FuncOp
from ...target.targets import Target
from ..llvm.core import F32, I32, counted_loop, llvm_type
from ..llvm.dpas import SHARED_A, Dpas, dpas_batches, same_a
from ..llvm.lanes import Lanes, PrivateBlock
from ..llvm.lowering import XeGPULowering
from ..llvm.values import splat
from ..xe import builtins as X
from ..xe.dpas_emulation import (KLoops, a_words, b_column_type, chained_results, dpas_results, k_loops, loop_hints,
                                 multiply_add, row_groups, row_loops, staged, widen, widened_b, widened_chain)
from ..xe.llvm_helpers import ROLLED
from .block_loops import BlockLoops
from .in_place_a import Bounds, InPlaceA, products_loop, source_load
from .in_place_b import InPlaceB, b_source
from .k_interchange import InterchangedK
from .negation import OpaqueNegativeZeros, negation_operand, opaque_zero
from .pieces import Pieces


class CpuLanes(Lanes):
    """The lane values on an OpenCL CPU runtime: a vector read from private memory word by word (the module
    docstring)."""

    def read_run(self, block: PrivateBlock, start: int, count: int) -> ir.Value:
        """Components start .. start + count - 1 of `block`, word by word (the module docstring)."""
        b = self.context.builder
        if count > 1:
            return self.assemble([b.load(block.slot(b, start + i)) for i in range(count)])
        return super().read_run(block, start, count)

    def lane_vector(self, dst: ir.Value, data_type: ir.ArrayType) -> ir.Value:
        if data_type.count > 1:
            return self.read_run(PrivateBlock(dst), 0, data_type.count)
        return super().lane_vector(dst, data_type)


class CpuDpas(Dpas):
    """DPAS on an OpenCL CPU runtime: f32 x f32 tile_mma as loops over k (the module docstring)."""

    def fma_mma(self, a: ir.Value, bs: list, accs: list[ir.Value], precision: str, columns: dict) -> list[ir.Value]:
        """The GPU's multiply-adds (Dpas.fma_mma) as loops over k for every (B, C) of `bs`, `accs`
        (dpas_emulation.row_loops), A[r][k] read once for all of them as KLoops.read says (dpas_emulation.staged)."""
        lanes = self.context.lanes
        column = staged(self.context.builder, self.mma_elements(a, precision), self.loops().read)
        blocks = [self.fma_column(b, precision, columns) for b in bs]

        def shared_step(bld, k, group, sums):
            a_k = [column(r, k) for r in group]  # once for every B
            return [total for block, totals in zip(blocks, sums)
                    for total in self.fma_step(a_k, totals, bld.load(block.slot(bld, k)))]
        sums = row_loops(self.context.builder, blocks[0].count, [lanes.elements(acc) for acc in accs], shared_step,
                         self.loops().sums)
        return [lanes.assemble(totals) for totals in sums]

    def loops(self) -> KLoops:
        """How the loops over k run on the target's CPU (dpas_emulation.k_loops)."""
        target = self.context.target
        return k_loops(target.cpu, target.subgroup_size, self.context.lockstep_lanes())

    def fma_column(self, b, precision: str, columns: dict) -> PrivateBlock:
        """B's components in a private array, stored the first time the run takes this B."""
        if (b, precision) not in columns:
            bld = self.context.builder
            elements = self.mma_elements(self.context.values[b], precision)
            block = PrivateBlock(self.context.lanes.private(ir.ArrayType(elements[0].type, len(elements))))
            for i, b_k in enumerate(elements):
                bld.store(b_k, block.slot(bld, i))
            columns[b, precision] = block
        return columns[b, precision]


class VectorDpas(CpuDpas):
    """DPAS on the `cpu` target: the DPAS ops of a block that share A lowered together, the builtin's emulation
    written inline (the module docstring)."""

    def dpas_run(self, op) -> list:
        """`op` and the DPAS ops after it in its block whose operands are lowered or computed by the run."""
        values = self.context.values
        ops = op.parent.ops
        run, computed = [], set()
        for candidate in ops[ops.index(op):]:
            if not isinstance(candidate, S.SimtDpasOp) or candidate.result in values or any(
                    v not in computed and v not in values for v in candidate.operands):
                break
            run.append(candidate)
            computed.add(candidate.result)
        return run

    def lower_run(self, run: list) -> dict:
        """The results of `run`; a run whose DPAS ops form chains from zero (`chain_groups`: a flash attention's two
        products) is lowered a group of chains at a time, one loop over all of their k
        (dpas_emulation.chained_results). A GEMM's chains, which start from the accumulators its K loop carries,
        keep their loops an op: chained, the tutorial f16 GEMM ran slower (docs/performance.md "Driver builds").
        The loops read A in its memory where the CPU's loops do (`in_place_run`)."""
        groups = self.in_place_groups(run)
        if groups is not None:
            return self.in_place_run(run, groups)
        groups = chain_groups(run)
        if groups is None or not all(self.chainable(chain[0]) and len(chain[0].operands) == 2
                                     for chains in groups for chain in chains):
            return super().lower_run(run)
        results = {}
        for chains in groups:
            results.update(self.lower_chains(chains, results))
        return results

    def in_place_groups(self, run: list) -> list | None:
        """`run`'s DPAS ops as chain_groups (or one op a chain), where its loops read A in its memory
        (KLoops.a_in_place, codegen/cpu/in_place_a.py): every op of one kind and one precision, its A given by a
        block load that may be read in place, a chain's from one array; else None."""
        if not self.loops().a_in_place:
            return None
        return self.a_in_memory_groups(run)

    def a_in_memory_groups(self, run: list) -> list | None:
        """`run`'s DPAS ops as chain_groups (or one op a chain) where their A may be read in its memory, on any CPU:
        in_place_groups' conditions but the CPU's (codegen/cpu/k_interchange.py reads A so on every CPU)."""
        kinds = {self.kind(op) for op in run}
        if len({op.precision for op in run}) != 1 or len(kinds) != 1:
            return None
        in_place = InPlaceA(self.descriptors)
        if any(source_load(op) is None for op in run):
            return None
        groups = chain_groups(run) or [[[op] for op in batch] for batch in dpas_batches(run)]
        chains = [chain for chains in groups for chain in chains]
        if not all(in_place.one_array([op.operands[0].owner for op in chain]) for chain in chains):
            return None
        return groups

    def in_place_run(self, run: list, groups: list) -> dict:
        """`run`'s results from loops that read A in its memory, a loop over all k of a chain of DPAS ops (each
        op's result the next one's C: a K step's blocks of K), where every A block lies inside its array and a
        chain's blocks follow one another along the row; otherwise from loops an op that test each element against
        the array (codegen/cpu/in_place_a.py `Bounds`). B's columns are stored once, for both paths: a chain's one
        after the other."""
        b, in_place = self.context.builder, InPlaceA(self.descriptors)
        columns, chain_columns = {}, {}
        for chain in (chain for chains in groups for chain in chains):
            self.chain_column(chain, columns, chain_columns)
        taken = [op for op in run if not all(user in run for user, _ in op.result.uses)]  # not a chain's C alone
        with b.if_else(in_place.readable_chains(b, groups)) as (inside, border):
            with inside:
                inside_values = self.components(self.in_memory_chains(groups, chain_columns, in_place, warm=True),
                                                taken)
                inside_end = b.block
            with border:
                border_values = self.components(
                    self.in_memory_chains(self.op_chains(groups), columns, in_place, tested=True), taken)
                border_end = b.block
        results = {op.result: ir.Constant(llvm_type(op.result.type), ir.Undefined) for op in run}
        joined = self.context.lanes.joined([(inside_values, inside_end), (border_values, border_end)])
        results.update((op.result, value) for op, value in joined.items())
        return results

    def products(self, op) -> InMemoryProducts:
        """How the loops that read A in its memory multiply for `op`'s kind: f32's multiply-adds or the DPAS
        emulation's."""
        return FmaProducts(self, op.precision) if self.kind(op) == "f32" else EmulatedProducts(self, self.mad(op))

    @staticmethod
    def op_chains(groups: list) -> list:
        """`groups` (chain_groups) as chains of one op: a group for each position in its chains (the ops there
        share A, and each takes the C the op before gives); each op's B column is the part of its chain's that
        `InMemoryProducts.column` kept. Blocks of a chain need not follow one another along A's row there."""
        return [[[chain[i]] for chain in chains] for chains in groups for i in range(len(chains[0]))]

    def components(self, results: dict, ops: list) -> dict:
        """The components of the results of `ops`, each path's own before the paths join: their values meet in a
        phi a component (Target.lane_scalars: the driver kept a vector phi lane after lane in memory)."""
        return {op: self.context.lanes.elements(results[op.result]) for op in ops}

    def chain_column(self, chain: list, columns: dict, chain_columns: dict) -> None:
        """The B columns of `chain`'s ops one after another in one private array (`chain_columns`, by the chain's
        Bs), each op's its part of it (`columns`: InMemoryProducts.column)."""
        key = (*(op.operands[1] for op in chain), chain[0].precision)
        if key not in chain_columns:
            chain_columns[key] = self.products(chain[0]).column(chain, columns)

    def in_memory_chains(self, groups: list, chain_columns: dict, in_place: InPlaceA, warm: bool = False,
                         tested: bool = False) -> dict:
        """The results of the chains of `groups` (chain_groups), A[r][k] loaded from its row's address: loops over
        the chains' k (`in_memory_loop`), each for a group of rows of the CPU's budget of sums (row_groups) and
        `chains_a_loop` chains. `warm`: each line of A's rows touched before the loops (InPlaceA.touched);
        `tested`: each element tested against its array (InPlaceA.bounds), in loops that carry all of a group's
        rows: a border block's, which runs rarely, and the fewer loops the shorter the driver's build (the tests'
        f16 GEMM of 64x64 pieces a subgroup with AVX2 code: 2.6 s, 3.4 with a loop a row); else the groups that take
        the same B columns share their loops (`shared_b_loops`)."""
        b, lanes = self.context.builder, self.context.lanes
        reads = [(chains, *in_place.rows(b, chains[0][0].operands[0].owner),
                  [chain_columns[(*(op.operands[1] for op in chain), chain[0].precision)] for chain in chains])
                 for chains in groups]
        if warm:  # a chain's K: its B column's
            bits = groups[0][0][0].operands[0].type.dtype.bits
            zero = in_place.touched(b, [(rows, stride, columns[0].count) for _, rows, stride, columns in reads], bits,
                                    opaque_zero(self.context))
            reads = [(chains, rows, b.add(stride, zero), columns) for chains, rows, stride, columns in reads]
        if not tested and independent([chains for chains, *_ in reads]):
            return self.shared_b_loops(reads, in_place)
        results = {}
        for chains, rows, stride, columns in reads:
            first = chains[0][0]
            sums = [lanes.elements(self.accumulator(chain[0], results)) for chain in chains]
            products = self.products(first)
            bounds = in_place.bounds(b, first.operands[0].owner) if tested else None
            budget = len(rows) * products.chains_a_loop(len(chains)) if tested else products.sums(self.loops())
            self.row_loops(products, rows, stride, columns, sums, bounds, budget)
            self.assemble_chains(chains, sums, results)
        return results

    def shared_b_loops(self, reads: list, in_place: InPlaceA) -> dict:
        """The results of the chains of `reads` (in_memory_chains': each group's chains, A's rows, their stride and
        the chains' B columns) on the inside path: the rows of every group of the same B columns and A's array in one
        set (a piece's DPAS ops down its rows, 8 rows each), grouped by the CPU's budget of sums for loops that read
        A in its memory (InMemoryProducts.sums: 6 rows of f32 with AVX2, where an op's 8 rows gave loops of 4); no
        chain starts from another group's result (`independent`)."""
        results, sets = {}, {}
        for chains, rows, stride, columns in reads:
            sums = [self.context.lanes.elements(self.accumulator(chain[0], {})) for chain in chains]
            # the same private columns (chain_column keeps one a B) and A's array, so A's stride too
            key = (tuple(map(id, columns)), in_place.arrays(chains[0][0].operands[0].owner))
            sets.setdefault(key, []).append((chains, rows, stride, columns, sums))
        for entries in sets.values():
            first_chains, _, stride, columns, _ = entries[0]
            rows = [row for _, group_rows, _, _, _ in entries for row in group_rows]
            sums = [[total for *_, group_sums in entries for total in group_sums[j]] for j in range(len(columns))]
            products = self.products(first_chains[0][0])
            self.row_loops(products, rows, stride, columns, sums, None, products.sums(self.loops()))
            start = 0
            for chains, group_rows, _, _, group_sums in entries:
                for j, totals in enumerate(group_sums):
                    totals[:] = sums[j][start:start + len(group_rows)]
                start += len(group_rows)
                self.assemble_chains(chains, group_sums, results)
        return results

    def row_loops(self, products: InMemoryProducts, rows: list[ir.Value], stride: ir.Value, columns: list,
                  sums: list[list[ir.Value]], bounds: Bounds | None, budget: int) -> None:
        """`sums` (a list of the rows' sums for each B column of `columns`) after loops over k that read A's `rows`
        in their memory, a loop for each group of rows of `budget` sums (row_groups) and `chains_a_loop` columns."""
        per_loop = products.chains_a_loop(len(columns))
        for group in row_groups(len(rows), per_loop, budget):
            for start in range(0, len(columns), per_loop):
                part = slice(start, start + per_loop)
                looped = self.in_memory_loop(products, [rows[r] for r in group], stride, columns[part],
                                             [totals[group.start:group.stop] for totals in sums[part]],
                                             None if bounds is None else bounds.of_rows(group))
                for totals, carried in zip(sums[part], looped):
                    totals[group.start:group.stop] = carried

    def assemble_chains(self, chains: list, sums: list[list[ir.Value]], results: dict) -> None:
        """Each chain's last result from its rows' sums (`sums`, chain by chain) into `results`; the ops before it in
        the chain have none."""
        for chain, totals in zip(chains, sums):
            value = self.context.lanes.assemble(totals)
            results.update((op.result, ir.Constant(value.type, ir.Undefined)) for op in chain[:-1])
            results[chain[-1].result] = value

    def in_memory_loop(self, products: InMemoryProducts, rows: list[ir.Value], stride: ir.Value,
                       columns: list[PrivateBlock], sums: list[list[ir.Value]],
                       bounds: Bounds | None = None) -> list[list[ir.Value]]:
        """One loop over a K step's k (in_place_a.products_loop) adding A[r][k] * B[k] to `sums` (a list for each B
        column of `columns`, private ones, a sum for each row of `rows`), where inside the array by `bounds` when
        given; the sums after it. `products`: how the DPAS ops' kind reads and multiplies A (VectorDpas.products)."""
        count = columns[0].count
        return products_loop(self.context.builder,
                             lambda b, carried, step: counted_loop(b, count, carried, step, loop_hints(count)),
                             rows, stride, [lambda bld, k, column=column: bld.load(column.slot(bld, k))
                                            for column in columns], sums, products.operations(), bounds)

    def mad(self, op) -> X.DpasBuiltin:
        """The DPAS builtin of `op`, a kind the builtin's emulation computes."""
        return X.describe(self.context.target, self.builtin_key(op, self.kind(op)))

    def chainable(self, op) -> bool:
        """Whether `op` is a DPAS the builtin's emulation computes (not f32 x f32) on A other than tf32."""
        return self.kind(op) not in ("f32", "tf32")

    def lower_chains(self, chains: list[list], earlier: dict) -> dict:
        """The results of `chains` (chain_groups), by value: the last op's from the loops, the others' unused."""
        mad = self.mad(chains[0][0])
        b, private = self.context.builder, self.context.lanes.private
        a_type, b_type = mad.signature.args[:2]
        words = a_words(b, mad, [self.dpas_operand(self.context.values[o.operands[0]], a_type) for o in chains[0]],
                        private, self.loops().read)
        products = []
        for chain in chains:
            column = widened_chain(b, mad, [self.dpas_operand(self.context.values[o.operands[1]], b_type)
                                            for o in chain], private)
            products.append((column, self.accumulator(chain[0], earlier)))
        finals = chained_results(b, mad, words, len(chains[0]), products)
        results = {o.result: ir.Constant(final.type, ir.Undefined) for chain, final in zip(chains, finals)
                   for o in chain[:-1]}
        results.update((chain[-1].result, final) for chain, final in zip(chains, finals))
        return results

    def dpas_products(self, key: X.Dpas, mad: X.DpasBuiltin, a_value: ir.Value, batch: list, accs: list,
                      columns: dict) -> list:
        """The DPAS emulation written inline, each B widened once for the run (`columns`), the loops carrying the
        CPU's budget of sums."""
        b_type = mad.signature.args[1]
        return dpas_results(self.context.builder, mad, a_value, [
            (self.b_column(o.operands[1], mad, b_type, columns), acc) for o, acc in zip(batch, accs)], self.loops())

    def b_column(self, b, mad: X.DpasBuiltin, b_type: ir.Type, columns: dict) -> ir.Value:
        """B's lane column, widened (dpas_emulation.widened_b), the first time the run takes this B."""
        if b not in columns:
            packed = self.dpas_operand(self.context.values[b], b_type)
            columns[b] = widened_b(self.context.builder, mad, packed, self.context.lanes.private)
        return columns[b]


class InMemoryProducts(Protocol):
    """How VectorDpas's loops that read A in its memory (`in_memory_chains`) take and multiply a kind's operands:
    `chains_a_loop`, how many of the chains that share A one loop carries; `sums`, how many sums a loop carries
    (KLoops); `column`, a chain's Bs in one private array, each op's part kept in `columns` by (B, precision);
    `operations`, how a loop reads A[r][k] from its address (`read(address)`) and adds A[r][k] * B[k] to its rows'
    sums (`multiply_adds(a_k, sums, b_k)`). A border block of A is read in its memory too, each element tested
    (in_place_a.Bounds), so that a kernel's loops over k are of one kind."""

    def chains_a_loop(self, chains: int) -> int: ...

    def sums(self, loops: KLoops) -> int: ...

    def column(self, chain: list, columns: dict) -> PrivateBlock: ...

    def operations(self) -> tuple: ...


@dataclass(frozen=True)
class FmaProducts:
    """f32 x f32: the multiply-adds of fma_mma."""
    dpas: VectorDpas
    precision: str

    def chains_a_loop(self, chains: int) -> int:
        """One, its rows as many as the CPU's sums allow, A[r][k] one broadcast load: the tutorial GEMM with AVX2
        code (Zen 4, 2048^3) ran at 134 GFLOP/s with 4 rows x 1 chain against 125 with 1 x 4."""
        return 1

    def sums(self, loops: KLoops) -> int:
        """KLoops.in_memory_sums: a loop is its sums' multiply-adds, a broadcast load a row and B's column."""
        return loops.in_memory_sums

    def column(self, chain: list, columns: dict) -> PrivateBlock:
        """The chain's Bs' components one after another: read in B's memory where every B is a block load that may
        be (codegen/cpu/in_place_b.py), else B's lanes'."""
        b, lanes, values = self.dpas.context.builder, self.dpas.context.lanes, self.dpas.context.values
        loads = [b_source(op) for op in chain]
        if all(loads):
            column, parts = InPlaceB(self.dpas.descriptors).column(
                b, lanes.private, loads, F32, F32, lambda bld, x: self.dpas.mma_element(x, self.precision),
                self.dpas.context.lane_index())
            for op, part in zip(chain, parts):
                columns.setdefault((op.operands[1], self.precision), part)
            return column
        parts = [self.dpas.mma_elements(values[op.operands[1]], self.precision) for op in chain]
        column = PrivateBlock(lanes.private(ir.ArrayType(parts[0][0].type, sum(map(len, parts)))))
        start = 0
        for op, elements in zip(chain, parts):
            for i, element in enumerate(elements):
                b.store(element, column.slot(b, start + i))
            columns.setdefault((op.operands[1], self.precision), column.part(b, start, len(elements)))
            start += len(elements)
        return column

    def operations(self) -> tuple:
        b = self.dpas.context.builder
        return (lambda at: self.dpas.mma_element(b.load(at), self.precision)), self.dpas.fma_step


@dataclass(frozen=True)
class EmulatedProducts:
    """The kinds the DPAS builtin's emulation computes (`mad`: f16, bf16, 8-bit, tf32): A's element loaded as its
    bits and widened (dpas_emulation.widen), the emulation's multiply-add (dpas_emulation.multiply_add)."""
    dpas: VectorDpas
    mad: X.DpasBuiltin

    def chains_a_loop(self, chains: int) -> int:
        """All of them, on fewer rows: each A[r][k] read is a load and a conversion (f16: `vpbroadcastw` and
        `vcvtph2ps`) that every chain of the loop shares. The tutorial GEMM with AVX2 code (Zen 4, 2048^3) ran f16
        at 126 GFLOP/s with 1 row x 4 chains, 120 with 2 x 2 and 109 with 4 x 1."""
        return chains

    def sums(self, loops: KLoops) -> int:
        """KLoops.sums: the conversions of A's and B's elements take registers too."""
        return loops.sums

    def column(self, chain: list, columns: dict) -> PrivateBlock:
        """The chain's Bs widened, each op's K elements its B's column: read in B's memory where every B is a block
        load that may be (codegen/cpu/in_place_b.py), else from B's lanes (dpas_emulation.widened_chain)."""
        b, mad, dpas = self.dpas.context.builder, self.mad, self.dpas
        loads = [b_source(op) for op in chain]
        if mad.bits < 32 and all(loads):  # tf32's B (f32 words) keeps B's lanes: not measured in memory
            column, parts = InPlaceB(dpas.descriptors).column(
                b, dpas.context.lanes.private, loads, ir.IntType(mad.bits), b_column_type(mad).element,
                lambda bld, bits: widen(bld, bits, mad.b), dpas.context.lane_index())
        else:
            column = PrivateBlock(widened_chain(b, mad, [dpas.dpas_operand(dpas.context.values[op.operands[1]],
                                                                          mad.signature.args[1]) for op in chain],
                                                dpas.context.lanes.private))
            parts = [column.part(b, i * mad.k, mad.k) for i in range(len(chain))]
        for op, part in zip(chain, parts):
            columns.setdefault((op.operands[1], op.precision), part)
        return column

    def operations(self) -> tuple:
        b, mad = self.dpas.context.builder, self.mad
        bits, mad_step = ir.IntType(mad.bits), multiply_add(b, mad)

        def read(at):
            return widen(b, b.load(b.bitcast(at, bits.as_pointer(at.type.addrspace))), mad.a)
        return read, lambda a_k, sums, b_k: [mad_step(a_r, b_k, total) for a_r, total in zip(a_k, sums)]


def independent(groups: list) -> bool:
    """Whether no chain of `groups` (chain_groups) starts from the result of an op of theirs."""
    produced = {op.result for chains in groups for chain in chains for op in chain}
    return not any(len(chain[0].operands) > 2 and chain[0].operands[2] in produced
                   for chains in groups for chain in chains)


def chain_groups(run: list) -> list[list[list]] | None:
    """The DPAS ops of `run` as chains (each op's result the next one's C and used nowhere else), in groups of at
    most SHARED_A chains of one length whose ops take the same A position by position; None where no chain has
    two ops."""
    produced = {o.result: o for o in run}
    following = {}
    for o in run:
        c = o.operands[2] if len(o.operands) > 2 else None
        if c in produced:
            if len(c.uses) != 1:
                return None
            following[produced[c]] = o
    heads = [o for o in run if not (len(o.operands) > 2 and o.operands[2] in produced)]
    chains = []
    for head in heads:
        chains.append([head])
        while chains[-1][-1] in following:
            chains[-1].append(following[chains[-1][-1]])
    if all(len(chain) == 1 for chain in chains):
        return None
    groups = []
    for chain in chains:
        group = next((g for g in groups if len(g) < SHARED_A and len(g[0]) == len(chain)
                      and all(same_a(o, other) for o, other in zip(chain, g[0]))), None)
        if group is None:
            groups.append([chain])
        else:
            group.append(chain)
    return groups


class CpuLowering(XeGPULowering):
    """The XeGPU lowering for an OpenCL CPU runtime (the module docstring): a block's ops in loop regions
    (`BlockLoops`), whose block loads and stores take plain memory ops where their pieces lie inside their surfaces
    when `fast_block_paths`, else always their builtins."""

    lanes_class = CpuLanes
    dpas_class = CpuDpas
    fast_block_paths = False
    # An scf.while whose exit tests a flag it carries (a `for` with a `break`) under a constant bound: the OpenCL CPU
    # compiler unrolls it fully by that bound, leaving an exit its vectorizer refuses ("loop with multiple exits"),
    # and then runs the kernel unvectorized, every work-item as sub-group lane 0 (a partial row stores one element).
    while_loop_hints = ROLLED

    def __init__(self, func: FuncOp, target: Target, definitions: X.Definitions):
        super().__init__(func, target, definitions)
        self.negative_zeros = OpaqueNegativeZeros(self.context)
        pieces = Pieces(self.context, self.descriptors, self.messages, self.elements)
        self.block_loops = BlockLoops(self.context, pieces, self.lower_op, self.rule, self.elementwise,
                                      self.fast_block_paths)

    def lower_block(self, block, args) -> list[ir.Value]:
        return self.block_loops.lower_block(block, args)

    def rule_instruction(self, instruction: str, dtype, *xs: ir.Value) -> ir.Value:
        """The instruction; a negation written with a literal (x * -1.0, x / -1.0, -0.0 - x), which the OpenCL CPU
        compiler makes the same `fneg`, through rule_negate."""
        negated = negation_operand(instruction, xs)
        if negated is not None:
            return self.rule_negate("", dtype, negated)
        return super().rule_instruction(instruction, dtype, *xs)

    def rule_negate(self, _: str, dtype, x: ir.Value) -> ir.Value:
        return self.negative_zeros.negate(x)

    def rule_opencl(self, function: str, dtype, *xs: ir.Value) -> ir.Value:
        """The OpenCL function; `rsqrt` as 1 / sqrt(x), the interpreter's definition (correctly rounded square root
        and division, as the OpenCL CPU runtime computes them). The driver keeps a call of `rsqrt` a library call
        even on a sub-group-uniform value: layer norm's scale of a row was the 16-wide SVML rsqrt on a broadcast,
        each vector register saved around the call; `sqrt` and the division are one `vsqrtss` and one `vdivss`."""
        if function == "rsqrt":
            (x,) = xs
            return self.builder.fdiv(splat(x.type, 1.0), self.opencl("sqrt", x))
        return super().rule_opencl(function, dtype, *xs)


class VectorLowering(CpuLowering):
    """The `cpu` target's lowering (the module docstring): block runs with fast paths, DPAS written inline."""

    dpas_class = VectorDpas
    fast_block_paths = True

    def __init__(self, func: FuncOp, target: Target, definitions: X.Definitions):
        super().__init__(func, target, definitions)
        self.k_interchange = InterchangedK(self.dpas, self.descriptors)

    def lower_ForOp(self, op):
        """A GEMM's K loop turned inside out where it qualifies (codegen/cpu/k_interchange.py), else as written."""
        plan = self.k_interchange.plan(op)
        if plan is None:
            return super().lower_ForOp(op)
        return self.k_interchange.lower(plan, lambda: super(VectorLowering, self).lower_ForOp(op))

    def butterfly(self, op):
        """XeGPULowering's; over the whole sub-group, its result then read from lane 0: every lane holds the same
        value, which the driver's vectorizer knows of a shuffle from one lane, so what is computed from it stays
        one scalar a sub-group, not a vector of 16 equal lanes. (The driver's own reductions, which this target
        takes for values of several components, Target.group_reductions, are such values already.)"""
        value = super().butterfly(op)
        if op.cluster_size < self.lanes.size:
            return value
        return self.lanes.shuffle(value, ir.Constant(I32, 0))
