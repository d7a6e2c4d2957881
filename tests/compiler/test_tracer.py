"""The tracer (compiler/tracer.py) on kernels at the edge of what Python's parser takes: long operator chains trace,
and an expression nested past the recursion limit is a CompilationError at its line."""
from __future__ import annotations

import importlib.util
import inspect
import sys

import numpy as np
import pytest

import xetile_jit as xetile

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)


def kernel_from_source(tmp_path, expression: str):
    """A kernel `chain(x, y)` storing `expression` of v, the 8x16 tile of x, into y, defined in a module file of its
    own (a kernel needs its source)."""
    path = tmp_path / "chain_kernel.py"
    path.write_text("import xetile_jit as xetile\n\n\n@xetile.kernel\ndef chain(x, y):\n"
                    "    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16]))\n"
                    f"    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 16]), {expression})\n")
    spec = importlib.util.spec_from_file_location(f"chain_kernel_{abs(hash(expression))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.chain


def test_a_chain_of_500_binary_operators_compiles(tmp_path):
    chain = kernel_from_source(tmp_path, "v" + " + v * 0.5 - v" * 250)
    x, y = np.full((8, 16), 2.0, np.float32), np.zeros((8, 16), np.float32)
    chain[(1,)](x, y)
    np.testing.assert_array_equal(y, np.full((8, 16), 2.0 - 250, np.float32))


def test_an_expression_nested_past_the_recursion_limit_is_a_compilation_error(tmp_path):
    chain = kernel_from_source(tmp_path, "(v + " * 150 + "v" + ")" * 150)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 300)  # a limit 150 nestings do not fit under
    try:
        with pytest.raises(xetile.CompilationError, match=r"chain_kernel\.py:7: an expression nests too deeply to "
                                                          r"trace \(Python's recursion limit is \d+\); split it"):
            chain[(1,)](np.ones((8, 16), np.float32), np.zeros((8, 16), np.float32))
    finally:
        sys.setrecursionlimit(limit)
