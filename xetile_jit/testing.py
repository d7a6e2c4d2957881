"""`xetile.testing.do_bench`: the time of a function that launches kernels, as Triton's; `gpu_code_stats`, one
line on a kernel's Intel GPU code (the tutorials print it); `host_cpu`, the host CPU's vector ISA
(target/cpu_features.py: `CpuFeatures`), which benchmarks print with their numbers.

`fn` runs once first (it compiles and warms up), then up to five times after a cache flush each to estimate the wall
time of a flush and a run, as Triton's estimate times its cache's clearing with the run (stopping once they take longer
than `rep`; a run on numpy arrays includes their copies), which sizes the loops: `warmup` ms of untimed runs, then
`rep` ms of flushes and timed runs (at least one of each; with `quantiles`, at least MIN_QUANTILE_RUNS timed runs, so
that the quantiles are those of several samples, not one sample repeated). Sized by the runs alone, a kernel of 0.25
ms behind a flush of 0.9 ms (the 64 MB of twice a Zen 5's L3) took 4.6x `rep` of wall time, and the autotuner's
timing of `xetile.ops.matmul`'s three configs at 384^3 2.7 s of its first call's 4.9 (2026-12-04). Before every timed
run a buffer twice the size of the largest cache, at most FLUSH_BYTES, is written, so no run finds the previous one's
data in the cache (on a GPU queue, device memory of twice the device's cache; the OpenCL CPU device shares the host's
caches). Where `fn` launches no kernel (the numpy interpreter) nothing is flushed: its runs are Python on the host,
whose time a flush does not change, only lengthens.

The clock: the device's. Every kernel `fn` launches runs on a profiling queue of its queue's context and device
(runtime/profiling.py: a launch on numpy arrays copies them to and from the device outside its kernel's event; a
launch on USM arrays is ordered with the work of their queue), and a run's time is its kernels' device time, from
their SYCL events. Where there are no kernels (the numpy interpreter runs on the host) it is the wall time of the
run, and do_bench says so: a `WallClockWarning`, and every time it returns has `.clock == "wall"` (else "device").
"""
from __future__ import annotations

import functools
import pathlib
import statistics
import time
import warnings
from dataclasses import dataclass
from typing import Callable

import dpctl.memory
import numpy as np

from .target.cpu_features import CpuFeatures, host_cpu  # noqa: F401 (xetile.testing's names)
from .toolchain.isa_stats import one_line
from .runtime.profiling import Recording, recording

RETURN_MODES = ("min", "max", "mean", "median", "all")
ESTIMATE_RUNS = 5
MIN_QUANTILE_RUNS = 5
DEFAULT_CACHE_BYTES = 32 * 2**20
# Triton's flush buffer on a GPU. A server CPU's last-level cache is shared by all its cores, and a VM of two of
# them reports all of it (300 MB on a Xeon here): a flush of twice that took 0.2 s a run, hundreds of times a kernel.
FLUSH_BYTES = 256 * 2**20


class WallClockWarning(UserWarning):
    """do_bench timed with the host's wall clock, not the device's (the module docstring says when)."""


class Timing(float):
    """A time in ms that knows its clock: "device" (SYCL event profiling) or "wall"."""

    def __new__(cls, ms: float, clock: str):
        value = super().__new__(cls, ms)
        value.clock = clock
        return value


def do_bench(fn, warmup: float = 25, rep: float = 100, grad_to_none=None, quantiles=None, return_mode: str = "mean"):
    """The time of `fn()` in ms: by `return_mode` ("min", "max", "mean", "median", or "all": the list of every
    run's), or, with `quantiles` (a list of numbers in [0, 1]), the list of those quantiles (one value when the
    list has one). `grad_to_none`: tensors whose `.grad` is set to None before each timed run, out of its time
    (Triton's: a backward that accumulates gradients starts each run from none)."""
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {RETURN_MODES}, got {return_mode!r}")
    bench = prepare(fn, warmup, rep, grad_to_none, 1 if quantiles is None else MIN_QUANTILE_RUNS)
    times, clock = bench.time()
    if clock == "wall":
        warnings.warn(f"do_bench: timed with the wall clock: {wall_clock_reason(bench.first)}", WallClockWarning,
                      stacklevel=2)
    return summarize(times, clock, quantiles, return_mode)


@dataclass
class Bench:
    """do_bench's timed runs of `fn`, sized once by `prepare`: `runs` runs, each after `flush`. The autotuner keeps
    one a config and times it again in its later rounds (jit/autotune.py) without the first run, the estimate and the
    warm-up again: of the five runs of a 70 ms kernel's do_bench (a 2048^3 GEMM), those took four."""
    fn: Callable
    flush: Callable
    runs: int
    first: Recording  # fn's first run: its kernels' queues

    def time(self) -> tuple[np.ndarray, str]:
        """Every run's time in ms, and the clock ("device" or "wall": module docstring)."""
        runs = [timed(self.fn, self.flush) for _ in range(self.runs)]
        clock = "device" if all(r.profiled for _, r in runs) else "wall"
        return np.array([r.device_ms() if clock == "device" else wall for wall, r in runs]), clock


def prepare(fn, warmup: float, rep: float, grad_to_none=None, least: int = 1) -> Bench:
    """`fn` run once, its flush and run timed up to ESTIMATE_RUNS times, `warmup` ms of it run untimed: the Bench of
    `rep` ms of runs, `least` at least (module docstring)."""
    with recording(device_times=True) as first:
        fn()
    flush = cache_flusher(first)
    if grad_to_none:
        flush = grads_dropped(flush, list(grad_to_none))
    estimate = []  # wall times of a flush and a run, copies of numpy arrays included: what sizes the loops
    while len(estimate) < ESTIMATE_RUNS and sum(estimate) <= rep:
        start = time.perf_counter()
        timed(fn, flush)
        estimate.append((time.perf_counter() - start) * 1e3)
    per_run = max(statistics.fmean(estimate), 1e-6)
    with recording(device_times=True):
        for _ in range(max(1, int(warmup / per_run))):
            fn()
    return Bench(fn, flush, max(least, int(rep / per_run)), first)


def grads_dropped(flush, tensors: list):
    """`flush`, then every tensor's `.grad` set to None."""
    def before_a_run():
        flush()
        for tensor in tensors:
            tensor.grad = None
    return before_a_run


def timed(fn, flush) -> tuple[float, Recording]:
    """One run after a cache flush: its wall time in ms and the kernels it launched (on profiling queues)."""
    flush()
    with recording(device_times=True) as kernels:
        start = time.perf_counter()
        fn()
        kernels.wait()  # launches on USM arrays return before their kernels finish
        wall = (time.perf_counter() - start) * 1e3
    return wall, kernels


def wall_clock_reason(run: Recording) -> str:
    if not run.events:
        return "fn launched no SYCL kernel (the numpy interpreter runs on the host)"
    queue = next(q for q, _ in run.events if not q.has_enable_profiling)
    return (f"its kernels ran on a queue of {queue.sycl_device.filter_string} without event profiling (submitted "
            "outside xetile's launches)")


def summarize(times: np.ndarray, clock: str, quantiles, return_mode: str):
    if quantiles is not None:
        values = [Timing(v, clock) for v in np.quantile(times, list(quantiles))]
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return [Timing(v, clock) for v in times]
    return Timing(getattr(np, return_mode)(times), clock)


def cache_flusher(run: Recording):
    """A function that evicts the caches `fn`'s kernels use: device memory on a GPU queue, host memory on a CPU one,
    nothing where `fn` launched no kernel (module docstring)."""
    if not run.events:
        return lambda: None
    gpu_queues = [q for q, _ in run.events if not q.sycl_device.is_cpu]
    if gpu_queues:
        queue = gpu_queues[0]
        memory = dpctl.memory.MemoryUSMDevice(2 * queue.sycl_device.global_mem_cache_size, queue=queue)
        return memory.memset
    buffer = np.empty(host_flush_bytes(), np.uint8)
    return lambda: buffer.fill(0)


def host_flush_bytes() -> int:
    """The bytes a flush of the host's caches writes: twice the largest cache, at most FLUSH_BYTES."""
    return min(2 * host_cache_bytes(), FLUSH_BYTES)


@functools.cache
def host_cache_bytes() -> int:
    """The largest cache of CPU 0 (sysfs), or DEFAULT_CACHE_BYTES where the system does not say."""
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    sizes = []
    for path in pathlib.Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        sizes.append(int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text))
    return max(sizes, default=DEFAULT_CACHE_BYTES)


def gpu_code_stats(kernel, *args, target: str = "xe-hpc", **kwargs) -> str:
    """One line on the code Intel's GPU compiler builds for `kernel` on the Xe `target` (the arguments as for a
    launch, `kernel.warmup`'s): dpas, 2D block messages, other instructions, GRFs and spills of the whole kernel
    and of its main loop; or why there is none."""
    compiled = kernel.warmup(*args, target=target, **kwargs)
    if "isa_stats" not in compiled.asm:
        return f"{target}: no ISA here (no Intel GPU compiler: python -m xetile_jit install-gpu-compiler)"
    return f"{target}: {one_line(compiled.asm['isa_stats'])}"
