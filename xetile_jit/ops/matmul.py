"""`xetile.ops.matmul`: C = activation(A @ B + bias), the tutorial GEMM as an autotuned library op (issue 9).

Inputs f16, bf16, f32 or int8 (both the same), any M, N, K, A and B row- or column-major (a tile reads an array
in its memory order, so `bt.T` needs no copy). Accumulation is f32 (int8: i32); C's dtype is `out_dtype`,
default the accumulator's. `bias` is a length-N vector or a (1, N) array, added in the accumulator's type;
`activation` is None, "relu", "gelu" (the tanh form) or "silu", the last two on float accumulators.

Tuned over the workgroup tile, its split between subgroups (sg_layout, sg_data, generated with xetile.layouts:
one piece per subgroup, made of whole DPAS C blocks), the K tile and, for the tutorial's shape, A's load block
(inst_data: the default DPAS A block, or 16x16 messages that halve A's loads on PVC, then regrouped in registers),
per M, N, K, dtypes, memory orders, bias and activation. Not yet tuned: B's blocks and cooperative prefetch tiles.
"""
from __future__ import annotations

import numpy as np

from ..frontend import dsl as xt
from ..frontend.autotune import Config, autotune
from ..frontend.jit import kernel
from ..frontend.layout_space import layouts
from ..ir.attrs import Layout
from ..ir.types import dtype_of_numpy, float32, int32
from ..runtime.args import usm_interface

ACTIVATIONS = (None, "relu", "gelu", "silu")
GELU_C = 0.7978845608028654  # sqrt(2 / pi)
# (workgroup tile, piece of one subgroup, K tile, A's load blocks to try): the tutorial's 256x256 split in 32x64
# pieces, and smaller ones; None is the default block (layout completion's)
SHAPES = (((256, 256), (32, 64), 32, (None, (16, 16))), ((128, 256), (32, 64), 32, (None,)),
          ((256, 128), (32, 64), 32, (None,)), ((128, 128), (32, 32), 32, (None,)), ((64, 64), (16, 16), 16, (None,)))


def configs() -> list[Config]:
    """The search space: for each of SHAPES, the layouts of xetile.layouts that give each subgroup that piece."""
    result = []
    for (bm, bn), piece, bk, a_blocks in SHAPES:
        count = bm * bn // (piece[0] * piece[1])
        # the portable target's rules: built at import, before any device is chosen (each device's own rules
        # prune at the first launch)
        for sg_layout, sg_data in layouts([bm, bn], num_subgroups=count, target="cpu"):
            if list(sg_data) == list(piece) and [s * d for s, d in zip(sg_layout, sg_data)] == [bm, bn]:
                result += [Config(BM=bm, BN=bn, BK=bk, A_LAYOUT=a_layout(sg_layout, sg_data, bk, block),
                                  sg_layout=sg_layout, sg_data=sg_data) for block in a_blocks]
    return result


def a_layout(sg_layout, sg_data, bk: int, block) -> Layout | None:
    """A's tile layout with load block `block` (None: none given, the compiler's default): each subgroup reads
    the rows of its C piece, the whole K tile (as propagation from tile_mma gives A)."""
    return None if block is None else Layout(sg_layout, [sg_data[0], bk], inst_data=list(block))


@autotune(configs(), key=["M", "N", "K", "HAS_BIAS", "ACTIVATION"])
@kernel
def matmul_kernel(a, b, c, bias, M, N, K, BM: xt.constexpr, BN: xt.constexpr, BK: xt.constexpr,
                  A_LAYOUT: xt.constexpr, ACC: xt.constexpr, HAS_BIAS: xt.constexpr, ACTIVATION: xt.constexpr):
    m = xt.program_id(0) * BM
    n = xt.program_id(1) * BN
    ta = xt.init_tile(a, [m, 0], [BM, BK], layout=A_LAYOUT)
    tb = xt.init_tile(b, [0, n], [BK, BN])
    acc = xt.zeros([BM, BN], ACC)
    for k in range(0, K, BK):
        acc = xt.tile_mma(xt.load_tile(ta), xt.load_tile(tb), acc)
        ta = xt.update_tile_offset(ta, [0, BK])
        tb = xt.update_tile_offset(tb, [BK, 0])
    if HAS_BIAS:
        acc = acc + xt.load_tile(xt.init_tile(bias, [0, n], [1, BN])).to(ACC)
    if ACTIVATION == "relu":
        acc = xt.maximum(acc, 0)
    if ACTIVATION == "gelu":
        acc = 0.5 * acc * (1.0 + xt.tanh(GELU_C * (acc + 0.044715 * acc * acc * acc)))
    if ACTIVATION == "silu":
        acc = acc / (1.0 + xt.exp(-acc))
    xt.store_tile(xt.init_tile(c, [m, n], [BM, BN]), acc)


def matmul(a, b, c=None, *, bias=None, activation=None, out_dtype=None, device=None):
    """activation(a @ b + bias) into `c` (a new array of `a`'s kind, numpy or dpnp, when None); returns it."""
    (m, k), (k2, n) = shape_of(a), shape_of(b)
    in_dtype = dtype_of(a)
    if k != k2 or in_dtype != dtype_of(b):
        raise ValueError(f"matmul: a is {m}x{k} {in_dtype}, b {k2}x{n} {dtype_of(b)}; they need the same K and dtype")
    if in_dtype not in ("float16", "bfloat16", "float32", "int8"):
        raise ValueError(f"matmul: inputs are float16, bfloat16, float32 or int8, not {in_dtype}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"matmul: activation is one of {ACTIVATIONS}, not {activation!r}")
    acc = int32 if in_dtype == "int8" else float32
    if acc is int32 and activation in ("gelu", "silu"):
        raise ValueError(f"matmul: {activation} needs a float accumulator; int8 inputs accumulate in int32")
    if c is None:
        c = new_array(a, (m, n), np.dtype(out_dtype) if out_dtype is not None else acc.np_dtype)
    if bias is not None:
        bias = as_row(bias, n)
    grid = lambda meta: (-(-m // meta["BM"]), -(-n // meta["BN"]))  # noqa: E731
    # without a bias the kernel never reads its bias argument: c stands in for it
    matmul_kernel[grid](a, b, c, c if bias is None else bias, m, n, k, ACC=acc, HAS_BIAS=bias is not None,
                        ACTIVATION=activation or "", device=device)
    return c


def shape_of(array) -> tuple[int, ...]:
    usm = usm_interface(array)
    return tuple(usm["shape"]) if usm is not None else np.shape(array)


def dtype_of(array) -> str:
    usm = usm_interface(array)
    dtype = np.dtype(usm["typestr"]) if usm is not None else np.asarray(array).dtype
    found = dtype_of_numpy(dtype)
    return found.name if found is not None else str(dtype)


def as_row(bias, n: int):
    """A length-N vector or (1, N) array as a (1, N) array (a view)."""
    if tuple(shape_of(bias)) not in ((n,), (1, n)):
        raise ValueError(f"matmul: bias is a length-{n} vector or a (1, {n}) array, not {shape_of(bias)}")
    return bias.reshape(1, n)


def new_array(like, shape, dtype: np.dtype):
    """An uninitialised array of `like`'s kind: dpnp on its queue for USM arrays, numpy otherwise."""
    if usm_interface(like) is None:
        return np.empty(shape, dtype)
    import dpnp
    return dpnp.empty(shape, dtype=dtype, sycl_queue=like.sycl_queue)
