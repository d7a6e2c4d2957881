"""The tutorial GEMM's main loop as Intel's GPU compiler builds it, per Xe target and builtin ABI, beside the minimum.

    python bench/bench_xe_isa.py [--targets xe-hpc xe2 xe3] [--json out.json] [--png out.png]

Nothing runs on a GPU: each row compiles the kernel (`warmup`) for the target and reads the ISA disassembly with
xetile_jit.backend.isa_stats. The kernel is tests/test_passes.py's `gemm`, the tutorial's kernel with optional
per-tile layouts (the tutorial's own kernel takes none): with LA=None it is the tutorial kernel, with
A inst_data [32, 16] the A tile is cut into 32x16 blocks. Tile: 256x256 per workgroup, sg_layout [8, 4],
sg_data [32, 64] (a subgroup's C is 32x64), K step 32 (64 for 8-bit, accumulated in i32; 16 for tf32: f32 inputs
with input_precision "tf32", whose 32x64 accumulator, A and B of a K step of 32 would not fit the 256 registers);
M = N = K = 512 zero arrays.

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
from xetile_jit.backend import ocloc
from xetile_jit.backend.isa_stats import block_messages, innermost_loops
from xetile_jit.backend.targets import get_target

TILE = dict(BM=256, BN=256, sg_layout=[8, 4], sg_data=[32, 64])
SIZE = 512
# keys: Target.dpas's (MLIR type names; "tf32": f32 arrays, tile_mma input_precision "tf32")
DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "i8": np.int8, "tf32": np.float32}
K_STEP = {"f16": 32, "bf16": 32, "i8": 64, "tf32": 16}  # two DPAS depths (16-bit K 16, 8-bit K 32, tf32 K 8)
ACCUMULATORS = {"i8": xetile.int32}  # tile_mma's accumulator for 8-bit operands; f32 for the others
COMBOS = (("xe-hpc", "spirv"), ("xe-hpc", "legacy"), ("xe2", "spirv"), ("xe3", "spirv"))
VARIANTS = (("f16", None), ("f16", [32, 16]), ("bf16", None), ("i8", None), ("tf32", None))  # (dtype, A inst_data)


@dataclass(frozen=True)
class Minimum:
    dpas: int
    loads: int


def minimum(target, dtype: str, m: int, n: int, k: int) -> Minimum:
    """The least a subgroup's m x n x k step of C += A @ B takes on `target`: m/dm * n/dn * k/dk DPAS of the
    target's shape for `dtype`, and the fewest 2D block loads covering A (m x k) and B (k x n, VNNI-transformed, so
    a B row is as wide in bytes as in memory). A load covers at most `max_load_rows` rows and `max_width_bytes`
    bytes of a row (width x array length); e.g. xe-hpc f16: A 32x32 is 1 message (32 rows x 16 cols x 2 blocks),
    B 32x64 is 2, 32 DPAS of 8x16x16."""
    dm, dn, dk = target.dpas[dtype]
    io, size = target.block_io, np.dtype(DTYPES[dtype]).itemsize

    def messages(rows: int, cols: int) -> int:
        return math.ceil(rows / io.max_load_rows) * math.ceil(cols * size / io.max_width_bytes)

    return Minimum(m // dm * (n // dn) * (k // dk), messages(m, k) + messages(k, n))


def compile_isa(gemm, target: str, abi: str, dtype: str, inst_a):
    """The kernel's ISA text and driver options for `target` with the builtin ABI `abi` (XETILE_XE_ABI)."""
    a, b = (np.zeros((SIZE, SIZE), DTYPES[dtype]) for _ in range(2))
    acc = ACCUMULATORS.get(dtype, xetile.float32)
    c = np.zeros((SIZE, SIZE), acc.np_dtype)
    la = None if inst_a is None else xetile.Layout(TILE["sg_layout"], [TILE["sg_data"][0], K_STEP[dtype]],
                                                   inst_data=inst_a)
    with mock.patch.dict(os.environ, {"XETILE_XE_ABI": abi}):
        kernel = gemm.warmup(a, b, c, SIZE, SIZE, SIZE, LA=la, BK=K_STEP[dtype], ACC=acc, target=target,
                             PRECISION="tf32" if dtype == "tf32" else "ieee", **TILE)
    return kernel.asm["isa"], kernel.build_options


def row(gemm, target: str, abi: str, dtype: str, inst_a) -> dict:
    """One table row: the main loop's counts per K step beside `minimum()`, or `skipped` with the reason."""
    least = minimum(get_target(target, abi), dtype, TILE["sg_data"][0], TILE["sg_data"][1], K_STEP[dtype])
    result = {"target": target, "abi": abi, "dtype": dtype, "inst_a": inst_a, "min_dpas": least.dpas,
              "min_loads": least.loads}
    try:
        isa, options = compile_isa(gemm, target, abi, dtype, inst_a)
    except (NotImplementedError, xetile.CompilationError) as error:
        return result | {"skipped": f"{type(error).__name__}: {str(error).splitlines()[0]}"}
    loop = max(innermost_loops(isa), key=lambda counts: counts.dpas)
    unroll = loop.dpas // least.dpas if loop.dpas >= least.dpas and loop.dpas % least.dpas == 0 else 1
    kinds = Counter(f"{m.data}:{m.grfs}" for m in block_messages(isa) if m.kind == "load")
    return result | {
        "build_options": options, "unroll": unroll, "loop": asdict(loop),
        "dpas": loop.dpas / unroll, "loads": loop.loads / unroll,
        "load_kinds": " ".join(sorted(kinds)), "prefetches": loop.prefetches / unroll, "other": loop.other / unroll,
        "other_per_dpas": loop.other_per_dpas, "scratch": "scratch" in isa}


HEADER = (f"{'target':<7} {'abi':<6} {'dtype':<5} {'A inst':<8} {'unroll':>6} {'dpas':>5} {'min':>4} {'loads':>6} "
          f"{'min':>4} {'load data:GRFs (kernel)':<24} {'pref':>5} {'other':>6} {'oth/dpas':>8} {'spill':>5}")


def format_row(r: dict) -> str:
    inst = "x".join(map(str, r["inst_a"])) if r["inst_a"] else "default"
    head = f"{r['target']:<7} {r['abi']:<6} {r['dtype']:<5} {inst:<8}"
    if "skipped" in r:
        return f"{head} {'-':>6} {'-':>5} {r['min_dpas']:>4} {'-':>6} {r['min_loads']:>4} skipped: {r['skipped']}"
    return (f"{head} {r['unroll']:>6} {r['dpas']:>5g} {r['min_dpas']:>4} {r['loads']:>6g} {r['min_loads']:>4} "
            f"{r['load_kinds']:<24} {r['prefetches']:>5g} {r['other']:>6g} {r['other_per_dpas']:>8.2f} "
            f"{'yes' if r['scratch'] else 'no':>5}")


def plot(rows, path: pathlib.Path) -> None:
    import matplotlib.pyplot as plt
    built = [r for r in rows if "skipped" not in r]
    labels = [f"{r['target']} {r['abi']} {r['dtype']} {'x'.join(map(str, r['inst_a'] or ['default']))}"
              for r in built]
    x = np.arange(len(built))
    fig, (loads, other) = plt.subplots(1, 2, figsize=(11, 4))
    loads.bar(x - 0.2, [r["loads"] for r in built], 0.4, label="2D loads per K step")
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
        print("main loop per K step of a subgroup's 32x64 C tile; min = minimum(); other = non-dpas, non-send")
        print(HEADER)
        for target, abi in (combo for combo in COMBOS if combo[0] in args.targets):
            if not ocloc.available(get_target(target, abi)):
                print(f"{target:<7} {abi:<6} skipped: no GPU compiler for this ABI is installed")
                continue
            for dtype, inst_a in VARIANTS:
                rows.append(row(gemm, target, abi, dtype, inst_a))
                print(format_row(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if args.png and find_spec("matplotlib") is None:
        print("matplotlib is not installed: no PNG written")
    elif args.png:
        plot(rows, args.png)


if __name__ == "__main__":
    main()
