"""Reads the printer's text (ir/printer.py) back into IR at every level: `parse_func(text) -> FuncOp`.

The parser knows no op: each op class reads the text after its name with its classmethod `parse(p, name)`, the
counterpart of its `format`, and builds itself through its constructor (so what a constructor derives, such as
result types, is derived as it is in the passes). The registry maps every printed op name to the classes that
print it; where two classes share a name (vector.broadcast of a scalar or of a vector, an op and its SIMT flavor)
each is tried in turn and the one that reads the whole op wins. What is generic lives here: values, types,
attribute dictionaries, the layouts of results (`wg_map`/`layout`/`layout_result_N`), regions and the function.
"""
from __future__ import annotations

import bisect
import dataclasses
import json
import re

from ..errors import Loc, ParseError
from . import (core_ops, debug_ops, scatter_ops, shape_ops, simt_ops, sync_ops, xegpu_ops,  # noqa: F401
               xegpu_scatter_ops, xetile_ops)
from .attrs import Layout
from .cache_hints import CacheHints
from .core import Block, FuncOp, Operation, Value
from .elementwise import kind_named
from .printer import ARG_ATTRS
from .scatter_ops import ScatterTileType
from .sync_ops import NbarrierType
from .types import (ALL_DTYPES, COL_MAJOR, ROW_MAJOR, DType, IndexType, MemRefType, ScalarType, SlmMemRefType, TileType,
                    VectorType)
from .xegpu_ops import TensorDescType
from .verifier import verify
from .xegpu_scatter_ops import ScatterDescType

DTYPES = {d.mlir: d for d in ALL_DTYPES}
WORD = re.compile(r"[^\W\d][\w.$]*")
VALUE = re.compile(r"%[\w.$]+(#\d+)?")
NUMBER = re.compile(r"[-+]?(inf|nan|\d+(\.\d*)?([eE][-+]?\d+)?)")
SHAPE = re.compile(r"((?:\d+x)*)([a-z]+\d*(?:E\d+M\d+(?:FN)?)?)")  # FP8 types: f8E4M3FN, f8E5M2
RESULT_LAYOUT = re.compile(r"layout_result_(\d+)")
XEGPU = re.compile(r"#xegpu\.|!xegpu\.tensor_desc|\{xegpu\.")  # what only XeGPU IR prints (dialect_of)
WORDS = {"true": True, "false": False, "None": None}  # bare attribute words that are Python values (format_attr)
UNIT = object()  # a unit attribute: `{name}` without a value


def op_classes() -> list[type[Operation]]:
    """Every op class with a printed name (base classes without one, and func.func, are not ops of a body)."""
    found, pending = [], [Operation]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls is not FuncOp and cls.op_names():
            found.append(cls)
    return found


def registry() -> dict[str, list[type[Operation]]]:
    """Printed op name -> the classes that print it, the more specific (more derived) first."""
    table: dict[str, list] = {}
    for cls in op_classes():
        for name in cls.op_names():
            table.setdefault(name, []).append(cls)
    for classes in table.values():
        classes.sort(key=lambda c: -len(c.__mro__))
    return table


REGISTRY = registry()


class Parser:
    """A cursor over the text with the readers an op's `parse` uses: values, types, attributes, lists."""

    def __init__(self, text: str, filename: str = "<ir>"):
        self.text, self.filename = text, filename
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.pos = self.type_pos = self.attrs_pos = 0  # where the text is, where the last type and attributes began
        self.values: dict[str, Value] = {}
        self.pending: dict = {}  # the attributes of the op being read (Parser.attrs)
        self.func: FuncOp | None = None

    # ---- position and errors ---------------------------------------------------------------------------
    def line(self, pos: int) -> int:
        """The 1-based line of `pos`."""
        return bisect.bisect_right(self.line_starts, pos)

    def error(self, message: str, pos: int | None = None) -> ParseError:
        pos = self.pos if pos is None else pos
        line = self.line(pos)
        return ParseError(message, line, pos - self.line_starts[line - 1] + 1)

    def skip(self) -> None:
        """Past white space and `//` comments."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos].isspace():
                self.pos += 1
            if not self.text.startswith("//", self.pos):
                return
            end = self.text.find("\n", self.pos)
            self.pos = len(self.text) if end < 0 else end

    def here(self) -> int:
        """The position of the next token."""
        self.skip()
        return self.pos

    def at(self, token: str) -> bool:
        self.skip()
        return self.text.startswith(token, self.pos)

    def accept(self, token: str) -> bool:
        if self.at(token):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.accept(token):
            raise self.error(f"expected '{token}', found {self.found()}")

    def found(self) -> str:
        self.skip()
        if self.pos >= len(self.text):
            return "the end of the text"
        return repr(self.text[self.pos:self.pos + 20].split("\n")[0])

    def match(self, pattern: re.Pattern, what: str) -> re.Match:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if m is None:
            raise self.error(f"expected {what}, found {self.found()}")
        self.pos = m.end()
        return m

    def word(self) -> str:
        return self.match(WORD, "a name").group()

    def keyword(self, word: str) -> None:
        start = self.here()
        if self.word() != word:
            raise self.error(f"expected '{word}'", start)

    def field(self, name: str, read, separator: str = "="):
        """`name = value` (or `name: value`): what `read` reads after the name."""
        self.keyword(name)
        self.expect(separator)
        return read()

    def int(self) -> int:
        start = self.here()
        text = self.match(NUMBER, "an integer").group()
        try:
            return int(text)
        except ValueError:
            raise self.error(f"expected an integer, found {text}", start) from None

    def number(self) -> int | float:
        text = self.match(NUMBER, "a number").group()
        return float(text) if any(c in text for c in ".en") else int(text)

    def literal(self):
        """`true`, `false` or a number."""
        for word, value in (("true", True), ("false", False)):
            if self.accept(word):
                return value
        return self.number()

    def string(self) -> str:
        self.skip()
        if not self.at('"'):
            raise self.error(f"expected a string, found {self.found()}")
        try:
            value, end = json.JSONDecoder().raw_decode(self.text, self.pos)
        except json.JSONDecodeError as e:
            raise self.error(f"bad string: {e.msg}") from None
        self.pos = end
        return value

    def comma_list(self, item, open: str, close: str) -> list:
        """`open item, item close`, maybe empty."""
        self.expect(open)
        items = []
        if not self.accept(close):
            items.append(item())
            while self.accept(","):
                items.append(item())
            self.expect(close)
        return items

    def ints(self) -> list[int]:
        """`[1, 2]`."""
        return self.comma_list(self.int, "[", "]")

    # ---- values ------------------------------------------------------------------------------------------
    def value_name(self) -> str:
        return self.match(VALUE, "a value (%name)").group()

    def value(self) -> Value:
        start = self.here()
        name = self.value_name()
        if name not in self.values:
            raise self.error(f"value {name} is not defined", start)
        return self.values[name]

    def operands(self) -> list[Value]:
        """`%a, %b, ...`: as many values as follow, comma-separated (none when no value follows)."""
        if not self.at("%"):
            return []
        values = [self.value()]
        while self.at(", %"):
            self.expect(",")
            values.append(self.value())
        return values

    def values_n(self, count: int) -> list[Value]:
        """Exactly `count` comma-separated values."""
        values = [self.value()]
        for _ in range(count - 1):
            self.expect(",")
            values.append(self.value())
        return values

    def operands_to(self, arrow: str, counts, what: str) -> tuple[list[Value], dict, object]:
        """`%a, %b{attrs} : A, B <arrow> R` -> (the operands, the attributes, R); `what` takes `counts` operands
        (None: any number)."""
        operands = self.operands()
        attrs = self.attrs()
        self.expect(":")
        self.typed(operands)
        self.expect(arrow)
        result_type = self.type()
        if counts is not None and len(operands) not in counts:
            raise self.error(f"{what} takes {' or '.join(map(str, counts))} operands, not {len(operands)}")
        return operands, attrs, result_type

    def listed_into(self) -> tuple[Value, list[int], object]:
        """`%v [1, 0]{attrs} : T into U` (transposes, broadcasts, reductions after their kind) -> (v, the list, U)."""
        v = self.value()
        ints = self.ints()
        self.attrs()
        self.expect(":")
        self.type_of(v)
        self.keyword("into")
        return v, ints, self.type()

    def conversion(self) -> tuple[Value, object]:
        """`%x{attrs} : T to U` -> (x, U)."""
        x = self.value()
        self.attrs()
        self.expect(":")
        self.type_of(x)
        self.keyword("to")
        return x, self.type()

    def dim(self) -> int:
        """`[N]`."""
        self.expect("[")
        n = self.int()
        self.expect("]")
        return n

    def bracketed(self) -> list[Value]:
        """`[%a, %b]`."""
        return self.comma_list(self.value, "[", "]")

    def define(self, name: str, value: Value, pos: int | None = None) -> None:
        if name in self.values:
            raise self.error(f"value {name} is defined twice", pos)
        self.values[name] = value
        value.name_hint = hint_of(name)

    # ---- types -------------------------------------------------------------------------------------------
    def type(self):
        start = self.type_pos = self.here()
        for prefix, reader in TYPE_READERS:
            if self.accept(prefix):
                return reader(self)
        name = self.word()
        if name == "index":
            return IndexType()
        if name in DTYPES:
            return ScalarType(DTYPES[name])
        raise self.error(f"unknown type {name}", start)

    def shape(self) -> tuple[tuple[int, ...], object]:
        """`64x32xf16` -> ((64, 32), f16)."""
        start = self.here()
        m = self.match(SHAPE, "a shape and element type")
        dims, dtype = m.group(1), m.group(2)
        if dtype not in DTYPES:
            raise self.error(f"unknown element type {dtype}", start)
        return tuple(int(n) for n in dims.split("x")[:-1]), DTYPES[dtype]

    def typed(self, values) -> None:
        """The printed types of `values` (after a colon, comma-separated), which must be theirs."""
        for i, v in enumerate(values):
            if i:
                self.expect(",")
            self.type_of(v)

    def same_types(self, values, t) -> None:
        """Operands of the one printed type `t` (element-wise ops print it once)."""
        if not values:
            raise self.error("expected operands")
        for v in values:
            if str(v.type) != str(t):
                raise self.error(f"operand type {v.type} differs from the printed {t}")

    def result_type(self, op: Operation, t) -> Operation:
        """`op`, whose result type (derived by its constructor) must be the printed `t`."""
        if str(op.result.type) != str(t):
            raise self.error(f"{op.name} gives {op.result.type}, the text says {t}", self.type_pos)
        return op

    def typed_list(self, values) -> None:
        """`(T, ...)`: the types of `values`."""
        self.expect("(")
        self.typed(values)
        self.expect(")")

    def type_of(self, v: Value) -> None:
        """The printed type of `v` (as printed: a memref's launch facts are not in its type's text)."""
        t = self.type()
        if str(t) != str(v.type):
            raise self.error(f"type {t} does not match {v.type}", self.type_pos)

    # ---- attributes --------------------------------------------------------------------------------------
    def attrs(self) -> dict:
        """An optional attribute dictionary `{k = v, name, ...}`; the op's parse takes (pops) the entries it
        reads, the rest must be result layouts (Parser.op checks)."""
        self.pending = {}
        self.attrs_pos = self.here()
        if not self.at("{"):
            return self.pending
        self.expect("{")
        while True:
            key = self.word()
            self.pending[key] = self.attr_value() if self.accept("=") else UNIT
            if not self.accept(","):
                break
        self.expect("}")
        return self.pending

    def attr_value(self):
        self.skip()
        if self.at("["):
            return self.comma_list(self.attr_value, "[", "]")
        if self.at('"'):
            return self.string()
        if self.accept("#"):
            return self.hash_attr()
        if NUMBER.match(self.text, self.pos) and not WORD.match(self.text, self.pos):
            return self.number()
        word = self.word()
        return WORDS[word] if word in WORDS else DTYPES.get(word, word)

    def hash_attr(self):
        """After `#`: a layout (`#xetile.wg_map<...>`, `#xegpu.layout<...>`), a cache hint (its policy) or fast-math
        flags (`#arith.fastmath<afn>`: the word)."""
        start = self.pos
        name = self.word()
        self.expect("<")
        if name in ("xetile.cache_hint", "xegpu.cache_hint", "arith.fastmath"):  # a policy, or the flags
            policy = self.word()
            self.expect(">")
            return policy
        if name in ("xetile.wg_map", "xegpu.layout"):
            return self.layout_body()
        raise self.error(f"unknown attribute #{name}", start)

    def layout_body(self) -> Layout:
        """`k = [..], ...>` of a layout."""
        start = self.pos
        fields = {}
        while True:
            key = self.word()
            self.expect("=")
            fields[key] = self.ints()
            if not self.accept(","):
                break
        self.expect(">")
        try:
            return Layout(**fields)
        except (TypeError, ValueError) as e:
            raise self.error(f"bad layout: {e}", start) from None

    def layout(self) -> Layout:
        """`#xetile.wg_map<...>` or `#xegpu.layout<...>`."""
        start = self.pos
        self.expect("#")
        value = self.hash_attr()
        if not isinstance(value, Layout):
            raise self.error("expected a layout", start)
        return value

    def pop(self, attrs: dict, key: str):
        """The attribute the op needs."""
        if key not in attrs:
            raise self.error(f"missing attribute {key}")
        return attrs.pop(key)

    def dtype_attr(self, attrs: dict, key: str):
        """An element type attribute (`vnni_b = i8`), None when absent."""
        dtype = attrs.pop(key, None)
        if dtype is not None and not isinstance(dtype, DType):
            raise self.error(f"{key} = {dtype} is no element type")
        return dtype

    def hints(self, attrs: dict, kind: str) -> CacheHints | None:
        """The l1_hint and l3_hint of a load ("load") or store ("store"), None without them."""
        if "l1_hint" not in attrs:
            return None
        return CacheHints(kind, attrs.pop("l1_hint"), self.pop(attrs, "l3_hint"))

    def kind(self, table: dict, field: str, printed: str, dtype) -> str:
        """The user kind of a reduction or atomic printed as `printed` on `dtype` (elementwise.kind_named)."""
        kind = kind_named(table, field, printed, dtype.kind)
        if kind is None:
            raise self.error(f"<{printed}> is no kind for {dtype}")
        return kind

    def angle_word(self) -> str:
        """`<word>`."""
        self.expect("<")
        word = self.word()
        self.expect(">")
        return word

    # ---- ops, blocks, the function -------------------------------------------------------------------
    def op(self, block: Block) -> None:
        start = self.here()
        names = []
        if self.at("%"):
            names = self.result_names()
            self.expect("=")
        name_pos = self.here()
        name = self.match(WORD, "an op").group()
        if name not in REGISTRY:
            raise self.error(f"unknown op {name}", name_pos)
        op = self.one_of(REGISTRY[name], name)
        if len(op.results) != len(names):
            raise self.error(f"{name} has {len(op.results)} results, the text names {len(names)}", start)
        for result_name, v in zip(names, op.results):
            self.define(result_name, v, start)
        op.loc = Loc(self.filename, self.line(start))  # the verifier's errors name the op's line of the text
        block.append(op)
        if op.regions:
            self.regions(op)

    def result_names(self) -> list[str]:
        """`%a` or `%5:2` (then `%5#0`, `%5#1`)."""
        name = self.value_name()
        if self.accept(":"):
            return [f"{name}#{i}" for i in range(self.int())]
        return [name]

    def one_of(self, classes, name: str) -> Operation:
        """The op read by the first of `classes` that reads it all; else the error of the one that read furthest."""
        start, errors = self.pos, []
        for cls in classes:
            self.pos = start
            try:
                return self.read_op(cls, name)
            except ParseError as e:
                errors.append((self.pos, e))
        raise max(errors, key=lambda pe: pe[0])[1]

    def read_op(self, cls, name: str) -> Operation:
        start = self.here()
        self.pending = {}
        try:
            op = cls.parse(self, name)
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as e:
            # a constructor given operands it cannot take (a vector where a tile goes): the text is at fault
            raise self.error(f"{name} cannot take these operands ({type(e).__name__}: {e})", start) from None
        if not op.regions:
            self.set_layouts(op, self.pending)
        return op

    def set_layouts(self, op: Operation, attrs: dict) -> None:
        """The result layouts left in `attrs`: `wg_map`/`layout` of a single result, `layout_result_N` of others."""
        for key, value in attrs.items():
            m = RESULT_LAYOUT.fullmatch(key)
            single = key in ("wg_map", "layout") and len(op.results) == 1
            if not isinstance(value, Layout) or not (single or (m and len(op.results) > 1)):
                raise self.error(f"{op.name} has no attribute {key}", self.attrs_pos)
            op.results[0 if single else int(m.group(1))].layout = value

    def regions(self, op: Operation) -> None:
        """` {ops} else {ops}` (the op's region_separator) then the result layouts."""
        separator = getattr(op, "region_separator", " ").strip()
        for i, region in enumerate(op.regions):
            if i and separator:
                self.keyword(separator)
            self.expect("{")
            self.block(region.block)
        self.set_layouts(op, self.attrs())
        for region in op.regions if op.results else []:
            for arg, result in zip(region.block.args[-len(op.results):], op.results):
                arg.layout = result.layout  # a loop-carried value keeps the layout of what the loop returns

    def block(self, block: Block) -> None:
        """Ops up to the closing `}`."""
        while not self.accept("}"):
            if not self.at_text():
                raise self.error("expected an op or '}', found the end of the text")
            self.op(block)

    def at_text(self) -> bool:
        self.skip()
        return self.pos < len(self.text)

    def read_func(self) -> FuncOp:
        self.values = {}  # a function's names are its own
        start = self.here()
        self.keyword("func.func")
        self.expect("@")
        sym_name = self.word()
        args = self.comma_list(self.argument, "(", ")")
        attrs = {}
        if self.at("attributes"):
            self.keyword("attributes")
            attrs = self.attrs()
        func = FuncOp(sym_name, [t for _, t, _ in args], [hint_of(n) for n, _, _ in args], {},
                      Loc(self.filename, self.line(start)))
        func.num_subgroups = attrs.pop("num_subgroups", None)
        func.lanes = attrs.pop("lanes", None)
        func.constexprs = attrs
        for (name, _, pos), v in zip(args, func.args):
            self.define(name, v, pos)
        self.func = func
        self.expect("{")
        self.block(func.body)
        func.dialect = dialect_of(self.text[start:self.pos])
        verify(func)
        return func

    def argument(self) -> tuple[str, object, int]:
        """`%a: type` and an array's `{xegpu.block_io = false, xegpu.within_extents = false, xegpu.strided =
        false}`."""
        pos = self.here()
        name = self.value_name()
        self.expect(":")
        t = self.type()
        if self.at("{"):
            fields = {key.removeprefix("xegpu."): value for key, value in self.attrs().items()}
            if not isinstance(t, MemRefType) or not set(fields) <= set(ARG_ATTRS) or any(fields.values()):
                raise self.error(f"an argument's attributes are {', '.join(f'xegpu.{a} = false' for a in ARG_ATTRS)}"
                                 " on a memref", pos)
            t = dataclasses.replace(t, **fields)
        return name, t, pos


def hint_of(name: str) -> str | None:
    """`%x` -> "x"; the printer's numbers (`%3`, `%3#1`) name no variable."""
    text = name[1:].split("#")[0]
    return None if text.isdigit() else text


def dialect_of(text: str) -> str:
    """XeGPU IR prints its layouts, tensor descriptors or argument attributes (the sync ops are xegpu ops at every
    level); IR with none of them prints the same in either dialect."""
    return "xegpu" if XEGPU.search(text) else "xetile"


# ---- type readers: the text after each prefix ---------------------------------------------------------------
def read_vector(p: Parser) -> VectorType:
    shape, dtype = p.shape()
    p.expect(">")
    return VectorType(shape, dtype)


def read_memref(p: Parser) -> MemRefType:
    """`memref<?x?xf16, strided<[?, 1]>>` (an array argument) or `memref<32x64xf16, slm>` (an SLM buffer)."""
    start = p.pos
    p.skip()
    rank = 0
    while p.accept("?x"):
        rank += 1
    if rank == 0:
        shape, dtype = p.shape()
        p.expect(",")
        p.keyword("slm")
        p.expect(">")
        return SlmMemRefType(dtype, shape=shape)
    _, dtype = p.shape()
    p.expect(",")
    p.keyword("strided")
    p.expect("<")
    strides = p.comma_list(lambda: "?" if p.accept("?") else str(p.int()), "[", "]")
    p.expect(">")
    p.expect(">")
    if len(strides) != rank:
        raise p.error(f"{rank}-D memref with {len(strides)} strides", start)
    order = COL_MAJOR if rank > 1 and strides[-2:] == ["1", "?"] else ROW_MAJOR
    return MemRefType(dtype, order=order, rank=rank)


def read_tile(p: Parser) -> TileType:
    """`!xetile.tile<32x16xf16[, #scatter[<chunk_size = N>]][, #xetile.tile_attr<wg = .., order = ..>]>`."""
    shape, dtype = p.shape()
    chunk, scatter, fields = 1, False, {}
    while p.accept(","):
        if p.accept("#scatter"):
            scatter = True
            if p.accept("<"):
                chunk = p.field("chunk_size", p.int)
                p.expect(">")
            continue
        p.expect("#xetile.tile_attr<")
        while True:
            key = p.word()
            p.expect("=")
            fields[key] = p.layout() if key == "wg" else tuple(p.ints())
            if not p.accept(","):
                break
        p.expect(">")
    p.expect(">")
    order, layout = fields.get("order", ROW_MAJOR), fields.get("wg")
    if scatter:
        return ScatterTileType(shape, dtype, order, layout, chunk_size=chunk)
    return TileType(shape, dtype, order, layout)


def read_tensor_desc(p: Parser) -> TensorDescType:
    """`!xegpu.tensor_desc<8x16xf16[, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>
    |#xegpu.scatter_tdesc_attr<>][, #xegpu.layout<...>]>`."""
    shape, dtype = p.shape()
    cls, fields, layout = TensorDescType, {}, None
    while p.accept(","):
        if p.accept("#xegpu.scatter_tdesc_attr<>"):
            cls = ScatterDescType
        elif p.accept("#xegpu.block_tdesc_attr<"):
            while not p.accept(">"):
                p.accept(",")
                name = p.word()
                p.expect("=")
                fields[name] = p.attr_value()
        else:
            layout = p.layout()
    p.expect(">")
    return cls(shape, dtype, layout, fields.get("memory_space", "global"), fields.get("boundary_check", True))


TYPE_READERS = [("vector<", read_vector), ("memref<", read_memref), ("!xetile.tile<", read_tile),
                ("!xegpu.tensor_desc<", read_tensor_desc), ("!xegpu.nbarrier", lambda p: NbarrierType())]


def parse_func(text: str, filename: str = "<ir>") -> FuncOp:
    """The function the printer printed as `text`, verified. ParseError names the line and column where the text
    is not the printer's syntax; a CompilationError the rule an op breaks, at `filename` and the op's line (every
    op's loc)."""
    p = Parser(text, filename)
    func = p.read_func()
    if p.at_text():
        raise p.error(f"expected the end of the text after the function, found {p.found()}")
    return func


def parse_funcs(text: str, filename: str = "<ir>") -> list[FuncOp]:
    """Every function in `text`, in order, as parse_func reads one: several printed functions one after another,
    comments between them (such as the stage headers XETILE_DUMP_IR=1 prints) skipped."""
    p = Parser(text, filename)
    funcs = []
    while p.at_text():
        funcs.append(p.read_func())
    return funcs
