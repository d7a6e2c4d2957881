"""Lane-gather folding: SIMT IR -> SIMT IR, after lane distribution.

Lane distribution makes each data movement of blocking one `xegpu.lane_gather`, so a chain of them (a flipped block
realigned, then built up slice by slice by insert_strided_slice) moves components lane to lane several times. A
lane_gather that reads another's result reads that one's sources instead, by the composed tables, where the
composition takes fewer moves between lanes (ir/simt_ops.py row_moves: a shuffle or a broadcast), or as many and no
more selects (one for each source component of a row past the first), than the two did: the reader's alone when
the other has further readers, both when this was its only one. The gathers no one reads any more go.
"""
from __future__ import annotations

import numpy as np

from ...ir import simt_ops as S
from ...ir.core import FuncOp, Value, walk
from ...ir.verifier import verify


def fold_lane_gathers(func: FuncOp) -> FuncOp:
    for op in list(walk(func.body)):  # program order: a gather's sources are folded before it is
        if isinstance(op, S.LaneGatherOp) and op.parent is not None:
            fold(op)
    verify(func)
    return func


def fold(op: S.LaneGatherOp) -> None:
    inner = [v for v in dict.fromkeys(op.operands) if isinstance(v.owner, S.LaneGatherOp)]
    if not inner:
        return
    sources, lanes, components = composed(op, inner)
    only_reader = [v.owner for v in inner if {user for user, _ in v.uses} == {op}]
    before = [cost(g.source_lanes, g.components) for g in [op] + only_reader]
    if cost(lanes, components) > tuple(map(sum, zip(*before))):
        return
    folded = S.LaneGatherOp(sources, op.result.type, lanes, components, loc=op.loc)
    op.parent.insert_before(op, folded)
    op.result.replace_all_uses_with(folded.result)
    op.erase()
    for gather in only_reader:
        gather.erase()


def composed(op: S.LaneGatherOp, inner: list[Value]) -> tuple[list[Value], np.ndarray, np.ndarray]:
    """The sources and tables of `op` reading the sources of the gathers that make `inner`, not their results (only
    the sources some lane reads)."""
    outer, pools = pool(op), {v: pool(v.owner) for v in inner}
    entries = {}  # (result component, lane) -> (source, its component, the lane it is read from)
    for c, l in np.ndindex(op.source_lanes.shape):
        (value, k), lane = outer[op.components[c, l]], op.source_lanes[c, l]
        if value in pools:  # component k of lane `lane` of that gather's result: where the gather took it
            gather = value.owner
            (value, k), lane = pools[value][gather.components[k, lane]], gather.source_lanes[k, lane]
        entries[c, l] = value, k, lane
    read = {value for value, _, _ in entries.values()}
    order = [v for v in op.operands if v not in pools] + [s for v in inner for s in v.owner.operands]
    sources = [v for v in dict.fromkeys(order) if v in read]
    first = dict(zip(sources, np.cumsum([0] + [S.elements(v.type) for v in sources])))
    lanes, components = op.source_lanes.copy(), op.components.copy()
    for (c, l), (value, k, lane) in entries.items():
        lanes[c, l], components[c, l] = lane, first[value] + k
    return sources, lanes, components


def pool(gather: S.LaneGatherOp) -> list[tuple[Value, int]]:
    """(source, component) of each component of the gather's sources set side by side."""
    return [(v, k) for v in gather.operands for k in range(S.elements(v.type))]


def cost(lanes: np.ndarray, components: np.ndarray) -> tuple[int, int]:
    """(moves between lanes, selects) of a lane_gather's tables."""
    plan = S.gather_plan(lanes, components)
    return S.moves_in(plan), sum(len(row) - 1 for row in plan)
