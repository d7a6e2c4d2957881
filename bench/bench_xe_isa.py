"""The main loops of the tutorial GEMM, RFC Appendix 2.2 and flash attention as Intel's GPU compiler builds them,
per Xe target and builtin ABI, beside the minimum.

    python bench/bench_xe_isa.py [--targets xe-hpc xe2 xe3] [--peer mlir] [--json out.json] [--png out.png]

Nothing runs on a GPU: each row compiles the kernel (`warmup`) for the target and reads the ISA disassembly with
xetile_jit.toolchain.isa_stats. The kernel is tests/transforms/test_passes.py's `gemm`, the tutorial's kernel with
optional per-tile layouts (the tutorial's own kernel takes none): with LA=None it is the tutorial kernel, with
A inst_data [32, 16] the A tile is cut into 32x16 blocks. Tile: 256x256 per workgroup, sg_layout [8, 4],
sg_data [32, 64] (a subgroup's C is 32x64), K step 32 (64 for 8-bit, accumulated in i32; 16 for tf32: f32 inputs
with input_precision "tf32", whose 32x64 accumulator, A and B of a K step of 32 would not fit the 256 registers;
f8E4M3FN and f8E5M2: FP8 A and B, up-converted to f16 in registers after their loads and multiplied on f16 DPAS, so
their `other` less the f16 row's is the conversion's cost per K step);
M = N = K = 512 zero arrays. Column `pf`: the prefetch_distance option (one f16 row prefetches the A and B tiles two
K steps ahead: its `pref` column counts the prefetch messages per K step; in the cooperative layout each byte of a
K step's A and B tiles is prefetched once a workgroup: (16 + 16 KiB) / (32 subgroups x 512-byte messages) = 2).
Column `K`: "runtime" is the kernel's K argument, "const" the same kernel with K a constexpr of 4096 (at 512 Intel's
compiler unrolls the 16 K steps whole, leaving no loop to count), arrays 512x4096 and 4096x512.
Row "app2.1" is RFC Appendix 2.1 as written (tests/transforms/test_passes.py's `prefetched_gemm`, same tile and
arrays): loads in #mp_a, #mp_b, prefetch tiles of its own in #mp_a_pfh [32, 1] and #mp_b_pfh [4, 8] (8x32 each),
3 K steps ahead, no prefetch_distance option.

The fused kernels are the tutorials' own, in their own configs, f16: "app2.2" is tutorials/07's GEMM + bias + row
reduce at 128x128x32 (32 subgroups: a subgroup's C is 16x32, its B^T 32x32 read by transposed loads), "app2.2-256"
the same at the RFC's own 256x256x32 (a subgroup's C 32x64, B^T 64x32); "fa-hd64" and
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

`--peer mlir` sets upstream MLIR 23's XeGPU pipeline beside each `spirv` row: the kernel's export (asm["mlir"], the
workgroup XeGPU level in upstream's syntax) goes through `mlir-opt --gpu-lower-to-xevm-pipeline` to a zebin for the
target's chip (toolchain/upstream_mlir.gpu_build), built by the same ocloc with our build's driver options (the GRF
mode), and its main loop is counted the same way. The peer table gives both per K step with the ratio ours/upstream
and each side's compile seconds (ours: the whole compile, tracing to the disassembled ISA, in a fresh cache;
upstream: mlir-opt with the ocloc build it runs, and the disassembly). A kernel the export cannot express is listed
with its NotImplementedError, one upstream's pipeline refuses (a chip it does not know, a construct it does not
lower) with mlir-opt's first error.
"""
import argparse
import json
import math
import os
import pathlib
import sys
import tempfile
import time
import types
from collections import Counter
from dataclasses import asdict, dataclass
from importlib.util import find_spec
from unittest import mock

import ml_dtypes
import numpy as np
from common import ROOT, load_module

import xetile_jit as xetile
from xetile_jit.toolchain import ocloc, upstream_mlir
from xetile_jit.toolchain.isa_stats import block_messages, innermost_loops, spills
from xetile_jit.target.targets import get_target

TILE = dict(BM=256, BN=256, sg_layout=[8, 4], sg_data=[32, 64])
SIZE = 512
CONSTEXPR_K = 4096  # the K of the rows with K a constexpr (module docstring)
# keys: Target.dpas's (MLIR type names; "tf32": f32 arrays, tile_mma input_precision "tf32")
DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "i8": np.int8, "tf32": np.float32,
          "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}
# two DPAS depths (16-bit K 16, 8-bit K 32, tf32 K 8; FP8 runs on f16 DPAS)
K_STEP = {"f16": 32, "bf16": 32, "i8": 64, "tf32": 16, "f8E4M3FN": 32, "f8E5M2": 32}
DPAS_KIND = {"f8E4M3FN": "f16", "f8E5M2": "f16"}  # FP8 operands are up-converted to f16 after their loads
ACCUMULATORS = {"i8": xetile.int32}  # tile_mma's accumulator for 8-bit operands; f32 for the others
COMBOS = (("xe-hpc", "spirv"), ("xe-hpc", "legacy"), ("xe2", "spirv"), ("xe3", "spirv"))
# the fused kernels' rows: name -> the tile's size (Appendix 2.2: BM = BN) or the attention head dim
FUSED = {"app2.2": 128, "app2.2-256": 256, "fa-hd64": 64, "fa-hd128": 128}
# (dtype, A inst_data, prefetch_distance, K a constexpr): the "pf" row prefetches A and B two K steps ahead
VARIANTS = (("f16", None, 0, False), ("f16", None, 0, True), ("f16", [32, 16], 0, False), ("bf16", None, 0, False),
            ("bf16", None, 0, True), ("i8", None, 0, False), ("tf32", None, 0, False), ("f16", None, 2, False),
            ("f8E4M3FN", None, 0, False), ("f8E5M2", None, 0, False))
PEERS = ("mlir",)  # --peer: upstream MLIR's XeGPU pipeline


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
    dm, dn, dk = target.dpas[DPAS_KIND.get(dtype, dtype)]
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
    if appendix_2_2(kernel):  # C (BM/8)x(BN/4) += A (BM/8)x32 @ (B^T (BN/4)x32)^T; 128: C 16x32, 256: C 32x64
        m, n = FUSED[kernel] // 8, FUSED[kernel] // 4
        products, plain, transposed = dpas(target, "f16", m, n, 32), messages(target, "f16", m, 32), (n, 32)
    else:
        d = FUSED[kernel]  # S 8x32 = Q 8xD @ K^T; O 8xD += P 8x32 @ V 32xD
        products = dpas(target, "f16", 8, 32, d) + dpas(target, "f16", 8, d, 32)
        plain, transposed = messages(target, "f16", 32, d), (32, d)
    return Minimum(products, plain + messages(target, "f16", *transposed, transposed=True),
                   plain + messages(target, "f16", *transposed, transposed=True, dpas_ready=False))


def appendix_2_2(kernel: str) -> bool:
    return kernel.startswith("app2.2")


def compile_fused(kernel: str, target: str, abi: str):
    """A FUSED kernel compiled for `target` with the builtin ABI `abi`, in its tutorial's config."""
    with mock.patch.dict(os.environ, {"XETILE_XE_ABI": abi}):
        if appendix_2_2(kernel):
            t = load_module("tutorial_gemm_bias_reduce", "tutorials/07-gemm-bias-reduce.py")
            size = FUSED[kernel]
            a = np.zeros((2 * size, 128), np.float16)
            return t.gemm_bias_reduce.warmup(a, a, np.zeros((1, 2 * size), np.float32),
                                             np.zeros((2 * size, 1), np.float32), 128, BM=size, BN=size, BK=32,
                                             L=t.layouts(size, size, 32), target=target)
        t = load_module("tutorial_attention", "tutorials/06-fused-attention.py")
        q = np.zeros((1, 2, 1000, FUSED[kernel]), np.float16)
        args, options = t.launch_arguments(q, q, q, q, True, 32, 32)
        return t.attention_kernel.warmup(*args, **options, target=target)


def with_constexpr(kernel, name: str):
    """`kernel` with its parameter `name` a constexpr: the same source, specialized on the value."""
    fn = kernel.fn
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__annotations__ = {**fn.__annotations__, name: xetile.constexpr}
    copy.__kwdefaults__ = fn.__kwdefaults__
    return xetile.kernel(copy)


def compile_isa(gemm, target: str, abi: str, dtype: str, inst_a, prefetch: int = 0, constexpr_k: bool = False):
    """The GEMM compiled for `target` with the builtin ABI `abi` (XETILE_XE_ABI), prefetching `prefetch` K steps
    ahead (the prefetch_distance option; 0: none); with `constexpr_k`, K a constexpr of CONSTEXPR_K."""
    k = CONSTEXPR_K if constexpr_k else SIZE
    a, b = np.zeros((SIZE, k), DTYPES[dtype]), np.zeros((k, SIZE), DTYPES[dtype])
    acc = ACCUMULATORS.get(dtype, xetile.float32)
    c = np.zeros((SIZE, SIZE), acc.np_dtype)
    la = None if inst_a is None else xetile.Layout(TILE["sg_layout"], [TILE["sg_data"][0], K_STEP[dtype]],
                                                   inst_data=inst_a)
    kernel = with_constexpr(gemm, "K") if constexpr_k else gemm
    with mock.patch.dict(os.environ, {"XETILE_XE_ABI": abi}):
        return kernel.warmup(a, b, c, SIZE, SIZE, k, LA=la, BK=K_STEP[dtype], ACC=acc, target=target,
                             PRECISION="tf32" if dtype == "tf32" else "ieee", prefetch_distance=prefetch, **TILE)


def row(gemm, target: str, abi: str, dtype: str, inst_a, prefetch: int = 0, constexpr_k: bool = False,
        peer: str | None = None) -> dict:
    """One GEMM row: the main loop's counts per K step beside `minimum()` (and `peer`'s: module docstring), or
    `skipped` with the reason."""
    least = minimum(get_target(target, abi), dtype, TILE["sg_data"][0], TILE["sg_data"][1], K_STEP[dtype])
    return measured({"target": target, "abi": abi, "kernel": "gemm", "dtype": dtype, "inst_a": inst_a,
                     "prefetch_distance": prefetch, "k": "const" if constexpr_k else "runtime"}, least,
                    lambda: compile_isa(gemm, target, abi, dtype, inst_a, prefetch, constexpr_k), peer)


def appendix_row(passes, target: str, abi: str, peer: str | None = None) -> dict:
    """RFC Appendix 2.1's row (module docstring): its main loop's counts per K step beside the GEMM's `minimum()`
    (and `peer`'s)."""
    least = minimum(get_target(target, abi), "f16", TILE["sg_data"][0], TILE["sg_data"][1], K_STEP["f16"])
    a = np.zeros((SIZE, SIZE), np.float16)
    c = np.zeros((SIZE, SIZE), np.float32)

    def build():
        with mock.patch.dict(os.environ, {"XETILE_XE_ABI": abi}):
            return passes.prefetched_gemm.warmup(a, a, c, SIZE, SIZE, SIZE, BK=K_STEP["f16"], **passes.APPENDIX_2_1,
                                                 target=target, **TILE)
    return measured({"target": target, "abi": abi, "kernel": "app2.1", "dtype": "f16", "inst_a": None,
                     "prefetch_distance": 0, "k": "runtime"}, least, build, peer)


def fused_row(kernel: str, target: str, abi: str, peer: str | None = None) -> dict:
    """One FUSED kernel's row: its main loop's counts per iteration beside `fused_minimum()` (and `peer`'s)."""
    return measured({"target": target, "abi": abi, "kernel": kernel, "dtype": "f16", "inst_a": None,
                     "prefetch_distance": 0, "k": "runtime"}, fused_minimum(get_target(target, abi), kernel),
                    lambda: compile_fused(kernel, target, abi), peer)


def measured(result: dict, least: Minimum, build, peer: str | None = None) -> dict:
    """`result` with the main loop's counts of the kernel `build()` compiles beside `least`, its GRFs and spilled
    bytes (None where the compiler does not say), its shared local memory a workgroup and compile seconds, or
    `skipped` with the reason; with `peer`
    ("mlir"), "peer" holds the same counts of upstream MLIR's build of the kernel (`upstream_figures`)."""
    result |= {"min_dpas": least.dpas, "min_loads": least.loads, "fewest_loads": least.fewest}
    start = time.perf_counter()
    try:
        kernel = build()
    except (NotImplementedError, xetile.CompilationError) as error:  # no kernel to export either
        return result | {"skipped": reason(error)} | ({"peer": {peer: {"skipped": "ours skipped"}}} if peer else {})
    seconds = time.perf_counter() - start
    stats = json.loads(kernel.asm["isa_stats"])
    result |= figures(kernel.asm["isa"], stats["grf_count"], stats["spill_bytes"], least) | {
        "slm_bytes": stats["slm_bytes"], "build_options": kernel.build_options, "compile_seconds": seconds}
    if peer is not None:
        result["peer"] = {peer: upstream_figures(kernel, get_target(result["target"], result["abi"]), least)}
    return result


def figures(isa: str, grf_count: int, spill_bytes: int | None, least: Minimum) -> dict:
    """The counts per K step of the main loop of `isa` (the innermost loop with the most dpas; Intel's compiler's
    unrolling divided out against `least`), its load kinds, GRFs and spilled bytes."""
    loop = max(innermost_loops(isa), key=lambda c: c.dpas)
    unroll = loop.dpas // least.dpas if loop.dpas >= least.dpas and loop.dpas % least.dpas == 0 else 1
    kinds = Counter(f"{m.data}:{m.grfs}" for m in block_messages(isa) if m.kind == "load")
    return {"unroll": unroll, "loop": asdict(loop), "dpas": loop.dpas / unroll, "loads": loop.loads / unroll,
            "load_kinds": " ".join(sorted(kinds)), "prefetches": loop.prefetches / unroll,
            "other": loop.other / unroll, "other_per_dpas": loop.other_per_dpas, "scratch": spills(isa) > 0,
            "grf_count": grf_count, "spill_bytes": spill_bytes}


def upstream_figures(kernel, target, least: Minimum) -> dict:
    """Upstream MLIR's build of `kernel`'s export for `target` with our build's driver options (the same GRF mode):
    `figures` and its compile seconds, or `skipped` with the export's NotImplementedError or mlir-opt's first
    error."""
    try:
        upstream = upstream_mlir.gpu_build(kernel.asm["mlir"], target, kernel.build_options)
    except NotImplementedError as error:
        return {"skipped": reason(error)}
    except upstream_mlir.MlirError as error:
        return {"skipped": f"mlir-opt: {error.reason}"}
    build = upstream.build
    return figures(build.isa, build.grf_count, build.spill_bytes, least) | {"compile_seconds": upstream.seconds}


def reason(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0]}"


HEADER = (f"{'target':<7} {'abi':<6} {'kernel':<10} {'dtype':<5} {'A inst':<8} {'pf':>2} {'K':<7} {'unroll':>6} "
          f"{'dpas':>5} {'min':>4} {'loads':>6} {'min':>4} {'fewest':>6} {'load data:GRFs (kernel)':<24} {'pref':>5} "
          f"{'other':>6} {'oth/dpas':>8} {'GRFs':>4} {'spill':>6} {'SLM B':>6}")


def label(r: dict) -> str:
    """A row's kernel: target, ABI, kernel, dtype, A inst_data, prefetch distance, K."""
    inst = "x".join(map(str, r["inst_a"])) if r["inst_a"] else "default"
    return (f"{r['target']:<7} {r['abi']:<6} {r['kernel']:<10} {r['dtype']:<5} {inst:<8} {r['prefetch_distance']:>2} "
            f"{r['k']:<7}")


def format_row(r: dict) -> str:
    head = label(r)
    if "skipped" in r:
        return (f"{head} {'-':>6} {'-':>5} {r['min_dpas']:>4} {'-':>6} {r['min_loads']:>4} {r['fewest_loads']:>6} "
                f"skipped: {r['skipped']}")
    spill = ("yes" if r["scratch"] else "no") if r["spill_bytes"] is None else f"{r['spill_bytes']} B"
    return (f"{head} {r['unroll']:>6} {r['dpas']:>5g} {r['min_dpas']:>4} {r['loads']:>6g} {r['min_loads']:>4} "
            f"{r['fewest_loads']:>6} "
            f"{r['load_kinds']:<24} {r['prefetches']:>5g} {r['other']:>6g} {r['other_per_dpas']:>8.2f} "
            f"{r['grf_count']:>4} {spill:>6} {r['slm_bytes']:>6}")


PEER_COLUMNS = {"dpas": "dpas", "loads": "loads", "prefetches": "pref", "other": "other", "spill_bytes": "spill B"}
PEER_HEADER = (f"{'target':<7} {'abi':<6} {'kernel':<10} {'dtype':<5} {'A inst':<8} {'pf':>2} {'K':<7} {'chip':<4} "
               + " ".join(f"{name:>17}" for name in PEER_COLUMNS.values()) + f" {'compile s':>11}")


def side_by_side(ours: float, theirs: float) -> str:
    """`ours/theirs ratio` (the ratio "-" when both are 0, "inf" when only upstream's is)."""
    ratio = "-" if ours == theirs == 0 else "inf" if theirs == 0 else f"{ours / theirs:.2f}"
    return f"{ours:.4g}/{theirs:.4g} {ratio}"


def format_peer_row(r: dict, peer: str) -> str:
    """A row's counts per K step beside `peer`'s, `ours/upstream ratio`, and each side's compile seconds."""
    head = f"{label(r)} {get_target(r['target'], r['abi']).ocloc_device:<4}"
    theirs = r["peer"][peer]
    if "skipped" in r or "skipped" in theirs:
        return f"{head} skipped ({'ours' if 'skipped' in r else 'upstream'}): {r.get('skipped') or theirs['skipped']}"
    cells = " ".join(f"{side_by_side(r[column], theirs[column]):>17}" for column in PEER_COLUMNS)
    return f"{head} {cells} {r['compile_seconds']:>5.2f}/{theirs['compile_seconds']:<5.2f}"


def print_peer_table(rows: list[dict], peer: str) -> None:
    """The rows with a `peer` side, and the targets whose chip upstream's pipeline built no kernel for."""
    compared = [r for r in rows if "peer" in r]
    print(f"\nours/upstream MLIR 23 ({peer}) per K step of the main loop (same ocloc, same driver options); "
          "compile s: ours/upstream")
    print(PEER_HEADER)
    for r in compared:
        print(format_peer_row(r, peer))
    for target in dict.fromkeys(r["target"] for r in compared):
        builds = [r["peer"][peer] for r in compared if r["target"] == target]
        if all("skipped" in theirs for theirs in builds):
            print(f"{target}: upstream's pipeline built no kernel for chip {get_target(target).ocloc_device} "
                  f"({builds[0]['skipped']})")


def plot(rows, path: pathlib.Path, peer: str | None = None) -> None:
    import matplotlib.pyplot as plt
    built = [r for r in rows if "skipped" not in r]
    labels = [" ".join(label(r).split()) for r in built]
    compared = [(name, r, r["peer"][peer]) for name, r in zip(labels, built)
                if "skipped" not in r.get("peer", {}).get(peer, {"skipped": "no peer"})]
    fig, axes = plt.subplots(1, 3 if compared else 2, figsize=(16 if compared else 11, 4))
    x = np.arange(len(built))
    axes[0].bar(x - 0.2, [r["loads"] for r in built], 0.4, label="2D loads per K step (iteration)")
    axes[0].bar(x + 0.2, [r["min_loads"] for r in built], 0.4, label="minimum")
    axes[1].bar(x, [r["other_per_dpas"] for r in built], 0.6, label="other instructions per dpas")
    axes[1].axhline(1, color="k", linewidth=0.8, label="target: 1")
    ticks = [(axes[0], labels), (axes[1], labels)]
    if compared:
        xp = np.arange(len(compared))
        axes[2].bar(xp - 0.2, [r["other"] for _, r, _ in compared], 0.4, label="other per K step: ours")
        axes[2].bar(xp + 0.2, [theirs["other"] for _, _, theirs in compared], 0.4, label=f"upstream MLIR ({peer})")
        ticks.append((axes[2], [name for name, _, _ in compared]))
    for ax, names in ticks:
        ax.set_xticks(np.arange(len(names)), names, rotation=60, ha="right", fontsize=7)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=sorted({t for t, _ in COMBOS}))
    parser.add_argument("--peer", choices=PEERS, help="set another compiler's build of each spirv row beside ours")
    parser.add_argument("--json", type=pathlib.Path)
    parser.add_argument("--png", type=pathlib.Path)
    args = parser.parse_args()
    if args.peer and upstream_mlir.mlir_opt() is None:
        parser.error("--peer mlir needs mlir-opt 23 (python -m xetile_jit install-gpu-compiler --with-mlir)")
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests/transforms")]  # test_passes imports the tests' conftest
    passes = load_module("test_passes", "tests/transforms/test_passes.py")
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XETILE_CACHE_DIR"] = cache
        print("main loop per K step of a subgroup (gemm: 32x64 C tile; fused kernels: one iteration); "
              "min = minimum() (transposed loads as DPAS takes them), fewest = legal messages; other = non-dpas, "
              "non-send; GRFs: register file per thread; SLM B: shared local memory a workgroup")
        print(HEADER)
        for target, abi in (combo for combo in COMBOS if combo[0] in args.targets):
            if not ocloc.available(get_target(target, abi)):
                print(f"{target:<7} {abi:<6} skipped: no GPU compiler for this ABI is installed")
                continue
            peer = args.peer if abi == "spirv" else None
            for dtype, inst_a, prefetch, constexpr_k in VARIANTS:
                rows.append(row(passes.gemm, target, abi, dtype, inst_a, prefetch, constexpr_k, peer))
                print(format_row(rows[-1]), flush=True)
            rows.append(appendix_row(passes, target, abi, peer))
            print(format_row(rows[-1]), flush=True)
            for kernel in FUSED:
                rows.append(fused_row(kernel, target, abi, peer))
                print(format_row(rows[-1]), flush=True)
    if args.peer:
        print_peer_table(rows, args.peer)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if args.png and find_spec("matplotlib") is None:
        print("matplotlib is not installed: no PNG written")
    elif args.png:
        plot(rows, args.png, args.peer)


if __name__ == "__main__":
    main()
