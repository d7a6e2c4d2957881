"""A work-item's lane in its sub-group and its sub-group in its workgroup, on targets whose ABI lays a workgroup's
sub-groups out as the rows of its local range (BuiltinAbi.subgroup_rows: the CPU ABIs).

There the lowering and the builtins' definitions call two functions of the module, LANE_ID and SUBGROUP_ID, which
`define` writes once the module is lowered: the local x and y where the module calls no sub-group built-in else (its
lanes exchange no values, or through their slots, lane_slots.py: the OpenCL CPU compiler then builds no masked copy of
the kernel), else the sub-group built-ins, which a CPU that runs the driver's sub-group kernels faster takes for every
module (CpuFeatures.subgroup_builtin_ids: AVX-512, and AVX2 where the kernel runs no DPAS, `multiplies`). A kernel that
exchanges lanes by built-ins gets the masked copy whatever its ids, and with local ids the tests' GEMM of 2x2 subgroups
with a reducing epilogue read the wrong rows' maxima in its lane gathers on the OpenCL CPU runtime
(tests/codegen/test_spirv_gemm.py), where the same kernel with the built-ins and the same local range is right. Both
functions are inlined (SPIR-V `FunctionControl Inline`).
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.core import FuncOp, walk
from ...ir.simt_ops import SimtDpasOp
from .declarations import declared

LANE_ID, LANE_INDEX, SUBGROUP_ID = "xetile.lane_id", "xetile.lane_index", "xetile.subgroup_id"
BUILTINS = {LANE_ID: "__spirv_BuiltInSubgroupLocalInvocationId", LANE_INDEX: "__spirv_BuiltInSubgroupLocalInvocationId",
            SUBGROUP_ID: "__spirv_BuiltInSubgroupId"}
LOCAL_AXES = {LANE_ID: 0, LANE_INDEX: 0, SUBGROUP_ID: 1}
# what the OpenCL CPU compiler counts as a sub-group built-in, in the names the lowering declares (SPIR-V emitter)
SUBGROUP_PREFIXES = ("__spirv_Group", "__spirv_Subgroup", "__spirv_BuiltInSubgroup", "__spirv_BuiltInNumSubgroups")
I32, I64 = ir.IntType(32), ir.IntType(64)  # (codegen/llvm/context.py imports this module)


def call(b: ir.IRBuilder, name: str) -> ir.Value:
    """A call of LANE_ID or SUBGROUP_ID (i32) or LANE_INDEX (the lane as i64), declared on first use. An address
    steps by LANE_INDEX: the OpenCL CPU compiler vectorizes a per-lane load or store across the lanes where its
    address steps by the local id or the sub-group's lane built-in, and took the local id truncated to i32 and
    extended again as any value, gathering element by element (the tutorial f32 GEMM's loads of B with AVX2
    code: a fifth of its time on the AVX2 EPYC; docs/performance.md "GEMM on the `cpu` target")."""
    return b.call(declared(b.module, name, ir.FunctionType(I64 if name == LANE_INDEX else I32, [])), [])


def multiplies(func: FuncOp) -> bool:
    """Whether the work-item-level kernel `func` runs a DPAS (CpuFeatures.subgroup_builtin_ids asks)."""
    return any(isinstance(op, SimtDpasOp) for op in walk(func.body))


def define(module: ir.Module, builtin_ids: bool) -> None:
    """Writes the bodies of the ids the module calls (module docstring); the sub-group built-ins in every module
    with `builtin_ids` (CpuFeatures.subgroup_builtin_ids)."""
    called = [module.globals[name] for name in BUILTINS if name in module.globals]
    by_builtins = builtin_ids or any(g.name.startswith(SUBGROUP_PREFIXES) for g in module.global_values
                                     if isinstance(g, ir.Function) and g.is_declaration)
    for fn in called:
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        if by_builtins:
            value = b.call(declared(module, BUILTINS[fn.name], ir.FunctionType(I32, [])), [])
        else:
            local = declared(module, "__spirv_BuiltInLocalInvocationId", ir.FunctionType(I64, [I32]))
            value = b.call(local, [ir.Constant(I32, LOCAL_AXES[fn.name])])
        returns = fn.function_type.return_type
        b.ret(value if value.type == returns else b.zext(value, returns) if returns == I64 else b.trunc(value, returns))
