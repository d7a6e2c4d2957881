"""bench/bench_xe_isa.py: its minimum per tile, one compiled row, and a row a compile error skips."""
import pathlib
import sys

import pytest
import test_passes as passes
from test_passes import gemm

from xetile_jit.toolchain import ocloc, upstream_mlir
from xetile_jit.target.targets import get_target

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import bench_xe_isa as bench  # noqa: E402  (needs bench/ on the path for its `common` import)


@pytest.mark.parametrize("target", ["xe-hpc", "xe2", "xe3"])
def test_minimum_counts_dpas_and_the_largest_block_loads(target):
    """32x64x32 f16: 4x4x2 DPAS of 8x16x16; A 32 rows x 64 bytes is 1 load, B 32 rows x 128 bytes 2. int8 with K 64:
    4x4x2 DPAS of 8x16x32; A 1 load, B 64 rows x 64 bytes 2. A 16x32x16 f16 step: 2x2x1 DPAS, 1 + 1 loads."""
    t = get_target(target)
    assert bench.minimum(t, "f16", 32, 64, 32) == bench.Minimum(32, 3)
    assert bench.minimum(t, "i8", 32, 64, 64) == bench.Minimum(32, 3)
    assert bench.minimum(t, "bf16", 16, 32, 16) == bench.Minimum(4, 2)


def test_xe_hpc_row_has_the_minimal_dpas_and_no_spill():
    if not ocloc.available(get_target("xe-hpc", "spirv")):
        pytest.skip("no GPU compiler for the spirv ABI is installed")
    row = bench.row(gemm, "xe-hpc", "spirv", "f16", [32, 16])
    assert (row["unroll"], row["dpas"], row["min_dpas"], row["min_loads"]) == (1, 32, 32, 3)
    assert row["loads"] >= 3 and not row["scratch"]


def test_prefetch_row_prefetches_each_byte_once_a_workgroup():
    """prefetch_distance=2 on xe-hpc: the prefetch tiles in the cooperative layout, each byte of a K step's A and B
    tiles (16 KiB each) prefetched once a workgroup: (16384 + 16384) / (32 subgroups x 512-byte 8x32 messages) = 2
    prefetches a subgroup per K step (3 of 2 KiB in the loads' layouts, where 4 subgroups prefetched each A byte and
    8 each B byte), beside the 3 loads and 32 dpas, at most one other instruction per dpas (16), no spill."""
    if not ocloc.available(get_target("xe-hpc", "spirv")):
        pytest.skip("no GPU compiler for the spirv ABI is installed")
    row = bench.row(gemm, "xe-hpc", "spirv", "f16", None, prefetch=2)
    assert (row["dpas"], row["loads"], row["prefetch_distance"]) == (32, 3, 2)
    assert row["prefetches"] == (16384 + 16384) / (32 * 8 * 32 * 2) == 2
    assert row["loop"]["messages"]["prefetch d16"] == 2
    assert row["other_per_dpas"] <= 1 and not row["scratch"]
    assert "  2 " in bench.format_row(row)


def test_appendix_2_1_row_prefetches_as_the_cooperative_layout():
    """RFC Appendix 2.1 as written (the user's [32, 1] and [4, 8] prefetch tiles of 8x32) prefetches as
    prefetch_distance's own tiles do: 2 messages a subgroup per K step on xe-hpc."""
    if not ocloc.available(get_target("xe-hpc", "spirv")):
        pytest.skip("no GPU compiler for the spirv ABI is installed")
    row = bench.appendix_row(passes, "xe-hpc", "spirv")
    assert (row["kernel"], row["dpas"], row["loads"], row["prefetches"]) == ("app2.1", 32, 3, 2)
    assert not row["scratch"]


def test_int8_row_accumulates_in_i32():
    """The 8-bit GEMM is built with an i32 accumulator and K step 64: its row has counts, not a skip."""
    if not ocloc.available(get_target("xe-hpc", "spirv")):
        pytest.skip("no GPU compiler for the spirv ABI is installed")
    row = bench.row(gemm, "xe-hpc", "spirv", "i8", None)
    assert "skipped" not in row, row.get("skipped")
    assert (row["dpas"], row["min_dpas"], row["loads"], row["min_loads"]) == (32, 32, 3, 3) and not row["scratch"]


def test_tf32_row_is_at_the_minimum():
    """f32 inputs with input_precision "tf32", K step 16: 32x64x16 is 4x4x2 DPAS of 8x16x8; A 32 rows x 64 bytes is
    1 load, B 16 rows x 256 bytes 4; the legacy ABI's row is skipped with the named error."""
    assert bench.minimum(get_target("xe-hpc"), "tf32", 32, 64, 16) == bench.Minimum(32, 5)
    assert "tf32 tile_mma on the legacy builtin ABI" in bench.row(gemm, "xe-hpc", "legacy", "tf32", None)["skipped"]
    if not ocloc.available(get_target("xe-hpc", "spirv")):
        pytest.skip("no GPU compiler for the spirv ABI is installed")
    row = bench.row(gemm, "xe-hpc", "spirv", "tf32", None)
    assert (row["dpas"], row["min_dpas"], row["loads"], row["min_loads"]) == (32, 32, 5, 5) and not row["scratch"]
    assert row["other_per_dpas"] <= 1


def test_a_compile_error_is_a_skipped_row_with_its_reason():
    row = bench.row(gemm, "xe-hpc", "legacy", "f16", [32, 16])
    assert "SPIR-V vectors have at most 16" in row["skipped"] and row["min_dpas"] == 32
    with_peer = bench.row(gemm, "xe-hpc", "legacy", "f16", [32, 16], peer="mlir")  # no kernel: no export either
    assert "skipped (ours): CompilationError" in bench.format_peer_row(with_peer, "mlir")


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_fused_minimum_counts_both_products_and_transposed_loads(target):
    """Appendix 2.2 (C 16x32 += A 16x32 B 32x32): 2x2x2 DPAS; A 16 rows x 64 bytes 1 load, B^T 32 rows x 64 bytes
    4 transposed loads (16 rows, as DPAS takes them; 32 bytes wide; the fewest legal: 2 of 32 rows); at 256x256
    (C 32x64 += A 32x32 B 32x64): 4x4x2 DPAS, A 1 load, B^T 64 rows 8 (4). Attention hd64:
    S 8x32x64 and O 8x64x32 are 8 + 8 DPAS; K 32 rows x 128 bytes 8 transposed loads (4), V 2; hd128: 16 + 16 DPAS,
    16 + 4 loads (8 + 4)."""
    t = get_target(target)
    assert bench.fused_minimum(t, "app2.2") == bench.Minimum(8, 5, fewest=3)
    assert bench.fused_minimum(t, "app2.2-256") == bench.Minimum(32, 9, fewest=5)
    assert bench.fused_minimum(t, "fa-hd64") == bench.Minimum(16, 10, fewest=6)
    assert bench.fused_minimum(t, "fa-hd128") == bench.Minimum(32, 20, fewest=12)


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
@pytest.mark.parametrize("kernel", ["app2.2", "fa-hd128"])
def test_fused_rows_have_the_minimal_dpas_and_no_spill(kernel, target):
    """The fused kernels' rows: the minimal DPAS, K^T / B^T in 16x16 transposed messages (d32t, 8 GRFs): loads
    5/3 of the minimum, no spill in 256 GRFs (attention hd128 spilled 1152 B on xe-hpc and 1280 B on xe2 when
    K^T was a load and a register transpose); Appendix 2.2's SLM is its row sum's partial sums, 128 rows x 4 column
    subgroups x 4 bytes."""
    if not ocloc.available(get_target(target, "spirv")):
        pytest.skip("no GPU compiler for the spirv ABI is installed")
    row = bench.fused_row(kernel, target, "spirv")
    assert (row["dpas"], row["loads"], row["spill_bytes"], row["grf_count"], row["slm_bytes"]) == {
        "app2.2": (8, 5, 0, 256, 2048), "fa-hd128": (32, 20, 0, 256, 0)}[kernel]
    assert "d32t:8" in row["load_kinds"] and not row["scratch"]
    assert bench.format_row(row).split()[2] == kernel


def test_peer_row_sets_upstream_mlir_beside_ours():
    """--peer mlir, the tutorial GEMM (f16, runtime K) on xe-hpc: the export through upstream's pipeline, built by
    the same ocloc with our driver options, has the same 32x64x32 / 8x16x16 = 32 dpas and 3 loads (A 1, B 2 VNNI)
    per K step as ours, in the same 256 GRFs, neither spilling, and ours has no more other instructions (6 each:
    three payload moves, the add, the compare and the jump); a kernel upstream's pipeline refuses (tf32, exported
    with its operands truncated to tf32) names its reason."""
    if not ocloc.available(get_target("xe-hpc", "spirv")) or upstream_mlir.mlir_opt() is None:
        pytest.skip("needs the current ocloc and mlir-opt 23 (install-gpu-compiler --with-mlir)")
    row = bench.row(gemm, "xe-hpc", "spirv", "f16", None, peer="mlir")
    theirs = row["peer"]["mlir"]
    assert (row["dpas"], theirs["dpas"], row["min_dpas"], row["loads"], theirs["loads"]) == (32, 32, 32, 3, 3)
    assert (row["grf_count"], theirs["grf_count"], row["spill_bytes"], theirs["spill_bytes"]) == (256, 256, 0, 0)
    assert theirs["compile_seconds"] > 0 and 0 < row["other"] <= theirs["other"] and row["other"] == 6
    cells = bench.format_peer_row(row, "mlir").split()
    assert cells[7:12] == ["pvc", "32/32", "1.00", "3/3", "1.00"]
    tf32 = bench.row(gemm, "xe-hpc", "spirv", "tf32", None, peer="mlir")
    assert bench.format_peer_row(tf32, "mlir").endswith("skipped (upstream): mlir-opt: No consumer layout found for "
                                                        "vector operand.")
