"""to-llvm of `device_print` (ir/debug_ops.py): OpenCL.std printf, its format string a constant in UniformConstant
memory, the workgroup id first on each line."""
from __future__ import annotations

from llvmlite import ir

from ...ir.types import DType
from .core import CONSTANT, I8, I32, I64


class PrintLowering:
    """Mixin of the XeGPU lowering (codegen/llvm/lowering.py, which gives builder, module, builtin, operands, to_compute and
    `strings`: the module's format strings, one global each)."""

    def lower_DevicePrintOp(self, op):
        """Scalars, the same in every work-item: printed by the workgroup's first one."""
        b = self.builder
        first = b.and_(*(b.icmp_unsigned("==", self.builtin(name), ir.Constant(I32, 0))
                         for name in ("SubgroupId", "SubgroupLocalInvocationId")))
        with b.if_then(first):
            self.call_printf(op, self.operands(op))

    def call_printf(self, op, values: list[ir.Value], index=()) -> None:
        """OpenCL printf of `op`'s line (ir/debug_ops.py): the workgroup id, `index` (i64) and `values`."""
        ids = [self.builtin("WorkgroupId", axis) for axis in range(3)]
        numbers = [self.printf_argument(x, v.type.dtype) for x, v in zip(values, op.values)]
        self.builder.call(self.printf(), [self.string_constant(op.format_string), *ids, *index, *numbers])

    def printf_argument(self, x: ir.Value, dtype: DType) -> ir.Value:
        """As C's variadic arguments: floats as double, bools and integers narrower than 32 bits as i32."""
        b = self.builder
        if dtype.is_float:
            return b.fpext(self.to_compute(x, dtype), ir.DoubleType())
        if dtype.bits < 32:
            return (b.sext if dtype.kind == "i" else b.zext)(x, I32)
        return x

    def printf(self) -> ir.Function:
        """`i32 __spirv_ocl_printf(i8 addrspace(2)* format, ...)`: OpenCL.std printf."""
        name = "__spirv_ocl_printf"
        if name in self.module.globals:
            return self.module.globals[name]
        return ir.Function(self.module, ir.FunctionType(I32, [ir.PointerType(I8, CONSTANT)], var_arg=True), name)

    def string_constant(self, text: str) -> ir.Value:
        """A pointer to `text`, NUL-terminated, in UniformConstant memory (addrspace 2)."""
        if text not in self.strings:
            data = bytearray(text.encode() + b"\0")
            array = ir.Constant(ir.ArrayType(I8, len(data)), data)
            string = ir.GlobalVariable(self.module, array.type, self.module.get_unique_name("format"),
                                       addrspace=CONSTANT)
            string.linkage, string.global_constant, string.initializer = "internal", True, array
            self.strings[text] = string
        return self.builder.gep(self.strings[text], [ir.Constant(I64, 0)] * 2, inbounds=True)
