"""The numpy interpreter's checking mode (ir/checking.py): planted data races (SLM and global memory, subgroups and
lanes), a planted read of uninitialized SLM and a planted access through a view past its array each raise
InterpretCheckError naming the op and the kernel's line; the same kernels made right, gathers whose lanes the
language pads, barrier-ordered reductions and atomics from many subgroups, and every tutorial report nothing."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import rand, tutorial
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir.core import walk
from xetile_jit.ir.core_ops import BarrierOp
from xetile_jit.ir.interpreter import run_ir

ROWS = xetile.Layout(sg_layout=[4, 1], sg_data=[8, 32])   # subgroup i: rows 8i..8i+7
COLS = xetile.Layout(sg_layout=[1, 4], sg_data=[32, 8])   # subgroup j: columns 8j..8j+7


def line_of(kern, text: str) -> str:
    """`file:line` of the first line of `kern`'s source that contains `text`."""
    lines, first = inspect.getsourcelines(kern.fn)
    number = first + next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(kern.fn)}:{number}"


@xetile.kernel
def overwrite(x, y, BARRIER: xetile.constexpr):
    """Subgroup j writes SLM columns 8j.., then subgroup i rows 8i..: each overlaps every other's first write."""
    s = xetile.alloc_slm([32, 32], xetile.float32)
    xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=COLS), xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=COLS)))  # noqa: E501 - first
    if BARRIER:
        xetile.barrier()
    xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS), xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=ROWS)) * 2.0)  # noqa: E501 - second
    xetile.barrier()
    w = xetile.load_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS), w + xetile.cast(xetile.subgroup_id(), xetile.float32))


@xetile.kernel
def exchange(x, y, BARRIER: xetile.constexpr):
    """Columns to SLM, rows back: each subgroup reads what the others wrote (after zeros everywhere, so that a read
    before the write it races with reads initialized memory)."""
    s = xetile.alloc_slm([32, 32], xetile.float32)
    xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS), 0.0)
    xetile.barrier()
    xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=COLS), xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=COLS)))  # noqa: E501 - slm write
    if BARRIER:
        xetile.barrier()
    w = xetile.load_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS))  # slm read
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS), w + 1.0)


@xetile.kernel
def global_overwrite(x, y, BARRIER: xetile.constexpr):
    """overwrite's pattern on the output array in global memory."""
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=COLS), xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=COLS)))  # noqa: E501 - global first
    if BARRIER:
        xetile.barrier()
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=ROWS))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS), v + xetile.cast(xetile.subgroup_id(), xetile.float32))  # noqa: E501 - global second


def launch(kern, *args, **kwargs) -> None:
    kern[(1,)](*args, **kwargs, device="numpy", check=True)


def test_two_subgroups_writing_an_slm_element_with_no_barrier_race(rng):
    x, y = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    with pytest.raises(xetile.InterpretCheckError, match="data race in kernel overwrite: xegpu.store_nd") as info:
        launch(overwrite, x, y, BARRIER=False)
    message = str(info.value)
    assert line_of(overwrite, "# noqa: E501 - second") in message and line_of(overwrite, "# noqa: E501 - first") in message
    assert "of the SLM buffer of memref.alloc" in message and "with no barrier between them" in message
    launch(overwrite, x, y, BARRIER=True)
    np.testing.assert_array_equal(y, 2 * x + np.repeat(np.arange(4, dtype=np.float32), 8)[:, None])


def test_a_read_of_slm_another_subgroup_writes_with_no_barrier_races(rng):
    """No subgroup_id here: the numpy device runs the workgroup level, where one program orders everything; the
    subgroup levels race."""
    x, y = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    launch(exchange, x, y, BARRIER=False)
    func = exchange.warmup(x, y, BARRIER=False, target="numpy").func
    with pytest.raises(xetile.InterpretCheckError, match="data race in kernel exchange: xegpu.(load|store)_nd") as info:
        run_ir(lower(func, "xegpu-sg")["xegpu-sg"], (1, 1, 1), [x, y], check=True)
    assert line_of(exchange, "# slm read") in str(info.value) and line_of(exchange, "- slm write") in str(info.value)
    fixed = exchange.warmup(x, y, BARRIER=True, target="numpy").func
    for stage, lowered in lower(fixed).items():
        y[:] = 0
        run_ir(lowered, (1, 1, 1), [x, y], check=True)
        np.testing.assert_array_equal(y, x + 1, err_msg=stage)


def without_barriers(func):
    """`func` with its gpu.barrier ops erased: the barrier pass orders global accesses of different tiles by
    itself, so a race there is planted in the lowered IR."""
    for op in [op for op in walk(func.body) if isinstance(op, BarrierOp)]:
        op.erase()
    return func


def test_two_subgroups_writing_a_global_element_with_no_barrier_race(rng):
    x, y = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    launch(global_overwrite, x, y, BARRIER=False)  # the barrier pass put one between the stores
    np.testing.assert_array_equal(y, x + np.repeat(np.arange(4, dtype=np.float32), 8)[:, None])
    planted = without_barriers(global_overwrite.warmup(x, y, BARRIER=False, target="numpy").func)
    with pytest.raises(xetile.InterpretCheckError, match="data race in kernel global_overwrite: xegpu.store_nd") as info:
        run_ir(planted, (1, 1, 1), [x, y], check=True)
    message = str(info.value)
    assert line_of(global_overwrite, "- global second") in message and line_of(global_overwrite, "- global first") in message
    assert "of array 'y'" in message


WHOLE = xetile.Layout(sg_layout=[4, 1], sg_data=[32, 32])   # every subgroup holds the whole 32x32 tile


@xetile.kernel
def produced(x, y, WAIT: xetile.constexpr):
    """Subgroup 0 stages 3x in SLM (zeros first, so that a read before the staging races rather than reads
    uninitialized memory); every subgroup arrives at the named barrier and, with WAIT, waits before reading."""
    s = xetile.alloc_slm([32, 32], xetile.float32)
    xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS), 0.0)
    xetile.barrier()
    nb = xetile.named_barrier(1, 4)
    if xetile.subgroup_id() == 0:
        whole = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=WHOLE))
        xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=WHOLE), whole * 3.0)  # staging
    xetile.nbarrier_arrive(nb)
    if WAIT:
        xetile.nbarrier_wait(nb)
    mine = xetile.load_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS))  # consuming
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS), mine + 1.0)


def test_a_named_barrier_orders_only_with_its_wait(rng):
    x, y = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    with pytest.raises(xetile.InterpretCheckError, match="data race in kernel produced: xegpu.(load|store)_nd") as info:
        launch(produced, x, y, WAIT=False)
    assert line_of(produced, "# staging") in str(info.value) and line_of(produced, "# consuming") in str(info.value)
    launch(produced, x, y, WAIT=True)
    np.testing.assert_array_equal(y, 3 * x + 1)


@xetile.kernel
def staged(x, y, ROWS_WRITTEN: xetile.constexpr):
    """Stages x's first ROWS_WRITTEN rows in SLM and reads all 32 back."""
    s = xetile.alloc_slm([32, 32], xetile.float32)
    xetile.store_tile(xetile.init_tile(s, [0, 0], [ROWS_WRITTEN, 32]), xetile.load_tile(xetile.init_tile(x, [0, 0], [ROWS_WRITTEN, 32])))  # noqa: E501
    xetile.barrier()
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32]), xetile.load_tile(xetile.init_tile(s, [0, 0], [32, 32])))  # noqa: E501 - read back


def test_a_read_of_slm_nothing_wrote_is_reported_not_computed_with(rng):
    x, y = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    with pytest.raises(xetile.InterpretCheckError, match=r"read of uninitialized shared local memory in kernel staged: "
                       r"xetile.load_tile reads element \[16, 0\] of the SLM buffer of memref.alloc") as info:
        launch(staged, x, y, ROWS_WRITTEN=16)
    assert line_of(staged, "- read back") in str(info.value)
    assert not y.any()  # reported before the store: nothing computed with the poison
    launch(staged, x, y, ROWS_WRITTEN=32)
    np.testing.assert_array_equal(y, x)


@xetile.kernel
def gather(table, ids, out, MASKED: xetile.constexpr):
    i = xetile.load_tile(xetile.init_tile(ids, [0, 0], [1, 16]))
    t = xetile.init_tile(table, indices=i)
    v = xetile.load_gather(t, i < 64) if MASKED else xetile.load_gather(t)  # the gather
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), v)


def test_a_gather_lane_outside_the_array_reads_padding_and_is_not_reported(rng):
    """The language bounds-checks every gather lane (masked or not): one outside reads padding, as on a device."""
    table, out = rand(rng, (8, 8), np.float32), np.zeros((1, 16), np.float32)
    ids = np.arange(16, dtype=np.int32).reshape(1, 16) * 5  # 65 and 70 and 75 are past the 64 elements
    for masked in (False, True):
        launch(gather, table, ids, out, MASKED=masked)
        np.testing.assert_array_equal(out, np.where(ids < 64, table.ravel()[np.minimum(ids, 63)], 0))


@xetile.kernel
def through_view(flat, out, ROWS: xetile.constexpr):
    """flat's memory as a ROWS x 8 matrix (base_shape, base_strides): the tile pads against the view, which the
    kernel sizes itself."""
    view = xetile.init_tile(flat, [0, 0], [8, 8], base_shape=[ROWS, 8], base_strides=[8, 1])
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), xetile.load_tile(view) + 1.0)  # through the view


def test_an_access_through_a_view_past_the_array_is_reported(rng):
    flat, out = rand(rng, 60, np.float32), np.zeros((8, 8), np.float32)
    with pytest.raises(xetile.InterpretCheckError, match=r"out-of-bounds access in kernel through_view: "
                       r"xetile.load_tile reads element 60 of array 'flat', which has 60: the \[8, 8\] view it goes "
                       r"through \(base_shape, base_strides\) reaches past the array") as e:
        launch(through_view, flat, out, ROWS=8)
    assert line_of(through_view, "# through the view") in str(e.value)
    assert not out.any()
    launch(through_view, flat, out, ROWS=7)  # 56 elements: inside; the tile's last row reads padding
    np.testing.assert_array_equal(out, np.concatenate([flat[:56], np.zeros(8, np.float32)]).reshape(8, 8) + 1)
    func = through_view.warmup(flat, out, ROWS=8, target="numpy").func
    for stage, lowered in lower(func).items():
        with pytest.raises(xetile.InterpretCheckError, match=r"out-of-bounds access in kernel through_view: xe"):
            run_ir(lowered, (1, 1, 1), [flat, out], check=True)


@xetile.kernel
def scatter_add(ids, x, acc, ATOMIC: xetile.constexpr):
    """Every subgroup adds its rows of x at `ids` (repeated, so subgroups and lanes meet at elements)."""
    i = xetile.load_tile(xetile.init_tile(ids, [0, 0], [32, 32], layout=ROWS))
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=ROWS))
    if ATOMIC:
        xetile.atomic_rmw_tile("add", v, xetile.init_tile(acc, indices=i))
    else:
        xetile.store_scatter(xetile.init_tile(acc, indices=i), v)  # the scatter


def test_atomics_from_many_subgroups_do_not_race_but_plain_scatters_do(rng):
    ids, x = rand(rng, (32, 32), np.int32, 0, 7), rand(rng, (32, 32), np.int32)
    func = scatter_add.warmup(ids, x, np.zeros((1, 8), np.int32), ATOMIC=True, target="numpy").func
    for stage, lowered in [("xetile", func), *lower(func).items()]:
        acc = np.zeros((1, 8), np.int32)
        run_ir(lowered, (1, 1, 1), [ids, x, acc], check=True)
        np.testing.assert_array_equal(acc[0], np.bincount(ids.ravel(), x.ravel(), 8).astype(np.int32), err_msg=stage)
    with pytest.raises(xetile.InterpretCheckError, match="data race in kernel scatter_add: two lanes of "
                       "xetile.store_scatter write element") as info:
        launch(scatter_add, ids, x, np.zeros((1, 8), np.int32), ATOMIC=False)
    assert line_of(scatter_add, "# the scatter") in str(info.value)
    plain = scatter_add.warmup(ids, x, np.zeros((1, 8), np.int32), ATOMIC=False, target="numpy").func
    with pytest.raises(xetile.InterpretCheckError, match="data race in kernel scatter_add: "):
        run_ir(lower(plain, "xegpu-sg")["xegpu-sg"], (1, 1, 1), [ids, x, np.zeros((1, 8), np.int32)], check=True)


@xetile.kernel
def column_sums(x, y):
    """A reduction across subgroups: tile_reduce over dim 0 of a tile split by rows goes through SLM, with
    barriers, at the subgroup level."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=ROWS))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [1, 32]), xetile.tile_reduce("add", v, [0]))


def test_a_reduction_across_subgroups_through_slm_reports_nothing(rng):
    x, y = rand(rng, (32, 32), np.float32), np.zeros((1, 32), np.float32)
    func = column_sums.warmup(x, y, target="numpy").func
    for stage, lowered in [("xetile", func), *lower(func).items()]:
        y[:] = 0
        run_ir(lowered, (2, 1, 1), [x, y], check=True)
        np.testing.assert_allclose(y, x.sum(axis=0, keepdims=True), rtol=1e-5, err_msg=stage)


def test_the_environment_turns_checking_on_and_the_launch_option_overrides_it(rng, monkeypatch):
    x, y = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    overwrite[(1,)](x, y, BARRIER=False, device="numpy")  # off by default: the race goes unseen
    monkeypatch.setenv("XETILE_INTERPRET_CHECK", "1")
    with pytest.raises(xetile.InterpretCheckError):
        overwrite[(1,)](x, y, BARRIER=False, device="numpy")
    overwrite[(1,)](x, y, BARRIER=False, device="numpy", check=False)
    with pytest.raises(xetile.LaunchError, match="check must be True or False"):
        overwrite[(1,)](x, y, BARRIER=False, device="numpy", check="yes")


def test_checking_on_a_sycl_device_is_a_launch_error():
    x = np.zeros((32, 32), np.float32)
    with pytest.raises(xetile.LaunchError, match="check=True is the numpy interpreter's checking mode"):
        overwrite[(1,)](x, x.copy(), BARRIER=True, device="opencl:cpu", check=True)


# ---- every tutorial, checked at small sizes -----------------------------------------------------------------

def run_tutorials() -> None:
    rng = np.random.default_rng(0)
    f16 = lambda *shape: rng.standard_normal(shape, dtype=np.float32).astype(np.float16)  # noqa: E731
    f32 = lambda *shape: rng.standard_normal(shape, dtype=np.float32)  # noqa: E731
    tutorial("01-vector-add").vector_add(f32(3000), f32(3000), block=1024)
    tutorial("02-fused-softmax").softmax(f32(40, 300))
    mm = tutorial("03-matrix-multiplication")
    mm.matmul(f16(100, 72), f16(72, 90), bm=64, bn=64, bk=32)
    mm.matmul(f16(64, 64), f16(64, 64), activation="relu", bm=64, bn=64, bk=32)
    for config in tutorial("04-autotuning").configs()[:2]:
        mm.matmul_kernel[(2, 2)](f16(64, 64), f16(64, 64), np.zeros((64, 64), np.float32), 64, 64, 64,
                                 **config.kwargs, **config.options())
    tutorial("05-layer-norm").layer_norm(f32(6, 300), f32(300), f32(300))
    attention = tutorial("06-fused-attention")
    attention.attention(*attention.inputs(1, 2, 77, 64), causal=True)
    tutorial("07-gemm-bias-reduce").gemm_bias_reduce_rows(f16(100, 72), f16(90, 72), f32(1, 90), bm=64, bn=64)
    tutorial("08-slm-cooperative-gemm").slm_gemm(f16(64, 48), f16(48, 40))
    tutorial("09-batched-gemm").bmm(f16(2, 64, 40), f16(2, 40, 64), bm=64, bn=64)
    # rows of 100 in chunks of 64: a row's second chunk reaches into the next row, the last row's past the table,
    # whose lanes read padding (the gather's bounds rule), and the store drops the columns past 100
    table, ids = f32(50, 100), np.append(rng.integers(0, 50, (1, 99)), 49).reshape(1, 100).astype(np.int32)
    embedding = tutorial("10-embedding-gather")
    got = embedding.embedding(table, ids, np.zeros((100, 100), np.float32))
    np.testing.assert_array_equal(got, embedding.reference(table, ids[0]))
    grouped = tutorial("11-grouped-gemm")
    grouped.grouped_gemm(grouped.problems_of([(40, 30, 20), (33, 17, 50)], np.float16))


def test_every_tutorial_reports_nothing_in_checking_mode(monkeypatch):
    monkeypatch.setenv("XETILE_DEVICE", "numpy")
    monkeypatch.setenv("XETILE_INTERPRET_CHECK", "1")
    run_tutorials()


def test_every_tutorial_reports_nothing_at_its_subgroup_levels(monkeypatch):
    """The numpy device runs most tutorials at the workgroup level, where one program orders every access; their
    subgroup levels run the subgroups as threads, as the device does."""
    levels = []

    def every_level(func, grid, args, check=None):
        run_ir(func, grid, args, check)
        for stage, lowered in lower(func).items():
            if lowered.num_subgroups is not None and func.num_subgroups is None:
                run_ir(lowered, grid, [np.copy(a) if isinstance(a, np.ndarray) else a for a in args], check=True)
                levels.append((func.sym_name, stage))

    monkeypatch.setenv("XETILE_DEVICE", "numpy")
    monkeypatch.setattr("xetile_jit.jit.kernel.run_ir", every_level)
    run_tutorials()
    assert {"slm_gemm_kernel", "embedding_kernel", "attention_kernel"} <= {name for name, _ in levels}
    assert {stage for _, stage in levels} == {"xegpu-sg", "xegpu-blocked", "xegpu-simt"}
