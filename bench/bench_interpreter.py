"""How fast the numpy interpreter runs the tutorial GEMM, beside numpy's own matmul in the same run.

    python bench/bench_interpreter.py [--sizes 512 1024 2048] [--json out.json]

The interpreter runs whole tiles per op, so it should stay within a small factor of numpy (the same
BLAS does the tile products); that keeps tests and tutorials fast on machines with no SYCL device.
"""
import argparse
import json
import pathlib

import numpy as np
from common import best_time, load_tutorial, machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=pathlib.Path)
    args = parser.parse_args()
    tutorial = load_tutorial()
    rows = []
    print(machine())
    print(f"{'size':>6} {'dtype':>8} {'xetile numpy GFLOP/s':>21} {'numpy GFLOP/s':>14} {'ratio':>6}")
    for n in args.sizes:
        for dtype in (np.float32, np.float16):
            a = np.random.default_rng(0).standard_normal((n, n)).astype(dtype)
            b = np.random.default_rng(1).standard_normal((n, n)).astype(dtype)
            a32, b32 = a.astype(np.float32), b.astype(np.float32)
            flops = 2 * n ** 3
            ours = flops / best_time(lambda: tutorial.matmul(a, b, device="numpy"), args.repeat) / 1e9
            ref = flops / best_time(lambda: a32 @ b32, args.repeat) / 1e9
            rows.append({"size": n, "dtype": np.dtype(dtype).name, "xetile_gflops": ours, "numpy_gflops": ref})
            print(f"{n:>6} {np.dtype(dtype).name:>8} {ours:>21.1f} {ref:>14.1f} {ours / ref:>6.2f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
