"""The kernel arguments of a kernel whose ABI packs its arrays' sizes (BuiltinAbi.packed_sizes, codegen/llvm/core.py
SIZES): dpctl's submit costs about 1.4 us an argument on the OpenCL CPU device, and a 2-D array's four i64 sizes
and strides were four of them (docs/performance.md "Launch overhead").

A launch's arguments come as for the unpacked ABI, each array's pointer followed by its sizes and strides
(ArrayArg.kernel_args, memory.size_args); `SizePacking` keeps the pointers and scalars in order and passes every
array's sizes as one `dpctl.RawKernelArg` after them. Each launch plan has its own SizePacking, and a plan's key fixes
the shape and strides of every array it launches (jit/launch_plan.py), so the RawKernelArg is made at the plan's first
launch and passed as it is at every later one: a launch then takes only its pointers and scalars, from each
argument's part (`parts`: the binder's, or LaunchPlan.kernel_args') or from a synchronous launch's flat list
(`__call__`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter

import dpctl

from .args import ArraySpec


@dataclass
class SizePacking:
    kept: tuple[int, ...]  # positions of the pointers and scalars in the unpacked arguments
    sizes: tuple[int, ...]  # positions of the arrays' sizes and strides there
    packed: object = field(default=None, init=False, repr=False)  # the plan's RawKernelArg, from its first launch

    @classmethod
    def of(cls, specs) -> SizePacking:
        """The packing of a kernel's arguments of `specs` (ArraySpec or ScalarSpec, in order): an array passes its
        pointer, then its shape and strides (2 x rank)."""
        kept, sizes, position = [], [], 0
        for spec in specs:
            kept.append(position)
            fields = 2 * spec.rank if isinstance(spec, ArraySpec) else 0
            sizes += range(position + 1, position + 1 + fields)
            position += 1 + fields
        return cls(tuple(kept), tuple(sizes))

    def __call__(self, args: list) -> list:
        """The flat arguments `args` packed, as `parts` packs each argument's."""
        ends = (*self.kept[1:], len(args))
        return self.parts([args[start:end] for start, end in zip(self.kept, ends)])

    def parts(self, parts) -> list:
        """The arguments of `parts`, each kernel argument's (an array's pointer and sizes, a scalar), packed (the
        same sizes at every call: the module docstring): the pointers and scalars are each part's first item, so no
        flat list is made (20 arrays: 100 items)."""
        if not self.sizes:
            return AS_GIVEN.parts(parts)
        if self.packed is None:  # two threads' first launches make the same bytes
            self.packed = dpctl.RawKernelArg(b"".join(bytes(size) for part in parts for size in part[1:]))
        return [*map(FIRST, parts), self.packed]


class AsGiven:
    """The arguments of an ABI that takes each array's sizes as arguments of their own (the GPU targets')."""

    def __call__(self, args: list) -> list:
        return args

    def parts(self, parts) -> list:
        return list(chain.from_iterable(parts))


AS_GIVEN = AsGiven()
FIRST = itemgetter(0)
