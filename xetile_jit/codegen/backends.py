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
from .llvm.lowering import XeGPULowering
from .xe.builtins import Definitions
from .xe.emulation import EMULATIONS
from .xe.gpu_definitions import LEGACY_DEFINITIONS, SPIRV_DEFINITIONS


@dataclass(frozen=True)
class Backend:
    lowering: type[XeGPULowering]
    definitions: Callable[[Target], Definitions]  # the builtins' definitions for a target of the ABI


def every_target(definitions: Definitions) -> Callable[[Target], Definitions]:
    return lambda _: definitions


BACKENDS = {
    SpirvAbi: Backend(XeGPULowering, every_target(SPIRV_DEFINITIONS)),
    LegacyAbi: Backend(XeGPULowering, every_target(LEGACY_DEFINITIONS)),
    EmulatedAbi: Backend(CpuLowering, every_target(EMULATIONS)),
    VectorAbi: Backend(VectorLowering, lambda target: vector_definitions(target.cpu)),  # the CPU decides (its loops)
}


def backend(target: Target) -> Backend:
    return BACKENDS[type(target.abi)]


def lower_to_llvm(func: FuncOp, target: Target) -> tuple[ir.Module, str]:
    """The verified LLVM module of `func` and its text, made by the lowering of `target`'s builtin ABI."""
    chosen = backend(target)
    lowering = chosen.lowering(func, target, chosen.definitions(target))
    return lowering.lower(), lowering.text
