"""Debugging functions (issue 14, item 3): `static_assert` checked while tracing; `device_assert` checked by the
numpy interpreter, left out of device code, and a NotImplementedError on a device with XETILE_DEBUG=1 (part of
the compile options, so of the cache key)."""
import re

import numpy as np
import pytest
from spirv_tools import cpu_queue

import xetile_jit as xetile

BM, BN = 8, 16


@xetile.kernel
def doubled(x, out, BM: xetile.constexpr, BN: xetile.constexpr):
    xetile.static_assert(BM % 8 == 0, "BM must be a multiple of 8")
    m = xetile.program_id(0) * BM
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]), padding=1)
    xetile.device_assert(v > 0, "x must be positive")
    xetile.store_tile(xetile.init_tile(out, [m, 0], [BM, BN]), v * 2)


@xetile.kernel
def scalar_assert(out, n):
    xetile.device_assert(n < 10)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 1]), n)


@xetile.kernel
def runtime_static_assert(out, n):
    xetile.static_assert(n > 0)


def positive(rows=20) -> np.ndarray:
    return np.random.default_rng(7).uniform(0.5, 4, (rows, BN)).astype(np.float32)


@pytest.mark.usefixtures("on_each_device")
def test_true_assertions_run_the_kernel():
    x = positive()
    out = np.zeros_like(x)
    doubled[(3,)](x, out, BM=BM, BN=BN)  # the last tile is partly out of bounds: padding=1 keeps it positive
    np.testing.assert_array_equal(out, 2 * x)


def test_static_assert_names_the_line_and_message():
    x = positive()
    with pytest.raises(xetile.CompilationError, match=r"test_debug_ops.py:\d+: static_assert failed: BM must be a "
                                                      r"multiple of 8\n    xetile.static_assert\(BM % 8 == 0"):
        doubled[(2,)](x, np.zeros_like(x), BM=12, BN=BN, device="numpy")


def test_static_assert_needs_a_compile_time_condition():
    with pytest.raises(xetile.CompilationError, match=r"static_assert: the condition must be a compile-time value, "
                                                      r"got i1 \(use device_assert"):
        runtime_static_assert[(1,)](np.zeros((1, 1), np.int32), 3, device="numpy")


def test_device_assert_in_the_interpreter_names_message_line_and_workgroup():
    x = positive()
    x[11, 5] = -1.0  # workgroup 1
    with pytest.raises(xetile.DeviceAssertionError, match=re.escape(
            "device_assert failed: x must be positive (workgroup (1, 0, 0); 1 of 128 elements false)\n"
            "    xetile.device_assert(v > 0")):
        doubled[(3,)](x, np.zeros_like(x), BM=BM, BN=BN, device="numpy")


def test_device_assert_on_a_scalar():
    out = np.zeros((1, 1), np.int32)
    scalar_assert[(1,)](out, 4, device="numpy")
    assert out[0, 0] == 4
    with pytest.raises(xetile.DeviceAssertionError, match=r"device_assert failed: assertion failed \(workgroup "
                                                          r"\(0, 0, 0\); scalar false\)"):
        scalar_assert[(1,)](out, 12, device="numpy")


def test_device_assert_in_the_ir():
    x = positive()
    text = doubled.warmup(x, np.zeros_like(x), BM=BM, BN=BN, target="numpy").asm["xetile"]
    assert re.search(r'cf.assert %\w+, "x must be positive" : vector<8x16xi1>', text), text


def test_device_code_leaves_device_assert_out_unless_xetile_debug(monkeypatch):
    cpu_queue()
    x = positive()
    x[3, 3] = -1.0
    out = np.zeros_like(x)
    doubled[(3,)](x, out, BM=BM, BN=BN, device="opencl:cpu")  # not checked on the device
    np.testing.assert_array_equal(out, 2 * x)
    asm = doubled.warmup(x, out, BM=BM, BN=BN, target="cpu").asm
    assert "cf.assert" in asm["xetile"] and "cf.assert" not in asm["xegpu"]
    monkeypatch.setenv("XETILE_DEBUG", "1")  # a new compile option: the kernel compiled above is not reused
    with pytest.raises(NotImplementedError, match=r"kernel doubled: device_assert in device code \(XETILE_DEBUG=1, "
                                                  r"target cpu\)"):
        doubled[(3,)](x, out, BM=BM, BN=BN, device="opencl:cpu")
    with pytest.raises(xetile.DeviceAssertionError):  # the interpreter checks, with XETILE_DEBUG or without
        doubled[(3,)](x, out, BM=BM, BN=BN, device="numpy")
