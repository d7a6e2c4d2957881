"""Subgroup-level XeGPU IR whose exchange buffers share memory where no barrier window holds two of them.

wg-to-sg gives each exchange of a reshape or value shape op a scratch buffer of its own (an SLM allocation seen
only through views), so that exchange_stores.py and needless_barriers.py see no conflict between two exchanges that
none orders. Once the barriers are final, two buffers of one dtype may be one: where every access of one lies in an
earlier window (between barriers of the function's body) than every access of the other, a barrier orders each
pair. Buffers accessed in a loop's or a branch's body keep their own (a loop's next iteration lies beyond what its
windows show). The buffers are coloured as intervals of windows, each merged buffer as large as the largest of its
own; a kernel whose accesses this pass cannot place (an access of unknown memory) keeps them all.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass

from ...ir import core_ops as C
from ...ir.core import FuncOp, walk
from ...ir.shape_ops import MemRefReinterpretCastOp
from .access_windows import UNSEEN, Accesses


def scratch_allocs(func: FuncOp) -> list[C.SlmAllocOp]:
    """wg-to-sg's scratch buffers: SLM allocations of its own, used only through views."""
    return [op for op in walk(func.body) if isinstance(op, C.SlmAllocOp) and not op.by_user and op.result.uses
            and all(isinstance(user, MemRefReinterpretCastOp) for user, _ in op.result.uses)]


def windows(func: FuncOp, accesses: Accesses) -> tuple[dict, set] | None:
    """(memory -> [first, last] window of the body's that touches it, the memory touched inside regions), or None
    where an access's memory is unknown."""
    spans: dict = {}
    nested: set = set()
    window = 0
    for op in func.body.ops:
        if isinstance(op, C.BarrierOp):
            window += 1
            continue
        # the ops inside its regions, nested ones' included (walk visits their contents)
        inner = [n for region in op.regions for n in walk(region.block)
                 if not isinstance(n, C.BarrierOp) and not n.regions]
        for each in inner or [op]:
            touches = accesses.touches(each)
            if UNSEEN in touches:
                return None
            for touch in touches:
                for memory in touch.memory:
                    if inner:
                        nested.add(memory)
                    first, _ = spans.get(memory, (window, window))
                    spans[memory] = (first, window)
    return spans, nested


@dataclass
class Colour:
    """Scratch buffers that share memory: each one's windows come after the one's before it."""
    last: int  # the last window one of them is touched in
    allocs: list

    @property
    def count(self) -> int:
        return max(alloc.result.type.shape[1] for alloc in self.allocs)


def share_exchange_buffers(func: FuncOp) -> FuncOp:
    """`func` with its scratch buffers merged where no window holds two of them (module docstring)."""
    placed = windows(func, Accesses(func))
    if placed is None:
        return func
    spans, nested = placed
    by_dtype = defaultdict(list)
    for alloc in scratch_allocs(func):
        if alloc.result in spans and alloc.result not in nested:
            by_dtype[alloc.result.type.dtype].append(alloc)
    position = {op: i for i, op in enumerate(func.body.ops)}
    for allocs in by_dtype.values():
        colours: list[Colour] = []
        for alloc in sorted(allocs, key=lambda a: spans[a.result]):
            first, last = spans[alloc.result]
            free = [colour for colour in colours if colour.last < first]
            if free:
                colour = max(free, key=lambda c: c.count)
                colour.last = last
                colour.allocs.append(alloc)
            else:
                colours.append(Colour(last, [alloc]))
        for colour in colours:
            kept, *merged = sorted(colour.allocs, key=position.get)  # the first defined, before every view
            merge(kept, merged, colour.count)
    return func


def merge(kept: C.SlmAllocOp, merged: list[C.SlmAllocOp], count: int) -> None:
    """`merged`'s views read `kept`, which grows to `count` elements (the largest of them)."""
    kept.result.type = dataclasses.replace(kept.result.type, shape=(1, count))
    for alloc in merged:
        alloc.result.replace_all_uses_with(kept.result)
        alloc.erase()
