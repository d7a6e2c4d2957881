"""Size limits a kernel must keep (a 4096x4096 f32 tile took 320 s and 8 GB to compile, and the
driver's build of a 256x256 tile per subgroup did not finish in 300 s). Each raises CompilationError naming the
rule:

* the register budget: a value one subgroup holds (a vector of the subgroup-level IR, i.e. after layout
  propagation and wg-to-sg have fixed its sg_data, before blocking unrolls it) may take at most
  REGISTER_FACTOR times the target's large register file (256 GRF x 64 B = 16 KiB on xe-hpc: 64 KiB, a
  128x128 f32 tile). The tutorial GEMM holds 8 KiB per value (a 32x64 f32 accumulator), test_spirv_gemm's
  4x4 layout 16 KiB (64x64 f32), the softmax tutorial 64 KiB (16 rows of 1024 f32), just within. The error
  names the op's source line. The numpy interpreter generates no code and takes any tile.
* the code cap: the LLVM IR of a kernel has at most MAX_LLVM_INSTRUCTIONS instructions (the tutorial GEMM has
  about 9,100).
* the shared local memory: a kernel's SLM buffers (its own and wg-to-sg's exchanges') fit the target's slm_bytes.
"""
from __future__ import annotations

from math import prod

from llvmlite import ir

from ..errors import CompilationError
from ..ir.core import FuncOp, walk
from ..ir.core_ops import SlmAllocOp
from ..ir.types import VectorType
from .targets import Target

REGISTER_FACTOR = 4
MAX_LLVM_INSTRUCTIONS = 250_000


def type_bytes(t) -> int:
    """The bytes of a tile or vector type's elements (a bool takes one)."""
    return prod(t.shape) * max(1, t.dtype.bits // 8)


def register_budget(target: Target) -> int:
    """Bytes one subgroup's value may take on `target` (the register budget)."""
    return REGISTER_FACTOR * target.large_grf_count * target.grf_bytes


def check_registers(func: FuncOp, target: Target) -> None:
    """The register budget, on subgroup-level IR: the first op whose result exceeds it is named."""
    budget = register_budget(target)
    for op in walk(func.body):
        for result in op.results:
            t = result.type
            if not isinstance(t, VectorType):
                continue
            size = type_bytes(t)
            if size > budget:
                shape = "x".join(map(str, t.shape))
                raise CompilationError(
                    f"{op.name}: each subgroup holds a {shape} {t.dtype} value ({size // 1024} KiB); the register "
                    f"budget is {REGISTER_FACTOR} x target {target.name}'s register file ({target.large_grf_count} "
                    f"GRF x {target.grf_bytes} B) = {budget // 1024} KiB per value. Use smaller tiles or spread "
                    "them over more subgroups (the launch option num_subgroups=, or layout=xetile.Layout(sg_layout, "
                    "sg_data))", op.loc)


def slm_bytes(func: FuncOp) -> tuple[int, int]:
    """The kernel's shared local memory in bytes: its alloc_slm buffers', and all (the layout conversions' too)."""
    sizes = [(op.by_user, type_bytes(op.result.type)) for op in walk(func.body) if isinstance(op, SlmAllocOp)]
    return sum(size for by_user, size in sizes if by_user), sum(size for _, size in sizes)


def check_slm(func: FuncOp, target: Target) -> None:
    """The kernel's shared local memory (its alloc_slm buffers and the layout conversions') must fit the target's."""
    user, used = slm_bytes(func)
    if used > target.slm_bytes:
        raise CompilationError(f"kernel {func.sym_name}: needs {used} bytes of shared local memory ({user} in "
                               f"alloc_slm buffers, {used - user} for layout conversions); target {target.name} "
                               f"has {target.slm_bytes} [SLM per workgroup fits the target's slm_bytes]. Use "
                               "smaller buffers or workgroup tiles, or layouts that keep a reduced dimension inside "
                               "each subgroup (sg_layout 1 along it)", func.loc)


def check_code_size(module: ir.Module, kernel: str) -> None:
    """The code cap on the LLVM module of `kernel`."""
    count = sum(len(block.instructions) for fn in module.functions for block in fn.blocks)
    if count > MAX_LLVM_INSTRUCTIONS:
        raise CompilationError(f"kernel {kernel}: its LLVM IR has {count} instructions; the code cap is "
                               f"{MAX_LLVM_INSTRUCTIONS}. Use smaller tiles or fewer unrolled iterations "
                               "(static_range)")
