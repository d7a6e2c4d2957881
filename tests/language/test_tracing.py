"""Tracing Python control flow: real loops (scf.for), conditionals (scf.if), unrolling, constexpr branches,
early return, helper kernels, and how the IR shows each."""
import re

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, rand

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)


def ir_of(kern, *args, **kwargs) -> str:
    return kern.warmup(*args, **kwargs).asm["xetile"]


@xetile.kernel
def row_sum(x, out, N, BN: xetile.constexpr):
    """Sums each 8-row block of x over its columns with a runtime loop; acc is loop-carried."""
    m = xetile.program_id(0) * 8
    t = xetile.init_tile(x, [m, 0], [8, BN])
    acc = xetile.zeros([8, 1], xetile.float32)
    for k in range(0, N, BN):
        acc = acc + xetile.tile_reduce("add", xetile.load_tile(t), [1])
        t = xetile.update_tile_offset(t, [0, BN])
    xetile.store_tile(xetile.init_tile(out, [m, 0], [8, 1]), acc)


@pytest.mark.parametrize("n", [1, 16, 50, 129])
def test_runtime_loop_carries_tile_and_accumulator(rng, n):
    x = rand(rng, (20, n), np.float32)
    out = np.zeros((20, 1), np.float32)
    row_sum[(3,)](x, out, n, BN=16)
    assert_close(out, x.sum(1, keepdims=True), scale=10)


def test_runtime_loop_is_one_scf_for_not_unrolled():
    x = np.zeros((8, 64), np.float32)
    text = ir_of(row_sum, x, np.zeros((8, 1), np.float32), 64, BN=16)
    assert text.count("scf.for") == 1
    assert text.count("xetile.load_tile") == 1
    assert "iter_args(%acc = %" in text and "%t = %" in text
    assert "-> (vector<8x1xf32>, !xetile.tile<8x16xf32>) : i32 {" in text


@xetile.kernel
def count_loop(out, lo, hi, step, START: xetile.constexpr):
    """A Python number the loop reassigns becomes a loop-carried i32."""
    s = START
    n = 0
    for i in range(lo, hi, step):
        s = s + i
        n += 1
    first = xetile.init_tile(out, [0, 0], [1, 1])
    second = xetile.init_tile(out, [0, 1], [1, 1])
    xetile.store_tile(first, xetile.full([1, 1], s, xetile.int32))
    xetile.store_tile(second, xetile.full([1, 1], n, xetile.int32))


@pytest.mark.parametrize("lo,hi,step", [(0, 10, 1), (3, 17, 4), (5, 5, 1), (9, 2, 1), (-6, 6, 5)])
def test_python_number_becomes_loop_carried_value(lo, hi, step):
    out = np.zeros((1, 2), np.int32)
    count_loop[(1,)](out, lo, hi, step, START=100)
    values = list(range(lo, hi, step))
    assert out.tolist() == [[100 + sum(values), len(values)]]


@xetile.kernel
def nested_loops(x, out, M, N):
    """Two nested runtime loops; the inner loop's bound depends on the outer variable."""
    total = xetile.zeros([1, 1], xetile.float32)
    for i in range(0, M):
        for j in range(0, i + 1):
            if j < N:
                total = total + xetile.load_tile(xetile.init_tile(x, [i, j], [1, 1]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 1]), total)


def test_nested_loops_with_conditional_sum_lower_triangle(rng):
    x = rand(rng, (7, 5), np.float32)
    out = np.zeros((1, 1), np.float32)
    nested_loops[(1,)](x, out, 7, 5)
    assert_close(out[0, 0], np.tril(x).sum(), scale=10)
    text = ir_of(nested_loops, x, out, 7, 5)
    assert text.count("scf.for") == 2 and text.count("scf.if") == 1


@xetile.kernel
def unrolled(x, out, STEPS: xetile.constexpr):
    """static_range unrolls: i is a Python int, so the tile offsets are constants."""
    acc = xetile.zeros([4, 4], xetile.float32)
    for i in xetile.static_range(STEPS):
        acc = acc + xetile.load_tile(xetile.init_tile(x, [0, 4 * i], [4, 4])) * (i + 1)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [4, 4]), acc)


def test_static_range_unrolls(rng):
    x = rand(rng, (4, 12), np.float32)
    out = np.zeros((4, 4), np.float32)
    unrolled[(1,)](x, out, STEPS=3)
    expected = sum(x[:, 4 * i:4 * i + 4] * (i + 1) for i in range(3))
    assert_close(out, expected)
    text = ir_of(unrolled, x, out, STEPS=3)
    assert "scf.for" not in text and text.count("xetile.load_tile") == 3


@xetile.kernel
def branchy(x, out, threshold, MODE: xetile.constexpr):
    """A constexpr branch resolves at trace time; a runtime scalar branch becomes scf.if with a result."""
    t = xetile.init_tile(x, [0, 0], [8, 8])
    v = xetile.load_tile(t)
    if MODE == "double":
        v = v * 2
    else:
        v = v + 1
    s = xetile.tile_reduce("add", xetile.tile_reduce("add", v, 1), 0)
    if threshold > 0:
        v = v - threshold
    elif threshold < -5:
        v = v * 0
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), v + s * 0)


@pytest.mark.parametrize("mode", ["double", "inc"])
@pytest.mark.parametrize("threshold", [3, 0, -9])
def test_constexpr_and_runtime_branches(rng, mode, threshold):
    x = rand(rng, (8, 8), np.float32)
    out = np.zeros((8, 8), np.float32)
    branchy[(1,)](x, out, threshold, MODE=mode)
    v = x * 2 if mode == "double" else x + 1
    expected = v - threshold if threshold > 0 else v * 0 if threshold < -5 else v
    assert_close(out, expected)


def test_branch_ir_shape():
    x = np.zeros((8, 8), np.float32)
    text = ir_of(branchy, x, x.copy(), 1, MODE="double")
    assert "arith.mulf" in text and "arith.addf" not in text.split("scf.if")[0]
    assert text.count("scf.if") == 2  # the elif nests a second scf.if in the else region
    assert "-> (vector<8x8xf32>) {" in text and "} else {" in text


@xetile.kernel
def early_exit(x, out, M, BM: xetile.constexpr):
    """`if ...: return` at the top level: the rest of the kernel becomes the else branch."""
    m = xetile.program_id(0) * BM
    if m >= M:
        return
    t = xetile.init_tile(out, [m, 0], [BM, 4])
    xetile.store_tile(t, xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, 4])) + 1)


def test_early_return_skips_workgroups(rng):
    x = rand(rng, (10, 4), np.float32)
    out = np.full((10, 4), -7.0, np.float32)
    early_exit[(6,)](x, out, 10, BM=4)
    assert_close(out, x + 1)
    text = ir_of(early_exit, x, out, 10, BM=4)
    assert "scf.if" in text and "} else {" in text


@xetile.kernel
def scale_tile(v, factor):
    """A helper kernel called from another kernel is traced in place and may return a value."""
    return v * factor + 0


@xetile.kernel
def uses_helper(x, out, f):
    t = xetile.init_tile(x, [0, 0], [4, 8])
    xetile.store_tile(xetile.init_tile(out, [0, 0], [4, 8]), scale_tile(xetile.load_tile(t), factor=f))


def test_kernel_calls_another_kernel_inline(rng):
    x = rand(rng, (4, 8), np.float32)
    out = np.zeros((4, 8), np.float32)
    uses_helper[(1,)](x, out, 2.5)
    assert_close(out, x * 2.5)
    assert "func.call" not in ir_of(uses_helper, x, out, 2.5)


@xetile.kernel
def python_expressions(out, N, BM: xetile.constexpr):
    """Compile-time arithmetic, tuples, ternaries, min/max on constexprs; runtime min/max/abs/cdiv."""
    rows, cols = BM // 2, max(BM, 4)
    shape = [rows, cols]
    sign = -1 if BM > 4 else 1
    blocks = xetile.cdiv(N, BM)
    v = xetile.full(shape, 1, xetile.int32) * min(blocks, 100) + abs(N - 100) * sign + max(N, 0)
    xetile.store_tile(xetile.init_tile(out, [0, 0], shape), v)


def test_python_expressions_and_builtins():
    out = np.zeros((4, 8), np.int32)
    python_expressions[(1,)](out, 37, BM=8)
    expected = min(-(-37 // 8), 100) + abs(37 - 100) * -1 + 37
    assert (out == expected).all()


@xetile.kernel
def while_constexpr(out, N: xetile.constexpr):
    """`while` on compile-time values runs at trace time."""
    i = 0
    total = 0
    while i < N:
        total += i
        i += 1
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 1]), xetile.full([1, 1], total, xetile.int32))


def test_while_on_constexpr_runs_at_trace_time():
    out = np.zeros((1, 1), np.int32)
    while_constexpr[(1,)](out, N=6)
    assert out[0, 0] == 15


@xetile.kernel
def ping(v, n: xetile.constexpr):
    return pong(v, n)


@xetile.kernel
def pong(v, n: xetile.constexpr):
    return ping(v, n) if n > 0 else v


@xetile.kernel
def calls_ping(out):
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 1]), ping(xetile.zeros([1, 1], xetile.float32), 1))


def test_recursive_helper_kernels_name_the_chain():
    """Helpers are inlined, so a cycle would trace forever (a RecursionError): it is refused with the chain."""
    with pytest.raises(xetile.CompilationError, match=r"test_tracing.py:\d+: recursive kernel call ping -> pong -> "
                                                      "ping: kernels are inlined where they are called"):
        calls_ping[(1,)](np.zeros((1, 1), np.float32))


@xetile.kernel
def long_static_range(out, N: xetile.constexpr):
    for i in xetile.static_range(N):
        pass
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 1]), xetile.full([1, 1], 1, xetile.int32))


def test_static_range_is_capped_like_while():
    out = np.zeros((1, 1), np.int32)
    long_static_range[(1,)](out, N=4096)               # the cap itself unrolls
    assert out[0, 0] == 1
    with pytest.raises(xetile.CompilationError, match=r"test_tracing.py:\d+: static_range unrolls 100000 "
                                                      "iterations, more than the cap of 4096; use `for ... in "
                                                      r"range\(...\)` for a runtime loop"):
        long_static_range[(1,)](out, N=100_000)


ROWS, ZERO, WIDTH = np.int64(2), np.int32(0), np.uint16(4)  # numpy integers count as Python ints


@xetile.kernel
def numpy_int_shapes(x, out):
    t = xetile.load_tile(xetile.init_tile(x, [ROWS, ZERO], [ROWS, WIDTH]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [ROWS, 4]), t)


def test_numpy_integer_globals_as_tile_shapes_and_offsets(rng):
    x, out = rand(rng, (4, 4), np.float32), np.zeros((2, 4), np.float32)
    numpy_int_shapes[(1,)](x, out)
    assert_close(out, x[2:])


@xetile.kernel
def countdown(out, STEP: xetile.constexpr):
    """A loop with a constant step: negative steps count down like Python's range."""
    n = 0
    for i in range(10, 0, STEP):
        n = n * 10 + i
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), xetile.zeros([1, 16], xetile.int64) + n)


def test_constant_negative_step_counts_down():
    """The loop rule (ForOp): range(10, 0, -3) runs i = 10, 7, 4, 1, on every device (was rejected)."""
    out = np.zeros((1, 16), np.int64)
    countdown[(1,)](out, STEP=-3)
    assert (out == 10741).all()


def test_constant_zero_step_is_rejected():
    with pytest.raises(xetile.CompilationError, match=r"test_tracing.py:\d+: range step must not be zero"):
        countdown[(1,)](np.zeros((1, 16), np.int64), STEP=0)


@xetile.kernel
def adds_an_array(x, out, n):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16]), v + n)


def test_array_used_as_a_number_is_a_compilation_error():
    """Fuzzer case (bad inputs): an array passed where the kernel adds a number is refused with the rule."""
    x, out = np.ones((8, 16), np.float32), np.zeros((8, 16), np.float32)
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "expected a number or a vector, got memref<?x?xf32, strided<[?, 1]>> (arrays are the bases of "
            "init_tile and of `array + integer offsets`, tiles are read with load_tile)")):
        adds_an_array[(1,)](x, out, x)
    assert (out == 0).all()


@xetile.kernel
def flagged_store(out, n, FLAG: xetile.constexpr, ALWAYS: xetile.constexpr):
    value = xetile.full([1, 16], 1.0, xetile.float32)
    if FLAG and n > 0:
        value = value + 1.0
    if ALWAYS or n > 2:
        value = value * 3.0
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), value)


@pytest.mark.parametrize("flag, always, n, expected", [(True, False, 1, 2.0), (True, False, 0, 1.0),
                                                       (True, False, 3, 6.0), (False, False, 1, 1.0),
                                                       (True, True, 0, 3.0)])
def test_a_constexpr_that_does_not_decide_and_or_or_leaves_the_runtime_condition(flag, always, n, expected):
    """`FLAG and n > 0` with FLAG True is `n > 0`, `ALWAYS or n > 2` with ALWAYS False is `n > 2`: the runtime
    comparison alone in the scf.if, no and/or with a constant; a deciding constexpr leaves no branch at all."""
    out = np.zeros((1, 16), np.float32)
    flagged_store[(1,)](out, n, FLAG=flag, ALWAYS=always)
    np.testing.assert_array_equal(out, expected)
    text = ir_of(flagged_store, out, n, FLAG=flag, ALWAYS=always)
    assert "arith.andi" not in text and "arith.ori" not in text
    assert text.count("scf.if") == int(flag) + int(not always)
