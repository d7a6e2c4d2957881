"""Verifier driver: every op's own rules (`Operation.verify`), then the kernel-wide layout rule."""
from __future__ import annotations

from .core import FuncOp, walk
from .xetile_ops import layouts_of


def verify(func: FuncOp) -> None:
    for op in walk(func.body):
        op.verify()
    check_subgroup_count(func)


def check_subgroup_count(func: FuncOp) -> None:
    """RFC: wg_size = prod(sg_layout) is the number of subgroups of the workgroup, so one per kernel."""
    first = None
    for op in walk(func.body):
        for layout in layouts_of(op):
            if first is None:
                first = layout
            elif layout.num_subgroups != first.num_subgroups:
                raise op.error(f"layout {layout} has {layout.num_subgroups} subgroups but {first} has "
                               f"{first.num_subgroups}", "prod(sg_layout) is the same for every layout of a kernel")
