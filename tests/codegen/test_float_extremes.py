"""codegen/llvm/core.py rule_float_extreme: `minimum` and `maximum` (np.minimum / np.maximum: a NaN in either wins)
on both CPU targets, against a constant in the form the OpenCL CPU compiler builds right."""
from __future__ import annotations

import numpy as np
import pytest

import xetile_jit as xetile

DEVICE = "opencl:cpu"
TARGETS = ["cpu", "xe-emulated"]
SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 4.0, -4.0, 1.5, -7.25, 3.999, 4.001, 1e-40, -1e-40,
                    65504.0, -2.0], np.float32)


@xetile.kernel
def extremes(x, y, out, KIND: xetile.constexpr):
    a = xetile.load_tile(xetile.init_tile(x, [0, 0], [1, 16]))
    b = xetile.load_tile(xetile.init_tile(y, [0, 0], [1, 16]))
    f = xetile.minimum if KIND == "min" else xetile.maximum
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), f(a, b))
    xetile.store_tile(xetile.init_tile(out, [1, 0], [1, 16]), f(a, 4.0))
    xetile.store_tile(xetile.init_tile(out, [2, 0], [1, 16]), f(4.0, a))
    xetile.store_tile(xetile.init_tile(out, [3, 0], [1, 16]), f(a, -0.0))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", ["min", "max"])
def test_minimum_and_maximum_are_numpys_on_nans_zeros_and_infinities(target, kind):
    """Against the other array and against the constants 4.0 (either side) and -0.0, bit for bit with numpy:
    NaNs, the sign of a zero, infinities and denormals as numpy gives them."""
    x = SPECIAL.reshape(1, 16)
    y = np.roll(SPECIAL, 5).reshape(1, 16)
    out = np.zeros((4, 16), np.float32)
    extremes[(1,)](x, y, out, KIND=kind, device=DEVICE, target=target)
    f = np.minimum if kind == "min" else np.maximum
    want = np.stack([f(x[0], y[0]), f(x[0], np.float32(4.0)), f(np.float32(4.0), x[0]), f(x[0], np.float32(-0.0))])
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    ordered = ~np.isnan(want)
    np.testing.assert_array_equal(out[ordered].view(np.uint32), want[ordered].view(np.uint32))


@xetile.kernel
def padded_row_exponentials(x, out, OFFSET: xetile.constexpr):
    """A fuzzed row kernel's shape: a row wholly below its array (every element the padding 0), at a constant
    offset, its exponentials of the minimum of x - max(x) and 4 summed."""
    t = xetile.load_tile(xetile.init_tile(x, [OFFSET, 8], [1, 256]))
    d = xetile.minimum(t - xetile.tile_broadcast(xetile.tile_reduce("max", t, [1]), [1], [1, 256]), 4.0)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 1]), xetile.tile_reduce("add", xetile.exp(d), [1]))


@pytest.mark.parametrize("target", TARGETS)
def test_a_minimum_of_padding_against_a_constant_is_no_nan(target):
    """With `select(x <= 4.0 or x is NaN, x, 4.0)` the OpenCL CPU compiler made this sum NaN on `xe-emulated`
    (seed 1515 of the fuzzer); 256 exponentials of 0 sum to 256."""
    x = np.ones((1, 272), np.float32)
    out = np.zeros((1, 16), np.float32)
    padded_row_exponentials[(1,)](x, out, OFFSET=-14, device=DEVICE, target=target)
    assert out[0, 0] == 256.0


@xetile.kernel
def clamped(x, out, CONSTANT: xetile.constexpr):
    a = xetile.load_tile(xetile.init_tile(x, [0, 0], [1, 16]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), xetile.minimum(a, 4.0 if CONSTANT else a * 2))


def test_against_a_constant_the_minimum_tests_the_constant_alone():
    """minimum(a, 4.0): one ordered comparison of the constant with `a` (`fcmp ole`), no NaN test; minimum(a, 2a):
    a comparison and `a`'s NaN test."""
    x = np.zeros((1, 16), np.float32)
    for constant, uno, ole in ((True, 0, 1), (False, 1, 0)):
        llir = clamped.warmup(x, x, CONSTANT=constant, target="cpu").asm["llir"]
        assert (llir.count("fcmp uno"), llir.count("fcmp ole float 0x4010000000000000")) == (uno, ole)
