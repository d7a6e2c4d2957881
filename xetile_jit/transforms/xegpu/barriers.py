"""Barriers for workgroup program order (XeTile RFC: tile ops act on whole workgroup tiles, one after another).

The pass runs on workgroup-level XeGPU IR, where one op is one access of a whole tile; wg-to-sg then gives every
subgroup its part of each op, and the barriers stay where they are. A later access of an array waits at a
gpu.barrier for an earlier one, one of them a write, only where a subgroup may touch an element another subgroup
touched (a write then a read or write, a read then a write): where the two tiles' offsets differ by constants (or
lie in different slices of a batched array), their layouts say which subgroups touch each element
(transforms/xegpu/places.py), so a tile stored and loaded back in a layout that replicates it over the subgroups
needs none (each reads what it wrote itself), nor do stores to four batches of one array. Elsewhere the
descriptor decides: through different ones the later access waits; through one, every subgroup touches its own
pieces both times unless the layout has subgroups share elements (sg_layout x sg_data wraps). The pieces of one
op need no order among themselves (a store's sharing subgroups write the same values), which is why the pass
does not run after wg-to-sg, where they are many accesses (a barrier between every two crashed OpenCL's CPU
compiler). A loop whose body writes an array also orders its iterations (an iteration's offsets are another's
plus the loop's steps: compared by descriptor). Different array arguments are taken not to alias (as C's
`restrict`); shared local memory is ordered by the layout conversions' own barriers (needless_barriers.py then
drops those that order nothing). Which ops read or write memory, and through which operand, is what they declare
(ir/effects.py). A branch (or a while loop) on a value that depends on the subgroup id runs in some subgroups only,
so a barrier inside it would wait forever: such a branch is ordered as one access, with the barrier before it;
inside, one subgroup runs its accesses in program order. Accesses through one scattered descriptor (a gather then
a scatter) are ordered too: their offsets need not keep to the subgroup's piece.

User synchronization: `xetile.barrier()` is a gpu.barrier, so global accesses before it need no barrier of this
pass after it; SLM buffers of `alloc_slm` are ordered by the user's barriers only (as in the XeTile RFC's
cooperative GEMM). A fence or a named barrier (a subset of subgroups may meet there) orders nothing here: the
pass still puts its own barriers around them where global accesses conflict.

Named barriers in SPIR-V (`check_named_barriers`): a wait is a workgroup barrier, an arrive emits nothing. That
refines the named barrier (XeGPU RFC nbarrier: a wait returns once the participants of its phase have arrived)
when every subgroup runs each wait and the phase a wait needs is made of arrives before it: the barrier lets a
subgroup go once every subgroup has made the arrives before it, and shows it more writes than the phase's, never
fewer. So producers may arrive in a branch on subgroup_id() before a wait every subgroup runs, and a barrier of
fewer participants works when every subgroup arrives and the count divides the subgroups. The rest is a
NotImplementedError for every SPIR-V target: a count that does not divide the subgroups that all arrive (a phase
would take arrives made after the wait), and a wait only some subgroups run (in a branch or loop on
subgroup_id()), which needs a real named barrier. OpenCL's CPU device has none (it rejects SPIR-V's NamedBarrier
capability) and runs a workgroup's subgroups one after another between barriers, so a wait spinning on an SLM
counter never returns. For the GPUs, SPIR-V's OpMemoryNamedBarrier is one arrive-and-wait (no split arrive and
wait), IGC 2022 has no builtin for OpNamedBarrierInitialize and IGC 2026's ocloc crashes on it; the hardware's
nbarrier.signal/nbarrier.wait are reachable only as the legacy ABI's inline vISA, which no device here can run.
The numpy interpreter runs every named barrier with real phases; a program whose producers' phases never complete
(it hangs on a GPU, the interpreter reports it) is not diagnosed in SPIR-V, where it does not hang.
A workgroup barrier in such a branch is a CompilationError at every level (`check_divergent_barriers`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...ir import core_ops as C
from ...ir import xegpu_ops as G
from ...ir import xegpu_scatter_ops as GS
from ...ir.analysis import accessed_arrays, sources, workgroup_subgroups
from ...ir import sync_ops as S
from ...ir.core import Block, FuncOp, Value, walk
from ...ir.effects import SLM, WRITE, memory_accesses, synchronizes
from ...ir.types import SlmMemRefType
from .places import Place, place_of


@dataclass(frozen=True)
class Access:
    tdesc: Value
    arrays: frozenset
    writes: bool
    place: Place | None = None  # where each subgroup touches the array, when the offsets tell

    def conflicts(self, other: "Access") -> bool:
        """Whether `other`, later in program order, needs a barrier after this access."""
        if not (self.writes or other.writes) or self.arrays.isdisjoint(other.arrays):
            return False
        if self.place is not None and other.place is not None:
            return self.place.conflicts(self.writes, other.place, other.writes)
        return self.tdesc is not other.tdesc or self.shared

    @property
    def shared(self) -> bool:
        """Whether one subgroup may touch what another's access through the same descriptor did: a scattered
        descriptor's offsets may point anywhere; a tile's layout may have subgroups share elements (or, with no
        workgroup-level layout, says nothing)."""
        t = self.tdesc.type
        if isinstance(t, GS.ScatterDescType):
            return True
        if not isinstance(t, G.TensorDescType):
            return False  # memref.load reads an array through no descriptor: only a write conflicts with it
        return t.layout is None or t.layout.sg_layout is None or t.layout.shares_data(t.shape)

    def unplaced(self) -> "Access":
        """This access where its offsets' values may differ: in another loop iteration, or in only some
        subgroups."""
        return dataclasses.replace(self, place=None)


class Barriers:
    def __init__(self, func: FuncOp):
        self.func = func
        self.arrays = sources(func, (G.CreateNdDescOp, GS.CreateDescOp), (G.UpdateNdOffsetOp, GS.UpdateOffsetOp))
        self.divergent = subgroup_dependent(func)

    def access(self, op) -> list[Access]:
        """The global memory `op` reads or writes, through which descriptors."""
        found: dict[Value, bool] = {}  # descriptor -> written
        for effect, tdesc in memory_accesses(op):
            if effect.memory != SLM:
                found[tdesc] = found.get(tdesc, False) or effect.kind == WRITE
        out = []
        for tdesc, written in found.items():
            arrays = frozenset(a for a in accessed_arrays(self.arrays, tdesc) if not isinstance(a.type, SlmMemRefType))
            if arrays:
                read_too = written and any(e.kind != WRITE for e, t in memory_accesses(op) if t is tdesc)
                out.append(Access(tdesc, arrays, written, None if read_too else place_of(tdesc)))
        return out

    def order(self, block: Block, pending: list[Access]) -> list[Access]:
        """Inserts the barriers `block` needs after the accesses `pending`; the accesses still unordered after it."""
        for op in list(block.ops):
            if synchronizes(op):
                pending = []
            elif isinstance(op, (C.IfOp, C.WhileOp)) and any(v in self.divergent for v in control_operands(op)):
                inside = [a.unplaced() for region in op.regions for a in self.accesses(region.block)]
                if any(earlier.conflicts(access) for access in inside for earlier in pending):
                    block.insert_before(op, C.BarrierOp(loc=op.loc))
                    pending = []
                pending = joined(pending, inside)
            elif isinstance(op, (C.ForOp, C.WhileOp)):
                bodies = [region.block for region in op.regions]
                # the last iteration's offsets differ
                inner = joined(pending, [a.unplaced() for body in bodies for a in self.accesses(body)])
                for body in bodies:
                    inner = self.order(body, inner)
                pending = joined(pending, inner)
            elif op.regions:
                pending = joined(pending, *[self.order(region.block, list(pending)) for region in op.regions])
            accesses = self.access(op)
            if any(earlier.conflicts(access) for access in accesses for earlier in pending):
                block.insert_before(op, C.BarrierOp(loc=op.loc))
                pending = []
            pending = joined(pending, accesses)
        return pending

    def accesses(self, block: Block) -> list[Access]:
        """Every access in `block`, nested ones too: what the previous iteration of a loop left unordered."""
        return [a for op in walk(block) for a in self.access(op)]


def joined(*parts: list[Access]) -> list[Access]:
    """The accesses of `parts` in order, each once: what a loop or a branch hands on starts with what came before
    it, so appending copies would double the list at every loop and `if` in a row."""
    return list(dict.fromkeys(access for part in parts for access in part))


def subgroup_dependent(func: FuncOp) -> set[Value]:
    """The values computed from the subgroup id, or chosen by a branch or loop on such a value (a `break` on it
    sets a flag that an scf.if yields and a loop carries): they may differ between the subgroups of a workgroup.
    A load through a descriptor whose offsets do not depend on it counts as one value for all (an atomic's old
    values that one subgroup hands to the others through SLM at constant offsets, so a spin lock's loop is uniform);
    what another workgroup writes between two subgroups' loads is beyond the trace (docs/guide.md, section 4.5).
    Walked until nothing new is found, since a loop's carried values feed its earlier ops."""
    found: set[Value] = set()
    while True:
        size = len(found)
        for op in walk(func.body):
            if isinstance(op, C.SubgroupIdOp) or any(v in found for v in op.operands):
                found.update(op.results)
            if any(v in found for v in control_operands(op)):
                found.update(op.results)
                found.update(a for region in op.regions for a in region.block.args)
            found.update(target for source, target in region_flow(op) if source in found)
        if len(found) == size:
            return found


def region_flow(op) -> list[tuple[Value, Value]]:
    """(from, to) pairs of the values an op with regions passes along: yields to an scf.if's results, carried
    values into a loop's block arguments and results."""
    if isinstance(op, C.IfOp):
        return [pair for region in op.regions for pair in zip(region.block.terminator.operands, op.results)]
    if isinstance(op, C.ForOp):
        carried = op.body.args[1:]
        return [*zip(op.operands[3:], carried), *zip(op.body.terminator.operands, carried),
                *zip(op.body.terminator.operands, op.results)]
    if isinstance(op, C.WhileOp):
        passed = op.before.terminator.operands[1:]
        return [*zip(op.operands, op.before.args), *zip(op.after.terminator.operands, op.before.args),
                *zip(passed, op.after.args), *zip(passed, op.results)]
    return []


def insert_barriers(func: FuncOp) -> FuncOp:
    """Workgroup-level `func` with the barriers its program order needs between subgroups."""
    if workgroup_subgroups(func) > 1:
        Barriers(func).order(func.body, [])
    return func


def divergent_ops(block: Block, dependent: set[Value], inside: bool = False):
    """The ops of `block` (nested too) that run in a branch or loop whose condition or bounds depend on the
    subgroup id: some subgroups of a workgroup may not reach them."""
    for op in block.ops:
        if inside:
            yield op
        diverges = any(v in dependent for v in control_operands(op))
        for region in op.regions:
            yield from divergent_ops(region.block, dependent, inside or diverges)


def control_operands(op) -> list[Value]:
    """What decides whether or how often `op`'s regions run: an scf.if's condition, an scf.for's bounds and step,
    an scf.while's condition (not the values its iterations carry)."""
    if isinstance(op, C.IfOp):
        return op.operands[:1]
    if isinstance(op, C.WhileOp):
        return op.before.terminator.operands[:1]
    return op.operands[:3] if isinstance(op, C.ForOp) else []


def check_divergent_barriers(func: FuncOp) -> None:
    """A workgroup barrier that only some subgroups reach waits forever: a user's barrier() in a branch on
    subgroup_id(), or one an op there brings (a reduction across subgroups, a layout conversion, reshape or value
    shape op through SLM)."""
    for op in divergent_ops(func.body, subgroup_dependent(func)):
        if isinstance(op, C.BarrierOp):
            raise op.error("a workgroup barrier in a branch or loop on subgroup_id() waits forever for the subgroups "
                           "that do not take it: barrier() and ops that exchange data between subgroups (reductions "
                           "across them, layout conversions, reshapes that move elements between rows, slicing, cat, "
                           "flip) belong outside it. A `break`, `continue` or `return` on such a value makes the "
                           "rest of its loop or function such a branch: decide exits on values the whole workgroup "
                           "shares (program_id, arguments, scalars loaded from memory)",
                           "every subgroup reaches a workgroup barrier")


def check_named_barriers(func: FuncOp) -> None:
    """Subgroup-level `func`'s named barriers are ones SPIR-V's workgroup barriers refine (module docstring), or
    raises."""
    divergent = list(divergent_ops(func.body, subgroup_dependent(func)))
    for op in divergent:
        if isinstance(op, S.NbarrierWaitOp):
            raise NotImplementedError(
                f"{op.name} in a branch or loop on subgroup_id() in SPIR-V: a wait that only some subgroups run needs "
                "a hardware named barrier. SPIR-V here makes a wait a workgroup barrier, which every subgroup must "
                "reach; OpenCL's CPU device has no named barriers (it rejects SPIR-V's NamedBarrier capability) and "
                "runs a workgroup's subgroups one after another between barriers, so a wait spinning on a counter "
                "in shared local memory never returns. Wait outside the branch (arrives may stay in it); only the "
                "numpy interpreter runs it")
    everyone_arrives = {op.operands[0] for op in walk(func.body)
                        if type(op) is S.NbarrierArriveOp and op not in divergent}
    for op in walk(func.body):
        if isinstance(op, S.InitNbarrierOp) and op.result in everyone_arrives and (
                func.num_subgroups % op.participants):
            raise NotImplementedError(
                f"named barrier {op.id} of {op.participants} participants in SPIR-V, where all the workgroup's "
                f"{func.num_subgroups} subgroups arrive: they do not make whole phases, so a wait would need an "
                "arrive that comes after it, and SPIR-V here makes a wait a workgroup barrier (OpenCL's CPU device "
                "has no named barriers). Count a divisor of the subgroups; only the numpy interpreter runs it")
