"""Value shape ops as a Triton user writes them: `v[a:b, c:d]` with constant bounds, `xetile.cat`, `xetile.flip`,
`xetile.join`/`split`/`interleave`, `xetile.sort`/`topk`, against numpy (slicing, np.concatenate, np.flip, np.stack,
np.sort): in the interpreter at every IR level, and as SPIR-V on opencl:cpu, the cases alternating between the cpu
and xe-emulated targets. Odd shapes pad the blocks a flip mirrors; several subgroups exchange the elements through
shared local memory."""
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import rand
from test_passes import run_func
from xetile_jit.compiler.pipeline import lower
from xetile_jit.target.targets import get_target
from xetile_jit.toolchain import ocloc

pytestmark = pytest.mark.usefixtures("on_each_device")

constexpr = xetile.constexpr


@xetile.kernel
def flip_2d(x, y, M: constexpr, N: constexpr, AXIS: constexpr, LAYOUT: constexpr = None):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [M, N], layout=LAYOUT))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [M, N], layout=LAYOUT), xetile.flip(v, AXIS) + 1.0)


@xetile.kernel
def cat_2d(a, b, y, M: constexpr, N: constexpr, P: constexpr, AXIS: constexpr):
    """a is M x N; b is P x N (axis 0) or M x P (axis 1)."""
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [M, N]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [P, N] if AXIS == 0 else [M, P]))
    shape = [M + P, N] if AXIS == 0 else [M, N + P]
    xetile.store_tile(xetile.init_tile(y, [0, 0], shape), xetile.cat(va, vb, AXIS))


@xetile.kernel
def slices(x, rows, cols, block, M: constexpr, N: constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [M, N]))
    xetile.store_tile(xetile.init_tile(rows, [0, 0], [M - 3, N]), v[2:-1])
    xetile.store_tile(xetile.init_tile(cols, [0, 0], [M, 5]), v[:, N - 5:])
    xetile.store_tile(xetile.init_tile(block, [0, 0], [3, N - 4]), v[1:4, 3:N - 1] * 2.0)


@xetile.kernel
def one_d(x, y, flipped, sliced, joined, N: constexpr):
    a = xetile.load_tile(xetile.init_tile(x, [0], [N]))
    b = xetile.load_tile(xetile.init_tile(y, [0], [N]))
    xetile.store_tile(xetile.init_tile(flipped, [0], [2 * N]), xetile.cat(xetile.flip(a), b))
    xetile.store_tile(xetile.init_tile(sliced, [0], [N - 3]), a[3:] + b[:N - 3])
    xetile.store_tile(xetile.init_tile(joined, [0, 0], [N, 2]), xetile.join(a, b))


@xetile.kernel
def join_split(x, y, inter, back, M: constexpr, N: constexpr):
    """interleave of two M x N tiles, split of the join of two rows back into them (added)."""
    a = xetile.load_tile(xetile.init_tile(x, [0, 0], [M, N]))
    b = xetile.load_tile(xetile.init_tile(y, [0, 0], [M, N]))
    xetile.store_tile(xetile.init_tile(inter, [0, 0], [M, 2 * N]), xetile.interleave(a, b))
    first, second = xetile.split(xetile.join(xetile.reshape(a[0:1], [N]), xetile.reshape(b[1:2], [N])))
    xetile.store_tile(xetile.init_tile(back, [0], [N]), first * 10.0 + second)


@xetile.kernel
def sort_rows(x, up, down, top, M: constexpr, N: constexpr, K: constexpr):
    """Each workgroup sorts its M rows of N both ways and takes their K largest."""
    row = xetile.program_id(0) * M
    v = xetile.load_tile(xetile.init_tile(x, [row, 0], [M, N]))
    xetile.store_tile(xetile.init_tile(up, [row, 0], [M, N]), xetile.sort(v))
    xetile.store_tile(xetile.init_tile(down, [row, 0], [M, N]), xetile.sort(v, descending=True))
    xetile.store_tile(xetile.init_tile(top, [row, 0], [M, K]), xetile.topk(v, K))


@xetile.kernel
def sort_1d(x, y, N: constexpr):
    xetile.store_tile(xetile.init_tile(y, [0], [N]), xetile.sort(xetile.load_tile(xetile.init_tile(x, [0], [N]))))


def flip_case(rng, m, n, axis, options=None, dtype=np.float32, layout=None):
    x = rand(rng, (m, n), dtype)
    return flip_2d, (x, np.zeros((m, n), dtype)), dict(M=m, N=n, AXIS=axis, LAYOUT=layout), options or {}, \
        [x, np.flip(x, axis) + dtype(1)]


def cat_case(rng, m, n, p, axis, options=None, dtype=np.float32):
    a = rand(rng, (m, n), dtype)
    b = rand(rng, (p, n) if axis == 0 else (m, p), dtype)
    out = np.concatenate([a, b], axis)
    return cat_2d, (a, b, np.zeros_like(out)), dict(M=m, N=n, P=p, AXIS=axis), options or {}, [a, b, out]


def slice_case(rng, m, n, options=None):
    x = rand(rng, (m, n), np.float32)
    outs = [x[2:-1], x[:, n - 5:], x[1:4, 3:n - 1] * 2]
    return slices, (x, *(np.zeros_like(o) for o in outs)), dict(M=m, N=n), options or {}, [x, *outs]


def one_d_case(rng, n, options=None):
    x, y = rand(rng, n, np.float32), rand(rng, n, np.float32)
    outs = [np.concatenate([np.flip(x), y]), x[3:] + y[:n - 3], np.stack([x, y], -1)]
    return one_d, (x, y, *(np.zeros_like(o) for o in outs)), dict(N=n), options or {}, [x, y, *outs]


def join_split_case(rng, m, n, options=None):
    x, y = rand(rng, (m, n), np.float32), rand(rng, (m, n), np.float32)
    inter = np.stack([x, y], -1).reshape(m, 2 * n)
    return (join_split, (x, y, np.zeros_like(inter), np.zeros(n, np.float32)), dict(M=m, N=n), options or {},
            [x, y, inter, x[0] * 10 + y[1]])


def sort_case(rng, m, n, k, dtype, options=None):
    """Two workgroups; floats with NaNs (numpy's order: last) and repeated values."""
    x = rng.integers(-20, 20, (2 * m, n)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[0, 1], x[2 * m - 1, :3] = np.nan, np.nan
    up = np.sort(x, -1)
    down = np.flip(up, -1)
    outs = [up, down, down[:, :k]]
    return sort_rows, (x, *(np.zeros_like(o) for o in outs)), dict(M=m, N=n, K=k), options or {}, [x, *outs], (2,)


def sort_1d_case(rng, n):
    x = rand(rng, n, np.float32)
    return sort_1d, (x, np.zeros_like(x)), dict(N=n), {}, [x, np.sort(x)]


FOUR = dict(num_subgroups=4)
SQUARES = xetile.Layout(sg_layout=[2, 2], sg_data=[16, 32])  # 32x64: each subgroup's block lands on another's
CASES = {
    "flip-rows-8x16": lambda rng: flip_case(rng, 8, 16, 0),
    "flip-cols-8x16": lambda rng: flip_case(rng, 8, 16, 1),
    "flip-rows-13x37": lambda rng: flip_case(rng, 13, 37, 0),
    "flip-cols-13x37": lambda rng: flip_case(rng, 13, 37, 1),
    "flip-cols-32x64-4-subgroups": lambda rng: flip_case(rng, 32, 64, 1, FOUR),
    "flip-rows-32x64-4-subgroups-f16": lambda rng: flip_case(rng, 32, 64, 0, FOUR, np.float16),
    "flip-rows-32x64-2x2-subgroups": lambda rng: flip_case(rng, 32, 64, 0, layout=SQUARES),
    "flip-cols-32x64-2x2-subgroups-i8": lambda rng: flip_case(rng, 32, 64, 1, dtype=np.int8, layout=SQUARES),
    "cat-rows-8x16-5x16": lambda rng: cat_case(rng, 8, 16, 5, 0),
    "cat-cols-8x16-8x7": lambda rng: cat_case(rng, 8, 16, 7, 1),
    "cat-cols-32x32-32x32-4-subgroups": lambda rng: cat_case(rng, 32, 32, 32, 1, FOUR),
    "cat-rows-16x64-16x64-4-subgroups-i32": lambda rng: cat_case(rng, 16, 64, 16, 0, FOUR, np.int32),
    "slices-9x21": lambda rng: slice_case(rng, 9, 21),
    "slices-32x64-4-subgroups": lambda rng: slice_case(rng, 32, 64, FOUR),
    "1-d-37": lambda rng: one_d_case(rng, 37),
    "1-d-64-4-subgroups": lambda rng: one_d_case(rng, 64, FOUR),
    "join-split-interleave-4x16": lambda rng: join_split_case(rng, 4, 16),
    "join-split-interleave-16x32-4-subgroups": lambda rng: join_split_case(rng, 16, 32, FOUR),
    "sort-topk-4x16-f32": lambda rng: sort_case(rng, 4, 16, 5, np.float32),
    "sort-topk-8x8-i32-4-subgroups": lambda rng: sort_case(rng, 8, 8, 3, np.int32, FOUR),
    "sort-1-d-32": lambda rng: sort_1d_case(rng, 32),
}


@pytest.mark.parametrize("case", CASES)
def test_value_shape_ops_match_numpy(rng, case, on_each_device):
    kern, args, consts, options, expected, *grid = CASES[case](rng)
    grid = grid[0] if grid else (1,)
    if on_each_device == "numpy":
        func = kern.warmup(*args, **consts, **options, target="numpy").func
        levels = {"xetile": func, **lower(func, num_subgroups=options.get("num_subgroups"))}
        for name, level in levels.items():
            for got, want in zip(run_func(level, grid, args), expected):
                np.testing.assert_array_equal(got, want, name)
        return
    # The cases alternate between the CPU targets: both lower the value shape ops alike (registers, SLM and
    # barriers), and each case's device build takes seconds.
    target = ("cpu", "xe-emulated")[list(CASES).index(case) % 2]
    kern[grid](*args, **consts, **options, target=target)
    for got, want in zip(args, expected):
        np.testing.assert_array_equal(got, want, target)


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
@pytest.mark.parametrize("case", ["flip-rows-13x37", "flip-cols-32x64-2x2-subgroups-i8", "1-d-37",
                                  "join-split-interleave-16x32-4-subgroups", "slices-9x21", "sort-topk-4x16-f32"])
def test_value_shape_ops_build_for_gpus(case, target, on_each_device):
    """ocloc compiles them; the elements cross subgroups through SLM between workgroup barriers."""
    if on_each_device != "numpy":
        pytest.skip("a compile-only check: once")
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for {target} is installed")
    kern, args, consts, options, *_ = CASES[case](np.random.default_rng(0))
    isa = kern.warmup(*args, **consts, **options, target=target).asm["isa"]
    assert "sync.bar" in isa
