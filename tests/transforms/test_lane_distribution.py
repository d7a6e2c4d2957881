"""Lane distribution: lane layouts, SIMT ops, data moved within and between lanes."""
import json
import re

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, rand
from xetile_jit.ir.interpreter import run_ir
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir.printer import print_func
from xetile_jit.target.targets import get_target
from xetile_jit.ir.simt_ops import LaneLayout


def lane_layout(block, lanes: int) -> LaneLayout:
    """The target's distribution of `block` (sub-group 16, as the cpu target's)."""
    assert lanes == get_target("cpu").subgroup_size
    return LaneLayout(tuple(block), lanes, *get_target("cpu").lane_fields(block))


@pytest.mark.parametrize("block", [(8, 16), (8, 32), (1, 16), (8, 1), (4, 8)])
def test_lane_layouts_round_trip(rng, block):
    layout = lane_layout(block, 16)
    data = rand(rng, block, np.float32)
    per_lane = layout.distribute(data)
    assert per_lane.shape == ((16,) if layout.per_lane == 1 else (16, layout.per_lane))
    np.testing.assert_array_equal(layout.gather(per_lane), data)


def test_columns_layout_matches_dpas_and_block_io():
    """Reference note §1.3/§5: component r of lane l is row r, column l; DPAS int8 A packs columns 2l, 2l+1."""
    block = np.arange(8 * 16).reshape(8, 16)
    assert lane_layout((8, 16), 16).distribute(block)[3].tolist() == block[:, 3].tolist()
    wide = np.arange(8 * 32).reshape(8, 32)
    assert lane_layout((8, 32), 16).distribute(wide)[5].tolist() == wide[:, 10:12].reshape(-1).tolist()


@xetile.kernel
def gemm_epilogue(a, b, c, rows):
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [16, 32])),
                          xetile.load_tile(xetile.init_tile(b, [0, 0], [32, 32])))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [16, 32]), acc - xetile.tile_reduce("max", acc, [1]))
    xetile.store_tile(xetile.init_tile(rows, [0, 0], [16, 1]), xetile.tile_reduce("add", acc, [1]))


def test_gemm_epilogue_in_simt_form(rng):
    a, b = rand(rng, (16, 32), np.float16), rand(rng, (32, 32), np.float16)
    c, rows = np.zeros((16, 32), np.float32), np.zeros((16, 1), np.float32)
    func = lower(gemm_epilogue.warmup(a, b, c, rows, target="numpy").func)["xegpu-simt"]
    text = print_func(func)
    assert "lanes = 16" in text
    assert "xegpu.dpas %" in text and ": vector<8xf16>, vector<16xf16>, vector<8xf32> -> vector<8xf32>" in text
    assert "gpu.subgroup_reduce maxnumf" in text and "gpu.subgroup_reduce add" in text
    sources = re.findall(r"source_lanes = (\[\[.*?\]\])", text)  # no data crosses lanes in this kernel:
    tables = [np.array(json.loads(s)) for s in sources]
    assert all(np.array_equal(t, np.tile(np.arange(16), (len(t), 1))) for t in tables)
    run_ir(func, (1, 1, 1), [a, b, c, rows])
    full = a.astype(np.float32) @ b.astype(np.float32)
    assert_close(c, full - full.max(1, keepdims=True), np.float32, scale=32)
    assert_close(rows, full.sum(1, keepdims=True), np.float32, scale=1000)


@xetile.kernel
def transpose(x, y):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [16, 8]),
                      xetile.tile_transpose(xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16])), [1, 0]))


def test_transpose_moves_data_between_lanes(rng):
    x, y = rand(rng, (8, 16), np.float32), np.zeros((16, 8), np.float32)
    func = lower(transpose.warmup(x, y, target="numpy").func)["xegpu-simt"]
    assert "xegpu.lane_gather" in print_func(func)
    run_ir(func, (1, 1, 1), [x, y])
    np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("a_dtype, b_dtype", [(np.int8, np.int8), (np.uint8, np.int8), (np.int8, np.uint8)])
def test_int8_dpas_takes_vnni_packed_b(rng, a_dtype, b_dtype):
    """Reference note §1.3, SG16 int8: lane i holds A columns 2i, 2i+1 (16 bytes), and B column i as 32 bytes,
    the eight words of four K rows each DPAS takes (a VNNI-transform load gives them)."""
    a, b = rand(rng, (16, 32), a_dtype, -128, 127), rand(rng, (32, 32), b_dtype, -128, 127)
    c, rows = np.zeros((16, 32), np.int32), np.zeros((16, 1), np.int32)
    func = lower(gemm_epilogue.warmup(a, b, c, rows, target="numpy").func)["xegpu-simt"]
    text = print_func(func)
    assert len(re.findall(r"xegpu.dpas %\d+, %\d+ \{[^}]*\} : vector<16xi8>, vector<32xi8> -> vector<8xi32>",
                          text.replace("ui8", "i8"))) == 4
    run_ir(func, (1, 1, 1), [a, b, c, rows])
    full = a.astype(np.int64) @ b.astype(np.int64)
    np.testing.assert_array_equal(c, full - full.max(1, keepdims=True))
    np.testing.assert_array_equal(rows, full.sum(1, keepdims=True))


@xetile.kernel
def broadcast_max(x, y, out):
    a = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 2]))
    b = xetile.load_tile(xetile.init_tile(y, [0, 0], [1, 2]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 2]), xetile.maximum(b, a))


def test_narrow_row_broadcast_at_the_work_item_level():
    """Fuzzer case: a [1, 2] row (every lane holds it) broadcast against an [8, 2] block (one element a lane); the
    lane gather's one-element result and the load's must combine element-wise (both are (lanes,) arrays)."""
    x, y = np.arange(16, dtype=np.int32).reshape(8, 2), np.array([[5, 6]], np.int32)
    out = np.zeros_like(x)
    run_ir(lower(broadcast_max.warmup(x, y, out, target="numpy").func)["xegpu-simt"], (1, 1, 1), [x, y, out])
    np.testing.assert_array_equal(out, np.maximum(y, x))
