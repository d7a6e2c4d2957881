"""A sort's first launch and later launches: 1,000 random f32 rows of 256, one row a workgroup (a kernel that loads
[1, 256], sorts it with `xetile.sort` and stores it), checked against `np.sort` after every launch.

    XETILE_CACHE_DIR=$(mktemp -d) XETILE_TIMING=1 XETILE_TARGET=cpu python bench/bench_sort.py [--repeat 5] [--json]

The first launch traces, compiles and has the OpenCL driver build the kernel (with XETILE_TIMING=1 each stage's
time goes to stderr; an empty XETILE_CACHE_DIR keeps the disk cache from serving it); the later launches run the
built kernel. XETILE_TARGET picks the CPU target (`cpu` or `xe-emulated`).
"""
import argparse
import json
import os
import time

import numpy as np

import xetile_jit as xetile
from common import best_time, machine

ROWS, N = 1000, 256


@xetile.kernel
def sort_rows(x, y, N: xetile.constexpr):
    row = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [row, 0], [1, N]))
    xetile.store_tile(xetile.init_tile(y, [row, 0], [1, N]), xetile.sort(v))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="later launches timed (the fastest is shown)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the lines")
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal((ROWS, N)).astype(np.float32)
    y = np.empty_like(x)
    expected = np.sort(x, -1)

    def launch():
        y[:] = 0
        sort_rows[(ROWS,)](x, y, N=N)
        assert np.array_equal(y, expected), "the sort differs from np.sort"

    start = time.perf_counter()
    launch()
    first = time.perf_counter() - start
    later = best_time(launch, args.repeat)
    if args.json:
        print(json.dumps({"target": os.environ.get("XETILE_TARGET", "cpu"), "first_launch_s": round(first, 2),
                          "later_launch_ms": round(later * 1e3, 1)}))
        return
    print(machine())
    print(f"first launch {first:.2f} s")
    print(f"later launch {later * 1e3:.1f} ms (fastest of {args.repeat})")


if __name__ == "__main__":
    main()
