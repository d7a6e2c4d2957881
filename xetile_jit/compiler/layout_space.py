"""`xetile.layouts`: every legal (sg_layout, sg_data) of a workgroup tile, to generate autotuning
configs rather than type them.

Legal is the XeTile RFC's distribution rule (ir/xetile_ops.py `check_distribution`: sg_data divides the tile and
sg_layout x sg_data divides it or is a multiple of it) without the multiple case: there subgroups would hold the
same data, which repeats work rather than sharing it; so sg_layout x sg_data divides the tile (one piece per
subgroup, or several in round robin). Then the target's rules: the workgroup's work-items (Target.workgroup_rule)
and the register budget of one subgroup's piece of `dtype` (code_budget.register_budget; the default f32 is a
tile_mma accumulator's). Without `num_subgroups`, every subgroup count the target allows.
"""
from __future__ import annotations

from ..target.code_budget import register_budget
from ..target.targets import get_target
from ..ir.types import DType, float32
from ..runtime.device import NUMPY, select_device

INTERPRETER_TARGET = "cpu"  # the numpy interpreter takes any layout: enumerate the portable target's


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def layouts(shape, *, num_subgroups: int | None = None, target: str | None = None,
            dtype: DType | None = None) -> list[tuple[list[int], list[int]]]:
    """The legal (sg_layout, sg_data) pairs of a `shape` workgroup tile (module docstring) for `target` (default:
    the default device's), by sg_layout then sg_data."""
    rows, cols = shape
    if target is None:
        target = select_device().target
    chosen = get_target(INTERPRETER_TARGET if target == NUMPY else target)
    budget = register_budget(chosen) // max(1, (dtype or float32).bits // 8)  # elements of one piece
    result = []
    for layout_rows in divisors(rows):
        for layout_cols in divisors(cols):
            count = layout_rows * layout_cols
            if num_subgroups not in (None, count) or chosen.workgroup_rule(count):
                continue
            for data_rows in divisors(rows // layout_rows):
                result += [([layout_rows, layout_cols], [data_rows, data_cols])
                           for data_cols in divisors(cols // layout_cols) if data_rows * data_cols <= budget]
    return result
