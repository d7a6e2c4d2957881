"""Verifier and tracer errors: every rule reachable from a user kernel, with the exact rule text in brackets,
the kernel's file:line and the offending source line in the message, raised before anything runs."""
from __future__ import annotations

import re
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import XETILE_DTYPE, assert_close, dtype_id, rand
from xetile_jit.target import code_budget
from xetile_jit.ir.cache_hints import RULE as CACHE_RULE
from xetile_jit.ir.core import walk
from xetile_jit.ir.xetile_ops import DISTRIBUTION_RULE, LoadTileOp

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)

SOURCE_LINES = Path(__file__).read_text().splitlines()
FILE_NAME = Path(__file__).name


def line_of(text: str) -> int:
    """The line number of the one line of this file whose stripped text is `text`."""
    hits = [i + 1 for i, line in enumerate(SOURCE_LINES) if line.strip() == text]
    assert len(hits) == 1, f"{text!r} is on {len(hits)} lines of {FILE_NAME}; make the offending line unique"
    return hits[0]


def expect_error(kern, args, kwargs, expected: str, source_line: str, grid=(1,)) -> str:
    """Launches `kern`; it must raise CompilationError whose message contains `expected`, names this file at the
    line of `source_line`, ends with that source line, and leaves every array argument untouched."""
    arrays = [a for a in list(args) + list(kwargs.values()) if isinstance(a, np.ndarray)]
    before = [a.copy() for a in arrays]
    with pytest.raises(xetile.CompilationError, match=re.escape(expected)) as info:
        kern[grid](*args, **kwargs)
    message = str(info.value)
    assert f"{FILE_NAME}:{line_of(source_line)}: " in message, message
    assert message.endswith("\n    " + source_line), message
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)
    return message


def f32_arrays(rng, *shapes):
    return [rand(rng, s, np.float32) for s in shapes]


@xetile.kernel
def mark(out):
    """Writes 7 to out[:8, :8]; kernels below call it first, so a kernel that ran would change `out`."""
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), 7.0)


# ---- init_tile ------------------------------------------------------------------------------------------

@xetile.kernel
def k_runtime_shape(x, out, M):
    mark(out)
    t = xetile.init_tile(x, [0, 0], [M, 8])
    xetile.store_tile(t, 1.0)


def test_tile_shape_static(rng):
    x, out = rand(rng, (16, 16), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_runtime_shape, (x, out, 8), {}, "[tile shape is static]",
                       "t = xetile.init_tile(x, [0, 0], [M, 8])")
    assert "init_tile: shape ['i32', 'int 8'] must be compile-time ints (constexpr)" in msg


@xetile.kernel
def k_shape_rank(x, out, SHAPE: xetile.constexpr):
    mark(out)
    t = xetile.init_tile(x, [0, 0], SHAPE)
    xetile.store_tile(t, 1.0)


def test_tile_shape_1d_or_2d(rng):
    x, out = rand(rng, (16, 16), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_shape_rank, (x, out), dict(SHAPE=[8, 8, 1]), "[XeTile tiles and vectors are 1-D or 2-D]",
                       "t = xetile.init_tile(x, [0, 0], SHAPE)")
    assert "init_tile: shape [8, 8, 1] must be 1-D or 2-D" in msg


@xetile.kernel
def k_vector_rank(x, out):
    mark(out)
    z = xetile.zeros([8, 8, 2], xetile.float32)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), z)


def test_vector_shape_1d_or_2d(rng):
    x, out = rand(rng, (16, 16), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_vector_rank, (x, out), {}, "[XeTile tiles and vectors are 1-D or 2-D]",
                       "z = xetile.zeros([8, 8, 2], xetile.float32)")
    assert "full: shape [8, 8, 2] must be 1-D or 2-D" in msg


@xetile.kernel
def k_order(x, out, ORDER: xetile.constexpr):
    mark(out)
    t = xetile.init_tile(x, [0, 0], [8, 8], order=ORDER)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), xetile.load_tile(t))


def test_order_matching_the_array_runs(rng):
    """The control: order equal to the array's own layout reads the logical 2-D view."""
    x, out = rand(rng, (16, 16), np.float32), np.zeros((8, 8), np.float32)
    k_order[(1,)](x, out, ORDER=[1, 0])
    assert_close(out, x[:8, :8])
    xt = rand(rng, (16, 16), np.float32)
    k_order[(1,)](xt.T, out, ORDER=[0, 1])
    assert_close(out, xt.T[:8, :8])


def test_order_inconsistent_with_row_major_array(rng):
    x, out = rand(rng, (16, 16), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_order, (x, out), dict(ORDER=[0, 1]), "[order is consistent with the base matrix layout]",
                       "t = xetile.init_tile(x, [0, 0], [8, 8], order=ORDER)")
    assert "xetile.init_tile: order = [0, 1] does not match the row-major base array" in msg


def test_order_inconsistent_with_column_major_array(rng):
    x, out = rand(rng, (16, 16), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_order, (x.T, out), dict(ORDER=[1, 0]), "[order is consistent with the base matrix layout]",
                       "t = xetile.init_tile(x, [0, 0], [8, 8], order=ORDER)")
    assert "xetile.init_tile: order = [1, 0] does not match the column-major base array" in msg


@xetile.kernel
def k_three_offsets(x, out):
    mark(out)
    t = xetile.init_tile(x, [0, 0, 0], [8, 8])
    xetile.store_tile(t, 1.0)


@xetile.kernel
def k_one_update_offset(x, out):
    mark(out)
    t = xetile.init_tile(x, [0, 0], [8, 8])
    t = xetile.update_tile_offset(t, [8])
    xetile.store_tile(t, 1.0)


def test_tile_offsets_one_per_dim(rng):
    x, out = rand(rng, (16, 16), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_three_offsets, (x, out), {}, "[one tile offset per dimension]",
                       "t = xetile.init_tile(x, [0, 0, 0], [8, 8])")
    assert "init_tile: offsets must be a list of 2 integers, one per dimension" in msg
    msg = expect_error(k_one_update_offset, (x, out), {}, "[one tile offset per dimension]",
                       "t = xetile.update_tile_offset(t, [8])")
    assert "update_tile_offset: offsets must be a list of 2 integers" in msg


def test_tile_element_type_rule_on_hand_built_ir():
    """init_tile always takes the array's element type, so this rule is unreachable from a kernel: check it on IR."""
    from xetile_jit.ir.core import Builder, FuncOp
    from xetile_jit.ir.types import IndexType, MemRefType, TileType
    from xetile_jit.ir.xetile_ops import InitTileOp
    from xetile_jit.ir import core_ops as C

    func = FuncOp("f", [MemRefType(xetile.float32)], ["x"], {})
    b = Builder(func.body)
    zero = b.create(C.ConstantOp, 0, IndexType()).result
    op = b.create(InitTileOp, func.args[0], [zero, zero], TileType((8, 8), xetile.float16))
    with pytest.raises(xetile.CompilationError,
                       match=re.escape("xetile.init_tile: tile element type f16 differs from the array's f32 "
                                       "[tile element type is the base matrix's]")):
        op.verify()


# ---- load_tile / store_tile / prefetch_tile -------------------------------------------------------------

@xetile.kernel
def k_int_padding(xi, out, PAD: xetile.constexpr):
    mark(out)
    ti = xetile.init_tile(xi, [4, 4], [8, 8])
    v = xetile.load_tile(ti, padding=PAD)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), v)


@pytest.mark.parametrize("dtype, pad", [(np.int32, -3), (np.int64, 2**63 - 1), (np.uint8, 255), (np.int8, -128)])
def test_int_padding_representable_runs(rng, dtype, pad):
    xi, out = rand(rng, (8, 8), dtype), np.zeros((8, 8), dtype)
    k_int_padding[(1,)](xi, out, PAD=pad)
    expected = np.full((8, 8), pad, dtype)
    expected[:4, :4] = xi[4:, 4:]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype, pad, mlir", [(np.int32, 0.5, "i32"), (np.uint8, 300, "ui8"), (np.uint8, -1, "ui8"),
                                              (np.int8, 128, "i8")])
def test_padding_not_representable(rng, dtype, pad, mlir):
    xi, out = rand(rng, (8, 8), dtype), np.zeros((8, 8), np.float32)
    msg = expect_error(k_int_padding, (xi, out), dict(PAD=pad), "[padding value has the tile's element type]",
                       "v = xetile.load_tile(ti, padding=PAD)")
    assert f"xetile.load_tile: padding {pad} is not representable in {mlir}" in msg


@xetile.kernel
def k_constant_range(out, VALUE: xetile.constexpr):
    mark(out)
    c = xetile.full([8, 8], VALUE, xetile.uint8)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), c)


def test_constant_not_representable():
    out = np.zeros((8, 8), np.float32)
    msg = expect_error(k_constant_range, (out,), dict(VALUE=256), "[constant value has its type]",
                       "c = xetile.full([8, 8], VALUE, xetile.uint8)")
    assert "arith.constant: 256 is not representable in vector<8x8xui8>" in msg


@xetile.kernel
def k_store_shape(x, out, SHAPE: xetile.constexpr):
    t = xetile.init_tile(out, [0, 0], [8, 8])
    xetile.store_tile(t, 7.0)
    xetile.store_tile(t, xetile.zeros(SHAPE, xetile.float32))


@pytest.mark.parametrize("shape", [[8, 4], [1, 8], [16, 8]], ids=str)
def test_store_tile_vector_dims_match_exactly(rng, shape):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_store_shape, (x, out), dict(SHAPE=shape), "[vector dims match the tile dims exactly]",
                       "xetile.store_tile(t, xetile.zeros(SHAPE, xetile.float32))")
    assert f"xetile.store_tile: value vector<{shape[0]}x{shape[1]}xf32> must have the tile's shape [8, 8]" in msg


@xetile.kernel
def k_prefetch(x, out, LOC: xetile.constexpr):
    mark(out)
    t = xetile.init_tile(x, [0, 0], [8, 8])
    xetile.prefetch_tile(t, locality=LOC)


@pytest.mark.parametrize("locality", [4, -1])
def test_prefetch_locality_out_of_range(rng, locality):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_prefetch, (x, out), dict(LOC=locality), "[prefetch locality hint is 0 to 3]",
                       "xetile.prefetch_tile(t, locality=LOC)")
    assert f"xetile.prefetch_tile: locality must be 0..3, got {locality}" in msg


@xetile.kernel
def k_cache_hints(x, out, LOAD: xetile.constexpr, STORE: xetile.constexpr):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]), cache=LOAD)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), v, cache=STORE)


@pytest.mark.parametrize("load, store, line, text", [
    ("write_back", None, "v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]), cache=LOAD)",
     "load_tile: load cache hint 'write_back' is not one of cached, uncached, streaming, read_invalidate"),
    (("read_invalidate", "uncached"), None, "v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]), cache=LOAD)",
     "load_tile: load cache hints (read_invalidate, uncached) are not one of"),
    (None, "cached", "xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), v, cache=STORE)",
     "store_tile: store cache hint 'cached' is not one of uncached, write_through, write_back, streaming"),
    (None, ("write_back", "uncached"), "xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), v, cache=STORE)",
     "store_tile: store cache hints (write_back, uncached) are not one of"),
], ids=["load-policy", "load-pair", "store-policy", "store-pair"])
def test_cache_hints_are_the_rfc_policies_in_legal_pairs(rng, load, store, line, text):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_cache_hints, (x, out), dict(LOAD=load, STORE=store), CACHE_RULE, line)
    assert text in msg


def test_cache_hints_of_the_wrong_kind_are_rejected_at_the_op():
    """The ops check their hints themselves (a pass could attach store hints to a load)."""
    from xetile_jit.ir.cache_hints import cache_hints
    func = k_cache_hints.warmup(np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32), LOAD="cached",
                                STORE="write_back", target="numpy").func
    load = next(op for op in walk(func.body) if isinstance(op, LoadTileOp))
    load.cache = cache_hints("store", "write_back")
    with pytest.raises(xetile.CompilationError, match=re.escape(f"store cache hints on a load [{CACHE_RULE}]")):
        load.verify()


# ---- tile_mma ------------------------------------------------------------------------------------------

@xetile.kernel
def k_mma_shapes(a, b, out, BK: xetile.constexpr):
    mark(out)
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [8, 16]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [BK, 8]))
    c = xetile.tile_mma(va, vb)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), c)


def test_mma_shapes_control_runs(rng):
    a, b = f32_arrays(rng, (16, 16), (16, 16))
    out = np.zeros((8, 8), np.float32)
    k_mma_shapes[(1,)](a, b, out, BK=16)
    assert_close(out, a[:8, :16] @ b[:16, :8], scale=10)


def test_mma_inner_dims(rng):
    a, b = f32_arrays(rng, (16, 16), (16, 16))
    out = np.zeros((8, 8), np.float32)
    msg = expect_error(k_mma_shapes, (a, b, out), dict(BK=8), "[tile_mma operand shapes]",
                       "c = xetile.tile_mma(va, vb)")
    assert "xetile.tile_mma: A is 8x16 but B is 8x8: inner dims differ" in msg


@xetile.kernel
def k_mma_types(a, b, out):
    mark(out)
    ta = xetile.load_tile(xetile.init_tile(a, [0, 0], [8, 8]))
    tb = xetile.load_tile(xetile.init_tile(b, [0, 0], [8, 8]))
    prod = xetile.tile_mma(ta, tb)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), prod)


@pytest.mark.parametrize("da, db, names", [
    (np.int16, np.int16, "i16 x i16"),
    (np.float16, ml_dtypes.bfloat16, "f16 x bf16"),
    (np.float32, np.float16, "f32 x f16"),
    (np.int32, np.int32, "i32 x i32"),
    (np.int8, np.float16, "i8 x f16"),
    (ml_dtypes.float8_e4m3fn, np.float16, "f8E4M3FN x f16"),
], ids=lambda v: v if isinstance(v, str) else dtype_id(v))
def test_mma_operand_element_types(rng, da, db, names):
    a, b = rand(rng, (8, 8), da), rand(rng, (8, 8), db)
    out = np.zeros((8, 8), np.float32)
    msg = expect_error(k_mma_types, (a, b, out), {}, "[tile_mma operand element types]",
                       "prod = xetile.tile_mma(ta, tb)")
    assert f"tile_mma: unsupported operand types {names}; takes f16 x f16, bf16 x bf16, f32 x f32, FP8 x FP8 " \
           "or 8-bit integers" in msg


@xetile.kernel
def k_mma_precision(a, b, out, PRECISION: xetile.constexpr):
    mark(out)
    ta = xetile.load_tile(xetile.init_tile(a, [0, 0], [8, 8]))
    tb = xetile.load_tile(xetile.init_tile(b, [0, 0], [8, 8]))
    prod = xetile.tile_mma(ta, tb, input_precision=PRECISION)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), prod)


@pytest.mark.parametrize("dtype, precision, expected", [
    (np.float16, "tf32", "input_precision 'tf32' takes f32 x f32 operands, not f16 x f16"),
    (np.int8, "tf32", "input_precision 'tf32' takes f32 x f32 operands, not i8 x i8"),
    (np.float32, "tf32x3", "input_precision 'tf32x3' is not one of 'ieee', 'tf32'"),
], ids=["f16", "i8", "tf32x3"])
def test_mma_input_precision(rng, dtype, precision, expected):
    a, b = rand(rng, (8, 8), dtype), rand(rng, (8, 8), dtype)
    out = np.zeros((8, 8), np.int32 if dtype == np.int8 else np.float32)
    msg = expect_error(k_mma_precision, (a, b, out), dict(PRECISION=precision), "[tile_mma input_precision]",
                       "prod = xetile.tile_mma(ta, tb, input_precision=PRECISION)")
    assert f"xetile.tile_mma: {expected}" in msg


@xetile.kernel
def k_mma_acc(a, b, out, ACC_SHAPE: xetile.constexpr, ACC_TYPE: xetile.constexpr):
    mark(out)
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [8, 8]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [8, 8]))
    acc = xetile.zeros(ACC_SHAPE, ACC_TYPE)
    d = xetile.tile_mma(va, vb, acc)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), d)


@pytest.mark.parametrize("dtype, acc_shape, acc_type, detail", [
    (np.float16, [8, 8], xetile.bfloat16, "result vector<8x8xbf16> must be vector<8x8xf32> or vector<8x8xf16>"),
    (ml_dtypes.bfloat16, [8, 8], xetile.float16, "result vector<8x8xf16> must be vector<8x8xf32> or vector<8x8xbf16>"),
    (np.int8, [8, 8], xetile.float32, "result vector<8x8xf32> must be vector<8x8xi32>"),
    (np.float16, [8, 4], xetile.float32, "accumulator vector<8x4xf32> must be vector<8x8xf32>"),
], ids=["f16-acc", "bf16-acc", "i8-f32-acc", "acc-shape"])
def test_mma_accumulator_type(rng, dtype, acc_shape, acc_type, detail):
    a, b = rand(rng, (8, 8), dtype), rand(rng, (8, 8), dtype)
    out = np.zeros((8, 8), np.float32)
    msg = expect_error(k_mma_acc, (a, b, out), dict(ACC_SHAPE=acc_shape, ACC_TYPE=acc_type),
                       "[tile_mma accumulator type]", "d = xetile.tile_mma(va, vb, acc)")
    assert f"xetile.tile_mma: {detail}" in msg


@xetile.kernel
def k_mma_multiline(a, b, out):
    mark(out)
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [8, 16]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [8, 8]))
    result_of_multiline_call = xetile.tile_mma(
        va,
        vb)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), result_of_multiline_call)


def test_error_in_multiline_call_names_the_call_line(rng):
    """The op is the call, so the location is the call's first line, not the line of its last argument."""
    a, b = f32_arrays(rng, (16, 16), (16, 16))
    out = np.zeros((8, 8), np.float32)
    expect_error(k_mma_multiline, (a, b, out), {}, "[tile_mma operand shapes]",
                 "result_of_multiline_call = xetile.tile_mma(")


# ---- tile_transpose / tile_reduce / tile_broadcast ------------------------------------------------------

@xetile.kernel
def k_transpose(x, out, PERM: xetile.constexpr):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    w = xetile.tile_transpose(v, PERM)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), w)


def test_transpose_control_runs(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    k_transpose[(1,)](x, out, PERM=[1, 0])
    assert_close(out, x.T)


@pytest.mark.parametrize("perm", [[0, 0], [1, 2], [1]], ids=str)
def test_transpose_permutation(rng, perm):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_transpose, (x, out), dict(PERM=perm), "[tile_transpose permutes the two dims]",
                       "w = xetile.tile_transpose(v, PERM)")
    assert f"xetile.tile_transpose: permutation {perm} must be a permutation of [0, 1]" in msg


@xetile.kernel
def k_reduce(x, out, KIND: xetile.constexpr, DIMS: xetile.constexpr):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    r = xetile.tile_reduce(KIND, v, DIMS)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), xetile.tile_broadcast(r, DIMS, [8, 8]))


def test_reduce_control_runs(rng):
    x, out = rand(rng, (8, 8), np.int32), np.zeros((8, 8), np.int32)
    k_reduce[(1,)](x, out, KIND="and", DIMS=[1])
    assert_close(out, np.broadcast_to(np.bitwise_and.reduce(x, axis=1, keepdims=True), (8, 8)))


@pytest.mark.parametrize("kind, dtype", [("and", np.float32), ("or", np.float16), ("xor", np.float32),
                                         ("maximum", np.int32), ("minimum", np.uint8)], ids=str)
def test_reduce_kind_per_element_type(rng, kind, dtype):
    x, out = rand(rng, (8, 8), dtype), np.zeros((8, 8), dtype)
    msg = expect_error(k_reduce, (x, out), dict(KIND=kind, DIMS=[1]), "[tile_reduce kinds per element type]",
                       "r = xetile.tile_reduce(KIND, v, DIMS)")
    assert f"xetile.tile_reduce: kind '{kind}' does not apply to {XETILE_DTYPE[np.dtype(dtype)].mlir}" in msg


def test_reduce_unknown_kind(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_reduce, (x, out), dict(KIND="sum", DIMS=[1]), "[tile_reduce kinds]",
                       "r = xetile.tile_reduce(KIND, v, DIMS)")
    assert ("xetile.tile_reduce: unknown kind 'sum'; kinds are add, mul, max, min, maximum, minimum, and, or, "
            "xor") in msg


@pytest.mark.parametrize("dims", [[2], [0, 0], []], ids=str)
def test_reduce_dims(rng, dims):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_reduce, (x, out), dict(KIND="add", DIMS=dims), "[tile_reduce dims]",
                       "r = xetile.tile_reduce(KIND, v, DIMS)")
    assert f"xetile.tile_reduce: reduction dims {dims} must be distinct dims of the 2-D vector" in msg


@xetile.kernel
def k_broadcast(x, out, SRC: xetile.constexpr, DIMS: xetile.constexpr):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], SRC))
    wide = xetile.tile_broadcast(v, DIMS, [8, 16])
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16]), wide)


def test_broadcast_control_runs(rng):
    x, out = rand(rng, (8, 16), np.float32), np.zeros((8, 16), np.float32)
    k_broadcast[(1,)](x, out, SRC=[8, 1], DIMS=[1])
    assert_close(out, np.broadcast_to(x[:, :1], (8, 16)))


@pytest.mark.parametrize("src, dims, detail", [
    ([8, 8], [1], "dim 1 of vector<8x8xf32> is broadcast so it must be 1"),
    ([1, 8], [0], "dim 1 of vector<1x8xf32> is not broadcast so it must equal 16"),
    ([4, 1], [1], "dim 0 of vector<4x1xf32> is not broadcast so it must equal 8"),
], ids=["broadcast-dim-not-1", "kept-dim-differs", "kept-dim0-differs"])
def test_broadcast_source_shape(rng, src, dims, detail):
    x, out = rand(rng, (8, 16), np.float32), np.zeros((8, 16), np.float32)
    msg = expect_error(k_broadcast, (x, out), dict(SRC=src, DIMS=dims), "[tile_broadcast source shape]",
                       "wide = xetile.tile_broadcast(v, DIMS, [8, 16])")
    assert f"xetile.tile_broadcast: {detail}" in msg


@pytest.mark.parametrize("dims", [[2], []], ids=str)
def test_broadcast_dims(rng, dims):
    x, out = rand(rng, (8, 16), np.float32), np.zeros((8, 16), np.float32)
    msg = expect_error(k_broadcast, (x, out), dict(SRC=[8, 1], DIMS=dims), "[tile_broadcast dims]",
                       "wide = xetile.tile_broadcast(v, DIMS, [8, 16])")
    assert f"xetile.tile_broadcast: broadcast dims {dims} must be dims of the 2-D vector" in msg


# ---- atomic_rmw_tile ------------------------------------------------------------------------------------

@xetile.kernel
def k_atomic(x, out, KIND: xetile.constexpr):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    old = xetile.atomic_rmw_tile(KIND, v, xetile.init_tile(x, [0, 0], [8, 8]))


def test_atomic_control_runs(rng):
    x, out = rand(rng, (8, 8), np.int32), np.zeros((8, 8), np.float32)
    expected = x + x
    k_atomic[(1,)](x, out, KIND="add")
    assert_close(x, expected)


@pytest.mark.parametrize("dtype, name", [(np.int8, "i8"), (np.int16, "i16"), (np.uint8, "ui8"), (np.uint16, "ui16"),
                                         (np.bool_, "i1")], ids=lambda v: str(v))
def test_atomic_element_types(rng, dtype, name):
    x, out = rand(rng, (8, 8), dtype), np.zeros((8, 8), np.float32)
    msg = expect_error(k_atomic, (x, out), dict(KIND="add"), "[atomic_rmw_tile element types]",
                       "old = xetile.atomic_rmw_tile(KIND, v, xetile.init_tile(x, [0, 0], [8, 8]))")
    assert (f"xetile.atomic_rmw_tile: element type {name} has no atomics; supported: f16, bf16, f32, i32, ui32, i64, "
            "ui64") in msg


@pytest.mark.parametrize("dtype, kind, valid", [
    (np.float32, "and", "add, mul, max, min, xchg"),
    (np.float16, "xor", "add, mul, max, min, xchg"),
    (np.int32, "nand", "add, mul, max, min, and, or, xor, xchg"),
], ids=["and-f32", "xor-f16", "nand-i32"])
def test_atomic_kinds(rng, dtype, kind, valid):
    x, out = rand(rng, (8, 8), dtype), np.zeros((8, 8), np.float32)
    name = XETILE_DTYPE[np.dtype(dtype)].mlir
    msg = expect_error(k_atomic, (x, out), dict(KIND=kind), "[atomic_rmw_tile kinds]",
                       "old = xetile.atomic_rmw_tile(KIND, v, xetile.init_tile(x, [0, 0], [8, 8]))")
    assert f"xetile.atomic_rmw_tile: kind '{kind}' does not apply to {name}; kinds for it: {valid}" in msg


# ---- element-wise ops and grid queries ------------------------------------------------------------------

@xetile.kernel
def k_bool_shift(x, out):
    mark(out)
    m = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8])) > 0.0
    shifted = m << m


def test_elementwise_operand_types(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_bool_shift, (x, out), {}, "[element-wise op operand types]", "shifted = m << m")
    assert "arith.shli: operand type vector<8x8xi1> must have an integer element type" in msg


@xetile.kernel
def k_program_id_axis(x, out):
    mark(out)
    pid = xetile.program_id(3)


def test_grid_axis(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_program_id_axis, (x, out), {}, "[grid has at most 3 dimensions]",
                       "pid = xetile.program_id(3)")
    assert "gpu.block_id: axis must be 0, 1 or 2, got 3" in msg


# ---- layouts (RFC distribution rules) -------------------------------------------------------------------

@xetile.kernel
def k_layout(x, out, SL: xetile.constexpr, SD: xetile.constexpr, INST: xetile.constexpr,
             LL: xetile.constexpr, LD: xetile.constexpr):
    mark(out)
    t = xetile.init_tile(x, [0, 0], [32, 32], layout=xetile.Layout(SL, SD, inst_data=INST, lane_layout=LL, lane_data=LD))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [32, 32]), xetile.load_tile(t))


LAYOUT_LINE = ("t = xetile.init_tile(x, [0, 0], [32, 32], layout=xetile.Layout(SL, SD, inst_data=INST, "
               "lane_layout=LL, lane_data=LD))")


def layout_args(sl, sd, inst=None, ll=None, ld=None):
    return dict(SL=sl, SD=sd, INST=inst, LL=ll, LD=ld)


@pytest.mark.parametrize("layout", [
    layout_args([2, 2], [16, 16]),
    layout_args([4, 1], [16, 32]),                     # sg_layout x sg_data = 64, a multiple of 32 (wraps)
    layout_args([1, 1], [32, 32]),
    layout_args([2, 2], [16, 16], [8, 16], [1, 16], [1, 1]),
    layout_args([2, 2], [16, 16], [2, 8], [2, 8], [1, 1]),  # narrow blocks: rows spread over the lanes
], ids=["2x2", "wrap", "1x1", "full", "narrow-blocks"])
def test_valid_layouts_run(rng, layout):
    x, out = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    k_layout[(1,)](x, out, **layout)
    assert_close(out, x)


@pytest.mark.parametrize("layout, rule, detail", [
    (layout_args([2, 2], [12, 16]), "workgroup to subgroup distribution rule",
     "sg_data[0] = 12 does not divide the tile dim 32"),
    (layout_args([2, 2], [16, 64]), "workgroup to subgroup distribution rule",
     "sg_data[1] = 64 does not divide the tile dim 32"),
    (layout_args([3, 2], [8, 16]), "workgroup to subgroup distribution rule",
     "sg_layout[0] x sg_data[0] = 24 must divide the tile dim 32 or be a multiple of it"),
    (layout_args([2, 3], [16, 16]), "workgroup to subgroup distribution rule",
     "sg_layout[1] x sg_data[1] = 48 must divide the tile dim 32 or be a multiple of it"),
    (layout_args([2, 2], [16, 16], [6, 16]), "sg_data is divisible by inst_data",
     "inst_data[0] = 6 does not divide sg_data[0] = 16"),
    (layout_args([2, 2], [16, 16], [8, 16], [1, 16], [1, 2]), "inst_data is divisible by lane_layout x lane_data",
     "lane_layout[1] x lane_data[1] = 32 does not divide inst_data[1] = 16"),
    (layout_args([2, 2], [16, 16], None, [1, 32]), "inst_data is divisible by lane_layout x lane_data",
     "lane_layout[1] x lane_data[1] = 32 does not divide inst_data[1] = 16"),
    (layout_args([2, 2], [16, 16], None, [2, 4], [2, 2]),
     "lane_data elements are contiguous and come from a single dimension", "lane_data [2, 2] spans two dimensions"),
    (layout_args([2, 2, 1], [16, 16, 1]), "layout rank matches the tile",
     "tile layout #xetile.wg_map<sg_layout = [2, 2, 1], sg_data = [16, 16, 1]> has rank 3 but the tile is 2-D"),
    (layout_args([4], [8]), "layout rank matches the tile",
     "tile layout #xetile.wg_map<sg_layout = [4], sg_data = [8]> has rank 1 but the tile is 2-D"),
], ids=["sg-data-dim0", "sg-data-dim1", "unit-dim0", "unit-dim1", "inst-data", "lane-unit", "lane-unit-no-inst",
        "lane-data-2d", "rank-3", "rank-1"])
def test_init_tile_layout_rules(rng, layout, rule, detail):
    x, out = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    msg = expect_error(k_layout, (x, out), layout, f"[{rule}]", LAYOUT_LINE)
    assert f"xetile.init_tile: {detail} [{rule}]" in msg


@xetile.kernel
def k_mma_anchor(a, b, out):
    mark(out)
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [32, 16]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [16, 32]))
    anchored = xetile.tile_mma(va, vb)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [32, 32]), anchored)


def test_mma_anchor_valid_runs(rng):
    a, b = rand(rng, (32, 16), np.float16), rand(rng, (16, 32), np.float16)
    out = np.zeros((32, 32), np.float32)
    k_mma_anchor[(1,)](a, b, out, sg_layout=[2, 2], sg_data=[16, 16])
    assert_close(out, a.astype(np.float32) @ b.astype(np.float32), scale=10)


@pytest.mark.parametrize("sg_layout, sg_data, rule, detail", [
    ([2, 2], [12, 16], "workgroup to subgroup distribution rule", "sg_data[0] = 12 does not divide the result dim 32"),
    ([2, 3], [16, 16], "workgroup to subgroup distribution rule",
     "sg_layout[1] x sg_data[1] = 48 must divide the result dim 32 or be a multiple of it"),
    ([4], [8], "layout rank matches the tile",
     "result layout #xetile.wg_map<sg_layout = [4], sg_data = [8]> has rank 1 but the result is 2-D"),
], ids=["sg-data", "unit", "rank"])
def test_mma_anchor_layout_rules(rng, sg_layout, sg_data, rule, detail):
    a, b = rand(rng, (32, 16), np.float16), rand(rng, (16, 32), np.float16)
    out = np.zeros((32, 32), np.float32)
    msg = expect_error(k_mma_anchor, (a, b, out), dict(sg_layout=sg_layout, sg_data=sg_data), f"[{rule}]",
                       "anchored = xetile.tile_mma(va, vb)")
    assert f"xetile.tile_mma: {detail} [{rule}]" in msg


@xetile.kernel
def k_two_layouts(x, out, SL2: xetile.constexpr, SD2: xetile.constexpr):
    mark(out)
    t1 = xetile.init_tile(x, [0, 0], [32, 32], layout=xetile.Layout([2, 2], [16, 16]))
    t2 = xetile.init_tile(out, [0, 0], [32, 32], layout=xetile.Layout(SL2, SD2))
    xetile.store_tile(t2, xetile.load_tile(t1))


def test_same_subgroup_count_runs(rng):
    x, out = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    k_two_layouts[(1,)](x, out, SL2=[4, 1], SD2=[8, 32])     # 4 subgroups in both layouts
    assert_close(out, x)


SUBGROUP_RULE = "[prod(sg_layout) is the same for every layout of a kernel]"


def test_subgroup_count_differs_between_tiles(rng):
    x, out = rand(rng, (32, 32), np.float32), np.zeros((32, 32), np.float32)
    msg = expect_error(k_two_layouts, (x, out), dict(SL2=[1, 8], SD2=[32, 4]), SUBGROUP_RULE,
                       "t2 = xetile.init_tile(out, [0, 0], [32, 32], layout=xetile.Layout(SL2, SD2))")
    assert ("xetile.init_tile: layout #xetile.wg_map<sg_layout = [1, 8], sg_data = [32, 4]> has 8 subgroups but "
            "#xetile.wg_map<sg_layout = [2, 2], sg_data = [16, 16]> has 4") in msg


@xetile.kernel
def k_layout_and_anchor(a, b, out):
    mark(out)
    ta = xetile.init_tile(a, [0, 0], [32, 16], layout=xetile.Layout([2, 2], [16, 16]))
    va = xetile.load_tile(ta)
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [16, 32]))
    mixed = xetile.tile_mma(va, vb)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [32, 32]), mixed)


def test_subgroup_count_differs_between_tile_and_mma_anchor(rng):
    a, b = rand(rng, (32, 16), np.float16), rand(rng, (16, 32), np.float16)
    out = np.zeros((32, 32), np.float32)
    k_layout_and_anchor[(1,)](a, b, out, sg_layout=[1, 4], sg_data=[32, 8])  # 4 and 4: fine
    assert_close(out, a.astype(np.float32) @ b.astype(np.float32), scale=10)
    out[:] = 0
    msg = expect_error(k_layout_and_anchor, (a, b, out), dict(sg_layout=[4, 4], sg_data=[8, 8]), SUBGROUP_RULE,
                       "mixed = xetile.tile_mma(va, vb)")
    assert "has 16 subgroups but #xetile.wg_map<sg_layout = [2, 2], sg_data = [16, 16]> has 4" in msg


# ---- tracer errors ---------------------------------------------------------------------------------------

@xetile.kernel
def k_while(x, out, n):
    mark(out)
    while xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8])) > n:
        n = n - 1


@xetile.kernel
def k_constexpr_while(x, out, N: xetile.constexpr):
    i = 0
    while i < N:
        xetile.store_tile(xetile.init_tile(out, [0, i * 8], [8, 8]), i + 1.0)
        i += 1


def test_while_on_a_tile(rng):
    """A while condition is one value for the workgroup: a scalar or a one-element vector, not a tile."""
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_while, (x, out, 3), {},
                 "a condition must be a scalar or a one-element vector, the same for the whole workgroup, got "
                 "vector<8x8xi1>", "while xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8])) > n:")


def test_while_on_constexpr_unrolls():
    out = np.zeros((8, 24), np.float32)
    k_constexpr_while[(1,)](out, out, N=3)
    np.testing.assert_array_equal(out, np.repeat(np.array([1.0, 2.0, 3.0], np.float32), 8)[None, :].repeat(8, 0))


def python_helper(v):
    return v + 1.0


@xetile.kernel
def k_python_call(x, out):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    w = python_helper(v)


def test_arbitrary_python_function(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_python_call, (x, out), {},
                 "calls to arbitrary Python functions are not supported in a kernel: 'python_helper' "
                 "(call xetile functions or other @xetile.kernel functions)", "w = python_helper(v)")


@xetile.kernel
def k_list_of_tiles(x, out):
    mark(out)
    tiles = [xetile.init_tile(x, [0, 0], [8, 8]), xetile.init_tile(x, [8, 0], [8, 8])]


def test_list_of_tiles(rng):
    x, out = rand(rng, (16, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_list_of_tiles, (x, out), {},
                 "Python lists of tiles or vectors are not supported; use one variable per tile",
                 "tiles = [xetile.init_tile(x, [0, 0], [8, 8]), xetile.init_tile(x, [8, 0], [8, 8])]")


@xetile.kernel
def k_carried_type_change(x, out, K):
    mark(out)
    tx = xetile.init_tile(x, [0, 0], [8, 8])
    acc = xetile.zeros([8, 8], xetile.float16)
    for kk in range(0, K, 8):
        acc = acc + xetile.load_tile(tx)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), acc)


def test_loop_carried_type_change(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_carried_type_change, (x, out, 16), {},
                 "loop-carried 'acc' is vector<8x8xf16> before the loop but vector<8x8xf32> after an iteration; "
                 "convert it (e.g. `.to(...)`) so the types agree", "for kk in range(0, K, 8):")


@xetile.kernel
def k_loop_local(x, out, K):
    mark(out)
    for j in range(K):
        tmp = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), tmp)


def test_name_defined_in_loop_used_after(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    for_line = line_of("for j in range(K):")
    expect_error(k_loop_local, (x, out, 2), {},
                 f"'tmp' is defined inside the loop at line {for_line} and is not available after it; "
                 "assign it before the loop to carry it",
                 "xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), tmp)")


@xetile.kernel
def k_shapes(x, out):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    h = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 4]))
    bad_sum = v + h


def test_vector_shapes_incompatible(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_shapes, (x, out), {},
                 "vector shapes (8, 8) and (8, 4) are not compatible: dims must be equal or 1, aligned at the last dim (numpy broadcasting)", "bad_sum = v + h")


@xetile.kernel
def k_if_vector(x, out):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    if v > 0.0:
        v = v + 1.0


def test_if_on_vector(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_if_vector, (x, out), {},
                 "a condition must be a scalar or a one-element vector, the same for the whole workgroup, got "
                 "vector<8x8xi1>; use xetile.where for vectors", "if v > 0.0:")


@xetile.kernel
def k_index_vector(x, out):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    first = v[0]


def test_indexing_vector(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_index_vector, (x, out), {},
                 "indexing vector<8x8xf32> with (0,): a vector takes one slice a dim with constant bounds, e.g. "
                 "v[2:6] or v[:, 0:8] (an element is the 1-element slice v[i:i+1])", "first = v[0]")


@xetile.kernel
def k_returns_value(x, out):
    mark(out)
    returned_vector = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    return returned_vector


def test_kernel_returning_a_value(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_returns_value, (x, out), {}, "kernel k_returns_value must not return a value",
                 "return returned_vector")


# ---- argument checks of the xetile functions (no RFC rule: a wrong kind of argument) ----------------------

@xetile.kernel
def k_bad_arg(x, out, n, WHICH: xetile.constexpr):
    mark(out)
    t = xetile.init_tile(x, [0, 0], [8, 8])
    v = xetile.load_tile(t)
    if WHICH == "base":
        bad = xetile.init_tile(n, [0, 0], [8, 8])
    if WHICH == "tile":
        bad = xetile.load_tile(v)
    if WHICH == "vector":
        bad = xetile.tile_mma(t, v)
    if WHICH == "padding":
        bad = xetile.load_tile(t, padding=n)
    if WHICH == "layout":
        bad = xetile.init_tile(x, [0, 0], [8, 8], layout=[2, 2])
    if WHICH == "op_layout":
        bad = xetile.tile_reduce("add", v, [1], layout=(2, 2))
    if WHICH == "convert_layout":
        bad = xetile.convert_layout(v, None)
    if WHICH == "element":
        bad = x[1]
    if WHICH == "dtype":
        bad = xetile.zeros([8, 8], "float32")
    if WHICH == "offset":
        bad = xetile.init_tile(x, [0, 1.5], [8, 8])


@pytest.mark.parametrize("which, line, expected", [
    ("base", "bad = xetile.init_tile(n, [0, 0], [8, 8])",
     "init_tile: base must be an array argument of the kernel or an alloc_slm buffer, got i32"),
    ("tile", "bad = xetile.load_tile(v)", "load_tile: expected a tile made by init_tile, got vector<8x8xf32>"),
    ("vector", "bad = xetile.tile_mma(t, v)", "tile_mma: expected a 2-D vector, got !xetile.tile<8x8xf32>"),
    ("padding", "bad = xetile.load_tile(t, padding=n)", "load_tile: padding must be a compile-time number, got i32"),
    ("layout", "bad = xetile.init_tile(x, [0, 0], [8, 8], layout=[2, 2])",
     "init_tile: layout must be an xetile.Layout, got list [2, 2]"),
    ("op_layout", 'bad = xetile.tile_reduce("add", v, [1], layout=(2, 2))',
     "tile_reduce: layout must be an xetile.Layout, got tuple (2, 2)"),
    ("convert_layout", "bad = xetile.convert_layout(v, None)",
     "convert_layout: layout must be an xetile.Layout, got NoneType None"),
    ("element", "bad = x[1]", "an element of a 2-D array takes 2 indices, one per dim, got 1 [memref.load has one "
     "index per array dim]"),
    ("dtype", 'bad = xetile.zeros([8, 8], "float32")',
     "full: dtype must be an xetile dtype such as xetile.float32, got str 'float32'"),
    ("offset", "bad = xetile.init_tile(x, [0, 1.5], [8, 8])", "tile offsets must be integers, got 1.5"),
])
def test_xetile_function_argument_checks(rng, which, line, expected):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_bad_arg, (x, out, 3), dict(WHICH=which), expected, line)


@xetile.kernel
def square_copy(x, y, N: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [N, N]))  # 512 subgroups hold N / 512 rows each
    xetile.store_tile(xetile.init_tile(y, [0, 0], [N, N]), v)


def test_register_budget_rejects_huge_tiles(rng):
    """Unchecked, a 4096x4096 f32 tile took 320 s and 8 GB to compile; code generation rejects it at once, after
    layout propagation, at its line (target/code_budget.py), even spread over the most subgroups a default
    layout takes (512 on cpu, whose workgroups take 8192 work-items). The numpy interpreter generates no code and
    takes any tile."""
    x, y = f32_arrays(rng, (8, 8), (8, 8))
    source = "v = xetile.load_tile(xetile.init_tile(x, [0, 0], [N, N]))  # 512 subgroups hold N / 512 rows each"
    start = time.perf_counter()
    with pytest.raises(xetile.CompilationError) as info:
        square_copy.warmup(x, y, N=4096, target="cpu")
    assert time.perf_counter() - start < 2
    assert str(info.value) == (
        f"{Path(__file__)}:{line_of(source)}: xegpu.load_nd: each subgroup holds a 8x4096 f32 value (128 KiB); "
        "the register budget is 4 x target cpu's register file (256 GRF x 64 B) = 64 KiB per value. Use smaller "
        "tiles or spread them over more subgroups (the launch option num_subgroups=, or layout=xetile.Layout("
        "sg_layout, sg_data))\n    " + source)
    square_copy[(1,)](x, y, N=128)
    np.testing.assert_array_equal(y, x)


def test_code_cap(monkeypatch, tmp_path):
    """The LLVM IR of a kernel is capped (target/code_budget.py); here the cap is lowered to 50 instructions."""
    monkeypatch.setattr(code_budget, "MAX_LLVM_INSTRUCTIONS", 50)
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))  # compile, do not take a cached module
    x = np.zeros((8, 8), np.float32)
    with pytest.raises(xetile.CompilationError, match=r"^kernel square_copy: its LLVM IR has \d+ instructions; the "
                                                      r"code cap is 50\."):
        square_copy.warmup(x, x, N=8, target="cpu")


@xetile.kernel
def k_op_layouts(x, out, WHICH: xetile.constexpr):
    mark(out)
    t = xetile.init_tile(x, [0, 0], [16, 32], layout=xetile.Layout([2, 1], [8, 32]))
    if WHICH == "rank":
        r = xetile.tile_reduce("add", xetile.load_tile(t), [1], layout=xetile.Layout([2], [8]))
    if WHICH == "distribution":
        r = xetile.tile_transpose(xetile.load_tile(t), layout=xetile.Layout([2, 1], [8, 6]))
    if WHICH == "tile":
        r = xetile.load_tile(t, layout=xetile.Layout([1, 2], [16, 16]))
    if WHICH == "count":
        r = xetile.tile_reduce("add", xetile.load_tile(t), [1], layout=xetile.Layout([4, 1], [4, 1]))


@pytest.mark.parametrize("which, rule, line, detail", [
    ("rank", "layout rank matches the tile",
     'r = xetile.tile_reduce("add", xetile.load_tile(t), [1], layout=xetile.Layout([2], [8]))', "has rank 1"),
    ("distribution", DISTRIBUTION_RULE,
     "r = xetile.tile_transpose(xetile.load_tile(t), layout=xetile.Layout([2, 1], [8, 6]))",
     "sg_data[1] = 6 does not divide the result dim 16"),
    ("tile", "a load shares its tile's layout", "r = xetile.load_tile(t, layout=xetile.Layout([1, 2], [16, 16]))",
     "the tile's layout is #xetile.wg_map<sg_layout = [2, 1], sg_data = [8, 32]>"),
    ("count", "prod(sg_layout) is the same for every layout of a kernel",
     'r = xetile.tile_reduce("add", xetile.load_tile(t), [1], layout=xetile.Layout([4, 1], [4, 1]))',
     "has 4 subgroups"),
], ids=["rank", "distribution", "tile", "count"])
def test_op_layouts_follow_the_layout_rules(rng, which, rule, line, detail):
    """A layout given to an op is checked like one given to init_tile, at the op."""
    x, out = rand(rng, (16, 32), np.float32), np.zeros((16, 32), np.float32)
    msg = expect_error(k_op_layouts, (x, out), dict(WHICH=which), f"[{rule}]", line)
    assert detail in msg


# ---- arrays of any rank, 1-D tiles, arange, shape casts, base_shape/base_strides --------------------------------

@xetile.kernel
def k_tile_rank_over_array(w, out):
    mark(out)
    t = xetile.init_tile(w, [0], [8, 8])
    xetile.store_tile(t, 1.0)


def test_tile_spans_at_most_the_array_dims(rng):
    w, out = rand(rng, 16, np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_tile_rank_over_array, (w, out), {}, "[a tile spans at most the array's dims]",
                       "t = xetile.init_tile(w, [0], [8, 8])")
    assert "init_tile: a 2-D tile of a 1-D array" in msg


@xetile.kernel
def k_arange(out, START: xetile.constexpr, END: xetile.constexpr):
    mark(out)
    r = xetile.arange(START, END)


@xetile.kernel
def k_runtime_arange(out, n):
    mark(out)
    r = xetile.arange(0, n)


def test_arange_bounds_static_and_ordered():
    out = np.zeros((8, 8), np.float32)
    msg = expect_error(k_runtime_arange, (out, 8), {}, "[vector shape is static]", "r = xetile.arange(0, n)")
    assert "arange: start and end must be compile-time ints (constexpr), got int 0 and i32" in msg
    msg = expect_error(k_arange, (out,), dict(START=4, END=4), "arange: end 4 must exceed start 4",
                       "r = xetile.arange(START, END)")


@xetile.kernel
def k_reshape(x, out, SHAPE: xetile.constexpr):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [4, 8]))
    r = v.reshape(SHAPE)


def test_reshape_keeps_the_element_count(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_reshape, (x, out), dict(SHAPE=[4, 4]), "[vector.shape_cast keeps the element count]",
                       "r = v.reshape(SHAPE)")
    assert "reshape: vector<4x8xf32> has 32 elements, shape [4, 4] 16" in msg
    msg = expect_error(k_reshape, (x, out), dict(SHAPE=[2, 2, 8]), "[XeTile tiles and vectors are 1-D or 2-D]",
                       "r = v.reshape(SHAPE)")
    assert "reshape: shape [2, 2, 8] must be 1-D or 2-D" in msg


@xetile.kernel
def k_expand_dims(x, out, AXIS: xetile.constexpr):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [4, 8]))
    e = xetile.expand_dims(v, AXIS)


def test_expand_dims_takes_a_1d_vector(rng):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    msg = expect_error(k_expand_dims, (x, out), dict(AXIS=0), "[XeTile tiles and vectors are 1-D or 2-D]",
                       "e = xetile.expand_dims(v, AXIS)")
    assert "expand_dims: axis 0 of vector<4x8xf32>: takes a 1-D vector and axis 0 or 1" in msg


@xetile.kernel
def k_broadcast_to(x, out, SHAPE: xetile.constexpr):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [4, 1]))
    b = xetile.broadcast_to(v, SHAPE)


@pytest.mark.parametrize("shape", [[4, 8, 2], [8, 8], [4]], ids=str)
def test_broadcast_to_follows_numpy(rng, shape):
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    rule = "[XeTile tiles and vectors are 1-D or 2-D]" if len(shape) == 3 else "[numpy broadcasting: dims equal or 1]"
    msg = expect_error(k_broadcast_to, (x, out), dict(SHAPE=shape), rule, "b = xetile.broadcast_to(v, SHAPE)")
    if len(shape) < 3:
        assert f"broadcast_to: cannot broadcast vector<4x1xf32> to {shape}" in msg


@xetile.kernel
def k_base_view(flat, out, SHAPE: xetile.constexpr, STRIDES: xetile.constexpr):
    mark(out)
    t = xetile.init_tile(flat, [0, 0], [8, 8], base_shape=SHAPE, base_strides=STRIDES)


def test_base_shape_and_strides_rules(rng):
    flat, out = rand(rng, 64, np.float32), np.zeros((8, 8), np.float32)
    line = "t = xetile.init_tile(flat, [0, 0], [8, 8], base_shape=SHAPE, base_strides=STRIDES)"
    msg = expect_error(k_base_view, (flat, out), dict(SHAPE=[8, 8], STRIDES=None),
                       "[the dynamic-shape init_tile views a 2-D matrix]", line)
    assert "init_tile: base_shape and base_strides go together, two entries each" in msg
    msg = expect_error(k_base_view, (flat, out), dict(SHAPE=[4, 4], STRIDES=[8, 2]),
                       "[the innermost stride of the base matrix is 1]", line)
    assert "init_tile: base_strides ['int 8', 'int 2'] need a compile-time 1" in msg


@xetile.kernel
def k_view_past_the_array(flat, out):
    t = xetile.init_tile(flat, [0, 0], [8, 8], base_shape=[8, 8], base_strides=[8, 1])
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), xetile.load_tile(t))


def test_a_view_past_the_array_is_reported_by_the_interpreter(rng, on_each_device):
    if on_each_device != "numpy":
        pytest.skip("a view past the array is the kernel's bug; only the interpreter checks it")
    flat, out = rand(rng, 60, np.float32), np.zeros((8, 8), np.float32)
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "memref.reinterpret_cast: sizes [8, 8] and strides [8, 1] reach element 63 of an array of 60 "
            "[the view stays inside the array]")):
        k_view_past_the_array[(1,)](flat, out)


def hand_built(*arg_types):
    from xetile_jit.ir.core import Builder, FuncOp
    from xetile_jit.ir.types import IndexType
    from xetile_jit.ir import core_ops as C
    func = FuncOp("f", list(arg_types), [f"a{i}" for i in range(len(arg_types))], {})
    b = Builder(func.body)
    return func, b, b.create(C.ConstantOp, 0, IndexType()).result


def expect_rule(op, message: str) -> None:
    with pytest.raises(xetile.CompilationError, match=re.escape(message)):
        op.verify()


def test_init_tile_rank_rules_on_hand_built_ir():
    """The front end never builds these: one offset per array dim, tiles of rank 1 or 2, a 1-D array as one row."""
    from xetile_jit.ir.types import MemRefType, TileType
    from xetile_jit.ir.xetile_ops import InitTileOp
    func, b, zero = hand_built(MemRefType(xetile.float32, rank=3), MemRefType(xetile.float32, rank=1))
    batched, flat = func.args
    expect_rule(b.create(InitTileOp, batched, [zero, zero], TileType((8, 8), xetile.float32)),
                "xetile.init_tile: takes 3 index offsets, one per dimension, got 2 [one tile offset per dimension]")
    expect_rule(b.create(InitTileOp, batched, [zero] * 3, TileType((2, 8, 8), xetile.float32)),
                "xetile.init_tile: tile must be 1-D or 2-D, got !xetile.tile<2x8x8xf32> [XeTile tiles are 1-D or 2-D]")
    expect_rule(b.create(InitTileOp, flat, [zero], TileType((2, 8), xetile.float32)),
                "xetile.init_tile: a 2-D tile [2, 8] of a 1-D array must have one row [a 1-D array is one row]")


def test_view_op_rules_on_hand_built_ir():
    from xetile_jit.ir.shape_ops import MemRefReinterpretCastOp, ShapeCastOp
    from xetile_jit.ir.types import MemRefType, VectorType
    from xetile_jit.ir.xegpu_ops import MemRefSubviewOp
    from xetile_jit.ir import core_ops as C
    func, b, zero = hand_built(MemRefType(xetile.float32), MemRefType(xetile.float32, rank=3))
    matrix, batched = func.args
    expect_rule(b.create(MemRefSubviewOp, matrix, []),
                "memref.subview: the source must be an array of rank 1 or > 2, got memref<?x?xf32, strided<[?, 1]>> "
                "[memref.subview of a batched or 1-D array]")
    expect_rule(b.create(MemRefSubviewOp, batched, [zero, zero]),
                "memref.subview: takes 1 index offsets, one per leading dim, got 2 [memref.subview fixes the leading "
                "dims]")
    expect_rule(b.create(MemRefReinterpretCastOp, matrix, [zero], [zero, zero]),
                "memref.reinterpret_cast: takes two index sizes and two index strides, got 3 operands "
                "[memref.reinterpret_cast to a 2-D matrix]")
    v = b.create(C.ConstantOp, 0.0, VectorType((4, 8), xetile.float32)).result
    expect_rule(b.create(ShapeCastOp, v, (4, 4)),
                "vector.shape_cast: vector<4x8xf32> has 32 elements, vector<4x4xf32> 16 "
                "[vector.shape_cast keeps the element count]")
    expect_rule(b.create(ShapeCastOp, zero, (1,)),
                "vector.shape_cast: source must be a vector, got index [vector.shape_cast of a vector]")


def test_value_shape_op_rules_on_hand_built_ir():
    from xetile_jit.ir.shape_ops import ConcatOp, FlipOp, RollOp, SliceOp
    from xetile_jit.ir.types import VectorType
    from xetile_jit.ir import core_ops as C
    func, b, zero = hand_built()
    v = b.create(C.ConstantOp, 0.0, VectorType((4, 8), xetile.float32)).result
    w = b.create(C.ConstantOp, 0, VectorType((4, 8), xetile.int32)).result
    expect_rule(b.create(SliceOp, v, (2, 0), (3, 8)),
                "xetile.slice: slice [3, 8] at [2, 0] exceeds [4, 8] [a slice stays inside its vector]")
    expect_rule(b.create(SliceOp, v, (0,), (4,)),
                "xetile.slice: slice [4] at [0] of vector<4x8xf32>: one offset and one size a dim "
                "[xetile.slice keeps the rank]")
    expect_rule(b.create(SliceOp, zero, (0,), (1,)),
                "xetile.slice: the source must be a vector, got index [xetile.slice of vectors]")
    expect_rule(b.create(ConcatOp, v, w, 0),
                "xetile.concat: vector<4x8xf32> and vector<4x8xi32> do not join along axis 0 "
                "[xetile.concat of one element type, the same sizes off the axis]")
    expect_rule(b.create(ConcatOp, v, b.create(C.ConstantOp, 0.0, VectorType((5, 8), xetile.float32)).result, 1),
                "xetile.concat: vector<4x8xf32> and vector<5x8xf32> do not join along axis 1")
    expect_rule(b.create(FlipOp, v, 2),
                "xetile.flip: axis 2 is not a dim of vector<4x8xf32> [xetile.flip along a dim of its vector]")
    expect_rule(b.create(RollOp, v, 4, 0),
                "xetile.roll: shift 4 of vector<4x8xf32> along axis 0 is not in (0, 4) [xetile.roll shifts by less "
                "than its span]")
    expect_rule(b.create(RollOp, v, 4, 1, 4),
                "xetile.roll: shift 4 of vector<4x8xf32> along axis 1 is not in (0, 4)")
    expect_rule(b.create(RollOp, v, 1, 1, 3),
                "xetile.roll: span 3 does not divide the axis size 8 of vector<4x8xf32> [xetile.roll within runs "
                "that divide the axis]")


@xetile.kernel
def k_shape_op(x, out, OP: xetile.constexpr):
    mark(out)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [4, 8]))
    if OP == "step":
        r = v[::2]
    elif OP == "empty":
        r = v[3:1]
    elif OP == "element":
        r = v[1, 2]
    elif OP == "cat":
        r = xetile.cat(v, v[:, 0:4], 0)
    elif OP == "flip-axis":
        r = xetile.flip(v, 2)
    elif OP == "join-2-d":
        r = xetile.join(v, v)
    elif OP == "split":
        r = xetile.split(v)
    else:
        r = xetile.interleave(v, v[0:2])


SHAPE_OP_ERRORS = {
    "step": ("r = v[::2]", "slicing vector<4x8xf32>: step 2; only step 1 is supported (flip reverses)"),
    "empty": ("r = v[3:1]", "slicing vector<4x8xf32>: [3:1] is empty [vector dims are at least 1]"),
    "element": ("r = v[1, 2]", "indexing vector<4x8xf32> with (1, 2): a vector takes one slice a dim"),
    "cat": ("r = xetile.cat(v, v[:, 0:4], 0)",
            "cat: vector<4x8xf32> and vector<4x4xf32> do not join along axis 0 (one element type, the same sizes "
            "off the axis)"),
    "flip-axis": ("r = xetile.flip(v, 2)", "flip: axis int 2 is not a dim of vector<4x8xf32>"),
    "join-2-d": ("r = xetile.join(v, v)", "join: vector<4x8xf32> and vector<4x8xf32>: takes two 1-D vectors of one "
                 "type (the [N, 2] result is 2-D; joining 2-D values would make a 3-D one: interleave"),
    "split": ("r = xetile.split(v)", "split: vector<4x8xf32> must be [N, 2]"),
    "interleave": ("r = xetile.interleave(v, v[0:2])",
                   "interleave: vector<4x8xf32> and vector<2x8xf32> must have one shape and element type"),
}


@pytest.mark.parametrize("case", SHAPE_OP_ERRORS)
def test_value_shape_op_errors_name_the_shapes(rng, case):
    line, expected = SHAPE_OP_ERRORS[case]
    x, out = rand(rng, (8, 8), np.float32), np.zeros((8, 8), np.float32)
    expect_error(k_shape_op, (x, out), dict(OP=case), expected, line)


def test_broadcast_keeps_the_rank_on_hand_built_ir():
    from xetile_jit.ir.types import VectorType
    from xetile_jit.ir.xetile_ops import TileBroadcastOp
    from xetile_jit.ir import core_ops as C
    func, b, zero = hand_built()
    v = b.create(C.ConstantOp, 0.0, VectorType((1,), xetile.float32)).result
    expect_rule(b.create(TileBroadcastOp, v, [0], (4, 8)),
                "xetile.tile_broadcast: operand vector<1xf32> and result vector<4x8xf32> differ in rank "
                "[tile_broadcast keeps the rank]")
