"""SPIR-V emitter tests: each builds an llvmlite module, emits SPIR-V, validates it with spirv-val and runs it on
the opencl:cpu SYCL device through runtime/sycl.py, comparing with numpy."""
from __future__ import annotations

import dpctl.memory
import numpy as np
import pytest
from llvmlite import ir
from spirv_tools import cpu_queue, disassemble, validate
from usm_arrays import UsmArray

from xetile_jit.codegen.llvm.core import counted_loop, loop_id
from xetile_jit.codegen.spirv import emit_spirv
from xetile_jit.runtime import sycl

VOID = ir.VoidType()
I1, I8, I16, I32, I64 = (ir.IntType(w) for w in (1, 8, 16, 32, 64))
F16, F32 = ir.HalfType(), ir.FloatType()
BARRIER_ARGS = (2, 2, 0x110)  # Workgroup execution and memory scope, SequentiallyConsistent | WorkgroupMemory


def gptr(ty: ir.Type) -> ir.PointerType:
    return ir.PointerType(ty, 1)


def kernel(module: ir.Module, name: str, *arg_types: ir.Type) -> tuple[ir.Function, ir.IRBuilder]:
    fn = ir.Function(module, ir.FunctionType(VOID, arg_types), name)
    fn.calling_convention = "spir_kernel"
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def declare(module: ir.Module, name: str, ret: ir.Type, *arg_types: ir.Type) -> ir.Function:
    if name in module.globals:
        return module.globals[name]
    return ir.Function(module, ir.FunctionType(ret, arg_types), name)


def builtin(b: ir.IRBuilder, name: str, dim: int | None = None) -> ir.Value:
    """`__spirv_BuiltIn<name>(dim)` (i64) for the vector built-ins, `__spirv_BuiltIn<name>()` (i32) otherwise."""
    if dim is None:
        return b.call(declare(b.module, f"__spirv_BuiltIn{name}", I32), [])
    return b.call(declare(b.module, f"__spirv_BuiltIn{name}", I64, I32), [ir.Constant(I32, dim)])


def spirv_call(b: ir.IRBuilder, name: str, ret: ir.Type, *args: ir.Value) -> ir.Value:
    return b.call(declare(b.module, name, ret, *(a.type for a in args)), args)


def barrier(b: ir.IRBuilder) -> None:
    spirv_call(b, "__spirv_ControlBarrier", VOID, *(ir.Constant(I32, v) for v in BARRIER_ARGS))


def at(b: ir.IRBuilder, ptr: ir.Value, *indices) -> ir.Value:
    return b.gep(ptr, [ir.Constant(I64, i) if isinstance(i, int) else i for i in indices], inbounds=True)


def run(module, name, global_size, local_size, args, subgroup_size=None):
    """Emit, validate and run kernel `name`; numpy arrays go through USM memory and come back as the result."""
    binary = emit_spirv(module, subgroup_size)
    validate(binary)
    queue = cpu_queue()

    def to_device(arg):
        if not isinstance(arg, np.ndarray):
            return arg
        memory = dpctl.memory.MemoryUSMShared(max(arg.nbytes, 1), queue=queue)
        memory.copy_from_host(np.ascontiguousarray(arg).view(np.uint8).reshape(-1))
        return memory

    device_args = [to_device(a) for a in args]
    sycl.launch(queue, sycl.SyclProgram(binary, queue).kernel(name), global_size, local_size, device_args)
    return [np.frombuffer(d.copy_to_host(), a.dtype).reshape(a.shape)
            for a, d in zip(args, device_args) if isinstance(a, np.ndarray)]


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def vadd_module() -> ir.Module:
    module = ir.Module()
    fn, b = kernel(module, "vadd", gptr(F32), gptr(F32), gptr(F32))
    a, x, out = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    b.store(b.fadd(b.load(at(b, a, i), align=4), b.load(at(b, x, i), align=4)), at(b, out, i), align=4)
    b.ret_void()
    return module


def test_vadd_f32(rng):
    a, x = rng.standard_normal((2, 1000), dtype=np.float32)
    (out,) = run(vadd_module(), "vadd", [1000], [8], [a, x, np.zeros(1000, np.float32)])[2:]
    np.testing.assert_array_equal(out, a + x)


def test_launch_usm_array_view_and_numpy_scalar(rng):
    """USM array views start at their first element (the interface's offset); numpy scalars (float16 too) are
    accepted."""
    module = ir.Module()
    fn, b = kernel(module, "axpb", gptr(F32), gptr(F32), F32, I32, F16)
    a, out, scale, offset, bias = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    value = b.fadd(b.fmul(b.load(at(b, a, i)), scale), b.fadd(b.sitofp(offset, F32), b.fpext(bias, F32)))
    b.store(value, at(b, out, i))
    b.ret_void()
    binary = emit_spirv(module)
    validate(binary)
    queue = cpu_queue()
    host = rng.standard_normal(64, dtype=np.float32)
    a_view = UsmArray(queue, host, (32,), None, offset=16)  # host[16:48] on the device
    out_view = UsmArray(queue, np.zeros(64, np.float32), (32,), None, offset=8)
    sycl.launch(queue, sycl.SyclProgram(binary, queue).kernel("axpb"), [32], None,
                [a_view, out_view, np.float32(2.0), np.int32(3), np.float16(0.5)])
    expected = np.zeros(64, np.float32)
    expected[8:40] = host[16:48] * 2 + 3.5
    np.testing.assert_array_equal(out_view.contents(), expected)


def test_builtin_ids_2d():
    """Sizes are in SPIR-V order: dimension 0 is x, the fastest; checks every vector built-in."""
    names = [("GlobalInvocationId", 0), ("GlobalInvocationId", 1), ("LocalInvocationId", 0),
             ("LocalInvocationId", 1), ("WorkgroupId", 0), ("WorkgroupId", 1), ("NumWorkgroups", 0),
             ("NumWorkgroups", 1), ("WorkgroupSize", 0), ("WorkgroupSize", 1), ("GlobalSize", 0), ("GlobalSize", 1)]
    module = ir.Module()
    fn, b = kernel(module, "ids", gptr(I64))
    (out,) = fn.args
    flat = b.add(builtin(b, "GlobalInvocationId", 0), b.mul(builtin(b, "GlobalInvocationId", 1), ir.Constant(I64, 8)))
    base = b.mul(flat, ir.Constant(I64, len(names)))
    for k, (name, dim) in enumerate(names):
        b.store(builtin(b, name, dim), at(b, out, b.add(base, ir.Constant(I64, k))))
    b.ret_void()
    (got,) = run(module, "ids", [8, 6], [4, 2], [np.zeros((6, 8, len(names)), np.int64)])
    y, x = np.mgrid[0:6, 0:8]
    expected = [x, y, x % 4, y % 2, x // 4, y // 2, 2 + 0 * x, 3 + 0 * x, 4 + 0 * x, 2 + 0 * x, 8 + 0 * x, 6 + 0 * x]
    np.testing.assert_array_equal(got, np.stack(expected, axis=-1))


def test_row_sum_loop_with_phi(rng):
    module = ir.Module()
    fn, b = kernel(module, "row_sum", gptr(F32), gptr(F32), I32)
    a, out, n = fn.args
    row = builtin(b, "GlobalInvocationId", 0)
    base = b.mul(row, b.zext(n, I64))
    entry, header = b.block, fn.append_basic_block("header")
    body, done = fn.append_basic_block("body"), fn.append_basic_block("done")
    b.branch(header)
    b.position_at_end(header)
    i, acc = b.phi(I32, "i"), b.phi(F32, "acc")
    b.cbranch(b.icmp_signed("<", i, n), body, done)
    b.position_at_end(body)
    total = b.fadd(acc, b.load(at(b, a, b.add(base, b.sext(i, I64))), align=4))
    next_i = b.add(i, ir.Constant(I32, 1))
    b.branch(header)
    for phi, start, update in ((i, ir.Constant(I32, 0), next_i), (acc, ir.Constant(F32, 0.0), total)):
        phi.add_incoming(start, entry)
        phi.add_incoming(update, body)
    b.position_at_end(done)
    b.store(acc, at(b, out, row), align=4)
    b.ret_void()
    data = rng.integers(-8, 8, (16, 37)).astype(np.float32)  # integer values: the sum is exact in any order
    (_, got) = run(module, "row_sum", [16], [4], [data, np.zeros(16, np.float32), np.int32(37)])
    np.testing.assert_array_equal(got, data.sum(axis=1))


@pytest.mark.parametrize("width", [8, 16])
def test_vectors(rng, width):
    vec = ir.VectorType(F32, width)
    module = ir.Module()
    fn, b = kernel(module, "vec", gptr(vec), gptr(vec), gptr(vec), gptr(vec))
    a, x, out, out2 = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    va, vx = b.load(at(b, a, i), align=4 * width), b.load(at(b, x, i), align=4 * width)
    c = b.fadd(b.fmul(va, vx), va)
    c = b.insert_element(c, b.fmul(b.extract_element(c, ir.Constant(I32, 3)), ir.Constant(F32, 2.0)),
                         ir.Constant(I32, 0))
    lane = b.trunc(b.and_(i, ir.Constant(I64, width - 1)), I32)
    next_lane = b.trunc(b.and_(b.add(i, ir.Constant(I64, 1)), ir.Constant(I64, width - 1)), I32)
    c = b.insert_element(c, b.extract_element(va, lane), next_lane)  # dynamic indices
    reverse = ir.Constant(ir.VectorType(I32, width), list(range(width - 1, -1, -1)))
    r = b.shuffle_vector(c, ir.Constant(vec, ir.Undefined), reverse)
    is_even = b.icmp_unsigned("==", b.and_(i, ir.Constant(I64, 1)), ir.Constant(I64, 0))
    b.store(b.select(is_even, r, vx), at(b, out, i), align=4 * width)  # scalar condition, vector values
    interleave = ir.Constant(ir.VectorType(I32, width), [k // 2 + (k % 2) * width for k in range(width)])
    b.store(b.shuffle_vector(va, vx, interleave), at(b, out2, i), align=4 * width)
    b.ret_void()
    rows = 32
    ha, hx = rng.standard_normal((2, rows, width), dtype=np.float32)
    zeros = np.zeros((rows, width), np.float32)
    got, got2 = run(module, "vec", [rows], [8], [ha, hx, zeros, zeros])[2:]
    expected = ha * hx + ha
    expected[:, 0] = expected[:, 3] * 2
    for row in range(rows):
        expected[row, (row + 1) % width] = ha[row, row % width]
    expected = expected[:, ::-1].copy()
    expected[1::2] = hx[1::2]
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    interleaved = np.stack([ha[:, :width // 2], hx[:, :width // 2]], axis=-1).reshape(rows, width)
    np.testing.assert_array_equal(got2, interleaved)
    assert "OpCapability Vector16" in disassemble(emit_spirv(module))


def test_f16_arithmetic(rng):
    module = ir.Module()
    fn, b = kernel(module, "half", gptr(F16), gptr(F16), gptr(F16), gptr(F32))
    a, x, out, out32 = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    ha, hx = b.load(at(b, a, i), align=2), b.load(at(b, x, i), align=2)
    h = b.fdiv(b.fadd(b.fmul(ha, hx), ha), b.fsub(hx, ir.Constant(F16, 5.0)))
    wide = b.fadd(b.fmul(b.fpext(h, F32), ir.Constant(F32, 0.5)), b.fpext(ha, F32))
    b.store(wide, at(b, out32, i), align=4)
    b.store(b.fneg(b.fptrunc(b.fmul(wide, ir.Constant(F32, 3.0)), F16)), at(b, out, i), align=2)
    b.ret_void()
    n = 256
    va, vx = (rng.uniform(-4, 4, n).astype(np.float16) for _ in range(2))
    got, got32 = run(module, "half", [n], [16], [va, vx, np.zeros(n, np.float16), np.zeros(n, np.float32)])[2:]
    h = (va * vx + va) / (vx - np.float16(5))  # numpy rounds every float16 op to float16
    wide = h.astype(np.float32) * np.float32(0.5) + va.astype(np.float32)
    np.testing.assert_allclose(got32, wide, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(got.astype(np.float32), -(wide * 3).astype(np.float16).astype(np.float32),
                               rtol=2e-3, atol=2e-3)


def test_integer_arithmetic_and_casts(rng):
    module = ir.Module()
    fn, b = kernel(module, "ints", gptr(I8), gptr(I16), gptr(I64), gptr(I64), gptr(F32))
    a8, a16, a64, out, outf = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    x8, x16, x64 = b.load(at(b, a8, i)), b.load(at(b, a16, i)), b.load(at(b, a64, i))

    def c(ty, value):
        return ir.Constant(ty, value)

    f0 = b.sitofp(x16, F32)
    negative = b.icmp_signed("<", x16, c(I16, 0))
    ints = [
        b.sext(b.mul(b.sext(x8, I16), x16), I64),
        b.zext(b.add(b.zext(x8, I32), b.zext(x16, I32)), I64),
        b.sext(b.trunc(x64, I8), I64),
        b.sext(b.ashr(b.trunc(x64, I16), c(I16, 3)), I64),
        b.zext(b.lshr(b.trunc(x64, I16), c(I16, 3)), I64),
        b.udiv(x64, c(I64, 7)),
        b.sdiv(x64, c(I64, -3)),
        b.srem(x64, c(I64, 5)),
        b.urem(x64, c(I64, 3)),
        b.or_(b.xor(b.shl(x64, c(I64, 5)), b.and_(x64, c(I64, 0xFF))), c(I64, 0x100)),
        b.sub(b.mul(x64, x64), b.sext(x16, I64)),
        b.zext(b.bitcast(f0, I32), I64),
        b.sext(b.fptosi(b.fmul(f0, c(F32, 1.5)), I32), I64),
        b.zext(b.fptoui(b.fmul(b.uitofp(x8, F32), c(F32, 2.0)), I16), I64),
        b.zext(negative, I64),
        b.sext(b.sext(negative, I8), I64),
        b.zext(b.trunc(x64, I1), I64),
        b.sext(b.add(b.mul(x8, c(I8, 3)), c(I8, 7)), I64),
        b.zext(b.udiv(x16, c(I16, 10)), I64),
    ]
    floats = [f0, b.uitofp(x8, F32), b.sitofp(x64, F32), b.uitofp(negative, F32), b.sitofp(negative, F32)]
    base = b.mul(i, c(I64, len(ints) + 1))
    for k, value in enumerate(ints):
        b.store(value, at(b, out, b.add(base, c(I64, k))))
    # the last slot is written through an integer address: ptrtoint, add, inttoptr
    address = b.add(b.ptrtoint(at(b, out, base), I64), c(I64, 8 * len(ints)))
    b.store(b.add(x64, c(I64, 1)), b.inttoptr(address, gptr(I64)))
    fbase = b.mul(i, c(I64, len(floats)))
    for k, value in enumerate(floats):
        b.store(value, at(b, outf, b.add(fbase, c(I64, k))))
    b.ret_void()

    n = 128
    v8 = rng.integers(-128, 128, n).astype(np.int8)
    v16 = rng.integers(-32768, 32768, n).astype(np.int16)
    v64 = rng.integers(-2 ** 40, 2 ** 40, n).astype(np.int64)
    got, gotf = run(module, "ints", [n], [16], [v8, v16, v64, np.zeros((n, len(ints) + 1), np.int64),
                                               np.zeros((n, len(floats)), np.float32)])[3:]
    u8, u16, u64 = v8.view(np.uint8), v16.view(np.uint16), v64.view(np.uint64)
    f16 = v16.astype(np.float32)
    neg = v16 < 0
    expected = [
        v8.astype(np.int16) * v16, u8.astype(np.int64) + u16, v64.astype(np.int8), v64.astype(np.int16) >> 3,
        v64.astype(np.int16).view(np.uint16) >> 3, (u64 // 7).view(np.int64), -np.sign(v64) * (np.abs(v64) // 3),
        np.fmod(v64, 5), u64 % 3, ((v64 << 5) ^ (v64 & 0xFF)) | 0x100, v64 * v64 - v16, f16.view(np.uint32),
        np.trunc(f16 * np.float32(1.5)).astype(np.int32), (u8.astype(np.float32) * 2).astype(np.uint16), neg,
        -neg.astype(np.int64), v64 & 1, v8 * np.int8(3) + np.int8(7), u16 // 10, v64 + 1,
    ]
    np.testing.assert_array_equal(got, np.stack([e.astype(np.int64) for e in expected], axis=1))
    expected_f = [f16, u8.astype(np.float32), v64.astype(np.float32), neg.astype(np.float32), -neg.astype(np.float32)]
    np.testing.assert_array_equal(gotf, np.stack(expected_f, axis=1))


ICMP = [("signed", op) for op in ("==", "!=", "<", "<=", ">", ">=")] + [("unsigned", op) for op in ("<", "<=", ">", ">=")]
FCMP = [(kind, op) for kind in ("ordered", "unordered") for op in ("==", "!=", "<", "<=", ">", ">=", "ord", "uno")]
NUMPY_CMP = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
             ">=": np.greater_equal}


def test_compare_and_select(rng):
    module = ir.Module()
    fn, b = kernel(module, "cmp", gptr(F32), gptr(F32), gptr(I32), gptr(I32), gptr(I32), gptr(F32))
    fa, fx, ia, ix, out, outf = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    va, vx, wa, wx = (b.load(at(b, p, i)) for p in (fa, fx, ia, ix))
    bits = [getattr(b, f"icmp_{kind}")(op, wa, wx) for kind, op in ICMP]
    bits += [getattr(b, f"fcmp_{kind}")(op, va, vx) for kind, op in FCMP]
    bits += [b.and_(bits[2], bits[12]), b.or_(bits[2], bits[12]), b.xor(bits[2], bits[12]),
             b.icmp_unsigned("==", bits[2], bits[12]), b.icmp_unsigned("!=", bits[2], bits[12])]
    base = b.mul(i, ir.Constant(I64, len(bits)))
    for k, bit in enumerate(bits):
        b.store(b.zext(bit, I32), at(b, out, b.add(base, ir.Constant(I64, k))))
    b.store(b.select(b.fcmp_ordered("<", va, vx), va, vx), at(b, outf, i))
    b.ret_void()

    n = 64
    a, x = rng.integers(-3, 3, (2, n)).astype(np.float32)
    a[::7], x[::5] = np.nan, np.nan
    wa, wx = rng.integers(-3, 3, (2, n)).astype(np.int32)
    got, gotf = run(module, "cmp", [n], [8], [a, x, wa, wx, np.zeros((n, len(bits)), np.int32),
                                              np.zeros(n, np.float32)])[4:]
    ordered = ~(np.isnan(a) | np.isnan(x))
    expected = [NUMPY_CMP[op](wa, wx) if kind == "signed" else NUMPY_CMP[op](wa.view(np.uint32), wx.view(np.uint32))
                for kind, op in ICMP]
    for kind, op in FCMP:
        if op in ("ord", "uno"):  # the same predicate whichever builder method made it
            expected.append(ordered if op == "ord" else ~ordered)
        else:
            result = NUMPY_CMP[op](a, x)
            expected.append(ordered & result if kind == "ordered" else ~ordered | result)
    lt, flt = expected[2], expected[12]
    expected += [lt & flt, lt | flt, lt ^ flt, lt == flt, lt != flt]
    np.testing.assert_array_equal(got, np.stack(expected, axis=1).astype(np.int32))
    np.testing.assert_array_equal(gotf, np.where(ordered & (a < x), a, x))


def test_slm_reverse_with_barrier(rng):
    group = 64
    module = ir.Module()
    slm = ir.GlobalVariable(module, ir.ArrayType(F32, group), "slm", addrspace=3)
    fn, b = kernel(module, "reverse", gptr(F32), gptr(F32))
    a, out = fn.args
    i, lid = builtin(b, "GlobalInvocationId", 0), builtin(b, "LocalInvocationId", 0)
    b.store(b.load(at(b, a, i)), at(b, slm, 0, lid))
    barrier(b)
    b.store(b.load(at(b, slm, 0, b.sub(ir.Constant(I64, group - 1), lid))), at(b, out, i))
    b.ret_void()
    data = rng.standard_normal(4 * group, dtype=np.float32)
    (got,) = run(module, "reverse", [data.size], [group], [data, np.zeros_like(data)])[1:]
    np.testing.assert_array_equal(got, data.reshape(4, group)[:, ::-1].reshape(-1))


def test_slm_atomic_counter():
    """An atomic on SLM takes Workgroup scope; one counter per workgroup, reset by work-item 0."""
    module = ir.Module()
    counter = ir.GlobalVariable(module, I32, "counter", addrspace=3)
    fn, b = kernel(module, "count", gptr(I32))
    (out,) = fn.args
    lid = builtin(b, "LocalInvocationId", 0)
    reset, counting = fn.append_basic_block("reset"), fn.append_basic_block("counting")
    b.cbranch(b.icmp_unsigned("==", lid, ir.Constant(I64, 0)), reset, counting)
    b.position_at_end(reset)
    b.store(ir.Constant(I32, 0), counter)
    b.branch(counting)
    b.position_at_end(counting)
    barrier(b)
    b.atomic_rmw("add", counter, ir.Constant(I32, 1), "seq_cst")
    barrier(b)
    b.store(b.load(counter), at(b, out, builtin(b, "GlobalInvocationId", 0)))
    b.ret_void()
    (got,) = run(module, "count", [96], [32], [np.zeros(96, np.int32)])
    np.testing.assert_array_equal(got, 32)


def test_frem_special_constants_and_unreachable(rng):
    module = ir.Module()
    fn, b = kernel(module, "misc", gptr(F32), gptr(F32))
    a, out = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    trap, body = fn.append_basic_block("trap"), fn.append_basic_block("body")
    b.cbranch(b.icmp_unsigned(">", i, ir.Constant(I64, 1 << 40)), trap, body)
    b.position_at_end(trap)
    b.unreachable()
    b.position_at_end(body)
    value = b.frem(b.load(b.gep(a, [i])), ir.Constant(F32, 1.5))  # a plain (not inbounds) gep
    vec = ir.VectorType(F32, 4)
    zeros = b.insert_element(ir.Constant(vec, None), value, ir.Constant(I32, 1))
    undef = b.insert_element(ir.Constant(vec, ir.Undefined), value, ir.Constant(I32, 2))
    total = b.fadd(b.extract_element(zeros, ir.Constant(I32, 0)), b.extract_element(zeros, ir.Constant(I32, 1)))
    b.store(b.fadd(total, b.extract_element(undef, ir.Constant(I32, 2))), b.gep(out, [i]))
    b.ret_void()
    data = rng.uniform(-10, 10, 32).astype(np.float32)
    (got,) = run(module, "misc", [32], [8], [data, np.zeros_like(data)])[1:]
    np.testing.assert_allclose(got, 2 * np.fmod(data, np.float32(1.5)), rtol=1e-6, atol=1e-6)


def test_subgroup_shuffle_and_broadcast(rng):
    module = ir.Module()
    fn, b = kernel(module, "subgroup", gptr(F32), gptr(F32), gptr(I32))
    a, out, info = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    value = b.load(at(b, a, i))
    lane = builtin(b, "SubgroupLocalInvocationId")
    neighbour = b.and_(b.add(lane, ir.Constant(I32, 1)), ir.Constant(I32, 15))
    results = [spirv_call(b, "__spirv_SubgroupShuffleINTEL", F32, value, neighbour),
               spirv_call(b, "__spirv_GroupNonUniformBroadcast", F32, value, ir.Constant(I32, 3))]
    for k, result in enumerate(results):
        b.store(result, at(b, out, b.add(b.mul(i, ir.Constant(I64, 2)), ir.Constant(I64, k))))
    for k, name in enumerate(["SubgroupSize", "SubgroupId", "NumSubgroups", "SubgroupLocalInvocationId"]):
        b.store(builtin(b, name), at(b, info, b.add(b.mul(i, ir.Constant(I64, 4)), ir.Constant(I64, k))))
    b.ret_void()
    assert emit_spirv(module, 16)[4:8] == bytes([0, 3, 1, 0])  # version 1.3 for GroupNonUniformBroadcast
    n, group = 128, 64
    data = rng.standard_normal(n, dtype=np.float32)
    got, got_info = run(module, "subgroup", [n], [group], [data, np.zeros((n, 2), np.float32),
                                                           np.zeros((n, 4), np.int32)],
                        subgroup_size=16)[1:]
    lanes = data.reshape(-1, 16)
    np.testing.assert_array_equal(got[:, 0], np.roll(lanes, -1, axis=1).reshape(-1))
    np.testing.assert_array_equal(got[:, 1], np.repeat(lanes[:, 3], 16))
    lid = np.arange(n) % group
    np.testing.assert_array_equal(got_info, np.stack([np.full(n, 16), lid // 16, np.full(n, group // 16), lid % 16], 1))


ATOMIC_CELLS = [  # (operation, ordering, initial value, numpy reduction of the values)
    ("add", "seq_cst", 0, lambda v: np.add.reduce(v, dtype=np.int32)),
    ("sub", "monotonic", 0, lambda v: -np.add.reduce(v, dtype=np.int32)),
    ("and", "monotonic", -1, np.bitwise_and.reduce),
    ("or", "monotonic", 0, np.bitwise_or.reduce),
    ("xor", "acq_rel", 0, np.bitwise_xor.reduce),
    ("max", "monotonic", -2 ** 31, np.max),
    ("min", "monotonic", 2 ** 31 - 1, np.min),
    ("umax", "monotonic", 0, lambda v: v.view(np.uint32).max().view(np.int32)),
    ("umin", "monotonic", -1, lambda v: v.view(np.uint32).min().view(np.int32)),
]


def test_atomicrmw():
    module = ir.Module()
    fn, b = kernel(module, "atomics", gptr(I32), gptr(I32), gptr(I64))
    cells, tickets, wide = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    # a scrambled signed value per work-item
    value = b.ashr(b.mul(b.trunc(i, I32), ir.Constant(I32, 0x9E3779B1)), ir.Constant(I32, 8))
    for k, (op, ordering, _, _) in enumerate(ATOMIC_CELLS):
        b.atomic_rmw(op, at(b, cells, k), value, ordering)
    b.atomic_rmw("xchg", at(b, cells, len(ATOMIC_CELLS)), value, "monotonic")
    ticket = b.atomic_rmw("add", at(b, cells, len(ATOMIC_CELLS) + 1), ir.Constant(I32, 1), "monotonic")
    b.store(ticket, at(b, tickets, i))
    b.atomic_rmw("add", at(b, wide, 0), i, "monotonic")
    b.ret_void()
    n = 1024
    initial = np.array([cell[2] for cell in ATOMIC_CELLS] + [0, 0], np.int32)
    got, got_tickets, got_wide = run(module, "atomics", [n], [64], [initial, np.zeros(n, np.int32),
                                                                   np.zeros(1, np.int64)])
    values = (np.arange(n, dtype=np.uint32) * np.uint32(0x9E3779B1)).view(np.int32) >> 8
    np.testing.assert_array_equal(got[:len(ATOMIC_CELLS)], [cell[3](values) for cell in ATOMIC_CELLS])
    assert got[len(ATOMIC_CELLS)] in values
    assert got[-1] == n and sorted(got_tickets) == list(range(n))
    assert got_wide[0] == n * (n - 1) // 2


def test_cmpxchg_float_add_loop():
    module = ir.Module()
    fn, b = kernel(module, "float_add", gptr(F32), gptr(F32))
    a, total = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    value = b.load(at(b, a, i))
    target = b.bitcast(total, gptr(I32))
    first = b.load(target, align=4)
    entry, loop, done = b.block, fn.append_basic_block("loop"), fn.append_basic_block("done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(I32, "old")
    new = b.bitcast(b.fadd(b.bitcast(old, F32), value), I32)
    pair = b.cmpxchg(target, old, new, "monotonic")
    seen = b.extract_value(pair, 0)
    old.add_incoming(first, entry)
    old.add_incoming(seen, loop)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    b.ret_void()
    data = (np.arange(1024) % 100).astype(np.float32)  # small integers: every order gives the exact sum
    (got,) = run(module, "float_add", [data.size], [64], [data, np.zeros(1, np.float32)])[1:]
    assert got[0] == data.sum()


def test_call_defined_helpers(rng):
    module = ir.Module()
    axpy = ir.Function(module, ir.FunctionType(F32, [F32, F32, F32]), "axpy")
    b = ir.IRBuilder(axpy.append_basic_block("entry"))
    s, x, y = axpy.args
    b.ret(b.fadd(b.fmul(s, x), y))
    bump = ir.Function(module, ir.FunctionType(VOID, [ir.PointerType(F32)]), "bump")  # a private pointer
    b = ir.IRBuilder(bump.append_basic_block("entry"))
    b.store(b.fadd(b.load(bump.args[0]), ir.Constant(F32, 1.0)), bump.args[0])
    b.ret_void()
    fn, b = kernel(module, "caller", gptr(F32), gptr(F32))
    a, out = fn.args
    slot = b.alloca(F32, name="slot")
    i = builtin(b, "GlobalInvocationId", 0)
    x = b.load(at(b, a, i))
    b.store(x, slot)
    b.call(bump, [slot])
    b.store(b.call(axpy, [ir.Constant(F32, 2.0), x, b.load(slot)]), at(b, out, i))
    b.ret_void()
    data = rng.integers(-50, 50, 64).astype(np.float32)
    (got,) = run(module, "caller", [64], [16], [data, np.zeros_like(data)])[1:]
    np.testing.assert_array_equal(got, 2 * data + (data + 1))


def test_inlining_attributes_become_function_controls():
    """LLVM's `alwaysinline` is SPIR-V's FunctionControl Inline, `noinline` DontInline (the OpenCL CPU compiler
    honours both: codegen/cpu/builtins.py)."""
    module = ir.Module()
    for name, attribute in (("always", "alwaysinline"), ("never", "noinline"), ("either", None)):
        helper = ir.Function(module, ir.FunctionType(F32, [F32]), name)
        if attribute:
            helper.attributes.add(attribute)
        ir.IRBuilder(helper.append_basic_block("entry")).ret(helper.args[0])
    text = disassemble(emit_spirv(module))
    assert "%always = OpFunction %float Inline" in text
    assert "%never = OpFunction %float DontInline" in text
    assert "%either = OpFunction %float None" in text


def hinted_loop(module: ir.Module, early_exit: bool, hint: str = "llvm.loop.unroll.disable") -> None:
    """A kernel counting to its argument in a loop whose back edge carries `hint`; with `early_exit` the body may
    also leave the loop for a block of its own."""
    fn, b = kernel(module, "hinted", I32)
    entry, header, body, done = b.block, *(fn.append_basic_block(name) for name in ("header", "body", "done"))
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(I32, "i")
    b.cbranch(b.icmp_signed("<", i, fn.args[0]), body, done)
    b.position_at_end(body)
    next_i = b.add(i, ir.Constant(I32, 1))
    if early_exit:
        latch, bail = fn.append_basic_block("latch"), fn.append_basic_block("bail")
        b.cbranch(b.icmp_signed("==", next_i, ir.Constant(I32, 7)), bail, latch)
        b.position_at_end(bail)
        b.ret_void()
        b.position_at_end(latch)
    b.branch(header).set_metadata("llvm.loop", loop_id(module, (hint,)))
    i.add_incoming(ir.Constant(I32, 0), entry)
    i.add_incoming(next_i, b.block)
    b.position_at_end(done)
    b.ret_void()


@pytest.mark.parametrize("hint, control", [("llvm.loop.unroll.disable", "DontUnroll"),
                                           ("llvm.loop.unroll.enable", "Unroll")])
def test_loop_hints_become_a_loop_merge(hint, control):
    """`llvm.loop.unroll.disable` (`.enable`) on a back edge is OpLoopMerge DontUnroll (Unroll) in the loop's header,
    naming the loop's exit and the back edge's block; a loop with two exit blocks has no merge block to name."""
    module = ir.Module()
    hinted_loop(module, early_exit=False, hint=hint)
    binary = emit_spirv(module)
    validate(binary)
    text = disassemble(binary)
    header = text[text.index("%header = OpLabel"):text.index("%body = OpLabel")].split()
    merge, branch = header[-8:-4], header[-4:]
    assert merge == ["OpLoopMerge", "%done", "%body", control] and text.count("OpLoopMerge") == 1
    assert branch[0] == "OpBranchConditional" and branch[2:] == ["%body", "%done"]
    two_exits = ir.Module()
    hinted_loop(two_exits, early_exit=True)
    with pytest.raises(NotImplementedError, match="loop hints on a loop with 2 exit blocks"):
        emit_spirv(two_exits)


def test_a_one_block_loop_is_its_own_continue_target(rng):
    """A counted loop whose one block is header and latch (counted_loop, as the CPU builtins keep their loops over a
    lane's components) names itself as continue target; the driver runs it as written."""
    module = ir.Module()
    fn, b = kernel(module, "prefix", gptr(F32), gptr(F32))
    i = builtin(b, "GlobalInvocationId", 0)

    def step(b, k, carried):
        total = b.fadd(carried[0], b.load(at(b, fn.args[0], b.add(b.mul(i, ir.Constant(I64, 8)), b.zext(k, I64)))))
        return [total]

    total, = counted_loop(b, 8, [ir.Constant(F32, 0.0)], step, ("llvm.loop.unroll.disable",))
    b.store(total, at(b, fn.args[1], i))
    b.ret_void()
    text = disassemble(emit_spirv(module))
    assert text.count("OpLoopMerge %done %loop DontUnroll") == 1
    data = rng.integers(-50, 50, (16, 8)).astype(np.float32)
    (got,) = run(module, "prefix", [16], [16], [data, np.zeros(16, np.float32)])[1:]
    np.testing.assert_array_equal(got, data.sum(axis=1))


def test_generic_address_space(rng):
    """Global pointers cast to Generic for a helper, and a Generic pointer cast back to global."""
    generic = ir.PointerType(F32, 4)
    module = ir.Module()
    twice = ir.Function(module, ir.FunctionType(VOID, [generic]), "twice")
    b = ir.IRBuilder(twice.append_basic_block("entry"))
    b.store(b.fmul(b.load(twice.args[0]), ir.Constant(F32, 2.0)), twice.args[0])
    b.ret_void()
    fn, b = kernel(module, "caller", gptr(F32), gptr(F32))
    a, out = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    element = b.addrspacecast(at(b, a, i), generic)
    b.call(twice, [element])
    b.store(b.load(b.addrspacecast(element, gptr(F32))), at(b, out, i))
    b.ret_void()
    data = rng.standard_normal(32, dtype=np.float32)
    got_a, got = run(module, "caller", [32], [8], [data, np.zeros_like(data)])
    np.testing.assert_array_equal(got_a, 2 * data)
    np.testing.assert_array_equal(got, 2 * data)
    assert "OpCapability GenericPointer" in disassemble(emit_spirv(module))


def test_opencl_std_ext_inst(rng):
    module = ir.Module()
    fn, b = kernel(module, "math", gptr(F32), gptr(F32), gptr(I32), gptr(F32), gptr(I32))
    a, x, ia, out, iout = fn.args
    i = builtin(b, "GlobalInvocationId", 0)
    va, vx, wa = (b.load(at(b, p, i)) for p in (a, x, ia))
    results = [spirv_call(b, "__spirv_ocl_exp", F32, va),
               spirv_call(b, "__spirv_ocl_sqrt", F32, spirv_call(b, "__spirv_ocl_fabs", F32, va)),
               spirv_call(b, "__spirv_ocl_fmax", F32, va, vx)]
    for k, result in enumerate(results):
        b.store(result, at(b, out, b.add(b.mul(i, ir.Constant(I64, 3)), ir.Constant(I64, k))))
    b.store(spirv_call(b, "__spirv_ocl_s_abs", I32, wa), at(b, iout, i))
    b.ret_void()
    n = 64
    va, vx = rng.uniform(-5, 5, (2, n)).astype(np.float32)
    wa = rng.integers(-1000, 1000, n).astype(np.int32)
    got, got_i = run(module, "math", [n], [16], [va, vx, wa, np.zeros((n, 3), np.float32),
                                                 np.zeros(n, np.int32)])[3:]
    np.testing.assert_allclose(got[:, 0], np.exp(va), rtol=1e-6)
    np.testing.assert_allclose(got[:, 1], np.sqrt(np.abs(va)), rtol=1e-6)
    np.testing.assert_array_equal(got[:, 2], np.maximum(va, vx))
    np.testing.assert_array_equal(got_i, np.abs(wa))
    text = disassemble(emit_spirv(module))
    assert 'OpExtInstImport "OpenCL.std"' in text
    assert all(f" {name} " in text for name in ("exp", "sqrt", "fabs", "fmax", "s_abs"))


def test_import_linkage_and_kernel_decorations():
    """A declared non-__spirv_ function is an Import (how the DPAS builtin is called on GPUs); not run."""
    name = "_Z38intel_sub_group_f16_f16_matrix_mad_k16Dv8_sDv8_iDv8_f"
    v8f, v8s, v8i = ir.VectorType(F32, 8), ir.VectorType(I16, 8), ir.VectorType(I32, 8)
    module = ir.Module()
    fn, b = kernel(module, "dpas", gptr(v8s), gptr(v8i), gptr(v8f))
    fn.args[0].name = "a"
    fn.args[0].attributes.align = 64
    mad = ir.Function(module, ir.FunctionType(v8f, [v8s, v8i, v8f]), name)
    i = builtin(b, "SubgroupId")
    loaded = [b.load(at(b, p, i), align=32) for p in fn.args]
    b.store(b.call(mad, loaded), at(b, fn.args[2], i), align=32)
    b.ret_void()
    binary = emit_spirv(module, subgroup_size=16)
    validate(binary)
    text = disassemble(binary)
    for line in ["OpCapability Linkage", "OpCapability SubgroupDispatch", "OpCapability Int16",
                 "OpCapability Vector16", f'LinkageAttributes "{name}" Import', "OpDecorate %a Alignment 64",
                 "OpExecutionMode %dpas SubgroupSize 16", "BuiltIn SubgroupId"]:
        assert line in text


def _switch(b, fn):
    b.switch(ir.Constant(I32, 0), fn.append_basic_block("other"))


def _fence(b, fn):
    b.fence("seq_cst")


def _atomic_fadd(b, fn):
    b.atomic_rmw("fadd", fn.args[0], ir.Constant(F32, 1.0), "monotonic")


def _unknown_builtin(b, fn):
    spirv_call(b, "__spirv_NoSuchThing", I32)


def _late_alloca(b, fn):
    b.branch(fn.append_basic_block("next"))
    b.position_at_end(fn.blocks[-1])
    b.alloca(F32)


def _constant_expression(b, fn):
    b.store(ir.Constant(F32, 1.0), ir.Constant(I64, 64).inttoptr(gptr(F32)))


@pytest.mark.parametrize("build, message", [(_switch, "'switch'"), (_fence, "'fence'"),
                                            (_atomic_fadd, "atomicrmw fadd"),
                                            (_unknown_builtin, "__spirv_NoSuchThing"),
                                            (_late_alloca, "alloca outside the entry block"),
                                            (_constant_expression, "constant expression inttoptr")])
def test_unsupported_raises_not_implemented(build, message):
    module = ir.Module()
    fn, b = kernel(module, "bad", gptr(F32))
    build(b, fn)
    with pytest.raises(NotImplementedError, match=message):
        emit_spirv(module)
