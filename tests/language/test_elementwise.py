"""Element-wise ops on vectors: operators, type promotion, implicit broadcast, math functions, where, casts,
full/zeros. Real kernels run (numpy interpreter and SPIR-V) over BM x BN = 5 x 15 tiles (partial at the edges) of
M x N views inside bigger arrays, against numpy references written here in the project's semantics:
f16/bf16 compute in f32 and round once per op, int arithmetic wraps, `/` and `**` on ints give f32,
`//` truncates toward zero and `%` is the C remainder (np.fmod), for ints and floats alike."""
import math
import re

import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import FLOAT_DTYPES, INT_DTYPES, XETILE_DTYPE, assert_close, dtype_id, f32, rand, release_programs

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)


@pytest.fixture(autouse=True)
def programs_freed_after_each_test(request):
    """Nearly every test here compiles a specialization of its own (op, dtype, mode): its program goes at once."""
    yield
    release_programs(request.module)

M, N = 14, 40            # logical array shape: 3 x 3 workgroups, the last row/column of tiles partly out of bounds
BM, BN = 5, 15           # tile shape: small, as the OpenCL CPU driver's build time grows with a lane's elements
SHAPE = (M, N)
PAD = 3                  # margin around every argument array (views have a row pitch larger than their width)
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + [np.bool_]
LITERAL = {"f": 1.5, "i": 3, "u": 3, "b": True}     # the Python literal of the literal_* modes, per dtype kind
SCALAR = {"f": 2.5, "i": 2, "u": 2, "b": False}     # the runtime scalar argument of the scalar_* modes
MODES = ["vector", "literal_right", "literal_left", "scalar_right", "scalar_left"]


# ---- helpers ---------------------------------------------------------------------------------------
def mlir(dtype) -> str:
    return str(XETILE_DTYPE[np.dtype(dtype)])


def kind_of(dtype) -> str:
    """numpy's kind, with bfloat16 (kind "V" in numpy) counted as a float."""
    return "f" if np.dtype(dtype) == ml_dtypes.bfloat16 else np.dtype(dtype).kind


def has_op(ir: str, op: str, dtype, shape=(BM, BN)) -> bool:
    """Whether the IR has `op` (e.g. "arith.addi", "arith.cmpi slt,") with operands `vector<shape x dtype>`."""
    vec = f"vector<{shape[0]}x{shape[1]}x{mlir(dtype)}>"
    return re.search(rf"= {re.escape(op)} [^\n]*: {re.escape(vec)}", ir) is not None


def embed(a: np.ndarray) -> np.ndarray:
    """`a` as a view into the middle of a bigger array."""
    big = np.zeros((a.shape[0] + 2 * PAD, a.shape[1] + 2 * PAD), a.dtype)
    view = big[PAD:-PAD, PAD:-PAD]
    view[...] = a
    return view


def launch(kern, inputs, out_dtype, *scalars, shape=SHAPE, **consts):
    """Runs kern(*inputs, out, *scalars, BM, BN, **consts) on the grid of tiles covering `shape`.
    Returns (out, printed IR). `out` is a view into an array of ones whose margin must stay untouched."""
    big = np.ones((shape[0] + 2 * PAD, shape[1] + 2 * PAD), out_dtype)
    out = big[PAD:-PAD, PAD:-PAD]
    out[...] = 0
    args = [embed(np.asarray(x)) for x in inputs] + [out, *scalars]
    kern[(xetile.cdiv(shape[0], BM), xetile.cdiv(shape[1], BN))](*args, BM=BM, BN=BN, **consts)
    margin = np.ones(big.shape, bool)
    margin[PAD:-PAD, PAD:-PAD] = False
    assert (big[margin] == 1).all(), "the kernel wrote outside the output view"
    return out.copy(), kern.warmup(*args, BM=BM, BN=BN, **consts).asm["xetile"]


def assert_exact(actual, expected) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if kind_of(actual.dtype) == "f":
        np.testing.assert_array_equal(f32(actual), f32(expected))
    else:
        np.testing.assert_array_equal(actual, expected)


def full_range(rng, dtype) -> np.ndarray:
    """Any value of an integer dtype (to exercise wrap-around); floats in [-4, 4]; random bools."""
    return rand(rng, SHAPE, dtype, -2**63, 2**63 - 1) if np.dtype(dtype).kind in "iu" else rand(rng, SHAPE, dtype)


def magnitude(rng, dtype, lo, hi) -> np.ndarray:
    """Values with lo <= |v| <= hi and a random sign (non-negative for unsigned types)."""
    v = rand(rng, SHAPE, dtype, lo, hi)
    return v if np.dtype(dtype).kind == "u" else np.where(rng.random(SHAPE) < 0.5, -v, v).astype(dtype)


def mode_operands(mode, x, y, lit, s):
    """The (lhs, rhs) a kernel computes with in each MODE (see binary_kernel)."""
    return {"vector": (x, y), "literal_right": (x, lit), "literal_left": (lit, x),
            "scalar_right": (x, s), "scalar_left": (s, x)}[mode]


# ---- binary operators --------------------------------------------------------------------------------
def trunc_div(a, b):
    """C integer division, rounding toward zero: the quotient that goes with np.fmod's remainder."""
    return (a - np.fmod(a, b)) // b


# operator: (test id, numpy reference, IR op for float / signed int / unsigned int or bool operands)
BINARY = {
    "+": ("add", np.add, ("arith.addf", "arith.addi", "arith.addi")),
    "-": ("sub", np.subtract, ("arith.subf", "arith.subi", "arith.subi")),
    "*": ("mul", np.multiply, ("arith.mulf", "arith.muli", "arith.muli")),
    "/": ("truediv", np.divide, ("arith.divf", None, None)),
    "//": ("floordiv", trunc_div, ("math.floor", "arith.divsi", "arith.divui")),
    "%": ("mod", np.fmod, ("arith.remf", "arith.remsi", "arith.remui")),
    "**": ("pow", np.power, ("math.powf", None, None)),
    "&": ("and", np.bitwise_and, (None, "arith.andi", "arith.andi")),
    "|": ("or", np.bitwise_or, (None, "arith.ori", "arith.ori")),
    "^": ("xor", np.bitwise_xor, (None, "arith.xori", "arith.xori")),
    "<<": ("lshift", np.left_shift, (None, "arith.shli", "arith.shli")),
    ">>": ("rshift", np.right_shift, (None, "arith.shrsi", "arith.shrui")),
    "max": ("maximum", np.maximum, ("arith.maximumf", "arith.maxsi", "arith.maxui")),
    "min": ("minimum", np.minimum, ("arith.minimumf", "arith.minsi", "arith.minui")),
    "<": ("lt", np.less, ("arith.cmpf olt,", "arith.cmpi slt,", "arith.cmpi ult,")),
    "<=": ("le", np.less_equal, ("arith.cmpf ole,", "arith.cmpi sle,", "arith.cmpi ule,")),
    ">": ("gt", np.greater, ("arith.cmpf ogt,", "arith.cmpi sgt,", "arith.cmpi ugt,")),
    ">=": ("ge", np.greater_equal, ("arith.cmpf oge,", "arith.cmpi sge,", "arith.cmpi uge,")),
    "==": ("eq", np.equal, ("arith.cmpf oeq,", "arith.cmpi eq,", "arith.cmpi eq,")),
    "!=": ("ne", np.not_equal, ("arith.cmpf une,", "arith.cmpi ne,", "arith.cmpi ne,")),
}
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
FLOAT_OPS = ["+", "-", "*", "/", "//", "%", "**", "max", "min", *COMPARISONS]
INT_OPS = ["+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>", "max", "min", *COMPARISONS]
BOOL_OPS = ["&", "|", "^", "==", "!="]
# Every op on every dtype with two vectors, and in one more mode (a literal or a scalar, on either side), taken in
# turn so that each op meets every mode (the int dtypes alone give it four) and each dtype too: a mode decides how an
# operand reaches the op and takes the dtype's type, the op and dtype what is computed; a device case is a build
BINARY_CASES = [pytest.param(op, dt, mode, id=f"{BINARY[op][0]}-{dtype_id(dt)}-{mode}")
                for dtypes, ops in ((FLOAT_DTYPES, FLOAT_OPS), (INT_DTYPES, INT_OPS), ([np.bool_], BOOL_OPS))
                for d, dt in enumerate(dtypes) for o, op in enumerate(ops)
                for mode in (MODES[0], MODES[1 + (o + d) % 4])]


@xetile.kernel
def binary_op(OP, a, b):
    """`a OP b`, inlined into the kernels that call it; the chain resolves at trace time."""
    if OP == "+":
        return a + b
    if OP == "-":
        return a - b
    if OP == "*":
        return a * b
    if OP == "/":
        return a / b
    if OP == "//":
        return a // b
    if OP == "%":
        return a % b
    if OP == "**":
        return a ** b
    if OP == "&":
        return a & b
    if OP == "|":
        return a | b
    if OP == "^":
        return a ^ b
    if OP == "<<":
        return a << b
    if OP == ">>":
        return a >> b
    if OP == "max":
        return xetile.maximum(a, b)
    if OP == "min":
        return xetile.minimum(a, b)
    if OP == "<":
        return a < b
    if OP == "<=":
        return a <= b
    if OP == ">":
        return a > b
    if OP == ">=":
        return a >= b
    if OP == "==":
        return a == b
    if OP == "!=":
        return a != b


@xetile.kernel
def binary_kernel(x, y, out, s, OP: xetile.constexpr, MODE: xetile.constexpr, LIT: xetile.constexpr,
                  BM: xetile.constexpr, BN: xetile.constexpr):
    """out = x OP y, x OP LIT, LIT OP x, x OP s or s OP x (s a runtime scalar argument), per MODE."""
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    a = xetile.load_tile(xetile.init_tile(x, [m, n], [BM, BN]))
    b = xetile.load_tile(xetile.init_tile(y, [m, n], [BM, BN]))
    if MODE == "vector":
        r = binary_op(OP, a, b)
    elif MODE == "literal_right":
        r = binary_op(OP, a, LIT)
    elif MODE == "literal_left":
        r = binary_op(OP, LIT, a)
    elif MODE == "scalar_right":
        r = binary_op(OP, a, s)
    else:
        r = binary_op(OP, s, a)
    xetile.store_tile(xetile.init_tile(out, [m, n], [BM, BN]), r)


def binary_dtypes(op, dtype):
    """(the dtype the op computes in, the result dtype) for two operands of `dtype`."""
    dtype = np.dtype(dtype)
    if op in COMPARISONS:
        return dtype, np.dtype(np.bool_)
    if op in ("/", "**") and kind_of(dtype) != "f":
        return np.dtype(np.float32), np.dtype(np.float32)
    return dtype, dtype


def binary_ir_op(op, compute) -> str:
    return BINARY[op][2][{"f": 0, "i": 1}.get(kind_of(compute), 2)]


def binary_reference(op, a, b, compute, result):
    """a op b with both converted to `compute`; float math in f32, rounded once to `result`."""
    compute, result = np.dtype(compute), np.dtype(result)
    a, b = np.asarray(a).astype(compute), np.asarray(b).astype(compute)
    if kind_of(compute) == "f":
        a, b = f32(a), f32(b)
    with np.errstate(all="ignore"):
        if op == "//" and kind_of(result) == "f":   # (a - fmod(a, b)) / b rounded to the whole number, op by op
            exact = f32(np.divide(f32(np.subtract(a, f32(np.fmod(a, b).astype(result))).astype(result)), b)
                        .astype(result))
            whole = np.floor(exact)
            return np.where(exact - whole > 0.5, whole + 1, whole).astype(result)
        return np.asarray(BINARY[op][1](a, b)).astype(result)


def binary_operands(rng, op, dtype):
    """(lhs, rhs) data for `lhs op rhs`: nonzero divisors, positive float bases for **, shifts below the
    width, full-range ints elsewhere (wrap-around), and equal pairs / the literal and scalar for comparisons."""
    dt = np.dtype(dtype)
    is_float = kind_of(dt) == "f"
    if op in ("/", "//", "%"):
        lhs = rand(rng, SHAPE, dt) if is_float else rand(rng, SHAPE, dt, -100, 100)
        return lhs, magnitude(rng, dt, 0.5, 4) if is_float else magnitude(rng, dt, 1, 9)
    if op == "**":
        if is_float:
            return rand(rng, SHAPE, dt, 0.5, 2), rand(rng, SHAPE, dt, -2, 2)
        return magnitude(rng, dt, 1, 4), rand(rng, SHAPE, dt, -3, 3)
    if op in ("<<", ">>"):
        return full_range(rng, dt), rand(rng, SHAPE, dt, 0, 8 * dt.itemsize - 1)
    lhs, rhs = full_range(rng, dt), full_range(rng, dt)
    if op in COMPARISONS and dt != np.bool_:
        kind = kind_of(dt)
        rhs.flat[::3] = lhs.flat[::3]
        for v, start in ((lhs, 1), (rhs, 2)):
            v.flat[start::7] = LITERAL[kind]
            v.flat[start + 3::7] = SCALAR[kind]
    return lhs, rhs


@pytest.mark.device_cover(2)   # the lowering follows the op and the dtype together
@pytest.mark.parametrize("op, dtype, mode", BINARY_CASES)
def test_binary_operator(rng, op, dtype, mode):
    check_binary_operator(rng, op, dtype, mode)


@pytest.mark.parametrize("op", ["+", "//", ">>", "max", "<"])
@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64], ids=dtype_id)
def test_wide_unsigned_dtypes(rng, op, dtype):
    """uint16/32/64 (the atomics' unsigned types) compute as unsigned: udiv, lshr, umax, ult."""
    check_binary_operator(rng, op, dtype, "vector")


def check_binary_operator(rng, op, dtype, mode):
    dt = np.dtype(dtype)
    lhs, rhs = binary_operands(rng, op, dt)
    x = rhs if mode.endswith("left") else lhs        # the vector takes the role its side of the operator needs
    lit, s = LITERAL[kind_of(dt)], dt.type(SCALAR[kind_of(dt)])
    compute, result = binary_dtypes(op, dt)
    out, ir = launch(binary_kernel, [x, rhs], result, s, OP=op, MODE=mode, LIT=lit)
    expected = binary_reference(op, *mode_operands(mode, x, rhs, lit, s), compute, result)
    if op == "**":
        assert_close(out, expected)                   # powf is not correctly rounded
    else:
        assert_exact(out, expected)                   # IEEE ops: exactly one rounding in the result type
    assert has_op(ir, binary_ir_op(op, compute), compute), ir


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32, np.float16], ids=dtype_id)
def test_division_and_remainder_follow_c(dtype):
    """`//` truncates toward zero and `%` takes the sign of the dividend (C, np.fmod), for ints and floats alike,
    so that a == (a // b) * b + a % b."""
    x = np.array([[-7, 7, -7, 7, 6, -6]], dtype)
    y = np.array([[2, 2, -2, -2, 3, 4]], dtype)
    for op, expected in (("//", [-3, 3, 3, -3, 2, -1]), ("%", [-1, 1, -1, 1, 0, -2])):
        out, _ = launch(binary_kernel, [x, y], dtype, 0, shape=x.shape, OP=op, MODE="vector", LIT=0)
        assert_exact(out, np.array([expected], dtype))
    if np.dtype(dtype) == np.float32:   # a / b rounds 1.0 / 0.1 to 10; fmod leaves 0.0999999: 9, as Python's
        a, b = np.array([[1.0, -2.0, 3.0]], dtype), np.array([[0.1, 0.2, -0.3]], dtype)
        quotient, _ = launch(binary_kernel, [a, b], dtype, 0, shape=a.shape, OP="//", MODE="vector", LIT=0)
        remainder, _ = launch(binary_kernel, [a, b], dtype, 0, shape=a.shape, OP="%", MODE="vector", LIT=0)
        assert_exact(quotient, np.array([[9, -9, -9]], dtype))
        np.testing.assert_allclose(quotient * b + remainder, a, rtol=1e-6)


def test_int_division_is_true_division_in_f32():
    x, y = np.array([[7, -7, 1]], np.int32), np.array([[2, 2, 3]], np.int32)
    out, ir = launch(binary_kernel, [x, y], np.float32, 0, shape=x.shape, OP="/", MODE="vector", LIT=0)
    assert_exact(out, np.array([[3.5, -3.5, np.float32(1) / np.float32(3)]], np.float32))
    assert "arith.sitofp" in ir and has_op(ir, "arith.divf", np.float32), ir


# ---- type promotion ------------------------------------------------------------------------------
PROMOTIONS = [  # x dtype, MODE, the other operand (a dtype for "vector", else a literal or runtime argument), result
    pytest.param(np.float16, "vector", ml_dtypes.bfloat16, np.float32, id="f16+bf16->f32"),
    pytest.param(ml_dtypes.bfloat16, "vector", np.float16, np.float32, id="bf16+f16->f32"),
    pytest.param(np.float16, "vector", np.float32, np.float32, id="f16+f32->f32"),
    pytest.param(np.int8, "vector", np.int32, np.int32, id="i8+i32->i32"),
    pytest.param(np.int16, "vector", np.int64, np.int64, id="i16+i64->i64"),
    pytest.param(np.int16, "vector", np.float16, np.float16, id="i16+f16->f16"),
    pytest.param(np.int32, "vector", np.float32, np.float32, id="i32+f32->f32"),
    pytest.param(np.uint8, "vector", ml_dtypes.bfloat16, ml_dtypes.bfloat16, id="u8+bf16->bf16"),
    pytest.param(np.uint8, "vector", np.int8, np.uint8, id="u8+i8->u8"),
    pytest.param(np.int8, "vector", np.uint8, np.uint8, id="i8+u8->u8"),
    pytest.param(np.uint8, "vector", np.int16, np.int16, id="u8+i16->i16"),
    pytest.param(np.int32, "vector", np.uint32, np.uint32, id="i32+u32->u32"),
    pytest.param(np.uint32, "vector", np.int64, np.int64, id="u32+i64->i64"),
    pytest.param(np.int8, "literal_right", 3, np.int8, id="i8+3->i8"),
    pytest.param(np.int8, "literal_left", 3, np.int8, id="3+i8->i8"),
    pytest.param(np.uint8, "literal_right", 3, np.uint8, id="u8+3->u8"),
    pytest.param(np.int8, "literal_right", 300, np.int32, id="i8+300->i32"),
    pytest.param(np.int32, "literal_right", 2**40, np.int64, id="i32+2**40->i64"),
    pytest.param(np.int32, "literal_right", 1.5, np.float32, id="i32+1.5->f32"),
    pytest.param(np.int8, "literal_left", 1.5, np.float32, id="1.5+i8->f32"),
    pytest.param(np.float16, "literal_right", 3, np.float16, id="f16+3->f16"),
    pytest.param(ml_dtypes.bfloat16, "literal_left", 1.5, ml_dtypes.bfloat16, id="1.5+bf16->bf16"),
    pytest.param(np.int8, "scalar_right", 3, np.int32, id="i8+int_arg->i32"),
    pytest.param(np.float16, "scalar_left", 1.5, np.float32, id="float_arg+f16->f32"),
    pytest.param(np.int16, "scalar_right", np.int8(3), np.int16, id="i16+int8_arg->i16"),
    pytest.param(np.int8, "scalar_right", np.int64(3), np.int64, id="i8+int64_arg->i64"),
]


@pytest.mark.parametrize("xdt,mode,other,result", PROMOTIONS)
def test_type_promotion(rng, xdt, mode, other, result):
    """Values chosen so that computing in a narrower type would overflow or round differently."""
    x = rand(rng, SHAPE, xdt, -120, 120)
    y = rand(rng, SHAPE, other, -120, 120) if mode == "vector" else x
    lit = other if mode.startswith("literal") else 0
    s = other if mode.startswith("scalar") else 0
    out, ir = launch(binary_kernel, [x, y], result, s, OP="+", MODE=mode, LIT=lit)
    assert_exact(out, binary_reference("+", *mode_operands(mode, x, y, lit, s), result, result))
    assert has_op(ir, binary_ir_op("+", result), result), ir


def test_mixed_half_precision_computes_in_f32():
    """f16 + bf16 adds in f32, keeping bits that f16 arithmetic rounds away."""
    x = np.full((1, 4), 1.0, np.float16)
    y = np.full((1, 4), 2.0**-12, ml_dtypes.bfloat16)
    out, _ = launch(binary_kernel, [x, y], np.float32, 0, shape=x.shape, OP="+", MODE="vector", LIT=0)
    assert_exact(out, np.full((1, 4), 1 + 2.0**-12, np.float32))
    half = np.full((1, 4), 2.0**-12, np.float16)
    out, _ = launch(binary_kernel, [x, half], np.float16, 0, shape=x.shape, OP="+", MODE="vector", LIT=0)
    assert_exact(out, np.full((1, 4), 1.0, np.float16))   # 1 + 2**-12 rounds to 1 in f16 (ulp 2**-10)


# ---- implicit broadcast ------------------------------------------------------------------------
@xetile.kernel
def broadcast_kernel(col, row, mat, out, CASE: xetile.constexpr, BM: xetile.constexpr, BN: xetile.constexpr):
    """col is [M, 1], row [1, N], mat [M, N]: the [BM, 1] and [1, BN] vectors broadcast implicitly."""
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    c = xetile.load_tile(xetile.init_tile(col, [m, 0], [BM, 1]))
    r = xetile.load_tile(xetile.init_tile(row, [0, n], [1, BN]))
    v = xetile.load_tile(xetile.init_tile(mat, [m, n], [BM, BN]))
    if CASE == "col+mat":
        res = c + v
    elif CASE == "mat*row":
        res = v * r
    elif CASE == "row-col":
        res = r - c
    else:
        res = xetile.where(c > 0, v, r)      # CASE == "where"
    xetile.store_tile(xetile.init_tile(out, [m, n], [BM, BN]), res)


BROADCASTS = {  # case: (numpy reference, [(broadcast dims, source shape, element type or None for the dtype)])
    "col+mat": (lambda c, r, v: c + v, [("[1]", (BM, 1), None)]),
    "mat*row": (lambda c, r, v: v * r, [("[0]", (1, BN), None)]),
    "row-col": (lambda c, r, v: r - c, [("[0]", (1, BN), None), ("[1]", (BM, 1), None)]),
    "where": (lambda c, r, v: np.where(c > 0, v, r), [("[1]", (BM, 1), "i1"), ("[0]", (1, BN), None)]),
}


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.int8, np.int32], ids=dtype_id)
@pytest.mark.parametrize("case", list(BROADCASTS))
def test_implicit_broadcast(rng, case, dtype):
    col, row, mat = (rand(rng, shape, dtype, -100, 100) for shape in ((M, 1), (1, N), SHAPE))
    out, ir = launch(broadcast_kernel, [col, row, mat], dtype, CASE=case)
    fn, expected_ops = BROADCASTS[case]
    with np.errstate(all="ignore"):
        expected = fn(*(f32(a) if kind_of(dtype) == "f" else a for a in (col, row, mat))).astype(dtype)
    assert_exact(out, expected)
    for dims, (h, w), elem in expected_ops:
        t = elem or mlir(dtype)
        tail = f" {dims} : vector<{h}x{w}x{t}> into vector<{BM}x{BN}x{t}>"
        assert re.search(r"= xetile\.tile_broadcast %\w+" + re.escape(tail), ir), (tail, ir)


@xetile.kernel
def bad_broadcast_kernel(x, out, BM: xetile.constexpr, BN: xetile.constexpr):
    a = xetile.load_tile(xetile.init_tile(x, [0, 0], [BM, 2]))
    b = xetile.load_tile(xetile.init_tile(out, [0, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [BM, BN]), a + b)


def test_broadcast_of_incompatible_shapes_is_an_error():
    x, out = np.zeros((M, 2), np.float32), np.zeros(SHAPE, np.float32)
    with pytest.raises(xetile.CompilationError,
                       match=rf"vector shapes \({BM}, 2\) and \({BM}, {BN}\) are not compatible"):
        bad_broadcast_kernel[(1,)](x, out, BM=BM, BN=BN)


# ---- unary operators and math functions ------------------------------------------------------------
def sigmoid(v):
    return 1 / (1 + np.exp(-v))


erf = np.vectorize(math.erf, otypes=[np.float64])
FLOAT_MATH = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "sqrt": np.sqrt,
              "rsqrt": lambda v: 1 / np.sqrt(v), "tanh": np.tanh}
TOOLBOX_MATH = {"sin": np.sin, "cos": np.cos, "erf": erf, "sigmoid": sigmoid, "floor": np.floor, "ceil": np.ceil,
                "log2": np.log2}  # each on the floats and one integer type (ints compute in f32 alike)
FLOAT_MATH.update(TOOLBOX_MATH)
POSITIVE_ONLY = ("log", "log2", "sqrt", "rsqrt")
UNARY_CASES = (  # function, dtypes it takes
    [("neg", dt) for dt in FLOAT_DTYPES + INT_DTYPES] + [("invert", dt) for dt in INT_DTYPES + [np.bool_]]
    + [(fn, dt) for fn in FLOAT_MATH if fn not in TOOLBOX_MATH for dt in FLOAT_DTYPES + INT_DTYPES]
    + [(fn, dt) for fn in TOOLBOX_MATH for dt in FLOAT_DTYPES + [np.int32]]
    + [(fn, dt) for fn in ["abs", "builtin_abs"] for dt in FLOAT_DTYPES + INT_DTYPES])


@xetile.kernel
def unary_fn(FN, a):
    if FN == "neg":
        return -a
    if FN == "invert":
        return ~a
    if FN == "exp":
        return xetile.exp(a)
    if FN == "exp2":
        return xetile.exp2(a)
    if FN == "log":
        return xetile.log(a)
    if FN == "log2":
        return xetile.log2(a)
    if FN == "sqrt":
        return xetile.sqrt(a)
    if FN == "rsqrt":
        return xetile.rsqrt(a)
    if FN == "tanh":
        return xetile.tanh(a)
    if FN == "sin":
        return xetile.sin(a)
    if FN == "cos":
        return xetile.cos(a)
    if FN == "erf":
        return xetile.erf(a)
    if FN == "sigmoid":
        return xetile.sigmoid(a)
    if FN == "floor":
        return xetile.floor(a)
    if FN == "ceil":
        return xetile.ceil(a)
    if FN == "abs":
        return xetile.abs(a)
    if FN == "builtin_abs":
        return abs(a)


@xetile.kernel
def unary_kernel(x, out, FN: xetile.constexpr, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    a = xetile.load_tile(xetile.init_tile(x, [m, n], [BM, BN]))
    xetile.store_tile(xetile.init_tile(out, [m, n], [BM, BN]), unary_fn(FN, a))


def unary_ir_op(fn, dtype):
    """(IR op, the dtype it computes in) of fn on `dtype`; op None means no op (abs of an unsigned)."""
    kind = kind_of(dtype)
    if fn in FLOAT_MATH:
        return f"math.{fn}", dtype if kind == "f" else np.float32
    if fn == "neg":
        return ("arith.negf" if kind == "f" else "arith.subi"), dtype
    if fn == "invert":
        return "arith.xori", dtype
    return {"f": "math.absf", "i": "math.absi", "u": None}[kind], dtype


@pytest.mark.device_cover(2)   # the lowering follows the op and the dtype together
@pytest.mark.parametrize("fn,dtype", [pytest.param(fn, dt, id=f"{fn}-{dtype_id(dt)}") for fn, dt in UNARY_CASES])
def test_unary(rng, fn, dtype):
    """-x and ~x keep the dtype (ints wrap); math functions on ints compute in f32; abs on ints stays int."""
    kind = kind_of(dtype)
    if fn in POSITIVE_ONLY:
        x = rand(rng, SHAPE, dtype, 0.25, 4) if kind == "f" else rand(rng, SHAPE, dtype, 1, 100)
    elif fn in FLOAT_MATH:
        x = rand(rng, SHAPE, dtype, -4, 4)
    else:
        x = full_range(rng, dtype)
    op, compute = unary_ir_op(fn, dtype)
    out, ir = launch(unary_kernel, [x], compute, FN=fn)
    with np.errstate(all="ignore"):
        if fn in FLOAT_MATH:
            expected = FLOAT_MATH[fn](f32(x)).astype(compute)
        else:
            ref = {"neg": np.negative, "invert": np.invert}.get(fn, np.abs)
            expected = ref(f32(x)).astype(dtype) if kind == "f" else ref(x)
    if fn in FLOAT_MATH:
        assert_close(out, expected)
    else:
        assert_exact(out, expected)
    if op is None:
        assert "math.abs" not in ir, ir
    else:
        assert has_op(ir, op, compute), ir


# ---- fma (ternary) -----------------------------------------------------------------------------------
@xetile.kernel
def fma_kernel(x, y, z, out, s, MODE: xetile.constexpr, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    a = xetile.load_tile(xetile.init_tile(x, [m, n], [BM, BN]))
    b = xetile.load_tile(xetile.init_tile(y, [m, n], [BM, BN]))
    c = xetile.load_tile(xetile.init_tile(z, [m, n], [BM, BN]))
    if MODE == "vectors":
        r = xetile.fma(a, b, c)
    else:  # a runtime scalar and a literal, of the vector's type
        r = xetile.fma(a, s, 1.5)
    xetile.store_tile(xetile.init_tile(out, [m, n], [BM, BN]), r)


def fma_reference(a, b, c, dtype):
    """a * b + c rounded once to f32 (the f32 product is exact in f64), then to `dtype`."""
    wide = [np.asarray(v).astype(np.float32).astype(np.float64) for v in (a, b, c)]
    return (wide[0] * wide[1] + wide[2]).astype(np.float32).astype(dtype)


@pytest.mark.parametrize("mode", ["vectors", "scalar_literal"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [np.int32], ids=dtype_id)
def test_fma(rng, dtype, mode):
    """xetile.fma on vectors of each float type (ints compute in f32) and on a scalar and a literal."""
    x, y, z = (rand(rng, SHAPE, dtype) for _ in range(3))
    compute = dtype if kind_of(dtype) == "f" else np.float32
    scalar = np.dtype(dtype).type(2)  # the vectors' dtype: the result keeps it (ints: f32)
    out, ir = launch(fma_kernel, [x, y, z], compute, scalar, MODE=mode)
    b, c = (y, z) if mode == "vectors" else (scalar, 1.5)
    assert_close(out, fma_reference(x, b, c, compute))
    assert has_op(ir, "math.fma", compute), ir


def test_fma_rounds_once():
    """(1 + 2**-12)**2 - (1 + 2**-11) is 2**-24 with one rounding and 0 with two (the product rounds to 1 + 2**-11
    in f32): the fma is fused in the interpreter and on the device."""
    a = np.full(SHAPE, 1 + 2**-12, np.float32)
    c = np.full(SHAPE, -(1 + 2**-11), np.float32)
    assert (a * a + c == 0).all()  # two roundings
    out, _ = launch(fma_kernel, [a, a, c], np.float32, np.float32(0), MODE="vectors")
    np.testing.assert_array_equal(out, np.float32(2**-24))


# ---- where -------------------------------------------------------------------------------------------
@xetile.kernel
def where_kernel(c, x, y, out, flag, MODE: xetile.constexpr, LIT: xetile.constexpr,
                 BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    cond = xetile.load_tile(xetile.init_tile(c, [m, n], [BM, BN]))
    a = xetile.load_tile(xetile.init_tile(x, [m, n], [BM, BN]))
    b = xetile.load_tile(xetile.init_tile(y, [m, n], [BM, BN]))
    if MODE == "vector":
        r = xetile.where(cond, a, b)
    elif MODE == "literal_true":
        r = xetile.where(cond, LIT, b)
    elif MODE == "literal_false":
        r = xetile.where(cond, a, LIT)
    elif MODE == "scalar":
        r = xetile.where(flag, a, b)
    elif MODE == "compare":
        r = xetile.where(a > b, a, b)
    else:
        r = xetile.where(a, a, b)          # a non-bool condition means a != 0
    xetile.store_tile(xetile.init_tile(out, [m, n], [BM, BN]), r)


WHERE_MODES = ["vector", "literal_true", "literal_false", "scalar_true", "scalar_false", "compare", "nonbool_cond"]


@pytest.mark.parametrize("mode", WHERE_MODES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_where(rng, dtype, mode):
    cond = rng.random(SHAPE) < 0.5
    x, y = full_range(rng, dtype), full_range(rng, dtype)
    x.flat[::4] = 0
    lit = LITERAL[kind_of(dtype)]
    flag = mode == "scalar_true"
    out, ir = launch(where_kernel, [cond, x, y], dtype, flag, MODE="scalar" if mode.startswith("scalar") else mode,
                     LIT=lit)
    c, a, b = {"vector": (cond, x, y), "literal_true": (cond, lit, y), "literal_false": (cond, x, lit),
               "scalar_true": (True, x, y), "scalar_false": (False, x, y), "compare": (x > y, x, y),
               "nonbool_cond": (x != 0, x, y)}[mode]
    assert_exact(out, np.where(c, np.asarray(a).astype(dtype), np.asarray(b).astype(dtype)).astype(dtype))
    assert re.search(rf"= arith\.select [^\n]*: (i1|vector<{BM}x{BN}xi1>), vector<{BM}x{BN}x{mlir(dtype)}>", ir), ir
    if mode.startswith("scalar"):   # the scalar condition selects directly or is splat first
        assert re.search(r"= (arith\.select %flag, |vector\.broadcast %flag : i1 to )", ir), ir


@xetile.kernel
def where_literals_kernel(c, out, T: xetile.constexpr, F: xetile.constexpr,
                          BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    cond = xetile.load_tile(xetile.init_tile(c, [m, n], [BM, BN]))
    xetile.store_tile(xetile.init_tile(out, [m, n], [BM, BN]), xetile.where(cond, T, F))


@pytest.mark.parametrize("t,f,result", [(2, -1, np.int32), (1.5, 0, np.float32), (True, False, np.bool_)],
                         ids=["ints->i32", "float,int->f32", "bools->i1"])
def test_where_with_two_literal_branches(rng, t, f, result):
    """Both branches literals: the vector's shape comes from the condition, the dtype from the literals."""
    cond = rng.random(SHAPE) < 0.5
    out, ir = launch(where_literals_kernel, [cond], result, T=t, F=f)
    assert_exact(out, np.where(cond, t, f).astype(result))
    assert "arith.select" in ir and f"vector<{BM}x{BN}x{mlir(result)}>" in ir, ir


# ---- casts -------------------------------------------------------------------------------------------
@xetile.kernel
def cast_kernel(x, out, DST: xetile.constexpr, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    r = xetile.load_tile(xetile.init_tile(x, [m, n], [BM, BN])).to(DST)
    assert r.dtype == DST, "v.to(dtype) has that dtype"
    xetile.store_tile(xetile.init_tile(out, [m, n], [BM, BN]), r)


def value_range(dtype):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return np.iinfo(dt).min, np.iinfo(dt).max
    return (0, 1) if dt == np.bool_ else (-100, 100)


def cast_input(rng, src, dst):
    """Values of `src` that `dst` can hold (within +-100 unless both are ints: then any, to see wrap-around),
    with fractions for float sources and zeros for bool destinations."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == np.bool_:
        return rng.random(SHAPE) < 0.5
    if src.kind in "iu" and dst.kind in "iu":
        return full_range(rng, src)
    (slo, shi), (dlo, dhi) = value_range(src), value_range(dst)
    lo, hi = max(slo, dlo, -100), min(shi, dhi, 100)
    if dst == np.bool_:
        lo, hi = max(slo, -100), min(shi, 100)
    x = rand(rng, SHAPE, src, lo, hi)
    x.flat[::4] = 0
    return x


def cast_reference(x, dst):
    dst = np.dtype(dst)
    if dst == np.bool_:
        return x != 0
    if kind_of(x.dtype) == "f" and dst.kind in "iu":
        return np.trunc(f32(x)).astype(dst)          # toward zero
    if kind_of(dst) == "f":
        return f32(x).astype(dst)                    # exact for these ints; f16 <-> bf16 through f32
    return x.astype(dst)                             # ints wrap (two's complement)


@pytest.mark.device_cover(2)   # each pair of types has a conversion of its own
@pytest.mark.parametrize("dst", ALL_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("src", ALL_DTYPES, ids=dtype_id)
def test_cast_between_all_dtypes(rng, src, dst):
    x = cast_input(rng, src, dst)
    out, _ = launch(cast_kernel, [x], dst, DST=XETILE_DTYPE[np.dtype(dst)])
    assert_exact(out, cast_reference(x, dst))


CAST_OPS = [  # src, dst, the IR ops of x.to(dst), in order
    (np.float16, np.float32, ["arith.extf"]), (np.float32, ml_dtypes.bfloat16, ["arith.truncf"]),
    (np.float16, ml_dtypes.bfloat16, ["arith.extf", "arith.truncf"]), (np.int8, np.float32, ["arith.sitofp"]),
    (np.uint8, np.float16, ["arith.uitofp"]), (np.float32, np.int32, ["arith.fptosi"]),
    (ml_dtypes.bfloat16, np.uint8, ["arith.fptoui"]), (np.int8, np.int64, ["arith.extsi"]),
    (np.uint8, np.int32, ["arith.extui"]), (np.int32, np.int8, ["arith.trunci"]),
    (np.int8, np.uint8, ["arith.bitcast"]), (np.int32, np.bool_, ["arith.cmpi ne,"]),
    (np.float32, np.bool_, ["arith.cmpf une,"]),
    (np.bool_, np.int32, ["arith.extui"]), (np.bool_, np.float32, ["arith.uitofp"]), (np.int16, np.int16, []),
]


@pytest.mark.parametrize("src,dst,ops", CAST_OPS, ids=[f"{dtype_id(s)}->{dtype_id(d)}" for s, d, _ in CAST_OPS])
def test_cast_ir(src, dst, ops):
    x = np.zeros((4, 4), src)
    ir = cast_kernel.warmup(x, np.zeros((4, 4), dst), DST=XETILE_DTYPE[np.dtype(dst)], BM=BM, BN=BN).asm["xetile"]
    found = re.findall(r"= (arith\.(?:extf|truncf|sitofp|uitofp|fptosi|fptoui|extsi|extui|trunci|bitcast)|"
                       r"arith\.cmp[if] \w+,) [^\n]*vector", ir)
    assert found == ops, ir


# ---- full and zeros --------------------------------------------------------------------------------
@xetile.kernel
def fill_kernel(out, s, MODE: xetile.constexpr, VALUE: xetile.constexpr, DT: xetile.constexpr,
                BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    if MODE == "full":
        v = xetile.full([BM, BN], VALUE, DT)
    elif MODE == "full_scalar_arg":
        v = xetile.full([BM, BN], s, DT)
    elif MODE == "zeros":
        v = xetile.zeros([BM, BN], DT)
    elif MODE == "full_default_dtype":
        v = xetile.full([BM, BN], VALUE)
    else:
        v = xetile.zeros([BM, BN])
    assert v.dtype == DT, "the vector has the requested dtype"
    xetile.store_tile(xetile.init_tile(out, [m, n], [BM, BN]), v)


FILL_VALUE = {np.float16: 1.5, ml_dtypes.bfloat16: -2.5, np.float32: 3.25, np.int8: -3, np.uint8: 200,
              np.int16: -1234, np.int32: 2**31 - 1, np.int64: 2**40 + 1, np.bool_: True}


@pytest.mark.parametrize("mode", ["full", "full_scalar_arg", "zeros"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=dtype_id)
def test_full_and_zeros(dtype, mode):
    """The runtime scalar argument is a Python number (i32, i64, f32 or i1) converted to the dtype."""
    value = 0 if mode == "zeros" else FILL_VALUE[dtype]
    out, ir = launch(fill_kernel, [], dtype, FILL_VALUE[dtype], MODE=mode, VALUE=FILL_VALUE[dtype],
                     DT=XETILE_DTYPE[np.dtype(dtype)])
    assert_exact(out, np.full(SHAPE, value, dtype))
    op = "vector.broadcast" if mode == "full_scalar_arg" else "arith.constant"
    assert re.search(rf"= {op} [^\n]*vector<{BM}x{BN}x{mlir(dtype)}>", ir), ir


@pytest.mark.parametrize("mode,value", [("full_default_dtype", 2.5), ("full_default_dtype", 7), ("zeros_default", 0)])
def test_full_and_zeros_default_to_float32(mode, value):
    out, ir = launch(fill_kernel, [], np.float32, 0, MODE=mode, VALUE=value, DT=xetile.float32)
    assert_exact(out, np.full(SHAPE, value, np.float32))
    assert f"arith.constant dense<{float(value):e}> : vector<{BM}x{BN}xf32>" in ir, ir
