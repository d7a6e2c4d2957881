"""codegen/llvm/lane_slots.py: on the CPU ABIs a value moves between lanes by a store to the lane's own slot in
the workgroup's local memory and a load of the other lane's, each sub-group with slots of its own. IR in / IR out for
`exchange`, `stage` and `define`, then the words a value travels as."""
from __future__ import annotations

import re

import pytest
from llvmlite import ir

from xetile_jit.codegen.llvm import lane_slots, work_item_ids

I32 = ir.IntType(32)


def kernel(module: ir.Module) -> tuple[ir.Function, ir.IRBuilder]:
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I32.as_pointer(), I32]), "k")
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def instructions(value) -> list[str]:
    """A function's or a block's instructions, without their value names."""
    text = str(value)
    return [re.sub(r'%"?[\w.]+"? = ', "", line).strip() for line in text[text.index("{") + 1:].splitlines()
            if line.strip() and not line.strip().endswith(":") and line.strip() != "}"]


def test_a_value_moves_by_a_store_to_the_lanes_slot_and_a_load_of_the_other_lanes():
    module = ir.Module()
    fn, b = kernel(module)
    b.store(lane_slots.exchange(b, ir.Constant(I32, 7), fn.args[1]), fn.args[0])
    b.ret_void()
    # this lane's slot: lane 0's moved by the lane's index as i64 (work_item_ids.LANE_INDEX)
    assert instructions(fn) == [
        'call i32 addrspace(3)* @"xetile.lane_slot"(i32 0, i32 0)',
        'call i64 @"xetile.lane_index"()',
        'getelementptr i32, i32 addrspace(3)* %".4", i64 %".5"',
        'store i32 7, i32 addrspace(3)* %".6"',
        'call i32 addrspace(3)* @"xetile.lane_slot"(i32 0, i32 %".2")',
        'load i32, i32 addrspace(3)* %".8"',
        'store i32 %".9", i32* %".1"',
        'ret void']


def test_the_slots_are_the_sub_groups_words_of_lanes_sized_by_the_largest_staging():
    module = ir.Module()
    fn, b = kernel(module)
    lane_slots.stage(b, [ir.Constant(I32, w) for w in range(3)])
    b.store(b.load(lane_slots.slot(b, ir.Constant(I32, 2), fn.args[1])), fn.args[0])
    b.ret_void()
    lane_slots.define(module, 4, 16)
    (slots,) = [g for g in module.global_values if isinstance(g, ir.GlobalVariable)]
    assert str(slots.value_type) == "[192 x i32]" and slots.addrspace == 3 and slots.linkage == "internal"
    slot = module.get_global(lane_slots.SLOT)
    assert slot.linkage == "internal" and "alwaysinline" in slot.attributes
    # (sub-group * 3 words + word) * 16 lanes + lane
    assert instructions(slot) == [
        f'call i32 @"{work_item_ids.SUBGROUP_ID}"()',
        'mul i32 %".4", 3', 'add i32 %".5", %".1"', 'mul i32 %".6", 16', 'add i32 %".7", %".2"',
        f'getelementptr [192 x i32], [192 x i32] addrspace(3)* @"{slots.name}", i32 0, i32 %".8"',
        'ret i32 addrspace(3)* %".9"']
    assert sum(line.startswith("store") for line in instructions(fn)) == 3 + 1


def test_a_module_that_moves_no_lane_gets_no_slots():
    module = ir.Module()
    fn, b = kernel(module)
    b.ret_void()
    lane_slots.define(module, 4, 16)
    assert list(module.global_values) == [fn]


@pytest.mark.parametrize("ty, words", [(ir.IntType(1), 1), (ir.IntType(8), 1), (ir.HalfType(), 1), (I32, 1),
                                       (ir.FloatType(), 1), (ir.IntType(64), 2), (ir.DoubleType(), 2)])
def test_a_value_travels_as_i32_words_and_comes_back_as_its_type(ty, words):
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ty, [ty]), "roundtrip")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    parts = lane_slots.words_of(b, fn.args[0])
    assert len(parts) == words and all(part.type == I32 for part in parts)
    back = lane_slots.value_of(b, parts, ty)
    assert back.type == ty
    b.ret(back)
