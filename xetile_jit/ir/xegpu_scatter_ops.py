"""XeGPU scattered descriptors (XeGPU RFC `create_tdesc`, `load`, `store`, `update_offset`, `atomic_rmw` with
`#xegpu.scatter_tdesc_attr<>`), at the workgroup, subgroup and block levels, and their SIMT flavor.

A descriptor holds one element offset per element (xetile-to-xegpu expands a chunk into its consecutive
offsets, so every level distributes offsets, masks and values alike: one layout, one cut, one lane layout);
the semantics are ScatterRef's (ir/scatter_ops.py). `valid` is the leading part of a block that blocking padded
past the value: the rest reads padding and writes nothing. In the SIMT flavor each lane holds its elements'
offsets, mask bits and values in the block's lane layout; the interpreter gathers them into the block and
applies the same rule.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core import Operation, Value
from .effects import reads, writes
from .elementwise import ATOMIC_KINDS
from .scatter_ops import ScatterRef, mask_text, mask_type_text
from .simt_ops import LaneLayout, lane_attrs, parse_lane_layout
from .types import MemRefType, VectorType
from .xegpu_ops import TensorDescType
from .xetile_ops import parse_atomic, valid_attr, valid_of


@dataclass(frozen=True)
class ScatterDescType(TensorDescType):
    def __str__(self) -> str:
        body = f"{'x'.join(map(str, self.shape))}x{self.dtype.mlir}"
        layout = f", {self.layout.text('xegpu')}" if self.layout else ""
        return f"!xegpu.tensor_desc<{body}, #xegpu.scatter_tdesc_attr<>{layout}>"


def check_scatter_desc(op: Operation, t) -> None:
    if not isinstance(t, ScatterDescType):
        raise op.error(f"operand must be a scattered tensor descriptor, got {t}", f"{op.name} takes a scatter tdesc")


def check_same_shape(op: Operation, v: Value, tdesc, what: str, dtype_kind: str | None = None) -> None:
    """Offsets, deltas, masks and values come in the descriptor's shape (per lane: its lane type)."""
    t = v.type
    ok = isinstance(t, VectorType) and t.shape == tdesc.shape if op.layout is None else \
        t == op.layout.lane_type(t.dtype)
    if not ok or (dtype_kind == "int" and not t.dtype.is_int) or (dtype_kind == "bool" and not t.dtype.is_bool):
        raise op.error(f"{what} {t} does not match {tdesc}", "offsets, mask and value match the tensor_desc")


class ScatterOp(Operation):
    """Shared by the scattered ops: `layout` is None above the SIMT level; there, `block`/`lanes` move between a
    lane's values and the block they are part of."""

    layout: LaneLayout | None = None

    def block(self, x):
        return x if self.layout is None or x is None else self.layout.gather(x)

    def lanes(self, x):
        return x if self.layout is None else self.layout.distribute(x)


def format_with_offsets(op: ScatterOp, p) -> str:
    """`x, offsets {their lane layout} : types -> result` (create_tdesc, update_offset)."""
    x, offsets = op.operands
    attrs = p.attr_dict(op, lane_attrs("layout_operand_1", op.layout))
    return f" {p.name(x)}, {p.name(offsets)}{attrs} : {x.type}, {offsets.type} -> {op.result.type}"


def parse_with_offsets(p) -> tuple[Value, Value, LaneLayout | None, object]:
    """(x, offsets, lane layout, result type) of format_with_offsets's text."""
    x, offsets = p.values_n(2)
    layout = parse_lane_layout(p, p.attrs(), "layout_operand_1", required=False)
    p.expect(":")
    p.typed([x, offsets])
    p.expect("->")
    return x, offsets, layout, p.type()


class CreateDescOp(ScatterOp):
    """`xegpu.create_tdesc %base, %offsets : memref, vector<16xindex> -> tensor_desc<16xbf16, #scatter_tdesc>`."""

    name = "xegpu.create_tdesc"
    effects = ()

    def __init__(self, base: Value, offsets: Value, tdesc_type: ScatterDescType, layout: LaneLayout | None = None,
                 loc=None):
        super().__init__([base, offsets], [tdesc_type], loc=loc)
        self.layout = layout

    def verify(self):
        base, offsets = self.operands
        if not isinstance(base.type, MemRefType):
            raise self.error(f"base must be a memref, got {base.type}", "create_tdesc takes a base address")
        check_scatter_desc(self, self.result.type)
        check_same_shape(self, offsets, self.result.type, "offsets", "int")

    def format(self, p) -> str:
        return format_with_offsets(self, p)

    @classmethod
    def parse(cls, p, name):
        base, offsets, layout, result_type = parse_with_offsets(p)
        return cls(base, offsets, result_type, layout)

    def interpret(self, interp, base, offsets):
        return ScatterRef(base, np.asarray(self.block(offsets), dtype=np.int64).reshape(self.block_shape))

    @property
    def block_shape(self):
        return self.layout.block if self.layout is not None else self.result.type.shape


class LoadGatherXOp(ScatterOp):
    """`xegpu.load %tdesc, %mask {padding} : tensor_desc, vector<16xi1> -> vector<16xbf16>`."""

    name = "xegpu.load"
    effects = (reads(0),)

    def __init__(self, tdesc: Value, mask: Value | None, result_type, padding=0, valid=None,
                 layout: LaneLayout | None = None, loc=None):
        super().__init__([tdesc] + ([mask] if mask is not None else []), [result_type], loc=loc)
        self.padding, self.valid, self.layout = padding, valid, layout

    @property
    def mask(self) -> list[Value]:
        return list(self.operands[1:])

    def verify(self):
        check_scatter_desc(self, self.operands[0].type)
        for m in self.mask:
            check_same_shape(self, m, self.operands[0].type, "mask", "bool")

    def format(self, p) -> str:
        t = self.operands[0]
        attrs = {"padding": self.padding} if self.padding != 0 else {}
        attrs.update(valid_attr(self))
        attrs.update(lane_attrs("layout_result_0", self.layout))
        return (f" {p.name(t)}{mask_text(p, self.mask)}{p.attr_dict(self, attrs)} : {t.type}"
                f"{mask_type_text(self.mask)} -> {self.result.type}")

    @classmethod
    def parse(cls, p, name):
        tdesc, *mask = operands = p.operands()
        attrs = p.attrs()
        layout = parse_lane_layout(p, attrs, "layout_result_0", required=False)
        p.expect(":")
        p.typed(operands)
        p.expect("->")
        return cls(tdesc, *(mask or [None]), p.type(), attrs.pop("padding", 0), valid_of(attrs), layout)

    def interpret(self, interp, tile: ScatterRef, mask=None):
        return self.lanes(tile.load(self.padding, self.block(mask), self.valid))


class StoreScatterXOp(ScatterOp):
    """`xegpu.store %value, %tdesc, %mask : vector<16xbf16>, tensor_desc, vector<16xi1>`."""

    name = "xegpu.store"
    effects = (writes(1),)

    def __init__(self, value: Value, tdesc: Value, mask: Value | None, valid=None, layout: LaneLayout | None = None,
                 loc=None):
        super().__init__([value, tdesc] + ([mask] if mask is not None else []), [], loc=loc)
        self.valid, self.layout = valid, layout

    @property
    def mask(self) -> list[Value]:
        return list(self.operands[2:])

    def verify(self):
        value, tdesc = self.operands[:2]
        check_scatter_desc(self, tdesc.type)
        check_same_shape(self, value, tdesc.type, "value")
        for m in self.mask:
            check_same_shape(self, m, tdesc.type, "mask", "bool")

    def format(self, p) -> str:
        value, t = self.operands[:2]
        attrs = p.attr_dict(self, {**valid_attr(self), **lane_attrs("layout_operand_0", self.layout)})
        return (f" {p.name(value)}, {p.name(t)}{mask_text(p, self.mask)}{attrs} : "
                f"{value.type}, {t.type}{mask_type_text(self.mask)}")

    @classmethod
    def parse(cls, p, name):
        value, tdesc, *mask = operands = p.operands()
        attrs = p.attrs()
        layout = parse_lane_layout(p, attrs, "layout_operand_0", required=False)
        p.expect(":")
        p.typed(operands)
        return cls(value, tdesc, *(mask or [None]), valid_of(attrs), layout)

    def interpret(self, interp, value, tile: ScatterRef, mask=None):
        tile.store(self.block(value), self.block(mask), self.valid)


class UpdateOffsetOp(ScatterOp):
    """`xegpu.update_offset %tdesc, %delta : tensor_desc, vector<16xindex> -> tensor_desc`."""

    name = "xegpu.update_offset"
    effects = ()

    def __init__(self, tdesc: Value, delta: Value, layout: LaneLayout | None = None, loc=None):
        super().__init__([tdesc, delta], [tdesc.type], loc=loc)
        self.layout = layout

    def verify(self):
        check_scatter_desc(self, self.operands[0].type)
        check_same_shape(self, self.operands[1], self.operands[0].type, "delta", "int")

    def format(self, p) -> str:
        return format_with_offsets(self, p)

    @classmethod
    def parse(cls, p, name):
        tdesc, delta, layout, result_type = parse_with_offsets(p)
        return p.result_type(cls(tdesc, delta, layout), result_type)

    def interpret(self, interp, tile: ScatterRef, delta):
        return tile.moved(np.asarray(self.block(delta), dtype=np.int64).reshape(tile.offsets.shape))


class ScatterAtomicRMWOp(ScatterOp):
    """`xegpu.atomic_rmw <addf> %value, %tdesc, %mask : vector<16xbf16>, tensor_desc, vector<16xi1> -> vector`."""

    name = "xegpu.atomic_rmw"
    effects = (reads(1), writes(1))

    def __init__(self, kind: str, value: Value, tdesc: Value, mask: Value | None, valid=None,
                 layout: LaneLayout | None = None, loc=None):
        super().__init__([value, tdesc] + ([mask] if mask is not None else []), [value.type], loc=loc)
        self.kind, self.valid, self.layout = kind, valid, layout

    compare: tuple = ()  # no compare-and-swap on a scattered descriptor (AtomicRMWScatterOp.check_compare)

    @property
    def mask(self) -> list[Value]:
        return list(self.operands[2:])

    verify = StoreScatterXOp.verify

    def format(self, p) -> str:
        value, t = self.operands[:2]
        kind = ATOMIC_KINDS[self.kind][t.type.dtype.kind].rmw
        attrs = p.attr_dict(self, {**valid_attr(self), **lane_attrs("layout_result_0", self.layout)})
        return (f" <{kind}> {p.name(value)}, {p.name(t)}{mask_text(p, self.mask)}{attrs} : {value.type}, {t.type}"
                f"{mask_type_text(self.mask)} -> {self.result.type}")

    @classmethod
    def parse(cls, p, name):
        kind, (value, tdesc, *mask), attrs, result_type = parse_atomic(p, 2, 3)
        if not isinstance(tdesc.type, ScatterDescType):
            raise p.error(f"{name} with a mask takes a scattered tensor_desc, not {tdesc.type}")
        layout = parse_lane_layout(p, attrs, "layout_result_0", required=False)
        return p.result_type(cls(kind, value, tdesc, *(mask or [None]), valid_of(attrs), layout), result_type)

    def interpret(self, interp, value, tile: ScatterRef, mask=None):
        return self.lanes(tile.atomic(self.kind, self.block(value), self.block(mask), self.valid))

