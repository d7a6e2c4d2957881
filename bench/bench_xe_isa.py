"""The main loops of the tutorial GEMM, RFC Appendix 2.2 and flash attention as Intel's GPU compiler builds them,
per Xe target and builtin ABI, beside the minimum.

    python bench/bench_xe_isa.py [--targets xe-hpc xe2 xe3] [--json out.json] [--png out.png]

Nothing runs on a GPU: each row compiles the kernel (`warmup`) for the target and reads the ISA disassembly with
xetile_jit.toolchain.isa_stats. The kernel is tests/test_passes.py's `gemm`, the tutorial's kernel with optional
per-tile layouts (the tutorial's own kernel takes none): with LA=None it is the tutorial kernel, with
A inst_data [32, 16] the A tile is cut into 32x16 blocks. Tile: 256x256 per workgroup, sg_layout [8, 4],
sg_data [32, 64] (a subgroup's C is 32x64), K step 32 (64 for 8-bit, accumulated in i32; 16 for tf32: f32 inputs
with input_precision "tf32", whose 32x64 accumulator, A and B of a K step of 32 would not fit the 256 registers);
M = N = K = 512 zero arrays. Column `pf`: the prefetch_distance option (one f16 row prefetches the A and B tiles two
K steps ahead: its `pref` column counts the prefetch messages per K step).

The fused kernels are the tutorials' own, in their own configs, f16: "app2.2" is tutorials/07's GEMM + bias + row
reduce at 128x128x32 (32 subgroups: a subgroup's C is 16x32, its B^T 32x32 read by transposed loads); "fa-hd64" and
"fa-hd128" are tutorials/06's causal flash attention, BM = BN = 32, head dim 64 and 128 (4 subgroups: a subgroup's
S is 8x32 = Q (8xD, loaded before the loop) K^T, then O 8xD += P V; K^T is read by transposed loads). Their minimum
per loop iteration is the DPAS of each tile_mma plus the fewest messages for the tiles the loop loads; a transposed
load counts in messages DPAS takes as they come: `max_transpose_width_bytes` x one row a lane (16 rows). A 32-row
transposed message is legal, but gives each lane two rows taking turns column by column, which DPAS cannot take
without register moves; Intel's compiler reads it so reordered as two 16-row messages (docs/DESIGN.md,
"Transposed loads"). Column `fewest` counts the fewest legal messages (32-row transposed ones: 3, 6 and 12 for
the fused kernels; the GEMMs' `min`).

The main loop is the innermost loop with the most `dpas`. Intel's compiler may unroll it: `unroll` is the loop's
dpas over the minimal dpas of one K step (1 when that is not a whole number), and every count is per K step
(the loop's count / unroll). `min` columns come from `minimum()`: the target's DPAS shape and 2D block limits.
Each run compiles into a fresh temporary XETILE_CACHE_DIR, so the ISA is what the installed compilers make of
today's code (the cache key names xetile_jit's sources, not the GPU compiler; an entry made before a compiler was
installed has no ISA). A target x ABI whose compiler is not installed is listed and skipped;
a compile raising NotImplementedError or CompilationError is a skipped row with its reason.
"""
import argparse
import json
import math
import os
import pathlib
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from importlib.util import find_spec
from unittest import mock

import ml_dtypes
import numpy as np
from common import ROOT, load_module

import xetile_jit as xetile
from xetile_jit.toolchain import ocloc
from xetile_jit.toolchain.isa_stats import block_messages, innermost_loops
from xetile_jit.target.targets import get_target

TILE = dict(BM=256, BN=256, sg_layout=[8, 4], sg_data=[32, 64])
SIZE = 512
# keys: Target.dpas's (MLIR type names; "tf32": f32 arrays, tile_mma input_precision "tf32")
DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "i8": np.int8, "tf32": np.float32}
K_STEP = {"f16": 32, "bf16": 32, "i8": 64, "tf32": 16}  # two DPAS depths (16-bit K 16, 8-bit K 32, tf32 K 8)
ACCUMULATORS = {"i8": xetile.int32}  # tile_mma's accumulator for 8-bit operands; f32 for the others
COMBOS = (("xe-hpc", "spirv"), ("xe-hpc", "legacy"), ("xe2", "spirv"), ("xe3", "spirv"))
FUSED = {"app2.2": None, "fa-hd64": 64, "fa-hd128": 128}  # the fused kernels' rows: name -> attention head dim
# (dtype, A inst_data, prefetch_distance): the last f16 row prefetches the A and B tiles two K steps ahead
VARIANTS = (("f16", None, 0), ("f16", [32, 16], 0), ("bf16", None, 0), ("i8", None, 0), ("tf32", None, 0),
            ("f16", None, 2))


@dataclass(frozen=True)
class Minimum:
    dpas: int
    loads: int
    fewest: int = 0  # the fewest legal load messages (module docstring); `loads` when 0

    def __post_init__(self):
        object.__setattr__(self, "fewest", self.fewest or self.loads)


def minimum(target, dtype: str, m: int, n: int, k: int) -> Minimum:
    """The least a subgroup's m x n x k step of C += A @ B takes on `target`: m/dm * n/dn * k/dk DPAS of the
    target's shape for `dtype`, and the fewest 2D block loads covering A (m x k) and B (k x n, VNNI-transformed, so
    a B row is as wide in bytes as in memory). A load covers at most `max_load_rows` rows and `max_width_bytes`
    bytes of a row (width x array length); e.g. xe-hpc f16: A 32x32 is 1 message (32 rows x 16 cols x 2 blocks),
    B 32x64 is 2, 32 DPAS of 8x16x16."""
    return Minimum(dpas(target, dtype, m, n, k), messages(target, dtype, m, k) + messages(target, dtype, k, n))


def dpas(target, dtype: str, m: int, n: int, k: int) -> int:
    """The DPAS of `target`'s shape for `dtype` an m x n x k product takes."""
    dm, dn, dk = target.dpas[dtype]
    return m // dm * (n // dn) * (k // dk)


def messages(target, dtype: str, rows: int, cols: int, transposed: bool = False, dpas_ready: bool = True) -> int:
    """The fewest 2D block loads of a rows x cols `dtype` block in memory (transposed: d32 transposed messages, of
    one row a lane as DPAS takes them when `dpas_ready`: module docstring)."""
    io, size = target.block_io, np.dtype(DTYPES[dtype]).itemsize
    width = io.max_transpose_width_bytes if transposed else io.max_width_bytes
    height = target.subgroup_size if transposed and dpas_ready else io.max_load_rows
    return math.ceil(rows / height) * math.ceil(cols * size / width)


def fused_minimum(target, kernel: str) -> Minimum:
    """The least one main-loop iteration of a subgroup of a FUSED kernel takes (module docstring)."""
    if kernel == "app2.2":  # C 16x32 += A 16x32 @ (B^T 32x32)^T
        products, plain, transposed = dpas(target, "f16", 16, 32, 32), messages(target, "f16", 16, 32), (32, 32)
    else:
        d = FUSED[kernel]  # S 8x32 = Q 8xD @ K^T; O 8xD += P 8x32 @ V 32xD
        products = dpas(target, "f16", 8, 32, d) + dpas(target, "f16", 8, d, 32)
        plain, transposed = messages(target, "f16", 32, d), (32, d)
    return Minimum(products, plain + messages(target, "f16", *transposed, transposed=True),
                   plain + messages(target, "f16", *transposed, transposed=True, dpas_ready=False))


def compile_fused(kernel: str, target: str, abi: str):
    """A FUSED kernel compiled for `target` with the builtin ABI `abi`, in its tutorial's config."""
    with mock.patch.dict(os.environ, {"XETILE_XE_ABI": abi}):
        if kernel == "app2.2":
            t = load_module("tutorial_gemm_bias_reduce", "tutorials/07-gemm-bias-reduce.py")
            a = np.zeros((256, 128), np.float16)
            return t.gemm_bias_reduce.warmup(a, a, np.zeros((1, 256), np.float32), np.zeros((256, 1), np.float32),
                                             128, BM=128, BN=128, BK=32, L=t.layouts(128, 128, 32), target=target)
        t = load_module("tutorial_attention", "tutorials/06-fused-attention.py")
        q = np.zeros((1, 2, 1000, FUSED[kernel]), np.float16)
        args, options = t.launch_arguments(q, q, q, q, True, 32, 32)
        return t.attention_kernel.warmup(*args, **options, target=target)


def compile_isa(gemm, target: str, abi: str, dtype: str, inst_a, prefetch: int = 0):
    """The GEMM compiled for `target` with the builtin ABI `abi` (XETILE_XE_ABI), prefetching `prefetch` K steps
    ahead (the prefetch_distance option; 0: none)."""
    a, b = (np.zeros((SIZE, SIZE), DTYPES[dtype]) for _ in range(2))
    acc = ACCUMULATORS.get(dtype, xetile.float32)
    c = np.zeros((SIZE, SIZE), acc.np_dtype)
    la = None if inst_a is None else xetile.Layout(TILE["sg_layout"], [TILE["sg_data"][0], K_STEP[dtype]],
                                                   inst_data=inst_a)
    with mock.patch.dict(os.environ, {"XETILE_XE_ABI": abi}):
        kernel = gemm.warmup(a, b, c, SIZE, SIZE, SIZE, LA=la, BK=K_STEP[dtype], ACC=acc, target=target,
                             PRECISION="tf32" if dtype == "tf32" else "ieee", prefetch_distance=prefetch, **TILE)
    return kernel


def row(gemm, target: str, abi: str, dtype: str, inst_a, prefetch: int = 0) -> dict:
    """One GEMM row: the main loop's counts per K step beside `minimum()`, or `skipped` with the reason."""
    least = minimum(get_target(target, abi), dtype, TILE["sg_data"][0], TILE["sg_data"][1], K_STEP[dtype])
    return measured({"target": target, "abi": abi, "kernel": "gemm", "dtype": dtype, "inst_a": inst_a,
                     "prefetch_distance": prefetch}, least,
                    lambda: compile_isa(gemm, target, abi, dtype, inst_a, prefetch))


def fused_row(kernel: str, target: str, abi: str) -> dict:
    """One FUSED kernel's row: its main loop's counts per iteration beside `fused_minimum()`."""
    return measured({"target": target, "abi": abi, "kernel": kernel, "dtype": "f16", "inst_a": None,
                     "prefetch_distance": 0}, fused_minimum(get_target(target, abi), kernel),
                    lambda: compile_fused(kernel, target, abi))


def measured(result: dict, least: Minimum, build) -> dict:
    """`result` with the main loop's counts of the kernel `build()` compiles beside `least`, its GRFs and spilled
    bytes (None where the compiler does not say), or `skipped` with the reason."""
    result |= {"min_dpas": least.dpas, "min_loads": least.loads, "fewest_loads": least.fewest}
    try:
        kernel = build()
    except (NotImplementedError, xetile.CompilationError) as error:
        return result | {"skipped": f"{type(error).__name__}: {str(error).splitlines()[0]}"}
    isa, options, stats = kernel.asm["isa"], kernel.build_options, json.loads(kernel.asm["isa_stats"])
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    unroll = loop.dpas // least.dpas if loop.dpas >= least.dpas and loop.dpas % least.dpas == 0 else 1
    kinds = Counter(f"{m.data}:{m.grfs}" for m in block_messages(isa) if m.kind == "load")
    return result | {
        "build_options": options, "unroll": unroll, "loop": asdict(loop),
        "dpas": loop.dpas / unroll, "loads": loop.loads / unroll,
        "load_kinds": " ".join(sorted(kinds)), "prefetches": loop.prefetches / unroll, "other": loop.other / unroll,
        "other_per_dpas": loop.other_per_dpas, "scratch": "scratch" in isa or stats["kernel"]["scratch"] > 0,
        "grf_count": stats["grf_count"], "spill_bytes": stats["spill_bytes"]}


HEADER = (f"{'target':<7} {'abi':<6} {'kernel':<8} {'dtype':<5} {'A inst':<8} {'pf':>2} {'unroll':>6} {'dpas':>5} "
          f"{'min':>4} {'loads':>6} {'min':>4} {'fewest':>6} {'load data:GRFs (kernel)':<24} {'pref':>5} {'other':>6} {'oth/dpas':>8} "
          f"{'GRFs':>4} {'spill':>6}")


def format_row(r: dict) -> str:
    inst = "x".join(map(str, r["inst_a"])) if r["inst_a"] else "default"
    head = f"{r['target']:<7} {r['abi']:<6} {r['kernel']:<8} {r['dtype']:<5} {inst:<8} {r['prefetch_distance']:>2}"
    if "skipped" in r:
        return (f"{head} {'-':>6} {'-':>5} {r['min_dpas']:>4} {'-':>6} {r['min_loads']:>4} {r['fewest_loads']:>6} "
                f"skipped: {r['skipped']}")
    spill = ("yes" if r["scratch"] else "no") if r["spill_bytes"] is None else f"{r['spill_bytes']} B"
    return (f"{head} {r['unroll']:>6} {r['dpas']:>5g} {r['min_dpas']:>4} {r['loads']:>6g} {r['min_loads']:>4} "
            f"{r['fewest_loads']:>6} "
            f"{r['load_kinds']:<24} {r['prefetches']:>5g} {r['other']:>6g} {r['other_per_dpas']:>8.2f} "
            f"{r['grf_count']:>4} {spill:>6}")


def plot(rows, path: pathlib.Path) -> None:
    import matplotlib.pyplot as plt
    built = [r for r in rows if "skipped" not in r]
    labels = [f"{r['target']} {r['abi']} {r['kernel']} {r['dtype']} {'x'.join(map(str, r['inst_a'] or ['default']))}"
              + (f" pf{r['prefetch_distance']}" if r["prefetch_distance"] else "") for r in built]
    x = np.arange(len(built))
    fig, (loads, other) = plt.subplots(1, 2, figsize=(11, 4))
    loads.bar(x - 0.2, [r["loads"] for r in built], 0.4, label="2D loads per K step (iteration)")
    loads.bar(x + 0.2, [r["min_loads"] for r in built], 0.4, label="minimum")
    other.bar(x, [r["other_per_dpas"] for r in built], 0.6, label="other instructions per dpas")
    other.axhline(1, color="k", linewidth=0.8, label="target: 1")
    for ax in (loads, other):
        ax.set_xticks(x, labels, rotation=60, ha="right", fontsize=7)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=sorted({t for t, _ in COMBOS}))
    parser.add_argument("--json", type=pathlib.Path)
    parser.add_argument("--png", type=pathlib.Path)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))  # test_passes imports the tests' conftest helpers
    gemm = load_module("test_passes", "tests/test_passes.py").gemm
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XETILE_CACHE_DIR"] = cache
        print("main loop per K step of a subgroup (gemm: 32x64 C tile; fused kernels: one iteration); "
              "min = minimum() (transposed loads as DPAS takes them), fewest = legal messages; other = non-dpas, "
              "non-send; GRFs: register file per thread")
        print(HEADER)
        for target, abi in (combo for combo in COMBOS if combo[0] in args.targets):
            if not ocloc.available(get_target(target, abi)):
                print(f"{target:<7} {abi:<6} skipped: no GPU compiler for this ABI is installed")
                continue
            for dtype, inst_a, prefetch in VARIANTS:
                rows.append(row(gemm, target, abi, dtype, inst_a, prefetch))
                print(format_row(rows[-1]), flush=True)
            for kernel in FUSED:
                rows.append(fused_row(kernel, target, abi))
                print(format_row(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if args.png and find_spec("matplotlib") is None:
        print("matplotlib is not installed: no PNG written")
    elif args.png:
        plot(rows, args.png)


if __name__ == "__main__":
    main()
