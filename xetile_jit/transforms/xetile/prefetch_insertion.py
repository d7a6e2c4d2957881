"""Prefetch `distance` loop steps ahead (the `prefetch_distance` compile option; `transform.xegpu.insert_prefetch`).

The rule: in an scf.for, a tile that is loop-carried and yielded moved by `update_tile_offset` with offsets
defined outside the loop or constant (the K walk of a GEMM), and loaded (`load_tile`) in the loop body before or
after the move, is loaded at init + (i + lead) * offsets in iteration i (lead 0 or 1). Before the loop the
positions of its first `distance` loads are prefetched; the loop then carries a prefetch tile of its own,
`distance` loads ahead (init + (i + lead + distance) * offsets in iteration i), prefetched at the start of the
body, before the load, and moved by the same offsets (RFC Appendix 2.1, `transform.xegpu.insert_prefetch`).
Tiles of shared local memory are left alone.
The prefetch tiles are a copy of the loaded tile's init_tile (and moves) without its layout: a tile only prefetched
takes the cooperative layout in layout propagation (transforms/xetile/layout_propagation.py: all subgroups share
it, each byte prefetched once a workgroup, in pieces one 2D prefetch message each), not the load's, under which
the subgroups that hold the same A rows or B columns would each prefetch them. A walked tile made elsewhere (an
outer loop's carried tile) or not row-major is prefetched through moves of itself, with its layout.
Prefetches beyond the array are dropped by the hardware, so the last iterations need no guard. Prefetches change no
value (the interpreter runs them as no-ops); on a target whose 2D block prefetch reaches no cache
(Target.block_prefetch: the CPU ones, xe-hpg) the pass does nothing. Rewrites `func` in place, at the XeTile level
before layouts are chosen.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...ir import core_ops as C
from ...ir import xetile_ops as X
from ...ir.analysis import sources
from ...ir.core import Block, FuncOp, Value, walk
from ...ir.types import ROW_MAJOR, SlmMemRefType
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
    """The prologue before `loop`, and a prefetch tile carried by `loop`, prefetched at the start of its body
    `distance` steps ahead of the load and moved by the walk's offsets."""
    outer = loop.parent

    def before_loop(op):
        return outer.insert_before(loop, op).result

    # the offsets, defined before the loop (a constant is copied, wherever it was defined)
    step = [before_loop(C.ConstantOp(v.owner.value, v.type, loc=loop.loc)) if isinstance(v.owner, C.ConstantOp)
            else v for v in walked.offsets]
    tile = prefetch_start(loop, loop.operands[3 + walked.index])
    # the prologue prefetches what iterations 0 .. distance - 1 load; the last move starts the carried tile
    for position in range(walked.lead + distance + 1):
        if position:
            tile = before_loop(X.UpdateTileOffsetOp(tile, step, loc=loop.loc))
        if walked.lead <= position < walked.lead + distance:
            outer.insert_before(loop, X.PrefetchTileOp(tile, loc=loop.loc))
    ahead = loop.carry(tile, "prefetch")
    body = loop.body
    body.prepend(X.PrefetchTileOp(ahead, loc=loop.loc))
    moved = body.insert_before(body.terminator, X.UpdateTileOffsetOp(ahead, step, loc=loop.loc))
    body.terminator.set_operands(list(body.terminator.operands) + [moved.result])


def prefetch_start(loop: C.ForOp, tile: Value) -> Value:
    """The tile the prefetches of the walk that starts at `tile` start from: a copy, made before `loop`, of the
    init_tile and moves that make `tile`, with no layout, so that layout propagation gives it the cooperative
    layout of a tile only prefetched (every subgroup prefetches a part, each byte once a workgroup); `tile`
    itself, sharing the load's layout, where it comes from elsewhere (an outer loop's carried tile) or is not
    row-major (the cooperative layout is for row-major tiles)."""
    chain = []
    source = tile
    while isinstance(source.owner, X.UpdateTileOffsetOp):
        chain.append(source.owner)
        source = source.owner.operands[0]
    if not isinstance(source.owner, X.InitTileOp) or source.type.order != ROW_MAJOR:
        return tile
    init = source.owner
    copy = loop.parent.insert_before(loop, init.copy_with(init.operands, [replace(source.type, layout=None)]))
    start = copy.result
    for move in reversed(chain):
        start = loop.parent.insert_before(loop, X.UpdateTileOffsetOp(start, move.operands[1:], loc=move.loc)).result
    return start
