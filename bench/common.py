"""Helpers the benchmarks share: a repository file (the tutorial GEMM) as a module, the best time of repeated
runs (of several functions: in turns), and the machine line every benchmark's header starts with."""
import importlib.util
import os
import pathlib
import time

from xetile_jit.testing import host_cpu

ROOT = pathlib.Path(__file__).resolve().parents[1]


# The variables that hold the baselines' libraries to an older ISA (docs/guide.md section 6, AVX2 code on an AVX-512
# machine): a table whose baselines ran so says it
BASELINE_ISA_VARIABLES = ("MKL_ENABLE_INSTRUCTIONS", "OPENBLAS_CORETYPE")


def machine() -> str:
    """The CPU the numbers are measured on: model, vector ISA, the extensions the kernels may use, and its cores
    (a CPU number holds for its class of CPU only: docs/performance.md), then the baselines' ISA variables set."""
    held = [f"{name}={os.environ[name]}" for name in BASELINE_ISA_VARIABLES if os.environ.get(name)]
    return f"CPU {host_cpu().summary()}; {os.cpu_count()} cores" + (f"; baselines {' '.join(held)}" if held else "")


def load_module(name: str, relative_path: str):
    """The Python file at `relative_path` under the repository root, imported as `name` (a file name need not be an
    importable module name)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relative_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_tutorial():
    """tutorials/03-matrix-multiplication.py."""
    return load_module("tutorial_matmul", "tutorials/03-matrix-multiplication.py")


def best_time(fn, repeat: int) -> float:
    """The fastest of `repeat` runs of `fn`, after one run that compiles and warms the caches."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


SETTLE_SECONDS = 0.2  # the pause between two columns' runs (best_times)
BURST = 3  # runs in a row of a column, in its turn (best_times), at least
BURST_SECONDS = 0.05  # and at least this long


def best_times(fns: dict, repeat: int) -> dict:
    """The fastest of `repeat` runs of each of `fns` (name -> function), after one run of each that compiles and
    warms the caches. The runs go in turns, one of each per round, so that a slower phase of a shared machine slows
    every column, not the one measured during it; each run comes SETTLE_SECONDS after the one before, since the
    BLAS libraries' worker threads keep the cores busy for a while after a call: 512x512 f16, our kernel ran at
    48 GFLOP/s right after numpy's or oneMKL's matmul, 100-104 0.2 s after it, as back to back.
    A turn lasts BURST_SECONDS at least: after the pause the OpenCL runtime's idle threads wake slowly, and with 3
    runs a turn the same 512x512 f32 GEMM measured 89 to 170 GFLOP/s from one turn to the next."""
    for fn in fns.values():
        fn()
    times = {name: float("inf") for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            time.sleep(SETTLE_SECONDS)
            times[name] = min(times[name], burst(fn))
    return times


def burst(fn) -> float:
    """The fastest of runs of `fn` in a row: BURST of them, and more until BURST_SECONDS have passed."""
    best, runs, end = float("inf"), 0, time.perf_counter() + BURST_SECONDS
    while runs < BURST or time.perf_counter() < end:
        start = time.perf_counter()
        fn()
        best, runs = min(best, time.perf_counter() - start), runs + 1
    return best
