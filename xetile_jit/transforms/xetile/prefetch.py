"""Prefetch `distance` loop steps ahead (the `prefetch_distance` compile option; `transform.xegpu.insert_prefetch`).

The rule: in an scf.for, a tile that is loop-carried and yielded moved by `update_tile_offset` with offsets
defined outside the loop or constant (the K walk of a GEMM), and loaded (`load_tile`) in the loop body before or
after the move, is loaded at init + (i + lead) * offsets in iteration i (lead 0 or 1). Before the loop the
positions of its first `distance` loads are prefetched; in the body, one `prefetch_tile` of the tile `distance`
loads ahead (the carried tile + (lead + distance) * offsets) per loaded tile and iteration, before the load.
Tiles of shared local memory are left alone.
Prefetches beyond the array are dropped by the hardware, so the last iterations need no guard. Prefetches change no
value (the interpreter runs them as no-ops); on a target whose 2D block prefetch reaches no cache
(Target.block_prefetch: the CPU ones, xe-hpg) the pass does nothing. Rewrites `func` in place, at the XeTile level
before layouts are chosen: the new tiles take the layouts of the loaded ones.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import core_ops as C
from ...ir import xetile_ops as X
from ...ir.analysis import sources
from ...ir.core import Block, FuncOp, Value, walk
from ...ir.types import SlmMemRefType
from ...target.targets import Target


def insert_prefetch(func: FuncOp, target: Target, distance: int) -> FuncOp:
    if distance <= 0 or not target.block_prefetch:
        return func
    arrays = sources(func, X.InitTileOp, X.UpdateTileOffsetOp)
    for loop in [op for op in walk(func.body) if isinstance(op, C.ForOp)]:
        for walked in walked_tiles(loop):
            if in_global_memory(arrays.get(loop.operands[3 + walked.index], ())):
                prefetch_ahead(loop, walked, distance)
    return func


@dataclass(frozen=True)
class Walk:
    """A loop-carried tile (`index` among the carried values) moved by `offsets` each iteration; iteration i loads
    it at init + (i + lead) * offsets (lead 1: the moved tile is what is loaded)."""
    index: int
    offsets: tuple[Value, ...]
    lead: int


def in_global_memory(arrays) -> bool:
    """Whether a tile reads only global arrays (a prefetch of shared local memory would warm no cache)."""
    return all(not isinstance(array.type, SlmMemRefType) for array in arrays)


def walked_tiles(loop: C.ForOp) -> list[Walk]:
    """The tiles the rule applies to, in order."""
    body = loop.body
    inside = defined_inside(body)
    found = []
    for index, (arg, out) in enumerate(zip(body.args[1:], body.terminator.operands)):
        step = out.owner
        if not (isinstance(step, X.UpdateTileOffsetOp) and step.operands[0] is arg and
                all(v not in inside or isinstance(v.owner, C.ConstantOp) for v in step.operands[1:])):
            continue
        lead = next((lead for lead, tile in enumerate((arg, step.result)) if loaded_in(tile, body)), None)
        if lead is not None:
            found.append(Walk(index, tuple(step.operands[1:]), lead))
    return found


def loaded_in(tile: Value, body: Block) -> bool:
    return any(isinstance(use, X.LoadTileOp) and use.parent is body for use, _ in tile.uses)


def defined_inside(body: Block) -> set[Value]:
    """The values `body` defines: its arguments and those of nested blocks, and every op's results."""
    values = set(body.args)
    for op in walk(body):
        values.update(op.results)
        values.update(arg for region in op.regions for arg in region.block.args)
    return values


def prefetch_ahead(loop: C.ForOp, walked: Walk, distance: int) -> None:
    """The prologue before `loop` and the prefetch `distance` steps ahead at the start of its body."""
    outer = loop.parent

    def before_loop(op):
        return outer.insert_before(loop, op).result

    def scaled(v: Value, times: int) -> Value:
        """`v` * `times`, defined before the loop (a constant is folded, wherever it was defined)."""
        if isinstance(v.owner, C.ConstantOp):
            return before_loop(C.ConstantOp(v.owner.value * times, v.type, loc=loop.loc))
        if times == 1:
            return v
        return before_loop(C.BinaryOp("arith.muli", v, before_loop(C.ConstantOp(times, v.type, loc=loop.loc)),
                                      loc=loop.loc))

    step = [scaled(v, 1) for v in walked.offsets]
    tile = loop.operands[3 + walked.index]
    for position in range(walked.lead + distance):  # the prologue: what iterations 0 .. distance - 1 load
        if position:
            tile = before_loop(X.UpdateTileOffsetOp(tile, step, loc=loop.loc))
        if position >= walked.lead:
            outer.insert_before(loop, X.PrefetchTileOp(tile, loc=loop.loc))
    far = [scaled(v, walked.lead + distance) for v in walked.offsets]
    body = loop.body
    moved = body.prepend(X.UpdateTileOffsetOp(body.args[1 + walked.index], far, loc=loop.loc))
    body.insert_after(moved, X.PrefetchTileOp(moved.result, loc=loop.loc))
