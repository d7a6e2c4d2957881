"""Lane exchanges through the workgroup's local memory, on the ABIs whose sub-group runs as one vector
(BuiltinAbi.lockstep_lanes: the CPU ABIs), in the kernels `lockstep_kernel` admits.

The OpenCL CPU compiler runs a sub-group of the kernel's required size (SPIR-V `SubgroupSize`) as one vector of its
loop over a workgroup's work-items, or does not build the kernel (with its vectorizer off,
CL_CONFIG_CPU_VECTORIZER_MODE=1, the tutorials' attention fails to build, with and without sub-group built-ins). An
instruction is then done for every lane before the next one starts, so a value moves from lane to lane by a store to
the lane's own slot and a load of the other lane's, with neither a sub-group built-in nor a barrier. A kernel that
calls a sub-group built-in gets a second, masked copy from that compiler (work_item_ids.py), about 40% of the build
of a kernel that exchanges lanes: tutorial 6's head-dim-128 attention 1.83-1.91 s with its broadcasts and reductions
as built-ins, 1.11-1.15 s with them in slots, though it runs 3-10% slower so (docs/performance.md "Driver builds").

Each sub-group has `words` words of slots, each word one i32 a lane, in one module-level Workgroup array: a `stage`d
word stays the caller's until the next `stage` (a run of loads of a staged A); `exchange` moves one word through word
0. The lowering calls `slot`, a function of the module whose body `define` writes once the module is lowered and the
words it staged are known; it is inlined (SPIR-V `FunctionControl Inline`).
"""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from llvmlite import ir

from ...ir.core import FuncOp, walk
from ...ir.core_ops import BarrierOp
from ...ir.simt_ops import SHUFFLED, LaneGatherOp, gather_plan
from ..scalar_bits import scalar_bits
from . import work_item_ids
from .declarations import declared

if TYPE_CHECKING:
    from ...target.targets import Target

SLOT = "xetile.lane_slot"
I32 = ir.IntType(32)
SHARED = 3  # the LLVM address space of Workgroup memory (core.SHARED, which imports this module)
SLOT_TYPE = ir.FunctionType(ir.PointerType(I32, SHARED), [I32, I32])
_words: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> words a sub-group's slots hold


def through_slots(target: Target | None, func: FuncOp) -> bool:
    """Whether the lanes of the work-item-level kernel `func` exchange values through their slots on `target`:
    where its ABI runs sub-groups in lockstep (BuiltinAbi.lockstep_lanes), in a kernel `lockstep_kernel` admits."""
    return target is not None and target.abi.lockstep_lanes and lockstep_kernel(func)


def lockstep_kernel(func: FuncOp) -> bool:
    """Whether the work-item-level kernel `func` moves its lanes' values through their slots: not where it waits at
    a workgroup barrier, nor where a lane_gather reads lanes that differ across the lanes. With a barrier and its
    ids as local x and y, the tests' GEMMs of 2x2 subgroups with a reducing epilogue, a top-k of 4 subgroups and two
    tile_mma of their own layouts came out wrong (right with the sub-group built-ins as ids, which bring the masked
    copy back, and with it the driver's own reductions are shorter: the test suite's slowest GEMM built in 9.9 s
    with slots against 6.9). There a value read from another lane's slot before a barrier and used after it came
    back as lane 0's (rows 8-11 of each subgroup's C, stored after that epilogue's second barrier, took row 0's
    maximum; the row sums, taken before it, were right), also with each slot word written once and a sub-group
    barrier between the stores and the loads; the 8x4 GEMM with the same epilogue came out right and built in
    4.9-5.6 s against 6.3-6.8 (AVX2 EPYC). A gather from differing lanes is a gather of memory, which the driver
    built slower than its shuffle (the tests' column-major kernel 4.1-4.3 s against 3.2). Those kernels keep the
    sub-group built-ins."""
    for op in walk(func.body):
        if isinstance(op, BarrierOp):
            return False
        if isinstance(op, LaneGatherOp) and any(
                source == SHUFFLED for row in gather_plan(op.source_lanes, op.components) for _, source in row):
            return False
    return True


def reserve(module: ir.Module, words: int) -> None:
    """Makes the sub-group's slots hold at least `words` words."""
    _words[module] = max(_words.get(module, 1), words)


def slot(b: ir.IRBuilder, word: ir.Value, lane: ir.Value) -> ir.Value:
    """A pointer to word `word`'s slot of lane `lane` (i32 values) in this sub-group's slots."""
    reserve(b.module, 1)
    return b.call(declared(b.module, SLOT, SLOT_TYPE), [word, lane])


def own_slot(b: ir.IRBuilder, word: int) -> ir.Value:
    """A pointer to word `word`'s slot of this lane: lane 0's moved by the lane's index (work_item_ids.LANE_INDEX,
    whose step from lane to lane the driver sees: its stores are one vector store, not one a lane)."""
    lane_0 = slot(b, ir.Constant(I32, word), ir.Constant(I32, 0))
    return b.gep(lane_0, [work_item_ids.call(b, work_item_ids.LANE_INDEX)])


def exchange(b: ir.IRBuilder, word: ir.Value, lane: ir.Value) -> ir.Value:
    """The i32 `word` of lane `lane`: this lane's stored in its slot of word 0, the other's loaded."""
    b.store(word, own_slot(b, 0))
    return b.load(slot(b, ir.Constant(I32, 0), lane))


def stage(b: ir.IRBuilder, words: list[ir.Value]) -> None:
    """This lane's `words` (i32) in its slots of words 0, 1, ..., for loads of any lane's (`slot`)."""
    reserve(b.module, len(words))
    for w, word in enumerate(words):
        b.store(word, own_slot(b, w))


def words_of(b: ir.IRBuilder, value: ir.Value) -> list[ir.Value]:
    """A scalar `value` as the i32 words a lane moves: narrower values widened, 64-bit ones in two halves, floats
    as their bits (`value_of` turns them back)."""
    ty = value.type
    bits = scalar_bits(ty)
    raw = value if isinstance(ty, ir.IntType) else b.bitcast(value, ir.IntType(bits))
    if bits == 64:
        return [b.trunc(raw, I32), b.trunc(b.lshr(raw, ir.Constant(raw.type, 32)), I32)]
    return [b.zext(raw, I32) if bits < 32 else raw]


def value_of(b: ir.IRBuilder, words: list[ir.Value], ty: ir.Type) -> ir.Value:
    """The scalar of type `ty` whose `words_of` are `words`."""
    bits = scalar_bits(ty)
    if bits == 64:
        wide = ir.IntType(64)
        raw = b.or_(b.zext(words[0], wide), b.shl(b.zext(words[1], wide), ir.Constant(wide, 32)))
    else:
        raw = b.trunc(words[0], ir.IntType(bits)) if bits < 32 else words[0]
    return b.bitcast(raw, ty) if raw.type != ty else raw


def define(module: ir.Module, subgroups: int, lanes: int) -> None:
    """Writes the body of `slot` where the module calls it: the module's slots are `subgroups` x words x `lanes`
    i32, sub-group by sub-group."""
    fn = module.globals.get(SLOT)
    if fn is None:
        return
    words = _words.pop(module)
    slots = ir.GlobalVariable(module, ir.ArrayType(I32, subgroups * words * lanes), module.get_unique_name("lanes"),
                              addrspace=SHARED)
    slots.linkage = "internal"
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    word, lane = fn.args
    subgroup = work_item_ids.call(b, work_item_ids.SUBGROUP_ID)
    index = b.add(b.mul(b.add(b.mul(subgroup, ir.Constant(I32, words)), word), ir.Constant(I32, lanes)), lane)
    b.ret(b.gep(slots, [ir.Constant(I32, 0), index]))
