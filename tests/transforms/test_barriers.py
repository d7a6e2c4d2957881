"""The barrier pass (transforms/xegpu/barriers.py): workgroup program order between subgroups. It runs on
workgroup-level IR, where one op is one access: the pieces wg-to-sg cuts a tile into need no barrier between them,
a tile whose layout has subgroups share elements is ordered even through one descriptor, and a barrier that
repeats a layout exchange's is dropped. Kernels run at every IR level and on each device."""
from __future__ import annotations

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import rand
from test_slm import ROWS, every_level
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir import core_ops as C
from xetile_jit.ir import xegpu_ops as G
from xetile_jit.ir.core import walk
from xetile_jit.ir.printer import print_func
from xetile_jit.transforms.xegpu.barriers import Barriers
from xetile_jit.transforms.xetile.to_xegpu import xetile_to_xegpu

ROUND_ROBIN = xetile.Layout(sg_layout=[2, 2], sg_data=[2, 8])  # over 8x32: four pieces per subgroup, none shared
WRAPPED = xetile.Layout(sg_layout=[4, 2], sg_data=[4, 8])      # over 8x32: subgroups 0 and 2 hold the same rows
HALVES = xetile.Layout(sg_layout=[2, 1], sg_data=[4, 16])      # over 8x16: four rows each


def count(func, op_class) -> int:
    return sum(isinstance(op, op_class) for op in walk(func.body))


def lowered(kern, *args, **consts):
    return lower(kern.warmup(*args, **consts, target="numpy").func, "xegpu-sg")


@xetile.kernel
def add_one(x, y, LAYOUT: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 32], layout=LAYOUT))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 32], layout=LAYOUT), v + 1.0)


@pytest.mark.parametrize("layout, pieces", [(ROUND_ROBIN, 4), (WRAPPED, 2)], ids=["round-robin", "wrapped"])
def test_the_pieces_of_one_store_need_no_barrier(layout, pieces, rng, on_each_device):
    """Fuzzer seed 0, batch 5: a store cut into many pieces, each with its own descriptor, had a barrier between
    every two (44 in the kernel), and OpenCL's CPU compiler crashed on it. One workgroup-level store is one access."""
    x = rand(rng, (8, 32), np.float32)
    y = np.zeros_like(x)
    stages = lowered(add_one, x, y, LAYOUT=layout)
    assert count(stages["xegpu-sg"], G.StoreNdOp) == pieces
    assert count(stages["xegpu-wg"], C.BarrierOp) == count(stages["xegpu-sg"], C.BarrierOp) == 0
    every_level(add_one, (x, y), {"LAYOUT": layout}, (1,), [x, x + 1])
    add_one[(1,)](x, y, LAYOUT=layout)
    np.testing.assert_array_equal(y, x + 1)


@xetile.kernel
def add_one_in_place(x, LAYOUT: xetile.constexpr):
    t = xetile.init_tile(x, [0, 0], [8, 32], layout=LAYOUT)
    xetile.store_tile(t, xetile.load_tile(t) + 1.0)


@pytest.mark.parametrize("layout, barriers", [(ROUND_ROBIN, 0), (WRAPPED, 1)], ids=["round-robin", "wrapped"])
def test_a_tile_stored_back_through_its_descriptor(layout, barriers, rng, on_each_device):
    """Through one descriptor each subgroup stores what it loaded, unless subgroups share elements: one that stores
    first changes what another has yet to load (without the barrier, opencl:cpu, which runs subgroups one after
    another between barriers, gave x + 2: every row is shared by two subgroups)."""
    x0 = rand(rng, (8, 32), np.float32)
    func = lowered(add_one_in_place, x0.copy(), LAYOUT=layout)["xegpu-sg"]
    assert count(func, C.BarrierOp) == barriers
    text = print_func(func)
    if barriers:
        assert text.index("xegpu.load_nd") < text.index("gpu.barrier") < text.index("xegpu.store_nd")
    x = x0.copy()
    add_one_in_place[(1,)](x, LAYOUT=layout)
    np.testing.assert_array_equal(x, x0 + 1)


@xetile.kernel
def column_sums_into_row_0(x):
    """Reads x in bands of rows, writes its column sums over row 0 through another descriptor."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=ROWS))
    sums = xetile.tile_reduce("add", v, [0])
    xetile.store_tile(xetile.init_tile(x, [0, 0], [1, 32]), sums)


def test_a_barrier_after_a_layout_exchange_is_not_repeated(rng, on_each_device):
    """The column sums go between subgroups through SLM, stored after every subgroup's load of x, then a barrier,
    then loaded: that barrier already orders the loads of x before the store of row 0, so neither the barrier the
    pass puts before that store (workgroup level) nor the exchange's own after its loads (nothing rewrites its
    buffer) is kept (needless_barriers.py)."""
    x0 = rand(rng, (32, 32), np.float32)
    stages = lowered(column_sums_into_row_0, x0.copy())
    assert count(stages["xegpu-wg"], C.BarrierOp) == 1
    sg = print_func(stages["xegpu-sg"])
    assert sg.count("gpu.barrier") == 1
    assert sg.index("xegpu.load_nd") < sg.index("memory_space = slm") < sg.index("gpu.barrier") < sg.index(
        "xegpu.store_nd %", sg.index("gpu.barrier"))
    want = x0.copy()
    want[0] = x0.sum(axis=0)
    x = x0.copy()
    column_sums_into_row_0[(1,)](x)
    np.testing.assert_allclose(x, want, rtol=1e-5)


@xetile.kernel
def negated_row_share(x, y, BN: xetile.constexpr, HOW: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [1, BN]))
    if HOW == "neg":
        t = -v
    elif HOW == "sigmoid":
        t = xetile.sigmoid(v + v)
    else:
        t = v * -1.0
    total = xetile.tile_reduce("add", t, [1])
    xetile.store_tile(xetile.init_tile(y, [0, 0], [1, BN]), t / xetile.tile_broadcast(total, [1], [1, BN]))


NEGATIONS = {"neg": np.negative, "sigmoid": lambda x: 1 / (1 + np.exp(-2 * x)), "times_minus_one": np.negative}


@pytest.mark.parametrize("how", NEGATIONS)
@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
def test_a_negated_row_split_over_subgroups_survives_the_barrier(rng, target, how):
    """A row of 320 split over two subgroups, negated, divided by its sum: the sum crosses subgroups through shared
    local memory and a barrier, and the negated blocks are used on both sides of it. The OpenCL CPU compiler took
    an `fneg` of the blocks for a value the work-items share and hoisted it out of its loop over them, so on
    `xe-emulated` (the blocks unrolled) 8 of subgroup 0's 10 blocks came back as subgroup 1's. The CPU targets
    negate as -0.0 - x with a -0.0 it cannot fold (codegen/cpu/negation.py, CpuLowering.rule_negate), and so a
    product by the literal -1.0, which that compiler makes the same `fneg`."""
    x = rng.uniform(1, 2, (1, 320)).astype(np.float32)
    y = np.zeros_like(x)
    negated_row_share[(1,)](x, y, BN=320, HOW=how, sg_layout=[1, 2], sg_data=[1, 160], target=target,
                            device="opencl:cpu")
    t = NEGATIONS[how](x.astype(np.float64))
    np.testing.assert_allclose(y, t / t.sum(), rtol=1e-5)


REPLICATED = xetile.Layout(sg_layout=[2, 2], sg_data=[32, 32])  # over 32x32: every subgroup holds all of it
STRIDED = xetile.Layout(sg_layout=[2, 2], sg_data=[1, 16])       # over 32x32: subgroup (i, j) rows i, i + 2, ...


@xetile.kernel
def store_then_load(x, y, z, STORED: xetile.constexpr, LOADED: xetile.constexpr):
    """y = x + 1 stored in one layout, loaded back in another, z = 2 y."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=STORED))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=STORED), v + 1.0)
    w = xetile.load_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=LOADED))
    xetile.store_tile(xetile.init_tile(z, [0, 0], [32, 32], layout=LOADED), w * 2.0)


STORE_THEN_LOAD = {  # (stored, loaded, barriers): a barrier only where a subgroup reads what it did not write
    "replicated": (REPLICATED, REPLICATED, 0),
    "replicated_then_rows": (REPLICATED, xetile.Layout(sg_layout=[4, 1], sg_data=[8, 32]), 0),
    "shared_rows_then_rows": (xetile.Layout(sg_layout=[2, 2], sg_data=[16, 32]),
                              xetile.Layout(sg_layout=[4, 1], sg_data=[8, 32]), 0),
    "strided_then_rows": (STRIDED, xetile.Layout(sg_layout=[4, 1], sg_data=[8, 32]), 1),
}


@pytest.mark.parametrize("case", STORE_THEN_LOAD)
def test_a_barrier_only_where_another_subgroup_wrote(case, rng, on_each_device):
    """Replicated layouts: each subgroup reads back what it stored itself, so the load needs no barrier; rows that
    subgroups stored round robin and read in bands are another subgroup's, so one barrier orders them."""
    stored, loaded, barriers = STORE_THEN_LOAD[case]
    x = rand(rng, (32, 32), np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    stages = lowered(store_then_load, x, y, z, STORED=stored, LOADED=loaded)
    assert count(stages["xegpu-wg"], C.BarrierOp) == count(stages["xegpu-sg"], C.BarrierOp) == barriers
    if barriers:
        text = print_func(stages["xegpu-wg"])
        assert text.index("xegpu.store_nd") < text.index("gpu.barrier") < text.index("xegpu.load_nd %", text.index(
            "xegpu.store_nd"))
    every_level(store_then_load, (x, y, z), dict(STORED=stored, LOADED=loaded), (1,), [x, x + 1, 2 * x + 2])
    store_then_load[(1,)](x, y, z, STORED=stored, LOADED=loaded)
    np.testing.assert_array_equal(z, 2 * x + 2)


@xetile.kernel
def four_batches(a, b, c, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr):
    """C[z] = A[z] @ B[z] for z < 4, each batch as its own 2-D tiles of the 3-D arrays."""
    m, n = xetile.program_id(0) * BM, xetile.program_id(1) * BN
    for z in xetile.static_range(4):
        ta, tb = xetile.init_tile(a, [z, m, 0], [BM, BK]), xetile.init_tile(b, [z, 0, n], [BK, BN])
        acc = xetile.zeros([BM, BN], xetile.float32)
        for k in range(0, K, BK):
            acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc)
            ta, tb = xetile.update_tile_offset(ta, [0, BK]), xetile.update_tile_offset(tb, [BK, 0])
        xetile.store_tile(xetile.init_tile(c, [z, m, n], [BM, BN]), acc)


def test_stores_to_different_batches_need_no_barrier(rng, on_each_device):
    """The four C stores are to four slices of c (leading offsets 0..3): no subgroup touches another's data."""
    a, b = rand(rng, (4, 16, 32), np.float16), rand(rng, (4, 32, 32), np.float16)
    c = np.zeros((4, 16, 32), np.float32)
    consts = dict(BM=16, BN=32, BK=16, sg_layout=[2, 2], sg_data=[8, 16])  # a subgroup's piece: one DPAS block
    stages = lowered(four_batches, a, b, c, 32, **consts)
    assert count(stages["xegpu-wg"], G.StoreNdOp) == 4
    assert count(stages["xegpu-wg"], C.BarrierOp) == count(stages["xegpu-sg"], C.BarrierOp) == 0
    four_batches[(1, 1)](a, b, c, 32, **consts)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


@xetile.kernel
def loops_in_a_row(x, counts, y, LOOPS: xetile.constexpr):
    """LOOPS loops one after another, each left by a `break` and stepping by a `continue` (an scf.while with scf.ifs
    in both regions), on a tile two subgroups share."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16], layout=HALVES))
    for j in xetile.static_range(LOOPS):
        for i in range(4):
            if i >= counts[j]:
                break
            if i % 2 == 1:
                continue
            v = v + 1.0
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 16], layout=HALVES), v)


def test_loops_in_a_row_hand_on_each_access_once():
    """Fuzzer (break_loop kind, seed 1, batch 0): what a loop or `if` left unordered started with what came before
    it, and was appended to it, so the list doubled at each; seven such loops in a kernel hung the pass."""
    func = loops_in_a_row.warmup(np.zeros((8, 16), np.float32), np.full(3, 3, np.int32),
                                 np.zeros((8, 16), np.float32), LOOPS=3, target="numpy").func
    workgroup = xetile_to_xegpu(lower(func, "xetile-layouts")["xetile-layouts"])
    pending = Barriers(workgroup).order(workgroup.body, [])
    assert len(pending) == len(set(pending)) == 3   # x read, counts read (one access in the three loops), y written
