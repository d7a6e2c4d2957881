"""The to-llvm stage (docs/DESIGN.md §2): work-item (SIMT) IR -> an LLVM IR module built with llvmlite, holding one
`spir_kernel` function per FuncOp and verified by llvmlite's parser; the SPIR-V emitter takes it from there.

Values are scalars or 1-D vectors (one work-item's share); on the CPU targets (Target.lane_scalars) a loop
carries a vector's components, and an element-wise op, comparison, cast or select on vectors is one op a component.
Element types become i1, i8 (ui8 too), i16, i32, i64 (index too), half and float; bf16 is held as its i16 bits, FP8
as its i8 bits. As in the IR's numpy rules (ir/numeric.py), f16, bf16 and FP8 compute in f32 and round back once per
op; bf16 and FP8 (codegen/llvm/float8.py) round to nearest even in integer arithmetic, bit-exact with ml_dtypes. In
memory and as a kernel argument a bool is one byte.

An array argument is passed as runtime/memory.py's ArrayArg: a CrossWorkgroup (addrspace 1) pointer to
element [0, 0], then rows, cols, row_stride and col_stride as i64, strides in elements (`arg_layout()`). Where the
target's ABI packs the sizes (BuiltinAbi.packed_sizes) an array's parameter is its pointer alone, and every array's
i64 fields, in the arguments' order, are one struct after the other parameters, passed by value (`SIZES`: a
Function pointer parameter with LLVM's `byval`, the SPIR-V emitter's FuncParamAttr ByVal), which the kernel reads
once at its start (runtime/packed_sizes.py packs a launch's).
Inside the kernel an array, like an SLM buffer, is a `MemRef`. Built-ins are calls named as the SPIR-V
emitter's docstring says (`__spirv_BuiltIn*`, `__spirv_ocl_*`, `__spirv_ControlBarrier`).

Each op class has a rule `lower_<OpClassName>(op)` returning the LLVM value of its result (a list for region
ops); the element-wise rules follow the IR's tables through the tables below. Signedness is the operands'
dtype's, as in the numpy rules (a cmpi predicate's s/u letter does not change them).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from math import prod
from typing import Callable

import numpy as np
from llvmlite import binding, ir

from ...ir.core import Block, FuncOp, Operation, Value
from ...ir.elementwise import CASTS
from ...ir.types import DType, IndexType, MemRefType, ScalarType, Type, VectorType, bfloat16, float16, float32
from ...target.targets import Target
from . import lane_slots, work_item_ids
from .components import Components
from .context import LoweringContext
from .float8 import f32_to_float8, float8_to_f16, float8_to_f32, is_float8
from .values import shaped, splat

VOID = ir.VoidType()
I8, I16, I32, I64 = (ir.IntType(w) for w in (8, 16, 32, 64))
F32 = ir.FloatType()
GLOBAL, CONSTANT, SHARED = 1, 2, 3  # LLVM address spaces of CrossWorkgroup memory, UniformConstant and SLM
ARRAY_FIELDS = ("rows", "cols", "row_stride", "col_stride")  # i64 parameters after an array's pointer (ArrayArg)
SIZES = "sizes"  # the by-value struct parameter of the arrays' i64 fields where the ABI packs them
# Workgroup execution and memory scope; SequentiallyConsistent | WorkgroupMemory | CrossWorkgroupMemory (global)
BARRIER_ARGS = (2, 2, 0x310)
FENCE_SCOPES = {"workgroup": 2, "gpu": 1}  # SPIR-V Workgroup and Device scopes
FENCE_SEMANTICS = {"slm": 0x108, "global": 0x208}  # AcquireRelease | WorkgroupMemory or CrossWorkgroupMemory

ICMP_CONDITIONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}  # by predicate[-2:]


# --- types and constants ---------------------------------------------------------------------------------
def element_type(dtype: DType) -> ir.Type:
    """The LLVM type of a value of `dtype` (bf16: its bits)."""
    if dtype == float16:
        return ir.HalfType()
    return F32 if dtype == float32 else ir.IntType(dtype.bits)


def storage_type(dtype: DType) -> ir.Type:
    """The type of `dtype` in memory and kernel arguments: a bool is a byte."""
    return I8 if dtype.is_bool else element_type(dtype)


def storage_bits(dtype: DType) -> int:
    """The bits of one element of `dtype` in memory (a bool's byte: 8)."""
    return 8 if dtype.is_bool else dtype.bits


def compute_type(dtype: DType) -> ir.Type:
    return F32 if dtype.is_float else element_type(dtype)


def llvm_type(t: Type) -> ir.Type:
    if isinstance(t, VectorType) and len(t.shape) == 1:
        return ir.VectorType(element_type(t.dtype), t.shape[0])
    if isinstance(t, (ScalarType, IndexType)):
        return element_type(t.dtype)
    raise NotImplementedError(f"to-llvm: {t} is not a work-item value (a scalar or a 1-D vector)")


def components(ty: ir.Type) -> int:
    """How many components a lane value of type `ty` has: a vector's count, 1 for a scalar."""
    return ty.count if isinstance(ty, ir.VectorType) else 1


def to_compute(b: ir.IRBuilder, x: ir.Value, dtype: DType) -> ir.Value:
    """`x` in `compute_type(dtype)`: f16, bf16 and FP8 widen to f32 exactly."""
    if is_float8(dtype):
        return float8_to_f32(b, x, dtype)
    if dtype == float16:
        return b.fpext(x, shaped(x.type, F32))
    if dtype == bfloat16:
        wide = shaped(x.type, I32)
        return b.bitcast(b.shl(b.zext(x, wide), splat(wide, 16)), shaped(x.type, F32))
    return x


def broadcast(b: ir.IRBuilder, value: ir.Value, ty: ir.Type) -> ir.Value:
    """The scalar `value` in every component of the vector type `ty` (`value` itself if `ty` is scalar)."""
    if not isinstance(ty, ir.VectorType):
        return value
    undef = ir.Constant(ty, ir.Undefined)
    return b.shuffle_vector(b.insert_element(undef, value, ir.Constant(I32, 0)), undef,
                            splat(ir.VectorType(I32, ty.count), 0))


def literal(x, dtype: DType) -> int | float:
    """An element of `dtype` as an llvmlite literal: floats as floats, the rest as the signed integer of its bits. A
    number past a float type's range is its infinity, as a conversion in the kernel gives (`other=1e6` of f16)."""
    with np.errstate(over="ignore"):
        x = np.asarray(x, dtype.np_dtype)
    return float(x) if dtype in (float16, float32) else int(x.view(f"i{x.itemsize}"))


def dense_constant(t: Type, values: np.ndarray) -> ir.Constant:
    """The constant of type `t` holding `values` (a 0-d array for a scalar)."""
    ty = llvm_type(t)
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, literal(v, t.dtype)) for v in values])
    return ir.Constant(ty, literal(values, t.dtype))


def from_storage(b: ir.IRBuilder, x: ir.Value, dtype: DType) -> ir.Value:
    return b.trunc(x, shaped(x.type, ir.IntType(1))) if dtype.is_bool else x


def to_storage(b: ir.IRBuilder, x: ir.Value, dtype: DType) -> ir.Value:
    return b.zext(x, shaped(x.type, I8)) if dtype.is_bool else x


def verify(module: ir.Module) -> str:
    """Parses and verifies `module` with LLVM; raises RuntimeError naming the problem. Returns the module's text
    (printing a module is a third of the LLVM IR stage: done once)."""
    text = str(module)
    binding.parse_assembly(text).verify()
    return text


# --- kernel arguments and memrefs --------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelArg:
    """A FuncOp argument as launch passes it: an array as `ArrayArg.kernel_args()` (pointer, then the
    ARRAY_FIELDS), a scalar as one value of its dtype's size holding its bits (a bool: one byte)."""

    name: str
    type: Type

    @property
    def is_array(self) -> bool:
        return isinstance(self.type, MemRefType)

    @property
    def fields(self) -> tuple[str, ...]:
        """The i64 parameters after an array's pointer: its shape, then its strides (ARRAY_FIELDS for 2-D)."""
        if not self.is_array:
            return ()
        rank = self.type.rank
        return ARRAY_FIELDS if rank == 2 else tuple(f"{what}{d}" for what in ("size", "stride") for d in range(rank))

    @property
    def llvm_types(self) -> tuple[ir.Type, ...]:
        storage = storage_type(self.type.dtype)
        return (ir.PointerType(storage, GLOBAL),) + (I64,) * len(self.fields) if self.is_array else (storage,)

    @property
    def param_names(self) -> tuple[str, ...]:
        return (self.name,) + tuple(f"{self.name}.{field}" for field in self.fields)


@dataclass(frozen=True)
class MemRef:
    """A 2-D array in memory: the pointer to element [0, 0], then sizes and strides in elements (i64)."""

    pointer: ir.Value
    dtype: DType
    rows: ir.Value
    cols: ir.Value
    row_stride: ir.Value
    col_stride: ir.Value

    def element_pointer(self, b: ir.IRBuilder, row: ir.Value, col: ir.Value) -> ir.Value:
        """The address of element [row, col] (i64 indices); it holds `storage_type(dtype)`."""
        return b.gep(self.pointer, [b.add(b.mul(row, self.row_stride), b.mul(col, self.col_stride))], inbounds=True)


@dataclass(frozen=True)
class NdMemRef:
    """An array argument of rank other than 2: the pointer to element [0, ..., 0], sizes and strides in elements
    (i64). Tiles read it through memref.subview, a MemRef."""

    pointer: ir.Value
    dtype: DType
    sizes: tuple[ir.Value, ...]
    strides: tuple[ir.Value, ...]


def loop_id(module: ir.Module, hints: tuple[str, ...]) -> ir.MDValue:
    """A new `!llvm.loop` node: itself, then one `!{!"<hint>"}` per hint. Built directly, as llvmlite's
    add_metadata would hand every loop with the same hints one shared node."""
    node = ir.MDValue(module, [module.add_metadata([hint]) for hint in hints], name=str(len(module.metadata)))
    node.operands = (node, *node.operands)
    return node


def hint_loop(module: ir.Module, back_edge: ir.Instruction, hints: tuple[str, ...]) -> None:
    """Gives a loop's back edge its `!llvm.loop` hints, if any (the SPIR-V emitter makes them loop controls)."""
    if hints:
        back_edge.set_metadata("llvm.loop", loop_id(module, hints))


def within(b: ir.IRBuilder, i: ir.Value, n: ir.Value) -> ir.Value:
    """i1: 0 <= i < n (i64)."""
    return b.and_(b.icmp_signed(">=", i, ir.Constant(I64, 0)), b.icmp_signed("<", i, n))


def smaller(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """The smaller of two signed integers."""
    return b.select(b.icmp_signed("<", x, y), x, y)


def larger(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """The larger of two signed integers."""
    return b.select(b.icmp_signed(">", x, y), x, y)


def phis(b: ir.IRBuilder, types: list[ir.Type], incoming) -> list[ir.Value]:
    """One phi per type of `types`, fed the i-th value of each (values, block) in `incoming`."""
    made = [b.phi(ty) for ty in types]
    for values, block in incoming:
        for phi, value in zip(made, values):
            phi.add_incoming(value, block)
    return made


def clamp(b: ir.IRBuilder, i: ir.Value, n: ir.Value) -> ir.Value:
    """i (i64) clamped into [0, n - 1], and to 0 where n is 0: a masked-off access still reads inside its array
    (a tile whose leading index is outside the array sees 0 rows: clamping to -1 read before the array)."""
    zero = ir.Constant(I64, 0)
    high = b.sub(n, ir.Constant(I64, 1))
    below = b.select(b.icmp_signed(">", i, high), high, i)
    return b.select(b.icmp_signed("<", below, zero), zero, below)


def counted_loop(b: ir.IRBuilder, count: int, carried: list[ir.Value] | None, body: Callable,
                 hints: tuple[str, ...] = ()) -> list | None:
    """`for i in range(count): carried = body(b, i, carried)` as an LLVM loop (count >= 1), `carried` a list of
    values (scalars: one phi each, so a CPU keeps each in a register across the lanes); the final values. `hints`:
    its back edge's (hint_loop)."""
    entry, loop = b.block, b.function.append_basic_block("loop")
    b.branch(loop)
    result, _, done = loop_body(b, entry, loop, ir.Constant(I32, 0), ir.Constant(I32, count), carried, body, hints,
                                b.icmp_unsigned)
    b.position_at_end(done)
    return result


def ranged_loop(b: ir.IRBuilder, start: ir.Value, end: ir.Value, carried: list[ir.Value] | None, body: Callable,
                hints: tuple[str, ...] = ()) -> list | None:
    """`for i in range(start, end): carried = body(b, i, carried)` (i32 bounds known at run time only, so the loop
    may not run: counted_loop's loop behind a test); the final values, `carried` where it did not run (the body's
    result where nothing is carried)."""
    entry, loop = b.block, b.function.append_basic_block("loop")
    result, last, done = loop_body(b, entry, loop, start, end, carried, body, hints, b.icmp_signed)
    b.position_at_end(entry)
    b.cbranch(b.icmp_signed("<", start, end), loop, done)
    b.position_at_end(done)
    if carried is None:
        return result
    finals = [b.phi(value.type) for value in carried]
    for final, value, final_value in zip(finals, carried, result):
        final.add_incoming(value, entry)
        final.add_incoming(final_value, last)
    return finals


def loop_body(b: ir.IRBuilder, entry: ir.Block, loop: ir.Block, start: ir.Value, end: ir.Value, carried, body,
              hints: tuple[str, ...], compare) -> tuple:
    """The loop at block `loop`, entered from `entry` with index `start` and `carried`, repeated while the next
    index `compare`s "<" `end`: (the body's result, the body's last block, the block after the loop, appended after
    the body's blocks: SPIR-V wants dominators first)."""
    b.position_at_end(loop)
    index = b.phi(I32, "i")
    index.add_incoming(start, entry)
    states = None
    if carried is not None:
        states = [b.phi(value.type) for value in carried]
        for state, value in zip(states, carried):
            state.add_incoming(value, entry)
    result = body(b, index, states)
    following = b.add(index, ir.Constant(I32, 1))
    index.add_incoming(following, b.block)
    if states is not None:
        for state, value in zip(states, result):
            state.add_incoming(value, b.block)
    last, done = b.block, b.function.append_basic_block("done")
    hint_loop(b.module, b.cbranch(compare("<", following, end), loop, done), hints)
    return result, last, done


# --- the lowering ----------------------------------------------------------------------------------------------
def ordered_constant(value: ir.Value) -> bool:
    """Whether `value` is an LLVM float constant, or a vector of them, with no NaN."""
    if not isinstance(value, ir.Constant):
        return False
    items = value.constant if isinstance(value.constant, (list, tuple)) else [value.constant]
    numbers = [item.constant if isinstance(item, ir.Constant) else item for item in items]
    return all(isinstance(n, (int, float)) and n == n for n in numbers)


class LLVMLowering:
    """Lowers one work-item-level FuncOp: `LLVMLowering(func).lower()` is its verified LLVM module, and `text`
    that module's text. What the lowering works on is its `context` (codegen/llvm/context.py); `func`, `module`,
    `target`, `builder` and `values` read it."""

    # the `!llvm.loop` hints on every scf.while's back edge (the SPIR-V emitter makes them loop controls)
    while_loop_hints: tuple[str, ...] = ()

    def __init__(self, func: FuncOp, target: Target | None = None):
        module = ir.Module(name=func.sym_name)
        module.triple = "spir64-unknown-unknown"
        self.context = LoweringContext(func, module, target)
        self.components = Components(self.context)
        self.text = ""  # the verified module's text, set by lower()

    @property
    def func(self) -> FuncOp:
        return self.context.func

    @property
    def module(self) -> ir.Module:
        return self.context.module

    @property
    def target(self) -> Target | None:
        return self.context.target

    @property
    def builder(self) -> ir.IRBuilder | None:
        return self.context.builder

    @property
    def values(self) -> dict[Value, ir.Value | MemRef | NdMemRef]:
        return self.context.values

    @values.setter
    def values(self, values: dict) -> None:
        self.context.values = values

    def arg_layout(self) -> list[KernelArg]:
        """What launch passes for each FuncOp argument, in order."""
        args = [KernelArg(arg.name_hint or f"arg{i}", arg.type) for i, arg in enumerate(self.func.args)]
        for arg in args:
            if not (arg.is_array or isinstance(arg.type, (ScalarType, IndexType))):
                raise NotImplementedError(f"to-llvm: kernel argument {arg.name} of type {arg.type}")
        return args

    def lower(self) -> ir.Module:
        """The module: the kernel's parameters bound to the FuncOp's arguments, then its body op by op."""
        layout = self.arg_layout()
        packed = self.target is not None and self.target.abi.packed_sizes
        fields = [name for arg in layout for name in arg.param_names[1:]] if packed else []
        params = [t for arg in layout for t in (arg.llvm_types[:1] if packed else arg.llvm_types)]
        if fields:
            params.append(ir.PointerType(ir.LiteralStructType([I64] * len(fields))))
        fn = ir.Function(self.module, ir.FunctionType(VOID, params), self.func.sym_name)
        fn.calling_convention = "spir_kernel"
        self.context.builder = ir.IRBuilder(fn.append_basic_block("entry"))
        values = self.parameter_values(fn, layout, fields)
        self.lower_block(self.func.body, [self.bind_arg(arg, mine) for arg, mine in zip(layout, values)])
        if self.context.lockstep_lanes():
            lane_slots.define(self.module, self.func.num_subgroups, self.func.lanes)
        if self.context.subgroup_rows():
            cpu = self.target.cpu
            builtin_ids = cpu is not None and cpu.subgroup_builtin_ids(work_item_ids.multiplies(self.func))
            work_item_ids.define(self.module, builtin_ids)
        self.text = verify(self.module)
        return self.module

    def parameter_values(self, fn: ir.Function, layout: list[KernelArg], fields: list[str]) -> list[list[ir.Value]]:
        """Each argument's values, named as its parameters: its own parameters, or, with `fields` packed, its
        pointer and its fields read from the SIZES struct."""
        params = iter(fn.args)
        if not fields:
            values = [[next(params) for _ in arg.llvm_types] for arg in layout]
            for arg, mine in zip(layout, values):
                for param, name in zip(mine, arg.param_names):
                    param.name = name
            return values
        firsts = [next(params) for _ in layout]
        for arg, first in zip(layout, firsts):
            first.name = arg.name
        sizes = next(params)
        sizes.name, sizes.attributes.align = SIZES, 8
        sizes.add_attribute("byval")
        b = self.builder
        loaded = iter([b.load(b.gep(sizes, [ir.Constant(I32, 0), ir.Constant(I32, j)]), name=name)
                       for j, name in enumerate(fields)])
        return [[first, *(next(loaded) for _ in arg.fields)] for arg, first in zip(layout, firsts)]

    def bind_arg(self, arg: KernelArg, mine: list[ir.Value]) -> ir.Value | MemRef | NdMemRef:
        """The value of `arg` from its values (parameter_values)."""
        if arg.is_array and arg.type.rank == 2:
            return MemRef(mine[0], arg.type.dtype, *mine[1:])
        if arg.is_array:
            rank = arg.type.rank
            return NdMemRef(mine[0], arg.type.dtype, tuple(mine[1:1 + rank]), tuple(mine[1 + rank:]))
        return from_storage(self.builder, mine[0], arg.type.dtype)

    def value_type(self, t: Type) -> ir.Type:
        """The LLVM type of an IR value of type `t` (a hook for rules whose values are not scalars or vectors)."""
        return llvm_type(t)

    # --- walking -----------------------------------------------------------------------------------------
    def lower_block(self, block: Block, args) -> list[ir.Value]:
        """Lowers `block` at the builder's position with its arguments bound to `args`; returns the LLVM values of
        its terminator's operands (what an scf.yield passes on)."""
        self.values.update(zip(block.args, args))
        for op in block.ops:
            self.lower_op(op)
        return self.context.operands(block.terminator)

    def lower_op(self, op: Operation) -> None:
        out = self.rule(op)(op)
        self.values.update(zip(op.results, out if isinstance(out, list) else [out]))

    def rule(self, op: Operation) -> Callable:
        """The lowering rule of `op`'s class: the method `lower_<class name>`."""
        rule = getattr(self, f"lower_{type(op).__name__}", None)
        if rule is None:
            raise op.error("has no LLVM lowering rule", "to-llvm lowers work-item-level ops")
        return rule

    # --- f16 / bf16 arithmetic in f32 ----------------------------------------------------------------------
    def from_compute(self, x: ir.Value, dtype: DType) -> ir.Value:
        """`x` (of `compute_type(dtype)`) rounded to `dtype` to nearest even."""
        if dtype == float16:
            return self.builder.fptrunc(x, shaped(x.type, ir.HalfType()))
        if is_float8(dtype):
            return f32_to_float8(self.builder, x, dtype)
        return self.round_to_bf16(x) if dtype == bfloat16 else x

    def round_to_bf16(self, x: ir.Value) -> ir.Value:
        """f32 -> bf16 bits as ml_dtypes rounds: add 0x7fff plus the kept lowest bit, keep the upper half;
        a NaN becomes the quiet NaN of its sign."""
        b = self.builder
        i32 = shaped(x.type, I32)
        bits = b.bitcast(x, i32)
        upper = b.lshr(bits, splat(i32, 16))
        bias = b.add(b.and_(upper, splat(i32, 1)), splat(i32, 0x7FFF))
        rounded = b.lshr(b.add(bits, bias), splat(i32, 16))
        quiet_nan = b.or_(b.and_(upper, splat(i32, 0x8000)), splat(i32, 0x7FC0))
        return b.trunc(b.select(b.fcmp_unordered("uno", x, x), quiet_nan, rounded), shaped(x.type, I16))

    # --- element-wise rules ----------------------------------------------------------------------------------
    def elementwise(self, rule: tuple[str, str], dtype: DType, *xs: ir.Value) -> ir.Value:
        """An LLVM rule of ir/elementwise.py (UNARY, BINARY, TERNARY) on LLVM values of `dtype` (computed in
        `compute_type`)."""
        method, arg = rule
        if self.components.splits(xs):
            return self.components.componentwise(partial(self.elementwise, rule, dtype), *xs)
        wide = [to_compute(self.builder, x, dtype) for x in xs]
        return self.from_compute(getattr(self, f"rule_{method}")(arg, dtype, *wide), dtype)

    def rule_instruction(self, instruction: str, dtype: DType, *xs: ir.Value) -> ir.Value:
        return getattr(self.builder, instruction)(*xs)

    def rule_opencl(self, function: str, dtype: DType, *xs: ir.Value) -> ir.Value:
        return self.opencl(function, *xs)

    def rule_sigmoid(self, prefix: str, dtype: DType, x: ir.Value) -> ir.Value:
        """1 / (1 + exp(-x)), as the numpy rule; with the prefix "native_", the approximate exp and reciprocal."""
        b = self.builder
        one = splat(x.type, 1.0)
        denominator = b.fadd(one, self.opencl(f"{prefix}exp", self.rule_negate("", dtype, x)))
        return self.opencl("native_recip", denominator) if prefix else b.fdiv(one, denominator)

    def rule_negate(self, _: str, dtype: DType, x: ir.Value) -> ir.Value:
        """-x (codegen/llvm/lowering.py writes it otherwise on the CPU targets)."""
        return self.builder.fneg(x)

    def rule_shift(self, instruction: str, dtype: DType, x: ir.Value, amount: ir.Value) -> ir.Value:
        """numpy's shift: an amount outside [0, bits) shifts every bit out (leaving the sign for ashr)."""
        b = self.builder
        in_range = b.icmp_unsigned("<", amount, splat(x.type, dtype.bits))
        out = b.ashr(x, splat(x.type, dtype.bits - 1)) if instruction == "ashr" else splat(x.type, 0)
        return b.select(in_range, getattr(b, instruction)(x, amount), out)

    def rule_int_division(self, instruction: str, dtype: DType, x: ir.Value, y: ir.Value) -> ir.Value:
        """numpy's integer division: by 0 gives 0, and MIN / -1 wraps to MIN (remainder 0). The hardware
        instruction traps or is undefined there, and padding elements divide too."""
        b = self.builder
        zero = b.icmp_unsigned("==", y, splat(y.type, 0))
        special = zero
        if dtype.kind == "i":
            minus_one = b.icmp_signed("==", y, splat(y.type, -1))
            special = b.or_(zero, minus_one)
        result = getattr(b, instruction)(x, b.select(special, splat(y.type, 1), y))
        if dtype.kind == "i":
            result = b.select(minus_one, b.neg(x) if instruction == "sdiv" else splat(x.type, 0), result)
        return b.select(zero, splat(x.type, 0), result)

    def rule_float_extreme(self, comparison: str, dtype: DType, x: ir.Value, y: ir.Value) -> ir.Value:
        """np.maximum / np.minimum (`comparison` ">" / "<"): x if it compares so with y or is NaN, else y (a NaN in
        either wins; of two equal values, a zero of either sign, y, as numpy gives). Against a constant y that is no
        NaN, y where it compares so with x or equals it, else x: the same values. The OpenCL CPU compiler
        miscompiled the first form there, `select(x <= 4.0 or x is NaN, x, 4.0)`, when it knew x (a fuzzed row
        kernel's minimum of padding, its offsets constants, came out NaN on `xe-emulated`; docs/guide.md §9), and
        builds the second right."""
        b = self.builder
        if ordered_constant(y):
            return b.select(b.fcmp_ordered(comparison + "=", y, x), y, x)
        keep_x = b.or_(b.fcmp_ordered(comparison, x, y), b.fcmp_unordered("uno", x, x))
        return b.select(keep_x, x, y)

    def rule_int_extreme(self, comparison: str, dtype: DType, x: ir.Value, y: ir.Value) -> ir.Value:
        return self.builder.select(self.icmp(comparison, x, y, dtype), x, y)

    def icmp(self, comparison: str, x: ir.Value, y: ir.Value, dtype: DType) -> ir.Value:
        """Integer comparison in `dtype`'s signedness; bools order as 0 < 1 (compared as bytes: SPIR-V's bool
        has no order)."""
        b = self.builder
        if dtype.is_bool and comparison not in ("==", "!="):
            x, y = (b.zext(v, shaped(v.type, I8)) for v in (x, y))
        compare = b.icmp_signed if dtype.kind == "i" else b.icmp_unsigned
        return compare(comparison, x, y)

    def opencl(self, function: str, *xs: ir.Value) -> ir.Value:
        """`__spirv_ocl_<function>(xs)`. The emitter maps names, not overloads, so each is declared for one
        type: vectors go component by component, integers as i64 (the low bits of abs are the same)."""
        ty = xs[0].type
        if isinstance(ty, ir.VectorType):
            return self.components.componentwise(partial(self.opencl, function), *xs)
        if isinstance(ty, ir.IntType) and ty.width < 64:
            wide = self.opencl(function, *(self.builder.sext(x, I64) for x in xs))
            return self.builder.trunc(wide, ty)
        return self.context.call(f"__spirv_ocl_{function}", ty, *xs)

    def lower_elementwise_op(self, op):
        row = op.table[op.name]
        rule = row.fast if op.fastmath else row.llvm
        return self.elementwise(rule, op.result.type.dtype, *self.context.operands(op))

    lower_UnaryOp = lower_BinaryOp = lower_TernaryOp = lower_elementwise_op

    def lower_CmpOp(self, op):
        return self.components.per_component(partial(self.compare, op), *self.context.operands(op))

    def compare(self, op, x: ir.Value, y: ir.Value) -> ir.Value:
        dtype = op.operands[0].type.dtype
        x, y = to_compute(self.builder, x, dtype), to_compute(self.builder, y, dtype)
        if op.name == "arith.cmpf":  # our cmpf predicates are LLVM's fcmp conditions
            return self.builder.fcmp_ordered(op.predicate, x, y)
        return self.icmp(ICMP_CONDITIONS[op.predicate[-2:]], x, y, dtype)

    def lower_CastOp(self, op):
        return self.components.per_component(partial(self.cast, op), self.values[op.operands[0]])

    def cast(self, op, x: ir.Value) -> ir.Value:
        source, dest = op.operands[0].type.dtype, op.result.type.dtype
        if CASTS[op.name].reinterprets:  # the bits as they are: between the element types, not the compute types
            to = shaped(x.type, element_type(dest))
            return x if to == x.type else self.builder.bitcast(x, to)
        if is_float8(source) and dest == float16:  # a shorter way, exact but where the NaN payload is free
            return float8_to_f16(self.builder, x, source, op.any_nan_payload)
        x = to_compute(self.builder, x, source)
        instruction = CASTS[op.name].llvm
        if instruction is not None:
            x = getattr(self.builder, instruction)(x, shaped(x.type, compute_type(dest)))
        return self.from_compute(x, dest)

    def lower_IndexCastOp(self, op):
        x, dtype = self.values[op.operands[0]], op.operands[0].type.dtype
        if not isinstance(op.result.type, IndexType):
            return self.builder.trunc(x, llvm_type(op.result.type)) if op.result.type.dtype.bits < 64 else x
        if dtype.bits == 64:
            return x
        return (self.builder.sext if dtype.kind == "i" else self.builder.zext)(x, I64)

    def lower_SelectOp(self, op):
        return self.components.per_component(self.builder.select, *self.context.operands(op))

    def lower_ConstantOp(self, op):
        return dense_constant(op.result.type, op.interpret(None))

    def lower_SplatOp(self, op):
        return broadcast(self.builder, self.values[op.operands[0]], llvm_type(op.result.type))

    # --- control flow ----------------------------------------------------------------------------------------
    def lower_ForOp(self, op):
        """Python's range(lower, upper, step) for either sign of step, and no iteration for a step of 0 (the
        loop rule, ForOp). header: phis of `more`, the iv and the carried values, exit test on `more`; body:
        the region, then whether there is a next iteration (`continues`)."""
        b = self.builder
        lower, upper, step, *inits = self.context.operands(op)
        dtype = op.operands[0].type.dtype
        zero = ir.Constant(step.type, 0)
        up, down = self.icmp(">", step, zero, dtype), self.icmp("<", step, zero, dtype)
        enter = b.or_(b.and_(up, self.icmp("<", lower, upper, dtype)),
                      b.and_(down, self.icmp(">", lower, upper, dtype)))
        header, body, end = (b.append_basic_block(f"for.{part}") for part in ("header", "body", "end"))
        entry_parts = self.components.carried_parts([lower, *inits])
        entry = b.block
        b.branch(header)
        b.position_at_end(header)
        more = b.phi(ir.IntType(1))
        more.add_incoming(enter, entry)
        parts = phis(self.builder, [part.type for part in entry_parts], [(entry_parts, entry)])
        carried = self.components.carried_values([value.type for value in (lower, *inits)], parts)
        b.cbranch(more, body, end)
        b.position_at_end(body)
        yielded = self.lower_block(op.body, carried)
        iv = carried[0]
        after = b.add(iv, step)
        following = [self.continues(iv, after, lower, upper, step, up, dtype),
                     *self.components.carried_parts([after, *yielded])]
        for phi, value in zip([more, *parts], following):
            phi.add_incoming(value, b.block)
        b.branch(header)
        b.position_at_end(end)
        return carried[1:]

    def continues(self, iv: ir.Value, following: ir.Value, lower: ir.Value, upper: ir.Value, step: ir.Value,
                  up: ir.Value, dtype) -> ir.Value:
        """i1: the iv after `iv`, `following` (iv + step, wrapped), is still short of upper. With a positive
        constant step from a constant signed lower >= 0 it is `following < upper` unsigned, one compare of the
        value the loop steps anyway: in the body 0 <= iv < upper, so neither upper nor iv + step leaves the
        unsigned range. Otherwise the distance left, tested unsigned, is more than one stride: the iv never steps
        past upper, so it cannot wrap around and loop again (or forever)."""
        b = self.builder
        if (isinstance(step, ir.Constant) and isinstance(lower, ir.Constant) and dtype.kind == "i"
                and step.constant > 0 and lower.constant >= 0):
            return b.icmp_unsigned("<", following, upper)
        zero = ir.Constant(step.type, 0)
        left = b.select(up, b.sub(upper, iv), b.sub(iv, upper))
        stride = b.select(up, step, b.sub(zero, step))
        return b.icmp_unsigned(">", left, stride)

    def lower_WhileOp(self, op):
        """header: phis of the carried values, then the condition region, whose last block tests `cond`; body: the
        body region, whose yield feeds the phis. The condition's forwarded values (computed in blocks that dominate
        both the body and the exit) are the body's arguments and the loop's results. The body and exit blocks come
        after the condition's in the function, as SPIR-V orders blocks after their dominators."""
        b = self.builder
        inits = self.context.operands(op)
        header = b.append_basic_block("while.header")
        entry_parts = self.components.carried_parts(inits)
        entry = b.block
        b.branch(header)
        b.position_at_end(header)
        parts = phis(self.builder, [part.type for part in entry_parts], [(entry_parts, entry)])
        carried = self.components.carried_values([value.type for value in inits], parts)
        cond, *forwarded = self.lower_block(op.before, carried)
        body, end = (b.append_basic_block(f"while.{part}") for part in ("body", "end"))
        b.cbranch(cond, body, end)
        b.position_at_end(body)
        yielded = self.lower_block(op.after, forwarded)
        for phi, value in zip(parts, self.components.carried_parts(yielded)):
            phi.add_incoming(value, b.block)
        hint_loop(self.module, b.branch(header), self.while_loop_hints)
        b.position_at_end(end)
        return forwarded

    def lower_ExtractElementOp(self, op):
        """The element lane 0 holds (ExtractElementOp), which every lane reads."""
        v, lanes = self.values[op.operands[0]], self.context.lanes
        if lanes is not None:
            v = lanes.shuffle(v, ir.Constant(I32, 0))
        return self.builder.extract_element(v, ir.Constant(I32, 0)) if isinstance(v.type, ir.VectorType) else v

    def lower_ConditionOp(self, op):
        """Nothing to emit: scf.while reads the operands (see lower_block)."""

    def lower_IfOp(self, op):
        b = self.builder
        then, otherwise, end = (b.append_basic_block(f"if.{part}") for part in ("then", "else", "end"))
        b.cbranch(self.values[op.operands[0]], then, otherwise)
        incoming = [self.lower_branch(region.block, start, end)
                    for region, start in zip(op.regions, (then, otherwise))]
        b.position_at_end(end)
        return phis(self.builder, [self.value_type(v.type) for v in op.results], incoming)

    def lower_branch(self, block: Block, start: ir.Block, end: ir.Block):
        """Lowers `block` from `start` on, then jumps to `end`; returns what it yields and where it ended."""
        self.builder.position_at_end(start)
        yielded = self.lower_block(block, [])
        last = self.builder.block
        self.builder.branch(end)
        return yielded, last

    def lower_YieldOp(self, op):
        """Nothing to emit: the parent op reads the operands (see lower_block)."""

    def lower_ReturnOp(self, op):
        self.builder.ret_void()

    # --- ids, barrier, SLM -------------------------------------------------------------------------------------
    def lower_ProgramIdOp(self, op):
        return self.builder.trunc(self.context.builtin("WorkgroupId", op.axis), I32)

    def lower_NumProgramsOp(self, op):
        return self.builder.trunc(self.context.builtin("NumWorkgroups", op.axis), I32)

    def lower_SubgroupIdOp(self, op):
        return self.builder.zext(self.context.subgroup_id(), I64)

    def lower_LaneIdOp(self, op):
        return self.context.lane_index()

    def lower_BarrierOp(self, op):
        self.context.call("__spirv_ControlBarrier", VOID, *(ir.Constant(I32, v) for v in BARRIER_ARGS))

    def lower_FenceOp(self, op):
        scope, semantics = FENCE_SCOPES[op.scope], FENCE_SEMANTICS[op.memory]
        self.context.call("__spirv_MemoryBarrier", VOID, ir.Constant(I32, scope), ir.Constant(I32, semantics))

    # Named barriers (xegpu_barriers.check_named_barriers): every subgroup runs each wait, which is the workgroup
    # barrier; an arrive (in a branch on subgroup_id() too) adds nothing to it.
    def lower_InitNbarrierOp(self, op):
        return ir.Constant(I32, op.id)

    def lower_NbarrierArriveOp(self, op):
        """Nothing to emit: the wait is a full barrier."""

    def lower_NbarrierWaitOp(self, op):
        self.lower_BarrierOp(op)

    def lower_MemRefLoadOp(self, op):
        """Every work-item reads the same element (the CPU's vectorizer makes it one scalar load); 0 outside."""
        m, *indices = (self.values[v] for v in op.operands)
        sizes, strides = ((m.rows, m.cols), (m.row_stride, m.col_stride)) if isinstance(m, MemRef) else (
            m.sizes, m.strides)
        b = self.builder
        inside = ir.Constant(ir.IntType(1), 1)
        offset = ir.Constant(I64, 0)
        for i, n, stride in zip(indices, sizes, strides):
            inside = b.and_(inside, within(b, i, n))
            offset = b.add(offset, b.mul(clamp(b, i, n), stride))
        value = b.load(b.gep(m.pointer, [offset], inbounds=True))
        return b.select(inside, from_storage(b, value, m.dtype), ir.Constant(element_type(m.dtype), 0))

    def lower_SlmAllocOp(self, op):
        """A module-level Workgroup (addrspace 3) array of the buffer's size; a row-major MemRef over it."""
        t = op.result.type
        rows, cols = t.shape
        buffer = ir.GlobalVariable(self.module, ir.ArrayType(storage_type(t.dtype), prod(t.shape)),
                                   self.module.get_unique_name("slm"), addrspace=SHARED)
        buffer.linkage = "internal"
        pointer = self.builder.gep(buffer, [ir.Constant(I64, 0)] * 2, inbounds=True)
        return MemRef(pointer, t.dtype, *(ir.Constant(I64, v) for v in (rows, cols, cols, 1)))
