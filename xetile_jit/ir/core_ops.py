"""Core ops beside XeTile: arith, math, vector.broadcast, gpu ids, memref.alloc and memref.load, and the scf region
ops.

Element-wise ops are table-driven: their rows in ir/elementwise.py hold their operand kinds and numpy rules.
"""
from __future__ import annotations

import numpy as np

from . import numeric
from ..errors import LaunchError
from .core import Block, Operation, Region, Value
from .debug_ops import DevicePrintOp
from .effects import ALLOC, GLOBAL, SLM, SYNC, Effect, reads
from .shape_ops import MemRefReinterpretCastOp
from .elementwise import BINARY, CASTS, FLOAT, INT, INT_OR_BOOL, TERNARY, UNARY
from .sync_ops import SYNC_OPS
from .types import DType, IndexType, MemRefType, ScalarType, SlmMemRefType, Type, VectorType, bool_, i1, i32


def shape_of(t: Type) -> tuple[int, ...]:
    return t.shape if isinstance(t, VectorType) else ()


def with_dtype(t: Type, dtype: DType) -> Type:
    return VectorType(t.shape, dtype) if isinstance(t, VectorType) else ScalarType(dtype)


def format_float(value: float) -> str:
    """MLIR's `1.000000e+00`, with more digits where six do not give the value back (in its own precision), so
    that the IR parser reads the constant the passes saw."""
    text = f"{value:e}"
    digits = 6
    while value == value and type(value)(float(text)) != value and digits < 17:
        digits += 1
        text = f"{value:.{digits}e}"
    return text


def format_scalar(value, dtype: DType) -> str:
    if dtype.is_bool:
        return "true" if value else "false"
    return format_float(float(value)) if dtype.is_float else str(int(value))


KIND_NAMES = {"f": "a float", "i": "an integer", "u": "an integer", "b": "a bool"}


def check_kind(op: Operation, t: Type, kinds: str) -> None:
    if t.dtype.kind not in kinds:
        wanted = " or ".join(sorted({KIND_NAMES[k] for k in kinds}))
        raise op.error(f"operand type {t} must have {wanted} element type", "element-wise op operand types")


class ConstantOp(Operation):
    name = "arith.constant"
    effects = ()

    def __init__(self, value, type: Type, loc=None):
        super().__init__(result_types=[type], loc=loc)
        self.value = value

    def verify(self):
        if not numeric.representable(self.value, self.result.type.dtype):
            raise self.error(f"{self.value} is not representable in {self.result.type}",
                             "constant value has its type")

    def format(self, p) -> str:
        t = self.result.type
        text = format_scalar(self.value, t.dtype)
        return f" dense<{text}>{p.attr_dict(self)} : {t}" if isinstance(t, VectorType) else f" {text} : {t}"

    @classmethod
    def parse(cls, p, name):
        dense = p.accept("dense<")
        value = p.literal()
        if dense:
            p.expect(">")
            p.attrs()
        p.expect(":")
        t = p.type()
        return cls(bool(value) if t.dtype.is_bool else float(value) if t.dtype.is_float else int(value), t)

    def interpret(self, interp):
        t = self.result.type
        return np.full(shape_of(t), self.value, dtype=t.dtype.np_dtype)


class GridQueryOp(Operation):
    """gpu.block_id / gpu.grid_dim: the workgroup's id and the grid's size along an axis."""

    effects = ()

    AXES = "xyz"

    def __init__(self, axis: int, loc=None):
        super().__init__(result_types=[i32], loc=loc)
        self.axis = axis

    def verify(self):
        if self.axis not in (0, 1, 2):
            raise self.error(f"axis must be 0, 1 or 2, got {self.axis}", "grid has at most 3 dimensions")

    def format(self, p) -> str:
        return f" {self.AXES[self.axis]} : {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        axis = p.word()
        if axis not in cls.AXES:
            raise p.error(f"axis {axis} is not one of x, y, z")
        p.expect(":")
        return p.result_type(cls(cls.AXES.index(axis)), p.type())


class ProgramIdOp(GridQueryOp):
    name = "gpu.block_id"

    def interpret(self, interp):
        return np.int32(interp.program_id[self.axis])


class NumProgramsOp(GridQueryOp):
    name = "gpu.grid_dim"

    def interpret(self, interp):
        return np.int32(interp.grid[self.axis])


CONTRACTS = "arith.mulf"  # the op a `contract` flag may mark


class ElementwiseOp(Operation):
    """An op of an element-wise table (`table`: BINARY, UNARY or TERNARY of ir/elementwise.py): operands of one
    type, a result of that type. `fastmath` (set by transforms/xetile/relax_float_math.py; printed as upstream's flag
    that allows the approximation, the row's `fast_flag`: `afn`, or `arcp` for a division) lets device code compute
    it with its row's approximate rule; `contract` (upstream's `contract`, on a float multiply: set by
    transforms/xetile/contract_float_math.py) lets device code fuse the product into the add that takes it. The
    numpy rule stays exact."""

    effects = ()
    table: dict = {}

    def __init__(self, name: str, *operands: Value, fastmath: bool = False, contract: bool = False, loc=None):
        super().__init__(list(operands), [operands[0].type], loc=loc)
        self.name = name
        self.fastmath = fastmath
        self.contract = contract

    def verify(self):
        first, *others = self.operands
        for other in others:
            if other.type != first.type:
                raise self.error(f"operand types differ: {first.type} vs {other.type}", "element-wise op operand types")
        check_kind(self, first.type, self.table[self.name].kinds)
        if self.fastmath and self.table[self.name].fast is None:
            raise self.error("has no approximate form", "fastmath flags the ops of an approximate LLVM rule")
        if self.contract and self.name != CONTRACTS:
            raise self.error("cannot contract", f"the contract flag is on {CONTRACTS} only")

    @property
    def fast_flag(self) -> str | None:
        """The upstream fast-math flag the op carries, if any."""
        return self.table[self.name].fast_flag if self.fastmath else "contract" if self.contract else None

    def format(self, p) -> str:
        attrs = {"fastmath": f"#arith.fastmath<{self.fast_flag}>"} if self.fast_flag else None
        return f" {', '.join(p.name(v) for v in self.operands)}{p.attr_dict(self, attrs)} : {self.result.type}"

    @classmethod
    def op_names(cls):
        return tuple(cls.table)

    @classmethod
    def parse(cls, p, name):
        operands = p.operands()
        fastmath = p.attrs().pop("fastmath", None)
        p.expect(":")
        p.same_types(operands, p.type())
        flag = "contract" if name == CONTRACTS else cls.table[name].fast_flag
        if fastmath not in (None, flag):
            raise p.error(f"fastmath flags {fastmath!r} on {name}: only {flag!r} is supported")
        return cls(name, *operands, fastmath=fastmath is not None and flag != "contract",
                   contract=fastmath is not None and flag == "contract")

    def interpret(self, interp, *xs):
        return numeric.apply(self.result.type.dtype, self.table[self.name].numpy, *xs)


class UnaryOp(ElementwiseOp):
    table = UNARY


class BinaryOp(ElementwiseOp):
    table = BINARY


class TernaryOp(ElementwiseOp):
    table = TERNARY


CMP_PREDICATES = {
    "arith.cmpf": {"oeq": np.equal, "une": np.not_equal, "olt": np.less, "ole": np.less_equal,
                   "ogt": np.greater, "oge": np.greater_equal},
    "arith.cmpi": {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal,
                   "sgt": np.greater, "sge": np.greater_equal, "ult": np.less, "ule": np.less_equal,
                   "ugt": np.greater, "uge": np.greater_equal},
}


class CmpOp(Operation):
    effects = ()

    def __init__(self, name: str, predicate: str, lhs: Value, rhs: Value, loc=None):
        super().__init__([lhs, rhs], [with_dtype(lhs.type, i1.dtype)], loc=loc)
        self.name = name
        self.predicate = predicate

    def verify(self):
        lhs, rhs = self.operands
        if lhs.type != rhs.type:
            raise self.error(f"operand types differ: {lhs.type} vs {rhs.type}", "element-wise op operand types")
        check_kind(self, lhs.type, FLOAT if self.name == "arith.cmpf" else INT_OR_BOOL)
        if self.predicate not in CMP_PREDICATES[self.name]:
            raise self.error(f"unknown predicate {self.predicate}", "comparison predicates")

    def format(self, p) -> str:
        lhs, rhs = self.operands
        return f" {self.predicate}, {p.name(lhs)}, {p.name(rhs)}{p.attr_dict(self)} : {lhs.type}"

    @classmethod
    def op_names(cls):
        return tuple(CMP_PREDICATES)

    @classmethod
    def parse(cls, p, name):
        predicate = p.word()
        p.expect(",")
        lhs, rhs = p.values_n(2)
        p.attrs()
        p.expect(":")
        p.same_types([lhs, rhs], p.type())
        return cls(name, predicate, lhs, rhs)

    def interpret(self, interp, lhs, rhs):
        return np.asarray(CMP_PREDICATES[self.name][self.predicate](lhs, rhs))


class SelectOp(Operation):
    name = "arith.select"
    effects = ()

    def __init__(self, cond: Value, a: Value, b: Value, loc=None):
        super().__init__([cond, a, b], [a.type], loc=loc)

    def verify(self):
        cond, a, b = self.operands
        if a.type != b.type:
            raise self.error(f"true and false values differ in type: {a.type} vs {b.type}", "arith.select types")
        if cond.type.dtype != i1.dtype or shape_of(cond.type) not in ((), shape_of(a.type)):
            raise self.error(f"condition {cond.type} must be i1 of the values' shape", "arith.select types")

    def format(self, p) -> str:
        cond, a, b = self.operands
        return f" {p.name(cond)}, {p.name(a)}, {p.name(b)}{p.attr_dict(self)} : {cond.type}, {a.type}"

    @classmethod
    def parse(cls, p, name):
        cond, a, b = p.values_n(3)
        p.attrs()
        p.expect(":")
        p.typed([cond, a])
        return cls(cond, a, b)

    def interpret(self, interp, cond, a, b):
        return np.where(cond, a, b).astype(self.result.type.dtype.np_dtype)


class CastOp(Operation):
    """An arith cast. `any_nan_payload` (set by transforms/xetile/float8_mma.py on the FP8 -> f16 extension of a
    tile_mma operand, whose NaN payload DPAS cannot observe: any NaN operand makes its products NaN; printed
    `{any_nan_payload = true}`) lets device code give a NaN code any f16 NaN; the numpy rule stays exact, one of
    the NaNs allowed."""

    effects = ()

    def __init__(self, name: str, x: Value, to: Type, any_nan_payload: bool = False, loc=None):
        super().__init__([x], [to], loc=loc)
        self.name = name
        self.any_nan_payload = any_nan_payload

    def verify(self):
        src, dst = self.operands[0].type, self.result.type
        rule = CASTS[self.name]
        src_kinds, dst_kinds, width = rule.source_kinds, rule.dest_kinds, rule.width
        if src.dtype.kind not in src_kinds or dst.dtype.kind not in dst_kinds or shape_of(src) != shape_of(dst):
            raise self.error(f"cannot cast {src} to {dst}", "arith cast operand types")
        if width == "wider" and not dst.dtype.bits > src.dtype.bits:
            raise self.error(f"{dst} is not wider than {src}", "arith extension widens")
        if width == "narrower" and not dst.dtype.bits < src.dtype.bits:
            raise self.error(f"{dst} is not narrower than {src}", "arith truncation narrows")
        if width == "same" and dst.dtype.bits != src.dtype.bits:
            raise self.error(f"{dst} and {src} differ in width", "arith.bitcast keeps the width")
        if self.any_nan_payload and self.name != "arith.extf":
            raise self.error("frees the NaN payload of a cast other than a float extension",
                             "any_nan_payload marks arith.extf")

    def format(self, p) -> str:
        attrs = {"any_nan_payload": "true"} if self.any_nan_payload else None
        x = self.operands[0]
        return f" {p.name(x)}{p.attr_dict(self, attrs)} : {x.type} to {self.result.type}"

    def interpret(self, interp, x):
        if CASTS[self.name].reinterprets:
            return numeric.bitcast(x, self.result.type.dtype)
        return numeric.convert(x, self.result.type.dtype)

    @classmethod
    def op_names(cls):
        return tuple(CASTS)

    @classmethod
    def parse(cls, p, name):
        x, to = p.conversion()
        any_nan_payload = p.pending.pop("any_nan_payload", False)
        if not isinstance(any_nan_payload, bool):
            raise p.error(f"any_nan_payload = {any_nan_payload!r} on {name}: true or false", p.attrs_pos)
        return cls(name, x, to, any_nan_payload)


class IndexCastOp(Operation):
    """arith.index_cast: an integer scalar to an index, or an index to an integer scalar type `to`."""

    name = "arith.index_cast"
    effects = ()

    def __init__(self, x: Value, to: Type = IndexType(), loc=None):
        super().__init__([x], [to], loc=loc)

    def verify(self):
        src, dst = self.operands[0].type, self.result.type
        check_kind(self, src, INT)
        check_kind(self, dst, INT)
        if isinstance(src, IndexType) == isinstance(dst, IndexType):
            raise self.error(f"casts {src} to {dst}; one side must be index", "index_cast between index and ints")

    def format(self, p) -> str:
        return f" {p.name(self.operands[0])} : {self.operands[0].type} to {self.result.type}"

    def interpret(self, interp, x):
        dst = self.result.type
        return int(x) if isinstance(dst, IndexType) else numeric.convert(np.int64(x), dst.dtype)[()]

    @classmethod
    def parse(cls, p, name):
        return cls(*p.conversion())


class SplatOp(Operation):
    """vector.broadcast of a scalar to every element of a vector."""

    name = "vector.broadcast"
    effects = ()

    def __init__(self, x: Value, shape, loc=None):
        super().__init__([x], [VectorType(tuple(shape), x.type.dtype)], loc=loc)

    def verify(self):
        if not isinstance(self.operands[0].type, ScalarType):
            raise self.error(f"source {self.operands[0].type} must be a scalar", "vector.broadcast of a scalar")

    def format(self, p) -> str:
        return f" {p.name(self.operands[0])}{p.attr_dict(self)} : {self.operands[0].type} to {self.result.type}"

    def interpret(self, interp, x):
        t = self.result.type
        return np.full(t.shape, x, dtype=t.dtype.np_dtype)

    @classmethod
    def parse(cls, p, name):
        x, to = p.conversion()
        if not isinstance(to, VectorType):
            raise p.error(f"vector.broadcast of a scalar gives a vector, not {to}")
        return cls(x, to.shape)


class IotaOp(Operation):
    """vector.iota: each element's index along `dim`, plus the index `offset` (an i32 vector). A pass that cuts a
    vector into pieces gives each piece its offset in the whole (transforms/xegpu/piecewise.py); lanes take theirs (SimtIotaOp)."""

    name = "vector.iota"
    effects = ()

    def __init__(self, offset: Value, dim: int, shape, loc=None):
        super().__init__([offset], [VectorType(tuple(shape), i32.dtype)], loc=loc)
        self.dim = dim

    def verify(self):
        if not isinstance(self.operands[0].type, IndexType):
            raise self.error(f"offset must be an index, got {self.operands[0].type}", "vector.iota operands")
        rank = len(self.result.type.shape)
        if rank not in (1, 2) or not 0 <= self.dim < rank:
            raise self.error(f"dim {self.dim} must be a dim of the 1-D or 2-D result {self.result.type}",
                             "vector.iota dim")

    def format(self, p) -> str:
        return f" {p.name(self.operands[0])} [{self.dim}]{p.attr_dict(self)} : {self.result.type}"

    def interpret(self, interp, offset):
        return (np.indices(self.result.type.shape)[self.dim] + int(offset)).astype(np.int32)

    @classmethod
    def parse(cls, p, name):
        offset = p.value()
        dim = p.dim()
        p.attrs()
        p.expect(":")
        t = p.type()
        return p.result_type(cls(offset, dim, getattr(t, "shape", ())), t)


class YieldOp(Operation):
    name = "scf.yield"
    effects = ()

    @classmethod
    def parse(cls, p, name):
        values = p.operands()
        if values:
            p.expect(":")
            p.typed(values)
        return cls(values)

    def format(self, p) -> str:
        if not self.operands:
            return ""
        return " " + ", ".join(p.name(v) for v in self.operands) + " : " + ", ".join(
            str(v.type) for v in self.operands)


class ReturnOp(Operation):
    name = "func.return"
    effects = ()

    @classmethod
    def parse(cls, p, name):
        return cls()

    def format(self, p) -> str:
        return ""


def check_yield(op: Operation, block: Block, types) -> None:
    yielded = [v.type for v in block.terminator.operands]
    if yielded != list(types):
        raise op.error(f"region yields ({', '.join(map(str, yielded))}) but the op returns "
                       f"({', '.join(map(str, types))})", "scf region results match the op's results")


class ForOp(Operation):
    """scf.for: a real loop with loop-carried values (iter_args). The loop rule: the iv takes the values of
    Python's range(lower, upper, step), for a negative step too; a step of 0 (only possible at run time: the
    tracer rejects a constant 0) runs the body zero times, since a kernel cannot raise and must never hang."""

    name = "scf.for"
    effects = ()  # the ops of its body declare their own

    def __init__(self, lower: Value, upper: Value, step: Value, inits, iv_name=None, carried_names=(), loc=None):
        types = [v.type for v in inits]
        body = Block([lower.type] + types, [iv_name] + list(carried_names))
        super().__init__([lower, upper, step] + list(inits), types, [Region(body)], loc=loc)

    @property
    def body(self) -> Block:
        return self.regions[0].block

    def carry(self, init: Value, name: str | None = None) -> Value:
        """One more loop-carried value, last: its init `init`; returns its body argument. The body's yield must then
        give its next value (ops that add a carried value to a loop in place, keeping every op and use it has)."""
        self.set_operands(list(self.operands) + [init])
        arg = Value(init.type, self.body, name)
        self.body.args.append(arg)
        self.results.append(Value(init.type, self))
        return arg

    def verify(self):
        bounds = [v.type for v in self.operands[:3]]
        if len(set(bounds)) != 1 or not isinstance(bounds[0], ScalarType) or not bounds[0].dtype.is_int:
            raise self.error(f"bounds and step must be integers of one type, got {', '.join(map(str, bounds))}",
                             "scf.for bounds")
        check_yield(self, self.body, [v.type for v in self.results])

    def format(self, p) -> str:
        lower, upper, step, *inits = self.operands
        iv, *carried = self.body.args
        text = f" {p.name(iv)} = {p.name(lower)} to {p.name(upper)} step {p.name(step)}"
        if inits:
            pairs = ", ".join(f"{p.name(a)} = {p.name(v)}" for a, v in zip(carried, inits))
            text += f" iter_args({pairs}) -> ({', '.join(str(v.type) for v in self.results)})"
        return text + f" : {lower.type}"

    @classmethod
    def parse(cls, p, name):
        iv = p.value_name()
        p.expect("=")
        lower = p.value()
        p.keyword("to")
        upper = p.value()
        p.keyword("step")
        step = p.value()
        pairs = []
        if p.accept("iter_args"):
            pairs = p.comma_list(lambda: (p.value_name(), p.expect("="), p.value())[::2], "(", ")")
            p.expect("->")
            p.typed_list([v for _, v in pairs])
        p.expect(":")
        p.same_types([lower, upper, step], p.type())
        op = cls(lower, upper, step, [v for _, v in pairs])
        for text, arg in zip([iv] + [n for n, _ in pairs], op.body.args):
            p.define(text, arg)
        return op

    def interpret(self, interp, lower, upper, step, *inits):
        values = list(inits)
        if step == 0:
            return values
        dtype = self.operands[0].type.dtype.np_dtype
        for i in range(int(lower), int(upper), int(step)):
            values = interp.run_block(self.body, [dtype.type(i)] + values)
        return values


class ConditionOp(Operation):
    """scf.condition: ends an scf.while's condition region; the loop goes on while `cond` holds, with the values
    after it as the body's arguments, and otherwise returns them."""

    name = "scf.condition"
    effects = ()

    def __init__(self, cond: Value, forwarded=(), loc=None):
        super().__init__([cond, *forwarded], loc=loc)

    def verify(self):
        cond = self.operands[0].type
        if cond != i1:
            raise self.error(f"condition must be a scalar i1, got {cond}: a while loop's condition is one value for "
                             "the whole workgroup (every subgroup and lane runs the same iterations); reduce a tile or "
                             "vector to a scalar first (xetile.tile_reduce over both dims)",
                             "scf.while conditions are workgroup-uniform scalars")

    def format(self, p) -> str:
        cond, *forwarded = self.operands
        text = f"({p.name(cond)})"
        if forwarded:
            text += " " + ", ".join(p.name(v) for v in forwarded) + " : " + ", ".join(str(v.type) for v in forwarded)
        return text

    @classmethod
    def parse(cls, p, name):
        p.expect("(")
        cond = p.value()
        p.expect(")")
        forwarded = p.operands()
        if forwarded:
            p.expect(":")
            p.typed(forwarded)
        return cls(cond, forwarded)


class WhileOp(Operation):
    """scf.while: a loop whose condition is computed each time round. The `before` region takes the carried values
    and ends in scf.condition(cond) with the values the loop goes on with; while cond holds, the `after` region takes
    those and yields the next carried values; otherwise the loop returns them. `cond` is a scalar, the same for every
    subgroup and lane of the workgroup, so the loop never diverges inside a workgroup (unless it is computed from
    subgroup_id(): then barriers inside it are refused, as in an scf.if on it)."""

    name = "scf.while"
    effects = ()  # the ops of its regions declare their own
    region_separator = " do "

    def __init__(self, inits, names=(), loc=None):
        types = [v.type for v in inits]
        regions = [Region(Block(types, list(names))), Region(Block(types, list(names)))]
        super().__init__(list(inits), types, regions, loc=loc)

    @property
    def before(self) -> Block:
        return self.regions[0].block

    @property
    def after(self) -> Block:
        return self.regions[1].block

    def verify(self):
        condition = self.before.terminator
        if not isinstance(condition, ConditionOp):
            raise self.error("the condition region must end in scf.condition", "scf.while regions")
        types = [v.type for v in self.results]
        forwarded = [v.type for v in condition.operands[1:]]
        if forwarded != types or [a.type for a in self.after.args] != types:
            raise self.error(f"scf.condition forwards ({', '.join(map(str, forwarded))}) but the loop carries "
                             f"({', '.join(map(str, types))})", "scf.while carried values match")
        check_yield(self, self.after, types)

    def format(self, p) -> str:
        if not self.operands:
            return ""
        pairs = ", ".join(f"{p.name(a)} = {p.name(v)}" for a, v in zip(self.before.args, self.operands))
        after = ", ".join(p.name(a) for a in self.after.args)
        return f" ({pairs}) do ({after}) -> ({', '.join(str(v.type) for v in self.results)})"

    @classmethod
    def parse(cls, p, name):
        pairs, after = [], []
        if p.at("("):
            pairs = p.comma_list(lambda: (p.value_name(), p.expect("="), p.value())[::2], "(", ")")
            p.keyword("do")
            after = p.comma_list(p.value_name, "(", ")")
            p.expect("->")
            p.typed_list([v for _, v in pairs])
        op = cls([v for _, v in pairs])
        if len(after) != len(pairs):
            raise p.error(f"scf.while carries {len(pairs)} values but its body names {len(after)}")
        for text, arg in zip([n for n, _ in pairs] + after, op.before.args + op.after.args):
            p.define(text, arg)
        return op

    def interpret(self, interp, *inits):
        values = list(inits)
        while True:
            cond, *values = interp.run_block(self.before, values)
            if not cond:
                return values
            values = interp.run_block(self.after, values)


class IfOp(Operation):
    name = "scf.if"
    effects = ()  # the ops of its regions declare their own
    region_separator = " else "

    def __init__(self, cond: Value, result_types, then_block: Block, else_block: Block, loc=None):
        super().__init__([cond], result_types, [Region(then_block), Region(else_block)], loc=loc)

    def verify(self):
        if self.operands[0].type != i1:
            raise self.error(f"condition must be i1, got {self.operands[0].type}", "scf.if condition")
        for region in self.regions:
            check_yield(self, region.block, [v.type for v in self.results])

    def format(self, p) -> str:
        text = f" {p.name(self.operands[0])}"
        if self.results:
            text += f" -> ({', '.join(str(v.type) for v in self.results)})"
        return text

    @classmethod
    def parse(cls, p, name):
        cond = p.value()
        types = p.comma_list(p.type, "(", ")") if p.accept("->") else []
        return cls(cond, types, Block(), Block())

    def interpret(self, interp, cond):
        return interp.run_block(self.regions[0 if cond else 1].block, [])


class IndexQueryOp(Operation):
    """An index the running thread knows; the interpreter holds it as `attribute`."""

    effects = ()

    attribute = ""

    def __init__(self, loc=None):
        super().__init__(result_types=[IndexType()], loc=loc)

    def format(self, p) -> str:
        return " : index"

    @classmethod
    def parse(cls, p, name):
        p.expect(":")
        return p.result_type(cls(), p.type())

    def interpret(self, interp):
        return getattr(interp, self.attribute)


class SubgroupIdOp(IndexQueryOp):
    """gpu.subgroup_id: the linear id of this subgroup in its workgroup (subgroup-level IR)."""

    name = "gpu.subgroup_id"
    attribute = "subgroup_id"

    def interpret(self, interp):
        if interp.subgroup_id is None:
            raise LaunchError("subgroup_id() has no value at the workgroup level: a kernel that asks it runs at the "
                              "subgroup level (xegpu-sg) in the interpreter")
        return interp.subgroup_id


class LaneIdOp(IndexQueryOp):
    """gpu.lane_id: this work-item's lane in its subgroup (work-item-level IR)."""

    name = "gpu.lane_id"
    attribute = "lane_id"


class BarrierOp(Operation):
    """gpu.barrier: every subgroup of the workgroup arrives before any goes on; orders SLM accesses. `by_user`: the
    kernel's `barrier()`, kept as written (the compiler drops its own where they order nothing:
    transforms/xegpu/needless_barriers.py)."""

    name = "gpu.barrier"
    effects = (Effect(SYNC, GLOBAL), Effect(SYNC, SLM))

    def __init__(self, by_user: bool = False, loc=None):
        super().__init__(loc=loc)
        self.by_user = by_user

    def format(self, p) -> str:
        return " {by_user}" if self.by_user else ""

    @classmethod
    def parse(cls, p, name):
        return cls(p.attrs().pop("by_user", None) is not None)

    def interpret(self, interp):
        interp.barrier()


class SlmAllocOp(Operation):
    """memref.alloc in shared local memory: one buffer per workgroup, seen by all its subgroups. `by_user`: an
    `alloc_slm` buffer (else a layout conversion's)."""

    name = "memref.alloc"
    effects = (Effect(ALLOC, SLM),)

    def __init__(self, type: SlmMemRefType, by_user: bool = False, loc=None):
        super().__init__(result_types=[type], loc=loc)
        self.by_user = by_user

    def verify(self):
        shape = self.result.type.shape
        if len(shape) != 2 or not all(isinstance(n, int) and n > 0 for n in shape):
            raise self.error(f"shape {list(shape)} must be 2-D and positive", "an SLM buffer has a static 2-D shape")

    def format(self, p) -> str:
        return f"(){'' if self.by_user else ' {layout_conversion}'} : {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        p.expect("()")
        by_user = p.attrs().pop("layout_conversion", None) is None
        p.expect(":")
        t = p.type()
        if not isinstance(t, SlmMemRefType):
            raise p.error(f"memref.alloc makes an SLM buffer, not {t}")
        return cls(t, by_user)

    def interpret(self, interp):
        return interp.shared_buffer(self)


class MemRefLoadOp(Operation):
    """memref.load: one element of an array argument or SLM buffer as a scalar, the same for every work-item
    (MLIR's `memref.load %a[%i, %j]`, written `a[i, j]` in a kernel, one index per array dim). It reads sizes and
    offsets a kernel takes from memory: a grouped GEMM's table of problems, a batch's lengths. An index outside the
    array reads 0, as a tile's padding does. Shared by every IR level: a uniform read needs no distribution."""

    name = "memref.load"
    effects = (reads(0),)

    def __init__(self, array: Value, indices: list[Value], loc=None):
        super().__init__([array, *indices], [ScalarType(array.type.dtype)], loc=loc)

    def verify(self):
        array, *indices = self.operands
        if not isinstance(array.type, MemRefType):
            raise self.error(f"operand 0 must be an array, got {array.type}", "memref.load reads an array")
        rank = array.type.rank
        if len(indices) != rank or not all(isinstance(i.type, IndexType) for i in indices):
            raise self.error(f"takes {rank} index operands (one per array dim), got {len(indices)}",
                             "memref.load has one index per array dim")

    def format(self, p) -> str:
        array, *indices = self.operands
        return f" {p.name(array)}[{', '.join(p.name(i) for i in indices)}] : {array.type}"

    @classmethod
    def parse(cls, p, name):
        array = p.value()
        indices = p.bracketed()
        p.expect(":")
        p.type_of(array)
        return cls(array, indices)

    def interpret(self, interp, array: np.ndarray, *indices):
        inside = all(0 <= i < n for i, n in zip(indices, array.shape))
        return array[tuple(indices)] if inside else array.dtype.type(0)


class ExtractStridedSliceOp(Operation):
    """vector.extract_strided_slice: the `sizes` block at `offsets`, every `strides`-th element along each dim."""

    name = "vector.extract_strided_slice"
    effects = ()

    def __init__(self, v: Value, offsets, sizes, strides=(1, 1), loc=None):
        super().__init__([v], [VectorType(tuple(sizes), v.type.dtype)], loc=loc)
        self.offsets, self.strides = tuple(offsets), tuple(strides)

    def verify(self):
        full, part = self.operands[0].type.shape, self.result.type.shape
        if any(o + (s - 1) * st >= n for o, s, st, n in zip(self.offsets, part, self.strides, full)):
            raise self.error(f"slice {part} at {self.offsets} exceeds {full}", "strided slices stay inside the vector")

    def format(self, p) -> str:
        v = self.operands[0]
        attrs = {"offsets": list(self.offsets), "sizes": list(self.result.type.shape), "strides": list(self.strides)}
        return f" {p.name(v)}{p.attr_dict(self, attrs)} : {v.type} to {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        (v,), attrs, result_type = p.operands_to("to", (1,), name)
        return p.result_type(cls(v, p.pop(attrs, "offsets"), p.pop(attrs, "sizes"), p.pop(attrs, "strides")),
                             result_type)

    def interpret(self, interp, v):
        shape = self.result.type.shape
        return np.ascontiguousarray(v[tuple(slice(o, o + s * st, st)
                                            for o, s, st in zip(self.offsets, shape, self.strides))])


class ExtractElementOp(Operation):
    """vector.extract of the one element of a one-element vector (a 1x1 tile's value) as a scalar: one value for
    the whole workgroup, since every subgroup holding the vector holds that element. At the work-item level it is
    the element lane 0 holds (every lane layout gives lane 0 the element at (0, 0)); a lane's piece of a 1x1 vector
    is a scalar there."""

    name = "vector.extract"
    effects = ()

    def __init__(self, v: Value, loc=None):
        super().__init__([v], [ScalarType(v.type.dtype)], loc=loc)

    def verify(self):
        t = self.operands[0].type
        if any(n != 1 for n in shape_of(t)):
            raise self.error(f"source {t} must be a vector of one element", "vector.extract of a 1x1 vector")

    def format(self, p) -> str:
        v = self.operands[0]
        return f" {p.name(v)}[{', '.join('0' for _ in shape_of(v.type))}] : {self.result.type} from {v.type}"

    @classmethod
    def parse(cls, p, name):
        v = p.value()
        p.ints()
        p.expect(":")
        t = p.type()
        p.keyword("from")
        p.type_of(v)
        return p.result_type(cls(v), t)

    def interpret(self, interp, v):
        lanes = np.asarray(v)
        return (lanes[0] if interp.lanes is not None else lanes).reshape(-1)[0]


class ConstantMaskOp(Operation):
    """vector.constant_mask: true in the leading `sizes` block, false elsewhere (blocking masks the padding of
    a block that reaches past its value's shape)."""

    name = "vector.constant_mask"
    effects = ()

    def __init__(self, sizes, shape, loc=None):
        super().__init__(result_types=[VectorType(tuple(shape), bool_)], loc=loc)
        self.sizes = tuple(sizes)

    def verify(self):
        if any(not 0 <= s <= n for s, n in zip(self.sizes, self.result.type.shape)):
            raise self.error(f"mask sizes {list(self.sizes)} exceed {self.result.type}", "mask sizes fit the vector")

    def format(self, p) -> str:
        return f" {list(self.sizes)}{p.attr_dict(self)} : {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        sizes = p.ints()
        p.attrs()
        p.expect(":")
        t = p.type()
        return p.result_type(cls(sizes, t.shape), t)

    def interpret(self, interp):
        mask = np.zeros(self.result.type.shape, bool)
        mask[tuple(slice(0, s) for s in self.sizes)] = True
        return mask


class InsertStridedSliceOp(Operation):
    """vector.insert_strided_slice: `dest` with the block `src` written at `offsets` (unit strides)."""

    name = "vector.insert_strided_slice"
    effects = ()

    def __init__(self, src: Value, dest: Value, offsets, loc=None):
        super().__init__([src, dest], [dest.type], loc=loc)
        self.offsets = tuple(offsets)

    def verify(self):
        part, full = self.operands[0].type.shape, self.operands[1].type.shape
        if any(o + s > n for o, s, n in zip(self.offsets, part, full)):
            raise self.error(f"slice {part} at {self.offsets} exceeds {full}", "strided slices stay inside the vector")

    def format(self, p) -> str:
        src, dest = self.operands
        attrs = p.attr_dict(self, {"offsets": list(self.offsets), "strides": [1, 1]})
        return f" {p.name(src)}, {p.name(dest)}{attrs} : {src.type} into {dest.type}"

    @classmethod
    def parse(cls, p, name):
        src, dest = p.values_n(2)
        attrs = p.attrs()
        offsets = p.pop(attrs, "offsets")
        if p.pop(attrs, "strides") != [1, 1]:
            raise p.error("vector.insert_strided_slice takes unit strides")
        p.expect(":")
        p.type_of(src)
        p.keyword("into")
        p.type_of(dest)
        return cls(src, dest, offsets)

    def interpret(self, interp, src, dest):
        out = dest.copy()
        out[tuple(slice(o, o + s) for o, s in zip(self.offsets, src.shape))] = src
        return out


# The ops every level shares: a conversion keeps them as they are unless it registers a handler.
SHARED_OPS = (ConstantOp, GridQueryOp, ElementwiseOp, CmpOp, SelectOp, CastOp, IndexCastOp, SplatOp, IotaOp,
              IndexQueryOp, BarrierOp, SlmAllocOp, ExtractStridedSliceOp, ExtractElementOp, ConstantMaskOp, InsertStridedSliceOp,
              DevicePrintOp, MemRefLoadOp, MemRefReinterpretCastOp, *SYNC_OPS)
