"""jit/kernel.py Kernel.vectorized_fallback: on an OpenCL CPU device a kernel whose lanes read each other's values
and which the OpenCL CPU compiler did not vectorize (runtime/opencl/build_log.py) runs as compiled for its target's
fallback, with a warning; a target without one refuses it; a kernel whose lanes read only their own values runs as
built."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.jit.kernel import CompiledKernel
from xetile_jit.runtime.device import cached_queue

DEVICE = "opencl:cpu"


@xetile.kernel
def left_of_the_array(x, y, OFFSET: xetile.constexpr):
    """A fuzzed row kernel's shape: a tile of 20 blocks of 16 columns at a constant offset, all but the last left of
    the 16 columns of `x` (padding 0), its row sums added back and summed again."""
    rows = xetile.load_tile(xetile.init_tile(x, [0, OFFSET], [16, 320]))
    rows = rows + xetile.tile_broadcast(xetile.tile_reduce("add", rows, [1]), [1], [16, 320])
    xetile.store_tile(xetile.init_tile(y, [0, 0], [16, 1]), xetile.tile_reduce("add", rows, [1]))


@xetile.kernel
def doubled(x, y):
    tile = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 64]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [16, 64]), tile * 2)


def launched(kernel, x, y, **options):
    """The compiled kernel the launch ran: its launch plan's (the kernel's only one on a SYCL device)."""
    kernel[(1,)](x, y, device=DEVICE, **options)
    (plan,) = [plan for plan in kernel.cache.plans.values() if plan.device.queue is not None]
    return plan.compiled


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A new compile cache (no binary of an earlier build, whose log a program from it lacks)."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    for kernel in (left_of_the_array, doubled):
        kernel.cache.clear()


def test_the_fuzzed_row_kernel_gives_the_interpreters_sums(fresh, rng):
    """Built for `cpu`, the compiler left it unvectorized (this runtime, 2026-12-05) and it crashed the process;
    whichever way the runtime builds it, the launch gives the interpreter's numbers, and runs the `cpu` build only
    where the compiler vectorized it."""
    x = rng.integers(-4, 4, (1, 16)).astype(np.float32)
    want = np.zeros((16, 1), np.float32)
    left_of_the_array[(1,)](x, want, OFFSET=-300, device="numpy")
    assert want[0, 0] == 321 * x.sum()
    y = np.zeros((16, 1), np.float32)
    queue = cached_queue(DEVICE)
    built = left_of_the_array.warmup(x, y, OFFSET=-300, device=DEVICE)
    cpu_unvectorized = built.artifact.exchanges_lanes and built.unvectorized(queue)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = launched(left_of_the_array, x, y, OFFSET=-300)
    np.testing.assert_array_equal(y, want)
    assert compiled.target == ("xe-emulated" if cpu_unvectorized else "cpu")
    assert any(w.category is xetile.UnvectorizedKernelWarning for w in caught) == cpu_unvectorized


def test_an_unvectorized_kernel_whose_lanes_exchange_values_runs_as_the_fallbacks(fresh, rng, monkeypatch):
    """Any `cpu` build said unvectorized: the row kernel (lanes exchanged by its reductions) runs as compiled for
    `xe-emulated`, warned of, with the right sums."""
    monkeypatch.setattr(CompiledKernel, "unvectorized", lambda self, queue: self.target == "cpu")
    x = rng.integers(-4, 4, (1, 16)).astype(np.float32)
    y = np.zeros((16, 1), np.float32)
    with pytest.warns(xetile.UnvectorizedKernelWarning, match="did not vectorize kernel left_of_the_array for "
                      "target cpu; it runs as compiled for target xe-emulated"):
        compiled = launched(left_of_the_array, x, y, OFFSET=-100)
    assert compiled.target == "xe-emulated" and compiled.artifact.exchanges_lanes
    assert y[0, 0] == 321 * x.sum() and (y[1:] == 0).all()


def test_a_target_without_a_fallback_refuses_it(fresh, rng, monkeypatch):
    monkeypatch.setattr(CompiledKernel, "unvectorized", lambda self, queue: True)
    x = rng.integers(-4, 4, (1, 16)).astype(np.float32)
    with pytest.raises(xetile.LaunchError, match="did not vectorize kernel left_of_the_array for target xe-emulated"):
        left_of_the_array[(1,)](x, np.zeros((16, 1), np.float32), OFFSET=-100, device=DEVICE, target="xe-emulated")


def test_a_kernel_whose_lanes_read_only_their_own_values_runs_as_built(fresh, rng, monkeypatch):
    monkeypatch.setattr(CompiledKernel, "unvectorized", lambda self, queue: True)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    y = np.zeros_like(x)
    compiled = launched(doubled, x, y)
    assert compiled.target == "cpu" and not compiled.artifact.exchanges_lanes
    np.testing.assert_array_equal(y, 2 * x)
