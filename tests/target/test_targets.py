"""The Target contract (docs/DESIGN.md §3): one object per target, read by every stage. Its 2D block-IO limits
decide which messages the lowering may use, and a new target is one `Target(...)` entry."""
import re
from dataclasses import replace

import numpy as np
import pytest
from spirv_tools import cpu_queue

from test_passes import epilogue_case, gemm
from xetile_jit.target import targets
from xetile_jit.target.block_io import (BASE_RULE, BUILTIN_PITCH_RULE, EXTENT_RULE, PITCH_RULE, SLICE_RULE, WIDTH_RULE,
                                        BlockIO, broken_surface_rule, surface_rule)
from xetile_jit.target.builtin_abi import EMULATED
from xetile_jit.target.targets import Target, dpas_shapes, get_target
from xetile_jit.errors import LaunchError
from xetile_jit.ir.types import float32


def block_messages(llir: str, kind: str) -> set[str]:
    """The 2D block messages (by vISA shape) the LLVM IR defines for `kind` ("load", "store", "prefetch")."""
    return set(re.findall(rf"define internal [^@]*@\"?xe_block2d_{kind}_(d\w+)\"?\(", llir))


def test_block_io_rules_name_the_limit():
    io = BlockIO()
    assert io.load_rule(16, 32, 16) is None and io.load_rule(16, 8, 16, 2) is None
    assert io.load_rule(16, 64, 16) == "a 2D block load is at most 32 rows high, not 64"
    assert io.load_rule(32, 8, 16, 4) == "32-bit block loads take (1, 2) blocks, not 4"
    assert io.load_rule(16, 16, 16, transpose=True) == "transposed loads are single blocks of (32,)-bit data"
    assert io.store_rule(32, 16, 16) == "a 2D block store is at most 8 rows high, not 16"
    assert io.store_rule(32, 8, 32) == "a 2D block is 4 to 64 bytes wide (array length included), not 128"


def test_surface_rules_name_the_first_one_broken():
    """A 16x16 f32 surface with a 64-byte pitch meets every rule; each change breaks one, the extents before the
    hardware's layout rules, and only the extents matter to builtins that address any layout (the `cpu` target's)."""
    assert broken_surface_rule(16, 64, 64, 4, True, ()) is None
    assert broken_surface_rule(16, 64, 64, 4, False, ()) == BASE_RULE
    assert broken_surface_rule(16, 60, 64, 4, True, ()) == WIDTH_RULE
    assert broken_surface_rule(16, 64, 72, 4, True, ()) == PITCH_RULE
    assert broken_surface_rule(16, 64, 64, 4, True, (1040,)) == SLICE_RULE
    assert broken_surface_rule(16, 2**24 + 64, 2**24 + 64, 4, False, ()) == EXTENT_RULE
    assert broken_surface_rule(2, 64, 2**29 + 64, 4, False, ()) == BUILTIN_PITCH_RULE
    assert (surface_rule(PITCH_RULE), surface_rule(PITCH_RULE, any_layout=True)) == (PITCH_RULE, None)
    assert surface_rule(BUILTIN_PITCH_RULE, any_layout=True) == BUILTIN_PITCH_RULE


def test_unknown_target_is_a_launch_error_listing_the_targets():
    with pytest.raises(LaunchError, match=r"unknown target 'xe9'; targets: numpy, xe-hpc, xe2, xe3, xe-hpg, cpu, "
                       r"xe-emulated"):
        get_target("xe9")


def test_a_new_target_is_one_entry_and_its_limits_decide_the_messages(monkeypatch):
    """A made-up sub-group 16 target whose stores are at most 4 rows high and loads 4 rows: the GEMM compiles for it
    with no 8- or 16-row block messages (the element path does those), runs on opencl:cpu, and gives the same
    numbers."""
    made_up = Target("xe-test", 16, dpas_shapes(16), BlockIO(max_load_rows=4, max_store_rows=4), abi=EMULATED)
    monkeypatch.setitem(targets.TARGETS, made_up.name, made_up)
    rng = np.random.default_rng(0)
    m, n, k = 64, 64, 32
    a, b = (rng.standard_normal(s).astype(np.float16) for s in ((m, k), (k, n)))
    args = dict(M=m, N=n, K=k, BM=32, BN=32, BK=16, sg_layout=[2, 2], sg_data=[16, 16])
    default = gemm.warmup(a, b, np.zeros((m, n), np.float32), target="xe-emulated", **args)
    compiled = gemm.warmup(a, b, np.zeros((m, n), np.float32), target="xe-test", **args)
    assert "d32_1x16x8nn" in block_messages(default.asm["llir"], "store")
    assert block_messages(compiled.asm["llir"], "store") == set()
    assert "d16_1x16x16nn" in block_messages(default.asm["llir"], "load")  # A's 16x16 piece in one message
    assert block_messages(compiled.asm["llir"], "load") == set()
    c = np.zeros((m, n), np.float32)
    compiled.launch_on(cpu_queue(), (2, 2, 1), dict(a=a, b=b, c=c, M=m, N=n, K=k))
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)


def test_targets_differ_only_in_their_entries():
    hpc, xe2 = get_target("xe-hpc"), get_target("xe2")
    assert replace(xe2, name="xe-hpc", ocloc_device="pvc", iga_platform="12p72") == hpc
    cpu = get_target("cpu").abi
    assert cpu.defines_builtins and cpu.runs_on_cpu and not hpc.abi.defines_builtins and not hpc.abi.runs_on_cpu
    assert get_target("xe-hpg").block_io is None
    assert replace(get_target("cpu"), name="xe-emulated", abi=EMULATED, block_io=BlockIO(),
                   largest_loads=True, whole_row_bytes=0, row_subgroups=False, one_row_rolled_blocks=False,
                   few_registers_row_columns=0, group_reductions=False,
                   unvectorized_fallback=None) == get_target("xe-emulated")


def test_tf32_dpas_is_in_the_sub_group_16_targets_tables():
    """tf32 DPAS is M 8, N 16, K 8 (A [8, 8] on lanes [2, 8]: even rows on lanes 0-7, odd rows on 8-15); DG2 has
    none: there input_precision "tf32" is the f32 multiply-adds' blocks (K the sub-group size, lane k holding A's
    column k)."""
    for name in ("xe-hpc", "xe2", "xe3", "cpu", "xe-emulated"):
        target = get_target(name)
        assert target.dpas_kind(float32, "tf32") == "tf32" and target.dpas_kind(float32) == "f32"
        assert target.dpas_blocks(float32, "tf32") == ((8, 8), (8, 16), (8, 16))
        assert target.lane_fields((8, 8)) == ((2, 8), (1, 1))
    hpg = get_target("xe-hpg")
    assert "tf32" not in hpg.dpas and hpg.dpas_kind(float32, "tf32") == "f32"
    assert hpg.dpas_blocks(float32, "tf32") == ((8, 8), (8, 8), (8, 8)) and hpg.lane_fields((8, 8)) == ((1, 8), (1, 1))


def test_the_builtin_abi_is_chosen_per_target_and_by_xetile_xe_abi(monkeypatch):
    """Xe-HPC and newer default to the 2025 SPIR-V extensions; XETILE_XE_ABI=legacy asks for the 2022 ABI, which
    changes the SPIR-V and so the cache key; the CPU targets and xe-hpg (no 2D block IO) keep their own."""
    assert [get_target(name).abi.name for name in ("xe-hpc", "xe2", "xe3", "xe-hpg", "cpu", "xe-emulated")] == [
        "spirv", "spirv", "spirv", "legacy", "vector", "emulated"]
    assert get_target("xe-hpc", "legacy").abi.name == "legacy" and get_target("cpu", "legacy").abi.name == "vector"
    a, b, c = (np.zeros((64, 64), t) for t in (np.float16, np.float16, np.float32))
    args = dict(BM=64, BN=64, BK=32, LA=None, LB=None, sg_layout=[2, 2], sg_data=[32, 32], target="xe-hpc")
    spirv = gemm.warmup(a, b, c, 64, 64, 64, **args).asm["llir"]
    monkeypatch.setenv("XETILE_XE_ABI", "legacy")
    legacy = gemm.warmup(a, b, c, 64, 64, 64, **args).asm["llir"]
    assert "__spirv_Subgroup2DBlockLoadINTEL" in spirv and "lsc_load_block2d" not in spirv
    assert "__spirv_Subgroup2DBlockLoadINTEL" not in legacy and "lsc_load_block2d" in legacy
    monkeypatch.setenv("XETILE_XE_ABI", "vISA")
    with pytest.raises(LaunchError, match=r"XETILE_XE_ABI='vISA': the builtin ABIs are spirv, legacy"):
        gemm.warmup(a, b, c, 64, 64, 64, **args)


def lane_vector_code(llir: str) -> tuple[list[str], list[str]]:
    """The kernel function's phis of float vectors and its element-wise float vector ops, in `llir`."""
    kernel = re.search(r"define spir_kernel.*?\n}\n", llir, re.S).group(0)
    return (re.findall(r"phi\s+<\d+ x float>", kernel),
            re.findall(r"= (?:fadd|fcmp \w+|select\s+<\d+ x i1>,) <\d+ x float>", kernel))


@pytest.mark.parametrize("target, components", [("cpu", True), ("xe-emulated", True), ("xe-hpc", False)])
def test_the_cpu_targets_compute_a_lanes_vectors_as_components(rng, target, components):
    """Target.lane_scalars: a GEMM whose accumulator's blocks are 8 components a lane, a bias added and a ReLU after
    its loop. On the CPU targets the loop carries a phi a component and the epilogue is scalar code (their compiler
    kept a vector value lane after lane in memory and transposed it around its uses); GPUs keep the vectors.
    test_passes runs the kernel against numpy on every level and target."""
    kernel, args, constexprs, _ = epilogue_case(rng)
    phis, ops = lane_vector_code(kernel.warmup(*args, **constexprs, target=target).asm["llir"])
    assert (phis == [] and ops == []) if components else (len(phis) == 2 and ops != [])
