"""Part of the to-llvm stage (codegen/llvm/core.py): a lane's vectors computed as their components, where the target says so
(Target.lane_scalars, the CPU targets). There a loop carries a phi a component, and an element-wise op,
comparison, cast or select on vectors is one op a component: the OpenCL CPU compiler kept a vector value lane after
lane in memory and transposed it around its uses (docs/performance.md "CPU notes")."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

from llvmlite import ir

from .context import LoweringContext

I32 = ir.IntType(32)


@dataclass(eq=False)
class Components:
    """A lowering's vectors, computed as their components where `lane_scalars` (the target's Target.lane_scalars;
    False for the target-free base lowering)."""
    context: LoweringContext
    lane_scalars: bool = False

    @property
    def builder(self) -> ir.IRBuilder:
        return self.context.builder

    def componentwise(self, fn, *vectors: ir.Value) -> ir.Value:
        """The vector of `fn` applied to each component of `vectors`."""
        b = self.builder
        parts = [fn(*(b.extract_element(v, ir.Constant(I32, i)) for v in vectors))
                 for i in range(vectors[0].type.count)]
        return self.vector_of(parts)

    def per_component(self, fn, *xs: ir.Value) -> ir.Value:
        """fn(*xs), or where `splits(xs)` the vector of fn on each component."""
        return self.componentwise(fn, *xs) if self.splits(xs) else fn(*xs)

    def splits(self, xs) -> bool:
        """Whether an op on `xs` is one op a component: lane_scalars, and they are vectors."""
        return self.lane_scalars and all(isinstance(x.type, ir.VectorType) for x in xs)

    @contextlib.contextmanager
    def whole(self):
        """Vectors computed as vectors inside the block, lane_scalars or not: for a vector whose components are the
        same on every lane (a whole sub-group's values read as one row of its slots), which the OpenCL CPU compiler
        keeps in one register and combines with vector instructions; as components, it took three times the
        instructions to rebuild the vectors (layer norm's two row sums: 50 against 16)."""
        kept, self.lane_scalars = self.lane_scalars, False
        try:
            yield
        finally:
            self.lane_scalars = kept

    def vector_of(self, parts: list[ir.Value]) -> ir.Value:
        """The vector of `parts`, in order."""
        result = ir.Constant(ir.VectorType(parts[0].type, len(parts)), ir.Undefined)
        for i, part in enumerate(parts):
            result = self.builder.insert_element(result, part, ir.Constant(I32, i))
        return result

    def carried_parts(self, values: list[ir.Value]) -> list[ir.Value]:
        """What a loop's phis carry of `values`: the values, or with lane_scalars each vector's components."""
        if not self.lane_scalars:
            return values
        b = self.builder
        return [part for value in values for part in
                ([b.extract_element(value, ir.Constant(I32, i)) for i in range(value.type.count)]
                 if isinstance(value.type, ir.VectorType) else [value])]

    def carried_values(self, types: list[ir.Type], parts: list[ir.Value]) -> list[ir.Value]:
        """The values of `types` whose carried_parts are `parts`."""
        if not self.lane_scalars:
            return parts
        parts = iter(parts)
        return [self.vector_of([next(parts) for _ in range(ty.count)]) if isinstance(ty, ir.VectorType)
                else next(parts) for ty in types]
