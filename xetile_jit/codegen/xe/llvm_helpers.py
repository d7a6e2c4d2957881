"""LLVM helpers every definition of the Xe builtins shares (codegen/xe/gpu_definitions.py, codegen/xe/emulation.py,
codegen/xe/dpas_emulation.py, codegen/cpu/builtins.py): 32-bit constants, packed fields, declarations, and the
lane id (codegen/llvm/work_item_ids.py) and the sub-group's broadcast as the SPIR-V emitter maps them by name."""
from __future__ import annotations

from llvmlite import ir

from ..llvm import lane_slots, work_item_ids
from ..llvm.declarations import declared
from ..llvm.core import I32

SHUFFLE = "__spirv_SubgroupShuffleINTEL"
BROADCAST = "__spirv_GroupBroadcast"
SLOTS = lane_slots.SLOT  # a move through the lanes' slots in local memory (codegen/llvm/lane_slots.py)

# The hints of the CPU definitions' loops over a lane's components and over k: they stay loops. Those definitions run
# only on the OpenCL CPU runtime, whose compiler unrolled them at every inlined block load and store and every B a
# DPAS widens, which made most of a kernel's build (tutorial GEMM f16 6.2 against 3.0 s, causal attention 7.3 against
# 4.3 s on the AVX2 EPYC, docs/performance.md "Driver builds"); rolled, its vectorizer still makes each step one
# access or conversion across the lanes.
ROLLED = ("llvm.loop.unroll.disable",)
# The hint of a loop the OpenCL CPU compiler is to unroll (codegen/cpu/block_loops.unrolled says which).
UNROLLED = ("llvm.loop.unroll.enable",)


def i32(value: int) -> ir.Constant:
    return ir.Constant(I32, value)


def vector(element: ir.Type, count: int) -> ir.Type:
    """`count` components of `element`: the element itself for one (vectors of one component are scalars)."""
    return element if count == 1 else ir.VectorType(element, count)


def like(ty: ir.Type, element: ir.Type) -> ir.Type:
    """`element`, or a vector of it with as many components as `ty` has."""
    return ir.VectorType(element, ty.count) if isinstance(ty, ir.VectorType) else element


def constant(ty: ir.Type, value: int) -> ir.Constant:
    return ir.Constant(ty, [value] * ty.count) if isinstance(ty, ir.VectorType) else ir.Constant(ty, value)


def field(b: ir.IRBuilder, packed: ir.Value, index: int | ir.Value, bits: int) -> ir.Value:
    """Element `index` (an int, or an i32 value when `packed` is an i32) of `bits` bits in each component of
    `packed`, element 0 in the lowest bits."""
    element = like(packed.type, ir.IntType(bits))
    if element == packed.type:
        return packed
    shift = constant(packed.type, index * bits) if isinstance(index, int) else b.mul(index, i32(bits))
    return b.trunc(b.lshr(packed, shift), element)


def lane_id(b: ir.IRBuilder) -> ir.Value:
    """The lane's id in a builtin's definition: only the CPU ABIs define the builtins, and they lay a workgroup's
    sub-groups out as the rows of its local range (BuiltinAbi.subgroup_rows, codegen/llvm/work_item_ids.py)."""
    return work_item_ids.call(b, work_item_ids.LANE_ID)


def lane_index(b: ir.IRBuilder) -> ir.Value:
    """`lane_id` as i64, for addresses (work_item_ids.call says why not `lane_id` extended)."""
    return work_item_ids.call(b, work_item_ids.LANE_INDEX)


def moved(b: ir.IRBuilder, name: str, value: ir.Value, lane: ir.Value) -> ir.Value:
    """`value` of lane `lane` through the lane builtin `name` (SHUFFLE or BROADCAST) or the lanes' slots (SLOTS),
    one i32 move a 32-bit part of each component: the emitter maps the builtin by name, so a module has one overload
    of it, and i32 serves every width (narrower values widened, 64-bit ones in two halves, floats as their bits)."""
    if isinstance(value.type, ir.VectorType):
        result = ir.Constant(value.type, None)
        for index in range(value.type.count):
            component = moved(b, name, b.extract_element(value, i32(index)), lane)
            result = b.insert_element(result, component, i32(index))
        return result
    if name == SLOTS:
        words = [lane_slots.exchange(b, word, lane) for word in lane_slots.words_of(b, value)]
    else:
        builtin = declared(b.module, name, ir.FunctionType(I32, [I32, I32]))
        words = [b.call(builtin, [word, lane]) for word in lane_slots.words_of(b, value)]
    return lane_slots.value_of(b, words, value.type)
