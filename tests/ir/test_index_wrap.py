"""Tile offsets are i64 index values: a sum past 2**63 - 1 wraps (two's complement) on every device, so the
interpreter wraps it too, at every IR level (the workgroup's offsets, each subgroup's, each block's)."""
import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir.interpreter import run_ir

constexpr = xetile.constexpr
HALVES = xetile.Layout(sg_layout=[2, 1], sg_data=[8, 16])


@xetile.kernel
def hop(src, dst, m0, dm, STEPS: constexpr, LAYOUT: constexpr):
    """dst = the src tile at m0 + STEPS * dm (an i64 sum), moved there one update_tile_offset at a time."""
    t = xetile.init_tile(src, [m0, 0], [16, 16], layout=LAYOUT)
    for _ in range(STEPS):
        t = xetile.update_tile_offset(t, [dm, 0])
    xetile.store_tile(xetile.init_tile(dst, [0, 0], [16, 16], layout=LAYOUT), xetile.load_tile(t))


@pytest.mark.parametrize("layout", [None, HALVES], ids=["one_subgroup", "two_subgroups"])
def test_offsets_past_int64_wrap_at_every_level(rng, layout):
    src = rng.standard_normal((12, 16)).astype(np.float32)
    args = src, np.zeros((16, 16), np.float32), np.int64(2**62 + 3), np.int64(2**62)
    func = hop.warmup(*args, STEPS=3, LAYOUT=layout, target="numpy").func
    expected = np.zeros((16, 16), np.float32)
    expected[:9] = src[3:]  # 2**62 + 3 + 3 * 2**62 = 2**64 + 3: rows 3.., 9 of them in bounds
    for name, level in {"xetile": func, **lower(func)}.items():
        dst = np.full((16, 16), 7, np.float32)
        run_ir(level, (1, 1, 1), [src, dst, *args[2:]])
        np.testing.assert_array_equal(dst, expected, err_msg=name)
