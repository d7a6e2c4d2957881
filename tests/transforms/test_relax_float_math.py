"""Fast math (transforms/xetile/relax_float_math.py, the `fast_math` launch option): which ops it flags and contracts, the
flags' IR form, the option in the cache key, and device results within the documented bounds of the exact ones."""
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


def test_fast_math_results_within_the_bounds(on_each_device):
    x, y = inputs()
    exact = expected(x, y)
    for options in target_options(on_each_device):
        precise, fast = np.empty_like(x), np.empty_like(x)
        mixed[(1,)](x, y, precise, **options)
        mixed[(1,)](x, y, fast, fast_math=True, **options)
        assert_close(precise, exact)
        np.testing.assert_array_less(np.abs(fast - exact), FAST_MATH_ERROR * np.abs(exact) + 1e-6)
        if on_each_device == "numpy":
            np.testing.assert_array_equal(fast, precise)  # the interpreter is exact either way
        else:
            assert np.any(fast != precise)


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
