"""to-llvm tests: work-item-level kernels built from the IR classes, lowered by LLVMLowering, emitted to SPIR-V,
validated with spirv-val and run on opencl:cpu through runtime/memory.py's array ABI. Element-wise results are
compared with the ops' own numpy rules (`interpret`): exactly (bf16 bit for bit), except for the OpenCL math
functions, which are compared within a few roundings."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from conftest import XETILE_DTYPE, assert_close
from llvmlite import ir
from spirv_tools import cpu_queue, disassemble, validate

from xetile_jit.codegen.spirv import emit_spirv
from xetile_jit.codegen.llvm.core import LLVMLowering, from_storage, llvm_type, to_storage
from xetile_jit.errors import CompilationError
from xetile_jit.ir import core_ops as C
from xetile_jit.ir.core import Block, Builder, FuncOp, Operation
from xetile_jit.ir.elementwise import BINARY, CASTS, TERNARY, UNARY
from xetile_jit.ir.types import (MemRefType, ScalarType, SlmMemRefType, VectorType, bfloat16, bool_, float32, index,
                                 int32)
from xetile_jit.runtime import sycl
from xetile_jit.runtime.memory import stage
from xetile_jit.target.targets import TARGETS

N, WG, SG = 256, 32, 16  # work-items per launch; a workgroup is two subgroups
APPROXIMATE = {"math.powf", "math.exp", "math.exp2", "math.log", "math.log2", "math.rsqrt", "math.tanh", "math.sin",
               "math.cos", "math.erf", "math.sigmoid"}  # OpenCL ulp bounds
DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_]
I32, I64 = ir.IntType(32), ir.IntType(64)


# --- test-only memory ops and their lowering ---------------------------------------------------------------
class LoadOp(Operation):
    """test.load: `width` elements of a memref from [row, col] along the row; a scalar when width is 1."""

    name = "test.load"

    def __init__(self, memref, row, col, width=1, loc=None):
        dtype = memref.type.dtype
        super().__init__([memref, row, col], [ScalarType(dtype) if width == 1 else VectorType((width,), dtype)],
                         loc=loc)


class StoreOp(Operation):
    """test.store: a scalar or a vector into a memref from [row, col] along the row."""

    name = "test.store"

    def __init__(self, value, memref, row, col, loc=None):
        super().__init__([value, memref, row, col], loc=loc)


def width_of(t) -> int:
    return t.shape[0] if isinstance(t, VectorType) else 1


class LoweringWithTestOps(LLVMLowering):
    def pointers(self, op, width):
        """The memref of a test.load/store and the addresses of its `width` elements."""
        memref, row, col = (self.values[v] for v in op.operands[-3:])
        b = self.builder
        return memref, [memref.element_pointer(b, row, b.add(col, ir.Constant(I64, i))) for i in range(width)]

    def lower_LoadOp(self, op):
        b, t = self.builder, op.result.type
        memref, pointers = self.pointers(op, width_of(t))
        lanes = [from_storage(b, b.load(p), memref.dtype) for p in pointers]
        if len(lanes) == 1:
            return lanes[0]
        vector = ir.Constant(llvm_type(t), ir.Undefined)
        for i, lane in enumerate(lanes):
            vector = b.insert_element(vector, lane, ir.Constant(I32, i))
        return vector

    def lower_StoreOp(self, op):
        b, value = self.builder, self.values[op.operands[0]]
        width = width_of(op.operands[0].type)
        lanes = [value] if width == 1 else [b.extract_element(value, ir.Constant(I32, i)) for i in range(width)]
        memref, pointers = self.pointers(op, width)
        for lane, pointer in zip(lanes, pointers):
            b.store(to_storage(b, lane, memref.dtype), pointer)


# --- building and running kernels ------------------------------------------------------------------------
def emit(b: Builder, op_class, *args, **kwargs):
    """The result of a new op (the op itself when it has no single result)."""
    op = b.create(op_class, *args, **kwargs)
    return op.result if len(op.results) == 1 else op


def binary(b: Builder, name, x, y):
    return emit(b, C.BinaryOp, name, x, y)


def unary(b: Builder, name, x):
    return emit(b, C.UnaryOp, name, x)


def const(b: Builder, value, t=index):
    return emit(b, C.ConstantOp, value, t)


def global_position(b: Builder):
    """This work-item's index along dimension 0: program_id * WG + subgroup_id * SG + lane_id."""
    pid = emit(b, C.IndexCastOp, emit(b, C.ProgramIdOp, 0))
    sg = binary(b, "arith.muli", emit(b, C.SubgroupIdOp), const(b, SG))
    lane = binary(b, "arith.addi", sg, emit(b, C.LaneIdOp))
    return binary(b, "arith.addi", binary(b, "arith.muli", pid, const(b, WG)), lane)


def run(func: FuncOp, arrays, scalars=(), global_size=(N,), local_size=(WG,)):
    """Lowers, emits, validates and runs `func`; arrays and scalars are passed in the order of its arguments
    (as `arg_layout()` says); the arrays are updated in place."""
    lowering = LoweringWithTestOps(func)
    binary = emit_spirv(lowering.lower(), subgroup_size=SG)
    validate(binary)
    queue = cpu_queue()
    arrays, scalars = iter(arrays), iter(scalars)
    kernel_args, copies = [], []
    for arg in lowering.arg_layout():
        if arg.is_array:
            array_arg, copy = stage(queue, arg.name, next(arrays))
            kernel_args += array_arg.kernel_args()
            copies.append(copy)
        else:
            kernel_args.append(next(scalars))
    sycl.launch(queue, sycl.SyclProgram(binary, queue).kernel(func.sym_name), global_size, local_size, kernel_args)
    for copy in copies:
        copy.copy_back()


def output_columns(results, width):
    """Where each result goes: its dtype (the output array) and its first column there."""
    counts = dict.fromkeys((v.type.dtype for v in results), 0)
    columns = []
    for value in results:
        columns.append((value.type.dtype, counts[value.type.dtype] * width))
        counts[value.type.dtype] += 1
    return columns


def elementwise_func(build, inputs, scalars, out_dtypes):
    """A kernel in which work-item g loads row g of each input (a scalar or a vector as wide as the row), calls
    `build(b, *loaded, *scalar_args)` and, given `out_dtypes`, stores result k in the output of its dtype."""
    width = inputs[0].shape[1]
    in_types = [MemRefType(XETILE_DTYPE[a.dtype]) for a in inputs]
    types = in_types + [MemRefType(d) for d in out_dtypes] + [ScalarType(XETILE_DTYPE[s.dtype]) for s in scalars]
    names = [f"in{i}" for i in range(len(inputs))] + [f"out_{d}" for d in out_dtypes] + [
        f"s{i}" for i in range(len(scalars))]
    func = FuncOp("elementwise", types, names, {})
    b = Builder(func.body)
    args = iter(func.args)
    ins, outs = [next(args) for _ in inputs], {d: next(args) for d in out_dtypes}
    g, zero = global_position(b), const(b, 0)
    loaded = [emit(b, LoadOp, arg, g, zero, width) for arg in ins]
    results = build(b, *loaded, *args)
    for value, (dtype, column) in zip(results, output_columns(results, width) if out_dtypes else ()):
        emit(b, StoreOp, value, outs[dtype], g, const(b, column))
    b.create(C.ReturnOp)
    return func, dict(zip(loaded, inputs)), results


def evaluate(value, env):
    """`value` computed by its ops' numpy rules from the arrays bound in `env`."""
    if value not in env:
        op = value.owner
        args = [evaluate(v, env) for v in op.operands]
        with np.errstate(invalid="ignore"):  # NaN compares; index_cast's own rule takes one scalar
            env[value] = np.asarray(args[0]).astype(np.int64) if isinstance(op, C.IndexCastOp) else \
                op.interpret(None, *args)
    return env[value]


def run_elementwise(build, inputs, scalars=()):
    """Runs the `elementwise_func` kernel, built twice: first to learn the results' dtypes, which give its
    outputs. Returns (result, expected, op name) for each result."""
    _, _, probe = elementwise_func(build, inputs, scalars, ())
    out_dtypes = list(dict.fromkeys(v.type.dtype for v in probe))
    func, env, results = elementwise_func(build, inputs, scalars, out_dtypes)
    env.update(zip(func.args[len(inputs) + len(out_dtypes):], scalars))
    width = inputs[0].shape[1]
    outs = {d: np.zeros((N, width * sum(v.type.dtype == d for v in results)), d.np_dtype) for d in out_dtypes}
    run(func, inputs + list(outs.values()), scalars)
    checks = []
    for value, (dtype, column) in zip(results, output_columns(results, width)):
        actual = outs[dtype][:, column:column + width]
        name = value.owner.name if isinstance(value.owner, Operation) else None
        checks.append((actual, np.broadcast_to(evaluate(value, env), actual.shape), name))
    return checks


def assert_exact(actual, expected):
    """Bit for bit, except that any NaN matches any NaN."""
    expected = np.asarray(expected).astype(actual.dtype)
    if XETILE_DTYPE[actual.dtype].is_float:
        nan = np.isnan(expected)
        np.testing.assert_array_equal(np.isnan(actual), nan)
        actual, expected = actual[~nan], expected[~nan]
    bits = f"u{actual.dtype.itemsize}"
    np.testing.assert_array_equal(actual.view(bits), expected.view(bits))


def check(results):
    for actual, expected, name in results:
        if name in APPROXIMATE:
            assert_close(actual, expected)
        else:
            assert_exact(actual, expected)


# --- test data ---------------------------------------------------------------------------------------------
def sample(rng, dtype, shape):
    """Random values of `dtype`: floats in [-4, 4), integers over their whole range, bools."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    return rng.uniform(-4, 4, size=shape).astype(np.float32).astype(dtype)


def operands(rng, dtype):
    """x, y and shift amounts s for the binary ops: no zero divisors, no MIN / -1, some x == y, NaN and
    infinities on both sides; shift amounts run past the width (and below zero for signed types)."""
    kind = XETILE_DTYPE[np.dtype(dtype)].kind
    x, y = sample(rng, dtype, (N, 1)), sample(rng, dtype, (N, 1))
    s = y
    if kind == "f":
        x[16:21, 0] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
        y[21:24, 0] = [np.nan, np.inf, -np.inf]
    elif kind in "iu":
        info = np.iinfo(dtype)
        x[x == info.min] = info.max
        x[x == 0], y[y == 0] = 1, 1
        s = rng.integers(-2 if kind == "i" else 0, info.bits + 2, size=(N, 1)).astype(dtype)
    y[:16] = x[:16]
    return x, y, s


def accepts(kinds, dtype) -> bool:
    return XETILE_DTYPE[np.dtype(dtype)].kind in kinds


# --- element-wise ops ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_elementwise_ops(rng, dtype):
    """Every BinaryOp, UnaryOp, TernaryOp and CmpOp row that takes `dtype`, and a select, in one kernel."""
    is_float = XETILE_DTYPE[np.dtype(dtype)].is_float
    cmp = "arith.cmpf" if is_float else "arith.cmpi"

    def build(b, x, y, s):
        binaries = [binary(b, name, x, s if name.startswith("arith.sh") else y)
                    for name, row in BINARY.items() if accepts(row.kinds, dtype)]
        unaries = [unary(b, name, x) for name, row in UNARY.items() if accepts(row.kinds, dtype)]
        ternaries = [emit(b, C.TernaryOp, name, x, y, x) for name, row in TERNARY.items() if accepts(row.kinds, dtype)]
        compares = [emit(b, C.CmpOp, cmp, predicate, x, y) for predicate in C.CMP_PREDICATES[cmp]]
        return binaries + unaries + ternaries + compares + [emit(b, C.SelectOp, compares[2], x, y)]

    check(run_elementwise(build, list(operands(rng, dtype))))


def cast_pairs():
    """Every (cast, source, destination) the verifier accepts."""
    dtypes = [XETILE_DTYPE[np.dtype(d)] for d in DTYPES]
    pairs = []
    for name in CASTS:
        for source in dtypes:
            for dest in dtypes:
                try:
                    C.CastOp(name, C.ConstantOp(0, ScalarType(source)).result, ScalarType(dest)).verify()
                except CompilationError:
                    continue
                pairs.append((name, source, dest))
    return pairs


def test_casts(rng):
    """Every CASTS row for every dtype pair it takes, and index_cast of every integer type, in one kernel
    (fptoui converts |x|: numpy's conversion of negative floats to unsigned is undefined)."""
    inputs = [sample(rng, d, (N, 1)) for d in DTYPES]
    for x in inputs[:3]:
        x *= 30
    sources = {XETILE_DTYPE[x.dtype]: i for i, x in enumerate(inputs)}
    pairs = cast_pairs()

    def build(b, *xs):
        results = []
        for name, source, dest in pairs:
            x = xs[sources[source]]
            if name == "arith.fptoui":
                x = unary(b, "math.absf", x)
            results.append(emit(b, C.CastOp, name, x, ScalarType(dest)))
        return results + [emit(b, C.IndexCastOp, x) for x in xs if x.type.dtype.is_int]

    results = run_elementwise(build, inputs)
    assert len(results) > len(CASTS) * 3
    check(results)


@pytest.mark.parametrize("width", [2, 3, 4, 8])
def test_vector_ops(rng, width):
    """1-D vectors: dense and splat constants, binary/unary/compare/select/cast on f32, bf16 and i32 vectors,
    OpenCL math component by component (f32 exp, i32 abs), a vector select under a scalar condition. Widths 2 to 4,
    and 8 for those past 4 (SPIR-V's Vector16 capability; these ops on 16 components build in twice 8's time, and
    test_spirv_emitter.py's test_vectors runs vectors of 16 on the device)."""
    inputs = [sample(rng, d, (N, width)) for d in (np.float32, ml_dtypes.bfloat16, np.int32)]
    scalars = [np.float32(0.75), np.int32(-7)]
    vec = VectorType((width,), float32)

    def build(b, xf, xb, xi, sf, si):
        sfv, siv = emit(b, C.SplatOp, sf, (width,)), emit(b, C.SplatOp, si, (width,))
        less = emit(b, C.CmpOp, "arith.cmpf", "olt", xf, sfv)
        first_positive = emit(b, C.CmpOp, "arith.cmpf", "ogt", sf, const(b, 0.0, ScalarType(float32)))
        floats = [binary(b, "arith.addf", xf, const(b, 1.5, vec)), binary(b, "arith.maximumf", xf, sfv),
                  unary(b, "math.exp", xf), unary(b, "arith.negf", xf), less, emit(b, C.SelectOp, less, xf, sfv),
                  emit(b, C.SelectOp, first_positive, xf, sfv)]
        bf16s = [binary(b, "arith.mulf", xb, xb), unary(b, "math.exp", xb), emit(b, C.CastOp, "arith.extf", xb, vec),
                 emit(b, C.CastOp, "arith.truncf", xf, VectorType((width,), bfloat16))]
        ints = [binary(b, "arith.muli", xi, siv),
                binary(b, "arith.shrsi", xi, const(b, 3, VectorType((width,), int32))),
                unary(b, "math.absi", xi), emit(b, C.CmpOp, "arith.cmpi", "slt", xi, siv),
                emit(b, C.CastOp, "arith.sitofp", xi, vec), binary(b, "arith.maxsi", xi, siv)]
        return floats + bf16s + ints

    check(run_elementwise(build, inputs, scalars))


def test_scalar_args_of_every_dtype(rng):
    """Scalar arguments of every dtype arrive with their bits (bf16, f16 and bool too)."""
    scalars = [np.dtype(d).type(v) for d, v in zip(DTYPES, [-1.5, 2.75, 3.25, -100, 200, -30000, 1 << 30, -(1 << 40),
                                                             True])]
    results = run_elementwise(lambda b, x, *args: list(args), [np.zeros((N, 1), np.int8)], scalars)
    for (actual, _, _), value in zip(results, scalars):
        assert_exact(actual, np.full(actual.shape, value))


# --- control flow ----------------------------------------------------------------------------------------------
def new_func(name, **args):
    func = FuncOp(name, list(args.values()), list(args), {})
    return func, Builder(func.body), func.args


def for_loop(b, lower, upper, step, inits, body):
    """scf.for whose body is `body(b, iv, *carried) -> yielded`; returns its results."""
    loop = b.create(C.ForOp, lower, upper, step, inits)
    with b.at_end_of(loop.body):
        b.create(C.YieldOp, body(b, *loop.body.args))
    return loop.results


def if_op(b, cond, result_types, then, otherwise):
    """scf.if whose branches are `then(b) -> yielded` and `otherwise(b) -> yielded`; returns its results."""
    blocks = Block(), Block()
    for block, branch in zip(blocks, (then, otherwise)):
        with b.at_end_of(block):
            b.create(C.YieldOp, branch(b))
    return b.create(C.IfOp, cond, result_types, *blocks).results


def test_loop_with_carried_values(rng):
    """for iv in range(lo, hi, 3) (index bounds from scalar args) carrying an f32 sum and an i32 hash, and an
    i32 loop whose trip count depends on the work-item (zero or negative for some)."""
    K = 12
    f32, i32 = ScalarType(float32), ScalarType(int32)
    func, b, (x, out_f, out_i, lo, hi) = new_func("loop", x=MemRefType(float32), out_f=MemRefType(float32),
                                                   out_i=MemRefType(int32), lo=index, hi=index)
    g = global_position(b)

    def body(b, iv, acc, h):
        v = emit(b, LoadOp, x, g, iv)
        acc = binary(b, "arith.addf", acc, binary(b, "arith.mulf", v, emit(b, C.CastOp, "arith.sitofp", iv, f32)))
        h = binary(b, "arith.muli", h, const(b, 3, i32))
        return [acc, binary(b, "arith.addi", h, emit(b, C.CastOp, "arith.trunci", iv, i32))]

    acc, h = for_loop(b, lo, hi, const(b, 3), [const(b, 0.0, f32), const(b, 1, i32)], body)
    g32 = emit(b, C.CastOp, "arith.trunci", g, i32)
    upper = binary(b, "arith.subi", binary(b, "arith.remsi", g32, const(b, 5, i32)), const(b, 1, i32))
    (count,) = for_loop(b, const(b, 0, i32), upper, const(b, 1, i32), [h],
                        lambda b, j, c: [binary(b, "arith.addi", c, j)])
    emit(b, StoreOp, acc, out_f, g, const(b, 0))
    emit(b, StoreOp, count, out_i, g, const(b, 0))
    b.create(C.ReturnOp)

    xs = np.asfortranarray(rng.standard_normal((N, K), dtype=np.float32))  # column-major: strides (1, N)
    outs = np.zeros((N, 1), np.float32), np.zeros((N, 1), np.int32)
    run(func, [xs, *outs], [np.int64(2), np.int64(11)])
    expected_f, expected_i = np.zeros(N, np.float32), np.ones(N, np.int32)
    for i in range(2, 11, 3):
        expected_f += xs[:, i] * np.float32(i)
        expected_i = expected_i * 3 + i
    expected_i += np.array([sum(range(g % 5 - 1)) for g in range(N)], np.int32)
    np.testing.assert_allclose(outs[0][:, 0], expected_f, rtol=1e-6)
    np.testing.assert_array_equal(outs[1][:, 0], expected_i)


def test_nested_if_and_for(rng):
    """A loop over i < g % 7 holding an if (f32 result) whose then-branch holds an if and whose else-branch
    holds a loop; then an if without results that stores in one branch only."""
    K = 8
    f32, i32 = ScalarType(float32), ScalarType(int32)
    func, b, (x, out, flags) = new_func("nested", x=MemRefType(float32), out=MemRefType(float32),
                                        flags=MemRefType(int32))
    g = global_position(b)
    zero_f = const(b, 0.0, f32)

    def body(b, i, acc):
        v = emit(b, LoadOp, x, g, emit(b, C.IndexCastOp, i))

        def then(b):
            even = emit(b, C.CmpOp, "arith.cmpi", "eq", binary(b, "arith.remsi", i, const(b, 2, i32)),
                        const(b, 0, i32))
            twice = binary(b, "arith.mulf", v, const(b, 2.0, f32))
            return if_op(b, even, [f32], lambda b: [binary(b, "arith.addf", acc, v)],
                         lambda b: [binary(b, "arith.subf", acc, twice)])

        def otherwise(b):
            return for_loop(b, const(b, 0, i32), i, const(b, 1, i32), [acc], lambda b, j, a: [
                binary(b, "arith.addf", a, emit(b, C.CastOp, "arith.sitofp", j, f32))])

        return if_op(b, emit(b, C.CmpOp, "arith.cmpf", "ogt", v, zero_f), [f32], then, otherwise)

    n = emit(b, C.CastOp, "arith.trunci", binary(b, "arith.remsi", g, const(b, 7)), i32)
    (acc,) = for_loop(b, const(b, 0, i32), n, const(b, 1, i32), [zero_f], body)
    emit(b, StoreOp, acc, out, g, const(b, 0))
    third = emit(b, C.CmpOp, "arith.cmpi", "eq", binary(b, "arith.remsi", g, const(b, 3)), const(b, 0))

    def mark(b):
        emit(b, StoreOp, const(b, 1, i32), flags, g, const(b, 0))
        return []

    if_op(b, third, [], mark, lambda b: [])
    b.create(C.ReturnOp)

    xs = rng.standard_normal((N, K), dtype=np.float32)
    outs = np.zeros((N, 1), np.float32), np.zeros((N, 1), np.int32)
    run(func, [xs, *outs])
    expected = np.zeros(N, np.float32)
    for g in range(N):
        for i in range(g % 7):
            v = xs[g, i]
            if v > 0:
                expected[g] = expected[g] + v if i % 2 == 0 else expected[g] - v * np.float32(2)
            else:
                expected[g] += np.float32(sum(range(i)))
    np.testing.assert_allclose(outs[0][:, 0], expected, rtol=1e-6)
    np.testing.assert_array_equal(outs[1][:, 0], np.arange(N) % 3 == 0)


# --- ids, barrier and SLM ----------------------------------------------------------------------------------
def test_barrier_and_slm_exchange(rng):
    """Each work-item writes its f32 value and a bool to SLM [subgroup, lane], waits at the barrier and reads
    the mirror slot of the other subgroup."""
    func, b, (x, out, out_b) = new_func("exchange", x=MemRefType(float32), out=MemRefType(float32),
                                        out_b=MemRefType(bool_))
    slm = emit(b, C.SlmAllocOp, SlmMemRefType(float32, shape=(2, SG)))
    slm_b = emit(b, C.SlmAllocOp, SlmMemRefType(bool_, shape=(2, SG)))
    g, zero = global_position(b), const(b, 0)
    sg, lane = emit(b, C.SubgroupIdOp), emit(b, C.LaneIdOp)
    v = emit(b, LoadOp, x, g, zero)
    emit(b, StoreOp, v, slm, sg, lane)
    emit(b, StoreOp, emit(b, C.CmpOp, "arith.cmpf", "ogt", v, const(b, 0.0, ScalarType(float32))), slm_b, sg, lane)
    b.create(C.BarrierOp)
    other = binary(b, "arith.subi", const(b, 1), sg)
    mirror = binary(b, "arith.subi", const(b, SG - 1), lane)
    emit(b, StoreOp, emit(b, LoadOp, slm, other, mirror), out, g, zero)
    emit(b, StoreOp, emit(b, LoadOp, slm_b, other, mirror), out_b, g, zero)
    b.create(C.ReturnOp)

    xs = rng.standard_normal((N, 5), dtype=np.float32)[:, 2:3]  # a pitched view: row stride 5
    outs = np.zeros((N, 1), np.float32), np.zeros((N, 1), np.bool_)
    run(func, [xs, *outs])
    expected = xs.reshape(-1, 2, SG)[:, ::-1, ::-1].reshape(N, 1)
    np.testing.assert_array_equal(outs[0], expected)
    np.testing.assert_array_equal(outs[1], expected > 0)


def test_ids_on_a_2d_grid():
    """program_id / num_programs along both axes, subgroup and lane ids, on a 2 x 3 grid of 32-item groups."""
    queries = [(C.ProgramIdOp, 0), (C.ProgramIdOp, 1), (C.NumProgramsOp, 0), (C.NumProgramsOp, 1),
               (C.SubgroupIdOp,), (C.LaneIdOp,)]
    outs = [np.zeros((3, 2 * WG), dtype) for dtype in [np.int32] * 4 + [np.int64] * 2]
    func, b, args = new_func("ids", **{f"out{i}": MemRefType(XETILE_DTYPE[o.dtype]) for i, o in enumerate(outs)})
    row = emit(b, C.IndexCastOp, emit(b, C.ProgramIdOp, 1))
    col = global_position(b)
    for query, out in zip(queries, args):
        emit(b, StoreOp, emit(b, *query), out, row, col)
    b.create(C.ReturnOp)
    run(func, outs, global_size=(2 * WG, 3), local_size=(WG, 1))
    rows, cols = np.indices((3, 2 * WG))
    for out, expected in zip(outs, [cols // WG, rows, 2, 3, cols % WG // SG, cols % SG]):
        np.testing.assert_array_equal(out, np.broadcast_to(expected, out.shape))


# --- the module itself -------------------------------------------------------------------------------------
def test_every_llvm_rule_of_the_elementwise_table_exists():
    """The LLVM rules of ir/elementwise.py are data: each names a lowering rule and an LLVM instruction that exist."""
    rules = {row.llvm for row in (*BINARY.values(), *UNARY.values())}
    assert all(hasattr(LLVMLowering, f"rule_{method}") for method, _ in rules)
    assert all(hasattr(ir.IRBuilder, instruction) for method, instruction in rules if method == "instruction")
    assert all(hasattr(ir.IRBuilder, row.llvm) for row in CASTS.values() if row.llvm is not None)


def test_signature_and_arg_layout():
    func, b, _ = new_func("sig", a=MemRefType(bfloat16), flag=ScalarType(bool_), n=index, s=ScalarType(float32))
    b.create(C.ReturnOp)
    lowering = LLVMLowering(func)
    layout = lowering.arg_layout()
    assert [(a.name, a.is_array) for a in layout] == [("a", True), ("flag", False), ("n", False), ("s", False)]
    assert [str(t) for a in layout for t in a.llvm_types] == ["i16 addrspace(1)*", "i64", "i64", "i64", "i64",
                                                              "i8", "i64", "float"]
    fn = lowering.lower().get_global("sig")
    assert fn.calling_convention == "spir_kernel"
    assert [p.name for p in fn.args][:5] == ["a", "a.rows", "a.cols", "a.row_stride", "a.col_stride"]


def test_arrays_of_other_ranks_pass_their_shape_then_their_strides():
    func, b, _ = new_func("ranks", x=MemRefType(float32, rank=3), w=MemRefType(float32, rank=1))
    b.create(C.ReturnOp)
    fn = LLVMLowering(func).lower().get_global("ranks")
    assert [p.name for p in fn.args] == ["x", "x.size0", "x.size1", "x.size2", "x.stride0", "x.stride1", "x.stride2",
                                         "w", "w.size0", "w.stride0"]


def test_a_packed_sizes_abi_passes_the_pointers_then_one_struct_by_value():
    """Where the target's ABI packs the sizes (the CPU targets): each array's parameter is its pointer, every array's
    i64 fields follow as one struct passed by value (SPIR-V FuncParamAttr ByVal), read at the kernel's start."""
    func, b, _ = new_func("packed", x=MemRefType(float32, rank=3), n=index, w=MemRefType(float32, rank=1))
    b.create(C.ReturnOp)
    lowering = LLVMLowering(func, TARGETS["cpu"])
    fn = lowering.lower().get_global("packed")
    assert [p.name for p in fn.args] == ["x", "n", "w", "sizes"]
    assert str(fn.args[-1].type) == "{i64, i64, i64, i64, i64, i64, i64, i64}*"
    assert 'byval({i64, i64, i64, i64, i64, i64, i64, i64}) align 8 %"sizes"' in lowering.text
    loads = [i for i in fn.entry_basic_block.instructions if i.opname == "load"]
    assert [i.name for i in loads] == ["x.size0", "x.size1", "x.size2", "x.stride0", "x.stride1", "x.stride2",
                                       "w.size0", "w.stride0"]
    binary = emit_spirv(lowering.module)
    validate(binary)
    assert "OpDecorate %sizes FuncParamAttr ByVal" in disassemble(binary)
    assert [p.name for p in LLVMLowering(func, TARGETS["xe-hpc"]).lower().get_global("packed").args][:2] == \
        ["x", "x.size0"]


def test_op_without_rule_is_named():
    func, b, (a,) = new_func("norule", a=MemRefType(float32))
    emit(b, LoadOp, a, const(b, 0), const(b, 0))
    b.create(C.ReturnOp)
    with pytest.raises(CompilationError, match="test.load: has no LLVM lowering rule"):
        LLVMLowering(func).lower()
