"""The GPU code path, checked by the Intel GPU compiler offline (ocloc for PVC): the tutorial kernels
compiled for xe-hpc, with either builtin ABI (each checked by its compiler), hold the DPAS and 2D block
instructions they were lowered to, and no unresolved call."""
import json
import re

import numpy as np
import pytest

from xetile_jit.toolchain import ocloc
from xetile_jit.toolchain.isa_stats import innermost_loops, spills
from xetile_jit.target.targets import get_target
from xetile_jit.ir.attrs import Layout
from conftest import tutorial
from test_tile_ops import copy_tile



@pytest.fixture(params=["spirv", "legacy"])
def abi(request, monkeypatch):
    """The builtin ABI the kernels are compiled with for xe-hpc; skips without the compiler that checks it."""
    if not ocloc.available(get_target("xe-hpc", request.param)):
        pytest.skip(f"no GPU compiler for the {request.param} ABI is installed")
    monkeypatch.setenv("XETILE_XE_ABI", request.param)
    return request.param


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_gemm_for_pvc_uses_dpas_and_block_io(dtype, abi):
    import ml_dtypes
    dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    mm = tutorial("03-matrix-multiplication")
    a, b, c = np.zeros((512, 512), dtype), np.zeros((512, 512), dtype), np.zeros((512, 512), np.float32)
    compiled = mm.matmul_kernel.warmup(a, b, c, 512, 512, 512, BM=256, BN=256, BK=32, target="xe-hpc",
                                       sg_layout=[8, 4], sg_data=[32, 64])
    isa = compiled.asm["isa"]
    sends = [line for line in isa.splitlines() if "send" in line]
    # per subgroup: a 32x64 C tile of 8x16 blocks (4x4 of them), K = 32 in steps of 16
    assert isa.count("dpas.8x8 (16|M0)") == 4 * 4 * 2
    assert any("load_block2d" in s for s in sends) and any("store_block2d" in s for s in sends)
    assert "calla" not in isa
    assert compiled.build_options == "-ze-opt-large-register-file" and spills(isa) == 0


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.parametrize("target", ["xe-hpc", "xe2", "xe3"])
def test_gemm_main_loop_is_at_the_hardwares_minimum(target, dtype):
    """The tutorial GEMM's main loop per K step of a subgroup's 32x64 C tile, default layouts: 32 dpas, 3 2D block
    loads (A 32x32 in one message of two 32x16 blocks, B 32x64 in two VNNI messages of two 32x16 blocks) and 6
    other (non-dpas, non-send) instructions: the K coordinate moved into the three payloads, its add, the loop
    test's compare and the jump, as upstream MLIR's loop (the stepped-coordinate rule, codegen/llvm/lowering.py;
    15 when the coordinate was an i64 clamped each K step); no spill."""
    import ml_dtypes
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    mm = tutorial("03-matrix-multiplication")
    a, b, c = np.zeros((512, 512), dtype), np.zeros((512, 512), dtype), np.zeros((512, 512), np.float32)
    isa = mm.matmul_kernel.warmup(a, b, c, 512, 512, 512, BM=256, BN=256, BK=32, target=target, sg_layout=[8, 4],
                                  sg_data=[32, 64]).asm["isa"]
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.loads, loop.scratch) == (32, 3, 0)
    assert loop.messages == {"load d16 rd31": 1, "load d16v rd31": 2} and loop.other == 6
    assert spills(isa) == 0 and "calla" not in isa


TUTORIAL_TILE = dict(BM=256, BN=256, sg_layout=[8, 4], sg_data=[32, 64])  # 32x64 C a subgroup
SMALL_TILE = dict(BM=32, BN=64, sg_layout=[4, 4], sg_data=[8, 16])  # one 8x16 block a subgroup: a short build


def tf32_gemm(target: str, bk: int = 16, precision: str = "tf32", b_order: str = "C", tile=TUTORIAL_TILE):
    """The tutorial GEMM with f32 inputs and input_precision "tf32" on `tile`, compiled; B in `b_order` ("F":
    column-major)."""
    mm = tutorial("03-matrix-multiplication")
    a, c = (np.zeros((512, 512), np.float32) for _ in range(2))
    b = np.zeros((512, 512), np.float32, order=b_order)
    return mm.matmul_kernel.warmup(a, b, c, 512, 512, 512, BK=bk, INPUT_PRECISION=precision, target=target,
                                   **tile)


@pytest.mark.parametrize("target", ["xe-hpc", "xe2", "xe3"])
def test_tf32_gemm_main_loop_is_at_the_hardwares_minimum(target):
    """tf32 DPAS is M 8, N 16, K 8: a 32x64 C tile per K step of 16 is 32 `dpas.8x8 f = f, tf32, tf32`; A 32x16 f32 in
    one load of two 32x8 blocks (their rows on lane halves: tf32 A's layout, no mov), B 16x64 in four 16x16 ones
    (64 bytes a message); at most one other instruction per dpas, no spill."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    isa = tf32_gemm(target).asm["isa"]
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.loads, loop.scratch) == (32, 5, 0)
    assert loop.messages == {"load d32 rd31": 1, "load d32 rd16": 4} and loop.other <= loop.dpas
    dpas = [line for line in isa.splitlines() if "dpas." in line]
    assert dpas and all(re.search(r"dpas\.8x8 \(16\|M0\)\s+\S+:f\s+\S+:f\s+\S+:tf32\s+\S+:tf32", line)
                        for line in dpas)
    assert spills(isa) == 0 and "calla" not in isa


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_tf32_gemm_with_a_column_major_b_reads_it_by_d32_transposed_messages(target):
    """A column-major f32 B: each 8x16 tf32 DPAS B block is one d32 transposed message of 16 memory rows (B's
    columns) by 8 dwords (K), lane n getting column n as DPAS takes it. Before, B went element by element: 64
    gathers and 1319 other instructions per K step on xe-hpc against 40 now."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    isa = tf32_gemm(target, b_order="F").asm["isa"]
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.loads, loop.other_sends, loop.scratch) == (32, 9, 0, 0)
    assert loop.messages == {"load d32 rd31": 1, "load d32t rd8": 8} and loop.other <= 2 * loop.dpas
    assert spills(isa) == 0 and "calla" not in isa


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_f16_gemm_with_a_column_major_a_reads_it_by_d32_transposed_messages(target):
    """A column-major f16 A (X^T @ dY): each 8x16 DPAS A block is a d32 transposed message of 16 memory rows (A's
    columns, K) by 4 dwords (8 rows of M in pairs), lane k getting column k as DPAS takes it. Before, A went element
    by element: 114 other sends, 50 of them scratch, and 2473 other instructions per K step on xe-hpc, 3520 bytes
    spilled."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    mm = tutorial("03-matrix-multiplication")
    a, b = np.zeros((512, 512), np.float16, order="F"), np.zeros((512, 512), np.float16)
    isa = mm.matmul_kernel.warmup(a, b, np.zeros((512, 512), np.float32), 512, 512, 512, BM=256, BN=256, BK=32,
                                  target=target, sg_layout=[8, 4], sg_data=[32, 64]).asm["isa"]
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.other_sends, loop.scratch) == (32, 0, 0)
    assert loop.messages.get("load d32t rd4") == 8 and loop.other <= 4 * loop.dpas
    assert spills(isa) == 0 and "calla" not in isa


@pytest.mark.parametrize("precision", ["ieee", "tf32"])
def test_f32_gemm_on_xe_hpg_is_multiply_adds(precision):
    """DG2 has no tf32 DPAS (the tf32 builtins are for sub-group 16 devices): f32 multiply-adds (K 8 blocks: lane k
    holds A's column k), for tf32 on operands truncated to tf32 (`and` with 0xFFFFE000, -8192 as an i32); one 8x16
    block a subgroup shows it as the tutorial's tile does."""
    if not ocloc.available(get_target("xe-hpg")):
        pytest.skip("no GPU compiler for xe-hpg is installed")
    compiled = tf32_gemm("xe-hpg", bk=8, precision=precision, tile=SMALL_TILE)
    assert (", -8192" in compiled.asm["llir"]) == (precision == "tf32")
    isa = compiled.asm["isa"]
    assert "dpas" not in isa and "mad" in isa and "calla" not in isa


def test_tf32_on_the_legacy_abi_is_a_named_error(monkeypatch):
    monkeypatch.setenv("XETILE_XE_ABI", "legacy")
    with pytest.raises(NotImplementedError, match="tf32 tile_mma on the legacy builtin ABI"):
        tf32_gemm("xe-hpc")


def test_batched_gemm_main_loop_has_no_element_path():
    """3-D arrays (a batch offset may lie outside them, an empty slice): the block messages address a one-row
    stand-in surface the block lies far below instead of branching to an element-by-element path, so the main
    loop is the 2-D GEMM's: 32 dpas, 3 loads, at most one other instruction per dpas, no spill."""
    if not ocloc.available(get_target("xe-hpc")):
        pytest.skip("no GPU compiler for the spirv ABI is installed")
    bmm = tutorial("09-batched-gemm")
    a, c = np.zeros((2, 512, 512), np.float16), np.zeros((2, 512, 512), np.float32)
    isa = bmm.bmm_kernel.warmup(a, a, c, 512, BM=256, BN=256, BK=32, target="xe-hpc", sg_layout=[8, 4],
                                sg_data=[32, 64]).asm["isa"]
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.loads, loop.scratch) == (32, 3, 0) and loop.other <= loop.dpas
    assert spills(isa) == 0


def test_column_major_b_is_read_by_d32_transposed_messages(abi):
    """A column-major f16 B (order=[0, 1]) is read 16x16 at a time as d32 transposed pairs, which DPAS takes as
    they come (the same kernels run, emulated, in test_spirv_gemm's "order" cases)."""
    mm = tutorial("03-matrix-multiplication")
    a, b = np.zeros((512, 512), np.float16), np.zeros((512, 512), np.float16).T
    compiled = mm.matmul_kernel.warmup(a, b, np.zeros((512, 512), np.float32), 512, 512, 512, BM=256, BN=256,
                                       BK=32, target="xe-hpc", sg_layout=[8, 4], sg_data=[32, 64])
    loads = [line for line in compiled.asm["isa"].splitlines() if "load_block2d" in line]
    # per subgroup and K step: B is 32x64, four 16x16 blocks along N, two along K
    assert sum("load_block2d.ugm.d32t" in line for line in loads) == 4 * 2
    assert compiled.asm["isa"].count("dpas.8x8 (16|M0)") == 4 * 4 * 2 and spills(compiled.asm["isa"]) == 0


def test_a_cached_compile_made_without_the_gpu_compiler_is_not_reused_once_it_is_installed(tmp_path, monkeypatch):
    """The ISA belongs to the compiler installed at compile time: which one is part of the cache key."""
    if not ocloc.available(get_target("xe-hpc")):
        pytest.skip("no GPU compiler for the spirv ABI is installed")
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    mm = tutorial("03-matrix-multiplication")
    a, b, c = np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float32)
    args = dict(BM=64, BN=64, BK=32, target="xe-hpc", sg_layout=[2, 2], sg_data=[32, 32])
    monkeypatch.setenv("XETILE_OCLOC", str(tmp_path / "no-ocloc"))
    assert "isa" not in mm.matmul_kernel.warmup(a, b, c, 64, 64, 64, **args).asm
    monkeypatch.delenv("XETILE_OCLOC")
    mm = tutorial("03-matrix-multiplication")  # a new kernel object: its in-memory cache is empty, the disk's is not
    assert "dpas" in mm.matmul_kernel.warmup(a, b, c, 64, 64, 64, **args).asm["isa"]


@pytest.mark.parametrize("target", ["xe-hpc", "xe-hpg", "xe2", "xe3"])
@pytest.mark.parametrize("case", ["reshape", "shared-scatter-atomic"])
def test_exchanges_between_subgroups_build_for_gpus(target, case):
    """A reshape across four subgroups and an atomic on a #scatter tile two subgroups hold (whose old values the
    owner shares) build for each GPU: SLM stores, a workgroup barrier, SLM loads (and none after them: no exchange
    follows that rewrites the buffer, needless_barriers.py); no unresolved call."""
    from test_scatter_ops import HALVES, counted  # here: those modules import this one (through test_passes)
    from test_shape_ops import BANDS, BLOCKS, reshape_2d
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for {target} is installed")
    if case == "reshape":
        x = np.zeros((16, 64), np.float32)
        compiled = reshape_2d.warmup(x, x.reshape(64, 16), M=16, N=64, P=64, Q=16, IN=BANDS, OUT=BLOCKS,
                                     target=target)
    else:
        keys = np.zeros((4, 16), np.int32)
        compiled = counted.warmup(keys, np.zeros((1, 10), np.int32), keys, LAYOUT=HALVES, OLD=True, target=target)
    lines = compiled.asm["isa"].splitlines()
    assert sum("sync.bar" in line for line in lines) == 1
    assert any("; store.slm" in line for line in lines) and any("; load.slm" in line for line in lines)
    assert (case == "reshape") != any("; atomic_" in line for line in lines)
    assert "calla" not in compiled.asm["isa"]


@pytest.mark.parametrize("locality, suffix", [(0, ".st.uc"), (1, ".st.ca"), (2, ".uc.ca"), (3, ".ca.ca")])
def test_prefetch_goes_through_a_payload_with_its_cache_controls(locality, suffix):
    """prefetch_tile on the spirv ABI: the compiler's address-payload prefetch builtin (codegen/xe/prefetch_payload.py)
    whose L1/L3 control is the locality's (ir/cache_hints.LOCALITY); a 32x32 f16 tile is four 8x16x1 messages."""
    if not ocloc.available(get_target("xe2")):
        pytest.skip("no GPU compiler for xe2 is installed")
    x = np.zeros((64, 64), np.float16)
    compiled = copy_tile.warmup(x, x, 0, 0, 0, 0, BM=32, BN=32, LOCALITY=locality, target="xe2")
    assert "__builtin_IB_subgroup_block_read_ap_prefetch_u16_m8k16v1\"(" in compiled.asm["llir"]
    prefetches = [line for line in compiled.asm["isa"].splitlines() if " null " in line and "load_block2d" in line]
    assert len(prefetches) == 4 and all(line.rstrip().endswith(f"d16.a64{suffix}") for line in prefetches)


def test_gpu_code_stats_line_of_the_tutorial_gemm(abi):
    """The line the tutorials print: the counts Intel's compiler gives, per kernel and main loop (32 dpas a K step)."""
    import xetile_jit as xetile
    mm = tutorial("03-matrix-multiplication")
    a, c = np.zeros((512, 512), np.float16), np.zeros((512, 512), np.float32)
    line = xetile.testing.gpu_code_stats(mm.matmul_kernel, a, a, c, 512, 512, 512, BM=256, BN=256, BK=32,
                                         sg_layout=[8, 4], sg_data=[32, 64])
    assert line.startswith("xe-hpc: kernel 32 dpas, ") and "; main loop 32 dpas, " in line
    assert line.endswith("spilled 0 B") or (abi == "legacy" and line.endswith("spilled unknown"))


def test_gpu_code_stats_says_why_there_is_no_isa(monkeypatch, tmp_path):
    import xetile_jit as xetile
    monkeypatch.setattr(ocloc, "gpu_build", lambda spirv, target, options: None)  # no GPU compiler
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    mm = tutorial("03-matrix-multiplication")
    a, c = np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float32)
    line = xetile.testing.gpu_code_stats(mm.matmul_kernel, a, a, c, 64, 64, 64, BM=64, BN=64, BK=32, target="xe2")
    assert line == "xe2: no ISA here (no Intel GPU compiler: python -m xetile_jit install-gpu-compiler)"


@pytest.mark.parametrize("target", ["xe-hpc", "xe2", "xe3"])
def test_gemm_with_prefetch_distance_prefetches_in_the_main_loop(target):
    """prefetch_distance=2 (transforms/xetile/prefetch_insertion.py): the main loop keeps 32 dpas and 3 loads per K step
    with no spill and gains the prefetches of the A and B tiles two steps ahead in their cooperative layout: each byte
    of a K step's A 256x32 and B 32x256 f16 once a workgroup, (16384 + 16384) / (32 subgroups x 512-byte 8x32
    messages) = 2 a subgroup (3 of 32x16x2 in the loads' layout), L1 and L3 cached (locality 3) in the ISA, at most
    one other instruction per dpas: the prefetch payloads are built once (codegen/xe/prefetch_payload.py) and a
    prefetch's coordinates are the loads' plus a constant (16 on xe-hpc, 10 on xe2 and xe3; 27 and 22 when the
    loads' K coordinate was clamped each step, 37 on xe-hpc when the prefetches' were too)."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    mm = tutorial("03-matrix-multiplication")
    a, c = np.zeros((512, 512), np.float16), np.zeros((512, 512), np.float32)
    isa = mm.matmul_kernel.warmup(a, a, c, 512, 512, 512, BM=256, BN=256, BK=32, target=target, sg_layout=[8, 4],
                                  sg_data=[32, 64], prefetch_distance=2).asm["isa"]
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.loads, loop.scratch) == (32, 3, 0) and loop.other <= loop.dpas
    assert loop.prefetches == (16384 + 16384) // (32 * 8 * 32 * 2) == 2 and loop.messages["prefetch d16"] == 2
    assert loop.other == {"xe-hpc": 16, "xe2": 10, "xe3": 10}[target]
    prefetches = [line for line in isa.splitlines() if "send" in line and " null " in line and "load_block2d" in line]
    assert prefetches and all(line.rstrip().endswith(".ca.ca") for line in prefetches)
    assert spills(isa) == 0 and "calla" not in isa


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
@pytest.mark.parametrize("dtype, b_block, messages", [(np.float16, (32, 16), {"load d16 rd31": 1, "load d32t rd8": 8}),
                                                      (np.int8, None, {"load d8 rd16": 1, "load d32t rd8": 4})])
def test_a_column_major_b_of_32_elements_a_lane_is_read_by_d32_transposed_messages(target, dtype, b_block, messages):
    """xetile.ops.matmul's configs with a column-major B of 32 elements a lane (f16 in 32x16 blocks; 8-bit) keep
    them in private memory, which IGC maps to registers: d32 transposed messages of 8 dwords DPAS takes as they
    come, no spill (the SPIR-V emitter refuses 32-component vectors)."""
    import xetile_jit as xetile
    from xetile_jit.ops.matmul import configs, matmul_kernel
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    config = next(c for c in configs() if (c.kwargs["BM"], c.kwargs["BN"], c.kwargs["BK"], c.sg_data) == (
        256, 256, 32, [32, 64]) and c.kwargs["PREFETCH"] == 0 and c.kwargs["A_LAYOUT"] is None
        and b_block == (c.kwargs["B_LAYOUT"] and c.kwargs["B_LAYOUT"].inst_data))
    a, c = np.zeros((512, 512), dtype), np.zeros((512, 512), np.int32 if dtype == np.int8 else np.float32)
    isa = matmul_kernel.kernel.warmup(a, a.T, c, c, 512, 512, 512, 0, 512, HAS_BIAS=False, ACTIVATION="",
                                      ACC=xetile.int32 if dtype == np.int8 else xetile.float32,
                                      INPUT_PRECISION="ieee", target=target, **config.all_kwargs()).asm["isa"]
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.other_sends, loop.scratch) == (32 if dtype == np.float16 else 16, 0, 0)
    assert loop.messages == messages and loop.other <= 2 * loop.dpas
    assert spills(isa) == 0 and "calla" not in isa


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_int8_gemm_main_loop_is_at_the_hardwares_minimum(target):
    """int8 x int8 -> i32, K step 64 (two DPAS depths of 32): 32 dpas per K step of a subgroup's 32x64 C tile, 3 2D
    block loads (A 32x64 bytes in one message of two 32x32 blocks, B 64x64 in two VNNI-transform messages of four
    32x16 blocks, four K rows a lane's word as DPAS takes B), at most one other instruction per dpas, no spill
    (before: B read plainly and repacked with 279 other instructions a K step)."""
    import xetile_jit as xetile
    from test_passes import gemm
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    a, b, c = np.zeros((512, 512), np.int8), np.zeros((512, 512), np.int8), np.zeros((512, 512), np.int32)
    isa = gemm.warmup(a, b, c, 512, 512, 512, BM=256, BN=256, BK=64, ACC=xetile.int32, target=target,
                      sg_layout=[8, 4], sg_data=[32, 64]).asm["isa"]
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.loads, loop.scratch) == (32, 3, 0)
    assert loop.messages == {"load d8 rd31": 1, "load d8v rd31": 2} and loop.other <= loop.dpas
    assert spills(isa) == 0 and "calla" not in isa


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_flash_attention_builds_without_spills(target, head_dim):
    """Tutorial 6's causal attention in its config (BM = BN = 32, 4 subgroups) at head dims 64 and 128: K^T is read
    by 16x16 transposed loads straight into DPAS B blocks (d32t, the load_tile + tile_transpose folded), so the
    loop holds no second copy of K: 0 spill bytes in the large register file (hd128 spilled 1152 B on xe-hpc and
    1280 B on xe2 before), the minimal DPAS, and a tenth of the other instructions (5680 on xe-hpc before)."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    t = tutorial("06-fused-attention")
    q = np.zeros((1, 2, 1000, head_dim), np.float16)
    args, options = t.launch_arguments(q, q, q, q, True, 32, 32)
    compiled = t.attention_kernel.warmup(*args, **options, target=target)
    stats = json.loads(compiled.asm["isa_stats"])
    assert (stats["spill_bytes"], stats["grf_count"]) == (0, 256)
    assert compiled.build_options == "-ze-opt-large-register-file"
    (loop,) = innermost_loops(compiled.asm["isa"])
    blocks = head_dim // 64
    assert (loop.dpas, loop.loads) == (16 * blocks, 10 * blocks)
    assert loop.messages == {"load d32t rd8": 8 * blocks, "load d16v rd31": 2 * blocks} and loop.other < 1200


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_gemm_bias_reduce_main_loop_has_no_exchange(target):
    """Tutorial 7 (RFC Appendix 2.2) with the RFC's mp_bt order [0, 1]: the B^T transpose stays on each subgroup,
    read by transposed loads; the main loop has 8 dpas, 5 2D loads, no SLM message (134 and 2869 other instructions
    when mp_bt had no order: an SLM exchange and a register transpose), no spill."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    t = tutorial("07-gemm-bias-reduce")
    a = np.zeros((256, 128), np.float16)
    compiled = t.gemm_bias_reduce.warmup(a, a, np.zeros((1, 256), np.float32), np.zeros((256, 1), np.float32), 128,
                                         BM=128, BN=128, BK=32, L=t.layouts(128, 128, 32), target=target)
    stats = json.loads(compiled.asm["isa_stats"])
    assert (stats["spill_bytes"], stats["grf_count"]) == (0, 256)
    loop = max(innermost_loops(compiled.asm["isa"]), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.loads, loop.other_sends) == (8, 5, 0) and loop.other <= 8 * loop.dpas
    assert loop.messages == {"load d16 rd16": 1, "load d32t rd8": 4}


@pytest.mark.parametrize("target, mp_bt", [("xe-hpc", None), ("xe2", None), ("xe-hpc", Layout([32, 1], [64, 32]))])
def test_gemm_bias_reduce_at_the_rfcs_256x256_tile(target, mp_bt):
    """RFC Appendix 2.2 at its own 256x256 tile (a subgroup's C 32x64), with the RFC's layouts (and Appendix 2.3's
    B^T mapping, sg_layout [32, 1], which is mp_b's transpose): it asked for 256 KiB of SLM, C converted to whole
    rows for the row sum, against 128 KiB. Now the SLM is the partial sums only: 256 rows x 4 column subgroups x
    4 bytes = 4 KiB; no spill; the main loop is the GEMM's 32 dpas, one 32x32 A message and 8 transposed B^T
    messages, and no SLM message."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    t = tutorial("07-gemm-bias-reduce")
    mp_a, bt_layout, *rest = t.layouts(256, 256, 32)
    a = np.zeros((512, 128), np.float16)
    compiled = t.gemm_bias_reduce.warmup(a, a, np.zeros((1, 512), np.float32), np.zeros((512, 1), np.float32), 128,
                                         BM=256, BN=256, BK=32, L=(mp_a, mp_bt or bt_layout, *rest), target=target)
    stats = json.loads(compiled.asm["isa_stats"])
    assert (stats["spill_bytes"], stats["slm_bytes"], spills(compiled.asm["isa"])) == (0, 4096, 0)
    loop = max(innermost_loops(compiled.asm["isa"]), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.other_sends) == (32, 0)
    assert loop.messages == {"load d16 rd31": 1, "load d32t rd8": 8}


@pytest.mark.parametrize("target", ["xe-hpc", "xe2", "xe3"])
def test_igc_reads_a_reordered_32_row_transposed_message_as_two_of_16_rows(target):
    """Tutorial 7 with B^T in inst_data [32, 16] blocks calls two 32-row d32 transposed messages per K step; the
    words they give must be reordered for DPAS (lane n holds rows n and n + 16 column by column, DPAS takes a B
    block in 8 consecutive registers), and Intel's compiler reads each as two 16-row messages, straight into
    DPAS's registers: the loop of the default layouts (16x16 blocks), 4 d32t messages of 8 registers, a few more
    other instructions. So the default stays 16 rows (docs/DESIGN.md, "Transposed loads")."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    t = tutorial("07-gemm-bias-reduce")
    a = np.zeros((256, 128), np.float16)
    mp_a, mp_bt, *rest = t.layouts(128, 128, 32)
    tall = Layout(mp_bt.sg_layout, mp_bt.sg_data, inst_data=[32, 16], order=mp_bt.order)
    compiled = t.gemm_bias_reduce.warmup(a, a, np.zeros((1, 256), np.float32), np.zeros((256, 1), np.float32), 128,
                                         BM=128, BN=128, BK=32, L=(mp_a, tall, *rest), target=target)
    assert len(re.findall(r"call void @\"xe_block2d_load_d32_1x8x32tn\"", compiled.asm["llir"])) == 2
    loop = max(innermost_loops(compiled.asm["isa"]), key=lambda counts: counts.dpas)
    assert (loop.dpas, loop.messages) == (8, {"load d16 rd16": 1, "load d32t rd8": 4})
    assert json.loads(compiled.asm["isa_stats"])["spill_bytes"] == 0


def test_fast_math_softmax_is_shorter_on_xe_hpc():
    """Tutorial 2's softmax (16 rows of 1024 f32 a workgroup) with fast_math: the exponential and the division are
    bare math-unit instructions, 17 of them against 48, and 2.77 instructions an element against 4.38 (2026-11-28,
    ocloc 26.27; docs/performance.md "Fast math")."""
    if not ocloc.available(get_target("xe-hpc")):
        pytest.skip("no GPU compiler for the spirv ABI of xe-hpc is installed")
    t = tutorial("02-fused-softmax")
    x = np.zeros((1024, 1024), np.float32)
    builds = [t.softmax_kernel.warmup(x, x, 1024, BM=16, BN=1024, target="xe-hpc", fast_math=fast)
              for fast in (False, True)]
    maths = [sum(" math." in line for line in b.asm["isa"].splitlines()) for b in builds]
    others = [json.loads(b.asm["isa_stats"])["kernel"]["other"] for b in builds]
    assert maths[1] < maths[0] // 2 and others[1] < others[0] * 0.7


FP8_TILES = {"full": dict(TUTORIAL_TILE, BK=32),  # 32 dpas a K step
             "small": dict(SMALL_TILE, BK=16)}  # 1 dpas: a short build


@pytest.mark.parametrize("target, tile", [("xe-hpc", "full"), ("xe2", "small"), ("xe3", "small")])
def test_float8_gemm_builds_on_f16_dpas(target, tile):
    """FP8 A (e4m3fn) and B (e5m2), up-converted to f16 in registers after their 2D block loads (no target has FP8
    DPAS): the SPIR-V passes the stack's spirv-val and the main loop is f16 DPAS, one per 8x16x16 of a subgroup's
    K step, without spills (the tutorial's 32x64 C tile on xe-hpc; Xe2 and Xe3 build the same code in 8x16). On
    the 32x64 tile a lane converts 64 elements of A and 128 of B a K step, with the moves around them in under 9
    instructions an e4m3fn element and 3 an e5m2 element, whose NaN codes keep the payload the shift gives them
    (875 in all, 2026-11-29, ocloc 26.27; 1438 with e5m2's NaNs made the quiet NaN of their sign, 2082 when that
    was selected on the code: codegen/llvm/float8.py)."""
    import ml_dtypes
    from spirv_tools import validate
    chosen = get_target(target)
    if not ocloc.available(chosen):
        pytest.skip(f"no GPU compiler for the spirv ABI of {target} is installed")
    mm = tutorial("03-matrix-multiplication")
    a, b = np.zeros((512, 512), ml_dtypes.float8_e4m3fn), np.zeros((512, 512), ml_dtypes.float8_e5m2)
    options = FP8_TILES[tile]
    compiled = mm.matmul_kernel.warmup(a, b, np.zeros((512, 512), np.float32), 512, 512, 512, target=target,
                                       **options)
    validate(compiled.asm["spirv"], tool=ocloc.spirv_validator(chosen))
    isa = compiled.asm["isa"]
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    (m, n), k = options["sg_data"], options["BK"]
    assert loop.dpas == m // 8 * (n // 16) * (k // 16)
    if tile == "full":
        assert loop.other < (9 * m + 3 * n) * k // chosen.subgroup_size
    dpas = [line for line in isa.splitlines() if "dpas.8x8" in line]
    assert dpas and all(line.count(":hf") == 2 for line in dpas)  # A and B in f16, C and D in f32
    assert all("load_block2d" in line for line in isa.splitlines() if "send" in line and "d8" in line)
    assert spills(isa) == 0 and "calla" not in isa
