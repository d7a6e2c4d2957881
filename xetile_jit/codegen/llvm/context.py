"""What the pieces of a to-llvm lowering share: `LoweringContext`, the func being lowered, its LLVM module, the target
(None for the target-free base lowering of codegen/llvm/core.py), the value map (IR value -> LLVM value or memref),
the builder (made with the kernel's entry block), the lane values of the XeGPU lowering (`lanes`, codegen/llvm/lanes.py)
and the calls every piece makes: a declared function, a SPIR-V built-in, an op's lowered operands. A lowering class
holds one (`LLVMLowering.context`) and composes its pieces, each an object constructed with it and with the pieces it
builds on: component-wise vectors (codegen/llvm/components.py), descriptors (codegen/llvm/descriptors.py), block
messages (codegen/llvm/block_messages.py), transposed loads (codegen/llvm/transposed.py), the element path
(codegen/llvm/elements.py), DPAS, atomics, scatter, printf, and on the CPU targets negation (codegen/cpu/negation.py),
the lane values and DPAS of codegen/cpu/lowering.py, the piece accesses (codegen/cpu/pieces.py) and block loops
(codegen/cpu/block_loops.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from llvmlite import ir

from ...ir.core import FuncOp, Operation
from ...target.targets import Target
from . import lane_slots, work_item_ids
from .declarations import declared

if TYPE_CHECKING:  # the lanes module builds on codegen/llvm/core.py, which builds on this one
    from .lanes import Lanes

I32, I64 = ir.IntType(32), ir.IntType(64)


@dataclass(eq=False)
class LoweringContext:
    func: FuncOp
    module: ir.Module
    target: Target | None = None
    values: dict = field(default_factory=dict)
    builder: ir.IRBuilder | None = None
    lanes: Lanes | None = None  # the XeGPU lowering's lane values (codegen/llvm/lanes.py)
    lockstep: bool | None = None  # `lockstep_lanes`, once asked

    def call(self, name: str, return_type: ir.Type, *args: ir.Value) -> ir.Value:
        """A call of function `name`, declared on first use; a module has one signature per name."""
        signature = ir.FunctionType(return_type, [a.type for a in args])
        return self.builder.call(declared(self.module, name, signature), args)

    def builtin(self, name: str, axis: int | None = None) -> ir.Value:
        """`__spirv_BuiltIn<name>`: component `axis` (i64) of a 3-component built-in, else an i32 built-in."""
        if axis is None:
            return self.call(f"__spirv_BuiltIn{name}", I32)
        return self.call(f"__spirv_BuiltIn{name}", I64, ir.Constant(I32, axis))

    def lane_id(self) -> ir.Value:
        """The work-item's lane in its sub-group (i32): through work_item_ids.LANE_ID where the target's ABI lays
        sub-groups out as the rows of the local range (BuiltinAbi.subgroup_rows), else the sub-group built-in."""
        if self.subgroup_rows():
            return work_item_ids.call(self.builder, work_item_ids.LANE_ID)
        return self.builtin("SubgroupLocalInvocationId")

    def lane_index(self) -> ir.Value:
        """`lane_id` as i64, for addresses (work_item_ids.call says why not `lane_id` extended)."""
        if self.subgroup_rows():
            return work_item_ids.call(self.builder, work_item_ids.LANE_INDEX)
        return self.builder.zext(self.builtin("SubgroupLocalInvocationId"), ir.IntType(64))

    def subgroup_id(self) -> ir.Value:
        """The work-item's sub-group in its workgroup (i32), as `lane_id`."""
        if self.subgroup_rows():
            return work_item_ids.call(self.builder, work_item_ids.SUBGROUP_ID)
        return self.builtin("SubgroupId")

    def subgroup_rows(self) -> bool:
        return self.target is not None and self.target.abi.subgroup_rows

    def lockstep_lanes(self) -> bool:
        """Whether the kernel's lanes exchange values through their slots (codegen/llvm/lane_slots.py): where the
        target's ABI runs sub-groups in lockstep (BuiltinAbi.lockstep_lanes), for a kernel `lockstep_kernel` admits."""
        if self.lockstep is None:
            self.lockstep = lane_slots.through_slots(self.target, self.func)
        return self.lockstep

    def operands(self, op: Operation) -> list:
        """The lowered values of `op`'s operands."""
        return [self.values[v] for v in op.operands]
