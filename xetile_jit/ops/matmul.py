"""`xetile.ops.matmul`: C = activation(A @ B + bias), the tutorial GEMM as an autotuned library op.

Inputs f16, bf16, f32 or int8 (both the same), any M, N, K, A and B row- or column-major (a tile reads an array
in its memory order, so `bt.T` needs no copy). Accumulation is f32 (int8: i32); C's dtype is `out_dtype`,
default the accumulator's. `bias` is a length-N vector or a (1, N) array, added in the accumulator's type;
`activation` is None, "relu", "gelu" (the tanh form) or "silu", the last two on float accumulators.
`input_precision` is `tile_mma`'s: "ieee" (exact f32 products) or, for f32 inputs, "tf32" (tf32 DPAS where the
target has it).

Tuned over transform.xegpu's knobs: the workgroup tile, its split between subgroups (sg_layout, sg_data, generated with
xetile.layouts: one piece per subgroup, made of whole DPAS C blocks), the K tile, the load blocks of A and B
(inst_data: the default, layout completion's largest messages, or A in 16x16 and B in 32x16 VNNI messages,
regrouped in registers) and the cooperative prefetch of the A and B tiles PREFETCH K steps ahead (the RFC Appendix
2.1 schedule: the prefetch tiles have layouts of their own, all subgroups sharing each tile), per M, N, K, dtypes,
memory orders, bias and activation. On targets whose prefetch is a no-op (the CPU ones) the prefetch configs are
pruned before timing: their code is the same as without; on the `cpu` target the load-block ones too, and on a CPU
device all but the few configs estimated fastest (cpu_estimate). On targets whose lanes gather a column-major
operand (the CPU ones, Target.column_major_gathers) a column-major A or B of a large enough GEMM is copied to
row-major first (row_major_operand). On a CPU device B of a GEMM of PANELS_FROM rows and PANEL_WORK multiply-adds or
more is copied into panels of PANEL_COLUMNS columns first (b_panels), a subgroup's K step of B then one run of
memory; a B of PANEL_COLUMNS columns or fewer is one panel as it is. On a CPU device a GEMM whose A and B outgrow
the last-level cache, or whose subgroups' panels outgrow a core's, sums over K in launches of 512 steps (k_chunks), C
carrying the sum from one to the next, where the arrays are in device memory and C is of the accumulator's type.
On a CPU device C of few rows (few_rows_limit: a batch of tokens through a layer) skips the tuner: B row-major goes
through few_rows_kernel (rank-1 updates of C's tile, B streamed a row at a time), column-major B (a torch Linear's
weight) through gemv_dot_kernel (each row of C as dot products); C of few columns (A times a vector) as the transposed
C of few rows; both multiply in the accumulator's type (f32 products for "tf32" too).
"""
from __future__ import annotations

import math

import numpy as np

from ..target.cpu_features import CpuFeatures
from ..target.targets import TARGETS
from ..language import dsl as xt
from ..jit.autotune import Config, autotune
from ..jit.kernel import kernel
from ..compiler.layout_space import layouts
from ..codegen.xe.dpas_emulation import whole_k_loops
from ..ir.attrs import Layout
from ..ir.types import COL_MAJOR, dtype_of_numpy, float32, int32
from ..runtime.args import array_layout, array_order, as_array, is_array, is_usm, transposed
from ..runtime.device import array_queue, select_device
from ..runtime.scratch import scratch
from ..runtime.torch_tensors import as_numpy_dtype, is_tensor, new_tensor

ACTIVATIONS = (None, "relu", "gelu", "silu")
GELU_C = 0.7978845608028654  # sqrt(2 / pi)
# (workgroup tile, piece of one subgroup, K tile, A's load blocks, B's load blocks, prefetch distances): the tutorial's
# 256x256 split in 32x64 pieces (its GPU split) and smaller ones; then tiles in 16x64 pieces
# (on the `cpu` target 138-190 GFLOP/s at 512-2048 f32, the smaller tiles ahead at 512); then 32x64 and
# 64x64 pieces with a K tile of 64, the fastest on the `cpu` target at 2048-4096 since its multiply-adds run in
# loops of 16 row sums (32x64: 0.99-1.16x oneMKL, 64x64: 1.12-1.25x, but 1.2 and 2.2 s of driver build a config
# against 0.5 for 16x64 pieces and K tile 32; docs/performance.md "CPU notes"). None is the default block (layout
# completion's).
SHAPES = (((256, 256), (32, 64), 32, (None, (16, 16)), (None, (32, 16)), (0, 3)),
          ((128, 256), (32, 64), 32, (None,), (None,), (0,)),
          ((256, 128), (32, 64), 32, (None,), (None,), (0,)),
          ((128, 128), (32, 32), 32, (None,), (None, (32, 16)), (0, 2)),
          ((64, 64), (16, 16), 16, (None,), (None,), (0,)),
          ((256, 256), (16, 64), 32, (None,), (None,), (0,)),
          ((128, 256), (16, 64), 32, (None,), (None,), (0,)),
          ((128, 128), (16, 64), 32, (None,), (None,), (0,)),
          ((64, 128), (16, 64), 32, (None,), (None,), (0,)),
          ((256, 256), (32, 64), 64, (None,), (None,), (0,)),
          ((256, 256), (64, 64), 64, (None,), (None,), (0,)),
          # C of few rows (a batch of tokens): a tile of 16 rows
          ((16, 256), (16, 64), 32, (None,), (None,), (0,)),
          # B in panels (b_panels): one subgroup across the tile's PANEL_COLUMNS columns
          ((256, 64), (32, 64), 32, (None,), (None,), (0,)),
          ((128, 64), (32, 64), 32, (None,), (None,), (0,)),
          ((256, 64), (16, 64), 32, (None,), (None,), (0,)),
          ((128, 64), (16, 64), 32, (None,), (None,), (0,)),
          ((256, 64), (32, 64), 64, (None,), (None,), (0,)),
          ((256, 64), (64, 64), 64, (None,), (None,), (0,)),
          # B of 32 or 16 columns as one panel: tiles no wider than B
          ((256, 32), (32, 32), 32, (None,), (None,), (0,)),
          ((128, 32), (32, 32), 32, (None,), (None,), (0,)),
          ((256, 16), (16, 16), 16, (None,), (None,), (0,)),
          ((128, 16), (16, 16), 16, (None,), (None,), (0,)))


def configs() -> list[Config]:
    """The search space: for each of SHAPES, the layouts of xetile.layouts that give each subgroup that piece, with
    each of its A and B load blocks and prefetch distances."""
    result = []
    for (bm, bn), piece, bk, a_blocks, b_blocks, distances in SHAPES:
        count = bm * bn // (piece[0] * piece[1])
        # the portable target's rules: built at import, before any device is chosen (each device's own rules
        # prune at the first launch)
        for sg_layout, sg_data in layouts([bm, bn], num_subgroups=count, target="cpu"):
            if list(sg_data) != list(piece) or [s * d for s, d in zip(sg_layout, sg_data)] != [bm, bn]:
                continue
            result += [Config(BM=bm, BN=bn, BK=bk, A_LAYOUT=operand_layout(sg_layout, [sg_data[0], bk], a_block),
                              B_LAYOUT=operand_layout(sg_layout, [bk, sg_data[1]], b_block), PREFETCH=distance,
                              PA=Layout([count, 1], [bm // count, bk]), PB=prefetch_b(count, bk, bn),
                              sg_layout=sg_layout, sg_data=sg_data)
                       for a_block in a_blocks for b_block in b_blocks for distance in distances]
    return result


def operand_layout(sg_layout, piece, block) -> Layout | None:
    """A tile_mma operand's tile layout with load block `block` (None: none given, the compiler's default): each
    subgroup reads the piece propagation from tile_mma gives it (A: its C rows and the whole K tile; B: the K tile
    and its C columns)."""
    return None if block is None else Layout(sg_layout, piece, inst_data=list(block))


def prefetch_b(count: int, bk: int, bn: int) -> Layout:
    """B's prefetch tile split between all `count` subgroups, rows first (RFC Appendix 2.1: [4, 8] for 32)."""
    rows = math.gcd(bk // 8, count)
    return Layout([rows, count // rows], [bk // rows, bn * rows // count])


# On a CPU device a config's time is about its waves of workgroups (the workgroups over the device's compute units,
# rounded up) times one workgroup's multiply-adds, K padded to the K tile, over its piece's speed: relative speeds
# (piece, K tile) from a 1024^3 f32 tuning on opencl:cpu, 13.1 ms for 64x64 pieces with K tile 64. That
# estimate put the fastest config first at 1, 128, 200x136x80, 256, 512 (f16), 1000, 1024, 2048, 16x4096x1024,
# 4096x64x1024, 64x64x4096 and 3000x3000x64 (docs/performance.md "CPU notes"), so tuning there times only the best
# estimates, at most CPU_TIMED and within CPU_WITHIN of the best: each config timed costs about 1.8 s of driver
# build and timing, and where the estimates of the second config on were 1.5x the first or more, that config ran
# 2.2x-2.8x slower (1x1x1, 64x64x4096), so one config is left and nothing is timed.
PIECE_SPEED = {((64, 64), 64): 1.0, ((32, 64), 64): 0.85, ((32, 64), 32): 0.88, ((32, 32), 32): 0.74,
               ((16, 64), 32): 0.70, ((16, 16), 16): 0.54}
# With 16 vector registers (AVX2) a loop over k carries one row of four DPAS ops (dpas_emulation.carried_sums) and
# the larger pieces' private data outgrow the caches: relative speeds from a 1024^3 f32 run of the tutorial kernel
# with each piece, in turns in one process (AVX2 EPYC, 2026-11-28; 32x64/K32 at 32.0 GFLOP/s).
PIECE_SPEED_16_REGISTERS = {((16, 64), 32): 1.0, ((32, 64), 32): 0.92, ((16, 16), 16): 0.72, ((32, 32), 32): 0.66,
                            ((64, 64), 64): 0.60, ((32, 64), 64): 0.39}
CPU_TIMED = 3
CPU_WITHIN = 1.5
# A GEMM of fewer than TIMED_FROM multiply-adds (256^3; tens of microseconds) runs the best estimate untimed: the
# estimate put the fastest first at 1, 128, 200x136x80 and 256, and timing more configs costs their driver builds,
# seconds against microseconds (1x1x1 with AVX2 code: 1.22 s of first call with two configs timed, 0.29 s with one).
TIMED_FROM = 1 << 24
# On a CPU device, where C has PANELS_FROM rows or more and the GEMM PANEL_WORK multiply-adds, B is copied into panels
# of PANEL_COLUMNS columns (b_panels), each panel's K rows padded to a multiple of PANEL_ROWS_PADDED: a subgroup's
# 32x64 piece of B for one K step is then 8 KiB of consecutive memory, where B's rows lay a row pitch apart (8 KiB for
# 2048 f32 columns: rows a multiple of 4 KiB apart share L1 sets). The copy is a launch (about 50 us of a call) that
# reads and writes B once (0.6 ms for 2048x2048 f32), so it pays for large GEMMs only. On the Zen 5, panels over B
# as it is, with AVX-512 code: 2048^3 f32 and f16 1.04-1.27x, 1024^3 0.99-1.03x, 512x1024x1024 f32 1.01-1.03x,
# 256x1024x1024 0.95-0.96x, 512^3 0.93-0.94x; with AVX2 code 2048^3 1.12-1.18x, 1024^3 0.94-1.20x, 512x1024x1024
# 1.14-1.16x, 512^3 0.97-0.99x (docs/performance.md "GEMM on the `cpu` target", B in panels).
# B of PANEL_COLUMNS columns or fewer is a panel as it is (no copy), read by a tile as wide as B or wider
# (reads_panels), and its GEMM gains by the panels' configs alone (256x64 and 128x64 tiles of 32x64 pieces, where B as
# it is tunes 64x64 tiles; 32 and 16 columns wide for B of 32 and 16 columns: 2048x32x2048 f32 279-291 GFLOP/s against
# 79-107 in 64 columns, 4096x16x1024 232-237 against 35-45, with AVX-512 code): on the Zen 5 at 4096x64x1024,
# 2048x32x2048, 8192x16x256, 600x64x4096 and 512x64x512 f32 1.34-1.37x, 1.85-1.99x, 2.28-2.40x, 1.36-1.40x and
# 1.20-1.22x with AVX-512 code, 1.30-1.35x, 1.56-1.60x, 1.62-1.68x, 1.06-1.10x and 1.20-1.21x with AVX2 code.
PANEL_COLUMNS = 64
PANEL_ROWS_PADDED = 64
PANELS_FROM = 512
PANEL_WORK = 1 << 29
# On a CPU device a GEMM sums over k in launches of K_CHUNK steps each, C carrying the sum from one to the next
# (k_chunks), where its A and B outgrow a cache: a launch reads a K_CHUNK-wide slice of A and B, which stays in the
# cache for all its workgroups, where over the whole K each subgroup's panels came from further out.
# - The last-level cache: A and B hold CHUNKED_FROM bytes or more (32 MiB a CCD on the Zen 4). ops.matmul's tuned
#   configs on the Zen 4 at 4096^3, with AVX2 code: f32 1.05-1.12x, f16 1.06-1.09x; with AVX-512 code f32 1.06x, f16
#   1.00-1.01x.
# - A core's cache (the device's global memory cache, L2): a subgroup's panels over the whole K, PANEL_ROWS rows of A
#   and columns of B (a 32x64 piece; the CPU configs' pieces have 80 to 128), outgrow it, and a launch's slice holds
#   CHUNK_WORK multiply-adds or more (a launch's own cost stays small beside it). The subgroups sharing A's rows run one
#   after another on a core, and A's panel is evicted by each B panel: on the AVX2 EPYC (512 KiB of L2) at 2048^3 f32
#   1.15-1.30x, at 2048^3 f16 and 1024^3 (panels of 384 KiB) 1.00-1.02x; on the Zen 4 (1 MiB) at 2048^3 f32 1.00x
#   (docs/performance.md "GEMM on the `cpu` target").
K_CHUNK = 512
CHUNKED_FROM = 64 << 20
PANEL_ROWS = 96
CHUNK_WORK = 1 << 28


def configs_to_time(configs, named, **kwargs) -> list[Config]:
    """early_config_prune: drops the configs whose code is another's on the launch's target (prefetch where it is a
    no-op; load blocks where larger ones gain nothing, not Target.largest_loads), and on a CPU device keeps the
    fastest by cpu_estimate: at most CPU_TIMED, within CPU_WITHIN of the best."""
    arrays = [v for v in named.values() if is_array(v)]
    device = select_device(kwargs.get("device"), arrays)
    target = kwargs.get("target") or device.target
    panels = named["B_PANELS"]
    configs = [c for c in configs if in_panels(c) == panels and (not panels or reads_panels(c, named["N"]))]
    if not has_prefetch(target):
        configs = [c for c in configs if c.kwargs["PREFETCH"] == 0]
    if target in TARGETS and not TARGETS[target].largest_loads:
        configs = [c for c in configs if c.kwargs["A_LAYOUT"] is None and c.kwargs["B_LAYOUT"] is None]
    if device.is_cpu:
        units = device.queue.sycl_device.max_compute_units
        speeds = piece_speeds(TARGETS[target].cpu)
        configs = fastest_on_cpu(configs, named["M"], named["N"], named["K"], units, speeds)
    return configs


def in_panels(config: Config) -> bool:
    """Whether `config` is one of B in panels (b_panels): one subgroup across its tile."""
    return config.sg_layout[1] == 1


def reads_panels(config: Config, n: int) -> bool:
    """Whether a config of B in panels reads those of an N-column B: a tile a panel wide, or, where B is one panel
    as it is (N <= PANEL_COLUMNS), one tile across all of B."""
    return config.kwargs["BN"] == PANEL_COLUMNS if n > PANEL_COLUMNS else config.kwargs["BN"] >= n


def piece_speeds(cpu: CpuFeatures) -> dict:
    """The pieces' relative speeds on `cpu`: PIECE_SPEED_16_REGISTERS where its ISA has 16 vector registers, else
    PIECE_SPEED (AVX-512, or an ISA unknown)."""
    return PIECE_SPEED_16_REGISTERS if cpu.vector_registers == 16 else PIECE_SPEED


def fastest_on_cpu(configs, m: int, n: int, k: int, units: int, speeds: dict) -> list[Config]:
    """The configs estimated fastest on a CPU of `units` compute units, best first, one a piece (the best estimate
    of each subgroup piece and K tile): at most CPU_TIMED, within CPU_WITHIN of the best estimate; `speeds` the
    pieces' on that CPU (piece_speeds). The pieces' speeds move from one CPU of a class to the next more than the
    tiles' waves do, so timing decides between pieces: with AVX2 code on the Xeon the three best estimates were all
    16x64 pieces, and the GEMM tuned to one ran at 0.64-0.81x the tutorial's 32x64 pieces (docs/performance.md
    "AVX2 code on the Xeon"). A GEMM of fewer than TIMED_FROM multiply-adds keeps one, and so does an empty one (K =
    0): timing each config would cost its driver build, for microseconds or nothing of the GEMM's."""
    estimates = {id(c): cpu_estimate(c, m, n, k, units, speeds) for c in configs}
    best = min(estimates.values())
    kept = sorted((c for c in configs if estimates[id(c)] <= best * CPU_WITHIN), key=lambda c: estimates[id(c)])
    per_piece = {}
    for config in kept:
        per_piece.setdefault((tuple(config.sg_data), config.kwargs["BK"]), config)
    return list(per_piece.values())[:CPU_TIMED if m * n * k >= TIMED_FROM else 1]


def has_prefetch(target: str) -> bool:
    return target in TARGETS and TARGETS[target].block_prefetch


def cpu_estimate(config: Config, m: int, n: int, k: int, units: int, speeds: dict = PIECE_SPEED) -> float:
    """A config's time on a CPU device of `units` compute units, in arbitrary units (`speeds`: PIECE_SPEED's)."""
    bm, bn, bk = (config.kwargs[name] for name in ("BM", "BN", "BK"))
    waves = xt.cdiv(xt.cdiv(m, bm) * xt.cdiv(n, bn), units)
    return waves * bm * bn * xt.cdiv(k, bk) * bk / speeds[(tuple(config.sg_data), bk)]


@autotune(configs(), key=["M", "N", "K", "HAS_BIAS", "ACTIVATION", "INPUT_PRECISION", "CHUNKED", "B_PANELS"],
          prune_configs_by={"early_config_prune": configs_to_time})
@kernel
def matmul_kernel(a, b, c, bias, M, N, K, K0, KL, BM: xt.constexpr, BN: xt.constexpr, BK: xt.constexpr,
                  A_LAYOUT: xt.constexpr, B_LAYOUT: xt.constexpr, PREFETCH: xt.constexpr, PA: xt.constexpr,
                  PB: xt.constexpr, ACC: xt.constexpr, HAS_BIAS: xt.constexpr, ACTIVATION: xt.constexpr,
                  INPUT_PRECISION: xt.constexpr, CHUNKED: xt.constexpr = False, B_PANELS: xt.constexpr = False):
    """C's tile of the sum over k = K0 .. K0 + KL - 1 where CHUNKED (k_chunks: from C's value where K0 > 0, the bias
    and activation where the sum ends there), else over all of K (K0 = 0, KL = K). Where B_PANELS, `b` holds B in
    panels of BN columns (b_panels), the program's column of the grid its panel, or is one panel no wider than BN."""
    m = xt.program_id(0) * BM
    n = xt.program_id(1) * BN
    first = K0 if CHUNKED else 0
    ta = xt.init_tile(a, [m, first], [BM, BK], layout=A_LAYOUT)
    if B_PANELS:
        panel_rows = (K + PANEL_ROWS_PADDED - 1) // PANEL_ROWS_PADDED * PANEL_ROWS_PADDED  # b_panels' k_padded
        tb = xt.init_tile(b, [xt.program_id(1) * panel_rows + first, 0], [BK, BN], layout=B_LAYOUT)
    else:
        tb = xt.init_tile(b, [first, n], [BK, BN], layout=B_LAYOUT)
    tc = xt.init_tile(c, [m, n], [BM, BN])
    if PREFETCH:
        pa = xt.init_tile(a, [m, first + PREFETCH * BK], [BM, BK], layout=PA)
        pb = xt.init_tile(b, [first + PREFETCH * BK, n], [BK, BN], layout=PB)
    acc = xt.zeros([BM, BN], ACC)
    if CHUNKED and K0 > 0:
        acc = xt.load_tile(tc)
    for k in range(0, KL, BK):
        if PREFETCH:
            xt.prefetch_tile(pa)
            xt.prefetch_tile(pb)
            pa = xt.update_tile_offset(pa, [0, BK])
            pb = xt.update_tile_offset(pb, [BK, 0])
        acc = xt.tile_mma(xt.load_tile(ta), xt.load_tile(tb), acc, input_precision=INPUT_PRECISION)
        ta = xt.update_tile_offset(ta, [0, BK])
        tb = xt.update_tile_offset(tb, [BK, 0])
    if not CHUNKED or K0 + KL >= K:  # a constexpr True unchunked: no branch in the kernel
        if HAS_BIAS:
            acc = acc + xt.load_tile(xt.init_tile(bias, [0, n], [1, BN])).to(ACC)
        acc = activated(acc, ACTIVATION)
    xt.store_tile(tc, acc)


@kernel
def activated(acc, ACTIVATION: xt.constexpr):
    """`acc` through the activation named ACTIVATION ("" for none)."""
    if ACTIVATION == "relu":
        acc = xt.maximum(acc, 0)
    if ACTIVATION == "gelu":
        acc = 0.5 * acc * (1.0 + xt.tanh(GELU_C * (acc + 0.044715 * acc * acc * acc)))
    if ACTIVATION == "silu":
        acc = acc / (1.0 + xt.exp(-acc))
    return acc


# C of few rows (a batch of tokens through a layer) on a CPU device, where the tile kernel's tile of 16 rows or more
# does all its rows' multiply-adds: up to FEW_ROWS rows, B row-major streams through `few_rows_kernel`, C's MR x BN
# tile the sum over k of A's column k (MR rows) times B's row k (BN columns, one run of memory), and column-major B
# (the weight of a torch Linear: W = B.T row-major) through `gemv_dot_kernel` (a subgroup's row of W times A's row,
# DOT_K_STEP columns at a time, for each row of C), whose gathers of B's columns the first kernel would pay. Where
# a row-major B of B_FROM_MEMORY bytes or more comes from memory, not the last-level cache, `few_rows_kernel` (B
# read once for 8 rows) outruns the tile kernel up to FEW_ROWS_FROM_MEMORY rows with 32 vector registers (AVX-512;
# its 8 x 128 tile then in registers) and FEW_ROWS_FROM_MEMORY_16_REGISTERS with 16 (AVX2); in the cache the tile
# kernel's 16 rows run faster. C of few columns is the transposed C of few rows. Measured in docs/performance.md "C of
# few rows or columns".
FEW_ROWS = 8
FEW_ROWS_FROM_MEMORY = 48
FEW_ROWS_FROM_MEMORY_16_REGISTERS = 16
B_FROM_MEMORY = 32 << 20
DOT_W_ROWS = 16
DOT_K_STEP = 1024
# A column-major B (a torch Linear's weight.T) of fewer than GATHERED_K_BELOW rows, K no multiple of 16, is read by
# few_rows_kernel's gathers for C of GATHERED_ROWS_FROM rows or more: each of W's rows in the dot kernel then ends in
# a partial block, which takes the element path, while the gathers' columns lie a row pitch of K elements apart, no
# multiple of a cache line, so they share no L1 sets (at K = 128, 256, 384 the gathers ran at half the dot kernel's
# speed). Zen 5, 4096 columns of C, f32, gathers against the dot kernel in GFLOP/s: K = 200 at 4 and 8 rows 38.8 and
# 63.0 against 23.3 and 25.2; K = 392 43.1 and 69.9 against 40.9 and 43.1; K = 520 42.8 and 69.6 against 46.7 and
# 50.0 (with AVX2 code 55.5 and 82.4 against 37.8 and 39.2); at 2 and 3 rows the dot kernel from K = 300
# (docs/performance.md "C of few rows or columns").
GATHERED_K_BELOW = 512
GATHERED_ROWS_FROM = 4


@kernel
def few_rows_kernel(a, b, c, bias, K, MR: xt.constexpr, BN: xt.constexpr, ACC: xt.constexpr, BIAS: xt.constexpr,
                    ACTIVATION: xt.constexpr):
    """C's MR x BN tile at (m, n): the sum over k of a[m:m + MR, k] times b[k, n:n + BN], B row-major (a row one run
    of memory), or column-major where few_rows reads it by gathers (reads_b_by_gathers). BIAS: none
    (""), one a column of C ("columns", `bias` a row) or one a row ("rows", `bias` a column)."""
    n = xt.program_id(0) * BN
    m = xt.program_id(1) * MR
    rows = Layout([1, 1], [MR, BN], inst_data=[1, 16])  # one subgroup; a row of B is one run of blocks
    acc = xt.zeros([MR, BN], ACC)
    for k in range(0, K, 1):
        x = xt.load_tile(xt.init_tile(a, [m, k], [MR, 1], layout=Layout([1, 1], [MR, 1]))).to(ACC)
        y = xt.load_tile(xt.init_tile(b, [k, n], [1, BN], layout=Layout([1, 1], [1, BN], inst_data=[1, 16])))
        acc = acc + xt.broadcast_to(x, [MR, BN]) * xt.broadcast_to(y.to(ACC), [MR, BN])
    if BIAS == "columns":
        acc = acc + xt.broadcast_to(xt.load_tile(xt.init_tile(bias, [0, n], [1, BN])).to(ACC), [MR, BN])
    if BIAS == "rows":
        column = xt.load_tile(xt.init_tile(bias, [m, 0], [MR, 1], layout=Layout([1, 1], [MR, 1])))
        acc = acc + xt.broadcast_to(column.to(ACC), [MR, BN])
    xt.store_tile(xt.init_tile(c, [m, n], [MR, BN], layout=rows), activated(acc, ACTIVATION))


@kernel
def gemv_dot_kernel(a, w, ct, bias, K, BR: xt.constexpr, BK: xt.constexpr, ACC: xt.constexpr, BIAS: xt.constexpr,
                    ACTIVATION: xt.constexpr):
    """Row m of C's BR columns from r, as the column of C.T (`ct`): the sums of w[r:r + BR, :] (B.T, row-major) times
    a[m, :], BK columns at a time. BIAS as few_rows_kernel's, of C: "columns" takes `bias` as a column (C.T's),
    "rows" as a row."""
    r = xt.program_id(0) * BR
    m = xt.program_id(1)
    acc = xt.zeros([BR, 1], ACC)
    for k in range(0, K, BK):
        rows = xt.load_tile(xt.init_tile(w, [r, k], [BR, BK])).to(ACC)
        x = xt.load_tile(xt.init_tile(a, [m, k], [1, BK])).to(ACC)
        acc = acc + xt.tile_reduce("add", rows * xt.broadcast_to(x, [BR, BK]), [1])
    if BIAS == "columns":
        acc = acc + xt.load_tile(xt.init_tile(bias, [r, 0], [BR, 1])).to(ACC)
    if BIAS == "rows":
        acc = acc + xt.broadcast_to(xt.load_tile(xt.init_tile(bias, [0, m], [1, 1])).to(ACC), [BR, 1])
    xt.store_tile(xt.init_tile(ct, [r, m], [BR, 1]), activated(acc, ACTIVATION))


def matmul(a, b, c=None, *, bias=None, activation=None, out_dtype=None, input_precision="ieee", device=None):
    """activation(a @ b + bias) into `c` (a new array of `a`'s kind, numpy, dpnp or torch, when None, else M x N);
    returns it. As numpy's matmul, K = 0 makes a @ b zeros (so c = activation(bias)); M = 0 or N = 0 leaves nothing
    to do."""
    ((m, k), in_dtype), ((k2, n), b_dtype) = shape_and_dtype(a), shape_and_dtype(b)
    if k != k2 or in_dtype != b_dtype:
        raise ValueError(f"matmul: a is {m}x{k} {in_dtype}, b {k2}x{n} {b_dtype}; they need the same K and dtype")
    if in_dtype not in ("float16", "bfloat16", "float32", "int8"):
        raise ValueError(f"matmul: inputs are float16, bfloat16, float32 or int8, not {in_dtype}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"matmul: activation is one of {ACTIVATIONS}, not {activation!r}")
    if input_precision not in ("ieee", "tf32") or (input_precision == "tf32" and in_dtype != "float32"):
        raise ValueError(f"matmul: input_precision is 'ieee', or 'tf32' for float32 inputs, not {input_precision!r} "
                         f"for {in_dtype}")
    acc = int32 if in_dtype == "int8" else float32
    if acc is int32 and activation in ("gelu", "silu"):
        raise ValueError(f"matmul: {activation} needs a float accumulator; int8 inputs accumulate in int32")
    if c is None:
        c = new_array(a, (m, n), as_numpy_dtype(out_dtype) if out_dtype is not None else acc.np_dtype)
    elif tuple(shape_of(c)) != (m, n):
        raise ValueError(f"matmul: c is {'x'.join(map(str, shape_of(c)))}, but a ({m}x{k}) @ b ({k}x{n}) is {m}x{n}")
    if bias is not None:
        bias = as_row(bias, n)
    if m == 0 or n == 0:
        return c
    if in_few_rows(m, b, device):
        return few_rows(a, b, c, bias, acc, activation, device)
    a_t = transposed(a) if n <= FEW_ROWS_FROM_MEMORY else None  # C of few columns: C.T = B.T @ A.T, of few rows
    if a_t is not None and in_few_rows(n, a_t, device):
        few_rows(transposed(b), a_t, transposed(c), bias, acc, activation, device, bias_along="rows")
        return c
    panels = in_panels_on(m, n, k, b, device)
    wide = panels and widens_f16(in_dtype, b, device)
    a = row_major_operand(a, n, device)
    a = widened(a, device, "a") if wide else a
    if panels and n > PANEL_COLUMNS:
        b = b_panels(b, device, np.float32 if wide else None)
    else:
        b = row_major_operand(b, m, device)
        b = widened(b, device, "b") if wide else b
    grid = lambda meta: (xt.cdiv(m, meta["BM"]), xt.cdiv(n, meta["BN"]))  # noqa: E731
    chunks = k_chunks(m, n, k, [a, b, c], acc, device)
    bias_arg = no_bias(c) if bias is None else bias
    for k0, length in chunks:
        matmul_kernel[grid](a, b, c, bias_arg, m, n, k, k0, length, ACC=acc, HAS_BIAS=bias is not None,
                            ACTIVATION=activation or "", INPUT_PRECISION=input_precision, CHUNKED=len(chunks) > 1,
                            B_PANELS=panels, device=device)
    return c


def in_few_rows(m: int, b, device) -> bool:
    """Whether C of `m` rows takes one of the few-row kernels: on a CPU device, up to few_rows_limit rows."""
    if m > FEW_ROWS_FROM_MEMORY:  # more than any limit: a large GEMM's launch pays no more than this test
        return False
    selected = select_device(device, [b])
    if not selected.is_cpu:
        return False
    (k, n), _, dtype = layout_of(b)
    return m <= few_rows_limit(TARGETS[selected.target].cpu, is_column_major(b), k * n * dtype.itemsize)


def few_rows_limit(cpu: CpuFeatures, column_major: bool, b_bytes: int) -> int:
    """The most rows of C the few-row kernels take on `cpu` for a B of `b_bytes` bytes, column-major or not
    (FEW_ROWS says why)."""
    if column_major or b_bytes < B_FROM_MEMORY:
        return FEW_ROWS
    return FEW_ROWS_FROM_MEMORY_16_REGISTERS if cpu.vector_registers == 16 else FEW_ROWS_FROM_MEMORY


def few_rows(a, b, c, bias, acc, activation, device, bias_along: str = "columns"):
    """C = activation(A @ B + bias) by few_rows_kernel, or by gemv_dot_kernel where B is column-major and not
    read by gathers (reads_b_by_gathers); `bias` (a row) one a column of C, or one a row where `bias_along` is "rows"
    (C the transpose of the caller's)."""
    (m, k), (_, n) = shape_of(a), shape_of(b)
    along = "" if bias is None else bias_along
    options = dict(ACC=acc, BIAS=along, ACTIVATION=activation or "", device=device)
    bias_arg = no_bias(c) if bias is None else bias
    if is_column_major(b) and not reads_b_by_gathers(m, k):
        step = min(DOT_K_STEP, max(16, 1 << (k - 1).bit_length()))  # K up to a power of 2 where it is shorter
        a = row_major_copy(a, device) if m > 1 and is_column_major(a) else a  # its rows read as runs of memory
        bias_arg = bias_arg if along == "rows" else transposed(bias_arg)
        gemv_dot_kernel[(xt.cdiv(n, DOT_W_ROWS), m)](a, transposed(b), transposed(c), bias_arg, k, BR=DOT_W_ROWS,
                                                     BK=step, **options)
    else:
        mr = min(8, 1 << (m - 1).bit_length())  # C's rows up to a power of 2, 8 at most
        bn = 256 if mr == 1 else 128
        bias_arg = transposed(bias_arg) if along == "rows" else bias_arg
        few_rows_kernel[(xt.cdiv(n, bn), xt.cdiv(m, mr))](a, b, c, bias_arg, k, MR=mr, BN=bn, **options)
    return c


def reads_b_by_gathers(m: int, k: int) -> bool:
    """Whether few_rows_kernel reads a column-major B of `k` rows for C of `m` rows (GATHERED_K_BELOW says why)."""
    return m >= GATHERED_ROWS_FROM and k < GATHERED_K_BELOW and k % 16 != 0


def is_column_major(x) -> bool:
    """Whether the array `x` is column-major (runtime/args.py array_order)."""
    shape, strides, dtype = layout_of(x)
    return array_order("operand", shape, strides, dtype.itemsize) == COL_MAJOR


def in_panels_on(m: int, n: int, k: int, b, device) -> bool:
    """Whether an M x N x K GEMM reads B in panels (b_panels, or B itself where it has PANEL_COLUMNS columns or fewer):
    on a CPU device, PANELS_FROM rows of C or more and PANEL_WORK multiply-adds or more, or B as one panel."""
    return m >= PANELS_FROM and (n <= PANEL_COLUMNS or m * n * k >= PANEL_WORK) and select_device(device, [b]).is_cpu


@kernel
def panels_kernel(b, panels, K, KP, BK: xt.constexpr, BN: xt.constexpr):
    """panels[j * KP + k, :] = b[k, j * BN:(j + 1) * BN], zeros past B's rows and columns (KP: K padded to BK)."""
    k = xt.program_id(0) * BK
    j = xt.program_id(1)
    tile = xt.load_tile(xt.init_tile(b, [k, j * BN], [BK, BN]))
    xt.store_tile(xt.init_tile(panels, [j * KP + k, 0], [BK, BN]), tile)


def b_panels(b, device, dtype: np.dtype | None = None):
    """B (K x N, either memory order) as cdiv(N, PANEL_COLUMNS) panels of KP rows one after another (panels_array), K
    padded to a multiple of PANEL_ROWS_PADDED (so no K tile of the configs crosses into the next panel), with zeros
    past B; of `dtype` where given (f16 widened, `widens_f16`), else B's."""
    (k, n), _, b_dtype = layout_of(b)
    dtype = b_dtype if dtype is None else dtype
    k_padded = xt.cdiv(k, PANEL_ROWS_PADDED) * PANEL_ROWS_PADDED
    count = xt.cdiv(n, PANEL_COLUMNS)
    panels = panels_array(b, count * k_padded, dtype, device)
    panels_kernel[(k_padded // PANEL_ROWS_PADDED, count)](b, panels, k, k_padded, BK=PANEL_ROWS_PADDED,
                                                          BN=PANEL_COLUMNS, device=device)
    return panels


def k_chunks(m: int, n: int, k: int, arrays: list, acc, device) -> list[tuple[int, int]]:
    """The launches' ranges of the sum over k, (first k, length): chunks of K_CHUNK on a CPU device where A and B
    outgrow its last-level cache or a core's (outgrow_caches), are in device memory (a host array is copied at each
    launch) and C holds the accumulator's type (it carries the sum from one launch to the next); one launch
    otherwise."""
    a, b, c = arrays
    if k <= K_CHUNK or dtype_of(c) != acc.name or not all(map(is_usm, arrays)):
        return [(0, k)]
    selected = select_device(device, arrays)
    if not selected.is_cpu or not outgrow_caches(m, n, k, layout_of(a)[2].itemsize,
                                                  selected.queue.sycl_device.global_mem_cache_size):
        return [(0, k)]
    return [(k0, min(K_CHUNK, k - k0)) for k0 in range(0, k, K_CHUNK)]


def outgrow_caches(m: int, n: int, k: int, itemsize: int, core_cache: int) -> bool:
    """Whether an M x N x K GEMM's A and B of `itemsize` bytes outgrow the last-level cache (CHUNKED_FROM), or a
    subgroup's panels outgrow a core's `core_cache` bytes with CHUNK_WORK multiply-adds a launch (the comment on
    K_CHUNK)."""
    return ((m + n) * k * itemsize >= CHUNKED_FROM
            or (PANEL_ROWS * k * itemsize > core_cache and m * n * K_CHUNK >= CHUNK_WORK))


@kernel
def row_major_copy_kernel(x, y, BM: xt.constexpr, BN: xt.constexpr):
    """y = x, y row-major (a column-major x read by transposed loads)."""
    m = xt.program_id(0) * BM
    n = xt.program_id(1) * BN
    xt.store_tile(xt.init_tile(y, [m, n], [BM, BN]), xt.load_tile(xt.init_tile(x, [m, n], [BM, BN])))


# row_major_copy_kernel's tile: a column-major 2048x2048 f32 array in 2.4 ms on opencl:cpu, against 2.9-8.1 ms in
# 16x64 to 128x32 tiles and 17.7 ms for dpnp's copy
COPY_TILE = (64, 16)
# The copy pays where the GEMM reads the operand again for this many rows (B) or columns (A) of C: on opencl:cpu,
# a column-major f32 B at 512^3 ran at 135 GFLOP/s as it is and 120 copied, at 1024^3 at 109 and 135 (f16 163 and
# 162; a column-major A: f32 101 -> 137, f16 149 -> 160)
COPY_FROM = 1024


def row_major_operand(x, reuse: int, device):
    """`x`, or a row-major copy of it where it is column-major, the GEMM reads it for `reuse` rows or columns of C,
    at least COPY_FROM, and the launch's target reads a column-major tile_mma operand by gathers
    (Target.column_major_gathers: the CPU targets); a numpy array is copied on the host."""
    if reuse < COPY_FROM or not is_column_major(x):
        return x
    target = TARGETS.get(select_device(device, [x]).target)
    if target is None or not target.column_major_gathers:
        return x
    return row_major_copy(x, device)


def row_major_copy(x, device):
    """A row-major copy of the column-major `x`, of its kind (a numpy array's on the host; `x` itself where a USM
    array's copy needs dpnp and there is none)."""
    if is_tensor(x):
        return x.contiguous()
    if not is_usm(x):
        return np.ascontiguousarray(x)
    shape, _, dtype = layout_of(x)
    try:
        y = new_array(x, shape, dtype)
    except ImportError:  # no dpnp to make the copy with: read in place
        return x
    grid = (xt.cdiv(shape[0], COPY_TILE[0]), xt.cdiv(shape[1], COPY_TILE[1]))
    row_major_copy_kernel[grid](x, y, BM=COPY_TILE[0], BN=COPY_TILE[1], device=device)
    return y


# On a CPU whose loops over all of K take f32 but not f16 (dpas_emulation.whole_k_loops: AVX2, where each loop would
# widen A's and B's f16 elements for two registers a sum), an f16 GEMM in panels runs as the f32 GEMM of its operands
# widened: the same numbers (an f16 x f16 product is exact in f32, and both forms add it to the sum by one fused
# multiply-add, k ascending): with AVX2 code 219.5-235.8 against 196.0-205.3 GFLOP/s at 1024^3, 237.2-239.9 against
# 202.9-205.6 at 2048^3, the widening copies included (Zen 5, 2026-12-05; docs/performance.md "What bounds the tutorial
# GEMM").
def widens_f16(in_dtype: str, b, device) -> bool:
    """Whether an f16 GEMM on `b`'s device (or `device`) runs as the f32 GEMM of its operands widened."""
    if in_dtype != "float16":
        return False
    selected = select_device(device, [b])
    target = TARGETS.get(selected.target)
    if not selected.is_cpu or target is None or target.cpu is None:
        return False
    whole_k = whole_k_loops(target.cpu, target.subgroup_size)
    return whole_k is not None and "f32" in whole_k.kinds and "f16" not in whole_k.kinds


def widened(x, device, use: str):
    """An f32 copy of the f16 array `x` (exact), row-major: a USM array's in a scratch buffer for `use` on its queue
    (runtime/scratch.py), a torch tensor's its `float()`, a host array's numpy's."""
    if is_tensor(x):
        return x.float().contiguous()
    if not is_usm(x):
        return np.ascontiguousarray(x, np.float32)
    shape, _, _ = layout_of(x)
    y = scratch(tuple(shape), np.float32, select_device(device, [x]).queue, use)
    grid = (xt.cdiv(shape[0], WIDEN_TILE[0]), xt.cdiv(shape[1], WIDEN_TILE[1]))
    row_major_copy_kernel[grid](x, y, BM=WIDEN_TILE[0], BN=WIDEN_TILE[1], device=device)
    return y


WIDEN_TILE = (16, 256)


def panels_array(b, rows: int, dtype: np.dtype, device):
    """An uninitialised rows x PANEL_COLUMNS array for `b`'s panels, reused from call to call (runtime/scratch.py):
    in device memory on the launch's queue where `b` is there (a USM array), else in host memory."""
    queue = select_device(device, [b]).queue if is_usm(b) else None
    return scratch((rows, PANEL_COLUMNS), dtype, queue)


def no_bias(c):
    """The bias argument of a launch without bias, which the kernel never reads: `c` itself when it is in device
    memory (no copy), else a 1x1 array, since a numpy argument is copied to the device at each launch (`c` twice over
    made a bf16 1024^3 GEMM on numpy arrays 2 ms slower)."""
    if is_usm(c) or is_tensor(c) and c.device.type != "cpu":
        return c
    return np.zeros((1, 1), layout_of(c)[2])


def layout_of(array) -> tuple:
    """Shape, byte strides and numpy dtype of a numpy, USM or torch array (runtime/args.py array_layout)."""
    return array_layout(as_array("array", array))


def shape_of(array) -> tuple[int, ...]:
    return shape_and_dtype(array)[0]


def dtype_of(array) -> str:
    return shape_and_dtype(array)[1]


def shape_and_dtype(array) -> tuple[tuple[int, ...], str]:
    """The shape and the dtype's name of a numpy, USM or torch array, from one read of its layout."""
    if is_usm(array) or is_tensor(array):
        shape, _, dtype = layout_of(array)
        shape = tuple(shape)
    else:
        array = np.asarray(array)
        shape, dtype = array.shape, array.dtype
    found = dtype_of_numpy(dtype)
    return shape, found.name if found is not None else str(dtype)


def as_row(bias, n: int):
    """A length-N vector or (1, N) array as a (1, N) array (a view)."""
    shape = tuple(shape_of(bias))
    if shape not in ((n,), (1, n)):
        raise ValueError(f"matmul: bias is a length-{n} vector or a (1, {n}) array, not {shape_of(bias)}")
    return bias if shape == (1, n) else bias.reshape(1, n)


def new_array(like, shape, dtype: np.dtype):
    """An uninitialised array of `like`'s kind: a torch tensor on its device, dpnp on its queue for USM arrays,
    numpy otherwise."""
    if is_tensor(like):
        return new_tensor(like, shape, dtype)
    if not is_usm(like):
        return np.empty(shape, dtype)
    import dpnp
    return dpnp.empty(shape, dtype=dtype, sycl_queue=array_queue(like))
