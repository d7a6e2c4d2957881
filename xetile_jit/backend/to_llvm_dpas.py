"""to-llvm of DPAS at the work-item level: `xegpu.dpas` (SIMT) through the target's DPAS builtin (xe_builtins.py),
written inline on the `cpu` target (dpas_emulation.py); f32 x f32 as exact f32 multiply-adds, each lane taking the
rows of A from the lane that holds them (targets.py says why), tf32 operands truncated first where the target has
no tf32 DPAS."""
from __future__ import annotations

from llvmlite import ir

from . import xe_builtins as X
from .dpas_emulation import dpas_result, tf32
from .to_llvm import I32, counted_loop, llvm_type, splat
from .to_llvm_elements import PrivateBlock


class DpasLowering:
    """Mixin of the XeGPU lowering (to_llvm_xegpu.py): lower_SimtDpasOp."""

    def lower_SimtDpasOp(self, op):
        """The target's DPAS builtin for the operands' kind (tf32 for input_precision "tf32" where the target has
        it), on the `cpu` target its emulation written inline; f32 x f32 otherwise as multiply-adds."""
        a, b, *c = op.operands
        rows = op.layouts[2].block[0]
        acc = self.values[c[0]] if c else splat(llvm_type(op.result.type), 0)
        kind = self.target.dpas_kind(a.type.dtype, op.precision)
        if kind == "f32":
            return self.fma_mma(self.values[a], self.values[b], acc, op.precision)
        key = X.Dpas(kind, "tf32" if kind == "tf32" else (op.vnni_b or b.type.dtype).mlir, m=rows)
        mad = X.describe(self.target, key)
        a_value, b_value = (self.dpas_operand(self.values[v], t) for v, t in zip((a, b), mad.signature.args))
        if self.target.builtins == "vector":  # inline: a call's vector arguments went through memory lane by lane
            return dpas_result(self.builder, mad, a_value, b_value, acc, self.private(ir.ArrayType(I32, 8)))
        return self.builder.call(X.builtin(self.module, self.target, key), [a_value, b_value, acc])

    def dpas_operand(self, value: ir.Value | PrivateBlock, ty: ir.Type) -> ir.Value:
        """A lane's A or B as the DPAS builtin takes it (`ty`): its bits, read in one load from private memory
        when larger than a vector (8-bit B: 32 bytes a lane, eight words)."""
        if isinstance(value, PrivateBlock):
            return self.read_run(self.reinterpret(value, ty), 0, ty.count)
        return value if value.type == ty else self.builder.bitcast(value, ty)

    def fma_mma(self, a: ir.Value, b: ir.Value, acc: ir.Value, precision: str) -> ir.Value:
        """C[r][n] += A[r][k] * B[k][n]: lane n gets A[r][k] from lane k, k ascending, each a fused multiply-add
        (the GPU's mad; a CPU's FMA). tf32 (a target without tf32 DPAS): the operands truncated to tf32 first, as
        the interpreter's rule says. Row by row in scalars; on a CPU as a loop over k, B's components read from a
        private array, as the DPAS emulation (dpas_emulation.dpas_result says why), on a GPU unrolled (a variable
        lane or index there is an indirect register access)."""
        bld = self.builder
        rows, columns = ([tf32(bld, bld.bitcast(x, I32)) for x in self.elements(v)] if precision == "tf32"
                         else self.elements(v) for v in (a, b))

        def step(k: ir.Value, sums: list, b_k: ir.Value) -> list:
            return [self.opencl("fma", self.shuffle(a_r, k), b_k, total) for total, a_r in zip(sums, rows)]

        if not self.target.emulated:
            sums = self.elements(acc)
            for k, b_k in enumerate(columns):
                sums = step(ir.Constant(I32, k), sums, b_k)
            return self.assemble(sums)
        block = PrivateBlock(self.private(ir.ArrayType(columns[0].type, len(columns))))
        for i, b_k in enumerate(columns):
            bld.store(b_k, block.slot(bld, i))
        return self.assemble(counted_loop(bld, len(columns), self.elements(acc), lambda bld, k, sums: step(
            k, sums, bld.load(block.slot(bld, k)))))
