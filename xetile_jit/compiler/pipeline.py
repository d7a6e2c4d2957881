"""The lowering pipeline (docs/DESIGN.md §2): one function per stage, run in order; every stage's output is
verified, and printed to stderr when XETILE_DUMP_IR=1. `compile_spirv` runs it to the end: LLVM IR,
then the SPIR-V binary. XETILE_TIMING=1 times each stage (runtime/timing.py). `observing_stages` hands every stage's
IR to a function of the caller's (MLIR's pass instrumentation): a differential test interprets the very IR a launch
compiled, without lowering the kernel a second time."""
from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from typing import Callable, Iterator

from ..ir.core import FuncOp, walk
from ..ir.debug_ops import DeviceAssertOp
from ..ir.simt_ops import SimtDpasOp, exchanges_lanes
from ..toolchain import isa_stats, ocloc
from ..target.code_budget import check_code_size, check_registers, check_slm, slm_bytes
from ..codegen.spirv import emit_spirv
from ..codegen.backends import lower_to_llvm
from ..ir.printer import print_func
from ..ir.verifier import verify
from ..language.indexed import expand_combines
from ..runtime import timing
from ..target.targets import Target, get_target
from ..transforms.xegpu.barriers import check_divergent_barriers, check_named_barriers, insert_barriers
from ..transforms.xegpu.blocking import block
from ..transforms.xegpu.lane_distribution import distribute_lanes
from ..transforms.xegpu.lane_gather_folding import fold_lane_gathers
from ..transforms.xegpu.exchange_buffers import share_exchange_buffers
from ..transforms.xegpu.exchange_stores import hoist_exchange_stores
from ..transforms.xegpu.needless_barriers import drop_needless_barriers
from ..transforms.xegpu.wg_to_sg import wg_to_sg
from ..transforms.xetile.float8_mma import upconvert_float8_mma
from ..transforms.xetile.layout_completion import complete_layouts
from ..transforms.xetile.contract_float_math import contract_float_math
from ..transforms.xetile.relax_float_math import relax_float_math
from ..transforms.xetile.layout_propagation import propagate_layouts
from ..transforms.xetile.prefetch_insertion import insert_prefetch
from ..transforms.xetile.rank2 import as_rank2
from ..transforms.xetile.to_xegpu import xetile_to_xegpu


@dataclass(frozen=True)
class StageOptions:
    """The compile options the stages read: the subgroup count (layout propagation decides it), the
    prefetch distance (transforms/xetile/prefetch_insertion.py), fast math (transforms/xetile/relax_float_math.py)
    and FMA contraction (transforms/xetile/contract_float_math.py; fast math includes it)."""
    num_subgroups: int | None = None
    prefetch_distance: int = 0
    fast_math: bool = False
    fp_fusion: bool = False


# ---- the stages: each lists the passes it runs, in order
def xetile_layouts(func: FuncOp, target: Target, options: StageOptions) -> FuncOp:
    """XeTile IR with reductions and scans of user combines as their loops, 1-D values as rank 2, FP8 tile_mma
    operands in f16 where DPAS has no FP8, FMA contraction and fast math when asked, prefetches ahead of walked
    tiles, and every value's layout: propagation chooses sg_layout and sg_data, completion the instruction blocks
    and lanes of the values that share one."""
    func = upconvert_float8_mma(as_rank2(expand_combines(func)), target)
    if options.fp_fusion or options.fast_math:
        func = contract_float_math(func)
    if options.fast_math:
        func = relax_float_math(func)
    func = insert_prefetch(func, target, options.prefetch_distance)
    shared = propagate_layouts(func, target, options.num_subgroups)
    complete_layouts(func, target, shared)
    return func


def xegpu_workgroup(func: FuncOp, target: Target, options: StageOptions) -> FuncOp:
    """Workgroup-level XeGPU IR, with the barriers its program order needs between subgroups."""
    return insert_barriers(xetile_to_xegpu(func))


def xegpu_subgroup(func: FuncOp, target: Target, options: StageOptions) -> FuncOp:
    """Subgroup-level XeGPU IR: each exchange through a buffer of its own, its stores as early as their values allow,
    without the barriers that order no conflicting accesses, the buffers that no barrier window shares merged; where
    they still outgrow the target's shared local memory, every exchange of a dtype through one buffer (barriers
    between them)."""
    sg = share_exchange_buffers(drop_needless_barriers(hoist_exchange_stores(wg_to_sg(func, target))))
    if slm_bytes(sg)[1] <= target.slm_bytes:
        return sg
    return drop_needless_barriers(wg_to_sg(func, target, shared_scratch=True))


def xegpu_blocked(func: FuncOp, target: Target, options: StageOptions) -> FuncOp:
    return block(func, target)


def xegpu_simt(func: FuncOp, target: Target, options: StageOptions) -> FuncOp:
    return fold_lane_gathers(distribute_lanes(func, target))


STAGES = [("xetile-layouts", xetile_layouts), ("xegpu-wg", xegpu_workgroup), ("xegpu-sg", xegpu_subgroup),
          ("xegpu-blocked", xegpu_blocked), ("xegpu-simt", xegpu_simt)]
STAGE_NAMES = [name for name, _ in STAGES]
# called with the kernel's name, a stage's name and its IR after each stage of every `lower` (observing_stages)
StageObserver = Callable[[str, str, FuncOp], None]
STAGE_OBSERVERS: list[StageObserver] = []


@contextlib.contextmanager
def observing_stages(observer: StageObserver) -> Iterator[None]:
    """`observer` sees every stage's IR of the compiles in the block (of this process: a debugging and testing hook,
    not for concurrent compiles). A compile the disk cache answers runs no stage."""
    STAGE_OBSERVERS.append(observer)
    try:
        yield
    finally:
        STAGE_OBSERVERS.remove(observer)


def lower(func: FuncOp, until: str = STAGE_NAMES[-1], target: Target | str = "cpu",
          num_subgroups: int | None = None, prefetch_distance: int = 0, fast_math: bool = False,
          fp_fusion: bool = False) -> dict[str, FuncOp]:
    """The IR after each stage up to `until`, by stage name; `func` itself is left as it was. `target` is the
    Target, or its name (resolved here, once); `num_subgroups`, `prefetch_distance`, `fast_math` and `fp_fusion`
    the launch options."""
    if until not in STAGE_NAMES:
        raise ValueError(f"unknown stage {until!r}; stages: {', '.join(STAGE_NAMES)}")
    chosen = get_target(target) if isinstance(target, str) else target
    options = StageOptions(num_subgroups, prefetch_distance, fast_math, fp_fusion)
    results = {}
    # func.clone, not copy.deepcopy: use lists make the graph as deep as the kernel is long
    current = drop_device_asserts(func.clone())
    for name, stage in STAGES:
        with timing.stage(func.sym_name, name):
            current = stage(current, chosen, options)
            verify(current)
        if name == "xegpu-sg":
            check_divergent_barriers(current)
            check_slm(current, chosen)
            check_registers(current, chosen)
        results[name] = current
        for observe in STAGE_OBSERVERS:
            observe(func.sym_name, name, current)
        if os.environ.get("XETILE_DUMP_IR") == "1":
            print(f"// -----// {name}: {func.sym_name} //----- //\n{print_func(current)}", file=sys.stderr)
        if name == until:
            break
    return results


def drop_device_asserts(func: FuncOp) -> FuncOp:
    """Device code checks no device_assert (ir/debug_ops.py); they go before the layouts are chosen."""
    for op in [op for op in walk(func.body) if isinstance(op, DeviceAssertOp)]:
        op.erase()
    return func


def compile_spirv(func: FuncOp, target: Target, num_subgroups: int | None = None,
                  block_io_fallback: dict[str, str] | None = None, prefetch_distance: int = 0,
                  fast_math: bool = False, fp_fusion: bool = False) -> dict:
    """Every level's text ("xegpu" is the workgroup level), the LLVM IR ("llir"), the SPIR-V binary ("spirv"),
    for Xe targets the GPU ISA and its counts when ocloc is installed ("isa", "isa_stats", which lists
    `block_io_fallback`: the arrays 2D block messages cannot address, by name, with their rules, and the shared
    local memory a workgroup takes), and what launch
    needs: "num_subgroups" and "lanes" of a workgroup, the driver's "build_options", whether the kernel takes
    its arrays' sizes packed ("packed_sizes", the ABI's), whether its sub-groups are rows ("subgroup_rows") and
    whether its lanes read each other's values ("exchanges_lanes")."""
    stages = lower(func, target=target, num_subgroups=num_subgroups, prefetch_distance=prefetch_distance,
                   fast_math=fast_math, fp_fusion=fp_fusion)
    simt = stages["xegpu-simt"]
    check_named_barriers(simt)
    with timing.stage(func.sym_name, "llvm-ir"):
        module, llir = lower_to_llvm(simt, target)
        check_code_size(module, func.sym_name)
    if os.environ.get("XETILE_DUMP_IR") == "1":
        print(f"// -----// llvm: {func.sym_name} //----- //\n{llir}", file=sys.stderr)
    with timing.stage(func.sym_name, "spirv"):
        spirv = emit_spirv(module, subgroup_size=target.subgroup_size)
    uses_dpas = any(isinstance(op, SimtDpasOp) for op in walk(simt.body))
    options = target.dpas_build_options if uses_dpas else ""
    result = {"xegpu": print_func(stages["xegpu-wg"]), "xegpu-sg": print_func(stages["xegpu-sg"]),
              "xegpu-simt": print_func(simt), "llir": llir, "spirv": spirv,
              "num_subgroups": simt.num_subgroups, "lanes": simt.lanes, "build_options": options,
              "packed_sizes": target.abi.packed_sizes, "subgroup_rows": target.abi.subgroup_rows,
              "exchanges_lanes": exchanges_lanes(simt)}
    with timing.stage(func.sym_name, "gpu-isa (ocloc)") if ocloc.tools(target) else contextlib.nullcontext():
        build = ocloc.gpu_build(spirv, target, options)
    if build is not None:
        result["isa"] = build.isa
        result["isa_stats"] = isa_stats.summary(build.isa, build.grf_count, build.spill_bytes,
                                                block_io_fallback or {}, slm_bytes(simt)[1])
    return result
