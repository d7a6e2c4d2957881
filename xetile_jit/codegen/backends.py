"""The code generator of each builtin ABI, chosen once by the class of `target.abi` (target/builtin_abi.py): the
lowering class that turns a SIMT func into LLVM IR and the definitions of the Xe builtins it calls
(codegen/xe/builtins.py `Definitions`). The GPU ABIs share the XeGPU lowering (codegen/llvm/lowering.py) and differ
in their builtins (codegen/xe/gpu_definitions.py); the CPU ABIs have lowerings of their own (codegen/cpu/lowering.py)
and define the builtins in the module (codegen/xe/emulation.py, codegen/cpu/builtins.py)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from ..ir.core import FuncOp
from ..target.builtin_abi import EmulatedAbi, LegacyAbi, SpirvAbi, VectorAbi
from ..target.targets import Target
from .cpu.builtins import vector_definitions
from .cpu.lowering import CpuLowering, VectorLowering
from .llvm.lane_slots import through_slots
from .llvm.lowering import XeGPULowering
from .xe.builtins import Definitions
from .xe.emulation import emulations
from .xe.gpu_definitions import LEGACY_DEFINITIONS, SPIRV_DEFINITIONS
from .xe.llvm_helpers import BROADCAST, SLOTS


@dataclass(frozen=True)
class Backend:
    lowering: type[XeGPULowering]
    # the builtins' definitions on a target of the ABI in a kernel whose lanes read another lane's value as the
    # second argument says (`lane_reads`)
    definitions: Callable[[Target, str], Definitions]


def every_kernel(definitions: Definitions) -> Callable[[Target, str], Definitions]:
    return lambda target, reads: definitions


def lane_reads(target: Target, func: FuncOp) -> str:
    """How a CPU ABI's builtins read another lane's value in `func`: through the lanes' slots where its lanes
    exchange values so (codegen/llvm/lane_slots.py), else by OpGroupBroadcast."""
    return SLOTS if through_slots(target, func) else BROADCAST


BACKENDS = {
    SpirvAbi: Backend(XeGPULowering, every_kernel(SPIRV_DEFINITIONS)),
    LegacyAbi: Backend(XeGPULowering, every_kernel(LEGACY_DEFINITIONS)),
    EmulatedAbi: Backend(CpuLowering, lambda target, reads: emulations(reads)),
    VectorAbi: Backend(VectorLowering, lambda target, reads: vector_definitions(target.cpu, reads)),  # the CPU decides
}


def backend(target: Target) -> Backend:
    return BACKENDS[type(target.abi)]


def lower_to_llvm(func: FuncOp, target: Target) -> tuple[ir.Module, str]:
    """The verified LLVM module of `func` and its text, made by the lowering of `target`'s builtin ABI."""
    chosen = backend(target)
    lowering = chosen.lowering(func, target, chosen.definitions(target, lane_reads(target, func)))
    return lowering.lower(), lowering.text
