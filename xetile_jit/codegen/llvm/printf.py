"""to-llvm of `device_print` (ir/debug_ops.py): OpenCL.std printf, its format string a constant in UniformConstant
memory, the workgroup id first on each line. A `Printer` works on the lowering's context (codegen/llvm/context.py)
and keeps the module's format strings; the XeGPU lowering (codegen/llvm/lowering.py) holds one."""
from __future__ import annotations

from llvmlite import ir

from ...ir.types import DType
from .context import LoweringContext
from .core import CONSTANT, I8, I32, I64, to_compute


class Printer:
    """device_print on `context`; `strings`: the module's format strings, one global each."""

    def __init__(self, context: LoweringContext):
        self.context = context
        self.strings: dict[str, ir.GlobalVariable] = {}

    def lower(self, op) -> None:
        """A DevicePrintOp: scalars, the same in every work-item, printed by the workgroup's first one."""
        b, context = self.context.builder, self.context
        first = b.and_(*(b.icmp_unsigned("==", lane, ir.Constant(I32, 0))
                         for lane in (context.subgroup_id(), context.lane_id())))
        with b.if_then(first):
            self.call_printf(op, context.operands(op))

    def call_printf(self, op, values: list[ir.Value], index=()) -> None:
        """OpenCL printf of `op`'s line (ir/debug_ops.py): the workgroup id, `index` (i64) and `values`."""
        ids = [self.context.builtin("WorkgroupId", axis) for axis in range(3)]
        numbers = [self.printf_argument(x, v.type.dtype) for x, v in zip(values, op.values)]
        self.context.builder.call(self.printf(), [self.string_constant(op.format_string), *ids, *index, *numbers])

    def printf_argument(self, x: ir.Value, dtype: DType) -> ir.Value:
        """As C's variadic arguments: floats as double, bools and integers narrower than 32 bits as i32."""
        b = self.context.builder
        if dtype.is_float:
            return b.fpext(to_compute(b, x, dtype), ir.DoubleType())
        if dtype.bits < 32:
            return (b.sext if dtype.kind == "i" else b.zext)(x, I32)
        return x

    def printf(self) -> ir.Function:
        """`i32 __spirv_ocl_printf(i8 addrspace(2)* format, ...)`: OpenCL.std printf."""
        module, name = self.context.module, "__spirv_ocl_printf"
        if name in module.globals:
            return module.globals[name]
        return ir.Function(module, ir.FunctionType(I32, [ir.PointerType(I8, CONSTANT)], var_arg=True), name)

    def string_constant(self, text: str) -> ir.Value:
        """A pointer to `text`, NUL-terminated, in UniformConstant memory (addrspace 2)."""
        module = self.context.module
        if text not in self.strings:
            data = bytearray(text.encode() + b"\0")
            array = ir.Constant(ir.ArrayType(I8, len(data)), data)
            string = ir.GlobalVariable(module, array.type, module.get_unique_name("format"), addrspace=CONSTANT)
            string.linkage, string.global_constant, string.initializer = "internal", True, array
            self.strings[text] = string
        return self.context.builder.gep(self.strings[text], [ir.Constant(I64, 0)] * 2, inbounds=True)
