"""`break`, `continue` and `return` inside loops, nested ifs and called kernels: lowered at trace time to flags
that scf.if results merge and loops carry (compiler/tracer.py), so a `for` with a `break` is an scf.while (an
scf.for where the `break` is dead at trace time).

Each kernel runs in the numpy interpreter on the XeTile IR (checked against numpy), at every lowered level of both CPU
targets and as their SPIR-V on opencl:cpu (checked against the XeTile IR's result bit for bit: fuzz/levels.run_levels),
and builds for xe-hpc and xe2 (ocloc's ISA where it is installed)."""
import numpy as np
import pytest

import xetile_jit as xetile
from every_level import run_everywhere
from spirv_tools import disassemble
from xetile_jit.codegen.backends import lower_to_llvm
from xetile_jit.codegen.spirv import emit_spirv
from xetile_jit.compiler.pipeline import lower
from xetile_jit.errors import CompilationError
from xetile_jit.ir.parser import parse_func
from xetile_jit.ir.printer import print_func
from xetile_jit.target.targets import get_target
from xetile_jit.toolchain import ocloc

ROWS = xetile.Layout(sg_layout=[2, 1], sg_data=[4, 16])   # an 8 x 16 block: two subgroups of four rows


# ---- break and continue -----------------------------------------------------------------------------------------
@xetile.kernel
def doublings(counts, x, y, n):
    """Workgroup p's rows double and add i for i < n, stopping at counts[p] and skipping every i % 3 == 1."""
    p = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [p * 8, 0], [8, 16], layout=ROWS))
    for i in range(n):
        if i >= counts[p]:
            break
        if i % 3 == 1:
            continue
        v = v * 2 + i
    xetile.store_tile(xetile.init_tile(y, [p * 8, 0], [8, 16], layout=ROWS), v)


def expected_doublings(counts, x, n):
    out = x.copy()
    for p, count in enumerate(counts):
        for i in range(n):
            if i >= count:
                break
            if i % 3 != 1:
                out[p * 8:(p + 1) * 8] = out[p * 8:(p + 1) * 8] * 2 + i
    return out


def test_for_with_break_on_a_count_read_from_memory_and_continue(rng):
    counts = np.array([0, 2, 5, 9], np.int32)
    x = rng.integers(-50, 50, (32, 16), dtype=np.int32)
    out = run_everywhere(doublings, {"counts": counts, "x": x, "y": np.zeros_like(x)}, (4,), 7)
    np.testing.assert_array_equal(out["y"], expected_doublings(counts, x, 7))
    assert (out["y"][:8] == x[:8]).all() and (out["y"][24:] != x[24:]).all()


@xetile.kernel
def halved_then_row(x, counts, out):
    """A loop left by a `break` and stepping by a `continue`, then a store of a partial row ([1, 13] of a block of
    16) after it."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [2, 8]))
    for i in range(5):
        if i >= counts[0]:
            break
        if i % 3 == 1:
            continue
        v = v * 0.5
    xetile.store_tile(xetile.init_tile(out, [0, 0], [2, 8]), v)
    xetile.store_tile(xetile.init_tile(out, [2, 0], [1, 13]), xetile.full([1, 13], 7.0, xetile.float32))


def halved_then_row_arrays() -> dict:
    return {"x": np.ones((2, 8), np.float32), "counts": np.array([3], np.int32), "out": np.zeros((3, 16), np.float32)}


def test_a_partial_row_stored_after_a_loop_with_break_and_continue():
    out = run_everywhere(halved_then_row, halved_then_row_arrays(), (1,))
    assert (out["out"][2, :13] == 7).all() and (out["out"][:2, :8] == 0.25).all()


@pytest.mark.parametrize("target, hinted", [("cpu", True), ("xe-emulated", True), ("xe2", False)])
def test_the_cpu_targets_keep_the_driver_from_unrolling_a_loop_with_a_break(target, hinted):
    """CpuLowering.while_loop_hints: unrolled by its bound, the loop above made the OpenCL CPU compiler run the kernel
    unvectorized (every work-item as lane 0: one element of the row stored). GPU compilers decide for themselves."""
    func = halved_then_row.warmup(*halved_then_row_arrays().values(), device="numpy").func
    module, llir = lower_to_llvm(lower(func, target=target)["xegpu-simt"], get_target(target))
    assert llir.count('!{ !"llvm.loop.unroll.disable" }') == hinted
    assert disassemble(emit_spirv(module)).count("OpLoopMerge %while_end ") == hinted


@xetile.kernel
def collatz_steps(starts, out):
    """The Collatz steps from starts[p] down to 1: `while True` left by a `break`, halving under a `continue`."""
    p = xetile.program_id(0)
    n = starts[p]
    steps = 0
    while True:
        if n == 1:
            break
        steps += 1
        if n % 2 == 0:
            n = n // 2
            continue
        n = 3 * n + 1
    xetile.store_tile(xetile.init_tile(out, [p, 0], [1, 16]), xetile.full([1, 16], steps, xetile.int32))


def test_while_true_with_break_and_continue():
    starts = np.array([1, 2, 3, 7, 27], np.int32)
    out = run_everywhere(collatz_steps, {"starts": starts, "out": np.zeros((5, 16), np.int32)}, (5,))
    assert out["out"][:, 0].tolist() == [0, 1, 7, 16, 111] and (out["out"] == out["out"][:, :1]).all()


@xetile.kernel
def odd_sums(x, out, n):
    """Nested loops, each with its own exits: for each x[i] >= 0 (a `continue` skips the others) the odd numbers up
    to x[i] (a `while True` left by a `break`, even ones skipped by a `continue`), until the total passes 50."""
    total = 0
    for i in range(n):
        if x[i] < 0:
            continue
        j = 0
        while True:
            j += 1
            if j > x[i]:
                break
            if j % 2 == 0:
                continue
            total += j
        if total > 50:
            break
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), xetile.full([1, 16], total, xetile.int32))


def expected_odd_sums(x) -> int:
    total = 0
    for v in x[x >= 0]:
        total += sum(range(1, int(v) + 1, 2))
        if total > 50:
            break
    return total


def test_nested_loops_with_their_own_exits():
    x = np.array([3, -2, 7, 0, 11, 9, 5, -1, 13, 2], np.int32)
    out = run_everywhere(odd_sums, {"x": x, "out": np.zeros((1, 16), np.int32)}, (1,), 10)
    assert (out["out"] == expected_odd_sums(x)).all() and expected_odd_sums(x) == 56


@xetile.kernel
def static_break(x, y, n):
    """A runtime `break` in an unrolled loop: the iterations after it run under `if not` its flag."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16], layout=ROWS))
    for i in xetile.static_range(4):
        if i == n:
            break
        v = v + (i + 1)
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 16], layout=ROWS), v)


@pytest.mark.parametrize("n, added", [(0, 0), (2, 3), (9, 10)])
def test_break_in_static_range(n, added):
    x = np.arange(128, dtype=np.int32).reshape(8, 16)
    y = np.zeros_like(x)
    static_break[(1,)](x, y, n, device="numpy")
    np.testing.assert_array_equal(y, x + added)


@xetile.kernel
def constexpr_break(x, y, n, ONCE: xetile.constexpr):
    """A `break` under a compile-time condition: the loop's flag is a constant."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16], layout=ROWS))
    for i in range(n):
        v = v + 1
        if ONCE:
            break
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 16], layout=ROWS), v)


@pytest.mark.parametrize("once, added", [(True, 1), (False, 5)])
def test_break_on_a_compile_time_condition(once, added):
    x = np.arange(128, dtype=np.int32).reshape(8, 16)
    y = np.zeros_like(x)
    constexpr_break[(1,)](x, y, 5, ONCE=once, device="numpy")
    np.testing.assert_array_equal(y, x + added)


@pytest.mark.parametrize("once, loop, not_loop", [(True, "scf.while", "scf.for"), (False, "scf.for", "scf.while")])
def test_a_break_dead_at_trace_time_leaves_an_scf_for(once, loop, not_loop):
    """ONCE=False: the tracer knows the `break` never runs, so the loop keeps its counted form."""
    x = np.zeros((8, 16), np.int32)
    text = print_func(constexpr_break.warmup(x, x, 5, ONCE=once, target="numpy").func)
    assert f"{loop} " in text and f"{not_loop} " not in text


@xetile.kernel
def break_on_a_carried_flag(x, y, n, LIMIT: xetile.constexpr):
    """`done` enters the loop as the Python False, but an iteration sets it: the `break` under it is live."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16], layout=ROWS))
    done = False
    for i in range(n):
        if done:
            break
        v = v + 1
        done = i >= LIMIT
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 16], layout=ROWS), v)


def test_a_break_on_a_flag_the_loop_sets_stays_an_exit():
    x = np.arange(128, dtype=np.int32).reshape(8, 16)
    y = np.zeros_like(x)
    break_on_a_carried_flag[(1,)](x, y, 9, LIMIT=2, device="numpy")
    np.testing.assert_array_equal(y, x + 3)
    assert "scf.while " in print_func(break_on_a_carried_flag.warmup(x, y, 9, LIMIT=2, target="numpy").func)


# ---- return: early exit of the kernel and of called kernels ------------------------------------------------------
@xetile.kernel
def guarded_rows(x, y, limits, rows):
    """Workgroups past `rows` return first; a return in a nested if and one inside a loop end the others early."""
    p = xetile.program_id(0)
    if p * 8 >= rows:
        return
    v = xetile.load_tile(xetile.init_tile(x, [p * 8, 0], [8, 16], layout=ROWS))
    out = xetile.init_tile(y, [p * 8, 0], [8, 16], layout=ROWS)
    if p >= 1:
        if limits[p] < 0:
            return
        v = v * 3
    for i in range(4):
        if limits[p] == i:
            xetile.store_tile(out, v)
            return
        v = v + 1
    xetile.store_tile(out, v * 10)


def expected_guarded_rows(x, limits, rows):
    y = np.zeros_like(x)
    for p, limit in enumerate(limits):
        if p * 8 >= rows or (p >= 1 and limit < 0):
            continue
        v = x[p * 8:(p + 1) * 8] * (3 if p >= 1 else 1)
        y[p * 8:(p + 1) * 8] = v + limit if 0 <= limit < 4 else (v + 4) * 10
    return y


def test_early_returns_from_the_kernel(rng):
    limits = np.array([-1, 2, -5, 0, 7, 1], np.int32)
    x = rng.integers(-50, 50, (48, 16), dtype=np.int32)
    out = run_everywhere(guarded_rows, {"x": x, "y": np.zeros_like(x), "limits": limits}, (6,), 40)
    np.testing.assert_array_equal(out["y"], expected_guarded_rows(x, limits, 40))
    assert (out["y"][16:24] == 0).all() and (out["y"][40:] == 0).all() and (out["y"][24:32] != 0).any()


@xetile.kernel
def clamp(s, lo, hi):
    if s < lo:
        return lo
    if s > hi:
        return hi
    return s


@xetile.kernel
def first_negative(x, start, n):
    """The index of the first negative x[start + i], i < n; n if none is."""
    for i in range(n):
        if x[start + i] < 0:
            return i
    return n


@xetile.kernel
def scaled_if_large(v, s):
    if s > 2:
        return v * 2
    return v


@xetile.kernel
def helper_results(counts, x, y, out, n):
    """Row p of `out`: 100 * clamp(counts[p], 1, 5) + the first negative of x's n-element segment p; y's rows
    doubled where that clamp is above 2."""
    p = xetile.program_id(0)
    k = clamp(counts[p], 1, 5)
    j = first_negative(x, p * n, n)
    xetile.store_tile(xetile.init_tile(out, [p, 0], [1, 16]), xetile.full([1, 16], k * 100 + j, xetile.int32))
    t = xetile.init_tile(y, [p * 8, 0], [8, 16], layout=ROWS)
    xetile.store_tile(t, scaled_if_large(xetile.load_tile(t), k))


def test_called_kernels_return_early(rng):
    counts = np.array([-3, 2, 4, 9], np.int32)
    x = np.abs(rng.integers(1, 9, 24, dtype=np.int32))
    x[[1, 10, 11, 17]] = -1   # segments of 6: first negatives at 1, 4, 5, none (6)
    y = rng.integers(-50, 50, (32, 16), dtype=np.int32)
    out = run_everywhere(helper_results, {"counts": counts, "x": x, "y": y, "out": np.zeros((4, 16), np.int32)},
                         (4,), 6)
    assert out["out"][:, 0].tolist() == [101, 204, 405, 506]
    np.testing.assert_array_equal(out["y"], y * np.repeat([1, 1, 2, 2], 8)[:, None])


@xetile.kernel
def five_or_seven(n, EARLY: xetile.constexpr):
    """5 from inside the loop when EARLY (a return under a compile-time condition), 7 when the loop runs none."""
    for i in range(n):
        if EARLY:
            return 5
    return 7


@xetile.kernel
def store_five_or_seven(out, n, EARLY: xetile.constexpr):
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), xetile.full([1, 16], five_or_seven(n, EARLY),
                                                                          xetile.int32))


@pytest.mark.parametrize("early, n, want", [(True, 0, 7), (True, 3, 5), (False, 3, 7)])
def test_a_compile_time_return_inside_a_loop_that_may_run_no_iteration(early, n, want):
    out = np.zeros((1, 16), np.int32)
    store_five_or_seven[(1,)](out, n, EARLY=early, device="numpy")
    assert (out == want).all()


# ---- IR and GPU builds --------------------------------------------------------------------------------------------
DOUBLINGS_ARGS = (np.zeros(4, np.int32), np.zeros((32, 16), np.int32), np.zeros((32, 16), np.int32), 7)


def test_a_for_with_break_is_an_scf_while_at_every_level():
    func = doublings.warmup(*DOUBLINGS_ARGS, target="numpy").func
    text = print_func(func)
    assert "scf.for" not in text and "scf.while (%v = %" in text and "%break = %" in text
    for name, level in {"xetile": func, **lower(func)}.items():
        printed = print_func(level)
        assert print_func(parse_func(printed)) == printed, name


GUARDED_ROWS_ARGS = (np.zeros((48, 16), np.int32), np.zeros((48, 16), np.int32), np.zeros(6, np.int32), 40)


def test_exit_flags_are_values_only_where_something_reads_them():
    """No `continue` flag leaves its iteration, `while True` tests the `break` flag alone, and the kernel's first
    `if ...: return` (the rest of the kernel its else branch) yields no flag."""
    text = print_func(collatz_steps.warmup(np.zeros(5, np.int32), np.zeros((5, 16), np.int32), target="numpy").func)
    assert "continue" not in text and "scf.while (%n = %2, %steps = %3, %break = %4)" in text
    assert "arith.xori %break, %6 : i1\n    scf.condition(%7)" in text
    text = print_func(guarded_rows.warmup(*GUARDED_ROWS_ARGS, target="numpy").func)
    first_if = next(line for line in text.splitlines() if "scf.if" in line)
    assert first_if == "  scf.if %3 {" and "scf.while (%v = %17#0, %i = %30, %return = %33)" in text


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_early_exits_build_for_gpus(target):
    for kern, args in [(doublings, DOUBLINGS_ARGS), (guarded_rows, GUARDED_ROWS_ARGS)]:
        compiled = kern.warmup(*args, target=target)
        assert "br i1" in compiled.asm["llir"] and compiled.asm["spirv"]
        if ocloc.available(get_target(target)):
            assert compiled.asm["isa"] and "calla" not in compiled.asm["isa"], kern


# ---- what is refused ----------------------------------------------------------------------------------------------
@xetile.kernel
def break_on_subgroup_id(x, n):
    t = xetile.init_tile(x, [0, 0], [8, 16], layout=ROWS)
    for i in range(n):
        xetile.barrier()
        if i > xetile.subgroup_id():
            break
    xetile.store_tile(t, xetile.full([8, 16], 1.0))


def test_a_break_on_subgroup_id_makes_the_loop_divergent():
    """The barrier sits before the `break`, outside its branch, yet subgroups leave the loop after different
    iterations: the flag the branch yields and the loop carries is traced back to subgroup_id()."""
    with pytest.raises(CompilationError, match="makes the rest of its loop or function such a branch: decide exits "
                                               "on values the whole workgroup shares"):
        break_on_subgroup_id.warmup(np.zeros((8, 16), np.float32), 3, target="cpu")


@xetile.kernel
def sometimes_returns(s):
    if s > 0:
        return s


@xetile.kernel
def calls_sometimes_returns(x, s):
    xetile.store_tile(xetile.init_tile(x, [0, 0], [1, 16]), xetile.full([1, 16], sometimes_returns(s), xetile.int32))


@xetile.kernel
def returns_a_descriptor(x, s):
    for i in range(s):
        if x[i, 0] > 0:
            return xetile.init_tile(x, [i, 0], [8, 16])
    return xetile.init_tile(x, [8, 0], [8, 16])


@xetile.kernel
def calls_returns_a_descriptor(x, s):
    xetile.store_tile(returns_a_descriptor(x, s), xetile.full([8, 16], 1, xetile.int32))


@pytest.mark.parametrize("kern, message", [
    (calls_sometimes_returns, "sometimes_returns returns a value on some paths and reaches its end without a "
                              "return on others; end it with `return ...`"),
    (calls_returns_a_descriptor, "returning a !xetile.tile<8x16xi32> from inside a runtime `if` or loop is not "
                                 "supported"),
])
def test_returns_that_have_no_value_on_some_path(kern, message):
    with pytest.raises(CompilationError, match=message.replace("(", "\\(").replace(")", "\\)")):
        kern.warmup(np.zeros((16, 16), np.int32), 3, target="numpy")
