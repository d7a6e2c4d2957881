"""The launch hot path and asynchronous launches: plans keyed by what decides each check, launches on
USM arrays ordered with dpnp's work on the queue, numpy arrays synchronous, threads, DLPack producers on a SYCL
device (PyTorch XPU tensors' stand-in), xetile.synchronize and XETILE_TIMING.

The tests taking the `usm_kind` fixture run on USM arrays known by their `__sycl_usm_array_interface__` alone
(UsmArray, no dpnp needed) and on dpnp arrays (skipped without dpnp)."""
from __future__ import annotations

import gc
import importlib
import importlib.util
import subprocess
import sys
import threading
import weakref

import dpctl
import dpctl.memory
import numpy as np
import pytest

import xetile_jit as xetile
from usm_arrays import DLPackOnly, Interface, needs_dpnp
from xetile_jit.compiler.pipeline import STAGE_NAMES
from xetile_jit.jit import kernel as jit
from xetile_jit.jit import launch_plan
from xetile_jit.runtime import ordering, usm_entries
from xetile_jit.runtime.device import named_device

DEVICE = "opencl:cpu"
if importlib.util.find_spec("dpnp") is not None:  # imported before the kernels below, so that their binders know
    importlib.import_module("dpnp")                # dpnp's types from their first launch (and keep its plan)


@xetile.kernel
def add_one(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    """y = x + 1, one BM x BN block per workgroup along dimension 0."""
    m = xetile.program_id(0) * BM
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), v + 1)


@xetile.kernel
def add(x, y, out, BN: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [1, BN])) + xetile.load_tile(xetile.init_tile(y, [0, 0], [1, BN]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, BN]), v)


@xetile.kernel
def add_bytes(x, y, out, BN: xetile.constexpr):
    """1-D: out = x + y."""
    v = xetile.load_tile(xetile.init_tile(x, [0], [BN])) + xetile.load_tile(xetile.init_tile(y, [0], [BN]))
    xetile.store_tile(xetile.init_tile(out, [0], [BN]), v)


@pytest.fixture
def queue():
    return named_device(DEVICE).queue


@pytest.fixture
def dpnp():
    return needs_dpnp()


def dpnp_array(dpnp, queue, values, dtype=np.float32):
    return dpnp.asarray(np.asarray(values, dtype), sycl_queue=queue)


@pytest.mark.parametrize("direct", [True, False], ids=["order-state", "public-calls"])
def test_usm_launches_chain_with_dpnp_ops(dpnp, queue, direct, monkeypatch):
    """100 launches, each followed by a dpnp op on its result, on one out-of-order queue: every step sees the one
    before, and the launches return their (asynchronous) events; with the order manager's C state (this dpctl's)
    and with its public calls (runtime/ordering.py DIRECT)."""
    assert ordering.DIRECT  # the installed dpctl's managers keep the state a launch reads directly
    monkeypatch.setattr(ordering, "DIRECT", direct)
    x, y = dpnp_array(dpnp, queue, np.zeros((8, 16))), dpnp.empty((8, 16), dtype=np.float32, sycl_queue=queue)
    events = []
    for _ in range(100):
        events.append(add_one[(1,)](x, y, BM=8, BN=16))  # y = x + 1
        dpnp.subtract(y, 0.5, out=x)                      # x = y - 0.5
    assert all(isinstance(e, dpctl.SyclEvent) for e in events)
    np.testing.assert_array_equal(dpnp.asnumpy(x), np.full((8, 16), 50.0, np.float32))
    assert len(add_one.cache.plans) == 1


def test_a_chain_of_100_asynchronous_launches(usm_kind):
    """100 launches on one out-of-order queue, each reading what the one before wrote: they return their events
    without waiting (the plan is asynchronous) and every one sees the one before."""
    add_one.cache.clear()
    x, y = usm_kind.asarray(np.zeros((8, 16))), usm_kind.asarray(np.zeros((8, 16)))
    events = [add_one[(1,)](*((x, y) if i % 2 == 0 else (y, x)), BM=8, BN=16) for i in range(100)]
    assert all(isinstance(e, dpctl.SyclEvent) for e in events)
    (plan,) = add_one.cache.plans.values()
    assert plan.asynchronous
    np.testing.assert_array_equal(usm_kind.asnumpy(x), np.full((8, 16), 100.0, np.float32))


def test_dpctl_memory_objects_are_asynchronous_arrays(queue):
    """dpctl.memory objects are 1-D USM arrays of bytes (their interface's): launched in place, asynchronously."""
    x, y = dpctl.memory.MemoryUSMDevice(64, queue=queue), dpctl.memory.MemoryUSMShared(64, queue=queue)
    x.copy_from_host(np.arange(64, dtype=np.uint8))
    y.copy_from_host(np.full(64, 3, np.uint8))
    for _ in range(10):
        add_bytes[(1,)](x, y, y, BN=64)  # y += x
    (plan,) = add_bytes.cache.plans.values()
    assert plan.asynchronous
    xetile.synchronize(queue)
    result = np.empty(64, np.uint8)
    y.copy_to_host(result)
    np.testing.assert_array_equal(result, (3 + 10 * np.arange(64)).astype(np.uint8))


def test_numpy_and_usm_arguments_mixed(usm_kind, rng):
    """A launch with a numpy argument waits (it copies back), after the asynchronous launch that wrote its USM
    argument."""
    a = rng.standard_normal((1, 16)).astype(np.float32)
    x, out = usm_kind.asarray(a), usm_kind.asarray(np.zeros((1, 16)))
    add_one[(1,)](x, x, BM=1, BN=16)                  # asynchronous: x += 1
    b = rng.standard_normal((1, 16)).astype(np.float32)
    event = add[(1,)](x, b, out, BN=16)               # numpy b: synchronous
    assert event.execution_status == dpctl.event_status_type.complete
    host_out = np.zeros((1, 16), np.float32)
    add[(1,)](x, b, host_out, BN=16)                  # a numpy result, copied back
    np.testing.assert_array_equal(host_out, a + 1 + b)
    np.testing.assert_array_equal(usm_kind.asnumpy(out), a + 1 + b)


def test_launches_from_four_threads(usm_kind):
    """Four threads launch one kernel with their own specializations (two dtypes, two row counts) at once: each
    gets its own numbers, and the plan cache holds one plan per specialization. The arrays are made and read in
    this thread: dpnp's own calls from several threads at once hung (its order manager is not thread safe)."""
    add_one.cache.clear()
    cases = [(np.float32, 8), (np.float32, 16), (np.int32, 8), (np.int32, 16)]
    arrays = {(dtype, rows): usm_kind.asarray(np.arange(rows * 16).reshape(rows, 16), dtype) for dtype, rows in cases}
    errors = []
    barrier = threading.Barrier(len(cases))

    def work(dtype, rows):
        try:
            barrier.wait()
            for _ in range(20):
                add_one[(rows // 8,)](arrays[dtype, rows], arrays[dtype, rows], BM=8, BN=16)
        except Exception as e:  # noqa: BLE001 - reported below, with the thread's case
            errors.append((dtype, rows, e))

    threads = [threading.Thread(target=work, args=case) for case in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for dtype, rows in cases:
        np.testing.assert_array_equal(usm_kind.asnumpy(arrays[dtype, rows]),
                                      np.arange(rows * 16).reshape(rows, 16) + 20)
    assert len(add_one.cache.plans) == 4


def test_dlpack_producer_on_a_sycl_device_is_zero_copy_and_asynchronous(dpnp, queue):
    """A DLPack producer on a SYCL device (as a PyTorch XPU tensor is) goes in as the USM array it imports as: the
    kernel writes the producer's own memory, and the launch is asynchronous."""
    add_one.cache.clear()
    source, target = dpnp_array(dpnp, queue, np.arange(16).reshape(1, 16)), dpnp_array(dpnp, queue, np.zeros((1, 16)))
    event = add_one[(1,)](DLPackOnly(source), DLPackOnly(target), BM=1, BN=16)
    assert isinstance(event, dpctl.SyclEvent)
    (plan,) = add_one.cache.plans.values()
    assert plan.asynchronous
    np.testing.assert_array_equal(dpnp.asnumpy(target), np.arange(16).reshape(1, 16) + 1)


def test_dlpack_producer_on_the_host_is_synchronous(rng):
    x, y = rng.standard_normal((1, 16)).astype(np.float32), np.zeros((1, 16), np.float32)
    event = add_one[(1,)](DLPackOnly(x), DLPackOnly(y), BM=1, BN=16, device=DEVICE)
    assert event.execution_status == dpctl.event_status_type.complete
    np.testing.assert_array_equal(y, x + 1)


def test_synchronize_waits_for_every_launch(usm_kind):
    x = usm_kind.asarray(np.zeros((8, 16)))
    events = [add_one[(1,)](x, x, BM=8, BN=16) for _ in range(10)]
    xetile.synchronize(DEVICE)
    assert all(e.execution_status == dpctl.event_status_type.complete for e in events)
    xetile.synchronize()
    xetile.synchronize("numpy")  # nothing to wait for


def refuse_the_slow_path(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the slow path ran on a plan hit")

    monkeypatch.setattr(jit.Kernel, "bind", refuse)
    monkeypatch.setattr(jit, "classify", refuse)


def test_a_hit_binds_and_classifies_nothing(monkeypatch):
    """The second launch with the same key goes through its plan: no inspect binding, no classification."""
    x, y = np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32)
    add_one[(1,)](x, y, BM=8, BN=16, device=DEVICE)
    refuse_the_slow_path(monkeypatch)
    add_one[(1,)](y, x, BM=8, BN=16, device=DEVICE)
    np.testing.assert_array_equal(x, np.full((8, 16), 2.0, np.float32))


def test_a_hit_on_usm_arrays_binds_and_classifies_nothing(usm_kind, monkeypatch):
    """USM arrays too, and another array of the same key part (its memory at another address) hits the plan."""
    x, y = usm_kind.asarray(np.zeros((8, 16))), usm_kind.asarray(np.zeros((8, 16)))
    add_one[(1,)](x, y, BM=8, BN=16)
    refuse_the_slow_path(monkeypatch)
    z = usm_kind.asarray(np.zeros((8, 16)))
    add_one[(1,)](y, z, BM=8, BN=16)
    np.testing.assert_array_equal(usm_kind.asnumpy(z), np.full((8, 16), 2.0, np.float32))


def test_a_hit_still_checks_what_can_change():
    """Checks whose answer the key does not decide run at every launch: a read-only array the kernel writes, the
    grid."""
    x, y = np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32)
    add_one[(1,)](x, y, BM=8, BN=16, device=DEVICE)
    y.flags.writeable = False
    with pytest.raises(xetile.LaunchError, match="read-only"):
        add_one[(1,)](x, y, BM=8, BN=16, device=DEVICE)
    with pytest.raises(xetile.LaunchError, match="grid must be"):
        add_one[(-1,)](x, x, BM=8, BN=16, device=DEVICE)


def test_a_misaligned_usm_view_gets_its_own_plan(usm_kind):
    """The 64-byte base alignment decides the 2D block surface rule, so a view one element in is another key (and
    another compile: without block messages on Xe targets; the `cpu` target's builtins read it in place) and still
    gets the right numbers."""
    add_one.cache.clear()
    base = usm_kind.asarray(np.arange(2 * 32).reshape(2, 32))
    aligned, shifted = usm_kind.columns(base, 0, 16), usm_kind.columns(base, 1, 17)
    out = usm_kind.asarray(np.zeros((2, 16)))
    add_one[(1,)](aligned, out, BM=2, BN=16)
    np.testing.assert_array_equal(usm_kind.asnumpy(out), np.arange(64).reshape(2, 32)[:, :16] + 1)
    add_one[(1,)](shifted, out, BM=2, BN=16)
    np.testing.assert_array_equal(usm_kind.asnumpy(out), np.arange(64).reshape(2, 32)[:, 1:17] + 1)
    assert len(add_one.cache.plans) == 2
    specs = [compiled.specs["x"].block_io_rule for compiled in add_one.cache.values()]
    assert specs.count(None) == 1


TIMED_STAGES = ["disk cache lookup", "trace", *STAGE_NAMES, "llvm-ir", "spirv", "driver build (opencl:cpu:0, cpu)",
                "first launch"]


def timed_stages(text: str) -> list[str]:
    return [line.split(": ")[2].rsplit(" ", 2)[0] for line in text.splitlines()
            if line.startswith("xetile timing: add_one: ")]


def timed_first_launch(monkeypatch, tmp_path, timing: str) -> None:
    monkeypatch.setenv("XETILE_TIMING", timing)
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path / "cache"))
    add_one.cache.clear()
    x = np.zeros((8, 16), np.float32)
    add_one[(1,)](x, x, BM=8, BN=16, device=DEVICE)


def test_timing_prints_every_stage(monkeypatch, capfd, tmp_path):
    timed_first_launch(monkeypatch, tmp_path, "1")
    assert timed_stages(capfd.readouterr().err) == TIMED_STAGES


def test_timing_to_a_file_appends_every_stage_there(monkeypatch, capfd, tmp_path):
    """XETILE_TIMING=<path>: the lines go to that file, after what it held, and none to stderr."""
    log = tmp_path / "timing.log"
    log.write_text("earlier\n")
    timed_first_launch(monkeypatch, tmp_path, str(log))
    assert timed_stages(capfd.readouterr().err) == []
    assert log.read_text().startswith("earlier\n")
    assert timed_stages(log.read_text()) == TIMED_STAGES


DPNP_LATER = """
import sys, numpy as np, xetile_jit as xetile
assert "dpnp" not in sys.modules  # dpnp is optional: importing xetile_jit does not import it

@xetile.kernel
def inc(x, BN: xetile.constexpr):
    t = xetile.init_tile(x, [0, 0], [1, BN])
    xetile.store_tile(t, xetile.load_tile(t) + 1)

import dpnp
x = dpnp.zeros((1, 16), dtype=np.float32, device="opencl:cpu")
for _ in range(3):
    inc[(1,)](x, BN=16)
(plan,) = inc.cache.plans.values()
print(plan.asynchronous, dpnp.asnumpy(x)[0, 0])
"""


def test_a_kernel_defined_before_dpnp_is_imported_gets_the_hot_path(dpnp, tmp_path):
    script = tmp_path / "dpnp_later.py"  # kernels need their source in a file
    script.write_text(DPNP_LATER)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert result.stdout.split() == ["True", "3.0"], result.stderr


def test_a_launch_on_another_queue_than_its_arrays_waits(usm_kind, queue):
    """Work is ordered per queue: a launch on another queue of the arrays' context does not join their order, so it
    is synchronous, after the work ordered on the arrays' queue."""
    add_one.cache.clear()
    other = dpctl.SyclQueue(queue.sycl_context, queue.sycl_device)
    x, y = usm_kind.asarray(np.zeros((1, 16))), usm_kind.asarray(np.zeros((1, 16)))
    add_one[(1,)](x, x, BM=1, BN=16)  # asynchronous, on the arrays' queue: x = 1
    event = add_one[(1,)](x, y, BM=1, BN=16, device=other)
    assert event.execution_status == dpctl.event_status_type.complete
    (plan,) = [p for p in add_one.cache.plans.values() if p.device.queue == other]
    assert not plan.asynchronous
    np.testing.assert_array_equal(usm_kind.asnumpy(y), np.full((1, 16), 2.0, np.float32))


@xetile.kernel
def shadowing(type, options, hashable, BN: xetile.constexpr):
    """Parameters named like the generated binder's helpers."""
    v = xetile.load_tile(xetile.init_tile(type, [0, 0], [1, BN]))
    xetile.store_tile(xetile.init_tile(options, [0, 0], [1, BN]), v * hashable)


def test_parameter_names_do_not_shadow_the_binder():
    x, y = np.arange(16, dtype=np.float32).reshape(1, 16), np.zeros((1, 16), np.float32)
    for _ in range(2):  # the second launch is a plan hit
        shadowing[(1,)](x, y, 3.0, BN=16, device=DEVICE)
    assert len(shadowing.cache.plans) == 1
    np.testing.assert_array_equal(y, 3 * np.arange(16).reshape(1, 16))


def test_launch_options_given_or_not_key_their_own_plans():
    """A launch with no option given and one giving None for options share a plan; an option given makes another."""
    add_one.cache.clear()
    x = np.arange(16, dtype=np.float32).reshape(1, 16)
    y = np.zeros_like(x)
    add_one[(1,)](x, y, BM=1, BN=16)
    add_one[(1,)](x, y, BM=1, BN=16, device=None, check=None)
    assert len(add_one.cache.plans) == 1
    add_one[(1,)](x, y, BM=1, BN=16, device=DEVICE)
    assert len(add_one.cache.plans) == 2
    np.testing.assert_array_equal(y, x + 1)


def test_a_kernel_keeps_the_launcher_of_its_last_tuple_grid():
    """`kernel[(n,)]` with a literal gives the same tuple at each launch, and gets the same Launcher back; a callable
    grid is not kept (it may hold what it closes over)."""
    grid = (2,)
    launcher = add_one[grid]
    assert add_one[grid] is launcher and (launcher.kernel, launcher.grid) == (add_one, (2,))
    other = tuple([2])
    assert add_one[other] is not launcher and add_one[other].grid is other

    def by_block(meta):
        return (1,)

    assert add_one[by_block].grid is by_block and add_one.launcher.grid is other


def test_the_binder_reads_a_dpnp_arrays_slot_when_its_class_has_it():
    class Slotted:
        __slots__ = ("_array_obj",)

    class Plain:
        def get_array(self):
            return self

    assert launch_plan.dpnp_unwrap(Slotted) == "._array_obj"
    assert launch_plan.dpnp_unwrap(Plain) == ".get_array()"


def test_a_kernel_made_before_dpnp_was_imported_reads_the_slot_once_it_launches_dpnp_arrays(dpnp, queue,
                                                                                            monkeypatch):
    """A kernel defined before the program imported dpnp (xetile.ops' kernels, a module imported first) gets a new
    binder at its first launch with dpnp arrays: one that knows their class, so that later launches take the plan it
    keeps, and reads their `_array_obj` slot rather than calling `get_array()`."""
    with monkeypatch.context() as before_dpnp:
        before_dpnp.setattr(launch_plan, "dpnp_types", lambda: (launch_plan.NotImported,) * 2)
        kernel = xetile.kernel(add_one.fn)
    assert launch_plan.made_before_dpnp(kernel.specializer)
    x, y = dpnp_array(dpnp, queue, np.arange(16).reshape(1, 16)), dpnp.zeros((1, 16), dtype=np.float32,
                                                                              sycl_queue=queue)
    kernel[(1,)](x, y, BM=1, BN=16)
    assert not launch_plan.made_before_dpnp(kernel.specializer)
    calls = []
    get_array = type(x).get_array
    monkeypatch.setattr(type(x), "get_array", lambda self: calls.append(self) or get_array(self))
    kernel[(1,)](x, y, BM=1, BN=16)
    np.testing.assert_array_equal(dpnp.asnumpy(y), np.arange(16).reshape(1, 16) + 1)
    assert len(kernel.cache.plans) == 1 and kernel.fast_bind((x, y), {"BM": 1, "BN": 16})[0] in kernel.cache.plans
    assert calls == []


def test_an_array_reshaped_in_place_gets_a_new_key(usm_kind):
    """`usm_ndarray.shape = ...` reshapes the array itself, and another producer may change what its interface says:
    the launch after it reads the new shape (a tile row past the last reads zeros), not the one the array's entry
    (runtime/usm_entries.py) was made with."""
    add_one.cache.clear()
    x, y = usm_kind.asarray(np.arange(32).reshape(2, 16)), usm_kind.asarray(np.zeros((2, 16)))
    add_one[(1,)](x, y, BM=2, BN=16)
    np.testing.assert_array_equal(usm_kind.asnumpy(y), np.arange(32).reshape(2, 16) + 1)
    usm_kind.reshape_in_place(x, (1, 32))
    add_one[(1,)](x, y, BM=2, BN=16)
    np.testing.assert_array_equal(usm_kind.asnumpy(y), [np.arange(16) + 1, np.ones(16)])
    assert len(add_one.cache.plans) == 2


def test_an_array_reshaped_away_and_back_launches_as_before(dpnp, queue):
    """An array reshaped in place and back to its entry's shape (runtime/usm_entries.py: its strides are not read)
    addresses its elements as before, even where the reshape changed the stride of an axis of length 1."""
    add_one.cache.clear()
    base = dpnp_array(dpnp, queue, np.arange(16).reshape(1, 16))
    x, y = base.T, dpnp.zeros((16, 1), dtype=np.float32, sycl_queue=queue)  # x: strides (1, 0) or (1, 16)
    add_one[(1,)](x, y, BM=16, BN=1)
    before = x.get_array().strides
    for shape in ((4, 4), (16, 1)):
        x.shape = shape
    add_one[(1,)](x, y, BM=16, BN=1)
    np.testing.assert_array_equal(dpnp.asnumpy(y), np.arange(16).reshape(16, 1) + 1)
    assert len(add_one.cache.plans) == 1, (before, x.get_array().strides)


def test_an_arrays_entry_goes_with_the_array(dpnp, queue):
    """The per-array entries (runtime/usm_entries.py) do not keep arrays, or themselves, alive once the array is
    gone."""
    x = dpnp_array(dpnp, queue, np.zeros((1, 16)))
    add_one[(1,)](x, x, BM=1, BN=16)
    ident = id(x.get_array())
    assert ident in usm_entries._entries
    xetile.synchronize()  # the launch's own arguments are kept until it completes (ordering.py)
    del x
    gc.collect()
    assert ident not in usm_entries._entries


def test_an_entry_left_at_a_reused_id_is_not_used(dpnp, queue):
    """An id is reused once its array is freed: an entry found at an array's id that was made for another array
    (here put there by hand, as if its weakref callback had not run) is made again, not launched with the other
    array's memory."""
    add_one.cache.clear()
    x, other = dpnp_array(dpnp, queue, np.zeros((1, 16))), dpnp_array(dpnp, queue, np.full((1, 16), 7.0))
    y = dpnp.empty((1, 16), dtype=np.float32, sycl_queue=queue)
    add_one[(1,)](other, y, BM=1, BN=16)  # the plan, so that the next launch is a hit, which reads the entries
    usm_entries._entries[id(x.get_array())] = usm_entries._entries[id(other.get_array())]
    add_one[(1,)](x, y, BM=1, BN=16)
    np.testing.assert_array_equal(dpnp.asnumpy(y), np.ones((1, 16), np.float32))
    assert usm_entries._entries[id(x.get_array())][1]() is x.get_array()


def test_short_lived_arrays_launched_asynchronously(usm_kind):
    """Arrays dropped right after their asynchronous launch (their ids and addresses are soon reused by the next
    ones) are kept until their kernel ran, and each launch reads its own array: every result is its own input + 1."""
    add_one.cache.clear()
    outs = []
    for i in range(60):
        x = usm_kind.asarray(np.full((2, 16), float(i)))
        outs.append(usm_kind.asarray(np.zeros((2, 16))))
        add_one[(1,)](x, outs[-1], BM=2, BN=16)
        del x
        if i % 7 == 0:
            gc.collect()
    for i, out in enumerate(outs):
        np.testing.assert_array_equal(usm_kind.asnumpy(out), np.full((2, 16), i + 1.0, np.float32))
    (plan,) = add_one.cache.plans.values()
    assert plan.asynchronous


def test_a_new_grid_is_normalized_and_checked_at_its_launch(usm_kind):
    """A plan keeps the ranges of the last tuple grid it checked (LaunchPlan.grid_ranges), found by the tuple's
    identity: another tuple, a callable grid and a grid beyond the work-item limit are each taken as they are."""
    add_one.cache.clear()
    x, y = usm_kind.asarray(np.arange(64).reshape(4, 16)), usm_kind.asarray(np.zeros((4, 16)))
    one = (1,)
    add_one[one](x, y, BM=1, BN=16)
    (plan,) = add_one.cache.plans.values()
    assert plan.grid_ranges[:3] == (one, (1, 1, 1), [1, 1, plan.workgroup_size])
    add_one[(4,)](x, y, BM=1, BN=16)
    np.testing.assert_array_equal(usm_kind.asnumpy(y), np.arange(64).reshape(4, 16) + 1)
    add_one[lambda meta: (2, 1)](x, y, BM=2, BN=16)
    np.testing.assert_array_equal(usm_kind.asnumpy(y), np.arange(64).reshape(4, 16) + 1)
    with pytest.raises(xetile.LaunchError, match="work-items; a SYCL launch takes at most 2"):
        add_one[(2**31,)](x, y, BM=1, BN=16)
    assert plan.grid_ranges[1] == (4, 1, 1)


def test_completed_launches_are_let_go_every_drop_every_launches(usm_kind, queue):
    """The launches kept alive (runtime/ordering.py) are looked at every DROP_EVERY-th launch on a queue: here each
    has completed before the next, so the list grows to DROP_EVERY and starts over."""
    add_one.cache.clear()
    x = usm_kind.asarray(np.zeros((1, 16)))
    xetile.synchronize()
    lengths = []
    for _ in range(2 * ordering.DROP_EVERY + 1):
        add_one[(1,)](x, x, BM=1, BN=16)
        queue.wait()
        lengths.append(len(ordering._pending[queue]))
    assert lengths == [*range(1, ordering.DROP_EVERY + 1)] * 2 + [1]
    np.testing.assert_array_equal(usm_kind.asnumpy(x), np.full((1, 16), 2.0 * ordering.DROP_EVERY + 1, np.float32))


def test_an_interface_arrays_entry_does_not_keep_it(queue):
    """An array known by its interface is kept while its launch may run (ordering.py), not by its entry after."""
    x = Interface(queue).asarray(np.zeros((1, 16)))
    add_one[(1,)](x, x, BM=1, BN=16)
    alive = weakref.ref(x)
    xetile.synchronize()
    del x
    gc.collect()
    assert alive() is None


def test_xetile_device_is_not_read_when_a_usm_array_decides(usm_kind, monkeypatch):
    """A USM array's queue decides the device (select_device), so XETILE_DEVICE is no part of the key then: the
    launch after it changes keeps the plan and runs on the array's queue."""
    add_one.cache.clear()
    x = usm_kind.asarray(np.zeros((1, 16)))
    add_one[(1,)](x, x, BM=1, BN=16)
    monkeypatch.setenv("XETILE_DEVICE", "numpy")
    add_one[(1,)](x, x, BM=1, BN=16)
    np.testing.assert_array_equal(usm_kind.asnumpy(x), np.full((1, 16), 2.0, np.float32))
    assert len(add_one.cache.plans) == 1


def test_environment_read_at_each_launch_of_numpy_arrays(monkeypatch):
    """XETILE_DEVICE changed between two launches of the same numpy arrays is read by the second (the key holds it),
    and set back finds the first plan."""
    add_one.cache.clear()
    monkeypatch.setenv("XETILE_DEVICE", DEVICE)
    x, y = np.zeros((1, 16), np.float32), np.zeros((1, 16), np.float32)
    add_one[(1,)](x, y, BM=1, BN=16)
    monkeypatch.setenv("XETILE_DEVICE", "numpy")
    add_one[(1,)](y, x, BM=1, BN=16)
    assert sorted(plan.device.kind for plan in add_one.cache.plans.values()) == ["numpy", "sycl"]
    monkeypatch.setenv("XETILE_DEVICE", DEVICE)
    add_one[(1,)](x, y, BM=1, BN=16)
    assert len(add_one.cache.plans) == 2
    np.testing.assert_array_equal(y, np.full((1, 16), 3.0, np.float32))


def test_usm_arrays_and_a_scalar(usm_kind):
    """An asynchronous plan with a scalar argument: the scalar is the launch's own at each hit."""
    shadowing.cache.clear()
    x, y = usm_kind.asarray(np.arange(16).reshape(1, 16)), usm_kind.asarray(np.zeros((1, 16)))
    for scale in (2.0, 3.0):
        shadowing[(1,)](x, y, scale, BN=16)
    (plan,) = shadowing.cache.plans.values()
    assert plan.asynchronous
    np.testing.assert_array_equal(usm_kind.asnumpy(y), 3 * np.arange(16).reshape(1, 16))


@pytest.mark.parametrize("value", [7, -2**31, 2**31, -1, True, False, 2.5, -0.0, 1e-45, 3.4e38, 1e300, float("nan"),
                                   np.float16(-1.5), np.int8(-3), np.uint64(2**63), np.float64(0.1), np.bool_(True)],
                         ids=repr)
def test_a_scalars_part_is_the_kernel_argument_the_plan_would_make(value):
    """The specializer gives a scalar's kernel argument (scalar_key), so that a launch with scalars passes its
    arguments whole: the same bytes `LaunchPlan.kernel_args` makes from the scalar's spec."""
    key, launched, (arg,) = launch_plan.scalar_key("s", value)
    spec = jit.classify("s", value)
    assert key == (type(value), spec.dtype.name) and launched is value
    assert bytes(arg) == bytes(launch_plan.scalar_arg(launch_plan.runtime_value(spec, value)))


@pytest.mark.parametrize("value", [7, 0, -2**31, 2**31 - 1, 2**31, -2**31 - 1, True, 2.5], ids=repr)
def test_the_specializers_inline_forms_are_the_slow_paths(value):
    """The specializer makes an int scalar's key and part, and constexprs' and options' key forms, inline: the same
    key and bytes as scalar_key and hashable, at the ends of i32's range and past them."""
    x = np.zeros((1, 16), np.float32)
    key, _, parts, _ = shadowing.specializer(x, x, value, BN=value, target="cpu")
    scalar, _, (arg,) = launch_plan.scalar_key("hashable", value)
    assert key[2] == scalar and bytes(parts[2][0]) == bytes(arg)
    assert key[3] == jit.hashable(value)
    options = key[4]
    assert options == tuple(jit.hashable("cpu" if o == "target" else None) for o in jit.LAUNCH_OPTIONS)


def test_usm_arrays_and_scalars_launch_with_the_specializers_arguments(usm_kind, monkeypatch):
    """A hit with USM arrays and scalars passes the arguments the specializer made, kernel_args makes none."""
    shadowing.cache.clear()
    x, y = usm_kind.asarray(np.arange(16).reshape(1, 16)), usm_kind.asarray(np.zeros((1, 16)))
    shadowing[(1,)](x, y, 2.0, BN=16)
    monkeypatch.setattr(launch_plan.LaunchPlan, "kernel_args", lambda *args: pytest.fail("kernel_args ran"))
    shadowing[(1,)](x, y, -0.5, BN=16)
    np.testing.assert_array_equal(usm_kind.asnumpy(y), -0.5 * np.arange(16).reshape(1, 16))


@xetile.kernel
def add_one_to_each(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    """y[b] = x[b] + 1 for the b-th BM x BN matrix of 3-D arrays, one workgroup each."""
    b = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [b, 0, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(y, [b, 0, 0], [BM, BN]), v + 1)


def test_usm_views_with_a_negative_leading_stride(usm_kind):
    """x[::-1] of a 3-D USM array is passed in place, its pointer at its element [0, 0, 0] (the last matrix of
    its memory): read and written through it, at the first launch (the slow path) and at a hit."""
    add_one_to_each.cache.clear()
    a = np.arange(3 * 8 * 16, dtype=np.float32).reshape(3, 8, 16)
    for _ in range(2):
        x, y = usm_kind.asarray(a), usm_kind.asarray(np.zeros((3, 8, 16)))
        add_one_to_each[(3,)](usm_kind.reversed(x), y, BM=8, BN=16)
        np.testing.assert_array_equal(usm_kind.asnumpy(y), a[::-1] + 1)
        add_one_to_each[(3,)](x, usm_kind.reversed(y), BM=8, BN=16)
        np.testing.assert_array_equal(usm_kind.asnumpy(y), a[::-1] + 1)


def test_usm_array_whose_interface_says_read_only_is_not_written(queue):
    """`"data": (address, True)` in the interface: a kernel that writes the array is refused, one that reads it
    runs."""
    usm = Interface(queue)
    x, y = usm.asarray(np.ones((8, 16))), usm.asarray(np.zeros((8, 16)))
    with pytest.raises(xetile.LaunchError, match="argument 'y' is read-only but the kernel writes it"):
        add_one[(1,)](x, usm.read_only(y), BM=8, BN=16)
    np.testing.assert_array_equal(usm.asnumpy(y), np.zeros((8, 16)))
    add_one[(1,)](usm.read_only(x), y, BM=8, BN=16)
    np.testing.assert_array_equal(usm.asnumpy(y), np.full((8, 16), 2.0))


def test_the_generated_binder_binds_as_inspect_binds_partially():
    """make_binder: the arguments by name in the signature's order, defaults applied, parameters not given left out,
    launch options dropped; what does not bind is Python's TypeError, as inspect's."""
    import inspect

    def f(a, b, c=3, *, d, e=None):
        pass

    bind = launch_plan.make_binder(inspect.signature(f), jit.LAUNCH_OPTIONS)

    def expected(*args, **kwargs):
        bound = inspect.signature(f).bind_partial(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    for args, kwargs in [((1, 2), {"d": 4}), ((1,), {}), ((), {"b": 2, "e": 5}), ((1, 2, 7), {"d": 4, "e": 0})]:
        assert list(bind(*args, **kwargs).items()) == list(expected(*args, **kwargs).items())
    assert bind(1, device="opencl:cpu", num_subgroups=4) == {"a": 1, "c": 3, "e": None}
    for args, kwargs in [((1, 2, 3, 4), {}), ((1,), {"a": 1}), ((), {"z": 1})]:
        with pytest.raises(TypeError):
            bind(*args, **kwargs)
    assert launch_plan.make_binder(inspect.signature(lambda *xs: None), ()) is None  # inspect binds those
