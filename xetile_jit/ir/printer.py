"""Prints IR in the RFCs' MLIR-like syntax. Values get `%name` from the Python variable when known, else `%N`."""
from __future__ import annotations

from .attrs import Layout
from .core import Block, FuncOp, Operation, Value
from .core_ops import format_float
from .types import MemRefType

ARG_ATTRS = ("block_io", "within_extents", "strided")  # the MemRefType fields an argument attribute gives when false


def format_attr(value) -> str:
    """A constexpr as an MLIR attribute literal."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_attr(v) for v in value) + "]"
    return str(value)


class Printer:
    def __init__(self, dialect: str = "xetile"):
        self.dialect = dialect
        self.names: dict[Value, str] = {}
        self.used: set[str] = set()
        self.counter = 0
        self.lines: list[str] = []

    def name(self, v: Value) -> str:
        if v not in self.names:
            self.names[v] = self._fresh(v.name_hint)
        return self.names[v]

    def _fresh(self, hint: str | None) -> str:
        if hint is None:
            while f"%{self.counter}" in self.used:
                self.counter += 1
            text = f"%{self.counter}"
        else:
            text, n = f"%{hint}", 0
            while text in self.used:
                n += 1
                text = f"%{hint}_{n}"
        self.used.add(text)
        return text

    def attr_dict(self, op: Operation, attrs: dict | None = None) -> str:
        """` {k = v, ...}`: `attrs`, then the layouts of vector results (RFC: `wg_map` on the op)."""
        items = dict(attrs or {})
        vectors = [v for v in op.results if v.layout is not None]
        if len(op.results) == 1 and vectors:
            items["wg_map" if self.dialect == "xetile" else "layout"] = vectors[0].layout
        else:
            items.update((f"layout_result_{op.results.index(v)}", v.layout) for v in vectors)
        if not items:
            return ""
        return " {" + ", ".join(f"{k} = {self.attr(v)}" for k, v in items.items()) + "}"

    def attr(self, value) -> str:
        return value.text(self.dialect) if isinstance(value, Layout) else str(value)

    def print_op(self, op: Operation, indent: int) -> None:
        results = ""
        if len(op.results) == 1:
            results = f"{self.name(op.result)} = "
        elif op.results:
            base = self._fresh(None)
            for i, v in enumerate(op.results):
                self.names[v] = f"{base}#{i}"
            results = f"{base}:{len(op.results)} = "
        for v in (a for r in op.regions for a in r.block.args):
            self.name(v)
        text = " " * indent + results + op.name + op.format(self)
        if not op.regions:
            self.lines.append(text)
            return
        separator = getattr(op, "region_separator", " ")
        for i, region in enumerate(op.regions):
            self.lines.append(text + " {" if i == 0 else " " * indent + "}" + separator + "{")
            self.print_block(region.block, indent + 2)
        self.lines.append(" " * indent + "}" + self.attr_dict(op))

    def print_block(self, block: Block, indent: int) -> None:
        for op in block.ops:
            self.print_op(op, indent)

    def arg_attrs(self, t) -> str:
        """At the XeGPU levels, whose code reads them, an array whose memory 2D block messages cannot take, or whose
        extents a target's any-layout builtins cannot, or that is dense row-major, says so (MLIR argument
        attributes; MemRefType.block_io, within_extents, strided)."""
        if self.dialect == "xetile" or not isinstance(t, MemRefType):
            return ""
        items = [f"xegpu.{name} = false" for name in ARG_ATTRS if not getattr(t, name)]
        return " {" + ", ".join(items) + "}" if items else ""

    def print_func(self, func: FuncOp) -> str:
        args = ", ".join(f"{self.name(a)}: {a.type}{self.arg_attrs(a.type)}" for a in func.args)
        items = dict(func.constexprs)
        if func.num_subgroups is not None:
            items["num_subgroups"] = func.num_subgroups
        if func.lanes is not None:
            items["lanes"] = func.lanes
        attrs = ""
        if items:
            attrs = " attributes {" + ", ".join(f"{k} = {format_attr(v)}" for k, v in items.items()) + "}"
        self.lines.append(f"func.func @{func.sym_name}({args}){attrs} {{")
        self.print_block(func.body, 2)
        self.lines.append("}")
        return "\n".join(self.lines)


def print_func(func: FuncOp) -> str:
    return Printer(func.dialect).print_func(func)
