"""codegen/llvm/work_item_ids.py: on the CPU ABIs a workgroup's sub-groups are the rows of its local range, and a
kernel reads its lane and sub-group ids as local x and y where it calls no sub-group built-in (for which the OpenCL
CPU compiler builds a second, masked copy of it: its lanes exchange no values, or through their slots,
codegen/llvm/lane_slots.py); a kernel that exchanges lanes by sub-group built-ins reads the sub-group built-ins, as
every kernel does where the CPU has AVX-512, and every kernel that runs no DPAS with AVX2
(CpuFeatures.subgroup_builtin_ids). IR in / IR out for `define`, then kernels through the whole path, their code for
an AVX2 CPU and for AVX-512."""
from __future__ import annotations

import re

import numpy as np
import pytest
from llvmlite import ir

import xetile_jit as xetile
from conftest import AVX2, AVX512, built_for_cpu
from xetile_jit import Layout
from xetile_jit.codegen.llvm import work_item_ids
from xetile_jit.compiler.driver import CompiledArtifact

I32 = ir.IntType(32)
SUBGROUP_BUILTIN = re.compile(r'declare [^@]*@"?__spirv_(Group|Subgroup|BuiltInSubgroup|BuiltInNumSubgroups)')
LANE_EXCHANGE = re.compile(r'declare [^@]*@"?__spirv_(Group|Subgroup)')  # the sub-group built-ins but the ids


def module_calling_ids(exchange: str | None = None) -> ir.Module:
    """A kernel storing its lane and sub-group ids, and calling `exchange` (a declared i32 function of the lane
    id) when given."""
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I32.as_pointer()]), "k")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    lane, subgroup = (work_item_ids.call(b, name) for name in (work_item_ids.LANE_ID, work_item_ids.SUBGROUP_ID))
    if exchange is not None:
        lane = b.call(ir.Function(module, ir.FunctionType(I32, [I32]), exchange), [lane])
    b.store(b.add(lane, subgroup), fn.args[0])
    b.ret_void()
    return module


def body(module: ir.Module, name: str) -> str:
    """The text of `name`'s definition, its instructions without their value names."""
    text = str(module.get_global(name))
    return re.sub(r'%"?[\w.]+"? = ', "", text[text.index("{"):])


def test_ids_of_a_module_without_lane_exchanges_are_local_x_and_y():
    module = module_calling_ids()
    work_item_ids.define(module, builtin_ids=False)
    assert body(module, work_item_ids.LANE_ID).split() == (
        '{ entry: call i64 @"__spirv_BuiltInLocalInvocationId"(i32 0) trunc i64 %".2" to i32 ret i32 %".3" }').split()
    assert '@"__spirv_BuiltInLocalInvocationId"(i32 1)' in body(module, work_item_ids.SUBGROUP_ID)
    for name in (work_item_ids.LANE_ID, work_item_ids.SUBGROUP_ID):
        function = module.get_global(name)
        assert function.linkage == "internal" and "alwaysinline" in function.attributes
    assert not SUBGROUP_BUILTIN.search(str(module))


@pytest.mark.parametrize("exchange", ["__spirv_GroupBroadcast", "__spirv_SubgroupShuffleINTEL",
                                      "__spirv_GroupNonUniformFAdd.float"])
def test_ids_of_a_module_that_exchanges_lanes_are_the_sub_group_builtins(exchange):
    module = module_calling_ids(exchange)
    work_item_ids.define(module, builtin_ids=False)
    assert '@"__spirv_BuiltInSubgroupLocalInvocationId"()' in body(module, work_item_ids.LANE_ID)
    assert '@"__spirv_BuiltInSubgroupId"()' in body(module, work_item_ids.SUBGROUP_ID)
    assert "LocalInvocationId" not in str(module).replace("SubgroupLocalInvocationId", "")


def test_ids_of_every_module_are_the_sub_group_builtins_where_the_cpu_asks_for_them():
    module = module_calling_ids()
    work_item_ids.define(module, builtin_ids=True)
    assert '@"__spirv_BuiltInSubgroupLocalInvocationId"()' in body(module, work_item_ids.LANE_ID)
    assert '@"__spirv_BuiltInSubgroupId"()' in body(module, work_item_ids.SUBGROUP_ID)


@pytest.mark.parametrize("builtin_ids, expected", [
    (False, '{ entry: call i64 @"__spirv_BuiltInLocalInvocationId"(i32 0) ret i64 %".2" }'),
    (True, '{ entry: call i32 @"__spirv_BuiltInSubgroupLocalInvocationId"() zext i32 %".2" to i64 ret i64 %".3" }')],
    ids=["local", "builtins"])
def test_the_lane_index_is_the_local_x_itself_or_the_lane_builtin_extended(builtin_ids, expected):
    """LANE_INDEX, the lane as i64 for addresses: the local x as the built-in gives it, with no truncation to i32
    (the OpenCL CPU compiler then took an address stepping by it as any lane's)."""
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.IntType(64).as_pointer()]), "k")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.store(work_item_ids.call(b, work_item_ids.LANE_INDEX), fn.args[0])
    b.ret_void()
    work_item_ids.define(module, builtin_ids=builtin_ids)
    assert body(module, work_item_ids.LANE_INDEX).split() == expected.split()


def test_a_module_that_calls_no_id_gets_no_definition():
    module = ir.Module()
    work_item_ids.define(module, builtin_ids=False)
    assert not module.functions


@xetile.kernel
def shifted_rows(x, y):
    """4 subgroups of 16 x 16: each lane's addresses come from its lane and subgroup ids."""
    layout = Layout([4, 1], [16, 16])
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [64, 16], layout=layout))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [64, 16], layout=layout), v + 1.0)


@xetile.kernel
def row_sums(x, y):
    """The same tile's row sums: a reduction across each subgroup's lanes."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [64, 16], layout=Layout([4, 1], [16, 16])))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [64, 1]), xetile.tile_reduce("add", v, [1]))


@xetile.kernel
def tile_product(a, b, c):
    """C = A @ B of one 32x32x32 f16 tile on 2x2 subgroups: a kernel that runs DPAS ops and exchanges no lanes."""
    layout = Layout([2, 2], [16, 16])
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [32, 32]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [32, 32]))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [32, 32], layout=layout), xetile.tile_mma(va, vb, layout=layout))


def run_shifted_rows(rng) -> str:
    x = rng.standard_normal((64, 16), dtype=np.float32)
    y = np.zeros_like(x)
    shifted_rows[(1,)](x, y, device="opencl:cpu")
    np.testing.assert_array_equal(y, x + 1)
    (plan,) = shifted_rows.cache.plans.values()
    assert plan.compiled.artifact.local_size == (16, 4, 1) and plan.compiled.workgroup_size == 64
    return plan.compiled.asm["llir"]


def run_tile_product(rng) -> str:
    a, b = (rng.standard_normal((32, 32)).astype(np.float16) for _ in range(2))
    c = np.zeros((32, 32), np.float32)
    tile_product[(1,)](a, b, c, device="opencl:cpu")
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)
    (plan,) = tile_product.cache.plans.values()
    assert plan.compiled.artifact.local_size == (16, 4, 1)
    return plan.compiled.asm["llir"]


@pytest.mark.parametrize("run, kernel, cpu, builtin_ids", [
    (run_shifted_rows, shifted_rows, AVX2, True), (run_shifted_rows, shifted_rows, AVX512, True),
    (run_tile_product, tile_product, AVX2, False), (run_tile_product, tile_product, AVX512, True)],
    ids=["rows-avx2", "rows-avx512", "mma-avx2", "mma-avx512"])
def test_a_kernel_that_exchanges_no_lanes_reads_local_ids_only_where_it_multiplies_with_avx2(rng, run, kernel, cpu,
                                                                                             builtin_ids, monkeypatch):
    """Neither kernel exchanges lanes; both run in rows, and read their ids by the sub-group built-ins, which are
    then their only ones, but for the DPAS kernel on AVX2, whose ids are local x and y and which calls none."""
    built_for_cpu(monkeypatch, kernel, cpu)
    llir = run(rng)
    lane = body_text(llir, work_item_ids.LANE_ID)
    assert ("SubgroupLocalInvocationId" in lane) == bool(SUBGROUP_BUILTIN.search(llir)) == builtin_ids
    assert ("LocalInvocationId\"(i32 0)" in lane) != builtin_ids and not LANE_EXCHANGE.search(llir)


@xetile.kernel
def split_row_sums(x, y):
    """Row sums of rows split over 4 subgroups: across each subgroup's lanes, then through SLM after a barrier."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 256], layout=Layout([1, 4], [16, 64])))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [16, 1]), xetile.tile_reduce("add", v, [1]))


@pytest.mark.parametrize("kernel, rows, columns, slots", [(row_sums, 64, 16, True), (split_row_sums, 16, 256, False)],
                         ids=["row_sums", "split_row_sums"])
def test_row_sums_run_in_rows_their_lanes_exchanging_values_through_slots_or_by_builtins(rng, kernel, rows, columns,
                                                                                        slots, monkeypatch):
    """row_sums' lanes exchange values through their slots on an AVX2 CPU: no sub-group built-in but its ids. The
    row sums split over subgroups wait at a barrier, so their lanes exchange values by the sub-group built-ins
    (lane_slots.lockstep_kernel). Both in the same rows of lanes, their ids the sub-group built-ins."""
    built_for_cpu(monkeypatch, kernel, AVX2)
    x = rng.standard_normal((rows, columns), dtype=np.float32)
    y = np.zeros((rows, 1), np.float32)
    kernel[(1,)](x, y, device="opencl:cpu")
    np.testing.assert_allclose(y[:, 0], x.sum(axis=1), rtol=1e-4, atol=1e-4)
    (plan,) = kernel.cache.plans.values()
    assert plan.compiled.artifact.local_size == (16, 4, 1)
    llir = plan.compiled.asm["llir"]
    assert ('@"xetile.lane_slot"(' in llir) == slots and bool(LANE_EXCHANGE.search(llir)) != slots
    assert "SubgroupLocalInvocationId" in body_text(llir, work_item_ids.LANE_ID)


def body_text(llir: str, name: str) -> str:
    """The body of `name`'s definition in the module's text."""
    (found,) = re.findall(rf'define [^\n]*@"{re.escape(name)}"\(\)[^{{]*\{{(.*?)\}}', llir, re.S)
    return found


def test_gpu_kernels_read_the_sub_group_builtins_directly():
    x = np.zeros((64, 16), np.float32)
    llir = shifted_rows.warmup(x, x.copy(), target="xe-hpc").asm["llir"]
    assert "xetile." not in llir and '@"__spirv_BuiltInSubgroupId"()' in llir


def test_the_local_range_is_rows_of_lanes_where_the_abi_lays_subgroups_out_so():
    rows = CompiledArtifact("k", {}, frozenset(), num_subgroups=4, lanes=16, subgroup_rows=True)
    assert rows.local_size == (16, 4, 1)
    assert CompiledArtifact("k", {}, frozenset(), num_subgroups=4, lanes=16).local_size == (64, 1, 1)
    assert CompiledArtifact.from_entry(dict(rows.to_entry(), spirv=b"\x03\x02\x23\x07")).local_size == (16, 4, 1)
