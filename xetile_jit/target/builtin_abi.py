"""Builtin ABIs: how a target's Xe builtins (DPAS, 2D block load / store / prefetch) reach a module, as one small
object a `Target` holds (`Target.abi`, docs/DESIGN.md §3). Every stage asks the object a fact by name; none tests
which ABI it is. How each ABI defines or declares a builtin in an LLVM module is the code generator's
(codegen/backends.py chooses it by the ABI's class); this module is below it and knows no LLVM.

* `SpirvAbi` ("spirv", Xe-HPC and newer, the default on a GPU): the standard 2025 SPIR-V extensions
  (SPV_INTEL_2d_block_io: block messages read into and write from private memory), which current drivers take.
* `LegacyAbi` ("legacy", `XETILE_XE_ABI=legacy`, and xe-hpg): imports IGC's 2022 names and wraps inline vISA, for
  drivers that predate the extensions; a load gives a lane at most one SPIR-V vector.
* `EmulatedAbi` ("emulated", the `xe-emulated` target): the module defines every builtin, bit for bit.
* `VectorAbi` ("vector", the `cpu` target, the default on a CPU device): the module defines them for a CPU's vector
  units: same call ABI and lane layouts, plain per-lane memory ops where a whole block is inside its surface.

Two facts the CPU ABIs share are kept apart: the module defines the builtins (no driver provides them:
`defines_builtins`) and an OpenCL CPU runtime runs it (`runs_on_cpu`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class BuiltinAbi:
    """The facts of one builtin ABI (class attributes; instances are equal by class)."""
    name: ClassVar[str]  # as XETILE_XE_ABI, messages and cache keys spell it
    # the module defines every builtin: no driver provides them, and their cache controls steer nothing
    defines_builtins: ClassVar[bool] = False
    # an OpenCL CPU runtime runs the module: no caches for a prefetch to reach, the CPU compiler's workarounds
    runs_on_cpu: ClassVar[bool] = False
    # a 2D block load may give a lane more than a SPIR-V vector holds (read into private memory)
    private_blocks: ClassVar[bool] = True
    # every 2D block message in any shape the target's BlockIO allows (else: the shapes of the builtin tables,
    # and every prefetch, which has no data operand)
    any_block_shape: ClassVar[bool] = True
    # DPAS on tf32 operands (Dpas("tf32"))
    tf32_dpas: ClassVar[bool] = True
    # the 2025 SPIR-V extensions, which the current compiler stack's spirv-val knows
    spirv_extensions: ClassVar[bool] = False
    # a 2D block prefetch may go through IGC's prefetch payload builtins (codegen/xe/prefetch_payload.py)
    prefetch_payloads: ClassVar[bool] = False
    # built by IGC's 2022 stack (ocloc and iga64 on the PATH); its modules hold inline vISA, which spirv-val cannot
    # check
    legacy_stack: ClassVar[bool] = False
    # for targets with 2D block IO only: XETILE_XE_ABI asking for it leaves one without (xe-hpg) its own
    needs_block_io: ClassVar[bool] = False
    # the arrays' sizes and strides reach the kernel as one by-value struct, its last parameter, not as an i64
    # parameter each: dpctl's submit costs ~1.4 us an argument (docs/performance.md "Launch overhead")
    packed_sizes: ClassVar[bool] = False
    # a workgroup's sub-groups are the rows of its local range (lanes, sub-groups, 1), so a lane's id is its local x
    # and its sub-group's its local y, read without a sub-group built-in: the OpenCL CPU compiler builds a second,
    # masked copy of every kernel that calls one (for a last sub-group it would run part full), which a kernel then
    # no longer pays for (docs/performance.md "Driver builds"; codegen/llvm/work_item_ids.py says where it still
    # does)
    subgroup_rows: ClassVar[bool] = False
    # a sub-group runs as one vector, each instruction for every lane before the next (the kernel's required
    # sub-group size makes the OpenCL CPU compiler vectorize it whole or refuse it), so lanes exchange values through
    # the workgroup's local memory, a store and a load, with no sub-group built-in: no masked copy of the kernel (in
    # the kernels codegen/llvm/lane_slots.py's lockstep_kernel admits)
    lockstep_lanes: ClassVar[bool] = False

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class SpirvAbi(BuiltinAbi):
    name: ClassVar[str] = "spirv"
    spirv_extensions: ClassVar[bool] = True
    prefetch_payloads: ClassVar[bool] = True
    needs_block_io: ClassVar[bool] = True


@dataclass(frozen=True)
class LegacyAbi(BuiltinAbi):
    name: ClassVar[str] = "legacy"
    private_blocks: ClassVar[bool] = False
    any_block_shape: ClassVar[bool] = False
    tf32_dpas: ClassVar[bool] = False
    legacy_stack: ClassVar[bool] = True


@dataclass(frozen=True)
class CpuAbi(BuiltinAbi):
    """The ABIs of an OpenCL CPU runtime, whose modules define the builtins."""
    defines_builtins: ClassVar[bool] = True
    runs_on_cpu: ClassVar[bool] = True
    packed_sizes: ClassVar[bool] = True
    subgroup_rows: ClassVar[bool] = True
    lockstep_lanes: ClassVar[bool] = True


@dataclass(frozen=True)
class EmulatedAbi(CpuAbi):
    name: ClassVar[str] = "emulated"


@dataclass(frozen=True)
class VectorAbi(CpuAbi):
    name: ClassVar[str] = "vector"


SPIRV, LEGACY, EMULATED, VECTOR = SpirvAbi(), LegacyAbi(), EmulatedAbi(), VectorAbi()
GPU_ABIS = {abi.name: abi for abi in (SPIRV, LEGACY)}  # the builtin ABIs a GPU target may be given (XETILE_XE_ABI)
