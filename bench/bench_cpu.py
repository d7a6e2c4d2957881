"""The CPU path: GEMM, softmax and layer norm on the `opencl:cpu` device, per CPU target, beside oneMKL,
dpnp's copy bandwidth and numpy; and the first launch of the tutorial GEMM.

    python bench/bench_cpu.py [--quick] [--targets cpu xe-emulated] [--repeat 5] [--fast-math] [--padded]
                              [--json out.json] [--png out.png]

Every xetile kernel and every dpnp baseline runs on one `opencl:cpu` queue with its operands already in USM memory
(dpnp arrays). GEMM: the tutorial's kernel (tutorials/03-matrix-multiplication.py: 256x256 workgroup tiles) with its
config (`subgroup_split`: 32x64 pieces, K step 32) and, on the `cpu` target, with 64x64 pieces and K step 64 (the config
`xetile.ops.matmul` tunes to there at 2048-4096), f32 and f16 -> f32,
against `dpnp.matmul` in f32 (oneMKL) on the same queue, as GFLOP/s and their ratio, timed in turns. Softmax and
layer norm: 16 rows a workgroup, a whole row in registers (the kernels a user writes, computed in f32), against the time
dpnp takes to copy the same bytes (read the input, write the output: `dpnp.copyto`) and against numpy on the host;
the `x/copy` column is the copy's time over ours (1.0: at copy bandwidth); layer norm's `x/torch` is torch eager's
`torch.nn.functional.layer_norm` on the host (when torch is installed: the `torch` extra) over ours. Beside them three bounds:
"bound: copy" (a plain xetile copy kernel: our loads and stores of the same bytes, which no row kernel beats; dpnp's
copy runs at its own, size-dependent speed), and two a softmax cannot beat, "bound: exp" (load, `exp`, store) and
"bound: softmax-exp" (softmax's passes over a row, `exp` left out). Softmax and layer norm also run as hand-written
OpenCL C kernels built by the OpenCL CPU runtime's own compiler (target "opencl-c", bench/opencl_reference.py: the
same work, a row a subgroup): what the device reaches on the rows without our compiler. Those are launched with one
blocking `SyclQueue.submit`, which waits for its own event; ours are waited for the same way, by the event their
launch returns (`kernel[grid](...).wait()`: a `queue.wait()` after it cost 13-25 us more at 4096x512,
docs/performance.md). `kernel_ms` is our softmax's and layer norm's kernel run as the hand-written ones, with the
arguments of its launch (`kernel_alone`), so that `ms` minus `kernel_ms` is what our launch path adds; `x/opencl-c`
is the hand-written kernel's time over ours launched, `k/opencl-c` over our kernel alone (the project's mark for the
rows: 1.0 or more in every cell).
First launch: the tutorial GEMM (f16, 256x256 tile, 256x256 problem) in a fresh process with an empty
XETILE_CACHE_DIR, per target: import, trace, compile, the driver's build, run. The machine may be shared: each time
is the best of `--repeat` runs; oneMKL and the GEMMs, and the rows' copy, numpy and kernels, in turns of bursts
(common.best_times: a copy timed in 3 runs alone measured twice its time in bursts, which doubled every
x/copy).
`--quick` drops the 4096 GEMMs and the largest rows. `--fast-math` runs the rows with the `fast_math` launch option
(approximate exp and division, contraction into FMAs) and builds the hand-written kernels with `-cl-fast-relaxed-math`;
`--fp-fusion` with the `fp_fusion` option (the contraction alone), the hand-written kernels contracting as OpenCL C
does by default. Without either both round each multiply and add (opencl_reference.program). `--padded` runs our
rows in tiles of the next power of two columns (Triton's tutorials' BLOCK_SIZE; the `tile` column), the
hand-written kernels on the row's own columns: `--widths 768 1536 3072 --padded`.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from common import ROOT, best_times, load_tutorial, machine

import xetile_jit as xetile  # (exposes the OpenCL CPU runtime before dpnp imports dpctl)
from xetile_jit.ops.matmul import row_major_copy_kernel
import opencl_reference  # noqa: E402 (after xetile_jit, which exposes the OpenCL CPU runtime to dpctl)

DEVICE = "opencl:cpu"
ROWS_PER_WORKGROUP = 16
REFERENCE = "opencl-c"  # the rows' "target" of bench/opencl_reference.py's hand-written OpenCL C kernels
TORCH = "torch"  # torch eager's layer norm on the host, when torch is installed (the `x/torch` column)
BASELINES = ("copy", "numpy", TORCH)
KERNEL_ALONE = "kernel alone: "  # our softmax and layer norm on a target without the launch path (kernel_alone)


@xetile.kernel
def softmax_kernel(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]), padding=float("-inf")).to(xetile.float32)
    e = xetile.exp(rows - xetile.tile_reduce("max", rows, [1]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), e / xetile.tile_reduce("add", e, [1]))


@xetile.kernel
def layernorm_kernel(x, w, b, y, N, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN])).to(xetile.float32)
    mean = xetile.tile_reduce("add", rows, [1]) / N
    var = xetile.tile_reduce("add", rows * rows, [1]) / N - mean * mean
    weight = xetile.load_tile(xetile.init_tile(w, [0, 0], [1, BN]))
    bias = xetile.load_tile(xetile.init_tile(b, [0, 0], [1, BN]))
    out = (rows - mean) * xetile.rsqrt(var + 1e-5) * weight + bias
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), out)


# Bounds on the rows: a plain copy kernel (xetile.ops.matmul's row_major_copy_kernel, 16 rows a workgroup: what our
# loads and stores of the same bytes take; no row kernel beats it), the exponential alone, and softmax's three passes
# over a row (max, sum, division) without it (a softmax cannot run faster than either).
@xetile.kernel
def exp_kernel(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN])).to(xetile.float32)
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), xetile.exp(rows))


@xetile.kernel
def softmax_without_exp_kernel(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]), padding=float("-inf")).to(xetile.float32)
    e = rows - xetile.tile_reduce("max", rows, [1])
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), e / xetile.tile_reduce("add", e, [1]))


# The GEMM configs timed per target: the tutorial's, and on the `cpu` target the one xetile.ops.matmul's tuner chose
# there at 2048-4096 (64x64 pieces, K step 64: faster, but 2-3x the driver build).
BIG_PIECES = {"cpu": dict(BK=64, sg_layout=[4, 4], sg_data=[64, 64])}


def gemm_configs(tutorial, target: str) -> dict:
    """Config name -> the tutorial kernel's constexprs and split on `target` (256x256 tiles)."""
    configs = {"tutorial": dict(BK=32, **tutorial.subgroup_split(256, 256))}
    if target in BIG_PIECES:
        configs["64x64/K64"] = BIG_PIECES[target]
    return configs


def gemm_rows(dpnp, tutorial, targets, sizes, repeat):
    rows = []
    for n in sizes:
        rng = np.random.default_rng(0)
        a32, b32 = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
        da32, db32 = dpnp.asarray(a32, device=DEVICE), dpnp.asarray(b32, device=DEVICE)
        flops = 2 * n ** 3
        for dtype in (np.float32, np.float16):
            a, b = dpnp.asarray(a32.astype(dtype), device=DEVICE), dpnp.asarray(b32.astype(dtype), device=DEVICE)
            cases = [(target, name, config) for target in targets
                     for name, config in gemm_configs(tutorial, target).items()]
            c = {case[:2]: dpnp.empty((n, n), dtype=np.float32, device=DEVICE) for case in cases}
            runs = {(target, name): tutorial_gemm(tutorial, a, b, c[target, name], n, target, config)
                    for target, name, config in cases}
            times = best_times({"onemkl": lambda: dpnp.matmul(da32, db32).sycl_queue.wait(), **runs}, repeat)
            mkl = flops / times["onemkl"] / 1e9
            expected = a32.astype(dtype).astype(np.float32) @ b32.astype(dtype).astype(np.float32)
            for target, name, _ in cases:
                ours = flops / times[target, name] / 1e9
                error = float(np.abs(dpnp.asnumpy(c[target, name]) - expected).max() / np.abs(expected).max())
                rows.append({"kernel": "gemm", "shape": f"{n}", "dtype": np.dtype(dtype).name, "target": target,
                             "config": name, "gflops": ours, "onemkl_gflops": mkl, "x/onemkl": ours / mkl,
                             "rel_error": error})
    return rows


def tutorial_gemm(tutorial, a, b, c, n, target, config):
    """A launch of the tutorial GEMM with `config` on `target`, waiting for the result."""
    def run():
        grid = (xetile.cdiv(n, 256), xetile.cdiv(n, 256))
        tutorial.matmul_kernel[grid](a, b, c, n, n, n, BM=256, BN=256, **config, target=target)
        c.sycl_queue.wait()
    return run


# The rows' float math: launch options of ours (fast_math includes fp_fusion), the same keywords build the
# hand-written kernels (opencl_reference.program)
MATH = {"precise": {}, "fused": {"fp_fusion": True}, "fast": {"fast_math": True}}


def tile_width(width: int, padded: bool) -> int:
    """The tiles' columns for rows of `width`: the row's own, or where `padded` the next power of two (as Triton's
    tutorials size BLOCK_SIZE, the columns past the row's end masked by the load's padding and the store's bounds)."""
    return 1 << (width - 1).bit_length() if padded else width


def row_kernels(x, y, dw, db, host, w, bias, math: dict, padded: bool = False):
    """(name, kernel, its grid and arguments, numpy's result) of each row kernel on x -> y (`host`, `w`, `bias`: x,
    dw, db on the host), launched with the launch options `math` (MATH), in tiles of `tile_width(.., padded)`."""
    width = host.shape[1]
    grid = (xetile.cdiv(host.shape[0], ROWS_PER_WORKGROUP),)
    shape = dict(BM=ROWS_PER_WORKGROUP, BN=tile_width(width, padded), **math)
    return [("softmax", softmax_kernel, grid, (x, y), shape, lambda: softmax_numpy(host)),
            ("layernorm", layernorm_kernel, grid, (x, dw, db, y, width), shape, lambda: layernorm_numpy(host, w, bias)),
            ("bound: copy", row_major_copy_kernel, grid + (1,), (x, y), shape, lambda: host.astype(np.float32)),
            ("bound: exp", exp_kernel, grid, (x, y), shape, lambda: np.exp(host.astype(np.float32))),
            ("bound: softmax-exp", softmax_without_exp_kernel, grid, (x, y), shape,
             lambda: softmax_without_exp_numpy(host))]


def kernel_alone(kernel, grid, args, options):
    """Our kernel run as the hand-written ones are (opencl_reference.launcher): one blocking `SyclQueue.submit` of
    its SYCL kernel with the kernel arguments of a launch with `args` and `options`, made once from the plan of a
    launch before the first run. Its time against the launch's is what the launch path adds."""
    made = []

    def run():
        if not made:
            key, values, parts, _ = kernel.fast_bind(args, options)
            plan = kernel.cache.plans[key]
            made.append((plan.device.queue, plan.sycl_kernel, plan.kernel_args(values, parts),
                         *plan.sycl_ranges(tuple(grid) + (1,) * (3 - len(grid)))))
        queue, sycl_kernel, kernel_args, global_range, local_range = made[0]
        queue.submit(sycl_kernel, kernel_args, global_range, local_range).wait()
    return run


def row_rows(dpnp, targets, widths, rows_count, repeat, math: dict, padded: bool = False):
    """Softmax, layer norm and the bounds on them, of `rows_count` x width arrays, f32 and f16; `math`: ours with
    these launch options (MATH), the hand-written kernels built for the same (opencl_reference.program); `padded`:
    ours in tiles of the next power of two (`tile_width`), the hand-written kernels on the row's columns alone."""
    result = []
    for width in widths:
        for dtype in (np.float32, np.float16):
            rng = np.random.default_rng(0)
            host = rng.standard_normal((rows_count, width)).astype(dtype)
            w, bias = rng.standard_normal((2, 1, width)).astype(np.float32)
            x, y = dpnp.asarray(host, device=DEVICE), dpnp.empty((rows_count, width), dtype=dtype, device=DEVICE)
            dw, db = dpnp.asarray(w, device=DEVICE), dpnp.asarray(bias, device=DEVICE)
            references = {"softmax": [x, y], "layernorm": [x, dw, db, y]}
            for kernel, fn, grid, args, shape, numpy_fn in row_kernels(x, y, dw, db, host, w, bias, math, padded):
                runs = {"copy": lambda: (dpnp.copyto(y, x), y.sycl_queue.wait()), "numpy": numpy_fn}
                runs |= {t: (lambda t: lambda: fn[grid](*args, **shape, target=t).wait())(t) for t in targets}
                if kernel in references:
                    runs[REFERENCE] = opencl_reference.launcher(kernel, references[kernel], dtype == np.float16,
                                                                 ROWS_PER_WORKGROUP, **math)
                    runs |= {KERNEL_ALONE + t: kernel_alone(fn, grid, args, {**shape, "target": t}) for t in targets}
                if kernel == "layernorm" and torch_layer_norm is not None:
                    runs[TORCH] = torch_layer_norm(host, w, bias)
                times = best_times(runs, repeat)  # in turns, each a burst: the copy as well sampled as ours
                copy, numpy_time = times["copy"], times["numpy"]
                for target in [t for t in runs if t not in BASELINES and not t.startswith(KERNEL_ALONE)]:
                    ours = times[target]
                    runs[target]()
                    error = float(np.abs(dpnp.asnumpy(y).astype(np.float32) - numpy_fn()).max())
                    result.append({"kernel": kernel, "shape": f"{rows_count}x{width}", "dtype": np.dtype(dtype).name,
                                   "target": target, "tile": tile_width(width, padded and target != REFERENCE),
                                   "fast_math": False, "fp_fusion": False, **math,
                                   "ms": ours * 1e3, "x/copy": copy / ours,
                                   "x/numpy": numpy_time / ours, "max_abs_error": error,
                                   **({"x/torch": times[TORCH] / ours} if TORCH in times else {}),
                                   **reference_ratios(times, target)})
    return result


def reference_ratios(times: dict, target: str) -> dict:
    """Our kernel on `target` beside the hand-written one in `times` (row_rows): `kernel_ms`, our kernel alone;
    `x/opencl-c` and `k/opencl-c`, the hand-written kernel's time over ours launched and over our kernel alone (above
    1.0 ours is faster). None of them for a kernel without a hand-written one, nor for the hand-written one itself."""
    alone = times.get(KERNEL_ALONE + target)
    if alone is None:
        return {}
    return {"kernel_ms": alone * 1e3, "x/opencl-c": times[REFERENCE] / times[target],
            "k/opencl-c": times[REFERENCE] / alone}


def torch_layer_norm_baseline():
    """A maker of torch eager's layer norm on the host for `row_rows` (None without torch): the baseline of a user
    who would not write the kernel, in the row's dtype (torch's CPU kernel accumulates f16 rows in f32)."""
    try:
        import torch
    except ImportError:
        return None

    def make(host, w, bias):
        x, weight, b = (torch.from_numpy(a).to(torch.from_numpy(host).dtype) for a in (host, w[0], bias[0]))
        return lambda: torch.nn.functional.layer_norm(x, (x.shape[1],), weight, b)
    return make


torch_layer_norm = torch_layer_norm_baseline()


def softmax_numpy(x):
    x = x.astype(np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def softmax_without_exp_numpy(x):
    x = x.astype(np.float32)
    e = x - x.max(1, keepdims=True)
    return e / e.sum(1, keepdims=True)


def layernorm_numpy(x, w, b):
    x = x.astype(np.float32)
    return (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * w + b


FIRST_LAUNCH = """
import sys, numpy as np
sys.path.insert(0, {bench!r})
from common import load_tutorial
import xetile_jit as xetile
t = load_tutorial()
a = np.ones((256, 256), np.float16); c = np.empty((256, 256), np.float32)
t.matmul_kernel[(1, 1)](a, a, c, 256, 256, 256, BM=256, BN=256, BK=32, **t.subgroup_split(256, 256),
                        device={device!r}, target={target!r})
assert (c == 256).all()
"""


def first_launch(target: str) -> float:
    """Seconds from a fresh interpreter's start to the tutorial GEMM's result, with an empty compile cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XETILE_CACHE_DIR=cache)
        code = FIRST_LAUNCH.format(bench=str(ROOT / "bench"), device=DEVICE, target=target)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        return time.perf_counter() - start


def print_table(rows, columns) -> None:
    print(" ".join(f"{c:>12}" for c in columns))
    for r in rows:
        values = [r.get(c, "") for c in columns]  # a column a row lacks (x/torch beside softmax) stays blank
        print(" ".join(f"{v:>12.3g}" if isinstance(v, float) else f"{v:>12}" for v in values))


def bar_color(row) -> str:
    if row["kernel"].startswith("bound"):
        return "silver"
    return "tab:orange" if row.get("target") == REFERENCE else "tab:blue"


def plot(rows, path: pathlib.Path) -> None:
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4))
    labels = [" ".join(str(r[key]) for key in ("kernel", "shape", "dtype", "target", "config") if key in r)
              for r in rows]
    ax.bar(np.arange(len(rows)), [r.get("x/onemkl", r.get("x/copy", 0)) for r in rows],
           color=[bar_color(r) for r in rows])
    ax.axhline(1.0, color="gray")
    ax.axhline(0.8, color="gray", linestyle="--", linewidth=0.8)  # the rows' goal: 0.8x of the copy
    ax.set_xticks(np.arange(len(rows)), labels, rotation=80, fontsize=6)
    ax.set_ylabel("ratio to the baseline")
    ax.set_title("GEMM: x oneMKL; softmax, layer norm: x dpnp copy (dashed: 0.8; gray: bounds; orange: OpenCL C)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    import dpnp
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="no 4096 GEMM, rows of 512 and 2048 columns")
    parser.add_argument("--widths", nargs="+", type=int, help="the rows' columns (default 128 to 4096)")
    parser.add_argument("--targets", nargs="+", default=["cpu", "xe-emulated"])
    parser.add_argument("--only", nargs="+", choices=["gemm", "rows", "first"], default=["gemm", "rows", "first"])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--padded", action="store_true",
                        help="rows: ours in tiles of the next power of two columns, as Triton's tutorials size them")
    math = parser.add_mutually_exclusive_group()
    math.add_argument("--fast-math", action="store_true",
                      help="rows: ours with fast_math=True, the hand-written kernels with -cl-fast-relaxed-math")
    math.add_argument("--fp-fusion", action="store_true",
                      help="rows: ours with fp_fusion=True, the hand-written kernels contracting as OpenCL C does")
    parser.add_argument("--json", type=pathlib.Path)
    parser.add_argument("--png", type=pathlib.Path)
    args = parser.parse_args()
    sizes = [1024, 2048] if args.quick else [1024, 2048, 4096]
    widths = args.widths or ([512, 2048] if args.quick else [128, 256, 512, 1024, 2048, 4096])
    rows = []
    print(f"{machine()}; device {DEVICE}; best of {args.repeat}")
    if "gemm" in args.only:
        gemm = gemm_rows(dpnp, load_tutorial(), args.targets, sizes, args.repeat)
        print_table(gemm, ["shape", "dtype", "target", "config", "gflops", "onemkl_gflops", "x/onemkl", "rel_error"])
        rows += gemm
    if "rows" in args.only:
        mode = "fast" if args.fast_math else "fused" if args.fp_fusion else "precise"
        by_row = row_rows(dpnp, args.targets, widths, 4096, args.repeat, MATH[mode], args.padded)
        print_table(by_row, ["kernel", "shape", "dtype", "target", "tile", "ms", "kernel_ms", "x/opencl-c",
                             "k/opencl-c", "x/copy", "x/numpy", "x/torch", "max_abs_error"])
        rows += by_row
    if "first" in args.only:
        first = [{"kernel": "first launch", "target": t, "seconds": first_launch(t)} for t in args.targets]
        print_table(first, ["kernel", "target", "seconds"])
        rows += first
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if args.png:
        plot([r for r in rows if "seconds" not in r], args.png)


if __name__ == "__main__":
    main()
