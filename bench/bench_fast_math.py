"""The error of each op fast math approximates (docs/guide.md "Fast math"), against float64, on a device.

    python bench/bench_fast_math.py [--device opencl:cpu] [--json out.json] [--isa [--peer mlir]]

For each op a kernel applies it to every element of an f32 array, compiled with fast_math=True and without, and
each result is compared with the float64 value of the op on the same f32 inputs: the largest error in units in the
last place of the f32 nearest that value (`ulp`) and the largest relative error. Two input sets an op: every f32
in [1, 2) (2**23 values, every mantissa once; for the division the divisor, the dividend being the same values
reversed) and 2**22 points spread evenly (`lin`) or geometrically (`geo`) over a wide range (column `inputs`).
The bound measured is the device's OpenCL runtime's; the OpenCL specification leaves the accuracy of the native_
built-ins to each implementation, so a GPU's may differ.

With --isa it prints instead what fast math does to tutorials 02 (softmax, 1024x1024 f32, 16 rows a workgroup),
05 (layer norm, 768 f32 columns) and 06 (causal flash attention, f16, head dim 64, BM = BN = 32) as Intel's GPU
compiler builds them for xe-hpc (`xetile_jit.toolchain.isa_stats`; nothing runs): the ISA instructions a tile
element costs, each instruction counted once per subgroup that runs it (SIMD instructions: one works on many lanes)
and divided by the elements of the workgroup's tile, for the whole kernel and, for attention, the main loop (the
elements of one BM x BN block of scores). `math` counts the math-unit instructions (exp, log, inv, sqrt, ...).
With --peer mlir each kernel is built in a configuration upstream MLIR's pipeline lowers (PEER_OPTIONS), and
upstream's build of its export (`asm["mlir"]`, same ocloc, same driver options) is counted beside it.
"""
import argparse
import json

import numpy as np

import xetile_jit as xetile
from common import load_module
from xetile_jit.target.targets import get_target
from xetile_jit.toolchain import isa_stats, upstream_mlir

BM, BN = 8, 256
ALL_ONE_TO_TWO = np.arange(np.float32(1).view(np.int32), np.float32(2).view(np.int32), dtype=np.int32).view(
    np.float32)
WIDE_POINTS = 1 << 22
WIDE = {  # op -> (numpy float64 rule, its wide input range: linear "lin" or geometric "geo")
    "exp": (np.exp, ("lin", -87.0, 88.0)),
    "exp2": (np.exp2, ("lin", -126.0, 127.0)),
    "log": (np.log, ("geo", 1e-37, 1e38)),
    "log2": (np.log2, ("geo", 1e-37, 1e38)),
    "sqrt": (np.sqrt, ("geo", 1e-37, 1e38)),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), ("geo", 1e-37, 1e38)),
    "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), ("lin", -87.0, 87.0)),
    "divide": (None, ("geo", 1e-18, 1e18)),  # both operands: quotients from 1e-36 to 1e36
}


def unary_kernel(function):
    """A kernel storing `function` (an xetile math function) of each element."""
    @xetile.kernel
    def unary(x, y):
        m = xetile.program_id(0) * BM
        v = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
        xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), function(v))
    return unary


UNARY_KERNELS = {op: unary_kernel(getattr(xetile, op)) for op in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt",
                                                                  "sigmoid")}


@xetile.kernel
def divide_kernel(a, b, y):
    m = xetile.program_id(0) * BM
    numerator = xetile.load_tile(xetile.init_tile(a, [m, 0], [BM, BN]))
    denominator = xetile.load_tile(xetile.init_tile(b, [m, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), numerator / denominator)


def wide_inputs(kind: str, low: float, high: float) -> np.ndarray:
    points = np.linspace(low, high, WIDE_POINTS) if kind == "lin" else np.geomspace(low, high, WIDE_POINTS)
    return points.astype(np.float32)


def device_result(op: str, x: np.ndarray, fast_math: bool, device: str) -> np.ndarray:
    rows = x.reshape(-1, BN)
    y = np.empty_like(rows)
    grid = (rows.shape[0] // BM,)
    if op == "divide":
        divide_kernel[grid](rows[::-1].copy(), rows, y, fast_math=fast_math, device=device)
    else:
        UNARY_KERNELS[op][grid](rows, y, fast_math=fast_math, device=device)
    return y.reshape(-1)


def exact(op: str, x: np.ndarray) -> np.ndarray:
    wide = x.astype(np.float64)
    if op == "divide":
        return wide.reshape(-1, BN)[::-1].reshape(-1) / wide
    return WIDE[op][0](wide)


def errors(got: np.ndarray, expected: np.ndarray) -> dict:
    """The largest error in ulps of the f32 nearest `expected`, and relative, over the finite normal results."""
    keep = np.isfinite(expected) & (np.abs(expected) >= np.finfo(np.float32).tiny) & \
        (np.abs(expected) <= np.finfo(np.float32).max)
    got, expected = got[keep].astype(np.float64), expected[keep]
    difference = np.abs(got - expected)
    ulp = np.spacing(np.abs(expected.astype(np.float32))).astype(np.float64)
    return {"max_ulp": float((difference / ulp).max()), "max_rel": float((difference / np.abs(expected)).max()),
            "values": int(keep.sum())}


def measure(device: str) -> list[dict]:
    rows = []
    for op, (_, wide) in WIDE.items():
        for inputs, x in (("[1, 2) all", ALL_ONE_TO_TWO), (f"{wide[0]} {wide[1]:g}..{wide[2]:g}", wide_inputs(*wide))):
            expected = exact(op, x)
            for fast_math in (False, True):
                row = {"op": op, "range": inputs, "fast_math": fast_math}
                rows.append(row | errors(device_result(op, x, fast_math, device), expected))
    return rows


# The tutorials' configurations whose exports upstream MLIR's pipeline lowers (it distributes no reduction across
# subgroups): softmax with a row a subgroup, layer norm with one subgroup a row; attention it refuses at any.
PEER_OPTIONS = {"softmax": {"num_subgroups": 16}, "layer norm": {"num_subgroups": 1}, "attention": {}}


def tutorial_builds(fast_math: bool, peer: bool = False) -> dict:
    """Name -> (the xe-hpc CompiledKernel of the tutorial kernel, the elements of its workgroup tile); with `peer`
    in the configurations of PEER_OPTIONS."""
    softmax = load_module("softmax", "tutorials/02-fused-softmax.py")
    layer_norm = load_module("layer_norm", "tutorials/05-layer-norm.py")
    attention = load_module("attention", "tutorials/06-fused-attention.py")
    x, w = np.zeros((1024, 1024), np.float32), np.zeros(1024, np.float32)
    q = np.zeros((1, 2, 1000, 64), np.float16)
    args, options = attention.launch_arguments(q, q, q, q, True, 32, 32, fast_math)

    def options_of(name: str) -> dict:
        return dict(target="xe-hpc", fast_math=fast_math) | (PEER_OPTIONS[name] if peer else {})
    return {"softmax": (softmax.softmax_kernel.warmup(x, x, 1024, BM=16, BN=1024, **options_of("softmax")), 16 * 1024),
            "layer norm": (layer_norm.layer_norm_kernel.warmup(x[:, :768], w[:768], w[:768], x[:, :768], 768, 1e-5,
                                                               BLOCK=1024, **options_of("layer norm")), 768),
            "attention": (attention.attention_kernel.warmup(*args, **options | options_of("attention")), 32 * 32)}


def instructions(c: isa_stats.Counts) -> int:
    return c.dpas + c.loads + c.prefetches + c.stores + c.other_sends + c.other


def per_element(isa: str, subgroups: int, elements: int) -> dict:
    """The instructions of `isa` a tile element costs (each counted once a subgroup), in the whole kernel and in the
    main loop, and its math-unit instructions."""
    figures = {"kernel_per_element": instructions(isa_stats.counts(isa.splitlines())) * subgroups / elements,
               "math": sum(" math." in line for line in isa.splitlines())}
    loops = isa_stats.innermost_loops(isa)
    return figures | ({"loop_per_element": instructions(loops[0]) * subgroups / elements} if loops else {})


def upstream_per_element(compiled, subgroups: int, elements: int) -> dict:
    """`per_element` of upstream MLIR's build of the kernel's export (same ocloc, same driver options), or
    `skipped` with mlir-opt's first error."""
    try:
        build = upstream_mlir.gpu_build(compiled.asm["mlir"], get_target("xe-hpc"), compiled.build_options).build
    except upstream_mlir.MlirError as error:
        return {"skipped": f"mlir-opt: {error.reason}"}
    return per_element(build.isa, subgroups, elements)


def isa_rows(peer: str | None = None) -> list[dict]:
    rows = []
    for fast_math in (False, True):
        for name, (compiled, elements) in tutorial_builds(fast_math, peer is not None).items():
            if "isa" not in compiled.asm:
                raise SystemExit("no Intel GPU compiler here: python -m xetile_jit install-gpu-compiler")
            subgroups = compiled.artifact.num_subgroups
            row = {"kernel": name, "fast_math": fast_math, "subgroups": subgroups,
                   **per_element(compiled.asm["isa"], subgroups, elements)}
            if peer is not None:
                row["peer"] = {peer: upstream_per_element(compiled, subgroups, elements)}
            rows.append(row)
    return rows


def figures_text(row: dict) -> str:
    loop = f"{row['loop_per_element']:.3g}" if "loop_per_element" in row else "-"
    return f"{row['kernel_per_element']:>11.3g} {loop:>9} {row['math']:>5}"


def print_isa(rows: list[dict], peer: str | None) -> None:
    print(f"{'kernel':<11} {'fast_math':<9} {'subgroups':>9} {'per element':>11} {'main loop':>9} {'math':>5}"
          + (f"   upstream ({peer}): {'per element':>11} {'main loop':>9} {'math':>5}" if peer else ""))
    for row in rows:
        line = f"{row['kernel']:<11} {str(row['fast_math']):<9} {row['subgroups']:>9} {figures_text(row)}"
        if peer:
            theirs = row["peer"][peer]
            line += "   " + (f"skipped: {theirs['skipped']}" if "skipped" in theirs else
                             f"{'':<{len(peer) + 12}}{figures_text(theirs)}")
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="opencl:cpu")
    parser.add_argument("--json")
    parser.add_argument("--isa", action="store_true", help="the xe-hpc ISA of the tutorials instead")
    parser.add_argument("--peer", choices=("mlir",), help="with --isa: upstream MLIR's build beside ours")
    args = parser.parse_args()
    if args.isa:
        rows = isa_rows(args.peer)
        print_isa(rows, args.peer)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"target": "xe-hpc", "peer": args.peer, "rows": rows}, f, indent=1)
        return
    rows = measure(args.device)
    print(f"{'op':<7} {'inputs':<22} {'fast_math':<9} {'max ulp':>10} {'max rel':>10}")
    for row in rows:
        print(f"{row['op']:<7} {row['range']:<22} {str(row['fast_math']):<9} {row['max_ulp']:>10.3g} "
              f"{row['max_rel']:>10.3g}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
