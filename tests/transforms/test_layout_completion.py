"""Layout completion: inst_data and the lane fields decide blocking and lane distribution. A user's inst_data is
honoured (the load messages follow it, a convert_layout regroups in registers for DPAS) or rejected naming the rule."""
import re
from collections import Counter

import numpy as np
import pytest
from conftest import AVX2, AVX512, built_for_cpu, rand
from spirv_tools import cpu_queue
from conftest import tutorial
from test_passes import gemm, run_func

import xetile_jit as xetile
from xetile_jit.codegen.llvm import lane_slots
from xetile_jit.codegen.xe.llvm_helpers import BROADCAST, SHUFFLE
from xetile_jit.toolchain import ocloc
from xetile_jit.toolchain.isa_stats import block_messages, dpas_count, spills
from xetile_jit.target.targets import get_target
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir.core import walk
from xetile_jit.ir.printer import print_func
from xetile_jit.ir.xetile_ops import ConvertLayoutOp, StoreTileOp


SMALL = dict(BM=64, BN=64, BK=32, sg_layout=[2, 2], sg_data=[32, 32])


def small_args(rng, k=64):
    a, b = rand(rng, (128, k), np.float16), rand(rng, (k, 128), np.float16)
    return a, b, np.zeros((128, 128), np.float32), k


def layouts(inst_a=None, inst_b=None, **lanes):
    return dict(LA=xetile.Layout([2, 2], [32, 32], inst_data=inst_a, **lanes),
                LB=xetile.Layout([2, 2], [32, 32], inst_data=inst_b))


def block_loads(llir: str) -> list[str]:
    """The 2D block load messages the kernel calls, by vISA shape, once per call site (not the `cpu` target's
    calls of a message's border path)."""
    return [m for m in re.findall(r"call [^@]*@\"?xe_block2d_load_(d\w+)\"?\(", llir) if not m.endswith("_border")]


def test_default_completion_loads_the_largest_messages(rng):
    """Per subgroup and K step on an Xe target (here its bit-exact emulation), A's 32x32 piece is one message of two
    32x16 blocks and B's 32x32 one VNNI message of two 32x16 blocks (8 and 4 messages of the DPAS blocks before);
    each lane keeps DPAS's lane fields over the array, so the DPAS blocks are runs of its components; the numbers
    do not change."""
    a, b, c, k = small_args(rng)
    compiled = gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(), target="xe-emulated")
    assert block_loads(compiled.asm["llir"]) == ["d16_2x16x32nn", "d16_2x16x32nt"]
    a_load, b_load = [line for line in compiled.asm["xegpu"].splitlines() if "xegpu.load_nd" in line]
    assert "inst_data = [32, 32], lane_layout = [1, 16], lane_data = [1, 1]" in a_load
    assert "inst_data = [32, 32], lane_layout = [1, 16], lane_data = [2, 1]" in b_load
    gemm[(2, 2)](a, b, c, 128, 128, k, **SMALL, **layouts(), target="xe-emulated", device=cpu_queue())
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype, loads", [("bfloat16", ["d16_2x16x32nn", "d16_2x16x32nt"]),
                                          ("int8", ["d8_2x16x32nt", "d8_2x32x32nn"])])
def test_largest_messages_of_other_dtypes_give_exact_numbers(rng, dtype, loads):
    """bf16 as f16; int8 (K step 64, i32 accumulator): A's 32x64 bytes in one message of two 32x32 blocks, B's 64x32
    in two VNNI-transform messages of two 32x16 blocks (four K rows a lane's word, as DPAS takes B). Small integers:
    every sum is exact."""
    import ml_dtypes
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.int8
    acc = xetile.int32 if dtype == "int8" else xetile.float32
    a, b = (rng.integers(-4, 4, shape).astype(np_dtype) for shape in ((128, 128), (128, 128)))
    c = np.zeros((128, 128), acc.np_dtype)
    kwargs = dict(**SMALL, **layouts(), ACC=acc, target="xe-emulated") | dict(BK=64 if dtype == "int8" else 32)
    if dtype == "int8":
        kwargs.update(LA=xetile.Layout([2, 2], [32, 64]), LB=xetile.Layout([2, 2], [64, 32]))
    assert sorted(set(block_loads(gemm.warmup(a, b, c, 128, 128, 128, **kwargs).asm["llir"]))) == loads
    gemm[(2, 2)](a, b, c, 128, 128, 128, **kwargs, device=cpu_queue())
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64))


def test_cpu_target_loads_dpas_blocks(rng):
    """The `cpu` target asks for DPAS blocks (Target.largest_loads): A in 8 messages of 8x16, B in 4 VNNI 16x16."""
    a, b, c, k = small_args(rng)
    loads = block_loads(gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(), target="cpu").asm["llir"])
    assert Counter(loads) == Counter({"d16_1x16x8nn": 8, "d16_1x16x16nt": 4})


@pytest.mark.parametrize("cpu", [AVX2, AVX512, None], ids=["avx2", "avx512", "xe-hpc"])
def test_a_tile_only_stored_takes_its_values_blocks(rng, monkeypatch, cpu):
    """A tile_mma result stored as f16 goes out in its DPAS C blocks [8, 16], 8 stores a subgroup's 32x32 piece:
    with AVX2 too, where an f16 value loaded or stored in the `cpu` target's rolled block loops takes blocks of one
    row (Target.one_row_rolled_blocks), which made it 64 one-row stores and the shuffles that regroup the blocks."""
    target = "xe-hpc" if cpu is None else "cpu"
    if cpu is not None:
        built_for_cpu(monkeypatch, gemm, cpu)
    a, b, _, k = small_args(rng)
    c = np.zeros((128, 128), np.float16)
    levels = lower(gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(), target="numpy").func, "xegpu-simt",
                   target)
    (store,) = [op for op in walk(levels["xetile-layouts"].body) if isinstance(op, StoreTileOp)]
    assert not isinstance(store.operands[0].owner, ConvertLayoutOp)
    stores = [line for line in print_func(levels["xegpu-simt"]).splitlines() if "xegpu.store_nd" in line]
    assert len(stores) == 8 and all("tensor_desc<8x16xf16" in line for line in stores)
    _, _, result = run_func(levels["xegpu-sg"], (2, 2), (a, b, c, 128, 128, k))
    np.testing.assert_allclose(result.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32), rtol=2e-3,
                               atol=2e-3)


@pytest.mark.parametrize("target, one_load, fmas", [("cpu", False, 16 * 8 + 32 * 2), ("xe-emulated", False, 16 * 8),
                                                   ("xe-hpc", True, 32 * 32 * 32 // 16)])
def test_a_cpu_reads_a_loaded_block_word_by_word(rng, monkeypatch, target, one_load, fmas):
    """On a CPU a block load's words are read from the lane's private array one by one (read as one vector the
    OpenCL CPU compiler transposed every block: f32 GEMM at 85 against 126 GFLOP/s); a GPU reads them in one load.
    f32 x f32 multiply-adds are fused, no separate multiply: on a CPU each of a subgroup's 16 DPAS blocks of a K
    step is a loop over k with its 8 rows' fma in the body, and the `cpu` target's K loop turned inside out one for
    each of a subgroup's 32 rows by 2 B columns (codegen/cpu/k_interchange.py); on a GPU the 32x32x32 of them are
    unrolled (16 lanes). The `cpu` target built for an AVX-512 CPU (with AVX2 its loops also read A in its memory:
    test_spirv_gemm)."""
    if target == "cpu":
        built_for_cpu(monkeypatch, gemm, AVX512)
    a, b = (rand(rng, (128, 64), np.float32), rand(rng, (64, 128), np.float32))
    llir = gemm.warmup(a, b, np.zeros((128, 128), np.float32), 128, 128, 64, **SMALL, **layouts(),
                       target=target).asm["llir"]
    assert bool(re.search(r"= load <\d+ x \w+>, ", llir)) == one_load
    assert llir.count('call float @"__spirv_ocl_fma"(') == fmas and " fmul " not in llir


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
def test_cpu_dpas_is_a_loop_over_k(rng, monkeypatch, target):
    """The CPU targets' DPAS is a loop over k reading A[r][k] of lane k (k the same on every lane). The `cpu` target
    writes it inline for the 16 DPAS blocks of a subgroup's K step (a call's vector arguments went through memory
    lane by lane), two blocks that share A in one loop, their 16 fma on 8 reads; this kernel's lanes exchange values
    through their slots (codegen/llvm/lane_slots.py), so each lane stores its A words there once (8 stores) and a
    read is a load from lane k's slot, with no sub-group built-in. `xe-emulated` calls the builtin defining it,
    which reads A through the slots as well (emulation.emulations): 8 stores, 8 loads and 8 fma a step. The `cpu`
    target built for an AVX-512 CPU (with AVX2 the loops read A in its memory where its blocks lie inside the array:
    test_spirv_gemm); its K loop turned inside out adds an fma for each of a subgroup's 32 rows by 2 B columns, A read
    in its memory there (codegen/cpu/k_interchange.py)."""
    if target == "cpu":
        built_for_cpu(monkeypatch, gemm, AVX512)
    a, b, c, k = small_args(rng)
    llir = gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(), target=target).asm["llir"]
    dpas_calls = len(re.findall(r"call <8 x float> @\"\w+matrix_mad", llir))
    moves = {name: llir.count(f'@"{name}"(') - 1 for name in (lane_slots.SLOT, BROADCAST)}  # less the declaration
    fmas = llir.count('@"__spirv_ocl_fma"(') - 1
    assert SHUFFLE not in llir
    assert (dpas_calls, moves, fmas) == {"cpu": (0, {lane_slots.SLOT: 2 * 8 * 8, BROADCAST: -1}, 16 * 8 + 32 * 2),
                                         "xe-emulated": (16, {lane_slots.SLOT: 8 + 8, BROADCAST: -1}, 8)}[target]
    gemm[(2, 2)](a, b, c, 128, 128, k, **SMALL, **layouts(), target=target, device=cpu_queue())
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)


def test_an_operand_computed_on_keeps_dpas_blocks(rng):
    """An A tile whose loaded value another op uses (here a scaling) is not an array of blocks: it is loaded in
    DPAS's 8x16 blocks (a lane holds at most a vector of them), B still in the largest messages. Subgroup pieces of
    8x32 C: A's 8x32 would be one message of two blocks (d16_2x16x8nn) if only tile_mma used it."""
    a, b = rand(rng, (32, 64), np.float16), rand(rng, (64, 128), np.float16)
    c = np.zeros((32, 128), np.float32)
    options = dict(BM=16, BN=64, BK=32, sg_layout=[2, 2], sg_data=[8, 32], LA=xetile.Layout([2, 2], [8, 32]),
                   LB=xetile.Layout([2, 2], [32, 32]), target="xe-emulated")
    compiled = scaled_a_gemm.warmup(a, b, c, 64, **options)
    assert Counter(block_loads(compiled.asm["llir"])) == Counter({"d16_1x16x8nn": 2, "d16_2x16x32nt": 1})
    scaled_a_gemm[(2, 2)](a, b, c, 64, **options, device=cpu_queue())
    np.testing.assert_allclose(c, 2 * a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)


@xetile.kernel
def scaled_a_gemm(a, b, c, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr,
                  LA: xetile.constexpr, LB: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [m, 0], [BM, BK], layout=LA)
    tb = xetile.init_tile(b, [0, n], [BK, BN], layout=LB)
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, BK):
        acc = xetile.tile_mma(xetile.load_tile(ta) * 2.0, xetile.load_tile(tb), acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
    xetile.store_tile(xetile.init_tile(c, [m, n], [BM, BN]), acc)


@pytest.mark.parametrize("rows", [16, 32])
def test_user_inst_data_is_honoured_and_converted_in_registers(rng, rows):
    """inst_data [16, 16] / [32, 16] on A: the loads read 16x16 / 32x16 blocks (1/2, 1/4 of the messages of 8x16;
    a lane's 32 elements of a 32x16 block are kept in private memory), a tile_conv_layout to DPAS's [8, 16] follows
    in the XeTile IR and costs no shared local memory; the numbers do not change."""
    a, b, c, k = small_args(rng)
    kwargs = dict(**SMALL, **layouts(inst_a=[rows, 16], inst_b=[16, 16]))
    compiled = gemm.warmup(a, b, c, 128, 128, k, **kwargs, target="cpu")
    loads = Counter(block_loads(compiled.asm["llir"]))
    assert loads == Counter({"d16_1x16x16nt": 4}) + Counter({f"d16_1x16x{rows}nn": 32 * 32 // (rows * 16)})
    assert "memref.alloc" not in compiled.asm["xegpu-sg"] and "gpu.barrier" not in compiled.asm["xegpu-sg"]
    traced = gemm.warmup(a, b, c, 128, 128, k, **kwargs, target="numpy").func
    func = lower(traced, "xetile-layouts")["xetile-layouts"]
    (convert,) = [op for op in walk(func.body) if isinstance(op, ConvertLayoutOp)]
    assert convert.operands[0].layout.inst_data == (rows, 16) and convert.result.layout.inst_data == (8, 16)
    assert f"inst_data = [{rows}, 16]" in print_func(func)
    gemm[(2, 2)](a, b, c, 128, 128, k, **kwargs, device=cpu_queue())
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("inst, detail", [
    ([64, 16], "inst_data [64, 16] on target cpu: a 2D block load is at most 32 rows high, not 64"),
    ([16, 64], "inst_data [16, 64] on target cpu: a 2D block is 4 to 64 bytes wide (array length included), not 128"),
])
def test_illegal_inst_data_names_the_rule(rng, inst, detail):
    a, b = rand(rng, (128, 64), np.float16), rand(rng, (64, 128), np.float16)
    la = xetile.Layout([2, 1], [64, 64], inst_data=inst)
    with pytest.raises(xetile.CompilationError, match=re.escape(f"{detail} [inst_data fits the target's "
                                                                "instruction blocks]")) as info:
        gemm.warmup(a, b, np.zeros((128, 128), np.float32), 128, 128, 64, BM=128, BN=64, BK=64, LA=la, LB=None,
                    sg_layout=[2, 1], sg_data=[64, 64], target="cpu")
    assert "ta = xetile.init_tile(a, [m, 0], [BM, BK], layout=LA)" in str(info.value)  # test_passes.gemm


@xetile.kernel
def doubled(x, y, LAYOUT: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [14, 4]), layout=LAYOUT)
    xetile.store_tile(xetile.init_tile(y, [0, 0], [14, 4]), v * 2.0)


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
def test_inst_data_whose_lane_piece_is_no_spirv_vector_names_the_rule(rng, target):
    """A 7x2 block is narrower than the lanes: each holds all 14 elements, a length SPIR-V vectors lack (2, 3, 4,
    8, 16). The user's inst_data is refused at its line; a 4x2 block (8 elements a lane) is one."""
    x, y = rand(rng, (14, 4), np.float16), np.zeros((14, 4), np.float16)
    with pytest.raises(xetile.CompilationError, match=re.escape(
            f"inst_data [7, 2] on target {target}: a lane holds 14 elements of a 7x2 block on sub-group 16; SPIR-V "
            "vectors have 2, 3, 4, 8 or 16 components [inst_data fits the target's instruction blocks]")):
        doubled.warmup(x, y, LAYOUT=xetile.Layout([2, 2], [7, 2], inst_data=[7, 2]), target=target)
    assert get_target(target).inst_rule(("value",), (7, 2), xetile.float16) is not None
    assert get_target(target).inst_rule(("value",), (4, 2), xetile.float16) is None


@xetile.kernel
def transposed_store(x, y):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [1, 32], layout=xetile.Layout([1, 2], [1, 16], inst_data=[1, 4])))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 1]), xetile.tile_transpose(v, [1, 0]))


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
def test_a_transpose_does_not_carry_inst_data_to_the_other_side(rng, target):
    """inst_data [1, 4] bf16 is a legal load block; its transpose [4, 1] is 2 bytes wide, no store block. The
    stored side is blocked for its own store (the target's default), not refused at a line that gives no
    inst_data, and the numbers are the interpreter's."""
    x, y = rand(rng, (1, 32), "bfloat16"), np.zeros((32, 1), "bfloat16")
    kern = transposed_store.warmup(x, y, target=target)
    completed = kern.asm["xegpu"]
    assert "inst_data = [1, 4]" in completed and "inst_data = [4, 1]" not in completed
    reference, device = y.copy(), y.copy()
    transposed_store[(1,)](x, reference, device="numpy")
    transposed_store[(1,)](x, device, device="opencl:cpu", target=target)
    np.testing.assert_array_equal(device, reference)
    np.testing.assert_array_equal(reference[:, 0], x[0])


def test_dpas_b_packs_two_rows_a_lane_word_and_loads_them_vnni_transformed(rng):
    """A 16-bit tile_mma B operand's lanes hold two K rows in a 32-bit word (lane_data [2, 1], as DPAS takes B):
    its loads are VNNI-transform messages (vISA shape ..nt), which give each lane the same elements as a plain
    load in that form; the numbers do not change."""
    a, b, c, k = small_args(rng)
    compiled = gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(), target="cpu")
    a_load, b_load = [line for line in compiled.asm["xegpu"].splitlines() if "xegpu.load_nd" in line]
    assert "lane_data = [1, 1]" in a_load and "lane_data = [2, 1]" in b_load
    assert "xe_block2d_load_d16_1x16x16nt" in compiled.asm["llir"]
    gemm[(2, 2)](a, b, c, 128, 128, k, **SMALL, **layouts(), device=cpu_queue())
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)


def test_lane_fields_other_than_the_targets_are_rejected(rng):
    a, b, c, k = small_args(rng)
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "lane_layout [4, 4] with lane_data [1, 4] is not how target cpu distributes a 8x16 block (lane_layout "
            "[1, 16], lane_data [1, 1]) [lane_layout and lane_data are the target's distribution of inst_data]")):
        gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(lane_layout=[4, 4], lane_data=[1, 4]), target="cpu")
    compiled = gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(lane_layout=[1, 16], lane_data=[1, 1]),
                           target="cpu")
    assert "inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]" in compiled.asm["xegpu"]


def pvc_gemm_isa(inst_a, abi: str, monkeypatch) -> str:
    """The tutorial GEMM for xe-hpc (256x256 tile, sg_layout [8, 4]) with A in `inst_a` blocks and B in 16x16."""
    if not ocloc.available(get_target("xe-hpc", abi)):
        pytest.skip(f"no GPU compiler for the {abi} ABI is installed")
    monkeypatch.setenv("XETILE_XE_ABI", abi)
    a, b, c = (np.zeros((512, 512), t) for t in (np.float16, np.float16, np.float32))
    la = xetile.Layout([8, 4], [32, 32], inst_data=inst_a)
    lb = xetile.Layout([8, 4], [32, 64], inst_data=[16, 16])
    return gemm.warmup(a, b, c, 512, 512, 512, LA=la, LB=lb, BM=256, BN=256, BK=32, sg_layout=[8, 4],
                       sg_data=[32, 64], target="xe-hpc").asm["isa"]


@pytest.mark.parametrize("abi, insts", [("legacy", ([8, 16], [16, 16])), ("spirv", ([8, 16], [16, 16], [32, 16]))])
def test_pvc_isa_follows_inst_data(abi, insts, monkeypatch):
    """The main loop's A load messages follow A's inst_data: a 32x32 A piece is 8 messages of 8x16 (4 GRFs each),
    4 of 16x16 (8 GRFs) or, where the ABI reads into private memory, 2 of 32x16 (16 GRFs: 4x fewer than 8x16);
    B (32x64 in 16x16 blocks) is 8 messages of 8 GRFs every time. Same 32 DPAS, no spill."""
    for inst in insts:
        isa = pvc_gemm_isa(inst, abi, monkeypatch)
        loads = Counter(m.grfs for m in block_messages(isa) if m.kind == "load")
        a_grfs = inst[0] * inst[1] * 2 // 64
        a_messages = 32 * 32 // (inst[0] * inst[1])
        expected = Counter({8: 8}) + Counter({a_grfs: a_messages})
        assert loads == expected, (inst, loads)
        assert dpas_count(isa) == 32 and "calla" not in isa and spills(isa) == 0


def test_legacy_abi_rejects_a_block_larger_than_a_vector(monkeypatch):
    """The legacy ABI returns a lane's load as one SPIR-V vector: 32x16 (32 elements a lane) is refused, naming
    the rule."""
    monkeypatch.setenv("XETILE_XE_ABI", "legacy")
    a, b, c = (np.zeros((512, 512), t) for t in (np.float16, np.float16, np.float32))
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "inst_data [32, 16] on target xe-hpc: a lane holds 32 elements of a 32x16 block on sub-group 16; SPIR-V "
            "vectors have at most 16 (with the legacy builtin ABI)")):
        gemm.warmup(a, b, c, 512, 512, 512, LA=xetile.Layout([8, 4], [32, 32], inst_data=[32, 16]), LB=None,
                    BM=256, BN=256, BK=32, sg_layout=[8, 4], sg_data=[32, 64], target="xe-hpc")


def test_8bit_tile_mma_on_sub_group_8_is_a_named_error(monkeypatch):
    """An 8-bit DPAS A on sub-group 8 gives a lane 32 values (B packs four K rows a word), which the legacy ABI
    cannot hold (no private blocks): on xe-hpg a NotImplementedError naming it, not the SPIR-V emitter's refusal
    of a 32-component vector or a crash in a select (which every config of an int8 xetile.ops.matmul
    there would meet). The legacy ABI on sub-group 16 (xe-hpc) holds A in 16 and still builds."""
    a, c = np.zeros((64, 64), np.int8), np.zeros((64, 64), np.int32)
    # a subgroup's piece is one DPAS block, which is what the rule is about (ocloc builds it in a second)
    options = dict(BM=16, BN=32, BK=64, ACC=xetile.int32, sg_layout=[2, 2], sg_data=[8, 16])
    with pytest.raises(NotImplementedError, match=re.escape(
            "i8 tile_mma on target xe-hpg with the legacy builtin ABI: a lane's DPAS A block [8, 32] holds 32")):
        gemm.warmup(a, a, c, 64, 64, 64, **options, target="xe-hpg")
    monkeypatch.setenv("XETILE_XE_ABI", "legacy")
    assert "spirv" in gemm.warmup(a, a, c, 64, 64, 64, **options, target="xe-hpc").asm


@pytest.mark.parametrize("target, a_dtype, b_dtype", [("xe-emulated", np.int8, np.int8),
                                                      ("xe-emulated", np.uint8, np.int8), ("cpu", np.int8, np.uint8)])
def test_int8_b_reaches_dpas_from_vnni_transform_loads_bit_exact(rng, target, a_dtype, b_dtype):
    """8-bit B's lanes hold four K rows a word (lane_data [4, 1]) and its loads are VNNI-transform messages (..nt):
    each DPAS B operand is a run of a lane's 32 bytes, no packing in between (no shifts); every IR level
    and both CPU targets give numpy's exact i32 product over the whole 8-bit range."""
    a, b = rand(rng, (32, 128), a_dtype, -128, 255), rand(rng, (128, 64), b_dtype, -128, 255)
    c = np.zeros((32, 64), np.int32)
    kwargs = dict(BM=16, BN=64, BK=64, sg_layout=[2, 2], sg_data=[8, 32], ACC=xetile.int32)
    shape = (32, 64, 128)
    compiled = gemm.warmup(a, b, c, *shape, **kwargs, target=target)
    b_load = [line for line in compiled.asm["xegpu"].splitlines() if "xegpu.load_nd %tb" in line]
    assert len(b_load) == 1 and "lane_data = [4, 1]" in b_load[0]
    loads = block_loads(compiled.asm["llir"])
    assert [shape for shape in loads if shape.endswith("t")] == \
        {"xe-emulated": ["d8_2x16x32nt"] * 2, "cpu": ["d8_1x16x32nt"] * 4}[target]
    simt = compiled.asm["xegpu-simt"]
    assert "arith.shli" not in simt
    dpas = "vector<16xi8>, vector<32xi8>, vector<8xi32> -> vector<8xi32>"
    assert simt.replace("ui8", "i8").count(dpas) == 1 * 2 * 2  # per K step: 1x2 C blocks, 2 DPAS deep
    expected = a.astype(np.int64) @ b.astype(np.int64)
    gemm[(2, 1)](a, b, c, *shape, **kwargs, target=target, device=cpu_queue())
    np.testing.assert_array_equal(c, expected)
    if target == "cpu":  # the levels are the targets' (blocking, lanes) once: check them on one
        func = gemm.warmup(a, b, c, *shape, **kwargs, target="numpy").func
        for stage, lowered in lower(func).items():
            np.testing.assert_array_equal(run_func(lowered, (2, 1), [a, b, np.zeros_like(c), *shape])[2],
                                          expected, err_msg=stage)


def transposed_b_args(rng, m=200, n=300, k=72):
    """Tutorial 7's arguments (RFC Appendix 2.2: B given as B^T, N x K), unaligned in every dimension."""
    return (rand(rng, (m, k), np.float16), rand(rng, (n, k), np.float16), rand(rng, (1, n), np.float32),
            np.zeros((m, 1), np.float32), k)


def tall_bt_layouts(tutorial_07):
    """Tutorial 7's layouts for a 64 x 128 x 32 tile, B^T's 32x32 subgroup piece in inst_data [32, 16] blocks."""
    mp_a, mp_bt, *rest = tutorial_07.layouts(64, 128, 32)
    return (mp_a, xetile.Layout(mp_bt.sg_layout, mp_bt.sg_data, inst_data=[32, 16], order=mp_bt.order), *rest)


def test_transposed_b_in_32_row_messages_on_request(rng):
    """inst_data [32, 16] on a B^T tile read through a folded tile_transpose: one d32 transposed message of 32 rows
    x 8 dwords (lane n: rows n and n + 16, taking turns column by column), whose words a lane puts back in its
    value's order (two column groups of DPAS B's lane fields). Every IR level in the interpreter and the bit-exact
    emulation on opencl:cpu give tutorial 7's row sums, borders included."""
    t = tutorial("07-gemm-bias-reduce")
    args = transposed_b_args(rng)
    a, bt, bias, _, _ = args
    options = dict(BM=64, BN=128, BK=32, L=tall_bt_layouts(t))
    grid = (xetile.cdiv(a.shape[0], 64), xetile.cdiv(bt.shape[0], 128))
    expected = (a.astype(np.float64) @ bt.astype(np.float64).T + bias).sum(1, keepdims=True)
    compiled = t.gemm_bias_reduce.warmup(*args, **options, target="xe-emulated")
    assert block_loads(compiled.asm["llir"]).count("d32_1x8x32tn") == 2  # B^T 32x32: two 32x16 blocks
    assert "inst_data = [16, 32], lane_layout = [1, 16], lane_data = [2, 1]" in next(
        line for line in compiled.asm["xegpu"].splitlines() if "transpose = [1, 0]" in line)
    func = t.gemm_bias_reduce.warmup(*args, **options, target="numpy").func
    for stage, lowered in lower(func, target="xe-emulated").items():
        (_, _, _, res) = run_func(lowered, grid, args)
        np.testing.assert_allclose(res, expected, rtol=1e-3, atol=1e-2 * np.abs(expected).max(), err_msg=stage)
    t.gemm_bias_reduce[grid](*args, **options, target="xe-emulated", device=cpu_queue())
    np.testing.assert_allclose(args[3], expected, rtol=1e-3, atol=1e-2 * np.abs(expected).max())
