"""bench/bench_xe_isa.py: its minimum per tile, one compiled row, and a row a compile error skips."""
import pathlib
import sys

import pytest
from test_passes import gemm

from xetile_jit.backend import ocloc
from xetile_jit.backend.targets import get_target

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "bench"))
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
