"""Layout propagation reproduces the RFCs' worked examples and keeps every kernel's numbers."""
import re
from dataclasses import replace

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.target.targets import TARGETS, get_target
from conftest import AVX2, AVX512, assert_close, rand, tutorial
from xetile_jit.ir import interpreter
from xetile_jit.ir.interpreter import Interpreter
from xetile_jit.compiler.pipeline import lower
from xetile_jit.transforms.xetile.layout_propagation import cooperative_layout, default_layout
from xetile_jit.ir.attrs import Layout
from xetile_jit.ir.core import walk
from xetile_jit.ir.printer import print_func
from xetile_jit.ir.types import TileType
from xetile_jit.ir.xetile_ops import ConvertLayoutOp, layout_of
from test_passes import gemm, softmax, two_mma_case
from every_level import run_everywhere


def wg(sg_layout, sg_data, **fields) -> str:
    """A wg_map's text up to its workgroup fields (completion adds inst_data and lanes after them)."""
    return str(Layout(sg_layout, sg_data, **fields)).removesuffix(">")


def propagated(kern, *args, **kwargs):
    return lower(kern.warmup(*args, **kwargs, target="numpy").func, "xetile-layouts")["xetile-layouts"]


def lines_with(text: str, needle: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if needle in line]


def test_simple_gemm_matches_rfc_appendix_2_1():
    a, b, c = np.zeros((256, 64), np.float16), np.zeros((64, 256), np.float16), np.zeros((256, 256), np.float32)
    text = print_func(propagated(gemm, a, b, c, 256, 256, 64, BM=256, BN=256, BK=32, B_ORDER=[1, 0],
                                 sg_layout=[8, 4], sg_data=[32, 64]))
    mp_a, mp_b, mp_c = wg([8, 4], [32, 32]), wg([8, 4], [32, 64]), wg([8, 4], [32, 64])
    assert f"-> !xetile.tile<256x32xf16, #xetile.tile_attr<wg = {mp_a}" in lines_with(text, "init_tile %a")[0]
    assert f"-> !xetile.tile<32x256xf16, #xetile.tile_attr<wg = {mp_b}" in lines_with(text, "init_tile %b")[0]
    assert f"-> !xetile.tile<256x256xf32, #xetile.tile_attr<wg = {mp_c}" in lines_with(text, "init_tile %c")[0]
    assert f"{{wg_map = {mp_c}" in lines_with(text, "tile_mma")[0]
    assert "tile_conv_layout" not in text
    # completed for the target (cpu, as xe-hpc): the DPAS blocks where A and B are loaded, lanes per column
    assert "sg_data = [32, 32], inst_data = [8, 16]>" in lines_with(text, "init_tile %a")[0]
    assert "sg_data = [32, 64], inst_data = [16, 16]>" in lines_with(text, "init_tile %b")[0]
    assert "inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>}" in lines_with(text, "tile_mma")[0]


@xetile.kernel
def gemm_bias_rowsum(a, bt, bias, c, rs, K):
    """RFC Appendix 2.2: C = A @ transpose(BT) + broadcast(bias); rowsum(C) (summed over the column blocks)."""
    m = xetile.program_id(0) * 256
    n = xetile.program_id(1) * 256
    ta = xetile.init_tile(a, [m, 0], [256, 32])
    tbt = xetile.init_tile(bt, [n, 0], [256, 32])
    acc = xetile.zeros([256, 256], xetile.float32)
    for k in range(0, K, 32):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.tile_transpose(xetile.load_tile(tbt), [1, 0]), acc)
        ta = xetile.update_tile_offset(ta, [0, 32])
        tbt = xetile.update_tile_offset(tbt, [0, 32])
    v = acc + xetile.tile_broadcast(xetile.load_tile(xetile.init_tile(bias, [0, n], [1, 256])), [0], [256, 256])
    xetile.store_tile(xetile.init_tile(c, [m, n], [256, 256]), v)
    xetile.atomic_rmw_tile("add", xetile.tile_reduce("add", v, [1]), xetile.init_tile(rs, [m, 0], [256, 1]))


def appendix_2_2_args(rng, m=512, n=512, k=64):
    return (rand(rng, (m, k), np.float16), rand(rng, (n, k), np.float16), rand(rng, (1, n), np.float32),
            np.zeros((m, n), np.float32), np.zeros((m, 1), np.float32), k)


def test_transpose_broadcast_reduce_match_rfc_appendix_2_2(rng):
    """The RFC's layouts, but for the row sum: where the RFC converts the 256x256 f32 tile to rows whole in a
    subgroup (mp_reduce2, 256 KiB of SLM, twice PVC's), the reduction takes mp_c as it is and its result is
    mp_c's slice, shared by the four subgroups of a row (wg-to-sg exchanges partial sums)."""
    args = appendix_2_2_args(rng)
    text = print_func(propagated(gemm_bias_rowsum, *args, sg_layout=[8, 4], sg_data=[32, 64]))
    mp_a, mp_c = wg([8, 4], [32, 32]), wg([8, 4], [32, 64])
    mp_bt = wg([4, 8], [64, 32])  # the XeGPU RFC's #mp_bt, with order = [0, 1] (printed last)
    mp_bcast, mp_reduce = wg([8, 4], [1, 64]), wg([8, 4], [32, 1])
    assert f"wg = {mp_a}" in lines_with(text, "init_tile %a")[0]
    assert f"wg = {mp_bt}" in lines_with(text, "init_tile %bt")[0]
    assert "order = [0, 1]>" in lines_with(text, "init_tile %bt")[0]
    assert f"{{wg_map = {mp_c}" in lines_with(text, "tile_transpose")[0]
    assert f"wg = {mp_bcast}" in lines_with(text, "init_tile %bias")[0]
    assert f"{{wg_map = {mp_c}" in lines_with(text, "tile_broadcast")[0]
    assert "tile_conv_layout" not in text
    assert f"{{wg_map = {mp_reduce}" in lines_with(text, "tile_reduce")[0]
    assert f"wg = {mp_reduce}" in lines_with(text, "init_tile %rs")[0]


def run_ir(func, grid, args) -> None:
    Interpreter(func).run(grid + (1,) * (3 - len(grid)), args)


def test_propagation_keeps_the_numbers(rng):
    a, bt, bias, c, rs, k = appendix_2_2_args(rng, m=300, n=260, k=40)
    grid = (2, 2)
    func = propagated(gemm_bias_rowsum, a, bt, bias, c, rs, k, sg_layout=[8, 4], sg_data=[32, 64])
    run_ir(func, grid, [a, bt, bias, c, rs, np.int32(k)])
    expected = a.astype(np.float32) @ bt.astype(np.float32).T + bias
    assert_close(c, expected, np.float32, scale=40)
    assert_close(rs, expected.sum(1, keepdims=True), np.float32, scale=4000)


def tutorial_7(size: int, mp_bt: Layout | None = None):
    """Tutorial 7 (RFC Appendix 2.2 with every op's own layout) at a size x size x 32 tile, propagated; `mp_bt`
    instead of the tutorial's B^T layout when given."""
    t = tutorial("07-gemm-bias-reduce")
    mp_a, bt_layout, *rest = t.layouts(size, size, 32)
    a = np.zeros((2 * size, 64), np.float16)
    return propagated(t.gemm_bias_reduce, a, a, np.zeros((1, 2 * size), np.float32),
                      np.zeros((2 * size, 1), np.float32), 64, BM=size, BN=size, BK=32,
                      L=(mp_a, mp_bt or bt_layout, *rest))


def test_appendix_2_2_row_sum_reads_mp_c_without_the_conversion_to_whole_rows():
    """The RFC converts C (256x256 f32, mp_c) to mp_reduce2 (whole rows a subgroup) before the row sum: 256 KiB of
    SLM. mp_c splits no row between two subgroups holding the same elements, so the tile_reduce reads C as it is
    and keeps its own result layout, mp_reduce (wg-to-sg exchanges the partial sums)."""
    func = tutorial_7(256)
    assert not any(isinstance(op, ConvertLayoutOp) for op in walk(func.body))
    (reduce,) = [op for op in walk(func.body) if op.name == "xetile.tile_reduce"]
    assert layout_of(reduce.operands[0]).workgroup_level() == Layout([8, 4], [32, 64])
    assert layout_of(reduce.result).workgroup_level() == Layout([32, 1], [8, 1])


def test_appendix_2_3_optimized_mapping_is_the_transposed_mp_b():
    """RFC Appendix 2.3's B^T layout, sg_layout [32, 1], sg_data [64, 32], gives subgroup s rows 64 (s mod 4) of
    the 256x32 tile: the rows of mp_b's columns it holds after the transpose (mp_b swapped: sg_layout [4, 8],
    order [0, 1]). The tile takes that layout and no conversion is inserted; the RFC's first mapping, sg_layout
    [4, 8] row-major, gives subgroup s rows 64 (s div 8) and is converted."""
    func = tutorial_7(256, Layout([32, 1], [64, 32]))
    bt = next(op.result for op in walk(func.body) if op.name == "xetile.init_tile" and op.operands[0] is func.args[1])
    assert layout_of(bt).workgroup_level() == Layout([4, 8], [64, 32], order=[0, 1])
    assert not any(isinstance(op, ConvertLayoutOp) for op in walk(func.body))
    first = tutorial_7(256, Layout([4, 8], [64, 32]))
    (convert,) = [op for op in walk(first.body) if isinstance(op, ConvertLayoutOp)]
    assert layout_of(convert.result).workgroup_level() == Layout([4, 8], [64, 32], order=[0, 1])


def test_without_layouts_small_values_get_the_one_subgroup_default():
    x = np.zeros((8, 32), np.float32)  # 1 KiB: Target.subgroup_value_bytes
    func = propagated(softmax, x, x.copy(), BM=8, BN=32)
    layouts = {layout_of(v).workgroup_level() for op in walk(func.body) for v in op.results
               if hasattr(v.type, "shape") and v.type.shape}
    assert layouts == {Layout([1, 1], [8, 32]), Layout([1, 1], [8, 1])}
    assert not any(isinstance(op, ConvertLayoutOp) for op in walk(func.body))


@xetile.kernel
def cooperative_a(a, b, c):
    """The A tile is loaded with a layout of its own (cooperative load), so the mma operand is converted."""
    ta = xetile.init_tile(a, [0, 0], [64, 32], layout=xetile.Layout([4, 1], [16, 32]))
    tb = xetile.init_tile(b, [0, 0], [32, 64])
    xetile.store_tile(xetile.init_tile(c, [0, 0], [64, 64]), xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb)))


def test_conflicting_layouts_meet_through_a_conversion(rng):
    a, b, c = rand(rng, (64, 32), np.float16), rand(rng, (32, 64), np.float16), np.zeros((64, 64), np.float32)
    func = propagated(cooperative_a, a, b, c, sg_layout=[2, 2], sg_data=[32, 32])
    text = print_func(func)
    conversion = lines_with(text, "tile_conv_layout")[0]
    assert f"{{src_wg_map = {wg([4, 1], [16, 32])}" in conversion and f"wg_map = {wg([2, 2], [32, 32])}" in conversion
    converted = re.search(r"(%\d+) = xetile.tile_conv_layout", text).group(1)
    assert re.search(rf"xetile.tile_mma {converted}, ", text)
    run_ir(func, (1,), [a, b, c])
    assert_close(c, a.astype(np.float32) @ b.astype(np.float32), np.float32, scale=32)


@pytest.mark.parametrize("shape, subgroups, expected", [
    ((64, 32), 4, ([4, 1], [16, 32])), ((16, 1024), 16, ([16, 1], [1, 1024])),  # rows only: row reductions stay
    ((6, 32), 4, ([2, 2], [3, 16])), ((6, 10), 4, ([2, 2], [3, 5])), ((1, 1024), 16, ([1, 16], [1, 64])),
    ((16, 1024), 32, ([16, 2], [1, 512])), ((12, 6), 8, ([4, 2], [3, 3])),  # columns take what rows cannot
    ((6, 7), 4, ([4, 1], [3, 7])), ((7, 6), 4, ([1, 4], [7, 3])),  # rows or columns as far as they divide, copies
    ((5, 7), 4, ([4, 1], [5, 7])), ((16, 16), 1, ([1, 1], [16, 16]))])
def test_default_layout(shape, subgroups, expected):
    layout = default_layout(shape, subgroups)
    assert layout == Layout(*expected)
    assert layout.num_subgroups == subgroups


@xetile.kernel
def mma_then_elementwise(a, b, c, d):
    """Every value of a 4-subgroup kernel gets 4 subgroups, also the ones tile_mma does not reach."""
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [32, 16])),
                          xetile.load_tile(xetile.init_tile(b, [0, 0], [16, 32])))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [32, 32]), xetile.maximum(acc, 0.0))
    xetile.store_tile(xetile.init_tile(d, [0, 0], [8, 32]), xetile.zeros([8, 32], xetile.float32) + 1.0)


def test_unanchored_values_use_the_kernels_subgroup_count():
    a, b = np.zeros((32, 16), np.float16), np.zeros((16, 32), np.float16)
    c, d = np.zeros((32, 32), np.float32), np.zeros((8, 32), np.float32)
    text = print_func(propagated(mma_then_elementwise, a, b, c, d, sg_layout=[2, 2], sg_data=[16, 16]))
    assert f"wg = {wg([2, 2], [16, 16])}" in lines_with(text, "init_tile %c")[0]
    assert f"wg = {wg([4, 1], [2, 32])}" in lines_with(text, "init_tile %d")[0]


@xetile.kernel
def two_anchors(x, y, out):
    a = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 8], layout=xetile.Layout([4, 1], [4, 8])))
    b = xetile.load_tile(xetile.init_tile(y, [0, 0], [16, 8], layout=xetile.Layout([1, 4], [16, 2])))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [16, 8]), a + b)


def test_two_anchored_tiles_meet_through_a_conversion(rng):
    """Fuzzer case: element-wise operands with two user layouts are not forced into one class; the second is
    converted to the first's layout where they meet, and the numbers hold."""
    x, y, out = rand(rng, (16, 8), np.float32), rand(rng, (16, 8), np.float32), np.zeros((16, 8), np.float32)
    func = propagated(two_anchors, x, y, out)
    (convert,) = [op for op in walk(func.body) if isinstance(op, ConvertLayoutOp)]
    assert convert.result.layout.workgroup_level() == Layout([4, 1], [4, 8])
    run_ir(func, (1,), [x, y, out])
    assert_close(out, x + y, np.float32)


# ---- kernels without anchors: spread over subgroups, rows first ------------------------------------------------------

@xetile.kernel
def layer_norm(x, w, y, N, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
    mean = xetile.tile_reduce("add", rows, [1]) / N
    var = xetile.tile_reduce("add", rows * rows, [1]) / N - mean * mean
    weight = xetile.load_tile(xetile.init_tile(w, [0, 0], [1, BN]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), (rows - mean) * xetile.rsqrt(var + 1e-5) * weight)


def softmax_reference(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def layer_norm_reference(x, w):
    return (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * w


@pytest.mark.parametrize("num_subgroups, sg_layout, sg_data", [
    (None, [32, 1], [1, 256]),  # 32x256 f32 is 32 KiB: 32 subgroups of 1 KiB, whole rows each
    (2, [2, 1], [16, 256]),
    (64, [32, 2], [1, 128])])   # more subgroups than rows: the row reductions exchange partial sums
def test_kernels_without_anchors_spread_over_subgroups(rng, num_subgroups, sg_layout, sg_data):
    x = rand(rng, (40, 200), np.float32)
    y = np.zeros_like(x)
    levels = lower(softmax.warmup(x, y, BM=32, BN=256, target="numpy").func, "xegpu-sg", "cpu", num_subgroups)
    loads = lines_with(print_func(levels["xetile-layouts"]), "xetile.load_tile")
    assert loads and all(f"wg = {wg(sg_layout, sg_data)}" in line for line in loads)
    assert levels["xegpu-sg"].num_subgroups == np.prod(sg_layout)
    interpreter.run_ir(levels["xegpu-sg"], (2, 1, 1), [x, y])
    assert_close(y, softmax_reference(x), np.float32)



@pytest.mark.parametrize("target, shape, sg_layout, sg_data", [
    ("xe-emulated", (16, 1024), [16, 4], [1, 256]),  # 64 KiB: 64 subgroups of 1 KiB, 4 on each row
    ("xe-hpc", (16, 1024), [16, 4], [1, 256]),
    ("cpu", (16, 1024), [16, 1], [1, 1024]),  # Target.whole_row_bytes: one subgroup a row, 4 KiB each
    ("cpu", (1, 4096), [1, 1], [1, 4096]),  # 16 KiB, whole
    ("cpu", (1, 8192), [1, 2], [1, 4096])])  # a whole row would be 32 KiB: 2 subgroups of 16 KiB
def test_the_cpu_target_keeps_rows_whole(rng, target, shape, sg_layout, sg_data):
    assert_softmax_layout(rng, target, shape, sg_layout, sg_data)


@xetile.kernel
def column_ops(x, sums, scanned, BM: xetile.constexpr, BN: xetile.constexpr, ROWS_TOO: xetile.constexpr):
    """Column sums and a running max down the columns (with ROWS_TOO, row sums as well)."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(sums, [0, 0], [1, BN]), xetile.tile_reduce("add", v, [0]))
    scan = xetile.associative_scan(v, 0, xetile.maximum)
    if ROWS_TOO:
        scan = scan + xetile.tile_broadcast(xetile.tile_reduce("add", v, [1]), [1], [BM, BN])
    xetile.store_tile(xetile.init_tile(scanned, [0, 0], [BM, BN]), scan)


@pytest.mark.parametrize("target, shape, rows_too, sg_layout, sg_data", [
    ("cpu", (16, 64), False, [1, 4], [16, 16]),  # 4 KiB: 4 subgroups, each 16 whole columns
    ("cpu", (32, 256), False, [1, 16], [32, 16]),  # 32 KiB: 32 subgroups would hold 8 columns each, so 16
    ("xe-hpc", (16, 64), False, [1, 4], [16, 16]),
    ("xe-hpc", (16, 64), True, [4, 1], [4, 64])])  # row sums too: rows first, as for every other kernel
def test_a_kernel_that_works_down_its_columns_splits_them(rng, target, shape, rows_too, sg_layout, sg_data):
    """A kernel without anchors whose reductions and scans all go down the columns takes subgroups of whole columns,
    at least a block wide, so they move no data between subgroups: no barrier at the subgroup level (rows split
    over 4 subgroups took 8 for the column sum and the scan's strides). The numbers are numpy's."""
    x = rand(rng, shape, np.float32)
    sums, scanned = np.zeros((1, shape[1]), np.float32), np.zeros_like(x)
    levels = lower(column_ops.warmup(x, sums, scanned, BM=shape[0], BN=shape[1], ROWS_TOO=rows_too,
                                     target="numpy").func, "xegpu-sg", target)
    loads = lines_with(print_func(levels["xetile-layouts"]), "xetile.load_tile")
    assert loads and all(f"wg = {wg(sg_layout, sg_data)}" in line for line in loads)
    assert ("gpu.barrier" in print_func(levels["xegpu-sg"])) == rows_too
    interpreter.run_ir(levels["xegpu-sg"], (1, 1, 1), [x, sums, scanned])
    expected = np.maximum.accumulate(x, 0) + (x.sum(1, keepdims=True) if rows_too else 0)
    assert_close(sums, x.sum(0, keepdims=True), np.float32, scale=shape[0])
    assert_close(scanned, expected, np.float32, scale=shape[1])


def assert_softmax_layout(rng, target: str, shape, sg_layout, sg_data, dtype=np.float32, inst=None) -> None:
    """A softmax of one `shape` tile of `dtype` takes the default layout `sg_layout` x `sg_data` (in blocks `inst`
    where given) on `target`, and its subgroup-level IR computes softmax."""
    x = rand(rng, shape, dtype)
    y = np.zeros_like(x)
    levels = lower(softmax.warmup(x, y, BM=shape[0], BN=shape[1], target="numpy").func, "xegpu-sg", target)
    loads = lines_with(print_func(levels["xetile-layouts"]), "xetile.load_tile")
    expected = wg(sg_layout, sg_data, **({} if inst is None else {"inst_data": inst}))
    assert loads and all(f"wg = {expected}" in line for line in loads)
    interpreter.run_ir(levels["xegpu-sg"], (1, 1, 1), [x, y])
    assert_close(y, softmax_reference(x), dtype)


@pytest.mark.parametrize("cpu, shape, sg_layout, sg_data", [
    (AVX512, (16, 128), [16, 1], [1, 128]),  # Target.one_row_a_subgroup: one row a subgroup, not 1 KiB of two
    (AVX512, (64, 128), [64, 1], [1, 128]),
    (AVX512, (16, 64), [4, 1], [4, 64]),  # shorter rows: 1 KiB a subgroup
    (AVX2, (16, 64), [16, 1], [1, 64]),  # 16 vector registers: from 64 columns on
    (AVX2, (16, 32), [2, 1], [8, 32]),
    (AVX2, (4, 64), [1, 1], [4, 64]),  # 1 KiB: one subgroup
    (None, (16, 128), [8, 1], [2, 128])], ids=["avx512-128", "avx512-64rows", "avx512-64", "avx2-64", "avx2-32",
                                               "avx2-one", "xe-hpc"])
def test_rows_of_a_loop_over_blocks_are_one_subgroup_each_on_the_cpu_target(rng, monkeypatch, cpu, shape, sg_layout,
                                                                            sg_data):
    """On the `cpu` target a row of 128 columns or more (8 blocks: a loop over them) is one subgroup's, rather than
    1 KiB of two rows in blocks of two rows; with AVX2 from 64 columns on. A GPU target keeps 1 KiB a subgroup
    (xe-hpc: 8 KiB on 8)."""
    if cpu is not None:
        monkeypatch.setitem(TARGETS, "cpu", replace(TARGETS["cpu"], cpu=cpu))
    assert_softmax_layout(rng, "cpu" if cpu is not None else "xe-hpc", shape, sg_layout, sg_data)


@pytest.mark.parametrize("cpu, dtype, sg_layout, sg_data, inst", [
    (AVX2, np.float16, [1, 1], [16, 32], [1, 16]),  # 16-bit block loops stay rolled with AVX2: one row a block
    (AVX2, np.float32, [2, 1], [8, 32], [8, 16]),
    (AVX512, np.float16, [1, 1], [16, 32], [8, 16])], ids=["avx2-f16", "avx2-f32", "avx512-f16"])
def test_values_moved_by_rolled_block_loops_take_blocks_of_one_row_on_the_cpu_target(rng, monkeypatch, cpu, dtype,
                                                                                     sg_layout, sg_data, inst):
    """On the `cpu` target a value loaded or stored as elements whose block loads and stores keep their loops over
    a lane's components rolled (CpuFeatures.unrolls_blocks: 16-bit ones with AVX2) takes blocks of one row
    (Target.one_row_rolled_blocks), one component a lane; f32 with AVX2, and f16 with AVX-512, keep the DPAS C
    block [8, 16]."""
    monkeypatch.setitem(TARGETS, "cpu", replace(TARGETS["cpu"], cpu=cpu))
    assert_softmax_layout(rng, "cpu", (16, 32), sg_layout, sg_data, dtype, inst)


def test_num_subgroups_must_match_the_anchors():
    a, b = np.zeros((32, 16), np.float16), np.zeros((16, 32), np.float16)
    c, d = np.zeros((32, 32), np.float32), np.zeros((8, 32), np.float32)
    func = mma_then_elementwise.warmup(a, b, c, d, sg_layout=[2, 2], sg_data=[16, 16], target="numpy").func
    assert lower(func, "xetile-layouts", "cpu", 4)["xetile-layouts"] is not None
    with pytest.raises(xetile.CompilationError, match=r"num_subgroups=8 but layout .* has 4 subgroups"):
        lower(func, "xetile-layouts", "cpu", 8)


@pytest.mark.usefixtures("on_each_device")
@pytest.mark.parametrize("num_subgroups", [None, 8])
def test_default_layout_keeps_the_numbers_on_each_device(rng, num_subgroups):
    """Layer norm and softmax, launched with no layout: in the interpreter and as SPIR-V. On a device the artifact
    has the subgroups the rule gives (16x256 f32: 16 KiB, 16 subgroups of a row) or num_subgroups asks for."""
    x, w = rand(rng, (40, 200), np.float32), rand(rng, (1, 200), np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    options = {} if num_subgroups is None else {"num_subgroups": num_subgroups}
    layer_norm[(3,)](x, w, y, 200, BM=16, BN=256, **options)
    softmax[(3,)](x, z, BM=16, BN=256, **options)
    assert_close(y, layer_norm_reference(x, w), np.float32, scale=10)
    assert_close(z, softmax_reference(x), np.float32)
    if xetile.default_device() != "numpy":
        compiled = layer_norm.warmup(x, w, y, 200, BM=16, BN=256, **options)
        assert compiled.artifact.num_subgroups == (num_subgroups or 16)
        assert f"num_subgroups = {num_subgroups or 16}" in compiled.asm["xegpu-sg"]


@xetile.kernel
def weight_first(x, w, y):
    weight = xetile.load_tile(xetile.init_tile(w, [0, 0], [1, 256]))
    rows = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 256]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 256]), rows / xetile.tile_reduce("add", rows, [1]) * weight)


def test_the_largest_value_takes_the_default_layout(rng):
    """The [1, 256] weight comes first in the kernel, but the 32x256 rows decide: split by rows over 32 subgroups,
    the weight broadcast to each, the row sums inside each subgroup (no shared local memory)."""
    x, w, y = rand(rng, (32, 256), np.float32, 1, 4), rand(rng, (1, 256), np.float32), np.zeros((32, 256), np.float32)
    levels = lower(weight_first.warmup(x, w, y, target="numpy").func, "xegpu-sg", "cpu")
    text = print_func(levels["xetile-layouts"])
    assert f"wg = {wg([32, 1], [1, 256])}" in lines_with(text, "init_tile %x")[0]
    assert f"wg = {wg([32, 1], [1, 256])}" in lines_with(text, "init_tile %w")[0]
    assert "slm" not in print_func(levels["xegpu-sg"])
    interpreter.run_ir(levels["xegpu-sg"], (1, 1, 1), [x, w, y])
    assert_close(y, x / x.sum(1, keepdims=True) * w, np.float32)


@pytest.mark.parametrize("num_subgroups, mma_layout", [(None, ([1, 1], [32, 32])), (4, ([4, 1], [8, 32]))])
def test_a_tile_mma_without_anchor_splits_its_result_into_whole_dpas_blocks(rng, num_subgroups, mma_layout):
    """Unasked, the 32x32 f32 result (4 KiB) is one subgroup's accumulator (Target.accumulator_bytes)."""
    a, b = rand(rng, (32, 16), np.float16), rand(rng, (16, 32), np.float16)
    c, d = np.zeros((32, 32), np.float32), np.zeros((8, 32), np.float32)
    levels = lower(mma_then_elementwise.warmup(a, b, c, d, target="numpy").func, "xegpu-sg", "cpu", num_subgroups)
    assert f"wg_map = {wg(*mma_layout)}" in lines_with(print_func(levels["xetile-layouts"]), "tile_mma")[0]
    interpreter.run_ir(levels["xegpu-sg"], (1, 1, 1), [a, b, c, d])
    assert_close(c, np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0), np.float32, scale=16)
    np.testing.assert_array_equal(d, 1.0)


@xetile.kernel
def mma_row_sums(a, b, s):
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [64, 16])),
                          xetile.load_tile(xetile.init_tile(b, [0, 0], [16, 64])))
    xetile.store_tile(xetile.init_tile(s, [0, 0], [64, 1]), xetile.tile_reduce("add", acc, [1]))


@xetile.kernel
def mma_64(a, b, c):
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [64, 16])),
                          xetile.load_tile(xetile.init_tile(b, [0, 0], [16, 64])))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [64, 64]), acc)


def test_a_large_tile_mma_without_anchor_takes_accumulators_of_whole_dpas_blocks(rng):
    """64x64 f32 (16 KiB) in 4 KiB accumulators: 4 subgroups of 16 rows, A split with C, B whole in each."""
    a, b, c = rand(rng, (64, 16), np.float16), rand(rng, (16, 64), np.float16), np.zeros((64, 64), np.float32)
    levels = lower(mma_64.warmup(a, b, c, target="numpy").func, "xegpu-sg", "cpu")
    text = print_func(levels["xetile-layouts"])
    assert f"wg_map = {wg([4, 1], [16, 64])}" in lines_with(text, "tile_mma")[0]
    assert f"wg = {wg([4, 1], [16, 16])}" in lines_with(text, "init_tile %a")[0]
    interpreter.run_ir(levels["xegpu-sg"], (1, 1, 1), [a, b, c])
    assert_close(c, a.astype(np.float32) @ b.astype(np.float32), np.float32, scale=16)


def test_a_tile_mma_without_anchor_that_reduces_keeps_one_subgroup(rng):
    """64x64 f32 would take 4 subgroups; the row sums keep it on one."""
    a, b, s = rand(rng, (64, 16), np.float16), rand(rng, (16, 64), np.float16), np.zeros((64, 1), np.float32)
    levels = lower(mma_row_sums.warmup(a, b, s, target="numpy").func, "xegpu-sg", "cpu")
    assert f"wg_map = {wg([1, 1], [64, 64])}" in lines_with(print_func(levels["xetile-layouts"]), "tile_mma")[0]
    interpreter.run_ir(levels["xegpu-sg"], (1, 1, 1), [a, b, s])
    assert_close(s, (a.astype(np.float32) @ b.astype(np.float32)).sum(1, keepdims=True), np.float32, scale=64)


def test_op_layouts_are_anchors(rng):
    """Each op's `layout=` is its result's wg_map in the IR (the RFC's per-op #mp annotations); a convert_layout
    is the RFC's tile_conv_layout."""
    kern, args, layouts, _ = two_mma_case(rng)
    text = print_func(propagated(kern, *args, **layouts))
    assert f"{{wg_map = {wg([2, 2], [16, 16])}" in lines_with(text, "tile_mma")[0]
    assert f"{{wg_map = {wg([4, 1], [8, 32])}" in lines_with(text, "tile_mma")[1]
    assert f"{{wg_map = {wg([4, 1], [8, 1])}" in lines_with(text, "tile_reduce <add>")[0]
    assert any(f"wg_map = {wg([4, 1], [8, 32])}" in line for line in lines_with(text, "tile_conv_layout"))


def test_two_tile_mma_with_their_own_layouts_on_each_device(rng, on_each_device):
    kern, (q, kt, v, o), layouts, grid = two_mma_case(rng)
    kern[grid](q, kt, v, o, **layouts)
    s = q.astype(np.float32) @ kt.astype(np.float32).T
    p = np.exp(s - s.max(1, keepdims=True))
    expected = p.astype(np.float16).astype(np.float32) @ v.astype(np.float32) / p.sum(1, keepdims=True)
    assert_close(o, expected, np.float32, scale=400)


@xetile.kernel
def mma_into(a, b, c, C_LAYOUT: xetile.constexpr):
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [64, 32])),
                          xetile.load_tile(xetile.init_tile(b, [0, 0], [32, 64])))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [64, 64], layout=C_LAYOUT), acc)


def test_tile_mma_operands_take_the_order_of_its_result(rng):
    """With `order` [0, 1] subgroup s holds the (s mod 4, s div 4) piece of C, so its A rows and B columns are
    the ones of that piece: the operands' layouts carry the result's order, and every level keeps the numbers
    (small integers, so that every order of the sums gives the same bits)."""
    a, b = (rng.integers(-8, 8, shape).astype(np.float32) for shape in ((64, 32), (32, 64)))
    c_layout = Layout([4, 2], [16, 32], order=[0, 1])
    func = propagated(mma_into, a, b, np.zeros((64, 64), np.float32), C_LAYOUT=c_layout)
    a_tile, b_tile, _ = [op.result for op in walk(func.body) if op.name == "xetile.init_tile"]
    assert layout_of(a_tile).workgroup_level() == Layout([4, 2], [16, 32], order=[0, 1])
    assert layout_of(b_tile).workgroup_level() == Layout([4, 2], [32, 32], order=[0, 1])
    c = run_everywhere(mma_into, {"a": a, "b": b, "c": np.zeros((64, 64), np.float32)}, (1,), C_LAYOUT=c_layout)["c"]
    np.testing.assert_array_equal(c, a @ b)


@xetile.kernel
def scaled_rows(x, y, LAYOUT: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [64, 32], layout=LAYOUT))
    s = xetile.tile_reduce("add", v, [1])
    xetile.store_tile(xetile.init_tile(y, [0, 0], [64, 32]), v * xetile.tile_broadcast(s, [1], [64, 32]))


BLOCKS_ONLY = Layout(inst_data=[8, 16])  # the RFC's inner blocks, no workgroup map


def test_inst_data_alone_is_the_blocking_of_each_subgroups_piece():
    """Propagation gives the tile the workgroup map (the default for 8 KiB: 8 subgroups of 8 rows, whole 8x16
    blocks) and keeps its blocks."""
    x = np.zeros((64, 32), np.float32)
    func = propagated(scaled_rows, x, x.copy(), LAYOUT=BLOCKS_ONLY)
    layout = layout_of(next(op.result for op in walk(func.body) if op.name == "xetile.init_tile"))
    assert (layout.sg_layout, layout.sg_data, layout.inst_data) == ((8, 1), (8, 32), (8, 16))


@pytest.mark.usefixtures("on_each_device")
@pytest.mark.parametrize("num_subgroups", [None, 2, 8])
def test_inst_data_alone_keeps_the_numbers(rng, num_subgroups):
    x = rand(rng, (64, 32), np.float32)
    y = np.zeros_like(x)
    scaled_rows[(1,)](x, y, LAYOUT=BLOCKS_ONLY, **({"num_subgroups": num_subgroups} if num_subgroups else {}))
    assert_close(y, x * x.sum(1, keepdims=True), np.float32, scale=8)


def test_inst_data_alone_must_divide_the_value():
    x = np.zeros((64, 32), np.float32)
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "inst_data[1] = 12 does not divide dim 1 = 32 of the value [without sg_layout, inst_data divides the "
            "value]")):
        scaled_rows.warmup(x, x.copy(), LAYOUT=Layout(inst_data=[8, 12]), target="numpy")


@pytest.mark.parametrize("shape, dtype, subgroups, target, expected", [
    ((256, 32), xetile.float16, 32, "xe-hpc", Layout([32, 1], [8, 32])),  # RFC Appendix 2.1's #mp_a_pfh
    ((32, 256), xetile.float16, 32, "xe-hpc", Layout([4, 8], [8, 32])),  # #mp_b_pfh
    ((32, 256), xetile.float32, 32, "xe2", Layout([2, 16], [16, 16])),  # 64 bytes wide: 16 f32
    ((128, 64), xetile.float16, 4, "xe-hpc", Layout([4, 1], [32, 64])),  # 2 of 32x32: none fewer; whole rows
    ((3, 5), xetile.float16, 4, "xe-hpc", None),  # no exact split over 4 subgroups
    ((256, 32), xetile.float16, 32, "xe-hpg", None),  # no 2D block messages
])
def test_cooperative_layout_splits_a_prefetched_tile_over_all_subgroups(shape, dtype, subgroups, target, expected):
    """A tile only prefetched: every subgroup a different piece (each byte prefetched once a workgroup), each piece
    the fewest 2D prefetch messages, the widest of the splits as good."""
    assert cooperative_layout(TileType(shape, dtype), subgroups, get_target(target)) == expected
