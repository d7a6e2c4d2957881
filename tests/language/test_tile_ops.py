"""Every XeTile tile op run through real kernels, in the numpy interpreter and as SPIR-V on opencl:cpu, checked
against numpy references.

Arrays are deliberately not multiples of the tile shape, and tiles sit at negative offsets or fully out of
bounds: out-of-bounds elements load as the padding value, are dropped on store and are never touched by
atomics (XeTile RFC: hardware auto-padding). The references below index with numpy and never call the
interpreter's own helpers.
"""
import re
import warnings

import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.ir import numeric
from conftest import ALL_NP_DTYPES, FLOAT_DTYPES, INT_DTYPES, XETILE_DTYPE, assert_close, dtype_id, f32, rand

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)

constexpr = xetile.constexpr

SHAPE = (37, 45)          # the array most tests use: not a multiple of the tile in either dim
TILE = (16, 32)
OFFSETS = {               # tile offsets into a SHAPE array
    "inside": (0, 0),
    "edge": (16, 32),                 # cols 32..63 of 45
    "corner": (30, 40),               # 7 rows x 5 cols in bounds
    "negative": (-5, -7),
    "below": (37, 0),                 # starts exactly at the end: fully out of bounds
    "above": (-16, 10),               # ends exactly at the start: fully out of bounds
    "far": (100, -100),
}
OFFSET_IDS = list(OFFSETS)


# ---- numpy references ---------------------------------------------------------------------------------

def _in_bounds(offsets, shape, extent):
    """Per dim: the array indices a tile covers and which of them are in bounds."""
    out = []
    for off, size, n in zip(offsets, shape, extent):
        idx = np.arange(size) + off
        out.append((idx, (idx >= 0) & (idx < n)))
    return out


def tile_window(a, offsets, shape, pad=0):
    """What load_tile of a `shape` tile at `offsets` of `a` gives: out-of-bounds elements are `pad`."""
    (rows, rin), (cols, cin) = _in_bounds(offsets, shape, a.shape)
    out = np.full(shape, pad, dtype=a.dtype)
    out[np.ix_(rin, cin)] = a[np.ix_(rows[rin], cols[cin])]
    return out


def after_store(dst, value, offsets):
    """`dst` after store_tile of `value` at `offsets`: only the in-bounds elements are written."""
    (rows, rin), (cols, cin) = _in_bounds(offsets, value.shape, dst.shape)
    out = np.array(dst)
    out[np.ix_(rows[rin], cols[cin])] = value[np.ix_(rin, cin)]
    return out


def dkind(dtype) -> str:
    """numpy's dtype kind, except "f" for bfloat16 (ml_dtypes reports "V")."""
    return "f" if np.dtype(dtype) == np.dtype(ml_dtypes.bfloat16) else np.dtype(dtype).kind


def nonzero_padding(dtype):
    kind = dkind(dtype)
    return float("-inf") if kind == "f" else True if kind == "b" else 7


def wide(x):
    """Exact numpy reference arithmetic: float64 for floats, int64 for ints (wrapping like the IR)."""
    x = np.asarray(x)
    return x.astype(np.float64) if dkind(x.dtype) == "f" else x.astype(np.int64) if x.dtype.kind in "iu" else x


def ir_of(kernel, *args, **kwargs) -> str:
    return kernel.warmup(*args, **kwargs).asm["xetile"]


# ---- kernels ------------------------------------------------------------------------------------------

@xetile.kernel
def copy_tile(src, dst, sm, sn, dm, dn, BM: constexpr, BN: constexpr, PAD: constexpr = None,
              SRC_ORDER: constexpr = None, DST_ORDER: constexpr = None, LOCALITY: constexpr = None):
    """dst[dm:, dn:] tile = src[sm:, sn:] tile; PAD None means load_tile's default padding."""
    ts = xetile.init_tile(src, [sm, sn], [BM, BN], order=SRC_ORDER)
    if LOCALITY is not None:
        xetile.prefetch_tile(ts, locality=LOCALITY)
    if PAD is None:
        v = xetile.load_tile(ts)
    else:
        v = xetile.load_tile(ts, padding=PAD)
    xetile.store_tile(xetile.init_tile(dst, [dm, dn], [BM, BN], order=DST_ORDER), v)


@xetile.kernel
def walk_tiles(src, dst, m0, n0, dm, dn, steps, BM: constexpr, BN: constexpr):
    """Block i of dst (rows i*BM..) = the src tile at (m0, n0) + i * (dm, dn); both tiles move in a loop."""
    ts = xetile.init_tile(src, [m0, n0], [BM, BN])
    td = xetile.init_tile(dst, [0, 0], [BM, BN])
    for i in range(steps):
        xetile.store_tile(td, xetile.load_tile(ts))
        ts = xetile.update_tile_offset(ts, [dm, dn])
        td = xetile.update_tile_offset(td, [BM, 0])


@xetile.kernel
def moved_tiles(src, dst, m0, n0, d1m, d1n, BM: constexpr, BN: constexpr):
    """Straight-line moves; the original tile stays where it was. dst blocks: t0, t0 + d1, t0 + d1 + (-3, 5)."""
    t0 = xetile.init_tile(src, [m0, n0], [BM, BN])
    t1 = xetile.update_tile_offset(t0, [d1m, d1n])
    t2 = xetile.update_tile_offset(t1, [-3, 5])
    td = xetile.init_tile(dst, [0, 0], [BM, BN])
    xetile.store_tile(td, xetile.load_tile(t0))
    td = xetile.update_tile_offset(td, [BM, 0])
    xetile.store_tile(td, xetile.load_tile(t1))
    xetile.store_tile(xetile.update_tile_offset(td, [BM, 0]), xetile.load_tile(t2))


@xetile.kernel
def mma_once(a, b, c, BM: constexpr, BN: constexpr, BK: constexpr, WITH_C: constexpr):
    """c tile = a tile @ b tile (+ c tile)."""
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [BM, BK]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [BK, BN]))
    tc = xetile.init_tile(c, [0, 0], [BM, BN])
    if WITH_C:
        r = xetile.tile_mma(va, vb, xetile.load_tile(tc))
    else:
        r = xetile.tile_mma(va, vb)
    xetile.store_tile(tc, r)


@xetile.kernel
def gemm(a, b, c, K, BM: constexpr, BN: constexpr, BK: constexpr, B_LAYOUT: constexpr, ACCUMULATE: constexpr):
    """c (+)= a @ B. B_LAYOUT: "row" b is B[K, N]; "order" b is the column-major view BT.T read through an
    order=[0, 1] tile; "transpose" b is BT[N, K] row-major, loaded and tile_transposed (RFC Appendix 1)."""
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [m, 0], [BM, BK])
    if B_LAYOUT == "transpose":
        tb = xetile.init_tile(b, [n, 0], [BN, BK])
        step_b = [0, BK]
    else:
        tb = xetile.init_tile(b, [0, n], [BK, BN], order=[0, 1] if B_LAYOUT == "order" else None)
        step_b = [BK, 0]
    tc = xetile.init_tile(c, [m, n], [BM, BN])
    acc = xetile.load_tile(tc) if ACCUMULATE else xetile.zeros([BM, BN], c.dtype)
    for k in range(0, K, BK):
        vb = xetile.load_tile(tb)
        if B_LAYOUT == "transpose":
            vb = xetile.tile_transpose(vb, [1, 0])
        acc = xetile.tile_mma(xetile.load_tile(ta), vb, acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, step_b)
    xetile.store_tile(tc, acc)


@xetile.kernel
def transpose_tile(src, dst, BM: constexpr, BN: constexpr, USE_T: constexpr):
    v = xetile.load_tile(xetile.init_tile(src, [0, 0], [BM, BN]))
    t = v.T if USE_T else xetile.tile_transpose(v, [1, 0])
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [BN, BM]), t)


@xetile.kernel
def reduce_tile(src, dst, KIND: constexpr, DIMS: constexpr, PAD: constexpr, BM: constexpr, BN: constexpr):
    """The result is stored through a tile of the kept-dims shape ([BM, 1], [1, BN] or [1, 1]), so a result
    of any other shape fails store_tile's verifier."""
    v = xetile.load_tile(xetile.init_tile(src, [0, 0], [BM, BN]), padding=PAD)
    r = xetile.tile_reduce(KIND, v, DIMS)
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [1 if 0 in DIMS else BM, 1 if 1 in DIMS else BN]), r)


@xetile.kernel
def broadcast_tile(src, dst, SM: constexpr, SN: constexpr, DIMS: constexpr, BM: constexpr, BN: constexpr):
    v = xetile.load_tile(xetile.init_tile(src, [0, 0], [SM, SN]))
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [BM, BN]), xetile.tile_broadcast(v, DIMS, [BM, BN]))


@xetile.kernel
def atomic_tile(val, mem, old, om, on, KIND: constexpr, BM: constexpr, BN: constexpr):
    """Workgroup p combines val into the mem tile at (om, on) and stores the old values to old rows p*BM.."""
    v = xetile.load_tile(xetile.init_tile(val, [0, 0], [BM, BN]))
    o = xetile.atomic_rmw_tile(KIND, v, xetile.init_tile(mem, [om, on], [BM, BN]))
    xetile.store_tile(xetile.init_tile(old, [xetile.program_id(0) * BM, 0], [BM, BN]), o)


@xetile.kernel
def softmax(x, y, BM: constexpr, BN: constexpr):
    """Row softmax of a [BM, BN] block; padded columns load as -inf and so weigh exp(-inf) = 0."""
    m = xetile.program_id(0) * BM
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]), padding=float("-inf")).to(xetile.float32)
    v = v - xetile.tile_reduce("max", v, [1])
    e = xetile.exp(v)
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), e / xetile.tile_reduce("add", e, [1]))


# ---- init_tile, load_tile, store_tile, prefetch_tile ----------------------------------------------------

def test_the_element_by_element_path_is_a_loop_on_the_cpu_targets_only():
    """A block no 2D message can address (a row pitch of 106 bytes) is read and written one element at a time: on
    the CPU targets in a loop over a lane's 48 components (their driver's build time follows straight-line code),
    on GPUs unrolled (registers, no private memory). A bool block on cpu is read as the bytes of 8-bit block
    messages, whose CPU form is a loop of its own."""
    def loads(target, dtype=np.float16):
        src, dst = np.zeros((16, 53), dtype)[:, :48], np.zeros((16, 53), dtype)[:, :48]  # views: the pitch stays
        args = (src, dst, 0, 0, 0, 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", xetile.BlockIOFallbackWarning)
            llir = copy_tile.warmup(*args, BM=16, BN=48, target=target, num_subgroups=1).asm["llir"]
        return sum(line.split("=")[-1].split()[0] == "load" and "addrspace(1)*" in line for line in llir.splitlines()
                   if " = " in line)  # the array's elements, not a lane's private copy

    assert loads("cpu") <= 16 and loads("xe-emulated") < 48
    assert loads("xe-hpc") >= 48 and loads("cpu", np.bool_) <= 16


@pytest.mark.parametrize("offsets", OFFSETS.values(), ids=OFFSET_IDS)
@pytest.mark.parametrize("padded", [False, True], ids=["pad_default", "pad_nonzero"])
@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_load_tile_pads_out_of_bounds(rng, dtype, padded, offsets):
    src = rand(rng, SHAPE, dtype)
    dst = np.zeros(TILE, dtype)
    pad = nonzero_padding(dtype) if padded else None
    copy_tile[(1,)](src, dst, *offsets, 0, 0, BM=TILE[0], BN=TILE[1], PAD=pad)
    np.testing.assert_array_equal(dst, tile_window(src, offsets, TILE, 0 if pad is None else pad))


@pytest.mark.parametrize("offsets", OFFSETS.values(), ids=OFFSET_IDS)
@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_store_tile_drops_out_of_bounds(rng, dtype, offsets):
    src = rand(rng, TILE, dtype)
    dst = rand(rng, SHAPE, dtype)
    expected = after_store(dst, src, offsets)
    copy_tile[(1,)](src, dst, 0, 0, *offsets, BM=TILE[0], BN=TILE[1])
    np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("locality", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_prefetch_tile_changes_no_values(rng, dtype, locality):
    src = rand(rng, SHAPE, dtype)
    src_before = src.copy()
    dst = np.zeros(TILE, dtype)
    args = (src, dst, *OFFSETS["corner"], 0, 0)
    consts = dict(BM=TILE[0], BN=TILE[1], LOCALITY=locality)
    assert re.search(rf"xetile.prefetch_tile %\w+ locality<{locality}> : !xetile.tile<16x32x",
                     ir_of(copy_tile, *args, **consts))
    copy_tile[(1,)](*args, **consts)
    np.testing.assert_array_equal(dst, tile_window(src, OFFSETS["corner"], TILE))
    np.testing.assert_array_equal(src, src_before)


@pytest.mark.parametrize("offsets", [OFFSETS["far"], OFFSETS["negative"]], ids=["far", "negative"])
def test_prefetch_tile_out_of_bounds_is_harmless(rng, offsets):
    src = rand(rng, SHAPE, np.float32)
    dst = np.zeros(TILE, np.float32)
    copy_tile[(1,)](src, dst, *offsets, 0, 0, BM=TILE[0], BN=TILE[1], LOCALITY=0)
    np.testing.assert_array_equal(dst, tile_window(src, offsets, TILE))


@xetile.kernel
def hinted_copy_tile(src, dst, sm, sn, BM: constexpr, BN: constexpr, LOAD: constexpr, STORE: constexpr):
    v = xetile.load_tile(xetile.init_tile(src, [sm, sn], [BM, BN]), cache=LOAD)
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [BM, BN]), v, cache=STORE)


@pytest.mark.parametrize("load, store", [("cached", "write_back"), ("streaming", "write_through"),
                                         ("read_invalidate", "streaming"), (("uncached", "cached"), "uncached")],
                         ids=["ca-wb", "st-wt", "ri-st", "uc.ca-uc"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=dtype_id)
def test_cache_hints_change_no_values(rng, dtype, load, store):
    """Hints steer caches only (ir/cache_hints.py): a partial tile still pads its loads and drops its stores."""
    src = rand(rng, SHAPE, dtype)
    dst = np.zeros(TILE, dtype)
    hinted_copy_tile[(1,)](src, dst, *OFFSETS["corner"], BM=TILE[0], BN=TILE[1], LOAD=load, STORE=store)
    np.testing.assert_array_equal(dst, tile_window(src, OFFSETS["corner"], TILE))


def test_copy_whole_unaligned_array_tile_by_tile(rng):
    """Tiles covering a 37x45 array (the last row and column of tiles partial) copy it exactly."""
    src = rand(rng, SHAPE, np.int32, -1000, 1000)
    dst = np.zeros(SHAPE, np.int32)
    for i in range(xetile.cdiv(SHAPE[0], TILE[0])):
        for j in range(xetile.cdiv(SHAPE[1], TILE[1])):
            off = (i * TILE[0], j * TILE[1])
            copy_tile[(1,)](src, dst, *off, *off, BM=TILE[0], BN=TILE[1])
    np.testing.assert_array_equal(dst, src)


# ---- update_tile_offset --------------------------------------------------------------------------------

WALKS = {  # (m0, n0, dm, dn, steps) on a SHAPE array with TILE tiles
    "along_cols": (0, 0, 0, TILE[1], 3),         # the third step is fully out of bounds
    "along_rows": (5, 20, TILE[0], 0, 4),
    "diagonal": (-3, 40, 7, -5, 5),
    "backwards_from_outside": (50, 60, -9, -11, 6),
    "no_steps": (0, 0, 1, 1, 0),
    "wraps_past_int64": (2**62 + 5, 3, 2**62, 1, 5),  # rows 2**62 + 5, 2**63 + 5, ...: the fifth is row 5
}


def i64(x: int) -> int:
    """A tile offset: index arithmetic wraps like the device's i64 (two's complement)."""
    return (x + 2**63) % 2**64 - 2**63


@pytest.mark.parametrize("walk", WALKS.values(), ids=list(WALKS))
@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_update_tile_offset_in_loop(rng, dtype, walk):
    m0, n0, dm, dn, steps = walk
    src = rand(rng, SHAPE, dtype)
    dst = rand(rng, (max(steps, 1) * TILE[0] + 5, TILE[1]), dtype)   # 5 extra rows stay untouched
    expected = dst.copy()
    for i in range(steps):
        start = (i64(m0 + i * dm), i64(n0 + i * dn))
        expected = after_store(expected, tile_window(src, start, TILE), (i * TILE[0], 0))
    walk_tiles[(1,)](src, dst, m0, n0, dm, dn, steps, BM=TILE[0], BN=TILE[1])
    np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("move", [(0, TILE[1]), (10, -20), (-40, 0)], ids=["right", "down_left", "off_top"])
@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_update_tile_offset_straight_line(rng, dtype, move):
    m0, n0 = 4, 3
    src = rand(rng, SHAPE, dtype)
    dst = np.zeros((3 * TILE[0], TILE[1]), dtype)
    moved_tiles[(1,)](src, dst, m0, n0, *move, BM=TILE[0], BN=TILE[1])
    starts = [(m0, n0), (m0 + move[0], n0 + move[1]), (m0 + move[0] - 3, n0 + move[1] + 5)]
    np.testing.assert_array_equal(dst, np.concatenate([tile_window(src, s, TILE) for s in starts]))


# ---- order = [0, 1] (column-major arrays) and row-pitched arrays ------------------------------------------

@pytest.mark.parametrize("offsets", [OFFSETS["inside"], OFFSETS["corner"], OFFSETS["negative"], OFFSETS["below"]],
                         ids=["inside", "corner", "negative", "below"])
@pytest.mark.parametrize("order", [[0, 1], None], ids=["order01", "order_from_array"])
@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_load_column_major_view(rng, dtype, order, offsets):
    """b = bt.T is column-major; an order=[0, 1] tile reads its logical [K, N] view."""
    bt = rand(rng, SHAPE[::-1], dtype)
    b = bt.T
    assert not b.flags.c_contiguous
    dst = np.zeros(TILE, dtype)
    pad = nonzero_padding(dtype)
    consts = dict(BM=TILE[0], BN=TILE[1], PAD=pad, SRC_ORDER=order)
    assert "order = [0, 1]" in ir_of(copy_tile, b, dst, *offsets, 0, 0, **consts)
    copy_tile[(1,)](b, dst, *offsets, 0, 0, **consts)
    np.testing.assert_array_equal(dst, tile_window(b, offsets, TILE, pad))


@pytest.mark.parametrize("offsets", [OFFSETS["inside"], OFFSETS["corner"], OFFSETS["negative"], OFFSETS["far"]],
                         ids=["inside", "corner", "negative", "far"])
@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_store_through_order01_tile_into_column_major_output(rng, dtype, offsets):
    src = rand(rng, TILE, dtype)
    ct = rand(rng, SHAPE[::-1], dtype)       # memory: column-major c = ct.T
    expected = after_store(ct.T, src, offsets)
    copy_tile[(1,)](src, ct.T, 0, 0, *offsets, BM=TILE[0], BN=TILE[1], DST_ORDER=[0, 1])
    np.testing.assert_array_equal(ct.T, expected)


PITCHED_OFFSETS = [(0, 0), (30, 30), (-5, -3), (2, 36)]


@pytest.mark.parametrize("offsets", PITCHED_OFFSETS, ids=str)
@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.bool_], ids=dtype_id)
def test_row_pitched_view_as_input(rng, dtype, offsets):
    """big[:, 3:40]: row stride 50 > width 37. Elements right of the view read as padding, not as big's."""
    big = rand(rng, (40, 50), dtype)
    view = big[:, 3:40]
    dst = np.zeros(TILE, dtype)
    pad = nonzero_padding(dtype)
    copy_tile[(1,)](view, dst, *offsets, 0, 0, BM=TILE[0], BN=TILE[1], PAD=pad)
    np.testing.assert_array_equal(dst, tile_window(np.ascontiguousarray(view), offsets, TILE, pad))


@pytest.mark.parametrize("offsets", PITCHED_OFFSETS, ids=str)
@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.bool_], ids=dtype_id)
def test_row_pitched_view_as_output(rng, dtype, offsets):
    """Only the view big[:, 3:40] is written; big's columns 0..2 and 40..49 keep their values."""
    src = rand(rng, TILE, dtype)
    big = np.zeros((40, 50), dtype)
    expected = big.copy()
    expected[:, 3:40] = after_store(big[:, 3:40], src, offsets)
    copy_tile[(1,)](src, big[:, 3:40], 0, 0, *offsets, BM=TILE[0], BN=TILE[1])
    np.testing.assert_array_equal(big, expected)


@pytest.mark.parametrize("offsets", [(0, 0), (20, 30), (-4, -6)], ids=str)
def test_pitched_column_major_view_both_ways(rng, offsets):
    """A column-major view with a column pitch: bigt[:, 3:38].T (shape 35x50, strides (4, 160))."""
    bigt = rand(rng, (50, 40), np.float32)
    src = bigt[:, 3:38].T
    outt = np.zeros((50, 40), np.float32)
    copy_tile[(1,)](src, outt[:, 3:38].T, *offsets, *offsets, BM=TILE[0], BN=TILE[1],
                    SRC_ORDER=[0, 1], DST_ORDER=[0, 1])
    expected = np.zeros_like(outt)
    expected[:, 3:38] = after_store(expected[:, 3:38].T, tile_window(src, offsets, TILE), offsets).T
    np.testing.assert_array_equal(outt, expected)


# ---- tile_mma --------------------------------------------------------------------------------------------

MMA_TYPES = [  # (A dtype, B dtype, accumulator dtype)
    (np.float16, np.float16, np.float32), (ml_dtypes.bfloat16, ml_dtypes.bfloat16, np.float32),
    (np.float32, np.float32, np.float32), (np.int8, np.int8, np.int32), (np.uint8, np.uint8, np.int32),
    (np.int8, np.uint8, np.int32), (np.uint8, np.int8, np.int32),
]
MMA_IDS = [f"{dtype_id(a)}x{dtype_id(b)}" for a, b, _ in MMA_TYPES]


def mma_operand(rng, shape, dtype):
    """Floats in [-4, 4]; 8-bit integers over their whole range."""
    return rand(rng, shape, dtype, -128, 255) if np.dtype(dtype).kind in "iu" else rand(rng, shape, dtype)


def assert_matmul(c, expected, k):
    if c.dtype.kind == "f":
        assert_close(c, expected, dtype=np.float32, scale=k)   # f32 accumulation over k products
    else:
        assert_close(c, expected)


@pytest.mark.parametrize("with_c", [False, True], ids=["no_c", "with_c"])
@pytest.mark.parametrize("a_dt, b_dt, acc_dt", MMA_TYPES, ids=MMA_IDS)
def test_tile_mma_single_tile(rng, a_dt, b_dt, acc_dt, with_c):
    M, N, K, BM, BN, BK = 20, 27, 13, 32, 32, 16       # the zero padding of A and B must not contribute
    a, b = mma_operand(rng, (M, K), a_dt), mma_operand(rng, (K, N), b_dt)
    c = rand(rng, (M, N), acc_dt)
    expected = wide(a) @ wide(b) + (wide(c) if with_c else 0)
    consts = dict(BM=BM, BN=BN, BK=BK, WITH_C=with_c)
    acc = np.dtype(acc_dt)
    assert f"into vector<{BM}x{BN}x{'f32' if acc.kind == 'f' else 'i32'}>" in ir_of(mma_once, a, b, c, **consts)
    mma_once[(1,)](a, b, c, **consts)
    assert_matmul(c, expected, K)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=dtype_id)
def test_tile_mma_16_bit_accumulator(rng, dtype):
    """f16 x f16 + f16 -> f16 (bf16 alike, the RFC's bf16 GEMMs): computed in f32, rounded once at the end."""
    M, N, K, BM, BN, BK = 20, 27, 13, 32, 32, 16
    a, b, c = rand(rng, (M, K), dtype), rand(rng, (K, N), dtype), rand(rng, (M, N), dtype)
    expected = (wide(a) @ wide(b) + wide(c)).astype(np.float32).astype(dtype)
    consts = dict(BM=BM, BN=BN, BK=BK, WITH_C=True)
    name = XETILE_DTYPE[np.dtype(dtype)].mlir
    assert f"into vector<{BM}x{BN}x{name}>" in ir_of(mma_once, a, b, c, **consts)
    mma_once[(1,)](a, b, c, **consts)
    assert_close(c, expected, scale=2)


# Every dtype pair with every B layout; C read back or not alternates, so each dtype and each layout meets both
# (the accumulator's load is the same tile load whatever the operands)
GEMM_CASES = [pytest.param(*types, b_layout, accumulate,
                           id=f"{mma_id}-{b_layout}-{'c_plus_ab' if accumulate else 'c_is_ab'}")
              for d, (types, mma_id) in enumerate(zip(MMA_TYPES, MMA_IDS))
              for b, b_layout in enumerate(["row", "order", "transpose"])
              for accumulate in [(d + b) % 2 == 1]]


@pytest.mark.parametrize("a_dt, b_dt, acc_dt, b_layout, accumulate", GEMM_CASES)
def test_gemm_unaligned(rng, a_dt, b_dt, acc_dt, b_layout, accumulate):
    """100x70x45 with 32x32x16 tiles: partial tiles in M, N and the last K step."""
    M, N, K, BM, BN, BK = 100, 70, 45, 32, 32, 16
    a = mma_operand(rng, (M, K), a_dt)
    bt = mma_operand(rng, (N, K), b_dt)        # B given transposed
    c = rand(rng, (M, N), acc_dt)
    expected = wide(a) @ wide(bt).T + (wide(c) if accumulate else 0)
    b = {"row": np.ascontiguousarray(bt.T), "order": bt.T, "transpose": bt}[b_layout]
    gemm[(xetile.cdiv(M, BM), xetile.cdiv(N, BN))](a, b, c, K, BM=BM, BN=BN, BK=BK, B_LAYOUT=b_layout,
                                                   ACCUMULATE=accumulate)
    assert_matmul(c, expected, K)


def test_gemm_transposed_b_ir(rng):
    """The two RFC Appendix 1 spellings: an order=[0, 1] tile of BT, or a row-major BT tile + tile_transpose."""
    a, bt = rand(rng, (8, 8), np.float16), rand(rng, (8, 8), np.float16)
    c = np.zeros((8, 8), np.float32)
    consts = dict(BM=8, BN=8, BK=8, ACCUMULATE=False)
    by_order = ir_of(gemm, a, bt.T, c, 8, B_LAYOUT="order", **consts)
    by_transpose = ir_of(gemm, a, bt, c, 8, B_LAYOUT="transpose", **consts)
    assert "!xetile.tile<8x8xf16, #xetile.tile_attr<order = [0, 1]>>" in by_order
    assert "xetile.tile_transpose" not in by_order
    assert "xetile.tile_transpose" in by_transpose and "order = [0, 1]" not in by_transpose


# ---- tile_transpose ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("use_t", [False, True], ids=["tile_transpose", "dot_T"])
@pytest.mark.parametrize("shape", [(8, 24), (24, 8), (5, 13), (16, 16)], ids=str)
@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_tile_transpose(rng, dtype, shape, use_t):
    BM, BN = shape
    src = rand(rng, (BM - 2, BN + 3), dtype)          # the tile is zero-padded at the bottom
    dst = rand(rng, (BN - 1, BM + 2), dtype)          # the transposed store is cut on the bottom right
    expected = after_store(dst, tile_window(src, (0, 0), shape).T, (0, 0))
    transpose_tile[(1,)](src, dst, BM=BM, BN=BN, USE_T=use_t)
    np.testing.assert_array_equal(dst, expected)


# ---- tile_reduce -------------------------------------------------------------------------------------------

REDUCE_SRC = (13, 27)     # loaded through a 16x32 tile padded with the kind's identity
NAN_KINDS = ("max", "min", "maximum", "minimum")


def reduce_identity(kind, dtype):
    dtype = np.dtype(dtype)
    if dkind(dtype) == "b":
        return {"and": True, "min": True}.get(kind, False)
    if dkind(dtype) == "f":
        return {"add": 0.0, "mul": 1.0, "max": float("-inf"), "min": float("inf"), "maximum": float("-inf"),
                "minimum": float("inf")}[kind]
    info = np.iinfo(dtype)
    return {"add": 0, "mul": 1, "max": int(info.min), "min": int(info.max), "or": 0, "xor": 0,
            "and": -1 if dtype.kind == "i" else int(info.max)}[kind]


def reduce_input(rng, kind, dtype, shape):
    """Data on which the reduction is not trivially 0 or saturated."""
    dtype = np.dtype(dtype)
    if dkind(dtype) == "b":
        return rng.random(shape) < {"and": 0.9, "or": 0.1}.get(kind, 0.5)
    if dkind(dtype) == "f":
        if kind == "mul":
            return rng.uniform(0.8, 1.25, shape).astype(np.float32).astype(dtype)
        x = rand(rng, shape, dtype)
        if kind in NAN_KINDS:
            x[rng.random(shape) < 0.02] = np.nan   # maxnumf / minnumf ignore NaN, maximumf / minimumf propagate it
        return x
    info, bits = np.iinfo(dtype), dtype.itemsize * 8
    if kind == "mul":
        return rng.choice([-1, 1, 3], size=shape, p=[0.45, 0.45, 0.1]).astype(dtype)
    if kind in ("and", "or"):                               # one bit clear / one bit set per element
        one_bit = np.left_shift(np.int64(1), rng.integers(0, bits, shape)).astype(dtype)
        return ~one_bit if kind == "and" else one_bit
    return rng.integers(int(info.min), int(info.max), size=shape, endpoint=True).astype(dtype)


def reduce_reference(kind, x, dims):
    axis = tuple(dims)
    if dkind(x.dtype) == "f":
        fn = {"add": np.sum, "mul": np.prod, "max": np.nanmax, "min": np.nanmin, "maximum": np.max,
              "minimum": np.min}[kind]
    elif dkind(x.dtype) == "b":
        fn = {"max": np.any, "min": np.all, "and": np.all, "or": np.any, "xor": np.logical_xor.reduce}[kind]
    else:
        fn = {"add": np.sum, "mul": np.prod, "max": np.max, "min": np.min, "and": np.bitwise_and.reduce,
              "or": np.bitwise_or.reduce, "xor": np.bitwise_xor.reduce}[kind]
    with np.errstate(over="ignore"):
        return fn(wide(x), axis=axis, keepdims=True).astype(x.dtype)   # ints wrap like the IR


REDUCE_CASES = [(kind, dt) for kind in ("add", "mul", "max", "min") for dt in FLOAT_DTYPES + INT_DTYPES] + \
               [(kind, dt) for kind in ("maximum", "minimum") for dt in FLOAT_DTYPES] + \
               [(kind, np.bool_) for kind in ("max", "min")] + \
               [(kind, dt) for kind in ("and", "or", "xor") for dt in INT_DTYPES + [np.bool_]]


REDUCE_DIMS = {"dim0": [0], "dim1": [1], "dims01": [0, 1]}
# Each kind on each dtype along one of the dims, taken in turn: every kind and every dtype (three kinds or more each)
# meets every dims; the dims decide which lanes and blocks combine, the kind and dtype the combining op
REDUCE_KINDS = list(dict.fromkeys(kind for kind, _ in REDUCE_CASES))
REDUCE_DTYPES = list(dict.fromkeys(np.dtype(dtype) for _, dtype in REDUCE_CASES))
REDUCE_DIMS_CASES = [pytest.param(kind, dtype, dims, id=f"{kind}-{dtype_id(dtype)}-{name}")
                     for kind, dtype in REDUCE_CASES
                     for name, dims in [list(REDUCE_DIMS.items())[
                         (REDUCE_KINDS.index(kind) + REDUCE_DTYPES.index(np.dtype(dtype))) % 3]]]


@pytest.mark.device_cover(2)   # the combine follows the kind and the dtype together
@pytest.mark.parametrize("kind, dtype, dims", REDUCE_DIMS_CASES)
def test_tile_reduce(rng, kind, dtype, dims):
    BM, BN = TILE
    src = reduce_input(rng, kind, dtype, REDUCE_SRC)
    kept = (1 if 0 in dims else BM, 1 if 1 in dims else BN)
    dst = np.zeros(kept, dtype)
    reduce_tile[(1,)](src, dst, KIND=kind, DIMS=dims, PAD=reduce_identity(kind, dtype), BM=BM, BN=BN)
    # the padded part of the tile reduces to the identity
    expected = tile_window(reduce_reference(kind, src, dims), (0, 0), kept, reduce_identity(kind, dtype))
    # f32 sums and products round once per element; f16/bf16 ones accumulate in f32 and round once at the end
    n = np.prod([REDUCE_SRC[d] for d in dims])
    assert_close(dst, expected, scale=n if kind in ("add", "mul") and np.dtype(dtype) == np.float32 else 1)


@pytest.mark.parametrize("kind, expected", [("max", [[3.0], [-1.0], [5.0]]), ("min", [[-2.0], [-1.0], [-4.0]]),
                                            ("maximum", [[np.nan], [np.nan], [5.0]]),
                                            ("minimum", [[np.nan], [np.nan], [-4.0]])])
def test_tile_reduce_float_nan(kind, expected):
    """max/min (the RFC's maxnumf/minnumf) ignore a NaN; maximum/minimum (maximumf/minimumf) propagate it."""
    src = np.array([[np.nan, 3, -2, np.nan], [np.nan, np.nan, -1, np.nan], [0, 5, -4, 1]], np.float32)
    dst = np.full((3, 1), 99, np.float32)
    reduce_tile[(1,)](src, dst, KIND=kind, DIMS=[1], PAD=float("nan"), BM=3, BN=4)
    np.testing.assert_array_equal(dst, np.array(expected, np.float32))


@pytest.mark.parametrize("width", [256, 250])
def test_a_sum_of_negative_zeros_is_negative_zero(width):
    """-0.0 is float add's identity (+0.0 + -0.0 is +0.0): rows of -0.0 sum to -0.0, folded over 16 blocks in a
    loop (256 columns) or with a partial block padded by the identity (250)."""
    src = np.full((4, width), -0.0, np.float32)
    dst = np.ones((4, 1), np.float32)
    reduce_tile[(1,)](src, dst, KIND="add", DIMS=[1], PAD=-0.0, BM=4, BN=width)
    np.testing.assert_array_equal(np.signbit(dst), True)


# ---- tile_broadcast -----------------------------------------------------------------------------------------

BROADCASTS = {  # (source tile shape, dims)
    "col_along_dim1": ((TILE[0], 1), [1]),
    "row_along_dim0": ((1, TILE[1]), [0]),
    "scalar_along_both": ((1, 1), [0, 1]),
}


@pytest.mark.parametrize("case", BROADCASTS.values(), ids=list(BROADCASTS))
@pytest.mark.parametrize("dtype", ALL_NP_DTYPES, ids=dtype_id)
def test_tile_broadcast(rng, dtype, case):
    (SM, SN), dims = case
    src = rand(rng, (max(SM - 3, 1), max(SN - 5, 1)), dtype)      # zero padding gets broadcast too
    dst = rand(rng, (TILE[0] - 2, TILE[1] + 3), dtype)
    value = np.broadcast_to(tile_window(src, (0, 0), (SM, SN)), TILE)
    expected = after_store(dst, value, (0, 0))
    broadcast_tile[(1,)](src, dst, SM=SM, SN=SN, DIMS=dims, BM=TILE[0], BN=TILE[1])
    np.testing.assert_array_equal(dst, expected)


# ---- atomic_rmw_tile ------------------------------------------------------------------------------------------

ATOMIC_RULES = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
                "xchg": lambda old, new: new, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
ATOMIC_FLOATS = (np.float16, ml_dtypes.bfloat16, np.float32)
ATOMIC_INTS = (np.int32, np.uint32, np.int64, np.uint64)
ATOMIC_CASES = [(kind, dt) for kind in ("add", "mul", "max", "min", "xchg") for dt in ATOMIC_FLOATS] + \
               [(kind, dt) for kind in ATOMIC_RULES for dt in ATOMIC_INTS]
ATOMIC_SHAPE, ATOMIC_TILE = (13, 21), (8, 16)


def atomic_operand(rng, shape, dtype):
    """Values whose products and sums stay exact in the reference (ints wrap alike anyway)."""
    if np.dtype(dtype).kind in "iu":
        return rand(rng, shape, dtype, -2**20, 2**20)
    return rand(rng, shape, dtype)


def atomic_reference(kind, old, val):
    """The RFC's rule, computed as the IR computes it: 16-bit floats in f32, rounded once."""
    dtype = XETILE_DTYPE[np.dtype(old.dtype)]
    return numeric.apply(dtype, ATOMIC_RULES[kind], old, val)


def run_atomic(rng, kind, dtype, offsets):
    val = atomic_operand(rng, ATOMIC_TILE, dtype)
    mem = atomic_operand(rng, ATOMIC_SHAPE, dtype)
    old = np.full(ATOMIC_TILE, 99, dtype)
    expected_old = tile_window(mem, offsets, ATOMIC_TILE)
    expected_mem = after_store(mem, atomic_reference(kind, expected_old, val), offsets)
    atomic_tile[(1,)](val, mem, old, *offsets, KIND=kind, BM=ATOMIC_TILE[0], BN=ATOMIC_TILE[1])
    np.testing.assert_array_equal(old, expected_old)
    np.testing.assert_array_equal(mem, expected_mem)


@pytest.mark.device_cover(2)   # the lowering follows the kind and the width and signedness together
@pytest.mark.parametrize("kind, dtype", ATOMIC_CASES, ids=[f"{k}-{dtype_id(d)}" for k, d in ATOMIC_CASES])
def test_atomic_rmw_tile(rng, kind, dtype):
    """Every kind on every element type: returns the old values (0 out of bounds) and updates only the
    in-bounds elements, bit for bit as the reference rule (16-bit floats combine in f32 and round once)."""
    run_atomic(rng, kind, dtype, (-3, -5))


@pytest.mark.parametrize("offsets", [(0, 0), (8, 10), (13, 0)], ids=str)
@pytest.mark.parametrize("kind, dtype", [("add", np.float32), ("max", np.float16), ("xor", np.uint64)], ids=str)
def test_atomic_rmw_tile_at_the_borders(rng, kind, dtype, offsets):
    run_atomic(rng, kind, dtype, offsets)


def test_atomic_rmw_16_bit_neighbours_in_one_word(rng):
    """Lanes updating the two halves of one 32-bit word at once: the word's compare-exchange retries, and both
    halves end updated. Four workgroups add into the same tile."""
    groups, (BM, BN) = 4, ATOMIC_TILE
    val = np.ones(ATOMIC_TILE, np.float16)
    mem = np.zeros(ATOMIC_TILE, np.float16)
    old = np.zeros((groups * BM, BN), np.float16)
    atomic_tile[(groups,)](val, mem, old, 0, 0, KIND="add", BM=BM, BN=BN)
    np.testing.assert_array_equal(mem, np.full(ATOMIC_TILE, groups, np.float16))
    seen = np.sort(old.reshape(groups, BM, BN), axis=0)
    np.testing.assert_array_equal(seen, np.broadcast_to(np.arange(groups, dtype=np.float16)[:, None, None], seen.shape))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64], ids=dtype_id)
def test_atomic_add_from_several_workgroups_accumulates(rng, dtype):
    """A grid of 4 all adding into one 8x16 tile: memory gains 4 * val; each workgroup sees k * val
    (k = 0..3, in some order) as the old values."""
    groups, (BM, BN) = 4, ATOMIC_TILE
    val = atomic_operand(rng, ATOMIC_TILE, dtype)
    mem = atomic_operand(rng, ATOMIC_TILE, dtype)
    start = mem.copy()
    old = np.zeros((groups * BM, BN), dtype)
    atomic_tile[(groups,)](val, mem, old, 0, 0, KIND="add", BM=BM, BN=BN)
    assert_close(mem, wide(start) + groups * wide(val))
    seen = np.sort(wide(old).reshape(groups, BM, BN) - wide(start), axis=0)
    assert_close(seen, np.sort(np.stack([k * wide(val) for k in range(groups)]), axis=0), dtype=dtype,
                 scale=groups)


# ---- softmax ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("M, N, BM, BN", [(37, 45, 16, 64), (5, 100, 8, 128), (20, 1, 8, 16)], ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=dtype_id)
def test_softmax_unaligned(rng, dtype, M, N, BM, BN):
    x = rand(rng, (M, N), dtype, -8, 8)
    y = np.full((M, N), 5, dtype)
    softmax[(xetile.cdiv(M, BM),)](x, y, BM=BM, BN=BN)
    e = np.exp(wide(f32(x)) - wide(f32(x)).max(axis=1, keepdims=True))
    assert_close(y, e / e.sum(axis=1, keepdims=True), scale=4)


# ---- array elements as scalars (memref.load) -------------------------------------------------------------------

@xetile.kernel
def pick_tiles(table, x, y):
    """Workgroup p copies the 8x16 tile of x at the (row, col) of table row p, plus 1 + table[p, 5] (outside the
    table: 0)."""
    p = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [table[p, 0], table[p, 1]], [8, 16]))
    xetile.store_tile(xetile.init_tile(y, [p * 8, 0], [8, 16]), v + xetile.cast(table[p, 5] + 1, xetile.float32))


def test_array_elements_are_scalars(on_each_device):
    table = np.array([[0, 0], [8, 16], [3, 5], [-2, 40]], np.int32)
    x = np.arange(32 * 48, dtype=np.float32).reshape(32, 48)
    y = np.zeros((32, 16), np.float32)
    pick_tiles[(4,)](table, x, y)
    expected = np.concatenate([tile_window(x, (r, c), (8, 16)) for r, c in table]) + 1
    np.testing.assert_array_equal(y, expected)
    assert "memref.load %table[" in ir_of(pick_tiles, table, x, y)


@xetile.kernel
def lengths_of(batch, counts, out):
    """An element of a 3-D and of a 1-D array."""
    p = xetile.program_id(0)
    row = xetile.full([1, 16], batch[p, 1, 2] * 10 + counts[p], xetile.int32)
    xetile.store_tile(xetile.init_tile(out, [p, 0], [1, 16]), row)


def test_elements_of_arrays_of_any_rank(on_each_device):
    batch = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    counts, out = np.array([7, 9], np.int32), np.zeros((2, 16), np.int32)
    lengths_of[(2,)](batch, counts, out)
    np.testing.assert_array_equal(out[:, 0], batch[:, 1, 2] * 10 + counts)
