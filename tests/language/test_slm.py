"""Shared local memory, barriers, fences and named barriers in the user's hands: `alloc_slm` buffers with
tiles on them, `barrier`, `fence`, `named_barrier`/`nbarrier_arrive`/`nbarrier_wait`. Each kernel runs in the
numpy interpreter at every IR level and on each device (numpy, SPIR-V on opencl:cpu); the verifier rules, the
printed IR, the SLM budget, the barrier pass's interplay and the SPIR-V lowering of named barriers."""
from __future__ import annotations

import re
import threading

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, rand
from conftest import tutorial
from test_passes import run_func
from test_printer import assert_lines
from xetile_jit.toolchain import ocloc
from xetile_jit.ir.interpreter import Workgroup
from xetile_jit.compiler.pipeline import compile_spirv, lower
from xetile_jit.target.targets import get_target
from xetile_jit.ir import core_ops as C
from xetile_jit.ir import sync_ops as S
from xetile_jit.ir import xegpu_ops as G
from xetile_jit.ir.core import Builder, FuncOp, walk
from xetile_jit.ir.printer import print_func
from xetile_jit.ir.types import IndexType, SlmMemRefType, float32
from xetile_jit.ir.verifier import verify_op

ROWS = xetile.Layout(sg_layout=[4, 1], sg_data=[8, 32])   # subgroup i: rows 8i..8i+7
COLS = xetile.Layout(sg_layout=[1, 4], sg_data=[32, 8])   # subgroup j: columns 8j..8j+7


@xetile.kernel
def exchange(x, y, FENCE: xetile.constexpr = "slm"):
    """Each subgroup writes a band of columns to SLM and, after the barrier, reads a band of rows that every
    subgroup wrote part of: only a working barrier gives y = 2x + 1."""
    s = xetile.alloc_slm([32, 32], xetile.float32)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=COLS))
    xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=COLS), v * 2.0)
    xetile.fence(scope="workgroup", memory=FENCE)
    xetile.barrier()
    w = xetile.load_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS), w + 1.0)


@xetile.kernel
def histogram(keys, counts, N: xetile.constexpr):
    """atomic_rmw_tile on a 1-D SLM buffer ([N] is [1, N]): every workgroup adds its row of keys, one per column."""
    s = xetile.alloc_slm([N], xetile.int32)
    xetile.store_tile(xetile.init_tile(s, [0, 0], [1, N]), 0)
    xetile.barrier()
    row = xetile.program_id(0)
    for i in range(4):
        xetile.atomic_rmw_tile("add", xetile.load_tile(xetile.init_tile(keys, [row * 4 + i, 0], [1, N])),
                               xetile.init_tile(s, [0, 0], [1, N]))
    xetile.barrier()
    xetile.store_tile(xetile.init_tile(counts, [row, 0], [1, N]), xetile.load_tile(xetile.init_tile(s, [0, 0], [1, N])))


@xetile.kernel
def named(x, y):
    """A named barrier every subgroup meets: arrive after writing SLM, wait before reading it."""
    nb = xetile.named_barrier(1, 4)
    s = xetile.alloc_slm([32, 32], xetile.float32)
    xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=COLS),
                      xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=COLS)))
    xetile.nbarrier_arrive(nb)
    xetile.nbarrier_wait(nb)
    w = xetile.load_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS), w - 3.0)


def every_level(kern, args, kwargs, grid, expected) -> None:
    """`kern` gives `expected` (its array arguments afterwards) in the interpreter at every level."""
    func = kern.warmup(*args, **kwargs, target="numpy").func
    for stage, lowered in [("xetile", func), *lower(func).items()]:
        for got, want in zip(run_func(lowered, grid, args), expected):
            assert_close(got, want, want.dtype), stage


def test_slm_exchange_at_every_level_and_device(rng, on_each_device):
    x = rand(rng, (32, 32), np.float32)
    y = np.zeros_like(x)
    every_level(exchange, (x, y), {}, (1,), [x, 2 * x + 1])
    exchange[(1,)](x, y)
    assert_close(y, 2 * x + 1)


def test_slm_atomics_on_a_1d_buffer(rng, on_each_device):
    keys = rand(rng, (8, 16), np.int32, 0, 9)
    counts = np.zeros((2, 16), np.int32)
    expected = keys.reshape(2, 4, 16).sum(axis=1)
    every_level(histogram, (keys, counts), dict(N=16), (2,), [keys, expected])
    histogram[(2,)](keys, counts, N=16)
    np.testing.assert_array_equal(counts, expected)


def test_named_barrier_of_the_whole_workgroup(rng, on_each_device):
    x = rand(rng, (32, 32), np.float32)
    y = np.zeros_like(x)
    every_level(named, (x, y), {}, (1,), [x, x - 3])
    named[(1,)](x, y)
    assert_close(y, x - 3)


def test_only_written_arguments_are_copied_back():
    """An SLM buffer is no argument: the host copies back y only."""
    x = np.zeros((32, 32), np.float32)
    assert exchange.warmup(x, x.copy(), target="numpy").written == frozenset({"y"})


# ---- the interpreter's named barrier: producers and consumers ------------------------------------------------

def test_named_barrier_phases_order_producers_before_consumers():
    """Two producers write and arrive; two consumers wait and read; a fifth subgroup never takes part."""
    workgroup = Workgroup(5)
    nb = workgroup.named_barrier(3, 4)
    data, seen = [0, 0], []

    def producer(i):
        data[i] = i + 10
        nb.arrive()

    def consumer():
        nb.wait(nb.arrive(), workgroup)
        seen.append(list(data))

    threads = [threading.Thread(target=consumer) for _ in range(2)] + \
              [threading.Thread(target=producer, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert seen == [[10, 11], [10, 11]] and nb.phase == 1 and nb.arrived == 0


def test_named_barrier_that_too_few_subgroups_arrive_at_is_a_launch_error(monkeypatch):
    monkeypatch.setattr("xetile_jit.ir.interpreter.NBARRIER_TIMEOUT", 0.05)
    workgroup = Workgroup(2)
    nb = workgroup.named_barrier(0, 2)
    with pytest.raises(xetile.LaunchError, match=re.escape(
            "named barrier 0 waited 0.05 s for its 2 participants (1 arrived): fewer subgroups arrive than it counts")):
        nb.wait(nb.arrive(), workgroup)


def test_named_barrier_counting_more_subgroups_than_the_workgroup_has():
    with pytest.raises(xetile.LaunchError, match="counts 5 participants but the workgroup has 4 subgroups"):
        Workgroup(4).named_barrier(0, 5)


def test_named_barrier_initialized_with_two_counts():
    workgroup = Workgroup(4)
    workgroup.named_barrier(7, 2)
    with pytest.raises(xetile.LaunchError, match="named barrier 7 initialized with 3 and with 2 participants"):
        workgroup.named_barrier(7, 3)


# ---- printed IR --------------------------------------------------------------------------------------------

def test_printed_ir_in_rfc_syntax():
    x = np.zeros((32, 32), np.float32)
    asm = named.warmup(x, x.copy(), target="numpy").asm
    assert_lines(asm["xetile"], """
        %0 = xegpu.init_nbarrier 1, 4 : i8, i8 -> !xegpu.nbarrier
        %1 = memref.alloc() : memref<32x32xf32, slm>
        xegpu.nbarrier_arrive %0 : !xegpu.nbarrier
        xegpu.nbarrier_wait %0 : !xegpu.nbarrier
    """)
    assert re.search(r"xetile.init_tile %1\[%\d+, %\d+\] : memref<32x32xf32, slm> -> !xetile.tile<32x32xf32",
                     asm["xetile"])
    compiled = exchange.warmup(x, x.copy(), FENCE="global", target="numpy")
    assert_lines(compiled.asm["xetile"], """
        xegpu.fence {scope = workgroup, memory_kind = global}
        gpu.barrier {by_user}
    """)
    xegpu = print_func(lower(compiled.func, "xegpu-wg")["xegpu-wg"])
    assert re.search(r"xegpu.create_nd_tdesc %0\[%\d+, %\d+\] : memref<32x32xf32, slm> -> "
                     r"!xegpu.tensor_desc<32x32xf32, #xegpu.block_tdesc_attr<memory_space = slm>, "
                     r"#xegpu.layout<sg_layout = \[1, 4\]", xegpu)


# ---- verifier rules, one test each ----------------------------------------------------------------------------

@xetile.kernel
def k_fence(SCOPE: xetile.constexpr, MEMORY: xetile.constexpr):
    xetile.fence(scope=SCOPE, memory=MEMORY)


@pytest.mark.parametrize("scope, memory, message", [
    ("device", "global", "scope 'device' must be one of workgroup, gpu [fence scope is workgroup or gpu]"),
    ("gpu", "private", "memory_kind 'private' must be one of global, slm [fence memory_kind is global or slm]"),
])
def test_fence_rules(scope, memory, message):
    with pytest.raises(xetile.CompilationError, match=re.escape(message)):
        k_fence.warmup(SCOPE=scope, MEMORY=memory, target="numpy")


@xetile.kernel
def k_nbarrier(ID: xetile.constexpr, COUNT: xetile.constexpr):
    xetile.nbarrier_wait(xetile.named_barrier(ID, COUNT))


@pytest.mark.parametrize("id, count, message", [
    (32, 2, "named barrier id 32 is not in 0..31 [a workgroup has 32 named barriers]"),
    (1, 0, "0 participants; a named barrier needs at least one [participant_thread_num is at least 1]"),
])
def test_named_barrier_rules(id, count, message):
    with pytest.raises(xetile.CompilationError, match=re.escape(message)):
        k_nbarrier.warmup(ID=id, COUNT=count, target="numpy")


def test_nbarrier_arrive_takes_a_named_barrier():
    func = FuncOp("f", [], [], {})
    b = Builder(func.body)
    slm = b.create(C.SlmAllocOp, SlmMemRefType(float32, shape=(8, 8))).result
    op = b.create(S.NbarrierArriveOp, slm)
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "operand must be a named barrier, got memref<8x8xf32, slm> [xegpu.nbarrier_arrive takes an "
            "init_nbarrier result]")):
        verify_op(op)


def test_tensor_desc_memory_space_matches_its_base():
    func = FuncOp("f", [], [], {})
    b = Builder(func.body)
    slm = b.create(C.SlmAllocOp, SlmMemRefType(float32, shape=(8, 8))).result
    zero = b.create(C.ConstantOp, 0, IndexType()).result
    op = b.create(G.CreateNdDescOp, slm, [zero, zero], G.TensorDescType((8, 8), float32))
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "memory_space = global on a base in slm memory [memory_space matches the base's memory]")):
        verify_op(op)


def test_slm_buffer_is_2d():
    op = C.SlmAllocOp(SlmMemRefType(float32, shape=(2, 3, 4)))
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "shape [2, 3, 4] must be 2-D and positive [an SLM buffer has a static 2-D shape]")):
        verify_op(op)


@xetile.kernel
def k_alloc_in_loop(x):
    for i in range(2):
        s = xetile.alloc_slm([8, 8], xetile.float32)
        xetile.store_tile(xetile.init_tile(s, [0, 0], [8, 8]), 1.0)


def test_slm_is_allocated_in_the_kernel_body():
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "allocates shared local memory inside a loop or branch [SLM is allocated once per workgroup, in the "
            "kernel's body]")):
        k_alloc_in_loop.warmup(np.zeros((8, 8), np.float32), target="numpy")


@xetile.kernel
def k_big_slm(x, ROWS_: xetile.constexpr):
    s = xetile.alloc_slm([ROWS_, 1024], xetile.float32)
    xetile.store_tile(xetile.init_tile(s, [0, 0], [8, 8]), xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8])))


@pytest.mark.parametrize("target, rows", [("xe-hpg", 17), ("xe-hpc", 33)])
def test_slm_budget_of_the_target(target, rows):
    """64 KiB on xe-hpg, 128 KiB on xe-hpc: one 4 KiB row of floats more is a CompilationError naming the rule."""
    slm_bytes = get_target(target).slm_bytes
    func = k_big_slm.warmup(np.zeros((8, 8), np.float32), ROWS_=rows - 1, target="numpy").func
    lower(func, "xegpu-sg", target=target)  # fits exactly
    func = k_big_slm.warmup(np.zeros((8, 8), np.float32), ROWS_=rows, target="numpy").func
    with pytest.raises(xetile.CompilationError, match=re.escape(
            f"needs {rows * 4096} bytes of shared local memory ({rows * 4096} in alloc_slm buffers, 0 for layout "
            f"conversions); target {target} has {slm_bytes} [SLM per workgroup fits the target's slm_bytes]")):
        lower(func, "xegpu-sg", target=target)


# ---- the barrier pass and user synchronization ----------------------------------------------------------------

@xetile.kernel
def k_rewrite(x, SYNC: xetile.constexpr):
    """Subgroups write x in bands of columns, then read it back in bands of rows: a conflict the barrier pass
    orders unless the user's barrier already does."""
    xetile.store_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=COLS), 1.0)
    if SYNC == "barrier":
        xetile.barrier()
    if SYNC == "fence":
        xetile.fence()
    t = xetile.init_tile(x, [0, 0], [32, 32], layout=ROWS)
    xetile.store_tile(t, xetile.load_tile(t) + 2.0)


def test_slm_is_ordered_by_the_users_barriers_only():
    """The pass adds no barrier for SLM accesses: the exchange keeps just the user's."""
    x = np.zeros((32, 32), np.float32)
    sg = lower(exchange.warmup(x, x.copy(), target="numpy").func, "xegpu-sg")["xegpu-sg"]
    assert sum(isinstance(op, C.BarrierOp) for op in walk(sg.body)) == 1


@pytest.mark.parametrize("sync", ["none", "barrier", "fence"])
def test_user_barrier_replaces_the_pass_barrier_and_a_fence_does_not(sync):
    func = k_rewrite.warmup(np.zeros((32, 32), np.float32), SYNC=sync, target="numpy").func
    sg = lower(func, "xegpu-sg")["xegpu-sg"]
    assert sum(isinstance(op, C.BarrierOp) for op in walk(sg.body)) == 1


# ---- named barriers in SPIR-V ----------------------------------------------------------------------------------

@xetile.kernel
def k_subset(x, COUNT: xetile.constexpr = 2):
    """Four subgroups (the tile's layout) arrive at a named barrier that counts COUNT."""
    nb = xetile.named_barrier(COUNT, COUNT)
    t = xetile.init_tile(x, [0, 0], [32, 32], layout=COLS)
    xetile.store_tile(t, xetile.load_tile(t) + 1.0)
    xetile.nbarrier_arrive(nb)
    xetile.nbarrier_wait(nb)


def test_subset_named_barrier_runs_in_the_interpreter_at_every_level(rng):
    """Four subgroups at a barrier of two: two phases, each wait returns once its phase is complete."""
    x = rand(rng, (32, 32), np.float32)
    every_level(k_subset, (x,), {}, (1,), [x + 1])


def test_subset_named_barrier_on_each_device(rng, on_each_device):
    """Every subgroup arrives, and two divides four: SPIR-V's workgroup barrier at the wait finds both phases
    complete (one barrier, no other)."""
    x = rand(rng, (32, 32), np.float32)
    expected = x + 1
    k_subset[(1,)](x)
    assert_close(x, expected)
    llir = compile_spirv(k_subset.warmup(x, target="numpy").func, get_target("cpu"))["llir"]
    assert llir.count("call void @\"__spirv_ControlBarrier\"") == 1


def test_named_barrier_whose_count_does_not_divide_the_subgroups_is_not_in_spirv():
    """Four subgroups arrive at a barrier of three: the fourth one's phase needs an arrive after its wait."""
    func = k_subset.warmup(np.zeros((32, 32), np.float32), COUNT=3, target="numpy").func
    with pytest.raises(NotImplementedError, match=re.escape(
            "named barrier 3 of 3 participants in SPIR-V, where all the workgroup's 4 subgroups arrive: they do not "
            "make whole phases")):
        compile_spirv(func, get_target("cpu"))


# ---- tutorial 8 ------------------------------------------------------------------------------------------------

def test_tutorial_slm_gemm(rng, on_each_device):
    """72 x 40 x 56 leaves partial blocks (32 x 32 x 16) in M, N and K."""
    gemm = tutorial("08-slm-cooperative-gemm")
    a, b = rand(rng, (72, 56), np.float16), rand(rng, (56, 40), np.float16)
    # sums of 56 products up to 16 in f32, in a different order from numpy's: a few roundings of the largest terms
    assert_close(gemm.slm_gemm(a, b), a.astype(np.float32) @ b.astype(np.float32), np.float32, scale=4)


# ---- subgroup_id: roles --------------------------------------------------------------------------------------

WHOLE = xetile.Layout(sg_layout=[4, 1], sg_data=[32, 32])   # every subgroup holds the whole 32x32 tile


@xetile.kernel
def roles(x, y):
    """Subgroup 2 doubles its rows; every subgroup adds its id to its rows."""
    t = xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=ROWS))
    if xetile.subgroup_id() == 2:
        v = v * 2.0
    xetile.store_tile(t, v + xetile.cast(xetile.subgroup_id(), xetile.float32))


def test_subgroup_id_gives_roles(rng, on_each_device):
    x, y = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    roles[(1,)](x, y)
    expected = x.copy()
    expected[16:24] *= 2
    np.testing.assert_array_equal(y, expected + np.repeat(np.arange(4, dtype=np.float32), 8)[:, None])


@xetile.kernel
def producer_consumer(x, y, ARRIVE_IN_BRANCH: xetile.constexpr = False):
    """Subgroup 0 alone (it holds the whole tile) stages x (times 3) in SLM; after the named barrier every subgroup
    reads its rows of it back. ARRIVE_IN_BRANCH: the arrives are in the branch on subgroup_id() (subgroup 0 after
    staging, the others at once), the wait is not."""
    s = xetile.alloc_slm([32, 32], xetile.float32)
    nb = xetile.named_barrier(1, 4)
    if xetile.subgroup_id() == 0:
        whole = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=WHOLE))
        xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=WHOLE), whole * 3.0)
        if ARRIVE_IN_BRANCH:
            xetile.nbarrier_arrive(nb)
    elif ARRIVE_IN_BRANCH:
        xetile.nbarrier_arrive(nb)
    if not ARRIVE_IN_BRANCH:
        xetile.nbarrier_arrive(nb)
    xetile.nbarrier_wait(nb)
    mine = xetile.load_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS), mine + 1.0)


def test_producer_and_consumers_by_subgroup_id(rng, on_each_device):
    x, y = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    producer_consumer[(1,)](x, y)
    np.testing.assert_array_equal(y, x * 3 + 1)


def test_subgroup_id_prints_as_gpu_subgroup_id_and_runs_at_the_subgroup_level():
    x = np.zeros((32, 32), np.float32)
    compiled = roles.warmup(x, x.copy(), target="numpy")
    assert_lines(compiled.asm["xetile"], "%4 = gpu.subgroup_id : index\n%5 = arith.index_cast %4 : index to i32")
    assert compiled.func.num_subgroups == 4  # the numpy interpreter runs the xegpu-sg level


@xetile.kernel
def k_divergent(x, y, WHICH: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=ROWS))
    if xetile.subgroup_id() == 0:
        if WHICH == "barrier":
            xetile.barrier()
        if WHICH == "reduce":
            v = v + xetile.tile_broadcast(xetile.tile_reduce("add", v, [0]), [0], [32, 32])
        if WHICH == "reshape":
            v = v.reshape([16, 64]).reshape([32, 32])
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS), v)


@pytest.mark.parametrize("which, line", [("barrier", "xetile.barrier()"),
                                         ("reduce", 'v = v + xetile.tile_broadcast(xetile.tile_reduce("add", v, [0]), '
                                                    '[0], [32, 32])'),
                                         ("reshape", "v = v.reshape([16, 64]).reshape([32, 32])")])
def test_a_workgroup_barrier_in_a_branch_on_the_subgroup_id_is_an_error(which, line, on_each_device):
    """It would wait forever for the subgroups that do not take the branch (a reduction across subgroups brings
    one, as does a reshape through SLM); the numpy interpreter would hang on it as the device would."""
    x = np.zeros((32, 32), np.float32)
    with pytest.raises(xetile.CompilationError, match=r"\[every subgroup reaches a workgroup barrier\]") as info:
        k_divergent[(1,)](x, x.copy(), WHICH=which)
    assert str(info.value).endswith(line)


@xetile.kernel
def k_nbarrier_in_branch(x, y):
    """Every subgroup arrives; only subgroup 0 waits."""
    nb = xetile.named_barrier(0, 4)
    xetile.nbarrier_arrive(nb)
    if xetile.subgroup_id() == 0:
        xetile.nbarrier_wait(nb)
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS),
                      xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=ROWS)))


def test_a_named_barrier_wait_in_a_branch_on_the_subgroup_id_is_not_in_spirv():
    x = np.zeros((32, 32), np.float32)
    with pytest.raises(NotImplementedError, match=re.escape(
            "xegpu.nbarrier_wait in a branch or loop on subgroup_id() in SPIR-V: a wait that only some subgroups run "
            "needs a hardware named barrier.")):
        k_nbarrier_in_branch.warmup(x, x.copy(), target="cpu")


def test_named_barrier_arrives_in_a_branch_on_the_subgroup_id(rng, on_each_device):
    """The numpy interpreter runs it at the subgroup level with real phases; SPIR-V for cpu and xe-emulated."""
    x, y = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    for target in ("cpu", "xe-emulated") if on_each_device != "numpy" else (None,):
        out = y.copy()
        producer_consumer[(1,)](x, out, ARRIVE_IN_BRANCH=True, **({"target": target} if target else {}))
        np.testing.assert_array_equal(out, x * 3 + 1)


@pytest.mark.parametrize("target", ["xe-hpc", "xe-hpg"])
@pytest.mark.parametrize("kern, options", [(named, {}), (producer_consumer, {"ARRIVE_IN_BRANCH": True})],
                         ids=["named", "producer_arrives"])
def test_gpu_isa_of_a_named_barrier_is_the_workgroup_barrier(target, kern, options):
    """The Intel GPU compiler builds the SLM exchange behind a named barrier (its arrives in a branch on
    subgroup_id() or not): one sync.bar, SLM stores and loads."""
    if not ocloc.available(get_target(target)):
        pytest.skip("ocloc is not installed")
    x = np.zeros((32, 32), np.float32)
    isa = kern.warmup(x, x.copy(), target=target, **options).asm["isa"]
    lines = isa.splitlines()
    assert sum("sync.bar" in line for line in lines) == 1
    assert any("; store.slm" in line for line in lines) and any("; load.slm" in line for line in lines)
