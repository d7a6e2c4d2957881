"""Workgroup -> subgroup distribution follows the RFC's rule: which subgroup owns which rows and columns."""
import re

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, rand, tutorial
from test_shape_ops import BANDS, BLOCKS, reshape_2d
from xetile_jit.ir.interpreter import Interpreter, run_ir
from xetile_jit.compiler.pipeline import lower
from xetile_jit.target.targets import get_target
from xetile_jit.transforms.xegpu.wg_to_sg import WgToSg
from xetile_jit.ir.printer import print_func


@xetile.kernel
def copy_tile(x, y, SHAPE: xetile.constexpr, SG_LAYOUT: xetile.constexpr, SG_DATA: xetile.constexpr,
              ORDER: xetile.constexpr):
    layout = xetile.Layout(SG_LAYOUT, SG_DATA, order=ORDER)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], SHAPE, layout=layout))
    xetile.store_tile(xetile.init_tile(y, [0, 0], SHAPE, layout=layout), v)


def piece_offsets(shape, sg_layout, sg_data, order=None):
    """{subgroup id: [(row, col) of each piece]} as the distributed IR computes them."""
    x = np.zeros(shape, np.float32)
    func = copy_tile.warmup(x, x.copy(), SHAPE=shape, SG_LAYOUT=sg_layout, SG_DATA=sg_data, ORDER=order,
                            target="numpy").func
    conversion = WgToSg(lower(func, "xegpu-wg")["xegpu-wg"], get_target("cpu"))
    conversion.run()
    (dist,) = conversion.distributions.values()
    result = {}
    for sg in range(conversion.subgroups):
        interp = Interpreter(conversion.new)
        interp.subgroup_id = sg
        interp.run_block(conversion.new.body, [x, x.copy()])  # the prologue computes the offsets first
        result[sg] = [tuple(int(interp.env[v]) for v in piece) for piece in dist.offsets]
    return result


def test_rfc_table_sg_layout_2x2_sg_data_32x128():
    """XeTile RFC: a 128x128 tile over sg_layout [2, 2], sg_data [32, 128]."""
    assert piece_offsets((128, 128), [2, 2], [32, 128]) == {
        0: [(0, 0), (64, 0)], 1: [(0, 0), (64, 0)], 2: [(32, 0), (96, 0)], 3: [(32, 0), (96, 0)]}


def test_rfc_example_split_rows_broadcast_columns():
    """XeGPU RFC: a 64x16 tile over sg_layout [4, 8], sg_data [16, 16]: rows split by 4, columns shared by 8."""
    offsets = piece_offsets((64, 16), [4, 8], [16, 16])
    assert all(offsets[sg] == [(16 * (sg // 8), 0)] for sg in range(32))


def test_round_robin_over_several_rounds():
    offsets = piece_offsets((64, 32), [2, 2], [8, 16])
    assert offsets[0] == [(0, 0), (16, 0), (32, 0), (48, 0)]
    assert offsets[3] == [(8, 16), (24, 16), (40, 16), (56, 16)]


def test_order_0_1_linearizes_column_major():
    """XeGPU RFC: with order [0, 1] subgroup ids run down the columns of sg_layout."""
    offsets = piece_offsets((32, 32), [4, 4], [8, 8], order=[0, 1])
    assert offsets[1] == [(8, 0)] and offsets[4] == [(0, 8)]


@pytest.mark.parametrize("shape, sg_layout, sg_data, order", [
    ((128, 128), [2, 2], [32, 128], None), ((64, 32), [2, 2], [8, 16], None), ((32, 32), [4, 4], [8, 8], [0, 1]),
    ((256, 32), [32, 1], [64, 32], None), ((256, 32), [4, 8], [64, 32], [0, 1])])
def test_layout_pieces_are_those_of_the_distributed_ir(shape, sg_layout, sg_data, order):
    """Layout.subgroup_pieces (which decides that two layouts distribute alike) names the pieces wg-to-sg gives."""
    layout = xetile.Layout(sg_layout, sg_data, order=order)
    assert piece_offsets(shape, sg_layout, sg_data, order) == {
        sg: list(layout.subgroup_pieces(shape, sg)) for sg in range(layout.num_subgroups)}


@pytest.mark.parametrize("sg_layout, sg_data", [([2, 2], [32, 128]), ([4, 8], [16, 16]), ([2, 2], [8, 16]),
                                                ([4, 4], [8, 8])])
def test_every_element_is_copied(rng, sg_layout, sg_data):
    shape = (128, 128) if sg_data[1] == 128 else (64, 32)
    x, y = rand(rng, shape, np.float32), np.zeros(shape, np.float32)
    func = copy_tile.warmup(x, y, SHAPE=shape, SG_LAYOUT=sg_layout, SG_DATA=sg_data, ORDER=None, target="numpy").func
    run_ir(lower(func)["xegpu-sg"], (1, 1, 1), [x, y])
    np.testing.assert_array_equal(y, x)


@xetile.kernel
def shared_atomic(x, z):
    """The [32, 32] tile's columns are held by two subgroups each: the atomic must still add once."""
    layout = xetile.Layout([2, 2], [16, 32])
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=layout))
    xetile.atomic_rmw_tile("add", v, xetile.init_tile(z, [0, 0], [32, 32], layout=layout))


def test_atomic_on_shared_data_is_done_once(rng):
    x, z = rand(rng, (32, 32), np.float32), rand(rng, (32, 32), np.float32)
    expected = z + x
    run_ir(lower(shared_atomic.warmup(x, z, target="numpy").func)["xegpu-sg"], (1, 1, 1), [x, z])
    assert_close(z, expected)


@xetile.kernel
def shared_rows_atomic(mem, val):
    v = xetile.load_tile(xetile.init_tile(val, [0, 0], [2, 7], layout=xetile.Layout([1, 2], [1, 7])))
    xetile.atomic_rmw_tile("max", v, xetile.init_tile(mem, [0, 0], [2, 7]))


def test_atomic_on_shared_pieces_has_no_barrier_inside_the_owner_branch(rng):
    """Fuzzer case: both subgroups hold both rows (two pieces each); only the first updates memory, in a branch
    on the subgroup id. A barrier between its two pieces inside that branch made the other subgroup wait forever:
    the branch is ordered as a whole. Every level and SPIR-V give max(mem, val) once."""
    import threading
    mem0 = rng.integers(-8, 8, (2, 7)).astype(np.int64)
    val = rng.integers(-8, 8, (2, 7)).astype(np.int64)
    for stage, func in lower(shared_rows_atomic.warmup(mem0, val, target="numpy").func).items():
        mem = mem0.copy()
        worker = threading.Thread(target=run_ir, args=(func, (1, 1, 1), [mem, val]), daemon=True)
        worker.start()
        worker.join(60)
        assert not worker.is_alive(), f"{stage} hangs"
        np.testing.assert_array_equal(mem, np.maximum(mem0, val), err_msg=stage)
    mem = mem0.copy()
    shared_rows_atomic[(1,)](mem, val, device="opencl:cpu")
    np.testing.assert_array_equal(mem, np.maximum(mem0, val))


def test_reshape_goes_through_views_of_an_slm_buffer():
    """16x64 (four bands of rows) -> 64x16 (four 32x8 blocks): stores through a view of the scratch buffer in the
    source's shape, a barrier, loads through its view in the result's shape (wg-to-sg's barrier after them, for
    loops and the next exchange that reuse the buffer, orders nothing here: needless_barriers.py drops it)."""
    x = np.zeros((16, 64), np.float32)
    func = reshape_2d.warmup(x, x.reshape(64, 16), M=16, N=64, P=64, Q=16, IN=BANDS, OUT=BLOCKS, target="numpy").func
    stages = lower(func, "xegpu-sg")
    wg = print_func(stages["xegpu-wg"])
    assert re.search(r"vector.shape_cast %\d+ .*: vector<16x64xf32> to vector<64x16xf32>", wg)
    sg = print_func(stages["xegpu-sg"])
    buffer = re.search(r"(%\d+) = memref.alloc\(\) {layout_conversion} : memref<1x1024xf32, slm>", sg).group(1)
    stored, loaded = (re.search(rf"(%\d+) = memref.reinterpret_cast {buffer} to sizes: \[%\d+, %\d+\], strides: "
                                rf"\[%\d+, %\d+\] : memref<1x1024xf32, slm> to memref<{shape}xf32, slm>", sg).group(1)
                      for shape in ("16x64", "64x16"))
    store = sg.index(f"xegpu.create_nd_tdesc {stored}[")
    load = sg.index(f"xegpu.create_nd_tdesc {loaded}[")
    assert store < sg.index("gpu.barrier", store) < load and "gpu.barrier" not in sg[load:]
    assert sg.count("gpu.barrier") == 1 and "vector.shape_cast" not in sg


def test_reshape_buffer_counts_against_the_targets_slm():
    """A 128x256 f32 reshape needs a 128 KiB buffer: it fits xe-hpc's 128 KiB, not xe-hpg's 64 KiB."""
    x = np.zeros((128, 256), np.float32)
    func = reshape_2d.warmup(x, x.reshape(256, 128), M=128, N=256, P=256, Q=128, target="numpy").func
    lower(func, "xegpu-sg", target="xe-hpc")
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "needs 131072 bytes of shared local memory (0 in alloc_slm buffers, 131072 for layout conversions); "
            "target xe-hpg has 65536")):
        lower(func, "xegpu-sg", target="xe-hpg")


@xetile.kernel
def reshape_flip_reshape(x, y, M: xetile.constexpr, N: xetile.constexpr):
    w = (xetile.load_tile(xetile.init_tile(x, [0, 0], [M, N])) + 1.0).reshape([N, M])
    xetile.store_tile(xetile.init_tile(y, [0, 0], [M, N]), xetile.flip(w * 2.0, 0).reshape([M, N]))


def exchanges_at_sg_level(target: str, x: np.ndarray):
    func = reshape_flip_reshape.warmup(x, x.copy(), M=64, N=256, target="numpy").func
    return lower(func, "xegpu-sg", target=target)["xegpu-sg"]


@pytest.mark.parametrize("target, buffers, barriers", [("xe-hpc", 2, 3), ("xe-hpg", 1, 5)])
def test_exchange_buffers_merge_where_no_window_holds_two(rng, target, buffers, barriers):
    """A reshape, a flip and a reshape of a 64x256 f32 value (64 KiB), each an exchange through SLM with a buffer of
    its own, each exchange's values the one before's: one barrier an exchange, between its stores and its loads,
    and the first's and the third's buffers, which that barrier between them keeps apart, merge. On xe-hpc (128 KiB
    of SLM) two buffers; on xe-hpg (64 KiB) they do not fit, so every exchange takes one buffer, with a barrier
    after its loads too. The interpreter at the subgroup level, checking for races, agrees with numpy."""
    x = rand(rng, (64, 256), np.float32)
    sg = exchanges_at_sg_level(target, x)
    text = print_func(sg)
    assert text.count("memref.alloc() {layout_conversion} : memref<1x16384xf32, slm>") == buffers
    assert text.count("gpu.barrier") == barriers
    y = np.zeros_like(x)
    run_ir(sg, (1, 1, 1), [x, y], check=True)
    np.testing.assert_array_equal(y, np.flip((x + 1.0).reshape(256, 64) * 2.0, 0).reshape(64, 256))


def test_one_scratch_buffer_needs_the_barrier_after_each_exchange(rng):
    """With one scratch buffer, the flip's stores rewrite what other subgroups load in the reshape before it: the
    checking interpreter finds the race once the barrier between them is gone."""
    x = rand(rng, (64, 256), np.float32)
    sg = exchanges_at_sg_level("xe-hpg", x)
    barriers = [op for op in sg.body.ops if op.name == "gpu.barrier"]
    barriers[1].erase()  # after the first reshape's loads, before the flip's stores
    with pytest.raises(xetile.InterpretCheckError, match="data race"):
        run_ir(sg, (1, 1, 1), [x, np.zeros_like(x)], check=True)


def test_appendix_2_2_row_sum_exchanges_only_partial_sums():
    """Tutorial 7 at the RFC's 256x256 tile: each subgroup sums its 32x64 piece of C to 32x1; the four subgroups
    of a row band exchange these through SLM, 256 rows x 4 x 4 bytes = 4 KiB (converting C to whole rows took
    256 KiB), and each loads its 8 rows of mp_reduce, 8x4, and sums them: one barrier, between the stores and the
    loads (nothing writes the buffer again)."""
    t = tutorial("07-gemm-bias-reduce")
    a = np.zeros((512, 64), np.float16)
    func = t.gemm_bias_reduce.warmup(a, a, np.zeros((1, 512), np.float32), np.zeros((512, 1), np.float32), 64,
                                     BM=256, BN=256, BK=32, L=t.layouts(256, 256, 32), target="numpy").func
    sg = print_func(lower(func, "xegpu-sg", target="xe-hpc")["xegpu-sg"])
    assert re.findall(r"memref.alloc\(\) {layout_conversion} : memref<(\w+), slm>", sg) == ["256x4xf32"]
    assert re.findall(r"multi_reduction <add> %\d+ \[1\] .*: (vector<\w+>) into", sg) == [
        "vector<32x64xf32>", "vector<8x4xf32>"]
    assert sg.count("gpu.barrier") == 1
