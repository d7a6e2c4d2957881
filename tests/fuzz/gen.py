"""A seeded generator of random, valid kernels and launches for the differential fuzzer.

A batch is one generated `@xetile.kernel` holding several independent cases, each reading its own arrays and
writing its own outputs, so that one device build checks many cases. The case kinds (CASE_WEIGHTS): element-wise
expression trees over every dtype, reductions (NaN, infinities and signed zeros too, argmax/argmin), scans,
broadcasts, transposes, casts between every dtype, tile_mma of every operand type with loops over K, loops with
carried tiles, atomics of every kind and element type, arrays of rank 1 to 4 (leading offsets; slices skipped,
unaligned), 1-D tiles and vectors with `arange` masks, gather/scatter/atomics on #scatter tiles (chunk_size, masks,
update_tile_offset), layouts on the ops' results and convert_layout, shared local memory with barriers, and the
kinds registered further down (bit casts, rank broadcasts, pointer arithmetic, while loops, `break` and
`continue` on counts read from memory, `return` inside nested ifs of a called kernel, atomic_cas, `reduce` and
`associative_scan` with combine functions of the user's, value shape ops, sort and topk).
FAMILIES switches the kinds and their variants on; DISABLED names those left off and the defect each hits;
XETILE_FUZZ_KINDS (comma-separated) draws from some kinds only, for a campaign on them.
Arrays are row- or column-major pitched views at random origins of bigger allocations; tiles take boundary shapes
and sit inside, across, beyond and before the arrays' edges. Every choice comes from seeded
`numpy.random.Generator`s (one for the batch's grid and layouts, one per case), so a (seed, batch, case) gives the
same kernel and inputs on every machine, in a batch of any size. A share of the batches (FP_FUSION) launch with
`fp_fusion`: the device may round an f32 multiply and the add taking it once where the interpreter rounds each, within
the float tolerances.

The expression trees keep values finite and the comparisons meaningful: operands of `*`, `exp` and `**` are
clamped, divisors are kept away from zero, integer divisors are 1..8 and shift amounts below the bit width (no
undefined behaviour), and operations whose result jumps with the last bit of their inputs (comparisons, float
`//` and `%`, float -> int casts) only take operands every level computes bit for bit ("exact" subtrees).
"""
from __future__ import annotations

import functools
import itertools
import os
from dataclasses import dataclass, field, replace

import numpy as np

from xetile_jit.ir import types
from xetile_jit.target.targets import CPU_TARGETS, get_target

FLOATS = ["float16", "bfloat16", "float32"]


def kind(dtype: str) -> str:
    return "f" if dtype in FLOATS else "b" if dtype == "bool" else "u" if dtype.startswith("uint") else "i"


INTS = ["int8", "uint8", "int16", "int32", "int64"]
DTYPES = FLOATS + INTS + ["bool"]
ELEMENT_TYPES = [types.bool_ if d == "bool" else getattr(types, d) for d in DTYPES]
BITS = {"int8": 8, "uint8": 8, "int16": 16, "int32": 32, "int64": 64}
BOUNDARY = (1, 2, 7, 8, 13, 16, 17, 31, 32, 33)   # tile dims: around the 8/16/32 block and subgroup sizes
# The driver's build of the unrolled SPIR-V dominates the fuzzer's time and grows faster than linearly with it: small
# tiles. (-cl-opt-disable would build 10x faster but gives wrong results: /work/notes/fuzz-bugs/03-*.)
MAX_TILE_ELEMENTS = 48
# Offsets near 2**31 and 2**32 (the index-width rule: 64-bit offsets, clamped block coordinates).
HUGE_OFFSETS = True
# Int -> float mixing only from types whose values f16/bf16 hold without overflow.
SMALL_INTS = ["int8", "uint8", "int16", "bool"]
MMA_TYPES = [("float16", "float16"), ("bfloat16", "bfloat16"), ("float32", "float32"), ("int8", "int8"),
             ("uint8", "uint8"), ("int8", "uint8"), ("uint8", "int8")]
REDUCE_KINDS = {"f": ["add", "mul", "max", "min"], "i": ["add", "mul", "max", "min", "and", "or", "xor"],
                "b": ["max", "min", "and", "or", "xor"]}
# every atomic_rmw_tile kind (the dtype kinds it takes) and element type (ir/elementwise.py ATOMIC_KINDS)
ATOMIC_KINDS = {"add": "fiu", "mul": "fiu", "max": "fiu", "min": "fiu", "and": "iu", "or": "iu", "xor": "iu",
                "xchg": "fiu"}
ATOMIC_DTYPES = ["float16", "bfloat16", "float32", "int32", "uint32", "int64", "uint64"]
ATOMIC_CASES = [(k, d) for k, kinds in ATOMIC_KINDS.items() for d in ATOMIC_DTYPES if kind(d) in kinds]
# every dtype of the language, for conversions
ALL_DTYPES = FLOATS + ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"]
LITERALS = {"f": [1.5, -0.25, 3.0, 0.5, 2.0], "i": [1, 3, -2, 7, 100], "u": [1, 3, 7, 100, 255], "b": [True, False]}
FP_FUSION = 0.25  # the share of batches launched with fp_fusion
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5}
# the dims of reductions, scans and combines also written as Triton and numpy write them (the last dim as -1, every
# dim as None), every other time (Gen.axes: no random draw, so the cases stay what they were)
TRITON_AXES = {(1,): -1, (0, 1): None}


def promote(a: str, b: str) -> str:
    """The DSL's promotion (docs/guide.md "Types"): float beats int, wider beats narrower, unsigned wins a tie."""
    if a == b:
        return a
    if kind(a) == "f" or kind(b) == "f":
        if kind(a) == "f" and kind(b) == "f":
            return "float32" if {a, b} == {"float16", "bfloat16"} else max(a, b, key=FLOATS.index)
        return a if kind(a) == "f" else b
    if "bool" in (a, b):
        return b if a == "bool" else a
    if BITS[a] != BITS[b]:
        return max(a, b, key=BITS.get)
    return a if kind(a) == "u" else b


@dataclass
class Array:
    name: str
    shape: tuple[int, int]
    dtype: str
    seed: int
    col_major: bool = False
    pitch: int = 0
    origin: tuple[int, int] = (0, 0)
    fill: str = "small"
    lead: tuple[int, ...] = ()   # leading dims (levels.make_array)
    step: int = 1                # the view takes every step-th slice along them

    aliased: bool = False        # passed again as another argument (Alias): the code binds it to a name

    def code(self) -> str:
        more = f", lead={self.lead}, step={self.step}" if self.lead else ""
        made = (f"make_array({self.seed}, {self.shape}, {self.dtype!r}, col_major={self.col_major}, "
                f"pitch={self.pitch}, origin={self.origin}, fill={self.fill!r}{more})")
        return f"({self.name} := {made})" if self.aliased else made


@dataclass
class Alias:
    """The array of an earlier argument passed again (the launch gives both one memory)."""
    name: str
    of: Array

    def code(self) -> str:
        return self.of.name


@dataclass
class Scalar:
    name: str
    dtype: str | None   # None: a Python number
    value: object

    def code(self) -> str:
        return f"scalar({self.dtype!r}, {self.value!r})"


@dataclass
class Permutation:
    """An int32 [rows, 1] input holding a permutation of 0..rows-1 (gather indices)."""
    name: str
    rows: int
    seed: int

    def code(self) -> str:
        return (f"(lambda p: (p, p))(np.random.default_rng({self.seed}).permutation({self.rows}).astype(np.int32)"
                f".reshape({self.rows}, 1))")


@dataclass
class Case:
    kind: str
    position: int = 0   # in its batch
    args: list = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    tols: dict = field(default_factory=dict)   # output array name -> (device tolerance, interpreters reorder)
    functions: list[str] = field(default_factory=list)   # module-level @xetile.kernel functions (combines) it calls


@dataclass
class Batch:
    name: str
    cases: list[Case]
    grid: tuple[int, int]
    options: dict

    def args(self) -> list:
        return [a for c in self.cases for a in c.args]

    def source(self) -> str:
        params = ", ".join(a.name for a in self.args())
        body = ["    pid0 = xetile.program_id(0)", "    pid1 = xetile.program_id(1)"]
        for case in self.cases:
            body += [f"    # {case.kind}"] + ["    " + line for line in case.lines]
        functions = [line for case in self.cases for line in case.functions]
        return "\n".join([*functions, "@xetile.kernel", f"def {self.name}({params}):", *body]) + "\n"

    def args_code(self) -> str:
        return "[" + ",\n            ".join(a.code() for a in self.args()) + "]"

    def tols(self) -> dict:
        return {k: v for c in self.cases for k, v in c.tols.items()}

    def array_names(self) -> list[str]:
        return [a.name for a in self.args() if not isinstance(a, Scalar)]


def xt(dtype: str) -> str:
    return "xetile.bool" if dtype == "bool" else f"xetile.{dtype}"


def clamp(code: str, bound: float = 8.0) -> str:
    return f"xetile.minimum(xetile.maximum({code}, {-bound}), {bound})"


class Gen:
    """Draws the cases of one batch. `subgroups` is the batch's subgroup count; `mma` its tile_mma layout."""

    def __init__(self, rng: np.random.Generator, subgroups: int, mma: tuple | None, grid):
        self.rng = rng
        self.subgroups = subgroups
        self.mma_layout = mma
        self.grid = grid
        self.case: Case | None = None
        self.prefix = ""
        self.counter = 0
        self.triton_axes = False  # whether the next dims are spelt as Triton spells them (`axes`)

    # ---- small draws --------------------------------------------------------------------------------

    def axes(self, dims):
        """`dims` (a list, or one dim) as the case writes them: every other time as Triton does (TRITON_AXES), where
        it has a spelling of its own."""
        self.triton_axes = not self.triton_axes
        key = tuple(dims) if isinstance(dims, list) else (dims,)
        return TRITON_AXES[key] if self.triton_axes and key in TRITON_AXES else dims

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{self.prefix}{stem}{self.counter}"

    def tile_shape(self, cap: int = MAX_TILE_ELEMENTS) -> tuple[int, int]:
        m = self.pick([d for d in BOUNDARY if d <= cap])
        n = self.pick([d for d in BOUNDARY if m * d <= cap])
        return (m, n) if self.chance(0.5) else (n, m)

    def extent(self, tile: int) -> int:
        return int(self.pick([tile, tile + 1, max(1, tile - 1), self.rng.integers(1, 41)]))

    def offset(self, extent: int, size: int) -> int:
        where = self.pick(["inside", "inside", "edge", "past", "negative", "far"] + (["huge"] if HUGE_OFFSETS else []))
        if where == "inside":
            return int(self.rng.integers(0, extent))
        if where == "edge":
            return extent - size + int(self.rng.integers(-1, 2))
        if where == "past":
            return extent + int(self.rng.integers(0, 3))
        if where == "negative":
            return -int(self.rng.integers(1, size + 1))
        if where == "huge":
            return self.pick([2**31 - 1, 2**31 - size, -2**31, 2**32 - size, 2**32 + 1])
        return int(self.pick([-1, 1]) * self.rng.integers(size + 1, 200))

    def store_offset(self, extent: int, size: int) -> int:
        """Where an output tile starts: mostly where it writes all or part of its block (what the case checks)."""
        return int(self.rng.integers(-size + 1, extent)) if self.chance(0.6) else self.offset(extent, size)

    def array(self, stem: str, shape, dtype: str, fill: str = "small", col_major: bool | None = None, lead=(),
              step: int = 1) -> str:
        name = self.fresh(stem)
        col = len(shape) == 2 and (self.chance(0.3) if col_major is None else col_major)
        pitch = int(self.pick([0, 0, 1, 5, 16]))
        origin = (int(self.pick([0, 0, 2])), int(self.pick([0, 0, 3])))
        self.case.args.append(Array(name, tuple(shape), dtype, int(self.rng.integers(2**31)), col, pitch, origin,
                                    fill, tuple(lead), step))
        return name

    def index(self, value: int) -> str:
        """An offset in the kernel: a literal or a runtime scalar (Python int, or an i16/i32/i64 numpy scalar)."""
        if self.chance(0.5):
            return str(value)
        name = self.fresh("s")
        dtype = self.pick([None, "int64"] + (["int32"] if -2**31 <= value < 2**31 else [])
                          + (["int16"] if -2**15 <= value < 2**15 else []))
        self.case.args.append(Scalar(name, dtype, value))
        return name

    def lead_offsets(self, lead) -> list[str]:
        """Offsets along leading dims: mostly a slice inside, sometimes one just outside (a tile there reads padding
        and writes nothing)."""
        huge = [2**31 - 1, -2**31, 2**32 + 1] if "huge_leading_offsets" in FAMILIES else []
        return [self.index(int(self.rng.integers(n) if self.chance(0.8) else self.pick([-1, n, *huge])))
                for n in lead]

    def layout(self, shape) -> str:
        """`, layout=...` with a random legal layout of the batch's subgroup count, or nothing."""
        lay = self.layout_value(shape)
        return f", layout={lay}" if lay else ""

    def layout_value(self, shape, replicated: bool = True) -> str:
        """A random legal xetile.Layout for a `shape` value of any dtype (sg_layout and sg_data of the batch's subgroup
        count, perhaps inst_data too), or "" (none). `replicated`: whether subgroups may share data."""
        if self.chance(0.5) or (len(shape) == 1 and "layouts_1d" not in FAMILIES):
            return ""
        if self.subgroups == 1:
            inst = random_inst_data(self.rng, shape) if "inst_data_only" in FAMILIES else None
            return f"xetile.Layout(inst_data={list(inst)})" if inst else ""
        for _ in range(8):
            sg_layout, sg_data = random_layout(self.rng, shape, self.subgroups)
            if replicated or all(n * d <= w for n, d, w in zip(sg_layout, sg_data, shape)):
                break
        else:
            return ""
        inst = random_inst_data(self.rng, sg_data) if "inst_data" in FAMILIES and self.chance(0.3) else None
        column_first = "layout_order" in FAMILIES and len(shape) == 2 and self.chance(0.3)
        return (f"xetile.Layout({list(sg_layout)}, {list(sg_data)}{f', inst_data={list(inst)}' if inst else ''}"
                f"{', order=[0, 1]' if column_first else ''})")

    def place(self, extent, shape, lead=()) -> str:
        """The offsets of a `shape` tile of an array of `extent` (its last dims) behind `lead` dims."""
        offs = self.lead_offsets(lead) + [self.index(self.offset(e, s)) for e, s in zip(extent[-len(shape):], shape)]
        return "[" + ", ".join(offs) + "]"

    def load(self, array: str, extent, shape, *, pad: str = "", layout: bool = True, lead=()) -> str:
        lay = self.layout(shape) if layout else ""
        name = self.fresh("v")
        offsets = self.place(extent, shape, lead)
        self.case.lines.append(f"{name} = xetile.load_tile(xetile.init_tile({array}, {offsets}, {list(shape)}{lay})"
                               f"{pad})")
        return name

    def store(self, dtype: str, shape, value: str, tol=(0.0, False), stem: str = "out", lead=(), step=1) -> tuple:
        """Stores `value` through a tile of a new output array; workgroups write disjoint blocks (a 1-D tile: one
        block each along the row). The array's name and the tile's offsets."""
        gm, gn = self.grid
        if len(shape) == 1:
            extent = (self.extent(shape[0]) * gm * gn,)
            shift = [f" + (pid0 * {gn} + pid1) * {shape[0]}"]
        else:
            extent = (self.extent(shape[0]) * gm, self.extent(shape[1]) * gn)
            shift = [f" + pid0 * {shape[0]}", f" + pid1 * {shape[1]}"]
        out = self.array(stem, extent, dtype, lead=lead, step=step)
        offs = self.lead_offsets(lead) + [self.index(self.store_offset(e, s)) + d
                                          for e, s, d in zip(extent, shape, shift)]
        self.case.lines.append(f"xetile.store_tile(xetile.init_tile({out}, [{', '.join(offs)}], {list(shape)}), "
                               f"{value})")
        self.case.tols[out] = tol
        return out, offs

    # ---- cases --------------------------------------------------------------------------------------
    def make(self, index: int, kind_: str) -> Case:
        self.case = Case(kind_, index)
        self.prefix = f"c{index}_"
        getattr(self, kind_)()
        return self.case

    def elementwise(self) -> None:
        dtype = self.pick(DTYPES)
        shape = self.tile_shape()
        expr = Expr(self, shape)
        code, exact, ops = expr.tree(dtype, int(self.rng.integers(1, 4)))
        out = dtype
        if kind(dtype) in "iub" and self.chance(0.2):   # store_tile converts: to a type holding every value
            out = self.pick([promote(dtype, "int64"), "float32"] if dtype != "int64" else ["int64"])
        tol = 0.0 if exact else max(TOLERANCE.get(dtype, 0), TOLERANCE.get(out, 0)) * (2 + ops)
        self.store(out, shape, code, (tol, False))

    def reduce(self) -> None:
        dtype = self.pick(DTYPES)
        shape = self.tile_shape()
        dims = self.pick([[0], [1], [0, 1]])
        count = int(np.prod([shape[d] for d in dims]))
        kinds = [k for k in REDUCE_KINDS[kind(dtype) if kind(dtype) != "u" else "i"]
                 if not (k == "mul" and kind(dtype) == "f" and count > 8)]   # long float products overflow
        rkind = self.pick(kinds)
        special = kind(dtype) == "f" and rkind in ("max", "min") and self.chance(0.5)
        extent = (self.extent(shape[0]), self.extent(shape[1]))
        src = self.array("x", extent, dtype, fill="special" if special else self.pick(["small", "full"]))
        pad = self.pick(["", f", padding={self.pick(LITERALS[kind(dtype)])}"])
        v = self.load(src, extent, shape, pad=pad)
        kept = tuple(1 if d in dims else n for d, n in enumerate(shape))
        reorders = kind(dtype) == "f" and rkind in ("add", "mul")
        tol = TOLERANCE[dtype] * count if reorders else 0.0
        self.store(dtype, kept, f"xetile.tile_reduce({rkind!r}, {v}, {self.axes(dims)})",
                   (tol, reorders))

    def transpose(self) -> None:
        dtype = self.pick(DTYPES)
        shape = self.tile_shape()
        extent = (self.extent(shape[0]), self.extent(shape[1]))
        v = self.load(self.array("x", extent, dtype), extent, shape)
        code = f"{v}.T" if self.chance(0.5) else f"xetile.tile_transpose({v}, [1, 0])"
        self.store(dtype, shape[::-1], code)

    def broadcast(self) -> None:
        dtype = self.pick(DTYPES)
        shape = self.tile_shape()
        dims = self.pick([[0], [1], [0, 1]])
        small = tuple(1 if d in dims else n for d, n in enumerate(shape))
        extent = (self.extent(small[0]), self.extent(small[1]))
        v = self.load(self.array("x", extent, dtype), extent, small)
        self.store(dtype, shape, f"xetile.tile_broadcast({v}, {dims}, {list(shape)})")

    def mma(self) -> None:
        a_dt, b_dt = self.pick(MMA_TYPES)
        acc = "float32" if kind(a_dt) == "f" else "int32"
        m, n = mma_shape(self.rng, self.mma_layout)
        bk = int(self.pick([k for k in (1, 7, 8, 16, 17, 32) if m * n * k <= 512]))
        steps = int(self.pick([1, 1, 2, 3]))
        k_total = bk * steps - int(self.rng.integers(0, bk))   # the last K step may be partial
        fill = "full" if kind(a_dt) != "f" else "small"
        a = self.array("a", (m, k_total), a_dt, fill=fill)
        b_form = self.pick(["row", "order", "transpose"])
        b = self.array("b", (n, k_total) if b_form == "transpose" else (k_total, n), b_dt, fill=fill,
                       col_major=b_form == "order")
        ta, tb = self.fresh("ta"), self.fresh("tb")
        lines = self.case.lines
        lines.append(f"{ta} = xetile.init_tile({a}, [0, 0], [{m}, {bk}])")
        if b_form == "transpose":
            lines.append(f"{tb} = xetile.init_tile({b}, [0, 0], [{n}, {bk}])")
        else:
            lines.append(f"{tb} = xetile.init_tile({b}, [0, 0], [{bk}, {n}])")
        acc_name = self.fresh("acc")
        init = self.pick(["zeros", "load", "none"])
        if init == "load":
            c = self.array("c", (m, n), acc)
            lines.append(f"{acc_name} = xetile.load_tile(xetile.init_tile({c}, [0, 0], [{m}, {n}]))")
        else:
            lines.append(f"{acc_name} = xetile.zeros([{m}, {n}], {xt(acc)})")
        vb = f"xetile.tile_transpose(xetile.load_tile({tb}), [1, 0])" if b_form == "transpose" else \
            f"xetile.load_tile({tb})"
        step_b = "[0, %d]" % bk if b_form == "transpose" else "[%d, 0]" % bk
        mma_args = f"xetile.load_tile({ta}), {vb}" + ("" if init == "none" and steps == 1 else f", {acc_name}")
        if steps == 1 and self.chance(0.5):
            lines.append(f"{acc_name} = xetile.tile_mma({mma_args})")
        else:
            k = self.index(k_total)
            lines += [f"for k in range(0, {k}, {bk}):",
                      f"    {acc_name} = xetile.tile_mma(xetile.load_tile({ta}), {vb}, {acc_name})",
                      f"    {ta} = xetile.update_tile_offset({ta}, [0, {bk}])",
                      f"    {tb} = xetile.update_tile_offset({tb}, {step_b})"]
        reorders = acc == "float32"
        self.store(acc, (m, n), acc_name, (1e-5 * (k_total + 8) if reorders else 0.0, reorders))

    def loop(self) -> None:
        """Tiles and an accumulator carried through an scf.for; each iteration stores a block."""
        dtype = self.pick(DTYPES)
        shape = self.tile_shape(32)
        extent = (self.extent(shape[0]) + 8, self.extent(shape[1]) + 8)
        src = self.array("x", extent, dtype)
        steps = int(self.rng.integers(0, 4))
        gm = self.grid[0]
        seq = self.array("seq", (4 * gm * shape[0], shape[1]), dtype)
        self.case.tols[seq] = (0.0, False)
        t, ts, acc = self.fresh("t"), self.fresh("ts"), self.fresh("acc")
        dm, dn = (int(self.rng.integers(-9, 10)) for _ in range(2))
        op = {"f": "({a} + {b})", "i": "({a} ^ {b})", "u": "({a} + {b})", "b": "({a} | {b})"}[kind(dtype)]
        o0, o1 = (self.index(self.offset(e, s)) for e, s in zip(extent, shape))
        self.case.lines += [
            f"{t} = xetile.init_tile({src}, [{o0}, {o1}], {list(shape)})",
            f"{ts} = xetile.init_tile({seq}, [pid0 * {4 * shape[0]}, 0], {list(shape)})",
            f"{acc} = xetile.load_tile({t})",
            f"for i in range({self.index(steps)}):",
            f"    {t} = xetile.update_tile_offset({t}, [{dm}, {dn}])",
            f"    {acc} = " + op.format(a=acc, b=f"xetile.load_tile({t})"),
            f"    xetile.store_tile({ts}, {acc})",
            f"    {ts} = xetile.update_tile_offset({ts}, [{shape[0]}, 0])"]
        self.store(dtype, shape, acc)

    def atomic(self) -> None:
        akind, dtype = self.pick(ATOMIC_CASES)
        shape = self.tile_shape(32)
        gm, gn = self.grid
        # every workgroup on one tile (old values not kept) where the result does not depend on their order
        contended = (kind(dtype) != "f" or akind in ("max", "min")) and akind != "xchg" and self.chance(0.3)
        extent = (self.extent(shape[0]) * gm, self.extent(shape[1]) * gn)
        fill = "full" if akind in ("and", "or", "xor") else "special" if akind in ("max", "min") and \
            kind(dtype) == "f" else "small"
        mem = self.array("mem", extent, dtype, fill=fill)
        self.case.tols[mem] = (0.0, False)
        val = self.load(self.array("val", shape, dtype), shape, shape)
        o0, o1 = (self.index(self.offset(e, s)) for e, s in zip(extent, shape))
        shift = ("", "") if contended else (f" + pid0 * {shape[0]}", f" + pid1 * {shape[1]}")
        tile = f"xetile.init_tile({mem}, [{o0}{shift[0]}, {o1}{shift[1]}], {list(shape)})"
        call = f"xetile.atomic_rmw_tile({akind!r}, {val}, {tile})"
        if contended:
            self.case.lines.append(call)
        else:
            self.store(dtype, shape, call, stem="old")

    def ranked(self) -> None:
        """A tile of an array of rank 1 to 4: leading offsets pick a slice, whose strides may skip slices, run
        backwards (negative) or break the 64-byte slice alignment (odd sizes); 1-D tiles read along the last dim."""
        dtype = self.pick(DTYPES)
        one_d = "tiles_1d" in FAMILIES and self.chance(0.4)
        shape = (self.pick([d for d in BOUNDARY if d <= MAX_TILE_ELEMENTS]),) if one_d else self.tile_shape()
        lead = tuple(int(self.pick([1, 2, 3])) for _ in range(int(self.pick([0, 1, 1, 2]))))
        steps = [1, 1, 2] + ([-1, -2] if "negative_strides" in FAMILIES else [])
        flat = one_d and self.chance(0.5)   # a 1-D tile of a row of a matrix, or of a 1-D array (with lead dims)
        extent = tuple(self.extent(n) for n in ((self.pick([1, 2, 5]), *shape) if one_d and not flat else shape))
        src = self.array("x", extent, dtype, lead=lead, step=int(self.pick(steps)))
        pad = f", padding={self.pick(LITERALS[kind(dtype)])}" if self.chance(0.4) else ""
        v = self.load(src, extent, shape, pad=pad, lead=lead + extent[:len(extent) - len(shape)])
        code = {"f": f"({v} * 2.0)", "i": f"({v} ^ 5)", "u": f"({v} + 3)", "b": f"(~{v})"}[kind(dtype)]
        self.store(dtype, shape, code, lead=lead, step=int(self.pick(steps)))

    def vector_1d(self) -> None:
        """1-D vectors: a 1-D tile masked with `arange` (a ragged end, a stride pattern), reduced, broadcast back,
        and stored as a 1-D tile or as a row or column."""
        dtype = self.pick(DTYPES)
        n = int(self.pick([d for d in BOUNDARY if d <= MAX_TILE_ELEMENTS]))
        extent = (self.extent(n),)
        v = self.load(self.array("x", extent, dtype), extent, (n,))
        start = int(self.rng.integers(-4, 5))
        cols = f"xetile.arange({start}, {start + n})"
        cond = self.pick([f"({cols} < {self.index(int(self.rng.integers(start - 1, start + n + 2)))})",
                          f"(({cols} % 3) != 0)", f"({cols} >= {start + n // 2})"])
        w = self.fresh("w")
        self.case.lines.append(f"{w} = xetile.where({cond}, {v}, {self.pick(LITERALS[kind(dtype)])})")
        rkind = self.pick([k for k in REDUCE_KINDS[kind(dtype) if kind(dtype) != "u" else "i"]
                           if k not in ("add", "mul") or kind(dtype) != "f"])   # exact: no float sums to reorder
        total = f"xetile.broadcast_to(xetile.tile_reduce({rkind!r}, {w}, [0]), [{n}])"
        code = self.pick([w, total, f"xetile.where({cond}, {total}, {w})"])
        if self.chance(0.3):
            axis = int(self.pick([0, 1]))
            self.store(dtype, (1, n) if axis == 0 else (n, 1), f"xetile.expand_dims({code}, {axis})")
        else:
            self.store(dtype, (n,), code)

    def gather(self) -> None:
        """load_gather / store_scatter / atomic_rmw_tile on #scatter tiles of element offsets (some past either end
        of the array: padding, no write), with and without chunk_size, masks, and update_tile_offset."""
        dtype = self.pick([d for d in DTYPES if d != "bool"])
        chunk = int(self.pick([1, 1, 2, 4, 8]))
        rows = int(self.pick([1, 2, 7, 8, 16]))
        cols = 1 if chunk > 1 else int(self.pick([d for d in (1, 2, 8, 16) if rows * d <= 32]))
        one_d = "gather_1d" in FAMILIES and chunk == 1 and self.chance(0.3)
        table_shape = (self.extent(rows * max(cols, chunk) * 2),) if one_d and self.chance(0.5) else \
            (self.extent(rows), self.extent(max(cols, chunk) + 2))
        size = int(np.prod(table_shape))
        # distinct offsets (a scatter's writes must not collide): row stride >= the elements a row covers
        col_step = int(self.pick([1, 2, 3]))
        row_step = cols * col_step + chunk - 1 + int(self.rng.integers(0, 3))
        base = int(self.pick([0, 0, -row_step, size - 3, int(self.rng.integers(0, max(1, size)))]))
        if one_d and cols > 1 and self.chance(0.5):
            index_shape = (cols,)
            idx = f"(xetile.arange(0, {cols}) * {col_step} + {base})"
        else:
            index_shape = (rows, cols)
            # the rows in order, or permuted through a loaded [rows, 1] index column (broadcast along the row)
            row = f"xetile.load_tile(xetile.init_tile({self.perm(rows)}, [0, 0], [{rows}, 1]))" \
                if self.chance(0.3) else f"xetile.iota([{rows}, {cols}], 0)"
            idx = (f"({row} * {row_step} + xetile.iota([{rows}, {cols}], 1) * {col_step} + {self.index(base)})")
        tshape = (index_shape[0], chunk) if chunk > 1 else index_shape
        # one mask bit per offset (per chunk with chunk_size)
        mask = self.pick(["", f", (xetile.iota({list(index_shape)}, {len(index_shape) - 1}) % 3) != 1",
                          f", xetile.iota({list(index_shape)}, 0) < {self.index(int(self.rng.integers(0, rows + 1)))}"])
        if len(index_shape) == 1 and mask:
            mask = f", (xetile.arange(0, {index_shape[0]}) % 3) != 1"
        chunk_arg = f", chunk_size={chunk}" if chunk > 1 or self.chance(0.2) else ""
        table = self.array("tab", table_shape, dtype)
        t = self.fresh("g")
        self.case.lines.append(f"{t} = xetile.init_tile({table}, indices={idx}{chunk_arg})")
        op = self.pick(["gather", "gather", "scatter", "atomic"])
        if op == "atomic" and dtype not in ATOMIC_DTYPES:
            op = "gather"
        if self.chance(0.4) and (chunk == 1 or "gather_chunk_update" in FAMILIES):
            delta = self.pick([str(int(self.rng.integers(-3, 4))),
                               f"xetile.full({list(index_shape)}, {int(self.rng.integers(-3, 4))}, xetile.int32)"])
            if op != "gather":   # a uniform move keeps the offsets distinct
                delta = str(int(self.rng.integers(-3, 4)))
            self.case.lines.append(f"{t} = xetile.update_tile_offset({t}, {delta})")
        if op == "gather":
            pad = f", padding={self.pick(LITERALS[kind(dtype)])}" if self.chance(0.5) else ""
            self.store(dtype, tshape, f"xetile.load_gather({t}{mask}{pad})")
            return
        value = self.load(self.array("val", tshape, dtype), tshape, tshape, layout=False)
        self.case.tols[table] = (TOLERANCE.get(dtype, 0.0), False)
        if op == "scatter":
            self.case.lines.append(f"xetile.store_scatter({t}, {value}{mask})")
            self.case.tols[table] = (0.0, False)
            return
        # every workgroup updates the same elements: then only kinds whose result does not depend on their order,
        # and the old values (which do) are not kept
        contended = self.grid != (1, 1)
        akind = self.pick([k for k in ATOMIC_KINDS if kind(dtype) in ATOMIC_KINDS[k] and not
                           (contended and (k == "xchg" or (kind(dtype) == "f" and k not in ("max", "min"))))])
        masked = f", mask={mask[2:]}" if mask else ""
        call = f"xetile.atomic_rmw_tile({akind!r}, {value}, {t}{masked})"
        if contended:
            self.case.lines.append(call)
        else:
            self.store(dtype, tshape, call, stem="old")

    def perm(self, rows: int) -> str:
        """An int32 [rows, 1] array holding a permutation of 0..rows-1 (the generator's own draw)."""
        name = self.fresh("perm")
        self.case.args.append(Permutation(name, rows, int(self.rng.integers(2**31))))
        return name

    def layouts(self) -> None:
        """Layouts on the ops' results (load, transpose, reduce, broadcast) and convert_layout between them: every
        subgroup holds its piece, and the values move where two layouts differ."""
        dtype = self.pick(DTYPES)
        shape = self.tile_shape()
        extent = (self.extent(shape[0]), self.extent(shape[1]))
        v = self.load(self.array("x", extent, dtype), extent, shape)
        step = self.pick(["transpose", "reduce", "broadcast", "convert"])
        if step == "convert" and "convert_layout" in FAMILIES:
            lay = self.layout_value(shape) or "xetile.Layout([1, 1], " + f"{list(shape)})"
            if self.subgroups > 1 and lay.startswith("xetile.Layout([1, 1]"):
                lay = ""
            code = f"xetile.convert_layout({v}, {lay})" if lay else v
            self.store(dtype, shape, f"({code} + {code})" if kind(dtype) != "b" else code)
        elif step == "transpose":
            self.store(dtype, shape[::-1], f"xetile.tile_transpose({v}, [1, 0]{self.layout(shape[::-1])})")
        elif step == "reduce":
            dim = int(self.pick([0, 1]))
            kept = (1, shape[1]) if dim == 0 else (shape[0], 1)
            rkind = self.pick([k for k in REDUCE_KINDS[kind(dtype) if kind(dtype) != "u" else "i"]
                               if k not in ("add", "mul")])   # exact: no float sums to reorder
            self.store(dtype, kept, f"xetile.tile_reduce({rkind!r}, {v}, [{dim}]{self.layout(kept)})")
        else:
            small = self.fresh("r")
            self.case.lines.append(f"{small} = xetile.tile_reduce('max', {v}, [0])")
            self.store(dtype, shape, f"xetile.tile_broadcast({small}, [0], {list(shape)}{self.layout(shape)})")

    def slm(self) -> None:
        """Shared local memory: subgroups store their pieces of a tile to an alloc_slm buffer (filled first, where the
        read-back covers more), meet at a barrier, and read back another piece (another layout, another place in the
        buffer), which they store."""
        dtype = self.pick([d for d in DTYPES if d != "bool"])
        shape = self.tile_shape(32)
        extent = (self.extent(shape[0]), self.extent(shape[1]))
        buf = (shape[0] + int(self.pick([0, 0, 3])), shape[1] + int(self.pick([0, 0, 5])))
        replicated = "slm_replicated" in FAMILIES
        put = self.layout_value(shape, replicated)
        v = self.load(self.array("x", extent, dtype), extent, shape, layout=False)
        slm, at = self.fresh("slm"), [int(self.rng.integers(0, buf[0] - shape[0] + 1)),
                                      int(self.rng.integers(0, buf[1] - shape[1] + 1))]
        back = self.pick([shape, shape[::-1]]) if buf[0] >= shape[1] and buf[1] >= shape[0] else shape
        get = self.layout_value(back, replicated)
        self.case.lines.append(f"{slm} = xetile.alloc_slm({list(buf)}, {xt(dtype)})")
        if back != shape or at != [0, 0] or buf != shape:
            # the read-back tile sees elements the piece does not write: a fill first defines them (SLM starts
            # undefined, and checking mode reports a read of an element nothing wrote)
            fill = self.layout_value(buf, replicated)
            self.case.lines += [
                f"xetile.store_tile(xetile.init_tile({slm}, [0, 0], {list(buf)}{', layout=' + fill if fill else ''}), "
                f"{self.pick(LITERALS[kind(dtype)])})",
                "xetile.barrier()"]
        self.case.lines += [
            f"xetile.store_tile(xetile.init_tile({slm}, {at}, {list(shape)}{', layout=' + put if put else ''}), {v})",
            "xetile.barrier()"]
        self.store(dtype, back,
                   f"xetile.load_tile(xetile.init_tile({slm}, [0, 0], {list(back)}{', layout=' + get if get else ''}))")

    def alias(self) -> None:
        """One array passed as two written arguments: each workgroup writes the upper half of its rows through one
        and the lower half through the other (disjoint, as the compiler takes arguments not to alias)."""
        dtype = self.pick(DTYPES)
        m, n = self.tile_shape()
        gm, gn = self.grid
        extent = (self.extent(m), self.extent(n))
        v = self.load(self.array("x", extent, dtype), extent, (m, n))
        out = self.array("out", (2 * m * gm, n * gn), dtype)
        first = self.case.args[-1]
        first.aliased = True
        again = self.fresh("again")
        self.case.args.append(Alias(again, first))
        code = {"f": f"({v} * 2.0)", "i": f"({v} ^ 5)", "u": f"({v} + 3)", "b": f"(~{v})"}[kind(dtype)]
        for name, row, value in ((out, "0", v), (again, str(m), code)):
            self.case.lines.append(f"xetile.store_tile(xetile.init_tile({name}, [pid0 * {2 * m} + {row}, pid1 * {n}], "
                                   f"[{m}, {n}]), {value})")

    def reduce_nan(self) -> None:
        """Float reductions over NaN, infinities and signed zeros: maximum/minimum (a NaN wins), max/min (a NaN
        loses) and argmax/argmin (the first NaN wins), some padded with NaN."""
        dtype = self.pick(FLOATS)
        shape = self.tile_shape()
        rkind = self.pick(["maximum", "minimum", "max", "min", "argmax", "argmin"])
        dims = [int(self.pick([0, 1]))] if rkind.startswith("arg") else self.pick([[0], [1], [0, 1]])
        extent = (self.extent(shape[0]), self.extent(shape[1]))
        pad = self.pick(["", ", padding=float('nan')", ", padding=float('-inf')", ", padding=-0.0"])
        v = self.load(self.array("x", extent, dtype, fill="special"), extent, shape, pad=pad)
        kept = tuple(1 if d in dims else n for d, n in enumerate(shape))
        self.store("int32" if rkind.startswith("arg") else dtype, kept, f"xetile.tile_reduce({rkind!r}, {v}, {dims})")

    def scan(self) -> None:
        """tile_scan / cumsum: inclusive prefixes along a dim, padded elements included."""
        dtype = self.pick(DTYPES)
        shape = self.tile_shape(32)
        dim = int(self.pick([0, 1]))
        k = kind(dtype) if kind(dtype) != "u" else "i"
        kinds = [x for x in REDUCE_KINDS[k] if not (x == "mul" and k == "f" and shape[dim] > 8)]
        skind = self.pick(kinds)
        extent = (self.extent(shape[0]), self.extent(shape[1]))
        fill = "special" if k == "f" and skind in ("max", "min") and self.chance(0.5) else "small"
        v = self.load(self.array("x", extent, dtype, fill=fill), extent, shape)
        axis = self.axes(dim)
        code = f"xetile.cumsum({v}, {axis})" if skind == "add" and self.chance(0.3) else \
            f"xetile.tile_scan({skind!r}, {v}, {axis})"
        reorders = k == "f" and skind in ("add", "mul")
        self.store(dtype, shape, code, (TOLERANCE[dtype] * (shape[dim] + 2) if reorders else 0.0, reorders))

    def cast(self) -> None:
        """Conversions between every pair of dtypes, the unsigned ones too: ints wrap, floats round once, NaN and
        infinities stay, float -> int only of values the target type holds."""
        src, dst = self.pick(ALL_DTYPES), self.pick(ALL_DTYPES)
        shape = self.tile_shape()
        extent = (self.extent(shape[0]), self.extent(shape[1]))
        fill = "special" if src in FLOATS and dst in FLOATS else \
            "full" if src not in FLOATS and dst not in FLOATS and src != "bool" else "small"
        v = self.load(self.array("x", extent, src, fill=fill), extent, shape)
        if src in FLOATS and dst not in FLOATS and dst != "bool":
            low = 0.0 if dst.startswith("u") else -100.0
            v = f"xetile.minimum(xetile.maximum({v}, {low}), 100.0)"
        self.store(dst, shape, self.pick([f"{v}.to({xt(dst)})", f"xetile.cast({v}, {xt(dst)})"]))


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def random_layout(rng, shape, subgroups: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """A legal (sg_layout, sg_data) for `shape` with `subgroups` subgroups: sg_data divides each dim, and
    sg_layout x sg_data divides it or is a multiple of it (then subgroups wrap around or share data)."""
    factors = [(f, subgroups // f) for f in divisors(subgroups)]
    sg_layout = factors[int(rng.integers(len(factors)))]
    data = []
    for dim, lay in zip(shape, sg_layout):
        legal = [d for d in divisors(dim) if dim % (lay * d) == 0 or (lay * d) % dim == 0]
        data.append(legal[int(rng.integers(len(legal)))])
    return sg_layout, tuple(data)


def random_inst_data(rng, shape) -> tuple[int, ...] | None:
    """An inst_data (the block one instruction handles) dividing `shape` that both CPU targets take for loads, stores
    and values of every dtype (Target.inst_rule), or None. Every dtype, because the values a cast or a mixed-type
    operator joins share one layout, inst_data included (transforms/xetile/layout_completion.py): a [1, 1] block of an
    f32 load is no block for the stores of its f16 cast."""
    legal = [inst for inst in itertools.product(*map(divisors, shape)) if legal_everywhere(inst)]
    return legal[int(rng.integers(len(legal)))] if legal else None


@functools.cache
def legal_everywhere(inst: tuple[int, ...]) -> bool:
    return all(get_target(t).inst_rule(("load", "store", "value"), inst, element) is None
               for t in CPU_TARGETS for element in ELEMENT_TYPES)


def mma_shape(rng, mma) -> tuple[int, int]:
    """An M x N result shape the batch's tile_mma layout fits (any small shape without one)."""
    if mma is None:
        return int(rng.choice([1, 7, 8, 13, 16])), int(rng.choice([1, 7, 8, 16, 17]))
    (l0, l1), (d0, d1) = mma
    m = d0 * int(rng.choice([r for r in divisors(l0) + [l0 * 2] if d0 * r <= 16] or [1]))
    n = d1 * int(rng.choice([r for r in divisors(l1) if d1 * r <= 32] or [1]))
    return m, n


class Expr:
    """Element-wise expression trees of one shape; each node is (code, exact, number of ops)."""

    def __init__(self, gen: Gen, shape):
        self.gen = gen
        self.shape = shape
        self.extent = (gen.extent(shape[0]), gen.extent(shape[1]))
        self.inputs: dict[str, list[str]] = {}

    def leaf(self, dtype: str) -> str:
        g = self.gen
        have = self.inputs.setdefault(dtype, [])
        if have and g.chance(0.4):
            return g.pick(have)
        if g.chance(0.1):
            return f"xetile.full({list(self.shape)}, {g.pick(LITERALS[kind(dtype)])}, {xt(dtype)})"
        arr = g.array("x", self.extent, dtype, fill=g.pick(["small", "full"]) if kind(dtype) in "iu" else "small")
        pad = f", padding={g.pick(LITERALS[kind(dtype)])}" if g.chance(0.3) else ""
        have.append(g.load(arr, self.extent, self.shape, pad=pad))
        return have[-1]

    def operand(self, dtype: str) -> str:
        """The right operand of a plain binary op: a vector, a literal, a runtime scalar or a row/column vector
        (implicitly broadcast)."""
        g = self.gen
        choice = g.pick(["vector", "vector", "literal", "scalar", "broadcast"])
        if choice == "literal":
            return repr(g.pick(LITERALS[kind(dtype)]))
        if choice == "scalar":
            name = g.fresh("s")
            py = (dtype == "int32" and g.chance(0.5)) or (dtype == "float32" and g.chance(0.5))
            g.case.args.append(Scalar(name, None if py else dtype, g.pick(LITERALS[kind(dtype)])))
            return name
        if choice == "broadcast":
            small = g.pick([(self.shape[0], 1), (1, self.shape[1])])
            extent = (g.extent(small[0]), g.extent(small[1]))
            return g.load(g.array("x", extent, dtype), extent, small)
        return self.leaf(dtype)

    def exact(self, dtype: str, depth: int) -> str:
        """A subtree every level computes bit for bit (a leaf if the drawn tree is not)."""
        code, exact, _ = self.tree(dtype, depth)
        return code if exact else self.leaf(dtype)

    def cond(self, depth: int) -> str:
        g = self.gen
        dtype = g.pick(DTYPES)
        ops = ["==", "!="] if dtype == "bool" else ["<", "<=", ">", ">=", "==", "!="]
        return f"({self.exact(dtype, depth)} {g.pick(ops)} {self.exact(dtype, depth)})"

    def tree(self, dtype: str, depth: int) -> tuple[str, bool, int]:
        g = self.gen
        if depth <= 0 or g.chance(0.15):
            return self.leaf(dtype), True, 0
        k = kind(dtype)
        node = g.pick({"f": FLOAT_NODES, "i": INT_NODES, "u": INT_NODES, "b": BOOL_NODES}[k])
        if node == "where":
            a, ea, na = self.tree(dtype, depth - 1)
            b, eb, nb = self.tree(dtype, depth - 1)
            return f"xetile.where({self.cond(depth - 1)}, {a}, {b})", ea and eb, na + nb + 1
        if node == "cmp":
            return self.cond(depth - 1), True, 1
        if node == "cast":
            return self.cast(dtype, depth)
        template, arity, exact_op, needs_exact = NODES[node]
        if arity == 1:
            a, ea, na = (self.exact(dtype, depth - 1), True, 0) if needs_exact else self.tree(dtype, depth - 1)
            bits = BITS.get(dtype, 8)
            return template.format(a=a, mask=bits - 1), ea and exact_op, na + 1
        if needs_exact:
            a, b, e, n = self.exact(dtype, depth - 1), self.exact(dtype, depth - 1), True, 0
        else:
            a, ea, na = self.tree(dtype, depth - 1)
            if template.startswith("plain"):
                b, eb, nb = self.operand(self.mixed(dtype)), True, 0
            else:
                b, eb, nb = self.tree(dtype, depth - 1)
            e, n = ea and eb, na + nb
        if g.chance(0.5) and template.startswith("plain"):
            a, b = b, a
        return template.split(":", 1)[-1].format(a=a, b=b, mask=BITS.get(dtype, 8) - 1), e and exact_op, n + 1

    def mixed(self, dtype: str) -> str:
        """Usually `dtype`; sometimes a type that promotes to it (a narrower int, a small int into a float)."""
        g = self.gen
        if not g.chance(0.2):
            return dtype
        others = [o for o in DTYPES if o != dtype and promote(dtype, o) == dtype
                  and (kind(dtype) != "f" or kind(o) == "f" or o in SMALL_INTS)]
        return g.pick(others) if others else dtype

    def cast(self, dtype: str, depth: int) -> tuple[str, bool, int]:
        g = self.gen
        k = kind(dtype)
        if k == "f":
            src = g.pick([f for f in FLOATS if f != dtype] + SMALL_INTS)
            code, exact, n = self.tree(src, depth - 1)
            if kind(src) == "f" and dtype != "float32":
                code = clamp(code, 1000.0)   # f32 -> f16 stays finite
            return f"{code}.to({xt(dtype)})", exact, n + 1
        if k == "b":
            return f"{self.exact(g.pick(INTS), depth - 1)}.to(xetile.bool)", True, 1
        src = g.pick(DTYPES)
        if kind(src) == "f":   # float -> int only of values in range, computed bit for bit
            bound = 100.0 if BITS[dtype] == 8 else 1000.0
            low = 0.0 if dtype == "uint8" else -bound
            code = f"xetile.minimum(xetile.maximum({self.exact(src, depth - 1)}, {low}), {bound})"
            return f"{code}.to({xt(dtype)})", True, 1
        code, exact, n = self.tree(src, depth - 1)
        return f"{code}.to({xt(dtype)})", exact, n + 1


# node name: (template, arity, the op is exact, operands must be exact). "plain:" templates take any right operand
# (literal, scalar, broadcast vector); the others two vector subtrees.
NODES = {
    "add": ("plain:({a} + {b})", 2, True, False), "sub": ("plain:({a} - {b})", 2, True, False),
    "max": ("plain:xetile.maximum({a}, {b})", 2, True, False),
    "min": ("plain:xetile.minimum({a}, {b})", 2, True, False),
    "fmul": (f"({clamp('{a}')} * {clamp('{b}')})", 2, True, False),
    "fdiv": ("({a} / (xetile.abs({b}) + 1.0))", 2, True, False),
    "fpow": (f"((xetile.abs({{a}}) + 0.5) ** {clamp('{b}', 3.0)})", 2, False, False),
    "ffloordiv": ("({a} // (xetile.abs({b}) + 1.0))", 2, True, True),
    "fmod": ("({a} % (xetile.abs({b}) + 1.0))", 2, True, True),
    "neg": ("(-{a})", 1, True, False), "abs": ("xetile.abs({a})", 1, True, False),
    "exp": ("xetile.exp(xetile.minimum({a}, 4.0))", 1, False, False),
    "exp2": ("xetile.exp2(xetile.minimum({a}, 6.0))", 1, False, False),
    "log": ("xetile.log(xetile.abs({a}) + 1.0)", 1, False, False),
    "sqrt": ("xetile.sqrt(xetile.abs({a}))", 1, True, False),
    "rsqrt": ("xetile.rsqrt(xetile.abs({a}) + 1.0)", 1, False, False),
    "tanh": ("xetile.tanh({a})", 1, False, False),
    "sin": ("xetile.sin({a})", 1, False, False), "cos": ("xetile.cos({a})", 1, False, False),
    "erf": ("xetile.erf({a})", 1, False, False), "sigmoid": ("xetile.sigmoid({a})", 1, False, False),
    "floor": ("xetile.floor({a})", 1, True, False), "ceil": ("xetile.ceil({a})", 1, True, False),
    "log2": ("xetile.log2(xetile.abs({a}) + 1.0)", 1, False, False),
    "fma": (f"xetile.fma({clamp('{a}')}, {clamp('{b}')}, {{a}})", 2, False, False),
    "mul": ("plain:({a} * {b})", 2, True, False),
    "and": ("plain:({a} & {b})", 2, True, False), "or": ("plain:({a} | {b})", 2, True, False),
    "xor": ("plain:({a} ^ {b})", 2, True, False),
    "floordiv": ("({a} // (({b} & 7) + 1))", 2, True, False), "mod": ("({a} % (({b} & 7) + 1))", 2, True, False),
    "shl": ("({a} << ({b} & {mask}))", 2, True, False), "shr": ("({a} >> ({b} & {mask}))", 2, True, False),
    "not": ("(~{a})", 1, True, False),
}
FLOAT_NODES = ["add", "sub", "max", "min", "fmul", "fdiv", "fpow", "ffloordiv", "fmod", "neg", "abs", "exp", "exp2",
               "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "erf", "sigmoid", "floor", "ceil", "log2", "fma", "where",
               "cast"]
INT_NODES = ["add", "sub", "mul", "and", "or", "xor", "max", "min", "floordiv", "mod", "shl", "shr", "neg", "not",
             "abs", "where", "cast"]
BOOL_NODES = ["and", "or", "xor", "not", "where", "cmp", "cast"]
# Case kinds and their weights; tile_mma cases cost the most to build (the emulated DPAS).
CASE_WEIGHTS = {"elementwise": 6, "reduce": 2, "transpose": 1, "broadcast": 1, "mma": 1, "loop": 1, "atomic": 2,
                "ranked": 2, "vector_1d": 1, "gather": 3, "layouts": 2, "slm": 1, "reduce_nan": 1, "scan": 1,
                "cast": 1, "alias": 1}
# Variants of the case kinds, each a switch.
VARIANTS = {
    "tiles_1d": "1-D tiles and vectors (ranked, vector_1d)",
    "huge_leading_offsets": "leading offsets near 2**31 and 2**32 (ranked)",
    "inst_data": "inst_data beside sg_layout/sg_data (layouts)",
    "convert_layout": "convert_layout (layouts)",
    "layout_order": "layouts whose subgroup index counts the first dim fastest, order [0, 1] (layouts)",
    "slm_replicated": "SLM tiles whose layout has subgroups sharing data (slm)",
}
# Case kinds and variants left off, each because the backend mishandles it today (the defect named); a line
# deleted here switches it on.
DISABLED: dict[str, str] = {}
FAMILIES = frozenset(CASE_WEIGHTS.keys() | VARIANTS.keys()) - DISABLED.keys()


def case_kinds() -> tuple[list[str], np.ndarray]:
    """The case kinds drawn and their probabilities: FAMILIES', or those XETILE_FUZZ_KINDS names (a comma-separated
    list, to run a campaign on some kinds)."""
    chosen = [k for k in os.environ.get("XETILE_FUZZ_KINDS", "").split(",") if k]
    known = FAMILIES & CASE_WEIGHTS.keys()
    if not known.issuperset(chosen):
        raise ValueError(f"XETILE_FUZZ_KINDS names {sorted(set(chosen) - known)}, not case kinds: {sorted(known)}")
    kinds = [k for k in CASE_WEIGHTS if k in FAMILIES and (not chosen or k in chosen)]
    weights = np.array([CASE_WEIGHTS[k] for k in kinds], float)
    return kinds, weights / weights.sum()


def case_rng(seed: int, index: int, case: int) -> np.random.Generator:
    """Each case draws from its own generator, so that it is the same in a batch of any size (replay)."""
    return np.random.default_rng([seed, index, case])


def batch(seed: int, index: int, cases: int) -> Batch:
    """Batch `index` of the run with `seed`: one kernel holding `cases` cases."""
    rng = np.random.default_rng([seed, index])
    grid = (int(rng.choice([1, 1, 2])), int(rng.choice([1, 1, 2])))
    subgroups = int(rng.choice([1, 1, 1, 1, 2, 4]))
    mma = None
    if subgroups > 1:
        factors = [(f, subgroups // f) for f in divisors(subgroups)]
        sg_layout = factors[int(rng.integers(len(factors)))]
        sg_data = (int(rng.choice([1, 2, 7, 8])), int(rng.choice([1, 7, 8, 16])))
        mma = (sg_layout, sg_data)
    kinds, weights = case_kinds()
    made = []
    for i in range(cases):
        gen = Gen(case_rng(seed, index, i), subgroups, mma, grid)
        # the launch's layout option anchors at a tile_mma: the first case is one
        made.append(gen.make(i, "mma" if i == 0 and mma is not None else str(gen.rng.choice(kinds, p=weights))))
    options = {} if mma is None else {"sg_layout": list(mma[0]), "sg_data": list(mma[1])}
    return Batch(f"fuzz_{seed}_{index}", made, grid, options | fusion(rng))


def fusion(rng: np.random.Generator) -> dict:
    """The `fp_fusion` launch option for a batch in FP_FUSION (drawn after everything else the batch draws, so that
    the kernels of a seed do not depend on it)."""
    return {"fp_fusion": True} if rng.random() < FP_FUSION else {}


# ==== Triton idioms: bit casts, a 1-D vector broadcast against a 2-D one, pointer arithmetic ======================
# Case kinds kept in this block of their own: they register on Gen and in CASE_WEIGHTS here.
SAME_WIDTH = {8: ["int8", "uint8"], 16: ["float16", "bfloat16", "int16", "uint16"],
              32: ["float32", "int32", "uint32"], 64: ["int64", "uint64"]}
BITS_OPS = ["({v} ^ {k})", "({v} & {k})", "({v} >> 1)"]   # integer ops on the bits of a float, between bit casts
ROW_OPS = {"f": ["({a} + {b})", "({a} * {b})", "xetile.maximum({a}, {b})", "xetile.where({a} > {b}, {a}, {b})"],
           "i": ["({a} - {b})", "({a} ^ {b})", "xetile.minimum({a}, {b})", "xetile.where({a} < {b}, {b}, {a})"],
           "b": ["({a} & {b})", "({a} | {b})", "xetile.where({a}, {b}, {a})"]}


def bitcast_case(gen: Gen) -> None:
    """A bit cast between types of one width (floats holding NaN, infinities, signed zeros and denormals; integers
    of any value), as `xetile.bitcast` or `.to(..., bitcast=True)`; a float is sometimes cast to an integer type,
    its bits changed and cast back."""
    width = int(gen.pick(list(SAME_WIDTH)))
    src, dst = gen.pick(SAME_WIDTH[width]), gen.pick(SAME_WIDTH[width])
    shape = gen.tile_shape()
    extent = (gen.extent(shape[0]), gen.extent(shape[1]))
    v = gen.load(gen.array("x", extent, src, fill="special" if src in FLOATS else "full"), extent, shape)
    code = gen.pick([f"xetile.bitcast({v}, {xt(dst)})", f"{v}.to({xt(dst)}, bitcast=True)"])
    if src in FLOATS and dst not in FLOATS and gen.chance(0.5):
        bits = gen.pick(BITS_OPS).format(v=code, k=int(gen.rng.integers(1, 2**(width - 1))))
        code, dst = f"xetile.bitcast({bits}, {xt(src)})", src
    gen.store(dst, shape, code)


def broadcast_rank_case(gen: Gen) -> None:
    """A 1-D vector [n] (a 1-D tile, or an arange) meets a 2-D [m, n] one as a row, with no expand_dims, on either
    side of an operator, where, maximum or minimum."""
    dtype = gen.pick(DTYPES)
    m, n = gen.tile_shape()
    extent = (gen.extent(m), gen.extent(n))
    wide = gen.load(gen.array("x", extent, dtype), extent, (m, n))
    row_extent = (gen.extent(n),)
    row = gen.load(gen.array("r", row_extent, dtype), row_extent, (n,))
    if kind(dtype) in "iu" and gen.chance(0.3):
        start = int(gen.rng.integers(-4, 5))
        row = f"xetile.arange({start}, {start + n}).to({xt(dtype)})"
    a, b = (wide, row) if gen.chance(0.5) else (row, wide)
    gen.store(dtype, (m, n), gen.pick(ROW_OPS["i" if kind(dtype) == "u" else kind(dtype)]).format(a=a, b=b))


def pointers_case(gen: Gen) -> None:
    """Triton's spelling of gather and scatter: `xetile.load/store/atomic_*` on `array + offsets`, offsets a 1-D
    arange, a 2-D iota grid or a scalar with some past either end of an array of rank 1 to 3, masked (a 1-D mask
    broadcast to 2-D offsets), with `other`, a load's pointer sometimes walked through a loop with an `if`. Offsets are distinct, so a store's or an atomic's lanes never
    collide."""
    dtype = gen.pick([d for d in DTYPES if d != "bool"])
    n = int(gen.pick([1, 7, 16, 32]))
    shape = (int(gen.pick([2, 3, 8])), n) if gen.chance(0.4) else (n,)
    step = int(gen.pick([1, 2, 3]))
    lead = (int(gen.pick([2, 3])),) if gen.chance(0.3) else ()
    table_shape = (gen.extent(2 * n * step),) if gen.chance(0.5) else (gen.extent(shape[0]), gen.extent(n * step))
    size = int(np.prod(lead + table_shape))
    base = gen.index(int(gen.pick([0, 0, -step * n // 2, size - 3, int(gen.rng.integers(0, max(1, size)))])))
    offs = (f"(xetile.arange(0, {n}) * {step} + {base})" if len(shape) == 1 else
            f"(xetile.iota({list(shape)}, 0) * {n * step} + xetile.iota({list(shape)}, 1) * {step} + {base})")
    masks = ["", f", mask={offs} < {int(gen.rng.integers(0, size + 2))}", f", mask=(xetile.arange(0, {n}) % 3) != 1"]
    if gen.chance(0.2):  # a scalar pointer (`x + i`): its load and atomic give a scalar, which fills a [1] tile
        shape, offs = (1,), f"(xetile.program_id(0) * 0 + {base})"
        masks = masks[:1] + [f", mask={offs} < {int(gen.rng.integers(0, size + 2))}"]
    mask = gen.pick(masks)
    table = gen.array("tab", table_shape, dtype, lead=lead)
    op = gen.pick(["load", "load", "store", "atomic"])
    if op == "atomic" and dtype not in ATOMIC_DTYPES:
        op = "load"
    if op == "load":
        other = f", other={gen.pick(LITERALS[kind(dtype)])}" if gen.chance(0.5) else ""
        pointer = f"{table} + {offs}"
        if gen.chance(0.3):  # a pointer carried through a loop (and an `if` in it): walked back, then forward
            pointer, back = gen.fresh("p"), int(gen.pick([1, 2, 5]))
            gen.case.lines += [f"{pointer} = {table} + {offs} - {2 * back}",
                               f"for step in range(0, {gen.index(2)}):",
                               f"    if step == {gen.index(0)}:",
                               f"        {pointer} += {back}",
                               "    else:",
                               f"        {pointer} = {pointer} + {back}"]
        gen.store(dtype, shape, f"xetile.load({pointer}{mask}{other})")
        return
    value = gen.load(gen.array("val", shape, dtype), shape, shape, layout=False)
    gen.case.tols[table] = (0.0 if op == "store" else TOLERANCE.get(dtype, 0.0), False)
    if op == "store":
        gen.case.lines.append(f"xetile.store({table} + {offs}, {value}{mask})")
        return
    contended = gen.grid != (1, 1)   # every workgroup updates the same elements: order-independent kinds only
    akind = gen.pick([k for k in ATOMIC_KINDS if k != "mul" and kind(dtype) in ATOMIC_KINDS[k] and not
                      (contended and (k == "xchg" or (kind(dtype) == "f" and k not in ("max", "min"))))])
    call = f"xetile.atomic_{akind}({table} + {offs}, {value}{mask})"
    if contended:
        gen.case.lines.append(call)
    else:
        gen.store(dtype, shape, call, stem="old")


def register_cases(cases: dict) -> frozenset:
    """Case kinds made by functions of their own (name -> (make, weight)): methods of Gen and weights in
    CASE_WEIGHTS; returns FAMILIES with them (but those DISABLED)."""
    for name, (make, weight) in cases.items():
        setattr(Gen, name, make)
        CASE_WEIGHTS[name] = weight
    return (FAMILIES | cases.keys()) - DISABLED.keys()


FAMILIES = register_cases({"bitcast": (bitcast_case, 1), "broadcast_rank": (broadcast_rank_case, 1),
                           "pointers": (pointers_case, 1)})


# ==== Data-dependent loops: a while loop on a count the kernel computes =============================================
WHILE_OPS = {"f": "({v} * 0.5)", "i": "({v} ^ 5)", "u": "({v} + 3)", "b": "(~{v})"}


def loaded_tile(gen: Gen) -> tuple[str, tuple[int, int], str]:
    """(dtype, shape, name) of a tile of any dtype loaded from a new array at random offsets: the value a loop or a
    called kernel changes."""
    dtype = gen.pick(DTYPES)
    shape = gen.tile_shape()
    extent = (gen.extent(shape[0]), gen.extent(shape[1]))
    return dtype, shape, gen.load(gen.array("x", extent, dtype), extent, shape)


def while_case(gen: Gen) -> None:
    """A tile's value and a counter carried through an scf.while whose count (a literal or a runtime scalar, plus
    the workgroup's id mod 2) differs between workgroups; each iteration changes the value."""
    dtype, shape, v = loaded_tile(gen)
    n = gen.fresh("n")
    gen.case.lines += [f"{n} = 0",
                       f"while {n} < {gen.index(int(gen.rng.integers(0, 4)))} + pid0 % 2:",
                       f"    {v} = " + WHILE_OPS[kind(dtype)].format(v=v),
                       f"    {n} += 1"]
    gen.store(dtype, shape, v)


def count_per_workgroup(gen: Gen) -> str:
    """A count read from memory, one per workgroup row of the grid (ints in [-8, 8]): `counts[pid0]`."""
    return f"{gen.array('counts', (gen.grid[0],), 'int32')}[pid0]"


def break_case(gen: Gen) -> None:
    """A `for` over a literal or runtime count left by a `break` once its index reaches a count read from memory
    (each workgroup's own), stepping over some indices with a `continue`: an scf.while whose exit differs between
    workgroups."""
    dtype, shape, v = loaded_tile(gen)
    i, skip = gen.fresh("i"), int(gen.pick([2, 3]))
    gen.case.lines += [f"for {i} in range({gen.index(int(gen.rng.integers(0, 6)))}):",
                       f"    if {i} >= {count_per_workgroup(gen)}:",
                       "        break",
                       f"    if {i} % {skip} == 1:",
                       "        continue",
                       f"    {v} = " + WHILE_OPS[kind(dtype)].format(v=v)]
    gen.store(dtype, shape, v)


def return_case(gen: Gen) -> None:
    """A called kernel that returns from inside nested ifs on a count read from memory: the branches' values merge
    where the called kernel's result is used."""
    dtype, shape, v = loaded_tile(gen)
    name, step = gen.fresh("steps"), WHILE_OPS[kind(dtype)]
    gen.case.functions += ["@xetile.kernel", f"def {name}(v, n):",
                           f"    if n > {int(gen.rng.integers(-4, 4))}:",
                           "        if n % 2 == 0:",
                           f"            return {step.format(v=step.format(v='v'))}",
                           f"        return {step.format(v='v')}",
                           "    return v"]
    gen.store(dtype, shape, f"{name}({v}, {count_per_workgroup(gen)})")


CAS_DTYPES = ["int32", "uint32", "int64", "uint64"]


def cas_case(gen: Gen) -> None:
    """`xetile.atomic_cas` on each workgroup's own block: the compared values are the memory's own (an array made
    from the same seed) with the low bit flipped where a random tile is odd, so some elements swap and others not;
    the old values and the memory are both checked."""
    dtype = gen.pick(CAS_DTYPES)
    shape = gen.tile_shape(32)
    gm, gn = gen.grid
    extent = (gen.extent(shape[0]) * gm, gen.extent(shape[1]) * gn)
    mem = gen.array("mem", extent, dtype)
    gen.case.tols[mem] = (0.0, False)
    same = replace(gen.case.args[-1], name=gen.fresh("same"))
    gen.case.args.append(same)
    o0, o1 = (gen.index(gen.offset(e, s)) for e, s in zip(extent, shape))
    at = f"[{o0} + pid0 * {shape[0]}, {o1} + pid1 * {shape[1]}], {list(shape)}"
    expected, flips = gen.fresh("v"), gen.load(gen.array("flip", shape, dtype), shape, shape)
    val = gen.load(gen.array("val", shape, dtype), shape, shape)
    gen.case.lines.append(f"{expected} = xetile.load_tile(xetile.init_tile({same.name}, {at}))")
    gen.store(dtype, shape, f"xetile.atomic_cas(xetile.init_tile({mem}, {at}), {expected} ^ ({flips} & 1), {val})",
              stem="old")


FAMILIES = register_cases({"while_loop": (while_case, 1), "break_loop": (break_case, 0.5),
                           "return_if": (return_case, 0.5), "atomic_cas": (cas_case, 0.5)})


# ==== Combine functions of the user's: xetile.reduce and xetile.associative_scan ===================================
# The steps of a random combine of one tile (accumulator and next element), each (template, exact). A float combine
# chooses only between the operands it compares (maximum, a where picking the larger): a rounding difference moves
# its result by a rounding, never to the other side of a choice.
COMBINE_STEPS = {
    "f": [("({x} + {y})", False), ("({x} - {y})", False), ("({x} * 0.5 + {y})", False),
          ("xetile.maximum({x}, {y})", True), ("xetile.minimum({x}, {y})", True),
          ("xetile.where({x} > {y}, {x}, {y})", True), ("xetile.where({x} <= {y}, {x}, {y})", True)],
    "i": [("({x} + {y})", True), ("({x} - {y})", True), ("({x} * 3 + {y})", True), ("({x} ^ {y})", True),
          ("({x} | {y})", True), ("({x} & {y})", True), ("xetile.maximum({x}, {y})", True),
          ("xetile.where(({x} & 1) == 0, {y}, {x} + 1)", True)],
    "b": [("({x} & {y})", True), ("({x} | {y})", True), ("({x} ^ {y})", True),
          ("xetile.where({x}, {y}, ~{y})", True)],
}
COMBINE_AXIS = (1, 2, 7, 8, 13, 16)   # powers of two and not: the tree's strides, its positions with no partner


def combine_step(gen: Gen, k: str, acc: str, nxt: str, depth: int) -> tuple[str, bool]:
    """A random combine of `acc` and `nxt` (scalar names) of dtype kind `k`: (code, exact). Its top step takes
    both, in either order."""
    template, exact = gen.pick(COMBINE_STEPS[k])
    operands = [acc, nxt] if gen.chance(0.5) else [nxt, acc]
    for i in range(2):
        if depth > 1 and gen.chance(0.4):
            operands[i], sub_exact = combine_step(gen, k, acc, nxt, depth - 1)
            exact = exact and sub_exact
    return template.format(x=operands[0], y=operands[1]), exact


@dataclass
class Combine:
    """A combine function of the user's over len(tiles) tiles: its accumulator and next-element parameters, the
    values it returns, and per tile (dtype, fill of its input, device tolerance of its result)."""
    accs: list[str]
    nexts: list[str]
    results: list[str]
    tiles: list[tuple[str, str, float]]


def single_combine(gen: Gen, dtype: str, n: int, acc: str = "a", nxt: str = "b") -> Combine:
    """A random combine of one tile; n: the axis length."""
    k = "i" if kind(dtype) == "u" else kind(dtype)
    code, exact = combine_step(gen, k, acc, nxt, int(gen.pick([1, 2, 2])))
    fill = "special" if exact and kind(dtype) == "f" and gen.chance(0.5) else "small"
    tol = 0.0 if exact or k != "f" else TOLERANCE[dtype] * 4 * (n + 2)
    return Combine([acc], [nxt], [code], [(dtype, fill, tol)])


def pair_combine(gen: Gen, dtype: str, n: int) -> Combine:
    """Two tiles, of different dtypes perhaps, each with a random combine of its own."""
    first = single_combine(gen, dtype, n, "a0", "b0")
    second = single_combine(gen, gen.pick(DTYPES), n, "a1", "b1")
    return Combine(first.accs + second.accs, first.nexts + second.nexts, first.results + second.results,
                   first.tiles + second.tiles)


def arg_combine(gen: Gen, dtype: str, n: int) -> Combine:
    """(value, index) pairs: the larger (or smaller) value wins, a tie goes to the lower index."""
    better = gen.pick([">", "<"])
    wins = f"((value_b {better} value_a) | ((value_b == value_a) & (index_b < index_a)))"
    fill = "special" if kind(dtype) == "f" and gen.chance(0.5) else "small"
    return Combine(["value_a", "index_a"], ["value_b", "index_b"],
                   [f"xetile.where({wins}, value_b, value_a)", f"xetile.where({wins}, index_b, index_a)"],
                   [(dtype, fill, 0.0), ("int32", "iota", 0.0)])


def welford_combine(gen: Gen, dtype: str, n: int) -> Combine:
    """Welford's running mean, M2 and count over three float tiles (x, zeros, ones)."""
    dtype = dtype if kind(dtype) == "f" else "float32"
    tol = TOLERANCE[dtype] * 8 * (n + 2)
    w = "xetile.where(n_a + n_b == 0.0, 0.0, n_b / (n_a + n_b))"
    return Combine(["mean_a", "m2_a", "n_a"], ["mean_b", "m2_b", "n_b"],
                   [f"mean_a + (mean_b - mean_a) * {w}",
                    f"m2_a + m2_b + (mean_b - mean_a) * (mean_b - mean_a) * n_a * {w}", "n_a + n_b"],
                   [(dtype, "small", tol), (dtype, "zeros", tol), (dtype, "ones", 0.0)])


def segmented_combine(gen: Gen, dtype: str, n: int) -> Combine:
    """A sum that restarts where a flag (a bool, or a nonzero int32) is set."""
    dtype = dtype if dtype != "bool" else "int32"
    flag = gen.pick(["bool", "int32"])
    cond = "start_b" if flag == "bool" else "(start_b != 0)"
    return Combine(["sum_a", "start_a"], ["sum_b", "start_b"],
                   [f"xetile.where({cond}, sum_b, sum_a + sum_b)", "(start_a | start_b)"],
                   [(dtype, "small", TOLERANCE.get(dtype, 0.0) * (n + 2)), (flag, "small", 0.0)])


COMBINES = {"single": (single_combine, 4), "pair": (pair_combine, 1), "arg": (arg_combine, 2),
            "welford": (welford_combine, 1), "segmented": (segmented_combine, 1)}


def combine_case(gen: Gen) -> None:
    """`xetile.reduce` or `xetile.associative_scan` along either axis of one tile or a tuple of tiles, with a combine
    function of the user's (a random one, or argmax, Welford, a segmented sum): a module-level @xetile.kernel
    function the kernel passes by name."""
    shape = gen.tile_shape(32)
    while max(shape) > max(COMBINE_AXIS):
        shape = gen.tile_shape(32)
    axis = int(gen.pick([0, 1]))
    make, _ = COMBINES[gen.pick([k for k, (_, w) in COMBINES.items() for _ in range(w)])]
    comb = make(gen, gen.pick(DTYPES), shape[axis])
    name = gen.fresh("combine")
    gen.case.functions += ["@xetile.kernel", f"def {name}({', '.join(comb.accs + comb.nexts)}):",
                           f"    return {', '.join(comb.results)}", ""]
    extent = (gen.extent(shape[0]), gen.extent(shape[1]))
    tiles = [combine_input(gen, dtype, fill, shape, extent, axis) for dtype, fill, _ in comb.tiles]
    scan = gen.chance(0.5)
    op = "associative_scan" if scan else "reduce"
    operand = tiles[0] if len(tiles) == 1 and gen.chance(0.7) else f"({', '.join(tiles)}{',' * (len(tiles) == 1)})"
    outs = [gen.fresh("r") for _ in tiles]
    gen.case.lines.append(f"{', '.join(outs)}{',' * (operand != tiles[0] and len(tiles) == 1)} = "
                          f"xetile.{op}({operand}, {gen.axes(axis)}, {name})")
    kept = shape if scan else tuple(1 if d == axis else s for d, s in enumerate(shape))
    for out, (dtype, _, tol) in zip(outs, comb.tiles):
        gen.store(dtype, kept, out, (tol, False))


def combine_input(gen: Gen, dtype: str, fill: str, shape, extent, axis: int) -> str:
    """An operand tile of a combine: loaded (with `fill`), or the positions along the axis, zeros, ones."""
    if fill == "iota":
        return f"xetile.iota({list(shape)}, {axis})"
    if fill in ("zeros", "ones"):
        return f"xetile.full({list(shape)}, {0.0 if fill == 'zeros' else 1.0}, {xt(dtype)})"
    return gen.load(gen.array("x", extent, dtype, fill=fill), extent, shape)


# a combine's driver build takes seconds: a few in a default run, many in a campaign of their own (XETILE_FUZZ_KINDS)
FAMILIES = register_cases({"combine": (combine_case, 0.5)})


# ==== Value shape ops: slicing, cat, flip, join, split, interleave; sort and topk =================================
SHAPE_OPS_ELEMENTS = 64   # every op moves the elements through SLM between barriers: small values


def slice_bound(gen: Gen, size: int) -> tuple[str, int, int]:
    """A random non-empty `a:b` (numpy's bounds: negative from the end, clipped, either left out) of a dim of
    `size`: (the code, start, stop)."""
    while True:
        start = gen.pick([None, 0, int(gen.rng.integers(0, size + 1)), -int(gen.rng.integers(1, size + 2))])
        stop = gen.pick([None, size, int(gen.rng.integers(0, size + 3)), -int(gen.rng.integers(1, size + 1))])
        first, last, _ = slice(start, stop).indices(size)
        if last > first:
            return f"{'' if start is None else start}:{'' if stop is None else stop}", first, last


def shape_step(gen: Gen, v: str, shape: tuple, dtype: str) -> tuple[str, tuple]:
    """One random value shape op on `v` (a value of `shape`): (the code, the result's shape)."""
    rank = len(shape)
    ops = ["slice", "flip", "cat", "interleave"] + (["join", "expand"] if rank == 1 else [])
    ops += ["split"] if shape[-1] == 2 and rank == 2 else []
    op = gen.pick([o for o in ops if o != "interleave" or 2 * np.prod(shape) <= SHAPE_OPS_ELEMENTS])
    if op == "slice":
        dims = [d for d in range(rank) if gen.chance(0.7)] or [rank - 1]
        keys, out = [], list(shape)
        for d in range(rank):
            code, first, last = slice_bound(gen, shape[d]) if d in dims else (":", 0, shape[d])
            keys.append(code)
            out[d] = last - first
        if rank == 2 and keys[1] == ":" and gen.chance(0.5):
            keys.pop()   # v[a:b] on a 2-D value slices its rows
        return f"{v}[{', '.join(keys)}]", tuple(out)
    if op == "flip":
        axis = gen.pick(list(range(rank)) + [-1, None])
        return (f"xetile.flip({v})" if axis is None else f"xetile.flip({v}, {axis})"), shape
    if op == "expand":
        return gen.pick([(f"{v}[None, :]", (1, shape[0])), (f"{v}[:, None]", (shape[0], 1))])
    if op == "split":
        first, second = gen.fresh("lo"), gen.fresh("hi")
        gen.case.lines.append(f"{first}, {second} = xetile.split({v})")
        return gen.pick([first, second, f"xetile.where({first} == {second}, {first}, {second})"]), shape[:1]
    if op == "cat":
        axis = int(gen.pick(list(range(rank))))
        room = SHAPE_OPS_ELEMENTS // max(1, int(np.prod(shape)) // shape[axis]) - shape[axis]
        other = list(shape)
        other[axis] = int(gen.pick([d for d in BOUNDARY if d <= max(1, room)]))
        w = shape_operand(gen, tuple(other), dtype)
        a, b = (v, w) if gen.chance(0.5) else (w, v)
        out = list(shape)
        out[axis] += other[axis]
        return f"xetile.cat({a}, {b}{f', {axis}' if axis or gen.chance(0.5) else ''})", tuple(out)
    w = shape_operand(gen, shape, dtype)
    a, b = (v, w) if gen.chance(0.5) else (w, v)
    if op == "join":
        return f"xetile.join({a}, {b})", (shape[0], 2)
    return f"xetile.interleave({a}, {b})", (*shape[:-1], 2 * shape[-1])


def shape_operand(gen: Gen, shape: tuple, dtype: str) -> str:
    """A loaded value of `shape` (a 1-D or 2-D tile)."""
    extent = tuple(gen.extent(n) for n in shape)
    return gen.load(gen.array("x", extent, dtype), extent, shape)


def shape_ops_case(gen: Gen) -> None:
    """A chain of one to three value shape ops (slicing with constant bounds, cat, flip, join, split, interleave,
    v[None, :]) on 1-D and 2-D values of every dtype; each result element is one of the inputs', bit for bit."""
    dtype = gen.pick(DTYPES)
    shape = (int(gen.pick([n for n in BOUNDARY if n <= 32])),) if gen.chance(0.4) else gen.tile_shape(32)
    if len(shape) == 2 and gen.chance(0.15):
        shape = (shape[0], 2)   # split's operand
    v = shape_operand(gen, shape, dtype)
    for _ in range(int(gen.pick([1, 1, 2, 3]))):
        code, shape = shape_step(gen, v, shape, dtype)
        v = gen.fresh("s")
        gen.case.lines.append(f"{v} = {code}")
        if np.prod(shape) > SHAPE_OPS_ELEMENTS // 2:
            break
    gen.store(dtype, shape, v)


def sort_case(gen: Gen) -> None:
    """`sort` (ascending or descending) or `topk` along the last dim, a power of two, of a 1-D or 2-D value of every
    dtype (floats with NaN, infinities and signed zeros); a bitonic network, so the values stay few."""
    dtype = gen.pick(DTYPES)
    n = int(gen.pick([1, 2, 4, 8, 8]))
    shape = (n,) if gen.chance(0.4) else (int(gen.pick([1, 2, 3])), n)
    fill = "special" if kind(dtype) == "f" and gen.chance(0.5) else gen.pick(["small", "full"])
    extent = tuple(gen.extent(d) for d in shape)
    v = gen.load(gen.array("x", extent, dtype, fill=fill), extent, shape)
    op = gen.pick(["sort", "descending", "topk"])
    if op == "topk":
        k = int(gen.rng.integers(1, shape[-1] + 1))
        gen.store(dtype, (*shape[:-1], k), f"xetile.topk({v}, {k})")
        return
    axis = gen.pick(["", ", -1", f", {len(shape) - 1}"])
    gen.store(dtype, shape, f"xetile.sort({v}{axis}{', descending=True' if op == 'descending' else ''})")


# Their exchanges through SLM make the driver's builds slow: rare in a default run.
FAMILIES = register_cases({"shape_ops": (shape_ops_case, 0.5), "sort": (sort_case, 0.2)})
