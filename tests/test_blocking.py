"""Blocking cuts subgroup values into instruction-size blocks: DPAS shapes per dtype, reductions over
blocks, regrouping, and a clear error for shapes DPAS cannot take."""
import re

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close, rand
from xetile_jit.backend.interpreter import run_ir
from xetile_jit.backend.pipeline import lower
from xetile_jit.ir.printer import print_func


@xetile.kernel
def mma(a, b, c, M: xetile.constexpr, N: xetile.constexpr, K: xetile.constexpr):
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [M, K])),
                          xetile.load_tile(xetile.init_tile(b, [0, 0], [K, N])))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [M, N]), acc)


@pytest.mark.parametrize("dtype, acc, k_block", [(np.float16, np.float32, 16), (np.float32, np.float32, 16),
                                                 (np.int8, np.int32, 32), (np.uint8, np.int32, 32)])
def test_dpas_blocks_follow_the_target_shape(rng, dtype, acc, k_block):
    m, n, k = 16, 32, 64
    a, b, c = rand(rng, (m, k), dtype), rand(rng, (k, n), dtype), np.zeros((m, n), acc)
    func = lower(mma.warmup(a, b, c, M=m, N=n, K=k).func, "xegpu-blocked")["xegpu-blocked"]
    text = print_func(func)
    mlir = {np.float16: "f16", np.float32: "f32", np.int8: "i8", np.uint8: "ui8"}[dtype]
    dpas = re.findall(r"xegpu.dpas .* : (vector<[^>]*>), (vector<[^>]*>)", text)
    assert len(dpas) == (m // 8) * (n // 16) * (k // k_block)
    assert set(dpas) == {(f"vector<8x{k_block}x{mlir}>", f"vector<{k_block}x16x{mlir}>")}
    run_ir(func, (1, 1, 1), [a, b, c])
    assert_close(c, a.astype(np.float64) @ b.astype(np.float64), acc, scale=k)


@xetile.kernel
def row_and_column_sums(x, rows, cols):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 48]))
    xetile.store_tile(xetile.init_tile(rows, [0, 0], [16, 1]), xetile.tile_reduce("max", v, [1]))
    xetile.store_tile(xetile.init_tile(cols, [0, 0], [1, 48]), xetile.tile_reduce("add", v, [0]))


def test_reductions_combine_partial_results_of_blocks(rng):
    x = rand(rng, (16, 48), np.float32)
    x[3, 20] = np.nan  # maxnumf: a NaN loses, in the block and in the combination alike
    rows, cols = np.zeros((16, 1), np.float32), np.zeros((1, 48), np.float32)
    func = lower(row_and_column_sums.warmup(x, rows, cols).func, "xegpu-blocked")["xegpu-blocked"]
    text = print_func(func)
    assert "vector.multi_reduction <maxnumf> %" in text and "vector<8x16xf32> into vector<8x1xf32>" in text
    assert text.count("arith.maxnumf") == 2 * 2  # the three column blocks' partial maxima, for each row block
    run_ir(func, (1, 1, 1), [x, rows, cols])
    assert_close(rows, np.fmax.reduce(x, axis=1, keepdims=True))
    assert_close(cols, x.sum(0, keepdims=True), scale=4)


def test_dpas_shape_that_does_not_divide_is_a_clear_error(rng):
    a, b, c = rand(rng, (8, 16), np.float16), rand(rng, (16, 8), np.float16), np.zeros((8, 8), np.float32)
    with pytest.raises(NotImplementedError, match="tile_mma of 8x16 by 16x8 per subgroup: the DPAS shape 8x16x16"):
        lower(mma.warmup(a, b, c, M=8, N=8, K=16).func)
