"""Blocking cuts subgroup values into instruction-size blocks: DPAS shapes per dtype, reductions over
blocks, regrouping, and padding of shapes the blocks do not divide."""
import re

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, rand
from xetile_jit.ir.interpreter import run_ir
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir.printer import print_func


@xetile.kernel
def mma(a, b, c, M: xetile.constexpr, N: xetile.constexpr, K: xetile.constexpr):
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [M, K])),
                          xetile.load_tile(xetile.init_tile(b, [0, 0], [K, N])))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [M, N]), acc)


@pytest.mark.parametrize("dtype, acc, k_block, b_block", [
    (np.float16, np.float32, 16, "vector<16x16xf16>"), (np.float32, np.float32, 16, "vector<16x16xf32>"),
    (np.int8, np.int32, 32, "vector<32x16xi8>"), (np.uint8, np.int32, 32, "vector<32x16xui8>")])
def test_dpas_blocks_follow_the_target_shape(rng, dtype, acc, k_block, b_block):
    """A loaded 8-bit B is a 32x16 block whose lanes hold four K rows a word (lane_data [4, 1], a VNNI-transform
    load), as the hardware takes it: DPAS takes it without repacking (no `vnni_b` words)."""
    m, n, k = 16, 32, 64
    a, b, c = rand(rng, (m, k), dtype), rand(rng, (k, n), dtype), np.zeros((m, n), acc)
    func = lower(mma.warmup(a, b, c, M=m, N=n, K=k, target="numpy").func, "xegpu-blocked",
                 num_subgroups=1)["xegpu-blocked"]  # one subgroup holds every block
    text = print_func(func)
    mlir = {np.float16: "f16", np.float32: "f32", np.int8: "i8", np.uint8: "ui8"}[dtype]
    dpas = re.findall(r"xegpu.dpas .* : (vector<[^>]*>), (vector<[^>]*>)", text)
    assert len(dpas) == (m // 8) * (n // 16) * (k // k_block)
    assert set(dpas) == {(f"vector<8x{k_block}x{mlir}>", b_block)}
    assert "vnni_b = " not in text and "arith.shli" not in text
    run_ir(func, (1, 1, 1), [a, b, c])
    assert_close(c, a.astype(np.float64) @ b.astype(np.float64), acc, scale=k)


@xetile.kernel
def mma_stored_b(a, b, c, d):
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [64, 32]))
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [16, 64])), vb)
    xetile.store_tile(xetile.init_tile(c, [0, 0], [16, 32]), acc)
    xetile.store_tile(xetile.init_tile(d, [0, 0], [64, 32]), vb)


def test_8_bit_b_other_ops_use_is_packed_into_words_for_dpas(rng):
    """An 8-bit B that is also stored keeps one element a lane's component in 8x16 blocks (unpacking a VNNI load
    for the store would cost as much as packing it): blocking packs four K rows into each word of [8, 16] i32."""
    a, b = rand(rng, (16, 64), np.int8, -128, 127), rand(rng, (64, 32), np.int8, -128, 127)
    c, d = np.zeros((16, 32), np.int32), np.zeros((64, 32), np.int8)
    func = lower(mma_stored_b.warmup(a, b, c, d, target="numpy").func, "xegpu-blocked")["xegpu-blocked"]
    text = print_func(func)
    assert set(re.findall(r"xegpu.dpas .* : vector<[^>]*>, (vector<[^>]*>)", text)) == {"vector<8x16xi32>"}
    assert "vnni_b = i8" in text and text.count("arith.shli") == 3 * 2 * 8  # 3 shifted bytes, 2x8 8x16 blocks
    run_ir(func, (1, 1, 1), [a, b, c, d])
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))
    np.testing.assert_array_equal(d, b)


@xetile.kernel
def row_and_column_sums(x, rows, cols):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 48]))
    xetile.store_tile(xetile.init_tile(rows, [0, 0], [16, 1]), xetile.tile_reduce("max", v, [1]))
    xetile.store_tile(xetile.init_tile(cols, [0, 0], [1, 48]), xetile.tile_reduce("add", v, [0]))


def test_reductions_fold_blocks_element_wise_then_reduce_one(rng):
    """The blocks that reduce into one result block fold element-wise first: one multi_reduction (a reduction
    across lanes, where the reduced dim spans lanes) per result block, not one per block."""
    x = rand(rng, (16, 48), np.float32)
    x[3, 20] = np.nan  # maxnumf: a NaN loses, in the block and in the combination alike
    rows, cols = np.zeros((16, 1), np.float32), np.zeros((1, 48), np.float32)
    func = lower(row_and_column_sums.warmup(x, rows, cols, target="numpy").func, "xegpu-blocked",
                 num_subgroups=1)["xegpu-blocked"]  # the whole 16x48 value in one subgroup: blocks combine there
    text = print_func(func)
    assert text.count("vector.multi_reduction <maxnumf>") == 2  # one per row block
    assert text.count("vector.multi_reduction <add>") == 3  # one per column block
    assert len(re.findall(r"arith.maxnumf .* : vector<8x16xf32>", text)) == 2 * 2  # three column blocks, per row block
    assert len(re.findall(r"arith.addf .* : vector<8x16xf32>", text)) == 3  # two row blocks, per column block
    run_ir(func, (1, 1, 1), [x, rows, cols])
    assert_close(rows, np.fmax.reduce(x, axis=1, keepdims=True))
    assert_close(cols, x.sum(0, keepdims=True), scale=4)


@pytest.mark.parametrize("dtype, acc", [(np.float16, np.float32), (np.int8, np.int32)])
@pytest.mark.parametrize("m, n, k", [(8, 8, 8), (5, 7, 13), (13, 37, 40)])
def test_tile_mma_of_any_shape_pads_to_dpas_blocks(rng, dtype, acc, m, n, k):
    """K padding is zeroed in both operands (masks, or regrouping into zeros for 8x8x8), the result's padding
    is never stored (valid)."""
    a, b, c = rand(rng, (m, k), dtype), rand(rng, (k, n), dtype), np.full((m, n), 7, acc)
    func = lower(mma.warmup(a, b, c, M=m, N=n, K=k, target="numpy").func, "xegpu-blocked",
                 num_subgroups=1)["xegpu-blocked"]  # one subgroup holds every block
    text = print_func(func)
    if m != 8:
        assert "vector.constant_mask" in text and "{valid = [" in text
    run_ir(func, (1, 1, 1), [a, b, c])
    assert_close(c, a.astype(np.float64) @ b.astype(np.float64), acc, scale=k)


@xetile.kernel
def odd_reductions(x, rows, cols, out):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [13, 37]), padding=1000.0)
    xetile.store_tile(xetile.init_tile(rows, [0, 0], [13, 1]), xetile.tile_reduce("max", v, [1]))
    xetile.store_tile(xetile.init_tile(cols, [0, 0], [1, 37]), xetile.tile_reduce("add", v, [0]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [13, 37]), v * 2.0)


def test_padded_blocks_never_reach_results_or_memory(rng):
    """13x37 becomes 2x3 blocks of 8x16; the values past 13x37 (read from the bigger array) are neither
    reduced nor stored."""
    big = rand(rng, (20, 50), np.float32) + 100
    x = big[:13, :37]
    rows, cols = np.zeros((13, 1), np.float32), np.zeros((1, 37), np.float32)
    out_big = np.zeros((20, 50), np.float32)
    out = out_big[:13, :37]
    func = lower(odd_reductions.warmup(x, rows, cols, out, target="numpy").func, "xegpu-blocked")["xegpu-blocked"]
    assert print_func(func).count("xegpu.load_nd") == 6
    run_ir(func, (1, 1, 1), [x, rows, cols, out])
    assert_close(rows, x.max(1, keepdims=True))
    assert_close(cols, x.sum(0, keepdims=True))
    assert_close(out, 2 * x)
    np.testing.assert_array_equal(out_big[13:], 0)
    np.testing.assert_array_equal(out_big[:, 37:], 0)


@xetile.kernel
def row_reductions(x, maxes, mins, sums, BN: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [4, BN]))
    xetile.store_tile(xetile.init_tile(maxes, [0, 0], [4, 1]), xetile.tile_reduce("max", v, [1]))
    xetile.store_tile(xetile.init_tile(mins, [0, 0], [4, 1]), xetile.tile_reduce("min", v, [1]))
    xetile.store_tile(xetile.init_tile(sums, [0, 0], [4, 1]), xetile.tile_reduce("add", v, [1]))


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
def test_a_partial_blocks_padding_is_the_reductions_identity(target):
    """A row 20 wide is a block of 16 and one of 4 whose other lanes hold the padding: NaN for max and min, where a
    NaN loses, so that a row of NaNs reduces to NaN at every level and as SPIR-V (with -inf and +inf as the padding
    it reduced to the infinity)."""
    x = np.array([[np.nan] * 20, [np.nan] * 19 + [-3.0], [np.inf] * 20, np.arange(20) - 5.0], np.float32)
    want = [np.fmax.reduce(x, axis=1, keepdims=True), np.fmin.reduce(x, axis=1, keepdims=True),
            np.add.reduce(x, axis=1, keepdims=True)]
    func = row_reductions.warmup(x, *want, BN=20, target="numpy").func
    stages = lower(func, target=target)
    for stage in [*stages, "spirv"]:
        outs = [np.full((4, 1), 7, np.float32) for _ in range(3)]
        if stage == "spirv":
            row_reductions[(1,)](x, *outs, BN=20, device="opencl:cpu", target=target)
        else:
            run_ir(stages[stage], (1, 1, 1), [x, *outs])
        for got, expected in zip(outs, want):
            np.testing.assert_array_equal(got, expected, err_msg=stage)


@xetile.kernel
def store_then_load_back(x, y, z):
    """Two subgroups on each row of 8 x 136: a piece of 68 columns is four blocks of 16 and a fifth that reaches 12
    columns into the other subgroup's piece. The tile stored and loaded back through one layout needs no barrier:
    each subgroup reads the part of its last block it wrote itself."""
    layout = xetile.Layout([8, 2], [1, 68])
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 136], layout=layout))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 136], layout=layout), v + 1.0)
    w = xetile.load_tile(xetile.init_tile(y, [0, 0], [8, 136], layout=layout))
    xetile.store_tile(xetile.init_tile(z, [0, 0], [8, 136], layout=layout), w * 2.0)


def test_a_loads_padding_past_its_piece_is_no_read_of_the_other_subgroups_elements(rng):
    """A load's block past the subgroup's piece reads elements of another subgroup's, never seen: the load says
    which part it uses (`valid`, as a store does), and the checking interpreter counts no read of the rest, so the
    load after the store is no data race at any level (the fuzzer's seed 1202 found one reported)."""
    x = rand(rng, (8, 136), np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    func = store_then_load_back.warmup(x, y, z, target="numpy").func
    stages = lower(func, "xegpu-simt", target="xe-emulated")
    blocked = print_func(stages["xegpu-blocked"])
    loads = re.findall(r"xegpu\.load_nd [^\n]*", blocked)
    assert len(loads) == 10 and sum("valid = [1, 4]" in load for load in loads) == 2
    assert "gpu.barrier" not in blocked
    for stage in ("xegpu-blocked", "xegpu-simt"):
        y[...], z[...] = 0, 0
        run_ir(stages[stage], (1, 1, 1), [x, y, z], check=True)
        assert_close(z, 2 * (x + 1))
