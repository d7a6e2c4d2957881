"""Fast math and FMA contraction (transforms/xetile/relax_float_math.py and contract_float_math.py, the `fast_math`
and `fp_fusion` launch options): which ops they flag and contract, the flags' IR form, the options in the cache key,
and device results within the documented bounds of the exact ones."""
from collections import Counter

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.compiler.pipeline import lower
from xetile_jit.errors import LaunchError
from xetile_jit.ir.core import walk
from xetile_jit.ir.parser import parse_func
from xetile_jit.ir.printer import print_func

from conftest import assert_close, target_options

# The sum of the largest relative errors of exp and division on the OpenCL CPU runtime (docs/guide.md "Fast math")
# bounds an element of `mixed`, whose other terms are exact or contracted (more accurate)
FAST_MATH_ERROR = 1.6e-4 + 3.2e-4


@xetile.kernel
def mixed(x, y, out):
    a = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 32]))
    b = xetile.load_tile(xetile.init_tile(y, [0, 0], [16, 32]))
    square = a * a  # two uses: stays a multiply
    r = xetile.exp(a * b + b) / (b - square) + (a * b - a) + (square + square)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [16, 32]), r)


def inputs():
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (16, 32)).astype(np.float32)
    return x, rng.uniform(2, 3, (16, 32)).astype(np.float32)  # b - a * a > 1: no cancellation


def expected(x, y):
    a, b = x.astype(np.float64), y.astype(np.float64)
    return np.exp(a * b + b) / (b - a * a) + (a * b - a) + 2 * a * a


def test_fast_math_flags_approximations_and_contracts_lone_products():
    x, y = inputs()
    traced = mixed.warmup(x, y, np.empty_like(x), device="numpy").func
    func = lower(traced, "xetile-layouts", target="cpu", fast_math=True)["xetile-layouts"]
    ops = list(walk(func.body))
    names = Counter(op.name for op in ops)
    # a * b + b and a * b - a contract; b - square does not (square has two uses), nor square + square
    assert [names[name] for name in ("math.fma", "arith.mulf", "arith.negf", "arith.addf", "arith.subf")] == \
        [2, 1, 1, 3, 1]
    assert {op.name for op in ops if getattr(op, "fastmath", False)} == {"math.exp", "arith.divf"}
    text = print_func(func)
    assert text.count("fastmath = #arith.fastmath<afn>") == text.count("fastmath = #arith.fastmath<arcp>") == 1
    assert print_func(parse_func(text)) == text
    assert "fastmath" not in print_func(lower(traced, "xetile-layouts", target="cpu")["xetile-layouts"])


def test_fast_math_is_a_compile_option():
    x, y = inputs()
    out = np.empty_like(x)
    precise, fast = (mixed.warmup(x, y, out, target="cpu", fast_math=flag) for flag in (False, True))
    calls = [{name for name in ("native_exp", "native_divide", "fma") if f"__spirv_ocl_{name}\"" in c.asm["llir"]}
             for c in (precise, fast)]
    assert calls == [set(), {"native_exp", "native_divide", "fma"}]
    with pytest.raises(LaunchError, match="fast_math must be True or False"):
        mixed[(1,)](x, y, out, fast_math="yes")


def test_fp_fusion_contracts_and_approximates_nothing():
    x, y = inputs()
    traced = mixed.warmup(x, y, np.empty_like(x), device="numpy").func
    func = lower(traced, "xetile-layouts", target="cpu", fp_fusion=True)["xetile-layouts"]
    names = Counter(op.name for op in walk(func.body))
    assert [names[name] for name in ("math.fma", "arith.mulf", "arith.negf", "arith.addf", "arith.subf")] == \
        [2, 1, 1, 3, 1]
    assert "fastmath" not in print_func(func)
    llir = mixed.warmup(x, y, np.empty_like(x), target="cpu", fp_fusion=True).asm["llir"]
    assert "__spirv_ocl_fma\"" in llir and "native_" not in llir


def test_fast_math_includes_fp_fusion_in_one_compile():
    x, y = inputs()
    out = np.empty_like(x)
    kernel = xetile.kernel(mixed.fn)
    for fused in (False, True):
        kernel.warmup(x, y, out, target="cpu", fast_math=True, fp_fusion=fused)
    assert [key[-1].fp_fusion for key in kernel.cache] == [True]


def test_fp_fusion_takes_a_bool_and_triton_s_name_points_to_it():
    x, y = inputs()
    with pytest.raises(LaunchError, match="fp_fusion must be True or False"):
        mixed[(1,)](x, y, np.empty_like(x), fp_fusion=1)
    with pytest.raises(LaunchError, match="enable_fp_fusion is Triton's .* here it is fp_fusion, off unless"):
        mixed[(1,)](x, y, np.empty_like(x), enable_fp_fusion=True)


@pytest.mark.parametrize("option", ["fp_fusion", "fast_math"])
def test_relaxed_results_within_the_bounds(on_each_device, option):
    """Contraction alone rounds once where the interpreter rounds twice (within the exact result's tolerance);
    fast math is within the documented bounds of its approximations."""
    x, y = inputs()
    exact = expected(x, y)
    for options in target_options(on_each_device):
        precise, relaxed = np.empty_like(x), np.empty_like(x)
        mixed[(1,)](x, y, precise, **options)
        mixed[(1,)](x, y, relaxed, **{option: True}, **options)
        assert_close(precise, exact)
        if option == "fast_math":
            np.testing.assert_array_less(np.abs(relaxed - exact), FAST_MATH_ERROR * np.abs(exact) + 1e-6)
        else:
            assert_close(relaxed, exact)
        if on_each_device == "numpy":
            np.testing.assert_array_equal(relaxed, precise)  # the interpreter is exact either way
        else:
            assert np.any(relaxed != precise)


@xetile.kernel
def sum_of_squares(x, out):
    a = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 256]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [16, 1]), xetile.tile_reduce("add", a * a, [1]))


def test_fast_math_fuses_a_reductions_lone_products_on_the_cpu_targets():
    """The product a sum alone takes gets the contract flag, and the CPU targets' loops over blocks add each block's
    products with one fma (no multiply left); without fast math, no fma. Both within a rounding a block of the
    exact sums."""
    x = np.random.default_rng(3).uniform(-1, 1, (16, 256)).astype(np.float32)
    traced = sum_of_squares.warmup(x, np.empty((16, 1), np.float32), device="numpy").func
    text = print_func(lower(traced, "xetile-layouts", target="cpu", fast_math=True)["xetile-layouts"])
    assert text.count("fastmath = #arith.fastmath<contract>") == 1 and print_func(parse_func(text)) == text
    exact = (x.astype(np.float64) ** 2).sum(axis=1, keepdims=True)
    for target in ("cpu", "xe-emulated"):
        for fast in (False, True):
            out = np.empty((16, 1), np.float32)
            sum_of_squares[(1,)](out=out, x=x, target=target, fast_math=fast)
            llir = sum_of_squares.warmup(x, out, target=target, fast_math=fast).asm["llir"]
            assert ("__spirv_ocl_fma" in llir, " fmul " in llir) == (fast, not fast)
            np.testing.assert_allclose(out, exact, rtol=256 * 2.0 ** -24)
