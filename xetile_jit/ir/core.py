"""The IR skeleton shared by every level: values, operations, blocks, regions, functions and the builder.

An op class holds everything about one op: its operands and attributes, its memory effects (`effects`, see
ir/effects.py), its printed syntax (`format`), its RFC rules (`verify`) and its numpy semantics (`interpret`).

The mutation API keeps the IR's links right: every value knows its uses (the ops and operand indices that read
it) and every op in a block knows that block. Operands change only through `Operation.set_operand` and
`Value.replace_all_uses_with`; ops enter and leave blocks only through `Block.append / insert_before /
insert_after / prepend` and `Operation.erase / detach`.
"""
from __future__ import annotations

import contextlib
import copy
from typing import ClassVar, Iterator

from ..errors import CompilationError, Loc
from .types import Type


class Value:
    """An SSA value. A vector value may carry the layout (RFC wg_map) that says how subgroups share it;
    a tile's layout is part of its type."""

    __slots__ = ("type", "owner", "name_hint", "layout", "uses")

    def __init__(self, type: Type, owner=None, name_hint: str | None = None):
        self.type = type
        self.owner = owner
        self.name_hint = name_hint
        self.layout = None
        self.uses: list[tuple[Operation, int]] = []  # (op, operand index) of every read, in no particular order

    def __repr__(self) -> str:
        return f"<Value {self.name_hint or ''}: {self.type}>"

    def replace_all_uses_with(self, new: Value) -> None:
        for op, index in list(self.uses):
            op.set_operand(index, new)


class Operation:
    name: ClassVar[str] = "op"
    # What the op does to memory (ir/effects.py): () for a pure op. None means undeclared, which the verifier
    # rejects, so a new memory op cannot go unseen by the barrier pass and the host copy-back.
    effects: ClassVar[tuple | None] = None

    def __init__(self, operands=(), result_types=(), regions=(), loc: Loc | None = None):
        self._operands: tuple[Value, ...] = ()
        self.set_operands(operands)
        self.results: list[Value] = [Value(t, self) for t in result_types]
        self.regions: list[Region] = list(regions)
        self.parent: Block | None = None
        self.loc = loc

    @property
    def result(self) -> Value:
        return self.results[0]

    @property
    def operands(self) -> tuple[Value, ...]:
        """Read-only: change them with `set_operand` so that use lists stay right."""
        return self._operands

    @property
    def pure(self) -> bool:
        return self.effects == ()

    def set_operand(self, index: int, value: Value) -> None:
        old = self._operands[index]
        old.uses.remove((self, index))
        value.uses.append((self, index))
        self._operands = self._operands[:index] + (value,) + self._operands[index + 1:]

    def set_operands(self, values) -> None:
        for i, v in enumerate(self._operands):
            v.uses.remove((self, i))
        self._operands = tuple(values)
        for i, v in enumerate(self._operands):
            v.uses.append((self, i))

    def drop_uses(self) -> None:
        """Forgets this op's reads of its operands (and those of the ops in its regions)."""
        self.set_operands(())
        for region in self.regions:
            for op in region.block.ops:
                op.drop_uses()

    def detach(self) -> Operation:
        """Takes the op out of its block, keeping its operands (to insert it elsewhere)."""
        if self.parent is None:
            raise self.error("is in no block", "only an op in a block can leave it")
        self.parent.ops.remove(self)
        self.parent = None
        return self

    def erase(self) -> None:
        """Removes the op from its block; its results must have no uses left."""
        for v in self.results:
            if v.uses:
                users = ", ".join(sorted({op.name for op, _ in v.uses}))
                raise self.error(f"cannot erase: its result is still used by {users}", "erase only unused ops")
        self.detach()
        self.drop_uses()

    def copy_with(self, operands, result_types=None) -> Operation:
        """A detached copy of the op (same attributes) on `operands`, with fresh results and no regions."""
        new = copy.copy(self)
        new._operands = ()
        new.set_operands(operands)
        types = [v.type for v in self.results] if result_types is None else result_types
        new.results = [Value(t, new) for t in types]
        new.regions = []
        new.parent = None
        return new

    def clone(self, mapping: dict | None = None) -> Operation:
        """A detached deep copy: operands through `mapping` (old value -> new value, unmapped ones kept),
        regions cloned with their block arguments and ops; `mapping` gains every old -> new value."""
        mapping = {} if mapping is None else mapping
        new = self.copy_with([mapping.get(v, v) for v in self.operands])
        for old_v, new_v in zip(self.results, new.results):
            new_v.layout, new_v.name_hint = old_v.layout, old_v.name_hint
            mapping[old_v] = new_v
        new.regions = [Region(region.block.clone(mapping)) for region in self.regions]
        return new

    def error(self, message: str, rule: str | None = None) -> CompilationError:
        text = f"{self.name}: {message}"
        if rule:
            text += f" [{rule}]"
        return CompilationError(text, self.loc)

    def verify(self) -> None:
        """Check the RFC's rules for this op; raise `self.error(...)` naming the rule broken."""

    def interpret(self, interp, *args):
        raise NotImplementedError(f"the numpy interpreter has no rule for {self.name}")

    @classmethod
    def op_names(cls) -> tuple[str, ...]:
        """The names this class prints as: the IR parser (ir/parser.py) reads them with `parse`."""
        return () if cls.name == "op" else (cls.name,)

    @classmethod
    def parse(cls, p, name: str) -> Operation:
        """Reads what `format` printed after the op name `name` (`p`: ir/parser.Parser) and builds the op."""
        raise NotImplementedError(f"the IR parser has no rule for {name}")

    def format(self, p) -> str:
        """The printed text after the op name (operands, attributes, types)."""
        return " " + ", ".join(p.name(v) for v in self.operands) + " : " + ", ".join(
            str(v.type) for v in self.results)


class Block:
    def __init__(self, arg_types=(), arg_names=()):
        names = list(arg_names) + [None] * (len(arg_types) - len(arg_names))
        self.args = [Value(t, self, n) for t, n in zip(arg_types, names)]
        self.ops: list[Operation] = []  # read-only: change it through the methods below

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops else None

    def insert(self, index: int, op: Operation) -> Operation:
        if op.parent is not None:
            raise op.error("is already in a block; detach it first", "an op lives in one block")
        self.ops.insert(index, op)
        op.parent = self
        return op

    def append(self, op: Operation) -> Operation:
        return self.insert(len(self.ops), op)

    def prepend(self, op: Operation) -> Operation:
        return self.insert(0, op)

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        return self.insert(self.ops.index(anchor), op)

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        return self.insert(self.ops.index(anchor) + 1, op)

    def clone(self, mapping: dict) -> Block:
        """A copy of the block with its arguments and ops (see Operation.clone)."""
        new = Block([a.type for a in self.args], [a.name_hint for a in self.args])
        for old_arg, new_arg in zip(self.args, new.args):
            new_arg.layout = old_arg.layout
            mapping[old_arg] = new_arg
        for op in self.ops:
            new.append(op.clone(mapping))
        return new


class Region:
    def __init__(self, block: Block):
        self.block = block


class FuncOp(Operation):
    """`func.func`: the kernel. One program instance is one workgroup (docs/DESIGN.md §1)."""

    name = "func.func"
    effects = ()  # its body's ops declare their own

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
        return self.block.append(op_class(*args, loc=self.loc, **kwargs))

    @contextlib.contextmanager
    def at_end_of(self, block: Block):
        """Inserts into `block` inside the `with`, then back where it was."""
        saved, self.block = self.block, block
        try:
            yield block
        finally:
            self.block = saved
