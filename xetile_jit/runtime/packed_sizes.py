"""The kernel arguments of a kernel whose ABI packs its arrays' sizes (BuiltinAbi.packed_sizes, codegen/llvm/core.py
SIZES): dpctl's submit costs about 1.2 us an argument on the OpenCL CPU device, and a 2-D array's four i64 sizes
and strides were four of them (docs/performance.md "Launch overhead").

A launch's arguments come as for the unpacked ABI, each array's pointer followed by its sizes and strides
(ArrayArg.kernel_args, memory.size_args); `SizePacking` keeps the pointers and scalars in order and passes every
array's sizes as one `dpctl.RawKernelArg` after them. The size arguments are the objects `memory.size_args` keeps
per shape and strides (`memory.SizeArg`, hashed by identity), so they key the RawKernelArg of their bytes: a launch
with the shapes of an earlier one costs two item gets and a lookup (2.6-5 us at 20 arrays timed alone, against the
~100 us the submit of a 20-array launch saves).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Callable

import dpctl

from .args import ArraySpec

MAX_PACKED = 4096
_PACKED: dict = {}  # a launch's size arguments (memory.SizeArg, by identity) -> their RawKernelArg


@dataclass
class SizePacking:
    kept: tuple[int, ...]  # positions of the pointers and scalars in the unpacked arguments
    sizes: tuple[int, ...]  # positions of the arrays' sizes and strides there
    # C-level item gets of those positions (a tuple even of one); None where there are no sizes to pack
    pick_kept: Callable = field(init=False, repr=False)
    pick_sizes: Callable | None = field(init=False, repr=False)

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

    def __post_init__(self):
        self.pick_kept = picker(self.kept)
        self.pick_sizes = picker(self.sizes) if self.sizes else None

    def __call__(self, args: list) -> list:
        """`args` with the size arguments packed."""
        if self.pick_sizes is None:
            return args
        sizes = self.pick_sizes(args)
        packed = _PACKED.get(sizes)
        if packed is None:
            if len(_PACKED) >= MAX_PACKED:
                _PACKED.clear()
            packed = _PACKED[sizes] = dpctl.RawKernelArg(b"".join(map(bytes, sizes)))
        return [*self.pick_kept(args), packed]


def picker(positions: tuple[int, ...]):
    """A function giving the items of a list at `positions`, as a tuple."""
    get = itemgetter(*positions)
    return get if len(positions) > 1 else lambda items: (get(items),)
