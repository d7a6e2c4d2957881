"""Verifier driver: every op's declared memory effects (ir/effects.py), its own rules (`Operation.verify`), the
layout rules on every value it produces, then the kernel-wide rules: all layouts agree on the number of subgroups,
shared local memory is allocated in the kernel's body (once per workgroup, not per loop iteration or branch)."""
from __future__ import annotations

from .core import FuncOp, Operation, walk
from .core_ops import SlmAllocOp
from .effects import check_effects
from .xetile_ops import check_result_layouts, layout_of


def verify(func: FuncOp) -> None:
    for op in walk(func.body):
        verify_op(op)
    check_subgroup_count(func)
    check_slm_allocs(func)


def verify_op(op: Operation) -> None:
    check_effects(op)
    op.verify()
    check_result_layouts(op)


def check_subgroup_count(func: FuncOp) -> None:
    """RFC: wg_size = prod(sg_layout) is the number of subgroups of the workgroup, so one per kernel."""
    first = None
    for op in walk(func.body):
        for layout in filter(None, map(layout_of, op.results)):
            if layout.sg_layout is None:
                continue  # a subgroup-level layout
            if first is None:
                first = layout
            elif layout.num_subgroups != first.num_subgroups:
                raise op.error(f"layout {layout} has {layout.num_subgroups} subgroups but {first} has "
                               f"{first.num_subgroups}", "prod(sg_layout) is the same for every layout of a kernel")


def check_slm_allocs(func: FuncOp) -> None:
    top = set(func.body.ops)
    for op in walk(func.body):
        if isinstance(op, SlmAllocOp) and op not in top:
            raise op.error("allocates shared local memory inside a loop or branch",
                           "SLM is allocated once per workgroup, in the kernel's body")
