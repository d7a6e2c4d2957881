"""Prefetch `distance` loop steps ahead (the `prefetch_distance` compile option; the seed PR's `insert_prefetch`).

The rule: in an scf.for, a tile that is loop-carried, loaded (`load_tile`) in the loop body and yielded moved by
`update_tile_offset` with offsets defined outside the loop (the K walk of a GEMM) is loaded at init + i * offsets
in iteration i (an offset defined in the loop must be a constant). Before the loop its first `distance` positions are prefetched (init, init + offsets, ...); in
the body, one `prefetch_tile` of the tile `distance` steps ahead (the carried tile + distance * offsets) per loaded
tile and iteration, before the load. Prefetches beyond the array are dropped by the hardware, so the last
iterations need no guard. Prefetches change no value (the interpreter runs them as no-ops); on a target whose 2D
block prefetch reaches no cache (Target.block_prefetch: the CPU ones, xe-hpg) the pass does nothing. Rewrites
`func` in place, at the XeTile level before layouts are chosen: the new tiles take the layouts of the loaded ones.
"""
from __future__ import annotations

from ..ir import core_ops as C
from ..ir import xetile_ops as X
from ..ir.core import Block, FuncOp, Value, walk
from .targets import Target


def insert_prefetch(func: FuncOp, target: Target, distance: int) -> FuncOp:
    if distance <= 0 or not target.block_prefetch:
        return func
    for loop in [op for op in walk(func.body) if isinstance(op, C.ForOp)]:
        for carried, offsets in walked_tiles(loop):
            prefetch_ahead(loop, carried, offsets, distance)
    return func


def walked_tiles(loop: C.ForOp) -> list[tuple[int, list[Value]]]:
    """(index of the carried tile, its offsets) of each tile the rule applies to, in order."""
    body = loop.body
    inside = defined_inside(body)
    found = []
    for index, (arg, out) in enumerate(zip(body.args[1:], body.terminator.operands)):
        loaded = any(isinstance(use, X.LoadTileOp) and use.parent is body for use, _ in arg.uses)
        step = out.owner
        if loaded and isinstance(step, X.UpdateTileOffsetOp) and step.operands[0] is arg and \
                all(v not in inside or isinstance(v.owner, C.ConstantOp) for v in step.operands[1:]):
            found.append((index, list(step.operands[1:])))
    return found


def defined_inside(body: Block) -> set[Value]:
    """The values `body` defines: its arguments and those of nested blocks, and every op's results."""
    values = set(body.args)
    for op in walk(body):
        values.update(op.results)
        values.update(arg for region in op.regions for arg in region.block.args)
    return values


def prefetch_ahead(loop: C.ForOp, index: int, offsets: list[Value], distance: int) -> None:
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

    step = [scaled(v, 1) for v in offsets]
    tile = loop.operands[3 + index]
    for ahead in range(distance):  # the prologue: the positions of iterations 0 .. distance - 1
        if ahead:
            tile = before_loop(X.UpdateTileOffsetOp(tile, step, loc=loop.loc))
        outer.insert_before(loop, X.PrefetchTileOp(tile, loc=loop.loc))
    far = [scaled(v, distance) for v in offsets]
    body = loop.body
    moved = body.prepend(X.UpdateTileOffsetOp(body.args[1 + index], far, loc=loop.loc))
    body.insert_after(moved, X.PrefetchTileOp(moved.result, loc=loop.loc))
