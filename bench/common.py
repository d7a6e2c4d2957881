"""Helpers the benchmarks share: the tutorial GEMM as a module, and the best time of repeated runs."""
import importlib.util
import pathlib
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_tutorial():
    """tutorials/03-matrix-multiplication.py (its name is not an importable module name)."""
    spec = importlib.util.spec_from_file_location("tutorial_matmul", ROOT / "tutorials" / "03-matrix-multiplication.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_time(fn, repeat: int) -> float:
    """The fastest of `repeat` runs of `fn`, after one run that compiles and warms the caches."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
