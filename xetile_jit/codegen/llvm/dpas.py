"""to-llvm of DPAS at the work-item level: `xegpu.dpas` (SIMT) through the target's DPAS builtin
(codegen/xe/builtins.py); f32 x f32 as exact f32 multiply-adds, each lane taking the rows of A from the lane that holds
them (target/targets.py says why), tf32 operands truncated first where the target has no tf32 DPAS, unrolled (a
variable lane or index on a GPU is an indirect register access). `Dpas` works on the lowering's context
(codegen/llvm/context.py); the XeGPU lowering (codegen/llvm/lowering.py) holds one. The CPU lowerings' pieces
(codegen/cpu/lowering.py) override the hooks: `dpas_run` (the DPAS ops lowered together, `dpas_batches` of those
sharing A), `dpas_products` (the builtin's emulation written inline) and `fma_mma` (loops over k)."""
from __future__ import annotations

from llvmlite import ir

from ..xe import builtins as X
from ..xe.dpas_emulation import tf32
from .context import LoweringContext
from .core import I32, llvm_type, splat
from .descriptors import Descriptors
from .lanes import PrivateBlock


# DPAS ops sharing A lowered as loops over k on the `cpu` target (dpas_batches), each A element shuffled from its lane
# once for all of them; their rows' sums in groups that fit the CPU's registers (dpas_emulation.row_groups).
SHARED_A = 4


class Dpas:
    """DPAS on `context` (`lower`), with the builtin ABI's `definitions`; `opencl(name, *xs)` is the lowering's OpenCL
    call (LLVMLowering.opencl); `descriptors` the kernel's tensor descriptors (codegen/llvm/descriptors.py), where
    the CPU lowering reads A in its memory. `results`: the results of DPAS ops lowered with an earlier one
    (dpas_batches)."""

    def __init__(self, context: LoweringContext, definitions: X.Definitions, opencl, descriptors: Descriptors):
        self.context = context
        self.definitions = definitions
        self.opencl = opencl
        self.descriptors = descriptors
        self.results = {}

    def lower(self, op):
        """The target's DPAS builtin for the operands' kind (tf32 for input_precision "tf32" where the target has
        it), with the DPAS ops of `dpas_run` (those sharing an A in the same loops); f32 x f32 otherwise as
        multiply-adds."""
        if op in self.results:
            return self.results.pop(op)
        run = self.dpas_run(op)
        results = self.lower_run(run)
        self.results.update((o, results[o.result]) for o in run[1:])
        return results[op.result]

    def lower_run(self, run: list) -> dict:
        """The result of each op of `run` (dpas_run), by value."""
        return self.lower_batches(run, {})

    def lower_batches(self, run: list, columns: dict) -> dict:
        """`lower_run`'s results, batch by batch (dpas_batches); `columns` as `lower_dpas_batch` takes them."""
        results = {}
        for batch in dpas_batches(run):
            values = self.lower_dpas_batch(batch, results, columns)
            results.update(zip((o.result for o in batch), values))
        return results

    def dpas_run(self, op) -> list:
        """The DPAS ops lowered with `op`: on a GPU, `op` alone."""
        return [op]

    def lower_dpas_batch(self, batch: list, earlier: dict, columns: dict) -> list:
        """The batch's results, their C the results of earlier batches (`earlier`) or lowered values; `columns`: B
        values the run has prepared (B value -> its lane's column, where the CPU lowering widens each B once)."""
        first = batch[0]
        a = first.operands[0]
        accs = [self.accumulator(o, earlier) for o in batch]
        kind = self.kind(first)
        if kind == "f32":
            return self.fma_mma(self.context.values[a], [o.operands[1] for o in batch], accs, first.precision, columns)
        key = self.builtin_key(first, kind)
        mad = X.describe(self.context.target, key)
        a_value = self.dpas_operand(self.context.values[a], mad.signature.args[0])
        return self.dpas_products(key, mad, a_value, batch, accs, columns)

    def kind(self, op) -> str:
        """The DPAS table key of `op` (Target.dpas_kind)."""
        return self.context.target.dpas_kind(op.operands[0].type.dtype, op.precision)

    def builtin_key(self, op, kind: str) -> X.Dpas:
        """The DPAS builtin of `op`, whose operands' kind is `kind` (Target.dpas_kind)."""
        return X.Dpas(kind, "tf32" if kind == "tf32" else (op.vnni_b or op.operands[1].type.dtype).mlir,
                      m=op.layouts[2].block[0])

    def dpas_products(self, key: X.Dpas, mad: X.DpasBuiltin, a_value: ir.Value, batch: list, accs: list,
                      columns: dict) -> list:
        """A * B + C of each op of `batch` (A lowered, `a_value`; C `accs`): calls of the DPAS builtin."""
        builtin = X.builtin(self.context.module, self.context.target, key, self.definitions)
        b_type = mad.signature.args[1]
        return [self.context.builder.call(builtin, [a_value, self.dpas_operand(self.context.values[o.operands[1]],
                                                                               b_type), acc])
                for o, acc in zip(batch, accs)]

    def accumulator(self, op, earlier: dict) -> ir.Value:
        """C of `op`: the result of an earlier batch (`earlier`), its lowered value, or zeros."""
        c = op.operands[2:]
        if not c:
            return splat(llvm_type(op.result.type), 0)
        return earlier[c[0]] if c[0] in earlier else self.context.values[c[0]]

    def dpas_operand(self, value: ir.Value | PrivateBlock, ty: ir.Type) -> ir.Value:
        """A lane's A or B as the DPAS builtin takes it (`ty`): its bits, read in one load from private memory
        when larger than a vector (8-bit B: 32 bytes a lane, eight words)."""
        if isinstance(value, PrivateBlock):
            lanes = self.context.lanes
            return lanes.read_run(lanes.reinterpret(value, ty), 0, ty.count)
        return value if value.type == ty else self.context.builder.bitcast(value, ty)

    def fma_mma(self, a: ir.Value, bs: list, accs: list[ir.Value], precision: str, columns: dict) -> list[ir.Value]:
        """C[r][n] += A[r][k] * B[k][n] for each (B, C) of `bs` (B's IR values), `accs`: lane n gets A[r][k] from
        lane k, k ascending, each a fused multiply-add (the GPU's mad; a CPU's FMA). tf32 (a target without tf32
        DPAS): the operands truncated to tf32 first, as the interpreter's rule says. Row by row in scalars,
        unrolled."""
        rows = self.mma_elements(a, precision)
        results = []
        for b, acc in zip(bs, accs):
            sums = self.context.lanes.elements(acc)
            for k, b_k in enumerate(self.mma_elements(self.context.values[b], precision)):
                sums = self.fma_step(self.a_column(rows, ir.Constant(I32, k)), sums, b_k)
            results.append(self.context.lanes.assemble(sums))
        return results

    def fma_step(self, a_k: list, sums: list, b_k: ir.Value) -> list:
        """Each of `sums` plus its row's A[r][k] (`a_k`) times B[k][n] (`b_k`), a fused multiply-add."""
        return [self.opencl("fma", a_r, b_k, total) for a_r, total in zip(a_k, sums)]

    def mma_elements(self, value, precision: str) -> list[ir.Value]:
        """A lane's components of an f32 tile_mma operand, truncated to tf32 for precision "tf32"."""
        return [self.mma_element(x, precision) for x in self.context.lanes.elements(value)]

    def mma_element(self, x: ir.Value, precision: str) -> ir.Value:
        """An f32 element of a tile_mma operand as the multiply-adds take it: truncated to tf32 for "tf32"."""
        b = self.context.builder
        return tf32(b, b.bitcast(x, I32)) if precision == "tf32" else x

    def a_column(self, rows: list[ir.Value], k: ir.Value) -> list[ir.Value]:
        """A[r][k] of each of `rows` on every lane: lane k's element of each row."""
        return [self.context.lanes.shuffle(a_r, k) for a_r in rows]


def dpas_batches(run: list) -> list[list]:
    """A run of DPAS ops in batches lowered one after another: up to SHARED_A ops of one A value and kind whose
    operands are lowered or computed by earlier batches, in the run's order otherwise."""
    produced = {o.result for o in run}
    remaining, done, batches = list(run), set(), []

    def ready(o):
        return all(v in done or v not in produced for v in o.operands)

    while remaining:
        first = next(o for o in remaining if ready(o))
        batch = [first]
        for o in remaining:
            if len(batch) < SHARED_A and o is not first and ready(o) and same_a(o, first):
                batch.append(o)
        batches.append(batch)
        remaining = [o for o in remaining if o not in batch]
        done.update(o.result for o in batch)
    return batches


def same_a(op, other) -> bool:
    """Whether two DPAS ops take the same A the same way (their B and C may differ)."""
    return (op.operands[0] is other.operands[0] and op.precision == other.precision and op.vnni_b == other.vnni_b
            and op.layouts == other.layouts and op.operands[1].type == other.operands[1].type)
