"""`xetile.reduce` and `xetile.associative_scan` with a combine function of the user's, over one or several tiles:
Welford mean and variance, argmax with ties to the lower index, a segmented scan. In the interpreter at every IR
level (each level gives the xetile level's numbers bit for bit: one association order everywhere, the tree of
ir/combine_ops.py), on opencl:cpu for the cpu and xe-emulated targets, against numpy; on one subgroup and across a
2x2 grid of subgroups."""
import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import dtype_id, rand, target_options
from test_passes import run_func
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir.core import walk
from xetile_jit.language.indexed import expand_combines
from xetile_jit.errors import CompilationError
from xetile_jit.target.targets import get_target
from xetile_jit.toolchain import ocloc

# the (BM, 1) and (1, BN) outputs are too narrow for 2D block messages: element by element, as intended
pytestmark = pytest.mark.filterwarnings("ignore::xetile_jit.BlockIOFallbackWarning")
constexpr = xetile.constexpr
LAYOUTS = {"one_subgroup": None, "2x2_subgroups": xetile.Layout(sg_layout=[2, 2], sg_data=[8, 16])}
SHAPES = {"16x32": (16, 32), "32x64": (32, 64)}


@xetile.kernel
def welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    delta = mean_b - mean_a
    w = xetile.where(n == 0.0, 0.0, n_b / n)
    return mean_a + delta * w, m2_a + m2_b + delta * delta * n_a * w, n


@xetile.kernel
def welford(src, mean, var, AXIS: constexpr, LAYOUT: constexpr, BM: constexpr, BN: constexpr):
    x = xetile.load_tile(xetile.init_tile(src, [0, 0], [BM, BN], layout=LAYOUT))
    m, m2, n = xetile.reduce((x, xetile.zeros([BM, BN], xetile.float32), xetile.full([BM, BN], 1.0, xetile.float32)),
                             AXIS, welford_combine)
    shape = [1, BN] if AXIS == 0 else [BM, 1]
    xetile.store_tile(xetile.init_tile(mean, [0, 0], shape), m)
    xetile.store_tile(xetile.init_tile(var, [0, 0], shape), m2 / n)


@xetile.kernel
def argmax_combine(value_a, index_a, value_b, index_b):
    b_wins = (value_b > value_a) | ((value_b == value_a) & (index_b < index_a))
    return xetile.where(b_wins, value_b, value_a), xetile.where(b_wins, index_b, index_a)


@xetile.kernel
def argmax(src, values, indices, AXIS: constexpr, LAYOUT: constexpr, BM: constexpr, BN: constexpr):
    x = xetile.load_tile(xetile.init_tile(src, [0, 0], [BM, BN], layout=LAYOUT))
    v, i = xetile.reduce((x, xetile.iota([BM, BN], AXIS)), AXIS, argmax_combine)
    shape = [1, BN] if AXIS == 0 else [BM, 1]
    xetile.store_tile(xetile.init_tile(values, [0, 0], shape), v)
    xetile.store_tile(xetile.init_tile(indices, [0, 0], shape), i)


@xetile.kernel
def segment_combine(sum_a, start_a, sum_b, start_b):
    return xetile.where(start_b != 0, sum_b, sum_a + sum_b), start_a | start_b


@xetile.kernel
def segmented_sum(src, starts, dst, AXIS: constexpr, LAYOUT: constexpr, BM: constexpr, BN: constexpr):
    x = xetile.load_tile(xetile.init_tile(src, [0, 0], [BM, BN], layout=LAYOUT))
    f = xetile.load_tile(xetile.init_tile(starts, [0, 0], [BM, BN], layout=LAYOUT))
    sums, _ = xetile.associative_scan((x, f), AXIS, segment_combine)
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [BM, BN]), sums)


@xetile.kernel
def largest(a, b):
    return xetile.maximum(a, b)


@xetile.kernel
def running_max(src, dst, AXIS: constexpr, BM: constexpr, BN: constexpr):
    x = xetile.load_tile(xetile.init_tile(src, [0, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [BM, BN]), xetile.associative_scan(x, AXIS, largest))


def run_everywhere(device, kern, arrays, consts) -> list[list[np.ndarray]]:
    """The output arrays from the interpreter at the xetile level and every lowered level (which must agree bit for
    bit), or from opencl:cpu for each CPU target."""
    if device == "numpy":
        func = kern.warmup(*arrays, **consts, target="numpy").func
        results = [run_func(level, (1,), arrays) for level in [func, *lower(func).values()]]
        for other in results[1:]:
            for got, want in zip(other, results[0]):
                np.testing.assert_array_equal(got, want)
        return results
    results = []
    for options in target_options(device):
        copies = [a.copy() for a in arrays]
        kern[(1,)](*copies, **consts, **options)
        results.append(copies)
    return results


def cases():
    """Both axes on both layouts at 16x32, and the larger shape once."""
    return [(axis, layout, "16x32") for axis in (0, 1) for layout in LAYOUTS] + [(0, "2x2_subgroups", "32x64")]


# the driver builds each case for seconds (each stride of the tree is a copy of the combine, docs/performance.md):
# opencl:cpu runs one case whose rotations stay in a subgroup's registers and one whose rotations go through SLM
DEVICE_CASES = {(1, "one_subgroup", "16x32"), (0, "2x2_subgroups", "16x32")}


def representative_on_device(device: str, case) -> None:
    if device != "numpy" and case not in DEVICE_CASES:
        pytest.skip("opencl:cpu runs the representative cases: rotations in registers and through SLM")


def case_id(case) -> str:
    axis, layout, shape = case
    return f"axis{axis}-{layout}-{shape}"


@pytest.mark.parametrize("axis, layout, shape", cases(), ids=map(case_id, cases()))
def test_welford_mean_and_variance_match_numpy(rng, on_each_device, axis, layout, shape):
    representative_on_device(on_each_device, (axis, layout, shape))
    bm, bn = SHAPES[shape]
    x = rand(rng, (bm, bn), np.float32) + 3.0
    out = (1, bn) if axis == 0 else (bm, 1)
    arrays = [x, np.zeros(out, np.float32), np.zeros(out, np.float32)]
    for _, mean, var in run_everywhere(on_each_device, welford, arrays,
                                       dict(AXIS=axis, LAYOUT=LAYOUTS[layout], BM=bm, BN=bn)):
        np.testing.assert_allclose(mean, np.mean(x, axis=axis, keepdims=True), rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(var, np.var(x, axis=axis, keepdims=True), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("axis, layout, shape", cases(), ids=map(case_id, cases()))
def test_argmax_breaks_ties_by_the_lower_index_like_numpy(rng, on_each_device, axis, layout, shape):
    representative_on_device(on_each_device, (axis, layout, shape))
    bm, bn = SHAPES[shape]
    x = rng.integers(-3, 4, (bm, bn)).astype(np.float32)  # few values: ties in every row and column
    out = (1, bn) if axis == 0 else (bm, 1)
    arrays = [x, np.zeros(out, np.float32), np.zeros(out, np.int32)]
    for _, values, indices in run_everywhere(on_each_device, argmax, arrays,
                                             dict(AXIS=axis, LAYOUT=LAYOUTS[layout], BM=bm, BN=bn)):
        np.testing.assert_array_equal(indices, np.argmax(x, axis=axis, keepdims=True))
        np.testing.assert_array_equal(values, np.max(x, axis=axis, keepdims=True))


def segmented_cumsum(x, starts, axis):
    """numpy's reference: the running sum restarts at every position whose flag is set."""
    x, starts = (np.moveaxis(a, axis, -1) for a in (x, starts))
    out = np.empty_like(x)
    for row in np.ndindex(x.shape[:-1]):
        total = 0
        for j in range(x.shape[-1]):
            total = x[row][j] if starts[row][j] else total + x[row][j]
            out[row][j] = total
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("axis, layout, shape", cases(), ids=map(case_id, cases()))
def test_segmented_scan_with_a_flag_tile(rng, on_each_device, axis, layout, shape):
    representative_on_device(on_each_device, (axis, layout, shape))
    bm, bn = SHAPES[shape]
    x = rng.integers(-50, 50, (bm, bn)).astype(np.int32)
    starts = (rng.random((bm, bn)) < 0.2).astype(np.int32)
    arrays = [x, starts, np.zeros((bm, bn), np.int32)]
    for *_, sums in run_everywhere(on_each_device, segmented_sum, arrays,
                                   dict(AXIS=axis, LAYOUT=LAYOUTS[layout], BM=bm, BN=bn)):
        np.testing.assert_array_equal(sums, segmented_cumsum(x, starts, axis))


@pytest.mark.parametrize("axis", [0, 1])
def test_scan_of_one_tile(rng, on_each_device, axis):
    x = rand(rng, (16, 32), np.float32)
    for _, dst in run_everywhere(on_each_device, running_max, [x, np.zeros_like(x)], dict(AXIS=axis, BM=16, BN=32)):
        np.testing.assert_array_equal(dst, np.maximum.accumulate(x, axis=axis))


@xetile.kernel
def one_result(a, i, b, j):
    return a + b


@xetile.kernel
def int_for_float(a, b):
    return xetile.cast(a, xetile.int32)


@xetile.kernel
def branching(a, b):
    if a > b:
        r = a
    else:
        r = b
    return r


@xetile.kernel
def wrong_combine(src, dst, CASE: constexpr):
    x = xetile.load_tile(xetile.init_tile(src, [0, 0], [16, 32]))
    if CASE == "count":
        r, _ = xetile.reduce((x, x), 1, one_result)
    elif CASE == "dtype":
        r = xetile.reduce(x, 1, int_for_float)
    else:
        r = xetile.reduce(x, 1, branching)
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [16, 1]), r)


@pytest.mark.parametrize("case, message", [("count", "combine returned 1 values for 2 tiles"),
                                           ("dtype", "combine returned i32 for a tile of f32"),
                                           ("branch", "if statements and loops inside a combine function")])
def test_a_combine_that_does_not_match_its_tiles_is_refused(case, message):
    with pytest.raises(CompilationError, match=message):
        wrong_combine.warmup(np.zeros((16, 32), np.float32), np.zeros((16, 1), np.float32), CASE=case,
                             target="numpy")


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_combines_compile_for_gpus(target):
    """SPIR-V for the GPU targets; the Intel GPU compiler builds it where one is installed. 16x32 on the 2x2 grid:
    the reduced axis split between subgroups, so the tree's last stride goes through SLM: the ISA waits at 2
    workgroup barriers for the three operands of welford and at 2 for argmax's two, one a stride for all operands
    (each exchange through a buffer of its own, the later operands' stores moved above the first's barrier:
    exchange_stores.py, needless_barriers.py; with one f32 buffer for all exchanges welford's 11 and argmax's 4,
    with a barrier after every exchange's loads 12 and 8, and a tree of whole-axis rotations 36 and 20)."""
    x = np.zeros((16, 32), np.float32)
    layout = LAYOUTS["2x2_subgroups"]
    builds = [(welford.warmup(x, np.zeros((16, 1), np.float32), np.zeros((16, 1), np.float32), AXIS=1,
                              LAYOUT=layout, BM=16, BN=32, target=target), 2),
              (argmax.warmup(x, np.zeros((1, 32), np.float32), np.zeros((1, 32), np.int32), AXIS=0, LAYOUT=layout,
                             BM=16, BN=32, target=target), 2)]
    for compiled, barriers in builds:
        assert compiled.asm["spirv"][:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic number, little-endian
        if ocloc.available(get_target(target)):
            assert compiled.asm["isa"].count("sync.bar") == barriers


def test_only_the_strides_past_a_subgroups_piece_go_through_slm():
    """argmax down 16 rows held by two subgroups of 8: the tree's partners at strides 1, 2 and 4 lie in the
    subgroup's own rows (a rotation within runs of 2, 4 and 8), so each subgroup rotates its piece of both operands
    in place (6 rotations left after wg-to-sg); stride 8 crosses to the other subgroup through SLM, both operands'
    stores before one barrier and their loads after it, and the two results take one more on their way to the
    stored [1, 32] layout (exchange_stores.py; wg-to-sg's barriers after the loads order nothing there: other
    buffers come next). Rotations of the whole axis at every stride took 16 barriers for the tree, a barrier an
    operand 4, the exchanges' own after their loads 8."""
    x = np.zeros((16, 32), np.float32)
    sg = argmax.warmup(x, np.zeros((1, 32), np.float32), np.zeros((1, 32), np.int32), AXIS=0,
                       LAYOUT=LAYOUTS["2x2_subgroups"], BM=16, BN=32, target="cpu").asm["xegpu-sg"]
    assert sg.count("xetile.roll") == 6
    assert sg.count("gpu.barrier") == 2


def test_argmax_over_subgroup_pieces_that_straddle_the_runs(rng, on_each_device):
    """48 rows in two subgroups of 24: the tree's partners at stride 8 lie in runs of 16, which the pieces of 24
    rows straddle, so that rotation is two of the whole axis and a select on the positions; stride 4's runs of 8
    stay in each piece, and stride 16's run of 32 does not divide 48 (a rotation of the whole axis)."""
    x = rng.integers(-3, 4, (48, 16)).astype(np.float32)
    arrays = [x, np.zeros((1, 16), np.float32), np.zeros((1, 16), np.int32)]
    consts = dict(AXIS=0, LAYOUT=xetile.Layout(sg_layout=[2, 1], sg_data=[24, 16]), BM=48, BN=16)
    for _, values, indices in run_everywhere(on_each_device, argmax, arrays, consts):
        np.testing.assert_array_equal(indices, np.argmax(x, axis=0, keepdims=True))
        np.testing.assert_array_equal(values, np.max(x, axis=0, keepdims=True))


@xetile.kernel
def welford_layer_norm(src, dst, N: constexpr, BM: constexpr, BN: constexpr):
    """Row statistics in one pass over the column blocks (a reduction per block inside a loop, blocks merged by
    calling the same combine on the partial results), then the normalized rows."""
    mean = xetile.zeros([BM, 1], xetile.float32)
    m2 = xetile.zeros([BM, 1], xetile.float32)
    n = xetile.zeros([BM, 1], xetile.float32)
    for k in range(0, N, BN):
        x = xetile.load_tile(xetile.init_tile(src, [0, k], [BM, BN]))
        ones = xetile.full([BM, BN], 1.0, xetile.float32)
        mean_b, m2_b, n_b = xetile.reduce((x, xetile.zeros([BM, BN], xetile.float32), ones), 1, welford_combine)
        mean, m2, n = welford_combine(mean, m2, n, mean_b, m2_b, n_b)
    rstd = xetile.rsqrt(m2 / n + 1e-5)
    for k in range(0, N, BN):
        x = xetile.load_tile(xetile.init_tile(src, [0, k], [BM, BN]))
        xetile.store_tile(xetile.init_tile(dst, [0, k], [BM, BN]), (x - mean) * rstd)


def test_welford_layer_norm_matches_the_two_pass_one(rng, on_each_device):
    x = rand(rng, (16, 96), np.float32) * 3.0 + 1.0
    mean = x.mean(axis=1, keepdims=True)
    expected = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    for _, dst in run_everywhere(on_each_device, welford_layer_norm, [x, np.zeros_like(x)], dict(N=96, BM=16, BN=32)):
        np.testing.assert_allclose(dst, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.int8, np.uint16], ids=dtype_id)
def test_argmax_of_narrow_types(rng, on_each_device, dtype):
    """Narrow element types rotate exactly through SLM (across the 2x2 grid); on opencl:cpu one float and one
    integer type."""
    if on_each_device != "numpy" and dtype not in (np.float16, np.int8):
        pytest.skip("opencl:cpu runs one 16-bit float and one 8-bit integer type")
    x = rng.integers(0, 4, (16, 32)).astype(np.float32).astype(dtype)
    arrays = [x, np.zeros((1, 32), dtype), np.zeros((1, 32), np.int32)]
    for _, values, indices in run_everywhere(on_each_device, argmax, arrays,
                                             dict(AXIS=0, LAYOUT=LAYOUTS["2x2_subgroups"], BM=16, BN=32)):
        np.testing.assert_array_equal(indices, np.argmax(x.astype(np.float32), axis=0, keepdims=True))
        np.testing.assert_array_equal(values.astype(np.float32), x.astype(np.float32).max(axis=0, keepdims=True))


@xetile.kernel
def compose_bit_maps(m_a, c_a, m_b, c_b):
    """The bit maps t -> (m & t) ^ c, the first applied before the second: a composition, so associative."""
    return m_a & m_b, (m_b & c_a) ^ c_b


@xetile.kernel
def bool_scan(src, masks, flips, AXIS: constexpr, BM: constexpr, BN: constexpr):
    x = xetile.load_tile(xetile.init_tile(src, [0, 0], [BM, BN]))
    m, c = xetile.associative_scan((x, ~x), AXIS, compose_bit_maps)
    xetile.store_tile(xetile.init_tile(masks, [0, 0], [BM, BN]), m)
    xetile.store_tile(xetile.init_tile(flips, [0, 0], [BM, BN]), c)


def composed_bit_maps(x, axis):
    """numpy's reference: the maps of positions 0..j composed one after another."""
    m, c = (np.moveaxis(a, axis, 0).copy() for a in (x, ~x))
    for j in range(1, len(m)):
        m[j], c[j] = m[j - 1] & m[j], (m[j] & c[j - 1]) ^ c[j]
    return np.moveaxis(m, 0, axis), np.moveaxis(c, 0, axis)


@pytest.mark.parametrize("axis", [0, 1])
def test_bool_tiles_scan_as_bools(rng, axis):
    """The rotations and selects of bool tiles keep them i1 at every level."""
    x = rng.random((4, 8)) < 0.7
    want_masks, want_flips = composed_bit_maps(x, axis)
    assert want_flips.any() and not want_flips.all()
    for _, masks, flips in run_everywhere("numpy", bool_scan, [x, np.zeros_like(x), np.zeros_like(x)],
                                          dict(AXIS=axis, BM=4, BN=8)):
        np.testing.assert_array_equal(masks, want_masks)
        np.testing.assert_array_equal(flips, want_flips)


@xetile.kernel
def triple_and_add(a, b):
    """Not associative: its result shows the association order."""
    return a * 3 + b


@xetile.kernel
def ordered(src, reduced, scanned, BN: constexpr):
    x = xetile.load_tile(xetile.init_tile(src, [0, 0], [2, BN]))
    xetile.store_tile(xetile.init_tile(reduced, [0, 0], [2, 1]), xetile.reduce(x, 1, triple_and_add))
    xetile.store_tile(xetile.init_tile(scanned, [0, 0], [2, BN]), xetile.associative_scan(x, 1, triple_and_add))


def test_the_tree_order_over_five_positions(rng):
    """Pairs for the reduction, Kogge-Stone for the scan, a position without a partner passing on; at every level."""
    x = rng.integers(-9, 10, (2, 5)).astype(np.int32)

    def c(a, b):
        return a * 3 + b
    x0, x1, x2, x3, x4 = x.T
    want_reduced = c(c(c(x0, x1), c(x2, x3)), x4)
    want_scanned = [x0, c(x0, x1), c(x0, c(x1, x2)), c(c(x0, x1), c(x2, x3)), c(x0, c(c(x1, x2), c(x3, x4)))]
    for _, reduced, scanned in run_everywhere("numpy", ordered, [x, np.zeros((2, 1), np.int32), np.zeros_like(x)],
                                              dict(BN=5)):
        np.testing.assert_array_equal(reduced[:, 0], want_reduced)
        np.testing.assert_array_equal(scanned, np.stack(want_scanned, axis=1))


@pytest.mark.parametrize("n, steps", [(64, 6), (24, 5), (2, 1)])
def test_the_expansion_has_one_combine_and_one_rotation_a_stride(n, steps):
    """log2(n) copies of the combine's op and rotations per value, and no loop, for a reduction and a scan."""
    x = np.zeros((16, n), np.float32)
    for scan in (False, True):
        func = running_max.warmup(x, np.zeros_like(x), AXIS=1, BM=16, BN=n, target="numpy").func if scan else \
            argmax.warmup(x, np.zeros((16, 1), np.float32), np.zeros((16, 1), np.int32), AXIS=1, LAYOUT=None,
                          BM=16, BN=n, target="numpy").func
        names = [op.name for op in walk(expand_combines(func).body)]
        assert "scf.for" not in names and "xetile.reduce" not in names and "xetile.scan" not in names
        assert names.count("xetile.roll") == steps * (1 if scan else 2)
        assert names.count("arith.maximumf" if scan else "arith.cmpf") == steps * (1 if scan else 2)
