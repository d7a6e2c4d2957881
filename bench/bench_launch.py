"""Launch overhead: the median time of one launch of an almost empty kernel with 3 and with 20 dpnp array
arguments, and with 3 and an int and two constexprs given by keyword (`3 +n +BM,BN`: as kernels are mostly launched),
the same autotuned (`3 +n autotuned`: its constexprs a config's, one config, over a callable grid, as `xetile.ops.matmul`
launches), beside a raw `SyclQueue.submit` and `submit_async` of the same SPIR-V kernel with the same kernel
arguments, and the first launch of the tutorial GEMM cold, from a warm cache in a fresh process, and hot.

    python bench/bench_launch.py [--launches 2000] [--json out.json] [--png out.png] [--interface] [--torch]

Columns of the launch table, all in one process on one `opencl:cpu` queue, in microseconds per launch:
`xetile` is `kernel[(1,)](*arrays)` (asynchronous: every argument is a dpnp array); `submit` is the raw blocking
submit; `submit_async` the raw asynchronous one without dependencies; `ordered` is submit_async waiting for and
recording in `dpctl.utils.SequentialOrderManager[queue]`, what dpnp and an xetile launch do to order work on a
queue. The four take turns in rounds of 100 calls, each round starting on a drained queue (`queue.wait()`, not
timed), so a passing load on the machine falls on all of them. `--interface` adds the same table for arrays known by
their `__sycl_usm_array_interface__` alone (over dpctl.memory, as a library without dpnp's arrays gives them).
`--torch` adds the torch path (`torch_rows`): torch CPU tensors beside numpy arrays 16 bytes past 64-byte alignment
(both in place on the `cpu` target: runtime/memory.py), an xetile.torch op, the binding of each and its plan's lookup
(`kernel.fast_bind` and `kernel.cache.plans`: the launch's own host work before any copy, where the two paths
differ), and the op's own cost (torch's custom-op dispatch, the output's allocation): the launch and the op on an
empty grid.

The first-launch table runs the tutorial GEMM (256 x 256 x 256 f32, numpy arrays) in child processes: `cold` with
an empty XETILE_CACHE_DIR, `warm cache` in a new process on the cache `cold` filled, `hot` the second launch in
that process; each time is the launch alone (not the import), measured in the child.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from common import load_tutorial

import xetile_jit as xetile  # (exposes the OpenCL CPU runtime before dpnp imports dpctl)
import dpctl.memory  # noqa: E402
import dpctl.utils  # noqa: E402

DEVICE = "opencl:cpu"
DRAIN_EVERY = 100


@xetile.kernel
def copy3(a0, a1, a2):
    xetile.store_tile(xetile.init_tile(a2, [0, 0], [1, 16]), xetile.load_tile(xetile.init_tile(a0, [0, 0], [1, 16])))


@xetile.kernel
def copy3_sized(a0, a1, a2, n, BM: xetile.constexpr, BN: xetile.constexpr):
    """copy3 as kernels are mostly written: a size argument and its tile's shape as constexprs, given by keyword."""
    xetile.store_tile(xetile.init_tile(a2, [0, 0], [BM, BN]), xetile.load_tile(xetile.init_tile(a0, [0, 0], [BM, BN])))


# copy3_sized as `xetile.ops.matmul` launches its kernel: autotuned (one config here: what a launch of a tuned key
# costs, not the tuning), over a callable grid
copy3_tuned = xetile.autotune([xetile.Config({"BM": 1, "BN": 16})], key=["n"])(xetile.kernel(copy3_sized.fn))


@xetile.kernel
def copy20(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19):
    xetile.store_tile(xetile.init_tile(a19, [0, 0], [1, 16]), xetile.load_tile(xetile.init_tile(a0, [0, 0], [1, 16])))


class InterfaceArray:
    """A C-contiguous array known by its `__sycl_usm_array_interface__` alone, in dpctl.memory device memory."""

    def __init__(self, queue, host: np.ndarray):
        self.memory = dpctl.memory.MemoryUSMDevice(host.nbytes, queue=queue)
        self.memory.copy_from_host(host.reshape(-1).view(np.uint8))
        # writable: dpctl 0.22's memory objects say read-only of memory they write themselves (runtime/args.py)
        self.__sycl_usm_array_interface__ = dict(self.memory.__sycl_usm_array_interface__, shape=host.shape,
                                                 typestr=host.dtype.str, data=(self.memory._pointer, False))
        self.host = host

    def asnumpy(self) -> np.ndarray:
        xetile.synchronize()  # a dpctl.memory copy joins no order
        self.memory.copy_to_host(self.host.reshape(-1).view(np.uint8))
        return self.host


def dpnp_ones(queue):
    import dpnp  # the bench extra; without it the dpnp table is left out
    return dpnp.ones((1, 16), dtype=np.float32, sycl_queue=queue)


def dpnp_asnumpy(array) -> np.ndarray:
    import dpnp
    return dpnp.asnumpy(array)


ARRAYS = {  # kind -> (an array of ones on the queue, its contents on the host)
    "dpnp": (dpnp_ones, dpnp_asnumpy),
    "interface": (lambda queue: InterfaceArray(queue, np.ones((1, 16), np.float32)), InterfaceArray.asnumpy),
}


def has_dpnp() -> bool:
    try:
        import dpnp  # noqa: F401
    except ImportError:
        return False
    return True


def median_us(variants: dict, queue, launches: int) -> dict:
    """The median wall time of one call of each of `variants` (name -> function), in us. The variants take turns in
    rounds of DRAIN_EVERY calls, each round drained first, so a load that comes and goes on the machine falls on
    all of them alike."""
    times = {name: [] for name in variants}
    for _ in range(max(1, launches // DRAIN_EVERY)):
        for name, fn in variants.items():
            queue.wait()
            for _ in range(DRAIN_EVERY):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    queue.wait()
    return {name: statistics.median(t) * 1e6 for name, t in times.items()}


# (label, kernel, its arrays, its other arguments, its keyword arguments, the launch: None for kernel[(1,)](...), or a
# function of the arguments) of each row of the launch table
LAUNCHES = (("3", copy3, 3, (), {}, None), ("20", copy20, 20, (), {}, None),
            ("3 +n +BM,BN", copy3_sized, 3, (16,), {"BM": 1, "BN": 16}, None),
            ("3 +n autotuned", copy3_tuned.kernel, 3, (16,), {"BM": 1, "BN": 16},
             lambda given: copy3_tuned[lambda meta: (1,)](*given)))


def launch_row(label: str, kernel, count: int, scalars: tuple, constexprs: dict, launch, launches: int,
               kind: str = "dpnp") -> dict:
    queue = xetile.runtime.device.named_device(DEVICE).queue
    make, asnumpy = ARRAYS[kind]
    arrays = [make(queue) for _ in range(count)]
    given = [*arrays, *scalars]
    launch = launch or (lambda given: kernel[(1,)](*given, **constexprs))
    kernel.cache.clear()
    launch(given)
    xetile.synchronize()
    (plan,) = kernel.cache.plans.values()
    assert plan.asynchronous
    sycl_kernel = plan.sycl_kernel
    args = plan.kernel_args(kernel.fast_bind(given, constexprs)[1])  # what the launch passes, made once
    global_range, local_range = plan.sycl_ranges((1, 1, 1))

    def ordered():
        manager = dpctl.utils.SequentialOrderManager[queue]
        event = queue.submit_async(sycl_kernel, args, global_range, local_range, manager.submitted_events)
        manager.add_event_pair((), (event,))

    row = {"arrays": label, **median_us({
        "xetile": lambda: launch(given),
        "submit": lambda: queue.submit(sycl_kernel, args, global_range, local_range),
        "submit_async": lambda: queue.submit_async(sycl_kernel, args, global_range, local_range),
        "ordered": ordered}, queue, launches)}
    assert float(asnumpy(arrays[-1]).sum()) == 16.0
    return row


def bound_plan(kernel, args):
    """The plan of a launch of `kernel` with `args`, found as the launch finds it (jit/kernel.py Kernel.run)."""
    return kernel.cache.plans[kernel.fast_bind(args, {})[0]]


def unaligned_ones(count: int) -> np.ndarray:
    """A (1, count) f32 array of ones whose first element is 16 bytes past a 64-byte boundary."""
    buffer = np.ones(count + 32, np.float32)
    start = (16 - buffer.ctypes.data % 64) % 64 // 4
    return buffer[start:start + count].reshape(1, count)


def torch_rows(launches: int) -> list[dict]:
    """The torch path beside the direct launch (`--torch`): the same kernel on torch CPU tensors, which torch's
    allocator aligns to 64 bytes, and on numpy arrays 16 bytes past that alignment, as numpy's larger arrays start,
    both of which the OpenCL CPU device takes in place for a `cpu` target kernel (runtime/memory.py),
    and, for 3 arrays, the kernel as an xetile.torch op (torch's dispatch, the output's allocation) beside
    `kernel[grid](...)` on tensors."""
    import torch
    queue = xetile.runtime.device.named_device(DEVICE).queue
    rows = []
    for kernel, count in ((copy3, 3), (copy20, 20)):
        arrays = [unaligned_ones(16) for _ in range(count)]
        tensors = [torch.ones(1, 16) for _ in range(count)]
        variants = {"numpy": lambda: kernel[(1,)](*arrays), "torch": lambda: kernel[(1,)](*tensors),
                    # what the torch path adds, without the synchronous launch's noise: the binding, the plan lookup
                    "bind numpy": lambda: bound_plan(kernel, arrays), "bind torch": lambda: bound_plan(kernel, tensors)}
        if count == 3:
            op = xetile.torch.op("bench_launch::copy3", copy3, outputs={"a2": lambda a0, a1: (a0.shape, a0.dtype)},
                                 grid=lambda a0, a1: (1,))
            variants["torch op"] = lambda: op(tensors[0], tensors[1])
            # the op's own cost, apart from the synchronous launch's noise: the same op and launch on an empty grid,
            # which binds and returns before any copy
            nothing = xetile.torch.op("bench_launch::copy3_empty", copy3,
                                      outputs={"a2": lambda a0, a1: (a0.shape, a0.dtype)}, grid=lambda a0, a1: (0,))
            variants |= {"empty grid": lambda: kernel[(0,)](*tensors),
                         "empty grid op": lambda: nothing(tensors[0], tensors[1])}
        for variant in variants.values():
            variant()
        rows.append({"arrays": count, **median_us(variants, queue, launches)})
        assert float(tensors[-1].sum()) == 16.0
    return rows


def first_launch_child() -> None:
    """The child's side: two launches of the tutorial GEMM, their times as JSON on stdout."""
    tutorial = load_tutorial()
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((256, 256), dtype=np.float32) for _ in range(2))
    times = []
    for _ in range(2):
        start = time.perf_counter()
        c = tutorial.matmul(a, b, device=DEVICE)
        times.append(time.perf_counter() - start)
    assert np.abs(c - a @ b).max() < 1e-3
    print(json.dumps(times))


def first_launch_rows() -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XETILE_CACHE_DIR=cache)
        command = [sys.executable, __file__, "--child"]
        runs = [json.loads(subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout)
                for _ in range(2)]
    return {"cold": runs[0][0], "warm cache": runs[1][0], "hot": runs[1][1]}


def plot(rows, path: pathlib.Path) -> None:
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.arange(len(rows))
    columns = ("xetile", "ordered", "submit", "submit_async")
    for i, column in enumerate(columns):
        ax.bar(x + (i - 1.5) * 0.2, [r[column] for r in rows], 0.2, label=column)
    ax.set_xticks(x, [r["arrays"] for r in rows])
    ax.set_xlabel("arrays (+ other arguments)")
    ax.set_ylabel("us per launch (median)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--json", type=pathlib.Path)
    parser.add_argument("--png", type=pathlib.Path)
    parser.add_argument("--interface", action="store_true", help="also time arrays known by their interface alone")
    parser.add_argument("--torch", action="store_true", help="also time the torch path (needs torch)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return first_launch_child()
    print(f"device {DEVICE}; median us per launch; overhead = xetile - submit_async, over ordered = xetile - ordered")
    tables = {}
    kinds = ("dpnp", "interface") if args.interface else ("dpnp",)
    if not has_dpnp():
        print("dpnp is not installed (the bench extra): no dpnp table")
        kinds = kinds[1:]
    for kind in kinds:
        if kind != "dpnp":
            print(f"arrays known by __sycl_usm_array_interface__ alone ({kind}):")
        print(f"{'arrays':>12} {'xetile':>8} {'ordered':>8} {'submit':>8} {'submit_async':>12} {'overhead':>8} "
              f"{'over ordered':>12}")
        rows = tables[kind] = []
        for launch in LAUNCHES:
            r = launch_row(*launch, args.launches, kind)
            rows.append(r)
            print(f"{r['arrays']:>12} {r['xetile']:8.1f} {r['ordered']:8.1f} {r['submit']:8.1f} "
                  f"{r['submit_async']:12.1f} {r['xetile'] - r['submit_async']:8.1f} "
                  f"{r['xetile'] - r['ordered']:12.1f}", flush=True)
    if args.torch:
        print("torch CPU tensors beside numpy arrays 16 B past alignment, synchronous, and the kernel as a torch op:")
        print(f"{'arrays':>6} {'numpy':>8} {'torch':>8} {'torch op':>8} {'bind numpy':>10} {'bind torch':>10} "
              f"{'bind torch - numpy':>18}")
        tables["torch"] = torch_rows(args.launches)
        for r in tables["torch"]:
            op = f"{r['torch op']:8.1f}" if "torch op" in r else f"{'':>8}"
            print(f"{r['arrays']:>6} {r['numpy']:8.1f} {r['torch']:8.1f} {op} {r['bind numpy']:10.1f} "
                  f"{r['bind torch']:10.1f} {r['bind torch'] - r['bind numpy']:18.1f}", flush=True)
        r = tables["torch"][0]
        print(f"on an empty grid (3 arrays): the launch {r['empty grid']:.1f} us, as an xetile.torch op "
              f"{r['empty grid op']:.1f} us")
    rows = tables.get("dpnp", [])
    first = first_launch_rows()
    print("tutorial GEMM 256x256x256 f32, first launch in s: " +
          ", ".join(f"{name} {seconds:.3f}" for name, seconds in first.items()))
    if args.json:
        args.json.write_text(json.dumps({"launch": rows, "first_launch": first,
                                         **({"launch_interface": tables["interface"]} if args.interface else {}),
                                         **({"launch_torch": tables["torch"]} if args.torch else {})},
                                        indent=2))
    if args.png and rows:
        plot(rows, args.png)


if __name__ == "__main__":
    main()
