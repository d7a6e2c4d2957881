"""GEMM speed on the SYCL CPU device: the tutorial kernel as SPIR-V, beside numpy and dpnp.matmul.

    python bench/bench_gemm.py [--sizes 512 1024 2048] [--shapes 4096x64x1024 ...] [--dtypes float32 float16 bfloat16]
                               [--b-order row] [--autotune] [--repeat 3] [--processes 1] [--json out.json]
                               [--png out.png]

`--sizes n` measures n x n x n GEMMs (512, 1024 and 2048 unless `--shapes` is given), `--shapes MxNxK` any others
(C is M x N, the sum over K), after the sizes. `--b-order column` gives every column B as the transpose of a
row-major N x K array (`W.T`, the weight of a torch Linear), read in place (numpy and dpnp take it as a transposed
operand); the rows' size then ends in `B.T`.

All columns run in the same process on the same machine, their runs in turns (each column keeps its fastest;
a turn is a few runs in a row, 0.2 s after the previous column's: common.best_times says why).
The xetile kernel and dpnp.matmul use one `opencl:cpu` queue with the operands already in USM memory (dpnp
arrays, zero copy); numpy runs OpenBLAS on host arrays. f16 inputs accumulate in f32 everywhere (numpy and dpnp
on f32 copies of the inputs).
dpnp is the `bench` extra (`pip install -e ".[bench]"`); without it the dpnp and peak columns are empty and xetile
reads numpy arrays (copied to the device on each launch), as it does for bfloat16, which dpnp has no arrays of.
`peak` is the device's f32 multiply-add peak, a hand-written OpenCL C kernel of independent FMA chains timed in the
same turns (opencl_reference.fma_peak): the ceiling of every column, whose multiply-adds are f32 (f16 and bf16
widened); `t/peak` and `n/peak` are `tuned` and numpy over it.
`--autotune` adds the `tuned` column: `xetile.ops.matmul`, autotuned per shape (its tuning, in the first call,
is not timed; its search space includes the tutorial's fixed config), `t/x`, tuned over the fixed config, and
`t/dpnp` and `t/numpy`, tuned over the baselines.

`--processes N` measures in N fresh processes, one after another, and keeps each cell's best. A kernel's speed on
the OpenCL CPU device changes from one process to the next by more than the configs differ: f16 1024, the same
256x256 config, 104 GFLOP/s in one process and 88-97 in the next, steady within each. The tuner's
winner goes to the disk cache in the first process, so the others time the same config.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np
from common import best_times, load_tutorial, machine
from opencl_reference import PEAK_WORKGROUP_SIZE, PEAK_WORKGROUPS, fma_peak

import xetile_jit  # (exposes the OpenCL CPU runtime before dpnp imports dpctl)

DEVICE = "opencl:cpu"


def dpnp_or_none():
    try:
        import dpnp
    except ImportError:
        return None
    return dpnp


DTYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


def measure(tutorial, dpnp, shape: tuple[int, int, int], dtype, repeat: int, tuned: bool, b_order: str) -> dict:
    m, n, k = shape
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s, dtype=np.float32).astype(dtype) for s in ((m, k), (k, n)))
    if b_order == "column":
        b = np.ascontiguousarray(b.T).T
    a32, b32 = a.astype(np.float32), b.astype(np.float32, order="K")
    if dpnp is None or dtype == ml_dtypes.bfloat16:
        operands = a, b, np.empty((m, n), np.float32)
    else:
        operands = (dpnp.asarray(a, device=DEVICE), device_operand(dpnp, b),
                    dpnp.empty((m, n), dtype=np.float32, device=DEVICE))

    def run():  # a launch on USM arrays returns before the kernel finishes
        c = tutorial.matmul(*operands[:2], c=operands[2], device=DEVICE)
        xetile_jit.synchronize()
        return c

    runs = {"numpy": lambda: a32 @ b32, "xetile": run}
    flops = dict.fromkeys(("numpy", "xetile", "dpnp", "tuned"), 2 * m * n * k)
    if dpnp is not None:
        da32, db32 = dpnp.asarray(a32, device=DEVICE), device_operand(dpnp, b32)
        runs["dpnp"] = lambda: dpnp.matmul(da32, db32).sycl_queue.wait()
        runs["peak"], flops["peak"] = fma_peak(dpnp.empty(PEAK_WORKGROUPS * PEAK_WORKGROUP_SIZE, dtype=np.float32,
                                                          device=DEVICE))
    if tuned:
        runs["tuned"] = lambda: (xetile_jit.ops.matmul(*operands, device=DEVICE), xetile_jit.synchronize())
    row = {"size": shape_name(shape) + (" B.T" if b_order == "column" else ""), "dtype": np.dtype(dtype).name,
           "dpnp": None, "tuned": None, "peak": None}
    row |= {name: flops[name] / seconds / 1e9 for name, seconds in best_times(runs, repeat).items()}
    result = np.asarray(run() if isinstance(operands[2], np.ndarray) else dpnp.asnumpy(run()))
    row["max_rel_error"] = float(np.abs(result - a32 @ b32).max() / np.abs(a32 @ b32).max())
    return row


def device_operand(dpnp, b: np.ndarray):
    """`b` as a dpnp array on DEVICE in the same memory order (a column-major one as the transpose of a row-major
    array)."""
    if b.flags.c_contiguous:
        return dpnp.asarray(b, device=DEVICE)
    return dpnp.asarray(np.ascontiguousarray(b.T), device=DEVICE).T


def shape_name(shape: tuple[int, int, int]) -> str:
    """n for an n x n x n GEMM, else MxNxK."""
    return str(shape[0]) if len(set(shape)) == 1 else "x".join(map(str, shape))


def parse_shape(text: str) -> tuple[int, int, int]:
    m, n, k = map(int, text.lower().split("x"))
    return m, n, k


def measure_all(args) -> list[dict]:
    tutorial, dpnp = load_tutorial(), dpnp_or_none()
    shapes = [(n, n, n) for n in args.sizes] + args.shapes
    return [measure(tutorial, dpnp, shape, dtype, args.repeat, args.autotune, args.b_order)
            for shape in shapes for dtype in map(DTYPES.get, args.dtypes)]


def in_processes(args) -> list[dict]:
    """Every row measured in `args.processes` fresh processes, one after another; each speed the best of them,
    the error the largest."""
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.processes):
            out = pathlib.Path(tmp) / f"run{i}.json"
            command = [sys.executable, __file__, "--sizes", *map(str, args.sizes), "--dtypes", *args.dtypes,
                       "--repeat", str(args.repeat), "--b-order", args.b_order, "--json", str(out)]
            command += ["--autotune"] if args.autotune else []
            command += ["--shapes", *map(shape_name, args.shapes)] if args.shapes else []
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            runs.append(json.loads(out.read_text()))
    return [best_row(rows) for rows in zip(*runs)]


def best_row(rows: tuple[dict, ...]) -> dict:
    best = dict(rows[0])
    for column in ("xetile", "tuned", "dpnp", "numpy", "peak"):
        speeds = [r[column] for r in rows if r[column] is not None]
        best[column] = max(speeds) if speeds else None
    best["max_rel_error"] = max(r["max_rel_error"] for r in rows)
    return best


def plot(rows, path: pathlib.Path) -> None:
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    labels = [f"{r['dtype']} {r['size']}" for r in rows]
    x = np.arange(len(rows))
    for i, column in enumerate(("xetile", "tuned", "dpnp", "numpy", "peak")):
        ax.bar(x + (i - 2) * 0.16, [r[column] or 0 for r in rows], 0.16, label=column)
    ax.set_xticks(x, labels, rotation=30)
    ax.set_ylabel("GFLOP/s")
    ax.legend(ncol=5, fontsize="small", loc="lower center", bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", help="n x n x n GEMMs (default 512 1024 2048 without --shapes)")
    parser.add_argument("--shapes", type=parse_shape, nargs="+", default=[], help="MxNxK GEMMs after the sizes")
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=["float32", "float16"])
    parser.add_argument("--b-order", choices=["row", "column"], default="row",
                        help="B's memory order (column: the transpose of a row-major N x K array)")
    parser.add_argument("--autotune", action="store_true", help="add the column of xetile.ops.matmul, autotuned")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--processes", type=int, default=1, help="measure in this many fresh processes, keep the best")
    parser.add_argument("--json", type=pathlib.Path)
    parser.add_argument("--png", type=pathlib.Path)
    args = parser.parse_args()
    if args.sizes is None:
        args.sizes = [] if args.shapes else [512, 1024, 2048]
    rows = in_processes(args) if args.processes > 1 else measure_all(args)
    print(f"{machine()}; device {DEVICE}; GFLOP/s (higher is better); ratios over the baseline, same run"
          + (f"; best of {args.processes} processes" if args.processes > 1 else ""))
    print(f"{'size':>18} {'dtype':>8} {'xetile':>8} {'tuned':>8} {'dpnp':>8} {'numpy':>8} {'peak':>8} {'t/x':>5} "
          f"{'x/dpnp':>7} {'x/numpy':>8} {'t/dpnp':>7} {'t/numpy':>8} {'t/peak':>7} {'n/peak':>7} {'rel.err':>8}")
    for r in rows:
        dp, tuned, peak = (f"{r[k]:8.1f}" if r[k] else f"{'-':>8}" for k in ("dpnp", "tuned", "peak"))
        over_fixed = f"{r['tuned'] / r['xetile']:5.2f}" if r["tuned"] else f"{'-':>5}"
        ratios = [f"{r[ours] / r[base]:{width}.2f}" if r[ours] and r[base] else f"{'-':>{width}}"
                  for ours, base, width in (("xetile", "dpnp", 7), ("xetile", "numpy", 8), ("tuned", "dpnp", 7),
                                            ("tuned", "numpy", 8), ("tuned", "peak", 7), ("numpy", "peak", 7))]
        print(f"{r['size']:>18} {r['dtype']:>8} {r['xetile']:8.1f} {tuned} {dp} {r['numpy']:8.1f} {peak} "
              f"{over_fixed} {' '.join(ratios)} {r['max_rel_error']:8.1e}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if args.png:
        plot(rows, args.png)


if __name__ == "__main__":
    main()
