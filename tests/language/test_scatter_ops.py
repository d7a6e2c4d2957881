"""Gather/scatter (XeTile RFC load_gather/store_scatter, XeGPU RFC scattered descriptors): `init_tile`
with `indices=` (and `chunk_size`), `load_gather`, `store_scatter`, `update_tile_offset` and `atomic_rmw_tile` on
#scatter tiles. Each kernel runs in the interpreter at every IR level and, launched, in the numpy interpreter and
as SPIR-V on opencl:cpu, against numpy; the verifier's rules and the printed RFC syntax are checked too."""
import re
import warnings

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.ir.interpreter import run_ir
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir.printer import print_func
from xetile_jit.ir.xetile_ops import written_arrays
from conftest import target_options

constexpr = xetile.constexpr
TWO_BY_TWO = xetile.Layout(sg_layout=[2, 2], sg_data=[8, 16])


@xetile.kernel
def gather_rows(table, idx, out, N: constexpr, D: constexpr, PAD: constexpr):
    rows = xetile.load_tile(xetile.init_tile(idx, [0, 0], [N, 1]))
    t = xetile.init_tile(table, indices=rows * D, shape=[N, D], chunk_size=D)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [N, D]), xetile.load_gather(t, rows % 5 != 0, padding=PAD))


@xetile.kernel
def scatter_transpose(src, dst, M: constexpr, N: constexpr, LAYOUT: constexpr):
    """dst[j, i] = src[i, j] through element offsets i + j * M, except where (i + j) % 3 == 0."""
    v = xetile.load_tile(xetile.init_tile(src, [0, 0], [M, N], layout=LAYOUT))
    i, j = xetile.iota([M, N], 0), xetile.iota([M, N], 1)
    xetile.store_scatter(xetile.init_tile(dst, indices=i + j * M), v, (i + j) % 3 != 0)


@xetile.kernel
def strided_sums(src, out, STEPS: constexpr):
    """out[0, j] = sum over s of src.flat[3 * j + 16 * s]: a #scatter tile moved by update_tile_offset in a loop."""
    t = xetile.init_tile(src, indices=xetile.iota([1, 16], 1) * 3)
    acc = xetile.zeros([1, 16], xetile.float32)
    for s in range(STEPS):
        acc = acc + xetile.load_gather(t)
        t = xetile.update_tile_offset(t, xetile.full([1, 16], 16, xetile.int32))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), acc)


@xetile.kernel
def histogram(keys, hist, old, N: constexpr):
    k = xetile.load_tile(xetile.init_tile(keys, [0, 0], [N, 16]))
    prev = xetile.atomic_rmw_tile("add", 1, xetile.init_tile(hist, indices=k), mask=k != 7)
    xetile.store_tile(xetile.init_tile(old, [0, 0], [N, 16]), prev)


def gather_case(rng):
    v, d, n = 50, 16, 32
    table = rng.standard_normal((v, d)).astype(np.float32)
    idx = rng.integers(-3, v + 3, (n, 1)).astype(np.int32)  # some rows out of the table: padding
    keep = (idx % 5 != 0) & (idx >= 0) & (idx < v)
    expected = np.where(keep, table[np.clip(idx[:, 0], 0, v - 1)], np.float32(-1))
    return (table, idx, np.zeros((n, d), np.float32)), dict(N=n, D=d, PAD=-1), 2, expected


def scatter_case(rng, layout):
    m, n = 16, 32
    src = rng.standard_normal((m, n)).astype(np.float32)
    i, j = np.indices((m, n))
    expected = np.full((n, m), 7, np.float32)
    keep = (i + j) % 3 != 0
    expected[j[keep], i[keep]] = src[keep]
    return (src, np.full((n, m), 7, np.float32)), dict(M=m, N=n, LAYOUT=layout), 1, expected


def strided_case(rng):
    src = rng.standard_normal((8, 16)).astype(np.float32)
    steps = 5
    flat = src.reshape(-1)
    expected = np.zeros((1, 16), np.float32)
    for s in range(steps):
        offsets = np.arange(16) * 3 + 16 * s
        expected[0] += np.where(offsets < flat.size, flat[np.minimum(offsets, flat.size - 1)], 0)
    return (src, np.zeros((1, 16), np.float32)), dict(STEPS=steps), 1, expected


@xetile.kernel
def gather_elements(src, idx, out):
    k = xetile.load_tile(xetile.init_tile(idx, [0, 0], [4, 16]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [4, 16]), xetile.load_gather(xetile.init_tile(src, indices=k)))


def view_case(rng, view):
    """Offsets index the logical row-major view of a pitched or column-major array, not its memory."""
    big = rng.standard_normal((24, 40)).astype(np.float32)
    src = {"pitched": big[:, 3:20], "column_major": big[:17, :].T}[view]
    idx = rng.integers(-5, src.size + 5, (4, 16)).astype(np.int32)
    flat = np.ascontiguousarray(src).reshape(-1)
    expected = np.where((idx >= 0) & (idx < src.size), flat[np.clip(idx, 0, src.size - 1)], 0)
    return (src, idx, np.zeros((4, 16), np.float32)), {}, 2, expected


@xetile.kernel
def gather_next_rows(table, idx, out, N: constexpr, D: constexpr):
    """out[i] = table[idx[i] + 1]: a chunked tile moved by update_tile_offset moves every element of a chunk by
    the chunk's delta (XeGPU RFC: a descriptor's offset is its chunk's start)."""
    rows = xetile.load_tile(xetile.init_tile(idx, [0, 0], [N, 1]))
    t = xetile.init_tile(table, indices=rows * D, shape=[N, D], chunk_size=D)
    t = xetile.update_tile_offset(t, xetile.full([N, 1], D, xetile.int32))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [N, D]), xetile.load_gather(t))


def moved_chunks_case(rng):
    v, d, n = 20, 8, 16
    table = rng.standard_normal((v, d)).astype(np.float32)
    idx = rng.integers(0, v - 1, (n, 1)).astype(np.int32)
    return (table, idx, np.zeros((n, d), np.float32)), dict(N=n, D=d), 2, table[idx[:, 0] + 1]


@xetile.kernel
def gather_1d(table, idx, perm, out):
    """out[perm[i]] = table.flat[idx[i]] (0 where idx[i] % 3 == 0): 1-D index tiles, 1-D arrays."""
    k = xetile.load_tile(xetile.init_tile(idx, [0], [64]))
    p = xetile.load_tile(xetile.init_tile(perm, [0], [64]))
    xetile.store_scatter(xetile.init_tile(out, indices=p), xetile.load_gather(xetile.init_tile(table, indices=k),
                                                                           k % 3 != 0))


def flat_table_case(rng, shape):
    """A gather from a flattened embedding table (1-D) or an array of rank 3, by offsets into it."""
    table = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(-5, table.size + 5, (4, 16)).astype(np.int32)
    flat = table.reshape(-1)
    expected = np.where((idx >= 0) & (idx < table.size), flat[np.clip(idx, 0, table.size - 1)], 0)
    return (table, idx, np.zeros((4, 16), np.float32)), {}, 2, expected


def indices_1d_case(rng):
    table = rng.standard_normal(100).astype(np.float32)
    idx = rng.integers(-3, 103, 64).astype(np.int32)
    perm = rng.permutation(64).astype(np.int32)
    expected = np.full(64, 5, np.float32)
    expected[perm] = np.where((idx >= 0) & (idx < 100) & (idx % 3 != 0), table[np.clip(idx, 0, 99)], 0)
    return (table, idx, perm, np.full(64, 5, np.float32)), {}, 3, expected


ARRAYS_NOT_2D = {
    "gather_from_1d_table": (gather_elements, lambda rng: flat_table_case(rng, (100,))),
    "gather_from_3d_array": (gather_elements, lambda rng: flat_table_case(rng, (3, 5, 7))),
    "gather_scatter_1d_indices": (gather_1d, indices_1d_case),
}

CASES = {
    **ARRAYS_NOT_2D,
    "update_offset_of_chunks": (gather_next_rows, moved_chunks_case),
    "gather_from_pitched_view": (gather_elements, lambda rng: view_case(rng, "pitched")),
    "gather_from_column_major_view": (gather_elements, lambda rng: view_case(rng, "column_major")),
    "gather_rows_chunked": (gather_rows, gather_case),
    "scatter_masked_1_subgroup": (scatter_transpose, lambda rng: scatter_case(rng, None)),
    "scatter_masked_2x2_subgroups": (scatter_transpose, lambda rng: scatter_case(rng, TWO_BY_TWO)),
    "update_offset_in_loop": (strided_sums, strided_case),
}


@pytest.mark.parametrize("case", CASES)
def test_every_level_interprets_like_numpy(rng, case):
    kern, make = CASES[case]
    args, consts, result, expected = make(rng)
    func = kern.warmup(*args, **consts, target="numpy").func
    levels = {"xetile": func, **lower(func, "xegpu-simt")}
    for name, level in levels.items():
        fresh = [a.copy() for a in args]
        run_ir(level, (1, 1, 1), fresh)
        np.testing.assert_allclose(fresh[result], expected, rtol=1e-5, err_msg=name)


@pytest.mark.parametrize("case", CASES)
def test_launch_on_each_device(rng, case, on_each_device):
    """In the interpreter, and on opencl:cpu for the cpu and xe-emulated targets."""
    kern, make = CASES[case]
    for options in target_options(on_each_device):
        args, consts, result, expected = make(rng)
        kern[(1,)](*args, **consts, **options)
        np.testing.assert_allclose(args[result], expected, rtol=1e-5, err_msg=str(options))


def histogram_case(rng):
    keys = rng.integers(-2, 12, (4, 16)).astype(np.int32)  # outside [0, 10): dropped; 7: masked off
    return keys, np.zeros((1, 10), np.int32), np.full((4, 16), -5, np.int32)


def expected_histogram(keys):
    counted = keys[(keys >= 0) & (keys < 10) & (keys != 7)]
    return np.bincount(counted, minlength=10).reshape(1, 10)


def test_atomic_rmw_on_scatter_tile_every_level(rng):
    keys, hist, old = histogram_case(rng)
    func = histogram.warmup(keys, hist, old, N=4, target="numpy").func
    for name, level in {"xetile": func, **lower(func, "xegpu-simt")}.items():
        h, o = hist.copy(), old.copy()
        run_ir(level, (1, 1, 1), [keys, h, o])
        np.testing.assert_array_equal(h, expected_histogram(keys), err_msg=name)
        inactive = (keys < 0) | (keys >= 10) | (keys == 7)
        assert (o[inactive] == 0).all() and (o[~inactive] >= 0).all(), name


@pytest.mark.usefixtures("on_each_device")
def test_atomic_rmw_on_scatter_tile_launched(rng):
    keys, hist, old = histogram_case(rng)
    with warnings.catch_warnings():  # hist (40-byte rows) is only gathered: no 2D block message would address it
        warnings.simplefilter("error", xetile.BlockIOFallbackWarning)
        histogram[(3,)](keys, hist, old, N=4)  # three workgroups add to one histogram
    np.testing.assert_array_equal(hist, 3 * expected_histogram(keys))


@pytest.mark.parametrize("target, atomics", [("cpu", 1), ("xe-emulated", 1), ("xe-hpc", 4)])
def test_a_lanes_scattered_elements_are_a_loop_on_the_cpu_targets(rng, target, atomics):
    """Each lane's 4 keys (a 4x16 tile) are one atomic add in a loop over them on the CPU targets
    (Lanes.looped: their driver's build time grows with the unrolled code), four unrolled adds on a GPU."""
    keys, hist, old = histogram_case(rng)
    llir = histogram.warmup(keys, hist, old, N=4, target=target).asm["llir"]
    assert llir.count(" atomicrmw ") == atomics


WHOLE = xetile.Layout(sg_layout=[4, 1], sg_data=[4, 16])  # every subgroup holds all of the 4x16 tile
HALVES = xetile.Layout(sg_layout=[2, 2], sg_data=[4, 8])  # each element is held by two subgroups


@xetile.kernel
def counted(keys, counts, old, LAYOUT: constexpr, OLD: constexpr):
    """counts[k] += 1 for every key k but 3 (masked off); with OLD, `old` gets each count before its add."""
    k = xetile.load_tile(xetile.init_tile(keys, [0, 0], [4, 16], layout=LAYOUT))
    prev = xetile.atomic_rmw_tile("add", 1, xetile.init_tile(counts, indices=k), mask=k != 3)
    if OLD:
        xetile.store_tile(xetile.init_tile(old, [xetile.program_id(0) * 4, 0], [4, 16], layout=LAYOUT), prev)


def check_counted_once(keys, counts, old, workgroups: int, olds: bool) -> None:
    """Each element's add happened once: the counts, and per key the old values 0 .. count - 1 once each."""
    expected = workgroups * np.bincount(keys[keys != 3], minlength=10)
    np.testing.assert_array_equal(counts[0], expected)
    if olds:
        every = np.tile(keys, (workgroups, 1))
        for key in range(10):
            got = np.sort(old[every == key])
            np.testing.assert_array_equal(got, np.zeros_like(got) if key == 3 else np.arange(expected[key]))


SHARED_SCATTER = [(layout, olds) for layout in ("whole", "halves") for olds in (False, True)]


def shared_scatter_case(rng, layout: str, olds: bool, workgroups: int):
    keys = rng.integers(0, 10, (4, 16)).astype(np.int32)
    args = keys, np.zeros((1, 10), np.int32), np.full((4 * workgroups, 16), -1, np.int32)
    return args, dict(LAYOUT={"whole": WHOLE, "halves": HALVES}[layout], OLD=olds)


@pytest.mark.parametrize("layout, olds", SHARED_SCATTER)
def test_atomic_on_a_scatter_tile_several_subgroups_hold_every_level(rng, layout, olds):
    """The first subgroup that holds an element does its atomic (and shares the old value through SLM): each
    element adds 1 once at every level."""
    args, consts = shared_scatter_case(rng, layout, olds, 1)
    func = counted.warmup(*args, **consts, target="numpy").func
    levels = {"xetile": func, **lower(func)}
    assert levels["xegpu-sg"].num_subgroups == 4
    for name, level in levels.items():
        keys, counts, old = (a.copy() for a in args)
        run_ir(level, (1, 1, 1), [keys, counts, old])
        check_counted_once(keys, counts, old, 1, olds)


@pytest.mark.usefixtures("on_each_device")
@pytest.mark.parametrize("layout, olds", SHARED_SCATTER)
def test_atomic_on_a_scatter_tile_several_subgroups_hold_launched(rng, layout, olds, on_each_device):
    """Three workgroups of four subgroups add to one counter array (cpu and xe-emulated on opencl:cpu)."""
    args, consts = shared_scatter_case(rng, layout, olds, 3)
    for options in target_options(on_each_device):
        keys, counts, old = (a.copy() for a in args)
        counted[(3,)](keys, counts, old, **consts, **options)
        check_counted_once(keys, counts, old, 3, olds)


def test_store_scatter_marks_its_array_written(rng):
    args, consts, _, _ = scatter_case(rng, None)
    func = scatter_transpose.warmup(*args, **consts, target="numpy").func
    assert [a.name_hint for a in written_arrays(func)] == ["dst"]


def test_printed_in_the_rfc_syntax(rng):
    args, consts, _, _ = gather_case(rng)
    func = gather_rows.warmup(*args, **consts, target="numpy").func
    text = print_func(func)
    assert re.search(r"xetile.init_tile %table, %\d+ : memref<\?x\?xf32, strided<\[\?, 1\]>>, vector<32x1xi32> "
                     r"into !xetile.tile<32x16xf32, #scatter<chunk_size = 16>>", text), text
    assert re.search(r"xetile.load_gather %\d+, %\d+ \{padding = -1\} : !xetile.tile<32x16xf32, "
                     r"#scatter<chunk_size = 16>>, vector<32x1xi1> into vector<32x16xf32>", text), text
    args, consts, _, _ = scatter_case(rng, None)
    func = scatter_transpose.warmup(*args, **consts, target="numpy").func
    text = print_func(func)
    assert re.search(r"xetile.store_scatter %\d+, %\d+, %\d+ : vector<16x32xf32>, vector<16x32xi1> into "
                     r"!xetile.tile<16x32xf32, #scatter>", text), text
    xegpu = print_func(lower(func, "xegpu-wg")["xegpu-wg"])
    assert re.search(r"xegpu.create_tdesc %dst, %\d+ : memref<\?x\?xf32, strided<\[\?, 1\]>>, vector<16x32xi32> "
                     r"-> !xegpu.tensor_desc<16x32xf32, #xegpu.scatter_tdesc_attr<>", xegpu), xegpu
    assert re.search(r"xegpu.store %\d+, %\d+, %\d+ .*: vector<16x32xf32>, !xegpu.tensor_desc<16x32xf32, "
                     r"#xegpu.scatter_tdesc_attr<>", xegpu), xegpu


# ---- verifier: one test per rule, the message asserted -------------------------------------------------
@xetile.kernel
def bad_chunk(table, idx, CHUNK: constexpr):
    rows = xetile.load_tile(xetile.init_tile(idx, [0, 0], [16, 1]))
    xetile.load_gather(xetile.init_tile(table, indices=rows, chunk_size=CHUNK))


@xetile.kernel
def float_offsets(table, x):
    xetile.load_gather(xetile.init_tile(table, indices=xetile.load_tile(xetile.init_tile(x, [0, 0], [1, 16]))))


@xetile.kernel
def bad_index_shape(table):
    xetile.load_gather(xetile.init_tile(table, indices=xetile.iota([16, 2], 0), chunk_size=4))


@xetile.kernel
def bad_mask_shape(table):
    xetile.load_gather(xetile.init_tile(table, indices=xetile.iota([1, 16], 1)), xetile.iota([2, 8], 1) > 3)


@xetile.kernel
def load_tile_of_scatter(table):
    xetile.load_tile(xetile.init_tile(table, indices=xetile.iota([1, 16], 1)))


@xetile.kernel
def gather_of_block_tile(table):
    xetile.load_gather(xetile.init_tile(table, [0, 0], [1, 16]))


@xetile.kernel
def bad_store_value(table):
    xetile.store_scatter(xetile.init_tile(table, indices=xetile.iota([1, 16], 1)), xetile.zeros([2, 16]))


@xetile.kernel
def bad_padding(table):
    xetile.load_gather(xetile.init_tile(table, indices=xetile.iota([1, 16], 1)), padding=1000)


@xetile.kernel
def bad_delta(table):
    t = xetile.init_tile(table, indices=xetile.iota([1, 16], 1))
    xetile.load_gather(xetile.update_tile_offset(t, xetile.zeros([1, 16])))


F32 = np.zeros((4, 16), np.float32)
I32 = np.zeros((16, 1), np.int32)
I8 = np.zeros((4, 16), np.int8)
VERIFIER_CASES = [
    (bad_chunk, (F32, I32), dict(CHUNK=5), "chunk_size 5 must be one of 2, 3, 4, 8, 16, 32, 64 "
                                           "[chunk_size values of scatter_tdesc_attr]"),
    (float_offsets, (F32, F32), {}, "offsets must be an integer vector, got vector<1x16xf32> "
                                    "[scatter offsets are integer vectors]"),
    (bad_index_shape, (F32,), {}, "offsets vector<16x2xi32> must have shape [16, 1] "
                                  "for !xetile.tile<16x4xf32, #scatter<chunk_size = 4>> "
                                  "[one offset per element, or per chunk with chunk_size]"),
    (bad_mask_shape, (F32,), {}, "mask vector<2x8xi1> must be vector<1x16xi1> "
                                 "[the mask has one i1 per offset (chunk_size: per chunk)]"),
    (load_tile_of_scatter, (F32,), {}, "is a #scatter tile; use load_gather, store_scatter "
                                       "[xetile.load_tile takes a block tile]"),
    (gather_of_block_tile, (F32,), {}, "load_gather: expected a #scatter tile made by init_tile(array, indices=...)"),
    (bad_store_value, (F32,), {}, "value vector<2x16xf32> must be vector<1x16xf32> "
                                  "[store_scatter value matches the tile]"),
    (bad_padding, (I8,), {}, "padding 1000 is not representable in i8 [padding value has the tile's element type]"),
    (bad_delta, (F32,), {}, "delta must be an integer vector, got vector<1x16xf32> "
                            "[scatter offsets are integer vectors]"),
]


@pytest.mark.parametrize("kern, args, consts, message", VERIFIER_CASES, ids=[c[0].__name__ for c in VERIFIER_CASES])
def test_verifier_rules(kern, args, consts, message):
    with pytest.raises(xetile.CompilationError, match=re.escape(message)):
        kern.warmup(*args, **consts, target="numpy")


@xetile.kernel
def increment_through_one_tile(x):
    t = xetile.init_tile(x, indices=xetile.iota([2, 16], 1) % 8)  # both subgroups' rows address x[0, :8]
    xetile.store_scatter(t, xetile.load_gather(t) + 1)


def test_a_gather_and_a_scatter_through_one_tile_are_ordered():
    """Offsets need not keep to a subgroup's piece: the other subgroup's read must come before this one's write."""
    x = np.zeros((1, 16), np.float32)
    func = increment_through_one_tile.warmup(x, target="numpy").func
    text = print_func(lower(func, "xegpu-sg", num_subgroups=2)["xegpu-sg"])
    assert "num_subgroups = 2" in text
    load, store = text.index("xegpu.load "), text.index("xegpu.store ")
    assert "gpu.barrier" in text[load:store], text


@pytest.mark.usefixtures("on_each_device")
def test_tutorial_embedding_gather(rng):
    from conftest import tutorial
    tut = tutorial("10-embedding-gather")
    table = rng.standard_normal((40, 96)).astype(np.float32)  # 96 columns: the second 64-column chunk is half out
    ids = rng.integers(-2, 43, (1, 100)).astype(np.int32)
    ids[0, ::7] = -1
    out = tut.embedding(table, ids, np.full((100, 96), 9, np.float32))
    np.testing.assert_array_equal(out, tut.reference(table, ids[0]))


@pytest.mark.usefixtures("on_each_device")
@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.int8, np.uint16, np.int64, np.bool_],
                         ids=["f16", "bf16", "i8", "ui16", "i64", "bool"])
def test_scatter_of_each_dtype(rng, dtype):
    import ml_dtypes
    dtype = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    src = (rng.integers(0, 2, (16, 32)) if dtype == np.bool_ else rng.integers(-50, 50, (16, 32))).astype(dtype)
    dst = np.zeros((32, 16), dtype)
    scatter_transpose[(1,)](src, dst, M=16, N=32, LAYOUT=None)
    i, j = np.indices((16, 32))
    keep = (i + j) % 3 != 0
    expected = np.zeros((32, 16), dtype)
    expected[j[keep], i[keep]] = src[keep]
    np.testing.assert_array_equal(dst, expected)
