"""Dialect conversion: builds a new function from an old one, op by op, like MLIR's 1:N conversion.

A pass subclasses `Conversion` and registers a handler per op class it rewrites with `@converts(OpClass)`
(dispatch by type, the most specific class first; subclasses inherit their base's handlers). Ops of the
classes in `legal` are cloned as they are. Any other op is an error of this pass, naming the op (MLIR's
ConversionTarget): a forgotten handler fails here, not passes later. After the pass no op of a class in
`illegal` may remain. Each old value maps to a list of new values (one for 1:1 passes, several when a workgroup
value becomes several subgroup pieces); scf.for, scf.while and scf.if carry the flattened lists through their regions.
"""
from __future__ import annotations

from typing import Callable, ClassVar

from ..errors import CompilationError
from .core import Block, Builder, FuncOp, Operation, Value, walk
from .core_ops import ConditionOp, ForOp, IfOp, ReturnOp, WhileOp, YieldOp


def converts(*op_classes: type) -> Callable:
    """Marks a Conversion method as the handler of ops of `op_classes` (and their subclasses)."""
    def mark(method):
        method.converted_classes = op_classes
        return method
    return mark


class Conversion:
    dialect = "xetile"
    legal: ClassVar[tuple[type, ...]] = ()  # op classes this pass keeps as they are (cloned), subclasses too
    illegal: ClassVar[tuple[type, ...]] = ()  # op classes (exactly these) that must be gone after this pass
    handlers: ClassVar[dict[type, str]] = {}  # op class -> name of its handler method

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register_handlers(cls)

    def __init__(self, func: FuncOp):
        self.old = func
        arg_types = [self.convert_arg_type(a.type) for a in func.args]
        self.new = FuncOp(func.sym_name, arg_types, [a.name_hint for a in func.args], func.constexprs, func.loc,
                          dialect=self.dialect)
        self.builder = Builder(self.new.body)
        self.values: dict[Value, list[Value]] = {}

    def convert_arg_type(self, t):
        return t

    def run(self) -> FuncOp:
        for old, new in zip(self.old.args, self.new.args):
            self.values[old] = [new]
        self.convert_block(self.old.body)
        self.check_illegal(self.new)
        return self.new

    @property
    def pass_name(self) -> str:
        return type(self).__name__

    def handler(self, op: Operation) -> Callable[[Operation], None]:
        """The registered handler of the most specific class of `op`, else `clone` if the op is legal."""
        for op_class in type(op).__mro__:
            name = self.handlers.get(op_class)
            if name is not None:
                return getattr(self, name)
        if isinstance(op, self.legal):
            return self.clone
        raise CompilationError(f"{self.pass_name}: no conversion for {op.name} ({type(op).__name__}); register "
                               f"a @converts handler or declare it legal", op.loc)

    def check_illegal(self, func: FuncOp) -> None:
        for op in walk(func.body):
            if type(op) in self.illegal:  # exactly: an XeGPU op may subclass the XeTile op it replaces
                raise CompilationError(f"{self.pass_name}: {op.name} ({type(op).__name__}) is left after the "
                                       f"pass that must eliminate it", op.loc)

    # ---- value mapping -------------------------------------------------------------------------
    def get(self, v: Value) -> list[Value]:
        return self.values[v]

    def one(self, v: Value) -> Value:
        (new,) = self.values[v]
        return new

    def set(self, old: Value, new) -> None:
        self.values[old] = list(new) if isinstance(new, (list, tuple)) else [new]

    def carried(self, v: Value) -> list[Value]:
        """The pieces of `v` as loops and branches carry them."""
        return self.get(v)

    def carried_count(self, v: Value) -> int:
        return len(self.get(v))

    def flat(self, values) -> list[Value]:
        return [n for v in values for n in self.carried(v)]

    def emit(self, op_class, *args, **kwargs) -> Operation:
        return self.builder.create(op_class, *args, **kwargs)

    # ---- walking -------------------------------------------------------------------------------
    def convert_block(self, block: Block) -> None:
        for op in block.ops:
            self.builder.loc = op.loc
            self.handler(op)(op)

    def clone(self, op: Operation) -> None:
        """The op itself on the mapped operands, one copy per piece when operands come in pieces."""
        pieces = [self.get(v) for v in op.operands]
        count = max((len(p) for p in pieces), default=1)
        copies = []
        for i in range(count):
            operands = [p[i] if len(p) > 1 else p[0] for p in pieces]
            new = op.copy_with(operands, [self.result_type(v, i) for v in op.results])
            for old_v, new_v in zip(op.results, new.results):
                new_v.layout = self.result_layout(old_v, i)
            self.builder.block.append(new)
            copies.append(new)
        for j, v in enumerate(op.results):
            self.set(v, [c.results[j] for c in copies])

    def result_type(self, v: Value, piece: int):
        return v.type

    def result_layout(self, v: Value, piece: int):
        return v.layout

    @converts(ForOp)
    def convert_ForOp(self, op: ForOp) -> None:
        lower, upper, step = (self.one(v) for v in op.operands[:3])
        counts = [self.carried_count(v) for v in op.operands[3:]]
        inits = self.flat(op.operands[3:])
        names = [a.name_hint for a, n in zip(op.body.args[1:], counts) for _ in range(n)]
        new = self.emit(ForOp, lower, upper, step, inits, op.body.args[0].name_hint, names)
        for init, arg, result in zip(inits, new.body.args[1:], new.results):
            arg.layout = result.layout = init.layout
        self.values[op.body.args[0]] = [new.body.args[0]]
        self.map_groups(op.body.args[1:], new.body.args[1:], counts)
        with self.builder.at_end_of(new.body):
            self.convert_block(op.body)
        self.map_groups(op.results, new.results, counts)

    @converts(WhileOp)
    def convert_WhileOp(self, op: WhileOp) -> None:
        counts = [self.carried_count(v) for v in op.operands]
        inits = self.flat(op.operands)
        names = [a.name_hint for a, n in zip(op.before.args, counts) for _ in range(n)]
        new = self.emit(WhileOp, inits, names)
        for init, *carried in zip(inits, new.before.args, new.after.args, new.results):
            for v in carried:
                v.layout = init.layout
        for old, block in zip(op.regions, new.regions):
            self.map_groups(old.block.args, block.block.args, counts)
            with self.builder.at_end_of(block.block):
                self.convert_block(old.block)
        self.map_groups(op.results, new.results, counts)

    @converts(ConditionOp)
    def convert_ConditionOp(self, op: ConditionOp) -> None:
        self.emit(ConditionOp, self.one(op.operands[0]), self.flat(op.operands[1:]))

    @converts(IfOp)
    def convert_IfOp(self, op: IfOp) -> None:
        blocks = [Block(), Block()]
        for region, block in zip(op.regions, blocks):
            with self.builder.at_end_of(block):
                self.convert_block(region.block)
        yielded = blocks[0].terminator.operands
        new = self.emit(IfOp, self.one(op.operands[0]), [v.type for v in yielded], *blocks)
        for result, v in zip(new.results, yielded):
            result.layout = v.layout
        counts = [self.carried_count(v) for v in op.regions[0].block.terminator.operands]
        self.map_groups(op.results, new.results, counts)

    @converts(ReturnOp)
    def convert_ReturnOp(self, op: ReturnOp) -> None:
        self.emit(ReturnOp)

    @converts(YieldOp)
    def convert_YieldOp(self, op: YieldOp) -> None:
        self.emit(YieldOp, self.flat(op.operands))

    @staticmethod
    def group(values, counts):
        out, i = [], 0
        for n in counts:
            out.append(values[i:i + n])
            i += n
        return out

    def map_groups(self, olds, news, counts) -> None:
        for old, group in zip(olds, self.group(list(news), counts)):
            self.values[old] = group


def register_handlers(cls: type) -> None:
    """The handlers of `cls`: its base's, then its own @converts methods (which win)."""
    cls.handlers = dict(cls.handlers)
    for name, member in vars(cls).items():
        for op_class in getattr(member, "converted_classes", ()):
            cls.handlers[op_class] = name


register_handlers(Conversion)
