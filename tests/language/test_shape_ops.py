"""Arrays of any rank and the shape ops, in the numpy interpreter and as SPIR-V on opencl:cpu, against
numpy: leading offsets select a slice (auto-padding per slice), 1-D arrays, tiles and vectors, `arange` masks,
`reshape`/`expand_dims`/`broadcast_to` (reshapes that move elements between rows too: through SLM on devices),
init_tile's `base_shape`/`base_strides` view, and tutorials 05 and 09."""
import importlib.util
import pathlib

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, rand, target_options
from test_passes import run_func
from xetile_jit.compiler.pipeline import lower

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)

constexpr = xetile.constexpr
ROOT = pathlib.Path(__file__).resolve().parents[2]


def tutorial(name: str):
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), ROOT / "tutorials" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@xetile.kernel
def slice_copy(x, y, BATCH_OFFSET: constexpr):
    """Each workgroup copies its batch's 16x16 block plus one, shifted so it hangs past the slice's end."""
    z = xetile.program_id(0) + BATCH_OFFSET
    v = xetile.load_tile(xetile.init_tile(x, [z, 4, 8], [16, 16]), padding=-1.0)
    xetile.store_tile(xetile.init_tile(y, [z, 0, 0], [16, 16]), v)


@pytest.mark.parametrize("rows", [12, 9], ids=["block-io", "unaligned-slices"])
def test_leading_offsets_select_a_slice_and_pad_per_slice(rng, rows):
    """12 rows of 80 bytes: every slice starts 64-byte aligned, 2D block messages read it; 9 rows: they do not
    (SLICE_RULE), so the loads go element by element."""
    x = rand(rng, (3, rows, 20), np.float32)
    y = np.zeros((3, 16, 16), np.float32)
    slice_copy[(3,)](x, y, BATCH_OFFSET=0)
    expected = np.full((3, 16, 16), -1.0, np.float32)
    expected[:, :rows - 4, :12] = x[:, 4:, 8:]  # the rest is padding: never the next batch's rows
    assert_close(y, expected)


def test_a_batch_offset_outside_the_array_reads_padding_and_writes_nothing(rng):
    x, y = rand(rng, (2, 12, 20), np.float32), np.zeros((2, 16, 16), np.float32)
    slice_copy[(2,)](x, y, BATCH_OFFSET=1)  # workgroup 1 is at batch 2
    expected = np.zeros((2, 16, 16), np.float32)
    expected[1] = -1.0
    expected[1, :8, :12] = x[1, 4:, 8:]
    assert_close(y, expected)


@xetile.kernel
def four_d(x, y):
    h, z = xetile.program_id(0), xetile.program_id(1)
    v = xetile.load_tile(xetile.init_tile(x, [h, z, 0, 0], [8, 16]))
    xetile.store_tile(xetile.init_tile(y, [h, z, 0, 0], [8, 16]), v * 2.0)


def test_four_d_strided_batch_dims(rng):
    big = rand(rng, (3, 5, 8, 16), np.float32)
    x = big[:, ::2]                      # leading strides that skip slices
    y = np.zeros((3, 3, 8, 16), np.float32)
    four_d[(3, 3)](x, y)
    assert_close(y, x * 2)


@xetile.kernel
def one_d(x, y, out, BLOCK: constexpr, LAYOUT: constexpr = None):
    start = xetile.program_id(0) * BLOCK
    tx = xetile.update_tile_offset(xetile.init_tile(x, [0], [BLOCK], layout=LAYOUT), [start])  # one offset a dim
    v = xetile.load_tile(tx) + xetile.load_tile(xetile.init_tile(y, [start], [BLOCK], layout=LAYOUT))
    total = xetile.tile_reduce("add", v, [0])                                    # vector<1xf32>
    xetile.store_tile(xetile.init_tile(out, [start], [BLOCK], layout=LAYOUT), v - xetile.broadcast_to(total, [BLOCK]))


ONE_D_LAYOUTS = {  # a user's layout of a 1-D tile is that of its one row
    "none": None,
    "two_subgroups": xetile.Layout(sg_layout=[2], sg_data=[16]),
    "two_subgroups_order": xetile.Layout(sg_layout=[2], sg_data=[16], order=[0]),
    "blocks_of_two_subgroups": xetile.Layout(sg_layout=[2], sg_data=[16], inst_data=[8]),
}


@pytest.mark.parametrize("layout", ONE_D_LAYOUTS)
def test_one_d_arrays_tiles_and_vectors(rng, layout, on_each_device):
    n, block = 100, 32
    x, y = rand(rng, n, np.float32), rand(rng, n, np.float32)
    s = x + y
    expected = np.concatenate([s[i:i + block] - s[i:i + block].sum() for i in range(0, n, block)])
    for options in target_options(on_each_device):
        out = np.zeros(n, np.float32)
        one_d[(xetile.cdiv(n, block),)](x, y, out, BLOCK=block, LAYOUT=ONE_D_LAYOUTS[layout], **options)
        assert_close(out, expected, scale=8)


@xetile.kernel
def row_sums(x, out, N, BLOCK: constexpr):
    """A loop-carried 1-D vector: the sum of each row's BLOCK-wide chunks."""
    row = xetile.program_id(0)
    t = xetile.init_tile(x, [row, 0], [BLOCK])
    acc = xetile.zeros([BLOCK], xetile.float32)
    for k in range(0, N, BLOCK):
        acc = acc + xetile.load_tile(t)
        t = xetile.update_tile_offset(t, [BLOCK])
    xetile.store_tile(xetile.init_tile(out, [row, 0], [BLOCK]), acc)


def test_loop_carried_one_d_vector(rng):
    x, out = rand(rng, (3, 80), np.float32), np.zeros((3, 32), np.float32)
    row_sums[(3,)](x, out, 80, BLOCK=32)
    padded = np.zeros((3, 96), np.float32)
    padded[:, :80] = x
    assert_close(out, padded.reshape(3, 3, 32).sum(axis=1), scale=4)


@xetile.kernel
def causal(x, y, N, BLOCK: constexpr):
    """Rows i and columns j of a square block: keep j <= i (a causal mask) and j < N (a ragged row)."""
    cols = xetile.arange(0, BLOCK)
    rows = xetile.expand_dims(xetile.arange(0, BLOCK), 1)                       # vector<BLOCKx1xi32>
    keep = (xetile.broadcast_to(xetile.expand_dims(cols, 0), [BLOCK, BLOCK]) <= xetile.broadcast_to(rows, [BLOCK, BLOCK]))
    keep = keep & xetile.broadcast_to(cols < N, [BLOCK, BLOCK])
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [BLOCK, BLOCK]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [BLOCK, BLOCK]), xetile.where(keep, v, -1.0))


def test_arange_masks_causal_and_ragged(rng):
    x, y = rand(rng, (16, 16), np.float32), np.zeros((16, 16), np.float32)
    causal[(1,)](x, y, 11, BLOCK=16)
    i, j = np.indices((16, 16))
    assert_close(y, np.where((j <= i) & (j < 11), x, -1.0))


@xetile.kernel
def reshapes(x, y, out, BLOCK: constexpr):
    """reshape and expand_dims between 1-D and 2-D vectors; broadcast_to of a row, a column and a scalar."""
    v = xetile.load_tile(xetile.init_tile(x, [0], [BLOCK]))                     # vector<BLOCKxf32>
    row = v.reshape([1, BLOCK])
    col = xetile.expand_dims(v, 1)
    table = xetile.broadcast_to(row, [BLOCK, BLOCK]) * xetile.broadcast_to(col, [BLOCK, BLOCK])
    flat = xetile.reshape(xetile.tile_reduce("add", table, [0]), [BLOCK])         # back to 1-D
    xetile.store_tile(xetile.init_tile(y, [0, 0], [BLOCK, BLOCK]), table + xetile.broadcast_to(1.0, [BLOCK, BLOCK]))
    xetile.store_tile(xetile.init_tile(out, [0], [BLOCK]), flat + xetile.broadcast_to(v, [BLOCK]))


def test_reshape_expand_dims_broadcast_to(rng):
    x = rand(rng, 13, np.float32)
    y, out = np.zeros((16, 16), np.float32), np.zeros(16, np.float32)
    reshapes[(1,)](x, y, out, BLOCK=16)
    v = np.zeros(16, np.float32)
    v[:13] = x
    assert_close(y, np.outer(v, v) + 1.0)
    assert_close(out[:13], (np.outer(v, v).sum(axis=0) + v)[:13], scale=4)


# ---- reshapes that move elements between rows: through shared local memory on devices ----------------------------

BANDS = xetile.Layout(sg_layout=[4, 1], sg_data=[4, 64])    # 16x64: subgroup i holds rows 4i..4i+3
BLOCKS = xetile.Layout(sg_layout=[2, 2], sg_data=[32, 8])   # 64x16: four 32x8 blocks


@xetile.kernel
def reshape_2d(x, y, M: constexpr, N: constexpr, P: constexpr, Q: constexpr, IN: constexpr = None,
               OUT: constexpr = None):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [M, N], layout=IN))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [P, Q], layout=OUT), (v + 1.0).reshape([P, Q]))


@xetile.kernel
def reshape_1d(x, y, out, M: constexpr, K: constexpr):
    """N -> MxK (each subgroup's rows of the result come from other subgroups' parts of the row) and back."""
    m = xetile.load_tile(xetile.init_tile(x, [0], [M * K])).reshape([M, K])
    xetile.store_tile(xetile.init_tile(y, [0, 0], [M, K]), m * 3.0)
    xetile.store_tile(xetile.init_tile(out, [0], [M * K]), xetile.reshape(m + 1.0, [M * K]))


@xetile.kernel
def reshape_in_loop(x, y, STEPS: constexpr):
    """A reshape per iteration: its SLM buffer is rewritten while other subgroups may still read the last one."""
    t = xetile.init_tile(x, [0, 0], [4, 32])
    acc = xetile.zeros([32, 4], xetile.float32)
    for s in range(STEPS):
        acc = acc + xetile.load_tile(t).reshape([32, 4])
        t = xetile.update_tile_offset(t, [4, 0])
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 4]), acc)


@xetile.kernel
def reshape_mask(x, y):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [4, 32]))
    keep = (v > 0.0).reshape([32, 4])                                            # an i1 vector
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 4]), xetile.where(keep, v.reshape([32, 4]), -1.0))


def rows_case(rng, src, dst, layouts=(None, None), dtype=np.float32):
    x = rand(rng, src, dtype)
    consts = dict(M=src[0], N=src[1], P=dst[0], Q=dst[1], IN=layouts[0], OUT=layouts[1])
    return reshape_2d, (x, np.zeros(dst, dtype)), consts, {}, [x, (x + 1).reshape(dst)]


def flat_case(rng):
    x = rand(rng, 64, np.float32)
    return (reshape_1d, (x, np.zeros((8, 8), np.float32), np.zeros(64, np.float32)), dict(M=8, K=8),
            dict(num_subgroups=4), [x, 3 * x.reshape(8, 8), x + 1])


def loop_case(rng):
    x = rand(rng, (12, 32), np.float32)
    expected = sum(x[4 * s:4 * s + 4].reshape(32, 4) for s in range(3))
    return reshape_in_loop, (x, np.zeros((32, 4), np.float32)), dict(STEPS=3), dict(num_subgroups=4), [x, expected]


def mask_case(rng):
    x = rand(rng, (4, 32), np.float32)
    expected = np.where(x > 0, x, -1.0).reshape(32, 4)
    return reshape_mask, (x, np.zeros((32, 4), np.float32)), {}, dict(num_subgroups=4), [x, expected]


RESHAPES = {
    "4x8-to-8x4": lambda rng: rows_case(rng, (4, 8), (8, 4)),
    "16x64-to-64x16-across-4-subgroups": lambda rng: rows_case(rng, (16, 64), (64, 16), (BANDS, BLOCKS)),
    "16x64-to-64x16-f16": lambda rng: rows_case(rng, (16, 64), (64, 16), (BANDS, BLOCKS), np.float16),
    "1x32-to-4x8": lambda rng: rows_case(rng, (1, 32), (4, 8)),
    "4x8-to-1x32": lambda rng: rows_case(rng, (4, 8), (1, 32)),
    "1x100-to-10x10": lambda rng: rows_case(rng, (1, 100), (10, 10)),
    "64-to-8x8-and-back": flat_case,
    "in-a-loop": loop_case,
    "i1-mask": mask_case,
}


@pytest.mark.parametrize("case", RESHAPES)
def test_reshape_that_moves_elements_between_rows(rng, case, on_each_device):
    """vector.shape_cast keeps row-major order: in the interpreter at every IR level (numpy), and as SPIR-V on
    opencl:cpu for the cpu and xe-emulated targets (wg-to-sg stores the source into SLM and loads the result)."""
    kern, args, consts, options, expected = RESHAPES[case](rng)
    if on_each_device == "numpy":
        func = kern.warmup(*args, **consts, **options, target="numpy").func
        levels = {"xetile": func, **lower(func, num_subgroups=options.get("num_subgroups"))}
        for name, level in levels.items():
            for got, want in zip(run_func(level, (1,), args), expected):
                np.testing.assert_array_equal(got, want, name)
    for target in ("cpu", "xe-emulated") if on_each_device != "numpy" else (None,):
        copies = [a.copy() for a in args]
        kern[(1,)](*copies, **consts, **options, **({"target": target} if target else {}))
        for got, want in zip(copies, expected):
            np.testing.assert_array_equal(got, want, target)


@xetile.kernel
def views(flat, out, R, C, LD):
    """A flat buffer read as an R x C matrix of row pitch LD, written through a column-major view of another."""
    t = xetile.init_tile(flat, [0, 0], [8, 16], base_shape=[R, C], base_strides=[LD, 1])
    v = xetile.load_tile(t, padding=-1.0)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16], base_shape=[R, C], base_strides=[1, R]), v * 2.0)


def test_base_shape_and_strides_view_a_buffer_as_a_matrix(rng):
    flat = rand(rng, 100, np.float32)
    out = np.zeros(100, np.float32)
    views[(1,)](flat, out, 6, 10, 12)
    expected = np.zeros(100, np.float32)
    expected[:60].reshape(10, 6).T[...] = flat[:72].reshape(6, 12)[:, :10] * 2
    assert_close(out, expected)


@pytest.mark.parametrize("width", [1, 17, 768, 1000, 4096])
def test_layer_norm_tutorial(rng, width):
    ln = tutorial("05-layer-norm")
    x = rand(rng, (3, width), np.float16)
    w, b = rand(rng, width, np.float16), rand(rng, width, np.float16)
    assert_close(ln.layer_norm(x, w, b), ln.reference(x, w, b), np.float16, scale=4)


@pytest.mark.parametrize("transposed_b", [False, True], ids=["b", "b-transposed"])
def test_batched_gemm_tutorial(rng, transposed_b):
    bg = tutorial("09-batched-gemm")
    a = rand(rng, (3, 40, 24), np.float16)
    b = rand(rng, (3, 36, 24), np.float16).transpose(0, 2, 1) if transposed_b else rand(rng, (3, 24, 36), np.float16)
    c = bg.bmm(a, b, bm=32, bn=32, bk=16)
    assert_close(c, a.astype(np.float32) @ b.astype(np.float32), np.float32)
