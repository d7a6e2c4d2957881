"""Every pass keeps the numbers: the same kernel runs through the numpy interpreter at each IR level."""
import copy

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, rand
from conftest import tutorial
from xetile_jit.ir.interpreter import run_ir
from xetile_jit.compiler.pipeline import STAGE_NAMES, lower, observing_stages
from xetile_jit.ir.core import walk
from xetile_jit.ir.core_ops import ForOp
from xetile_jit.ir.parser import parse_func
from xetile_jit.ir.printer import print_func
from xetile_jit.ir.attrs import Layout
from xetile_jit.ir.xetile_ops import InitTileOp, PrefetchTileOp, UpdateTileOffsetOp


@xetile.kernel
def gemm(a, b, c, M, N, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr,
         B_ORDER: xetile.constexpr = None, LA: xetile.constexpr = None, LB: xetile.constexpr = None,
         ACC: xetile.constexpr = xetile.float32, PRECISION: xetile.constexpr = "ieee"):
    """The tutorial GEMM; LA and LB are optional layouts of the A and B tiles, ACC the accumulator's dtype, PRECISION
    tile_mma's input_precision."""
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [m, 0], [BM, BK], layout=LA)
    tb = xetile.init_tile(b, [0, n], [BK, BN], order=B_ORDER, layout=LB)
    acc = xetile.zeros([BM, BN], ACC)
    for k in range(0, K, BK):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc, input_precision=PRECISION)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
    xetile.store_tile(xetile.init_tile(c, [m, n], [BM, BN]), acc)


# RFC Appendix 2.1's layouts: the loads' #mp_a, #mp_b (tile_mma's pieces) and the prefetch tiles' #mp_a_pfh,
# #mp_b_pfh (all 32 subgroups, 8x32 each)
APPENDIX_2_1 = dict(LA=xetile.Layout([8, 4], [32, 32]), LB=xetile.Layout([8, 4], [32, 64]),
                    PA=xetile.Layout([32, 1], [8, 32]), PB=xetile.Layout([4, 8], [8, 32]))


@xetile.kernel
def prefetched_gemm(a, b, c, M, N, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr,
                    LA: xetile.constexpr, LB: xetile.constexpr, PA: xetile.constexpr, PB: xetile.constexpr,
                    AHEAD: xetile.constexpr = 3):
    """RFC Appendix 2.1 as written: the A and B tiles loaded in layouts LA and LB, and prefetch tiles of their own
    (%1p, %2p, in layouts PA and PB) AHEAD K steps ahead (%c96: 3 steps of 32), each loop step loading, then
    prefetching, then multiplying and moving all four tiles."""
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [m, 0], [BM, BK], layout=LA)
    tb = xetile.init_tile(b, [0, n], [BK, BN], layout=LB)
    pa = xetile.init_tile(a, [m, AHEAD * BK], [BM, BK], layout=PA)
    pb = xetile.init_tile(b, [AHEAD * BK, n], [BK, BN], layout=PB)
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, BK):
        va = xetile.load_tile(ta)
        vb = xetile.load_tile(tb)
        xetile.prefetch_tile(pa)
        xetile.prefetch_tile(pb)
        acc = xetile.tile_mma(va, vb, acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
        pa = xetile.update_tile_offset(pa, [0, BK])
        pb = xetile.update_tile_offset(pb, [BK, 0])
    xetile.store_tile(xetile.init_tile(c, [m, n], [BM, BN]), acc)


@xetile.kernel
def epilogue(a, bt, bias, c, rs, K, BM: xetile.constexpr, BN: xetile.constexpr):
    """GEMM with B given transposed, a broadcast bias, a ReLU, a row sum through atomics."""
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [m, 0], [BM, 16])
    tbt = xetile.init_tile(bt, [n, 0], [BN, 16])
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, 16):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.tile_transpose(xetile.load_tile(tbt), [1, 0]), acc)
        ta = xetile.update_tile_offset(ta, [0, 16])
        tbt = xetile.update_tile_offset(tbt, [0, 16])
    v = xetile.maximum(acc + xetile.load_tile(xetile.init_tile(bias, [0, n], [1, BN])), 0.0)
    xetile.store_tile(xetile.init_tile(c, [m, n], [BM, BN]), v)
    xetile.atomic_rmw_tile("add", xetile.tile_reduce("add", v, [1]), xetile.init_tile(rs, [m, 0], [BM, 1]))


@xetile.kernel
def column_major_io(x, y, z, M, N):
    """Loads, stores and atomics through column-major views (order = [0, 1])."""
    m = xetile.program_id(0) * 16
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [16, 32]), padding=-1.0)
    t = xetile.init_tile(y, [m, 0], [16, 32])
    if M > 20:
        v = v * 2.0
    xetile.store_tile(t, v + 1.0)
    old = xetile.atomic_rmw_tile("max", v, xetile.init_tile(z, [m, 0], [16, 32]))
    xetile.store_tile(xetile.update_tile_offset(t, [0, 0]), old + v)


@xetile.kernel
def softmax(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]), padding=float("-inf"))
    e = xetile.exp(v - xetile.tile_reduce("max", v, [1]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), e / xetile.tile_reduce("add", e, [1]))


@xetile.kernel
def indexed(x, am, cs, LAYOUT: xetile.constexpr):
    """argmax, cumsum and iota: positions that every level counts from its own pieces' offsets."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 32], layout=LAYOUT))
    xetile.store_tile(xetile.init_tile(am, [0, 0], [16, 1]), xetile.tile_reduce("argmax", v, [1]))
    xetile.store_tile(xetile.init_tile(cs, [0, 0], [16, 32]), xetile.cumsum(v, 0) + xetile.iota([16, 32], 1))


@xetile.kernel
def two_mma(q, kt, v, o, LS: xetile.constexpr, LO: xetile.constexpr, LP: xetile.constexpr):
    """Attention's two products, each with its own layout: S = Q @ K^T on LS, O = softmax-ish(S) @ V on LO, with
    the probabilities converted to LP in between and their row sums reduced in a layout of their own."""
    s = xetile.tile_mma(xetile.load_tile(xetile.init_tile(q, [0, 0], [32, 16])),
                        xetile.tile_transpose(xetile.load_tile(xetile.init_tile(kt, [0, 0], [32, 16]))), layout=LS)
    p = xetile.exp(s - xetile.tile_reduce("max", s, [1]))
    rows = xetile.tile_reduce("add", p, [1], layout=xetile.Layout([4, 1], [8, 1]))
    p = xetile.convert_layout(p.to(xetile.float16), LP)
    out = xetile.tile_mma(p, xetile.load_tile(xetile.init_tile(v, [0, 0], [32, 32])), layout=LO)
    xetile.store_tile(xetile.init_tile(o, [0, 0], [32, 32]), out / xetile.tile_broadcast(rows, [1], [32, 32]))


def two_mma_case(rng):
    args = (rand(rng, (32, 16), np.float16), rand(rng, (32, 16), np.float16), rand(rng, (32, 32), np.float16),
            np.zeros((32, 32), np.float32))
    layouts = dict(LS=xetile.Layout([2, 2], [16, 16]), LO=xetile.Layout([4, 1], [8, 32]),
                   LP=xetile.Layout([4, 1], [8, 32]))
    return two_mma, args, layouts, (1,)


@xetile.kernel
def batched_gemm(a, b, c, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr):
    """The GEMM on 3-D arrays: the batch a leading offset."""
    z = xetile.program_id(2)
    ta = xetile.init_tile(a, [z, xetile.program_id(0) * BM, 0], [BM, BK])
    tb = xetile.init_tile(b, [z, 0, xetile.program_id(1) * BN], [BK, BN], order=[0, 1])
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, BK):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
    xetile.store_tile(xetile.init_tile(c, [z, xetile.program_id(0) * BM, xetile.program_id(1) * BN], [BM, BN]), acc)


@xetile.kernel
def rows_1d(x, w, y, flat, N, BLOCK: xetile.constexpr):
    """1-D tiles and vectors (a row of x, the 1-D w), an arange mask, a reduction to vector<1xf32>, broadcast_to,
    expand_dims and a base_shape/base_strides view."""
    row = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [row, 0], [BLOCK]))
    inside = xetile.arange(0, BLOCK) < N
    centered = xetile.where(inside, v - xetile.broadcast_to(xetile.tile_reduce("add", v, [0]) / N, [BLOCK]), 0.0)
    out = centered * xetile.load_tile(xetile.init_tile(w, [0], [BLOCK]))
    xetile.store_tile(xetile.init_tile(y, [row, 0], [BLOCK]), out)
    col = xetile.expand_dims(out, 1)
    t = xetile.init_tile(flat, [row * BLOCK, 0], [BLOCK, 1], base_shape=[4 * BLOCK, 1], base_strides=[1, 1])
    xetile.store_tile(t, col * 2.0)


def batched_gemm_case(rng):
    a = rand(rng, (3, 40, 32), np.float16)
    b = rand(rng, (3, 48, 32), np.float16).transpose(0, 2, 1)
    return batched_gemm, (a, b, np.zeros((3, 40, 48), np.float32), 32), dict(BM=32, BN=32, BK=16, sg_layout=[2, 2],
                                                                              sg_data=[16, 16]), (2, 2, 3)


def rows_1d_case(rng):
    args = (rand(rng, (4, 27), np.float32), rand(rng, 27, np.float32), np.zeros((4, 27), np.float32),
            np.zeros(4 * 32, np.float32), 27)
    return rows_1d, args, dict(BLOCK=32), (4,)


def attention_case(rng):
    """Tutorial 6's flash attention: 4-D arrays, arange masks, the online softmax, two products' own layouts."""
    t = tutorial("06-fused-attention")
    q, k, v = t.inputs(1, 2, 40, 64)
    rows = [t.SUBGROUPS, 1]
    consts = dict(BM=32, BN=32, D=64, LS=xetile.Layout(rows, [8, 32]), LO=xetile.Layout(rows, [8, 64]))
    return t.attention_kernel, (q, k, v, np.zeros_like(q), 40, np.float32(0.125), 1), consts, (2, 2, 1)


def grouped_gemm_case(rng):
    """Tutorial 11: element reads (memref.load) of the index arrays decide the tiles, base_shape views read them."""
    t = tutorial("11-grouped-gemm")
    pairs = t.problems_of([(40, 24, 20), (9, 40, 33)], np.float16)
    flat_a, rows_a = t.pack([a for a, _ in pairs], np.float16)
    flat_b, rows_b = t.pack([b for _, b in pairs], np.float16)
    flat_c, rows_c = t.pack([np.zeros((a.shape[0], b.shape[1]), np.float32) for a, b in pairs], np.float32)
    problems = np.array([(a.shape[0], b.shape[1], a.shape[1], ra, rb, rc)
                         for (a, b), ra, rb, rc in zip(pairs, rows_a, rows_b, rows_c)], np.int32)
    tiles = np.array([(0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 0, 1)], np.int32)
    args = (flat_a, flat_b, flat_c, problems, tiles)
    return t.grouped_gemm_kernel, args, dict(BM=32, BN=32, BK=16, sg_layout=[2, 2], sg_data=[16, 16]), (4,)


def gemm_case(rng, b_order):
    m, n, k = 70, 50, 40
    a = rand(rng, (m, k), np.float16)
    b = rand(rng, (k, n), np.float16) if b_order == [1, 0] else rand(rng, (n, k), np.float16).T
    return gemm, (a, b, np.zeros((m, n), np.float32), m, n, k), dict(BM=32, BN=32, BK=16, B_ORDER=b_order,
                                                                       sg_layout=[2, 2], sg_data=[16, 16]), (3, 2)


def epilogue_case(rng):
    m, n, k = 64, 64, 48
    args = (rand(rng, (m, k), np.float16), rand(rng, (n, k), np.float16), rand(rng, (1, n), np.float32),
            np.zeros((m, n), np.float32), np.zeros((m, 1), np.float32), k)
    return epilogue, args, dict(BM=32, BN=32, sg_layout=[2, 2], sg_data=[16, 16]), (2, 2)


def column_major_case(rng):
    x = rand(rng, (40, 30), np.float32).T.copy().T  # column-major views of 30x40 logical matrices
    y = np.zeros((40, 30), np.float32).T
    z = rand(rng, (40, 30), np.float32).T
    return column_major_io, (x, y, z, 30, 40), {}, (2,)


def softmax_case(rng):
    x = rand(rng, (40, 50), np.float32)
    return softmax, (x, np.zeros((40, 50), np.float32)), dict(BM=16, BN=64), (3,)


def indexed_case(rng):
    x = rand(rng, (13, 27), np.float32)
    args = (x, np.zeros((16, 1), np.int32), np.zeros((16, 32), np.float32))
    return indexed, args, dict(LAYOUT=xetile.Layout(sg_layout=[2, 2], sg_data=[8, 16])), (1,)


CASES = {
    "gemm": lambda rng: gemm_case(rng, [1, 0]),
    "gemm-bt-order01": lambda rng: gemm_case(rng, [0, 1]),
    "epilogue": epilogue_case,
    "column-major-io": column_major_case,
    "softmax": softmax_case,
    "indexed": indexed_case,
    "two-mma-own-layouts": two_mma_case,
    "causal-attention": attention_case,
    "grouped-gemm": grouped_gemm_case,
    "batched-gemm": batched_gemm_case,
    "rows-1d": rows_1d_case,
}


def run_func(func, grid, args) -> list:
    """Runs `func` on copies of `args` (ints as i32 scalars); returns the arrays afterwards."""
    copies = [copy.deepcopy(a) for a in args]
    runtime = [a if isinstance(a, np.ndarray) else np.int32(a) for a in copies]
    run_ir(func, tuple(grid) + (1,) * (3 - len(grid)), runtime)
    return [a for a in copies if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("case", list(CASES))
def test_every_stage_keeps_the_numbers(rng, case):
    kern, args, kwargs, grid = CASES[case](rng)
    func = kern.warmup(*args, **kwargs, target="numpy").func
    reference = run_func(func, grid, args)
    for stage, lowered in lower(func).items():
        for got, want in zip(run_func(lowered, grid, args), reference):
            assert_close(got, want, np.float32)
    assert list(lower(func)) == STAGE_NAMES


def test_an_observer_sees_every_stage_a_launch_compiles_and_no_cached_one(rng, monkeypatch, tmp_path):
    """observing_stages hands over each stage's IR of the launch's compile, the IR the SPIR-V was built from; a
    launch the disk cache answers compiles nothing."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    kern, args, kwargs, grid = CASES["gemm"](rng)
    kern.cache.clear()  # another test on this worker may have compiled the same launch into the in-memory cache
    seen = []
    with observing_stages(lambda kernel, stage, func: seen.append((kernel, stage, print_func(func)))):
        compiled = kern.warmup(*args, **kwargs, target="cpu", device="opencl:cpu")
    assert [stage for _, stage, _ in seen] == STAGE_NAMES and {kernel for kernel, _, _ in seen} == {"gemm"}
    assert seen[STAGE_NAMES.index("xegpu-simt")][2] == compiled.asm["xegpu-simt"]
    kern.cache.clear()
    with observing_stages(lambda *stage: seen.append(stage)):
        kern.warmup(*args, **kwargs, target="cpu", device="opencl:cpu")
    assert len(seen) == len(STAGE_NAMES)


def test_column_major_tile_becomes_a_transposed_descriptor(rng):
    kern, args, kwargs, grid = gemm_case(rng, [0, 1])
    text = print_func(lower(kern.warmup(*args, **kwargs, target="numpy").func, "xegpu-wg")["xegpu-wg"])
    assert "memref.transpose %b (d0, d1) -> (d1, d0) : memref<?x?xf16, strided<[1, ?]>> to " \
           "memref<?x?xf16, strided<[?, 1]>>" in text
    load_b = [line for line in text.splitlines() if "transpose = [1, 0]" in line]
    assert len(load_b) == 1 and "-> vector<16x32xf16>" in load_b[0]
    assert ("!xegpu.tensor_desc<32x16xf16, #xegpu.layout<sg_layout = [2, 2], sg_data = [16, 16], "
            "inst_data = [16, 16], order = [0, 1]>>") in load_b[0]
    assert "xegpu.dpas" in text and "xetile." not in text


@xetile.kernel
def long_chain(x, out, N: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16]))
    for i in xetile.static_range(N):
        v = v + 1.0
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16]), v)


def test_a_long_kernel_lowers_without_deep_recursion(rng):
    """Fuzzer finding: the pipeline copied the kernel with copy.deepcopy, which follows use lists op to op and ran
    out of recursion on a long kernel; it clones instead."""
    x, out = rand(rng, (8, 16), np.float32), np.zeros((8, 16), np.float32)
    func = long_chain.warmup(x, out, N=2000, target="numpy").func
    run_ir(lower(func, "xegpu-wg")["xegpu-wg"], (1, 1, 1), [x, out])
    assert_close(out, x + 2000, np.float32)


def prefetch_positions(func) -> tuple[int, int]:
    """(prefetch_tile ops before the loop, inside it) of the kernel's one scf.for."""
    loop = next(op for op in walk(func.body) if isinstance(op, ForOp))
    inside = sum(isinstance(op, PrefetchTileOp) for op in walk(loop.body))
    return sum(isinstance(op, PrefetchTileOp) for op in walk(func.body)) - inside, inside


def prefetch_walk(func) -> list[tuple[int, Layout]]:
    """For each tile the kernel's one scf.for carries to prefetch: the moves from its init_tile to the position the
    first iteration prefetches, and its layout."""
    loop = next(op for op in walk(func.body) if isinstance(op, ForOp))
    found = []
    for tile, arg in zip(loop.operands[3:], loop.body.args[1:]):
        if not any(isinstance(op, PrefetchTileOp) for op, _ in arg.uses):
            continue
        moves = 0
        while isinstance(tile.owner, UpdateTileOffsetOp):
            moves, tile = moves + 1, tile.owner.operands[0]
        assert isinstance(tile.owner, InitTileOp)
        found.append((moves, tile.type.layout))
    return found


@pytest.mark.parametrize("distance", [1, 3])
def test_prefetch_distance_prefetches_walked_tiles_ahead_and_keeps_the_numbers(rng, distance):
    """transforms/xetile/prefetch_insertion.py on xe-hpc: the GEMM's two walked tiles get `distance` prologue
    prefetches each, and a prefetch tile each the loop carries, `distance` steps ahead of the load, prefetched once
    an iteration; those tiles have the cooperative layout: the 4 subgroups share A 32x16 in 8x16 pieces and B 16x32
    in 4x32 ones (one 2D prefetch message each, the widest: 32 and 64 bytes), not the loads' 2x2 split in which two
    subgroups prefetch each byte; every level still computes the same numbers."""
    kern, args, kwargs, grid = gemm_case(rng, [1, 0])
    func = kern.warmup(*args, **kwargs, target="numpy").func
    reference = run_func(func, grid, args)
    stages = lower(func, target="xe-hpc", num_subgroups=None, prefetch_distance=distance)
    assert prefetch_positions(stages["xetile-layouts"]) == (2 * distance, 2)
    assert prefetch_walk(stages["xetile-layouts"]) == [
        (distance, Layout([4, 1], [8, 16], inst_data=[8, 16])), (distance, Layout([4, 1], [4, 32], inst_data=[4, 32]))]
    for stage, lowered in stages.items():
        for got, want in zip(run_func(lowered, grid, args), reference):
            assert_close(got, want, np.float32)


@pytest.mark.parametrize("target", ["cpu", "xe-emulated", "xe-hpg"])
def test_prefetch_distance_is_a_no_op_without_a_2d_block_prefetch(rng, target):
    kern, args, kwargs, grid = gemm_case(rng, [1, 0])
    func = kern.warmup(*args, **{**kwargs, "sg_layout": None, "sg_data": None}, target="numpy").func
    stages = lower(func, "xetile-layouts", target=target, prefetch_distance=2)
    assert prefetch_positions(stages["xetile-layouts"]) == (0, 0)


def test_prefetch_distance_launch_option_keeps_the_numbers(rng, monkeypatch):
    """The launch option on the default device (a CPU target: no prefetch), and refused when not an int >= 0."""
    monkeypatch.setenv("XETILE_QUIET", "1")  # the case's odd sizes: B and C go element by element
    kern, args, kwargs, grid = gemm_case(rng, [1, 0])
    a, b, c, *sizes = args
    kern[grid](a, b, c, *sizes, **kwargs, prefetch_distance=2)
    assert_close(c, a.astype(np.float32) @ b.astype(np.float32), np.float32)
    with pytest.raises(xetile.LaunchError, match=r"prefetch_distance must be an int >= 0"):
        kern[grid](a, b, c, *sizes, **kwargs, prefetch_distance=-1)


def test_prefetch_distance_on_tiles_loaded_after_their_move_and_not_on_slm(rng):
    """Tutorial 8 moves its global tiles before loading them (lead 1) and reads shared local memory in the loop:
    the global tiles are prefetched from their second position on, the SLM ones not at all; same numbers."""
    slm = tutorial("08-slm-cooperative-gemm")
    m, n, k = 64, 64, 64
    args = (rand(rng, (m, k), np.float16), rand(rng, (k, n), np.float16), np.zeros((m, n), np.float32), m, n, k)
    func = slm.slm_gemm_kernel.warmup(*args, **slm.options(32, 32, 16), target="numpy").func
    grid = (2, 2)
    reference = run_func(func, grid, args)
    stages = lower(func, target="xe-hpc", prefetch_distance=2)
    assert prefetch_positions(stages["xetile-layouts"]) == (4, 2)
    assert [moves for moves, _ in prefetch_walk(stages["xetile-layouts"])] == [3, 3]  # lead 1 + distance 2
    for stage, lowered in stages.items():
        for got, want in zip(run_func(lowered, grid, args), reference):
            assert_close(got, want, np.float32)


def prefetched_layouts(func) -> list[Layout]:
    """The layouts of the tiles the kernel prefetches, in program order."""
    return [op.operands[0].type.layout for op in walk(func.body) if isinstance(op, PrefetchTileOp)]


def test_appendix_2_1_prefetch_tiles_keep_their_layouts(rng):
    """RFC Appendix 2.1 on 4 subgroups (its layouts scaled to a 32x32 tile: loads [2, 2], prefetches [4, 1] of 8x16
    and [1, 4] of 16x8): the user's prefetch layouts stay, completed with one message a piece, and prefetch_distance
    adds cooperative prefetch tiles of its own beside them (A [4, 1] of 8x16, B [4, 1] of 4x32); every level
    computes the numbers of the kernel without prefetches."""
    m, n, k = 40, 48, 64
    args = (rand(rng, (m, k), np.float16), rand(rng, (k, n), np.float16), np.zeros((m, n), np.float32), m, n, k)
    layouts = dict(LA=Layout([2, 2], [16, 16]), LB=Layout([2, 2], [16, 16]), PA=Layout([4, 1], [8, 16]),
                   PB=Layout([1, 4], [16, 8]))
    func = prefetched_gemm.warmup(*args, BM=32, BN=32, BK=16, **layouts, AHEAD=1, sg_layout=[2, 2],
                                  sg_data=[16, 16], target="numpy").func
    grid = (2, 2)
    reference = run_func(func, grid, args)
    assert_close(reference[2], args[0].astype(np.float32) @ args[1].astype(np.float32), np.float32)
    stages = lower(func, target="xe-hpc", prefetch_distance=1)
    given = [Layout([4, 1], [8, 16], inst_data=[8, 16]), Layout([1, 4], [16, 8], inst_data=[16, 8])]
    cooperative = [Layout([4, 1], [8, 16], inst_data=[8, 16]), Layout([4, 1], [4, 32], inst_data=[4, 32])]
    assert prefetched_layouts(stages["xetile-layouts"]) == cooperative + cooperative[::-1] + given
    for stage, lowered in stages.items():
        for got, want in zip(run_func(lowered, grid, args), reference):
            assert_close(got, want, np.float32)


def test_appendix_2_1_runs_on_the_device(rng, on_each_device):
    """The user's prefetch tiles in the interpreter and on opencl:cpu (the `cpu` target: prefetches lower to
    nothing, the layouts still split the tiles), with the numbers of numpy."""
    m, n, k = 64, 64, 64
    a, b = rand(rng, (m, k), np.float16), rand(rng, (k, n), np.float16)
    c = np.zeros((m, n), np.float32)
    layouts = dict(LA=Layout([2, 2], [16, 16]), LB=Layout([2, 2], [16, 16]), PA=Layout([4, 1], [8, 16]),
                   PB=Layout([1, 4], [16, 8]))
    prefetched_gemm[(2, 2)](a, b, c, m, n, k, BM=32, BN=32, BK=16, **layouts, sg_layout=[2, 2], sg_data=[16, 16])
    assert_close(c, a.astype(np.float32) @ b.astype(np.float32), np.float32)


@pytest.mark.parametrize("target", ["cpu", "xe-hpc"])
def test_float8_mma_operands_are_up_converted_after_their_loads_and_keep_the_numbers(rng, target):
    """Without FP8 DPAS (no target has it) tile_mma's FP8 A and B become f16 right after their loads, once each,
    by casts that free the NaN payload (DPAS cannot observe it), marked at every level; the interpreter gives the
    FP8 kernel's numbers at every level, each of which prints and parses back."""
    import ml_dtypes
    m, n, k = 33, 40, 72
    a = rand(rng, (m, k), np.float32).astype(ml_dtypes.float8_e4m3fn)
    b = rand(rng, (k, n), np.float32).astype(ml_dtypes.float8_e5m2)
    args, grid = (a, b, np.zeros((m, n), np.float32), m, n, k), (xetile.cdiv(m, 32), xetile.cdiv(n, 32))
    func = gemm.warmup(*args, BM=32, BN=32, BK=16, target="numpy").func
    reference = run_func(func, grid, args)
    stages = lower(func, target=target)
    loop_body = next(op for op in walk(stages["xetile-layouts"].body) if isinstance(op, ForOp)).regions[0].block
    casts = [op for op in loop_body.ops if op.name == "arith.extf"]
    assert [str(op.result.type.dtype) for op in casts] == ["f16", "f16"]
    assert all(op.any_nan_payload for op in casts)
    for cast in casts:
        load = loop_body.ops[loop_body.ops.index(cast) - 1]
        assert load.name == "xetile.load_tile" and cast.operands[0].owner is load
    mma = next(op for op in loop_body.ops if op.name == "xetile.tile_mma")
    assert [v.owner for v in mma.operands[:2]] == casts
    for lowered in stages.values():
        for got, want in zip(run_func(lowered, grid, args), reference):
            np.testing.assert_array_equal(got, want)
        text = print_func(lowered)
        assert print_func(parse_func(text)) == text
        marked = [op for op in walk(lowered.body) if op.name == "arith.extf" and op.operands[0].type.dtype.bits == 8]
        assert marked and all(op.any_nan_payload for op in marked)
        assert text.count("{any_nan_payload = true") == len(marked)
