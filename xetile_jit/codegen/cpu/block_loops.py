"""to-llvm on the CPU targets: a subgroup's instruction blocks computed in loops over the blocks.

Blocking (XeGPU RFC blocking rule) writes an op on a subgroup value of N instruction blocks as N block ops in a row, and
the fold of a reduction as a chain of N - 1 ops; codegen/cpu/pieces.py finds the runs of N block loads or stores.
Lowered one value a block, a whole row of N blocks is live at once, and the OpenCL CPU compiler's register allocator
moves each block through the stack three or four times (docs/performance.md "CPU notes"), and the driver builds each
block's copy of the code. So on both CPU targets a basic block's runs form loop regions: consecutive runs over the same
N blocks (element-wise ops alike in all but their block operands, an `arange`'s iotas a constant offset apart, fold
chains, load and store runs) are one loop over the blocks that computes every run's block i, a fold as up to 4 partial
results the loop carries (independent chains, as many as the CPU's vector registers hold for the loop's folds; folded
pairwise after it). A block used after its region is kept in a private array (`Stash`) and read where it is used; a run
may take the array of an earlier one whose blocks its loop reads last (softmax's exponentials the row's). Pure ops
between the runs are lowered before the loop when they use no value of the region, else after it, and a later run on the
region's blocks still joins. On the `cpu` target (`fast_paths`) load and store runs read or write their blocks with
plain memory ops where every piece of the region lies inside its surface; otherwise (`split`) a row of blocks takes them
over its blocks before the surface's end and tests each block after those: inside, plain; wholly outside, no memory
access; across the end, element by element (the builtins' border path, written in the loop: no call, whose clobbered
registers made the driver keep the values live across the loops in memory on the fast path too). The blocks after the
last one any of the region's surfaces reaches (`outside`) all compute one value, computed once and kept in the stash's
outside variable for later loops, the folds folding it in once a block: a tile of 1024 columns over rows of 768 costs
about what its 768 columns cost. The loops after one test (`unswitched`) compute the builtins' values; on `xe-emulated`
every block goes through its builtin, in the one loop. An element-wise op or constant alike to an earlier one, operands
included (blocking repeats a constant, or an op on broadcast values, a block), is that one's Alias; the descriptors and
offsets of a run's other blocks, which the loop never reads, are not lowered. Measured (docs/performance.md "CPU notes",
4096 rows of 1024-4096 columns): layer norm f32 1.7-1.9x faster, softmax f32 1.4-1.5x, f16 1.2-1.8x (512 columns:
1.0-1.2x); a row kernel's code is the same size at 512 and 2048 columns.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from llvmlite import ir

from ...ir import core_ops as C
from ...ir import simt_ops as S
from ...ir.core import Operation, Value
from ...ir.elementwise import TERNARY, combine_identity
from ...ir.types import VectorType, float32
from ...target.cpu_features import CpuFeatures
from ..llvm.context import LoweringContext
from ..llvm.core import I32, counted_loop, larger, literal, llvm_type, phis, ranged_loop, smaller
from ..xe.llvm_helpers import UNROLLED
from .pieces import MIN_RUN, PLAIN, Access, Grid, Origin, Pieces, Stash

TESTED = "tested"  # a region loop's path where its blocks may cross their surfaces' ends: each block's own test
MAPPED = (C.ElementwiseOp, C.CmpOp, C.SelectOp, C.CastOp, S.SimtIotaOp)  # pure ops on each block alone
FOLD_CHAINS = 4  # the partial results a fold keeps, at most (fold_chains)
SHARED_FOLD_CHAINS = 2  # the same where its loop has other folds (fold_chains)
FOLD_REGISTERS = 0.75  # the share of the vector registers a loop's folds keep their partial results in; the rest
# holds the blocks an iteration computes (fold_chains)
UNROLLED_FOLD_BLOCKS = (32, 64)  # the blocks of a loop that folds to be unrolled (unrolled): 512-1024 columns
STORE_LOOP_BLOCKS = 2  # the blocks an iteration of a rolled loop that loads and stores and folds nothing (chains)
CORE_FIELDS = {"_operands", "results", "regions", "parent", "loc"}


def signature(op: Operation) -> tuple:
    """What the block ops of one run share: the op, its attributes, its operand count and result types."""
    attrs = sorted((k, v) for k, v in vars(op).items() if k not in CORE_FIELDS)
    return type(op), repr(attrs), len(op.operands), tuple(v.type for v in op.results)


@dataclass(frozen=True)
class Stride:
    """An integer constant operand that is `first` + i * `step` in block i's op: the offset of each block's
    `vector.iota` (an `arange` over a row, blocking gives each block its own)."""
    first: int
    step: int


@dataclass(eq=False)
class Run:
    """The N block ops of one value: kind "map" (an element-wise op a block; `sources` per operand position the Run
    whose block i it takes, or None: the same value for every block; a `vector.iota`'s offset: a Stride), "fold"
    (the N - 1 ops folding the blocks of `sources[0]`), "load" or "store" (`accesses`, a row-major `grid`; a
    store's `sources[0]` is the stored Run)."""
    kind: str
    ops: list[Operation]
    size: int
    sources: list = field(default_factory=list)
    accesses: list[Access] | None = None
    grid: Grid | None = None
    stash: Stash | None = None
    limit: ir.Value | None = None  # i32: the first block its stash keeps in its outside variable (BlockLoops.outside)

    def blocks(self) -> list[Value]:
        """Block i's value, by i (none for a fold, whose blocks are partial results, or a store)."""
        return [op.result for op in self.ops] if self.kind in ("map", "load") else []


@dataclass(frozen=True)
class Alias:
    """An element-wise op or constant alike, operands and all, to an earlier one (blocking repeats them per block:
    a constant a block, a difference of two broadcast values): its result is `same`."""
    value: Value
    same: Value


@dataclass(frozen=True)
class Stashed:
    """Block `index` of a value kept in `stash` (its outside variable's from `limit` on): read where it is used
    (LazyValues)."""
    stash: Stash
    index: int
    limit: ir.Value | None


class LazyValues(dict):
    """The lowering's values, where a stashed block is read from its private array at each use."""

    def __getitem__(self, key):
        value = super().__getitem__(key)
        return value.stash.get(ir.Constant(I32, value.index), value.limit) if isinstance(value, Stashed) else value

    def get(self, key, default=None):
        return self[key] if key in self else default


@dataclass(eq=False)
class Region:
    """Runs over the same N blocks, one loop; `hoisted`: the ops between them, lowered before it; `ops`: the runs'
    ops, as a set (regions() asks `produces` for every operand it meets)."""
    runs: list[Run] = field(default_factory=list)
    hoisted: list[Operation] = field(default_factory=list)
    ops: set[Operation] = field(default_factory=set)

    @property
    def size(self) -> int:
        return self.runs[0].size

    def add(self, run: Run) -> None:
        self.runs.append(run)
        self.ops.update(run.ops)

    def produces(self, v: Value) -> bool:
        return v.owner in self.ops


@dataclass
class LoopPlan:
    """What a region's loop reads (lower_region): the load and store runs' surfaces and first blocks (`origins`),
    the values of store runs without a source (`stored`); the fold runs and how many chains each keeps; the earlier
    regions' runs whose stashes it reads (`reads`), and the first block (i32, a whole iteration's) from which every
    block of the region lies wholly outside (`outside_from`: None where the region cannot tell)."""
    region: Region
    origins: dict
    stored: dict
    chains: int = 1
    reads: list = field(default_factory=list)
    outside_from: ir.Value | None = None

    @property
    def folds(self) -> list[Run]:
        return folds(self.region)

    @property
    def limited(self) -> list[Run]:
        """The runs of `reads` whose stashes keep an outside value from a limit on."""
        return [source for source in self.reads if source.limit is not None]


def repeat_key(op: Operation, same: dict) -> tuple | None:
    """What an element-wise op, constant or shuffle computes (its signature and operands, aliases resolved): equal
    keys, equal values (a broadcast blocking writes once a block: a GEMM's bias, once a row of blocks). None for
    other ops."""
    if not isinstance(op, (*MAPPED, C.ConstantOp, S.ShuffleOp)) or len(op.results) != 1 or op.regions:
        return None
    return signature(op), tuple(same.get(v, v) for v in op.operands)


def map_run(ops: list[Operation], i: int, block_of: dict, same: dict) -> Run | None:
    """The element-wise ops from ops[i] on that compute a value's N blocks: alike (signature), each operand block j
    of one Run for op j, or one value for all (aliases resolved); or N `vector.iota` whose offsets are a Stride."""
    first = ops[i]
    if isinstance(first, S.SimtIotaOp):
        return iota_run(ops, i, same)
    if not isinstance(first, MAPPED) or len(first.results) != 1 or first.regions:
        return None
    firsts = [block_of.get(v) for v in first.operands]
    if any(found is not None and found[1] != 0 for found in firsts):
        return None
    sources = [found[0] if found else None for found in firsts]
    sizes = {source.size for source in sources if source is not None}
    if len(sizes) != 1:
        return None
    size = sizes.pop()
    members = ops[i:i + size]
    if len(members) != size or any(signature(op) != signature(first) for op in members):
        return None
    for j, op in enumerate(members):
        for v, source, v0 in zip(op.operands, sources, first.operands):
            if (same.get(v, v) is not same.get(v0, v0)) if source is None else (block_of.get(v) != (source, j)):
                return None
    return Run("map", members, size, sources)


def iota_run(ops: list[Operation], i: int, same: dict) -> Run | None:
    """The `vector.iota` ops from ops[i] on, alike, whose offsets are constants a constant step apart (blocking
    gives each block of an `arange` its own), when there are MIN_RUN of them; block i's offset is computed in the
    loop."""
    first = ops[i]
    offsets = []
    for op in ops[i:]:
        offset = same.get(op.operands[0], op.operands[0]).owner if isinstance(op, S.SimtIotaOp) else None
        if (not isinstance(offset, C.ConstantOp) or signature(op) != signature(first)
                or (len(offsets) > 1 and offset.value - offsets[-1] != offsets[1] - offsets[0])):
            break
        offsets.append(offset.value)
    if len(offsets) < MIN_RUN or offsets[1] == offsets[0]:
        return None
    return Run("map", ops[i:i + len(offsets)], len(offsets), [Stride(offsets[0], offsets[1] - offsets[0])])


def fold_run(ops: list[Operation], i: int, block_of: dict) -> Run | None:
    """The chain of N - 1 binary ops from ops[i] on folding the N blocks of one Run (xegpu_blocking's folds):
    op j takes the previous op's result (op 0 block 0) and block j + 1; only the last result is used elsewhere."""
    first = ops[i]
    if not isinstance(first, C.BinaryOp):
        return None
    source = block_of.get(first.operands[0], (None, None))[0]
    if source is None or block_of.get(first.operands[0]) != (source, 0) or \
            block_of.get(first.operands[1]) != (source, 1):
        return None
    members = ops[i:i + source.size - 1]
    if len(members) != source.size - 1:
        return None
    for j, op in enumerate(members[1:], start=1):
        previous = members[j - 1].result
        if (signature(op) != signature(first) or op.operands[0] is not previous or len(previous.uses) != 1
                or block_of.get(op.operands[1]) != (source, j + 1)):
            return None
    return Run("fold", members, source.size, [source])


class BlockLoops:
    """lower_block in loop regions, for the CPU targets' lowerings (codegen/cpu/lowering.py): its block accesses
    are `pieces`' (codegen/cpu/pieces.py), with their plain memory paths when `fast_paths`; an op alone is lowered
    by `lower_op`, an op on other operand values by its `rule`, an element-wise rule on values by `elementwise`
    (LLVMLowering.lower_op, .rule, .elementwise)."""

    def __init__(self, context: LoweringContext, pieces: Pieces, lower_op: Callable, rule: Callable,
                 elementwise: Callable, fast_paths: bool = True):
        self.context, self.pieces, self.lower_op, self.rule = context, pieces, lower_op, rule
        self.elementwise, self.fast_paths = elementwise, fast_paths
        self.messages, self.descriptors = pieces.messages, pieces.descriptors

    @property
    def values(self) -> LazyValues:
        return self.context.values

    @property
    def builder(self) -> ir.IRBuilder:
        return self.context.builder

    def lower_block(self, block, args) -> list[ir.Value]:
        if not isinstance(self.context.values, LazyValues):
            self.context.values = LazyValues(self.context.values)
        self.values.update(zip(block.args, args))
        items = self.runs(list(block.ops))
        skipped = unread(items)
        lowered = set()  # the block's ops lowered so far (recycled_stash)
        for item in regions(items):
            if isinstance(item, Region):
                self.lower_region(item, skipped, lowered)
                lowered.update(item.ops, item.hoisted)
            else:
                if item not in skipped:
                    self.lower_item(item)
                lowered.add(item)
        return self.context.operands(block.terminator)

    def lower_item(self, item: Operation | Alias) -> None:
        if isinstance(item, Alias):  # the value as it is held (a stashed block stays where it is)
            dict.__setitem__(self.values, item.value, dict.__getitem__(self.values, item.same))
        else:
            self.lower_op(item)

    # ---- finding runs ------------------------------------------------------------------------------------
    def runs(self, ops: list[Operation]) -> list[Operation | Run | Alias]:
        """`ops` with the runs among them in their place, and an op alike to an earlier one as its Alias."""
        items, block_of, same, seen, i = [], {}, {}, {}, 0
        while i < len(ops):
            run = (self.access_run(ops, i, block_of) or map_run(ops, i, block_of, same)
                   or fold_run(ops, i, block_of))
            if run is None:
                op, key = ops[i], repeat_key(ops[i], same)
                if key is not None and key in seen:
                    same[op.result] = seen[key]
                    items.append(Alias(op.result, seen[key]))
                else:
                    if key is not None:
                        seen[key] = op.result
                    items.append(op)
                i += 1
                continue
            items.append(run)
            block_of.update((v, (run, index)) for index, v in enumerate(run.blocks()))
            i += len(run.ops)
        return items

    def access_run(self, ops, i, block_of) -> Run | None:
        """The block loads (or stores) from ops[i] on, codegen/cpu/pieces.py's run, when it has `min_run` blocks in a
        grid. A store run whose values are not one Run's blocks in order has no source: its values are put in a
        private array before the loop."""
        first = self.pieces.access(ops[i])
        if first is None:
            return None
        accesses = [first]
        while i + len(accesses) < len(ops):
            access = self.pieces.access(ops[i + len(accesses)])
            if access is None or not access.joins(first):
                break
            accesses.append(access)
        grid = Grid.of(accesses)
        if len(accesses) < self.pieces.min_run(first) or grid is None or not self.pieces.starts_alike(accesses, grid):
            return None
        members = [a.op for a in accesses]
        if isinstance(first.op, S.SimtLoadNdOp):
            return Run("load", members, len(members), [None] * len(first.op.operands), accesses, grid)
        source = block_of.get(first.op.operands[0], (None, None))[0]
        if source is None or source.size != len(members) or any(
                block_of.get(op.operands[0]) != (source, j) for j, op in enumerate(members)):
            source = None
        return Run("store", members, len(members), [source] + [None] * (len(first.op.operands) - 1), accesses,
                   grid)

    # ---- lowering a region -------------------------------------------------------------------------------
    def lower_region(self, region: Region, skipped: set, lowered: set) -> None:
        """The hoisted ops (those the lowering reads), then the loop over the blocks computing each run's block i in
        order (two, unswitched, where the region loads or stores); `lowered`: the block's ops before it."""
        for item in region.hoisted:
            if item not in skipped:
                self.lower_item(item)
        b = self.builder
        tests = [self.pieces.inside(run.accesses) for run in region.runs
                 if run.accesses is not None and self.fast_paths and run.accesses[0].plain]
        reads = list({source: None for run in region.runs for source in item_sources(run)
                      if isinstance(source, Run) and source not in region.runs})
        # the plain loop reads their stashes without a limit
        tests += [b.icmp_unsigned("==", source.limit, ir.Constant(I32, region.size))
                  for source in reads if source.limit is not None]
        inside = functools.reduce(b.and_, tests) if tests else None
        claimed = set()
        for run in region.runs:
            if any(user not in region.ops for v in run.blocks() for user, _ in v.uses):
                run.stash = recycled_stash(region, run, lowered, claimed) or Stash(
                    self.context, llvm_type(run.ops[0].result.type), run.size, outside=self.fast_paths)
                claimed.add(run.stash)
        plan = LoopPlan(region, {run: self.pieces.origin(run.accesses[0]) for run in region.runs
                                 if run.accesses is not None},
                        {run: self.stored_values(run) for run in region.runs
                         if run.kind == "store" and not run.sources[0]}, self.chains(region), reads)
        finals, limit = (self.region_loop(plan, None), None) if inside is None else self.unswitched(inside, plan)
        for k, run in enumerate(plan.folds):
            self.values[run.ops[-1].result] = self.fold_partials(run.ops[0], finals[k * plan.chains:][:plan.chains])
        for run in region.runs:
            if run.stash is not None:
                run.limit = limit
                self.values.update((v, Stashed(run.stash, j, run.limit)) for j, v in enumerate(run.blocks()))

    def region_loop(self, plan: LoopPlan, path: str | None, span: tuple | None = None,
                    carried: list | None = None, step: Callable | None = None) -> list | None:
        """The loop over the region's blocks, `plan.chains` blocks an iteration (block j * chains + c in chain c),
        each load and store on `path` (block_in_loop); over the iterations of `span` (i32 start and end) where
        given, else all, from the folds' partial results `carried` (else their starts), each block by `step`
        (region_step); the folds' final partial results, fold by fold, chain by chain."""
        def body(b, j, states):
            states = list(states or [])
            first = None if all(map(has_identity, plan.folds)) else b.icmp_unsigned("==", j, ir.Constant(I32, 0))
            for chain in range(plan.chains):
                i = b.add(b.mul(j, ir.Constant(I32, plan.chains)), ir.Constant(I32, chain))
                states[chain::plan.chains] = (step or self.region_step)(plan, i, first, states[chain::plan.chains],
                                                                         path)
            return states
        if carried is None:
            carried = [fold_start(run.ops[0]) for run in plan.folds for _ in range(plan.chains)] or None
        hints = UNROLLED if path == PLAIN and span is None and unrolled(plan.region, self.context.target.cpu) else ()
        if span is None:
            return counted_loop(self.builder, plan.region.size // plan.chains, carried, body, hints)
        return ranged_loop(self.builder, *span, carried, body, hints)

    def region_step(self, plan: LoopPlan, i: ir.Value, first: ir.Value, states: list, path: str | None) -> list:
        """Block i of every run of the region; `states`, each fold's partial result of block i's chain (`first`:
        none yet). On PLAIN, block i lies before every earlier stash's limit (`split`)."""
        current = {}
        for run in plan.region.runs:
            if run.kind == "store":
                data = (plan.stored[run].get(i) if run in plan.stored
                        else self.block_value(run.sources[0], i, current, path == PLAIN))
                self.block_in_loop(run, i, path, plan.origins[run], data)
            elif run.kind == "fold":
                k = plan.folds.index(run)
                states[k] = self.fold_step(run, i, first, states[k], current, path == PLAIN)
            elif not fused_away(run, plan):
                value = (self.block_in_loop(run, i, path, plan.origins[run]) if run.kind == "load"
                         else self.mapped_block(run, i, current, path == PLAIN))
                current[run] = value
                if run.stash is not None:
                    run.stash.put(i, value)
        return states

    def fold_step(self, run: Run, i: ir.Value, first: ir.Value, state: ir.Value, current: dict,
                  bounded: bool = False) -> ir.Value:
        """A fold's partial result `state` with block i folded in (`first`: `state` is none yet)."""
        if contracts(run):
            return self.fused(run, i, current, state, bounded)
        block = self.block_value(run.sources[0], i, current, bounded)
        combined = self.lower_with(run.ops[0], dict(zip(run.ops[0].operands, (state, block))))
        return combined if has_identity(run) else self.builder.select(first, block, combined)

    def chains(self, region: Region) -> int:
        """The chains each fold of `region` keeps (fold_chains), for the target's CPU."""
        runs = folds(region)
        if not runs:
            return STORE_LOOP_BLOCKS if rolled_store_loop(region, self.context.target.cpu) else 1
        bits = max(lane_bits(run.ops[-1].result.type) for run in runs) * self.context.lanes.size
        return fold_chains(region.size, len(runs), bits, self.context.target.cpu)

    def fused(self, fold: Run, i: ir.Value, current: dict, partial_result: ir.Value, bounded: bool) -> ir.Value:
        """A contracting fold's partial result after block i: the product block i of its source would be, added
        with one rounding (`contracts`)."""
        product = fold.sources[0]
        bound = self.mapped_operands(product, i, current, bounded)
        a, b = (bound[v] if v in bound else self.values[v] for v in product.ops[0].operands)
        return self.elementwise(TERNARY["math.fma"].llvm, float32, a, b, partial_result)

    def mapped_block(self, run: Run, i: ir.Value, current: dict, bounded: bool = False) -> ir.Value:
        """Block i of a map run: its op on block i of each source run or stride (or the value shared by every
        block)."""
        return self.lower_with(run.ops[0], self.mapped_operands(run, i, current, bounded))

    def mapped_operands(self, run: Run, i: ir.Value, current: dict, bounded: bool) -> dict:
        """The operand values of block i's op of a map run, by the op's operands (`bounded`: block_value)."""
        b = self.builder
        bound = {}
        for v, source in zip(run.ops[0].operands, run.sources):
            if isinstance(source, Stride):  # an index: i64
                ty = llvm_type(v.type)
                bound[v] = b.add(ir.Constant(ty, source.first), b.mul(b.zext(i, ty), ir.Constant(ty, source.step)))
            elif source is not None:
                bound[v] = self.block_value(source, i, current, bounded)
        return bound

    def fold_partials(self, fold: Operation, partials: list[ir.Value]) -> ir.Value:
        """The partial results of a fold's chains folded pairwise with its op."""
        while len(partials) > 1:
            partials = [self.lower_with(fold, dict(zip(fold.operands, partials[k:k + 2])))
                        for k in range(0, len(partials), 2)]
        return partials[0]

    def stored_values(self, run: Run) -> Stash:
        """The values a store run without a source writes, in a private array."""
        values = Stash(self.context, llvm_type(run.ops[0].operands[0].type), run.size)
        for j, op in enumerate(run.ops):
            values.put(ir.Constant(I32, j), self.values[op.operands[0]])
        return values

    def block_value(self, run: Run, i: ir.Value, current: dict, bounded: bool = False) -> ir.Value:
        """Block i of `run`: computed in this iteration, or kept by an earlier region (`bounded`: i lies before its
        limit)."""
        return current[run] if run in current else run.stash.get(i, None if bounded else run.limit)

    def lower_with(self, op: Operation, bound: dict) -> ir.Value:
        """`op`'s lowering rule with the operand values in `bound` in place of the lowering's."""
        saved = {v: dict.get(self.values, v) for v in bound}
        dict.update(self.values, bound)
        try:
            out = self.rule(op)(op)
        finally:
            for v, old in saved.items():
                if old is None:
                    dict.pop(self.values, v)
                else:
                    dict.__setitem__(self.values, v, old)
        return out[0] if isinstance(out, list) else out

    def unswitched(self, inside: ir.Value, plan: LoopPlan) -> tuple[list | None, ir.Value | None]:
        """The region's loop on PLAIN paths where its pieces are `inside`, else `split`: the folds' final values,
        and the first block wholly outside (`outside_from`, where the region can tell; every block where inside).
        One test before the loops, not one a block in a single loop: a call of the border path there clobbered the
        vector registers, and the OpenCL CPU compiler then kept the folds' partial results in memory on the fast
        path too. `outside_from` is computed on the other path only: before the test, its arithmetic on every
        array's bounds ran once a row (the driver does not move it), 28 of the 86 instructions layer norm's rows ran
        before their first loop (Zen 4, 4096x512 f32)."""
        b = self.builder
        with b.if_else(inside) as (then, otherwise):
            with then:
                fast, fast_end = self.region_loop(plan, PLAIN), b.block
            with otherwise:
                plan.outside_from = self.outside_from(plan)
                slow, slow_end = self.split(plan), b.block
        fast, slow = fast or [], slow or []
        if plan.outside_from is not None:  # on the plain path no block lies outside
            fast, slow = [*fast, ir.Constant(I32, plan.region.size)], [*slow, plan.outside_from]
        values = phis(b, [v.type for v in slow], [(fast, fast_end), (slow, slow_end)])
        limit = values.pop() if plan.outside_from is not None else None
        return values or None, limit

    def split(self, plan: LoopPlan) -> list | None:
        """The region's loop where some piece crosses its surface's end (or an earlier stash it reads keeps an
        outside variable), TESTED: where every load and store run is one row of blocks, on the PLAIN paths over the
        first iterations, whose blocks all lie inside (Pieces.inside_blocks) and before every stash's limit,
        TESTED over the next, and where the region can tell (`outside_from`) the blocks wholly outside once
        (`outside`) (tutorial 12's f32 layer norm, 4096 rows of 768 columns in tiles of 1024: 0.7-1.2 ms against
        4.9-5.2 with every element tested, 0.9-1.2 at 1024 columns). The folds' final values."""
        b = self.builder
        counts = [self.pieces.inside_blocks(run.accesses[0], run.grid, plan.origins[run]) for run in plan.region.runs
                  if run.accesses is not None and run.accesses[0].plain]
        counts += [source.limit for source in plan.limited]
        if not counts or None in counts:
            return self.region_loop(plan, TESTED)
        inside = b.udiv(functools.reduce(partial(smaller, b), counts), ir.Constant(I32, plan.chains))
        states = self.region_loop(plan, PLAIN, (ir.Constant(I32, 0), inside))
        if plan.outside_from is None:
            return self.region_loop(plan, TESTED, (inside, ir.Constant(I32, plan.region.size // plan.chains)), states)
        start = b.udiv(plan.outside_from, ir.Constant(I32, plan.chains))
        return self.outside(plan, start, self.region_loop(plan, TESTED, (inside, start), states))

    def outside_from(self, plan: LoopPlan) -> ir.Value | None:
        """i32: the first block, at the start of an iteration, from which every block of the region lies wholly
        outside: after every load and store run's blocks that start before the surface's end
        (Pieces.touched_blocks), and every earlier stash's limit, so that from there every block computes one
        value. None where the region cannot tell: not every run is one row of plain blocks, a block's value
        follows its index (an `arange`), or an earlier stash it reads keeps every block."""
        region = plan.region
        accesses = [run for run in region.runs if run.accesses is not None]
        if (not self.fast_paths or not all(run.accesses[0].plain for run in accesses)
                or any(isinstance(source, Stride) for run in region.runs for source in run.sources)
                or any(source.limit is None for source in plan.reads)):
            return None
        counts = [self.pieces.touched_blocks(run.accesses[0], run.grid, plan.origins[run]) for run in accesses]
        counts += [source.limit for source in plan.limited]
        if not counts or None in counts:
            return None
        b, chains = self.builder, ir.Constant(I32, plan.chains)
        most = functools.reduce(partial(larger, b), counts)
        return b.mul(b.udiv(b.add(most, ir.Constant(I32, plan.chains - 1)), chains), chains)

    def outside(self, plan: LoopPlan, start: ir.Value, states: list | None) -> list | None:
        """The region's iterations from `start` on, whose blocks all lie wholly outside: each run's value computed
        once (the loads' padding, read from no memory; nothing stored), kept in its stash's outside variable, and
        the folds' loop folding it in block by block (the sums as often as the blocks); the folds' final values.
        Computing a tile's columns past the row once rather than a block at a time: Triton-style rows (768
        columns in tiles of 1024) at the cost of their own columns."""
        b, size = self.builder, plan.region.size
        # `past`: an index past every block, which reads an earlier stash's outside value
        total, past = ir.Constant(I32, size // plan.chains), ir.Constant(I32, size)
        if not plan.folds and not any(run.stash is not None for run in plan.region.runs):
            return states  # nothing to compute: the blocks are skipped
        entry = b.block
        with b.if_then(b.icmp_signed("<", start, total)):
            current = {}
            for run in plan.region.runs:
                if run.kind in ("load", "map") and not fused_away(run, plan):
                    current[run] = (self.messages.padding_value(run.ops[0]) if run.kind == "load"
                                    else self.mapped_block(run, past, current))
                    if run.stash is not None:
                        run.stash.put_outside(current[run])
            if plan.folds:
                folded = self.region_loop(plan, None, (start, total), states, partial(self.folds_step, current))
            inner = b.block
        return phis(b, [v.type for v in states], [(states, entry), (folded, inner)]) if plan.folds else states

    def folds_step(self, current: dict, plan: LoopPlan, i: ir.Value, first: ir.Value, states: list, _path) -> list:
        """region_step of a block wholly outside: the folds' alone, of the blocks' one value (`current`)."""
        return [self.fold_step(run, i, first, state, current) for run, state in zip(plan.folds, states)]

    def block_in_loop(self, run: Run, i: ir.Value, path: str | None, origin: Origin, data: ir.Value | None = None):
        """Block i of a load run (its value) or of a store run (writing `data`): for a `plain` run on `path`
        (PLAIN, or TESTED: the block's own test picks), the builtin with no fast paths (None); else the builtin or
        the element path, as the op alone."""
        access, b = run.accesses[0], self.builder
        shift = run.grid.shift(b, i)
        if access.key is None:
            return self.pieces.by_elements(access, origin, shift, data)
        xy = (b.add(origin.xy[0], shift[0]), b.add(origin.xy[1], shift[1]))
        if path is not None and access.plain:
            block_path = self.pieces.block_test(access, origin.surface, xy) if path == TESTED else path
            return self.pieces.block_access(access, origin.surface, xy, data, block_path)
        message = partial(self.message, access, xy, data)
        if access.aligned:
            return message()
        return self.messages.by_message(origin.aligned, message,
                                        partial(self.pieces.by_elements, access, origin, shift, data))

    def message(self, access: Access, xy: tuple, data: ir.Value | None = None):
        """The builtin message of `access` at `xy`: the block read (its value) or `data` written."""
        if data is None:
            return self.messages.load(access.key, access.op, xy)
        self.messages.store(access.key, access.op, data, xy)
        return None


def regions(items: list) -> list:
    """`items` with consecutive runs over the same blocks grouped in Regions. A run joins the open region unless it
    takes as one value for every block a value the region or a deferred op computes, or its memory accesses in the
    loop would not see what program order gives them (in_order). A pure op (or Alias) before a
    region's first run or between its runs joins it, lowered before the loop, unless it uses such a value; then it,
    or any other op but one with regions or a terminator, is deferred, lowered after the loop, so that a later
    element-wise or fold run independent of it on blocks of the region's runs still joins (layer norm's sum of
    squares, in the loop of the sum, not in a second pass over the row); another run then starts a region of its
    own (layer norm's weight, loaded in the loop that uses it, not kept for it in a private array). Anything else
    closes the region."""
    result, pending, deferred = [], [], []
    region, later = None, set()

    def close():
        # pending before deferred: a deferred op may use a pending one (never the other way round)
        result.extend(([region] if region is not None else []) + pending + deferred)
        pending.clear()
        deferred.clear()
        later.clear()

    for item in items:
        if isinstance(item, Run):
            if not joins(item, region, later, bool(deferred)):
                close()
                region = Region()
            region.add(item)
            region.hoisted.extend(pending)
            pending.clear()
        elif hoistable(item, region, later):
            pending.append(item)
        elif region is not None and deferrable(item):
            deferred.append(item)
            later.update([item.value] if isinstance(item, Alias) else item.results)
        else:
            close()
            result.append(item)
            region = None
    close()
    return result


def unread(items: list) -> set:
    """The ops (and their Aliases) among `items` whose results only uses the loops never read have, directly or
    through other such ops: the uses by each run's ops but the first (the loop lowers a run's first op, on its first
    block's descriptor), save the values a store run without a source writes. They are the descriptors and offsets
    of a run's other blocks: not lowered."""
    aliases: dict[Value, list[Alias]] = {}
    for item in items:
        if isinstance(item, Alias):
            aliases.setdefault(item.same, []).append(item)
    unused = set()
    for run in (item for item in items if isinstance(item, Run)):
        for op in run.ops[1:]:
            unused.update((op, index) for index in range(len(op.operands))
                          if not (run.kind == "store" and run.sources[0] is None and index == 0))
    skipped = set()
    for item in reversed(items):
        if not (isinstance(item, Operation) and item.pure and item.results and not item.regions):
            continue
        stand_ins = [alias for v in item.results for alias in aliases.get(v, [])]
        uses = [use for v in item.results + [alias.value for alias in stand_ins] for use in v.uses]
        if all(use in unused or use[0] in skipped for use in uses):
            skipped.update([item, *stand_ins])
    return skipped


def recycled_stash(region: Region, run: Run, lowered: set, claimed: set) -> Stash | None:
    """The private array of an earlier region's run that `run`'s blocks may take (none `claimed` in this region): one
    of the same type and size whose blocks nothing reads but ops `lowered` before the region and the region's runs up
    to `run`, so the loop reads its block i before it puts block i of `run` there. Softmax's exponentials take the
    row's place: in a second private array the size of the row, the loops missed L1 (4096 f16 columns: the first
    loop's loads and the exponential's stores waited). Not where a fold multiplies and adds in one (`contracts`),
    which reads its product's operands where the fold is."""
    if any(map(contracts, folds(region))):
        return None
    position = region.runs.index(run)
    readers = {op for earlier in region.runs[:position + 1] for op in earlier.ops}
    wanted = llvm_type(run.ops[0].result.type)
    for source in (s for earlier in region.runs[:position + 1] for s in item_sources(earlier) if isinstance(s, Run)):
        stash = source.stash
        if (source not in region.runs and stash is not None and stash not in claimed
                and stash.value_type == wanted and stash.count == run.size
                and all(user in lowered or user in readers for v in source.blocks() for user, _ in v.uses)):
            return stash
    return None


def fold_chains(size: int, folds: int, bits: int, cpu: CpuFeatures | None) -> int:
    """How many partial results each of a loop's `folds` folds of `size` blocks keeps: block i goes to partial
    i % chains, so that a fold is `chains` independent chains (one chain of maxnumf measured 2x the time of the
    same kernel's loads and stores: each block waited for the compare and select of the one before). At most
    FOLD_CHAINS for a loop's only fold, SHARED_FOLD_CHAINS where the loop has others (their chains are independent
    of each other too: on the Zen 4 layer norm's two sums of 1024-column f32 rows ran 1.1-1.3x as fast with 2 chains
    each as with 4, every other width and dtype the same; docs/performance.md "On the Zen 4, 2026-12-02"), and as
    many as FOLD_REGISTERS of `cpu`'s vector registers hold for all the folds, a partial result being `bits` bits
    across the sub-group: on AVX2 two sums of 16 lanes' f32 with 4 chains each took all 16 ymm registers, and the
    loop spilled and copied its partial sums through the stack every iteration (docs/performance.md "Rows."). The
    chains order a sum's additions, so its last bits follow the CPU (whose flags are in the compile cache's
    keys)."""
    most = FOLD_CHAINS if folds == 1 else SHARED_FOLD_CHAINS
    if cpu is not None and cpu.vector_registers:
        most = min(most, int(cpu.vector_registers * FOLD_REGISTERS) // (folds * cpu.registers_for(bits)))
    return next(chains for chains in (FOLD_CHAINS, 2, 1) if chains <= max(1, most) and size % chains == 0)


def contracts(fold: Run) -> bool:
    """Whether `fold` sums f32 products that nothing else uses, made by a multiply flagged `contract` (fp_fusion or
    fast math, transforms/xetile/contract_float_math.py): the loop then adds each block's products with one fma, as
    OpenCL C compiles a sum of squares by default."""
    product = fold.sources[0]
    op = product.ops[0]
    return (fold.ops[0].name == "arith.addf" and product.kind == "map" and isinstance(op, C.BinaryOp)
            and op.contract and op.result.type.dtype == float32
            and all(len(v.uses) == 1 for v in product.blocks()))


def has_identity(run: Run) -> bool:
    fold = run.ops[0]
    return combine_identity(fold.name, fold.result.type.dtype) is not None


def fold_start(fold: Operation) -> ir.Constant:
    """A chain's partial result before its first block: the fold's identity, so that the loop folds block 0 as
    any other (the driver peeled a select of block 0 off the vector loop, but not off the other copies it builds:
    the f16 layer norm's assembly was 6% longer); zero where the op has none, and the loop selects block 0."""
    t = fold.result.type
    identity = combine_identity(fold.name, t.dtype)
    return ir.Constant(llvm_type(t), None if identity is None else literal(identity, t.dtype))  # llvmlite splats


def folds(region: Region) -> list[Run]:
    return [run for run in region.runs if run.kind == "fold"]


def unrolled(region: Region, cpu: CpuFeatures | None) -> bool:
    """Whether the inside path's loop of `region` is to be unrolled (UNROLLED), for a loop that loads blocks:
    - one that stores 16-bit blocks and folds nothing, as layer norm's output of f16 rows, where the CPU has 32
      vector registers: f16 layer norm at 2048 columns ran 1.1x as fast unrolled as two blocks an iteration
      (rolled_store_loop, which f32 stores take: as fast or faster there). With 16 vector registers (AVX2) f16
      layer norm ran 0.8x as fast unrolled, so not there, nor where the ISA is unknown (docs/performance.md "Rows").
      A GEMM's C store (no load) and softmax's output (its row in a private array) gained nothing and took longer
      driver builds.
    - one that folds 16-bit blocks it loads, of UNROLLED_FOLD_BLOCKS blocks, where the CPU has 32 vector
      registers: the compiler left layer norm's loop of the sums rolled at 512-1024 columns, two blocks and 11
      instructions a block where unrolled each takes 4 to 5, and f16 layer norm ran 5-7% faster unrolled (Zen 4,
      its sums combined as vectors: slot_row_reduction), at the cost of builds (a fuzzer's row kernel of 64 blocks
      1.0 s against 0.7). f32 rows ran as fast at 512 columns and slower at 1024, f16 rows of 256 columns (16
      blocks) as fast, longer rows gained nothing and built longer; with AVX2 the f16 layer norm's build took 2-3x
      as long for no steadier gain."""
    if not any(run.kind == "load" for run in region.runs):
        return False
    if folds(region):
        narrow_loads = min(run.ops[0].result.type.dtype.bits for run in region.runs if run.kind == "load") < 32
        fewest, most = UNROLLED_FOLD_BLOCKS
        return narrow_loads and cpu is not None and cpu.vector_registers == 32 and fewest <= region.size <= most
    stores = [run.ops[0].operands[0].type.dtype.bits for run in region.runs if run.kind == "store"]
    return bool(stores) and min(stores) < 32 and cpu is not None and cpu.vector_registers == 32


def rolled_store_loop(region: Region, cpu: CpuFeatures | None) -> bool:
    """Whether `region` is a loop that loads and stores blocks and folds nothing, left rolled (unrolled), of an even
    number of blocks: it runs STORE_LOOP_BLOCKS blocks an iteration. So layer norm's output loop is the hand-written
    kernel's, 17 instructions two blocks (bench/opencl_reference.py); a block an iteration the OpenCL CPU compiler
    computed every block's offsets of its four arrays, 13 instructions a block (docs/performance.md "Rows")."""
    kinds = {run.kind for run in region.runs}
    return ({"load", "store"} <= kinds and "fold" not in kinds and not unrolled(region, cpu)
            and region.size % STORE_LOOP_BLOCKS == 0)


def lane_bits(t) -> int:
    """The bits of one lane's value of type `t` (a scalar or a 1-D vector)."""
    return t.dtype.bits * (t.shape[0] if isinstance(t, VectorType) else 1)


def joins(run: Run, region: Region | None, later: set, deferring: bool) -> bool:
    """Whether `run` may be computed in the loop of `region` (regions()): it takes no value the region or an op
    deferred after it (`later`) computes as one value for every block, and once an op is deferred (`deferring`),
    it is an element-wise op or a fold on blocks of the region's runs: a load or store run stays after a deferred
    barrier or store (a row stored over what another subgroup wrote, a barrier between)."""
    if region is None or region.size != run.size:
        return False
    uniform = [v for op in run.ops for v, source in zip(op.operands, item_sources(run)) if source is None]
    if any(region.produces(v) or v in later for v in uniform) or not in_order(run, region):
        return False
    return not deferring or (run.kind in ("map", "fold") and any(source in region.runs for source in run.sources))


def in_order(run: Run, region: Region) -> bool:
    """Whether the loop over the blocks keeps what `run`'s accesses read and write as in program order, where all of
    an earlier run's blocks come before any of `run`'s: a load after a store run would read blocks stored only in
    later iterations (any array: two arguments may be one buffer); a store to an array the region loads or stores
    must write the blocks the other run reads or writes in the same iteration, after it and before the later ones
    (the same origin and grid: layer norm in place)."""
    if run.kind == "load":
        return not any(other.kind == "store" for other in region.runs)
    if run.kind != "store":
        return True
    first = run.accesses[0]
    return all(other.grid == run.grid and (other.accesses[0].row, other.accesses[0].col) == (first.row, first.col)
               for other in region.runs if other.accesses is not None and other.accesses[0].array is first.array)


def deferrable(item) -> bool:
    """Whether `item` may be lowered after the loop of the open region (regions()): an Alias, or an op with no
    regions that does not end its block. Memory ops and barriers too: the runs that then join are element-wise ops
    and folds, which touch no memory (the row reductions across subgroups go through shared local memory, a
    barrier between)."""
    return isinstance(item, Alias) or (isinstance(item, Operation) and not item.regions
                                       and item is not item.parent.terminator)


def hoistable(item, region: Region | None, later: set) -> bool:
    """Whether `item` may be lowered before the loop of `region` (or of the next one): an Alias, or a pure op but a
    terminator, of no value the region or an op deferred after it (`later`) computes."""
    if isinstance(item, Alias):
        return region is None or not (region.produces(item.same) or item.same in later)
    return (isinstance(item, Operation) and item.pure and not item.regions and item is not item.parent.terminator
            and (region is None or not any(region.produces(v) or v in later for v in item.operands)))


def fused_away(run: Run, plan: LoopPlan) -> bool:
    """Whether `run` is the product a contracting fold multiplies and adds in one (`contracts`): not computed on its
    own."""
    return any(contracts(fold) and fold.sources[0] is run for fold in plan.folds)


def item_sources(run: Run) -> list:
    """Per operand position of the run's ops, the Run whose block i it takes, or None."""
    return [run.sources[0]] * 2 if run.kind == "fold" else run.sources
