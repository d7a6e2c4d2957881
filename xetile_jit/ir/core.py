"""The IR skeleton shared by every level: values, operations, blocks, regions, functions and the builder.

An op class holds everything about one op: its operands and attributes, its printed syntax (`format`),
its RFC rules (`verify`) and its numpy semantics (`interpret`).
"""
from __future__ import annotations

import contextlib
from typing import ClassVar, Iterator

from ..errors import CompilationError, Loc
from .types import Type


class Value:
    """An SSA value. A vector value may carry the layout (RFC wg_map) that says how subgroups share it;
    a tile's layout is part of its type."""

    __slots__ = ("type", "owner", "name_hint", "layout")

    def __init__(self, type: Type, owner=None, name_hint: str | None = None):
        self.type = type
        self.owner = owner
        self.name_hint = name_hint
        self.layout = None

    def __repr__(self) -> str:
        return f"<Value {self.name_hint or ''}: {self.type}>"


class Operation:
    name: ClassVar[str] = "op"

    def __init__(self, operands=(), result_types=(), regions=(), loc: Loc | None = None):
        self.operands: list[Value] = list(operands)
        self.results: list[Value] = [Value(t, self) for t in result_types]
        self.regions: list[Region] = list(regions)
        self.loc = loc

    @property
    def result(self) -> Value:
        return self.results[0]

    def error(self, message: str, rule: str | None = None) -> CompilationError:
        text = f"{self.name}: {message}"
        if rule:
            text += f" [{rule}]"
        return CompilationError(text, self.loc)

    def verify(self) -> None:
        """Check the RFC's rules for this op; raise `self.error(...)` naming the rule broken."""

    def interpret(self, interp, *args):
        raise NotImplementedError(f"the numpy interpreter has no rule for {self.name}")

    def format(self, p) -> str:
        """The printed text after the op name (operands, attributes, types)."""
        return " " + ", ".join(p.name(v) for v in self.operands) + " : " + ", ".join(
            str(v.type) for v in self.results)


class Block:
    def __init__(self, arg_types=(), arg_names=()):
        names = list(arg_names) + [None] * (len(arg_types) - len(arg_names))
        self.args = [Value(t, self, n) for t, n in zip(arg_types, names)]
        self.ops: list[Operation] = []

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops else None


class Region:
    def __init__(self, block: Block):
        self.block = block


class FuncOp(Operation):
    """`func.func`: the kernel. One program instance is one workgroup (DESIGN 1)."""

    name = "func.func"

    def __init__(self, sym_name: str, arg_types, arg_names, constexprs: dict, loc=None, dialect: str = "xetile"):
        super().__init__(regions=[Region(Block(arg_types, arg_names))], loc=loc)
        self.sym_name = sym_name
        self.constexprs = dict(constexprs)
        self.dialect = dialect  # which IR level the body is in; the printer spells layouts accordingly
        self.num_subgroups: int | None = None  # set once the body is subgroup-level IR
        self.lanes: int | None = None  # set once the body is work-item-level IR: the subgroup size

    @property
    def body(self) -> Block:
        return self.regions[0].block

    @property
    def args(self) -> list[Value]:
        return self.body.args


def walk(block: Block) -> Iterator[Operation]:
    """Every op of `block`, nested regions included, in program order."""
    for op in block.ops:
        yield op
        for region in op.regions:
            yield from walk(region.block)


class Builder:
    """Appends ops at the end of the current block, stamping each with the current source location."""

    def __init__(self, block: Block):
        self.block = block
        self.loc: Loc | None = None

    def create(self, op_class, *args, **kwargs):
        op = op_class(*args, loc=self.loc, **kwargs)
        self.block.ops.append(op)
        return op

    @contextlib.contextmanager
    def at_end_of(self, block: Block):
        """Inserts into `block` inside the `with`, then back where it was."""
        saved, self.block = self.block, block
        try:
            yield block
        finally:
            self.block = saved
