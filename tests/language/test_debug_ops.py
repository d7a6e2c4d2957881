"""Debugging functions: `static_assert` checked while tracing; `device_assert` checked by the
numpy interpreter, left out of device code, and a NotImplementedError on a device with XETILE_DEBUG=1 (part of
the compile options, so of the cache key); `device_print` in the interpreters and through OpenCL printf."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from spirv_tools import cpu_queue

import xetile_jit as xetile
from xetile_jit.ir.interpreter import run_ir
from xetile_jit.compiler.pipeline import lower

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


# ---- device_print ---------------------------------------------------------------------------------------------
PRINT_SCRIPT = '''
import sys
import numpy as np
import xetile_jit as xetile

@xetile.kernel
def show(x, n, s, h, BM: xetile.constexpr, LAYOUT: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [4, 32], layout=LAYOUT), padding=-1.0)
    xetile.device_print("n, s, h, pid*BM, flag (100%):", n, s, h, xetile.program_id(0) * BM, n > 5)
    xetile.device_print("v", h, v)

x = np.arange(60, dtype=np.float32).reshape(3, 20)
layout = xetile.Layout(sg_layout=[2, 2], sg_data=[4, 16])  # 2 subgroups hold each row: one of them prints
show[(2, 1)](x, np.int64(2**40), np.float16(2.5), np.int8(-3), BM=4, LAYOUT=layout, device=sys.argv[1])
'''
SCALAR_LINES = [f"pid ({p}, 0, 0) n, s, h, pid*BM, flag (100%): 1099511627776 2.500000 -3 {4 * p} 1" for p in (0, 1)]


def vector_lines(pid: int) -> list[str]:
    """x is 3x20, loaded through a 4x32 tile padded with -1."""
    x = np.full((4, 32), -1.0)
    x[:3, :20] = np.arange(60).reshape(3, 20)
    return [f"pid ({pid}, 0, 0) idx ({i}, {j}) v -3 {x[i, j]:.6f}" for i in range(4) for j in range(32)]


def printed(tmp_path, device: str) -> list[str]:
    """The lines a kernel's device_print writes to the stdout of a fresh process (OpenCL's printf writes to the
    process's C stdout, which pytest's capture does not see)."""
    script = tmp_path / "show.py"
    script.write_text(PRINT_SCRIPT)
    root = Path(xetile.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "XETILE_CACHE_DIR": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, str(script), device], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_device_print_in_the_interpreter(tmp_path):
    assert printed(tmp_path, "numpy") == [SCALAR_LINES[0], *vector_lines(0), SCALAR_LINES[1], *vector_lines(1)]


def test_device_print_on_the_device_prints_the_interpreters_lines(tmp_path):
    """Each element once (two subgroups hold each row; blocks are padded), in another order."""
    cpu_queue()
    assert sorted(printed(tmp_path, "opencl:cpu")) == sorted(SCALAR_LINES + vector_lines(0) + vector_lines(1))


@xetile.kernel
def print_in_subgroups(x, n, LAYOUT: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [12, 40], layout=LAYOUT))
    xetile.device_print("n", n + 1)
    xetile.device_print("v", v)


def test_device_print_at_every_level(capsys):
    """Scalars once per workgroup, each element of a vector once, from the pieces and lanes of every level (a
    2x2 grid of subgroups of which two hold each row; 12x40 is padded to whole blocks)."""
    x = np.arange(12 * 40, dtype=np.float32).reshape(12, 40)
    layout = xetile.Layout(sg_layout=[2, 2], sg_data=[12, 20])
    func = print_in_subgroups.warmup(x, 4, LAYOUT=layout, target="numpy").func
    elements = [f"pid ({p}, 0, 0) idx ({i}, {j}) v {x[i, j]:.6f}" for p in (0, 1) for i, j in np.ndindex(12, 40)]
    expected = sorted([f"pid ({p}, 0, 0) n 5" for p in (0, 1)] + elements)
    for level in [func, *lower(func).values()]:
        run_ir(level, (2, 1, 1), [x, np.int32(4)])
        assert sorted(capsys.readouterr().out.splitlines()) == expected
    text = print_in_subgroups.warmup(x, 4, LAYOUT=layout, target="cpu").asm["llir"]  # spirv-val checks its SPIR-V
    assert "__spirv_ocl_printf" in text


@xetile.kernel
def print_1d(x):
    xetile.device_print("v", xetile.load_tile(xetile.init_tile(x, [0], [8])))


def test_device_print_of_a_1d_vector_at_every_level(capsys):
    """A 1-D vector prints as its one row (the interpreter's and every level's lines)."""
    x = np.arange(5, dtype=np.float32)
    func = print_1d.warmup(x, target="numpy").func
    expected = [f"pid (0, 0, 0) idx (0, {j}) v {float(j) if j < 5 else 0.0:.6f}" for j in range(8)]
    for level in [func, *lower(func).values()]:
        run_ir(level, (1, 1, 1), [x])
        assert sorted(capsys.readouterr().out.splitlines()) == expected


def test_device_print_takes_one_vector():
    with pytest.raises(xetile.CompilationError, match=r"device_print: prints at most one vector, got 2"):
        two_vectors.warmup(np.zeros((2, 3), np.float32), target="numpy")


@xetile.kernel
def two_vectors(x):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [2, 3]))
    xetile.device_print("v", v, v)
