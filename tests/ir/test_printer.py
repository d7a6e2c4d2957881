"""Golden text of the printed XeTile IR (`kern.warmup(...).asm["xetile"]`), op by op, in the RFC syntax."""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import dtype_id
from xetile_jit.compiler.pipeline import STAGE_NAMES, lower
from xetile_jit.ir.printer import print_func

pytestmark = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)


def ir_lines(asm: str) -> list[str]:
    return [line.strip() for line in asm.splitlines()]


def assert_lines(asm: str, expected: str) -> None:
    """Every line of `expected` is a whole line of the IR (leading spaces stripped), in this order."""
    lines = ir_lines(asm)
    pos = 0
    for want in (w.strip() for w in expected.strip().splitlines()):
        assert want in lines[pos:], f"line not found (in order):\n{want}\n--- IR ---\n{asm}"
        pos = lines.index(want, pos) + 1


# ---- a GEMM: signature, init_tile, load/store, prefetch, update_tile_offset, tile_mma, scf.for -----------------

@xetile.kernel
def gemm(a, b, c, M, N, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [m, 0], [BM, BK])
    tb = xetile.init_tile(b, [0, n], [BK, BN], order=[0, 1])
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, BK):
        xetile.prefetch_tile(ta, locality=1)
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
    xetile.store_tile(xetile.init_tile(c, [m, n], [BM, BN]), acc)


TILE_B = "!xetile.tile<16x32xf16, #xetile.tile_attr<order = [0, 1]>>"
GEMM_IR = f"""\
func.func @gemm(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[1, ?]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %M: i32, %N: i32, %K: i32) attributes {{BM = 32, BN = 32, BK = 16}} {{
  %0 = gpu.block_id x : i32
  %1 = arith.constant 32 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = gpu.block_id y : i32
  %4 = arith.muli %3, %1 : i32
  %5 = arith.index_cast %2 : i32 to index
  %6 = arith.constant 0 : index
  %7 = xetile.init_tile %a[%5, %6] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<32x16xf16>
  %8 = arith.index_cast %4 : i32 to index
  %9 = xetile.init_tile %b[%6, %8] : memref<?x?xf16, strided<[1, ?]>> -> {TILE_B}
  %10 = arith.constant dense<0.000000e+00> : vector<32x32xf32>
  %11 = arith.constant 0 : i32
  %12 = arith.constant 16 : i32
  %13:3 = scf.for %k = %11 to %K step %12 iter_args(%acc = %10, %ta = %7, %tb = %9) -> (vector<32x32xf32>, !xetile.tile<32x16xf16>, {TILE_B}) : i32 {{
    xetile.prefetch_tile %ta locality<1> : !xetile.tile<32x16xf16>
    %14 = xetile.load_tile %ta : !xetile.tile<32x16xf16> -> vector<32x16xf16>
    %15 = xetile.load_tile %tb : {TILE_B} -> vector<16x32xf16>
    %16 = xetile.tile_mma %14, %15, %acc{{MMA_ATTR}} : vector<32x16xf16>, vector<16x32xf16>, vector<32x32xf32> into vector<32x32xf32>
    %17 = arith.constant 0 : index
    %18 = arith.constant 16 : index
    %19 = xetile.update_tile_offset %ta, [%17, %18] : !xetile.tile<32x16xf16>
    %20 = xetile.update_tile_offset %tb, [%18, %17] : {TILE_B}
    scf.yield %16, %19, %20 : vector<32x32xf32>, !xetile.tile<32x16xf16>, {TILE_B}
  }}
  %21 = arith.index_cast %2 : i32 to index
  %22 = arith.index_cast %4 : i32 to index
  %23 = xetile.init_tile %c[%21, %22] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<32x32xf32>
  xetile.store_tile %13#0, %23 : vector<32x32xf32>, !xetile.tile<32x32xf32>
  func.return
}}"""


def gemm_args():
    a = np.zeros((64, 32), np.float16)
    bt = np.zeros((64, 32), np.float16)           # b = bt.T: a column-major 32x64 view
    c = np.zeros((64, 64), np.float32)
    return (a, bt.T, c, 64, 64, 32), dict(BM=32, BN=32, BK=16)


def test_gemm_whole_text():
    args, consts = gemm_args()
    assert gemm.warmup(*args, **consts).asm["xetile"] == GEMM_IR.replace("{MMA_ATTR}", "")


def test_gemm_with_mma_layout_whole_text():
    args, consts = gemm_args()
    asm = gemm.warmup(*args, **consts, sg_layout=[2, 2], sg_data=[16, 16]).asm["xetile"]
    assert asm == GEMM_IR.replace("{MMA_ATTR}", " {wg_map = #xetile.wg_map<sg_layout = [2, 2], sg_data = [16, 16]>}")


def test_signature_memref_strides_and_constexpr_attributes():
    a = np.zeros((8, 16), np.float16)                  # row-major
    bt = np.zeros((16, 8), np.float16)
    c = np.zeros((8, 8), np.float32)
    asm = signature_only.warmup(a, bt.T, c.T, 7, BLOCK=64, NAME_OK=3).asm["xetile"]
    assert ir_lines(asm)[0] == (
        "func.func @signature_only(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[1, ?]>>, "
        "%c: memref<?x?xf32, strided<[1, ?]>>, %n: i32) attributes {BLOCK = 64, NAME_OK = 3} {")
    asm = signature_only.warmup(a, bt, c, 7, BLOCK=32, NAME_OK=1).asm["xetile"]
    assert ir_lines(asm)[0] == (
        "func.func @signature_only(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, "
        "%c: memref<?x?xf32, strided<[?, 1]>>, %n: i32) attributes {BLOCK = 32, NAME_OK = 1} {")


@xetile.kernel
def signature_only(a, b, c, n, BLOCK: xetile.constexpr, NAME_OK: xetile.constexpr):
    pass


def test_signature_without_constexprs_has_no_attributes():
    x = np.zeros((8, 8), np.float32)
    asm = no_constexpr.warmup(x).asm["xetile"]
    assert asm == ("func.func @no_constexpr(%x: memref<?x?xf32, strided<[?, 1]>>) {\n"
                   "  func.return\n"
                   "}")


@xetile.kernel
def no_constexpr(x):
    pass


@xetile.kernel
def string_and_bool_constexprs(x, KIND: xetile.constexpr, FLAG: xetile.constexpr):
    pass


def test_constexpr_attributes_use_mlir_literals():
    """MLIR attribute syntax: strings in double quotes, booleans as true/false (not Python reprs)."""
    x = np.zeros((8, 8), np.float32)
    asm = string_and_bool_constexprs.warmup(x, KIND="add", FLAG=True).asm["xetile"]
    assert ir_lines(asm)[0] == ('func.func @string_and_bool_constexprs(%x: memref<?x?xf32, strided<[?, 1]>>) '
                                'attributes {KIND = "add", FLAG = true} {')


# ---- init_tile with layout and order, load_tile padding --------------------------------------------------

@xetile.kernel
def layout_copy(x, y, PAD: xetile.constexpr):
    tx = xetile.init_tile(x, [0, 0], [32, 16], layout=xetile.Layout([2, 2], [16, 8]))
    ty = xetile.init_tile(y, [0, 0], [32, 16], order=[0, 1], layout=xetile.Layout(
        [4, 1], [8, 16], inst_data=[8, 16], lane_layout=[1, 16], lane_data=[1, 1]))
    xetile.store_tile(ty, xetile.load_tile(tx, padding=PAD))


WG_X = "#xetile.wg_map<sg_layout = [2, 2], sg_data = [16, 8]>"
WG_Y = ("#xetile.wg_map<sg_layout = [4, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], "
        "lane_data = [1, 1]>")
TILE_X = f"!xetile.tile<32x16xf32, #xetile.tile_attr<wg = {WG_X}>>"
TILE_Y = f"!xetile.tile<32x16xf32, #xetile.tile_attr<wg = {WG_Y}, order = [0, 1]>>"


@pytest.mark.parametrize("pad, attr, printed", [(0, "", "0"), (0.0, "", "0.000000e+00"),
                                                (-1.5, " {padding = -1.5}", "-1.500000e+00"),
                                                (2, " {padding = 2}", "2")],
                         ids=["0", "0.0", "-1.5", "2"])
def test_init_tile_layout_and_load_padding(pad, attr, printed):
    x = np.zeros((32, 16), np.float32)
    y = np.zeros((16, 32), np.float32).T
    asm = layout_copy.warmup(x, y, PAD=pad).asm["xetile"]
    assert_lines(asm, f"""
        func.func @layout_copy(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[1, ?]>>) attributes {{PAD = {printed}}} {{
        %0 = arith.constant 0 : index
        %1 = xetile.init_tile %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> {TILE_X}
        %2 = xetile.init_tile %y[%0, %0] : memref<?x?xf32, strided<[1, ?]>> -> {TILE_Y}
        %3 = xetile.load_tile %1{attr} : {TILE_X} -> vector<32x16xf32>
        xetile.store_tile %3, %2 : vector<32x16xf32>, {TILE_Y}
        func.return
    """)


# ---- vector ops: transpose, reduce, broadcast, atomics ------------------------------------------------------

@xetile.kernel
def vector_ops(x, xi, out, outi):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16]))
    w = xetile.tile_transpose(v, [1, 0])
    s = xetile.tile_reduce("add", v, [1])
    mx = xetile.tile_reduce("max", v, [0])
    vi = xetile.load_tile(xetile.init_tile(xi, [0, 0], [8, 16]))
    mi = xetile.tile_reduce("max", vi, [0, 1])
    b = xetile.tile_broadcast(s, [1], [8, 16])
    old = xetile.atomic_rmw_tile("add", b, xetile.init_tile(out, [0, 0], [8, 16]))
    oldi = xetile.atomic_rmw_tile("max", vi, xetile.init_tile(outi, [0, 0], [8, 16]))


def test_vector_ops():
    x, xi = np.zeros((8, 16), np.float32), np.zeros((8, 16), np.int32)
    asm = vector_ops.warmup(x, xi, x.copy(), xi.copy()).asm["xetile"]
    assert_lines(asm, """
        %2 = xetile.load_tile %1 : !xetile.tile<8x16xf32> -> vector<8x16xf32>
        %3 = xetile.tile_transpose %2 [1, 0] : vector<8x16xf32> into vector<16x8xf32>
        %4 = xetile.tile_reduce <add> %2 [1] : vector<8x16xf32> into vector<8x1xf32>
        %5 = xetile.tile_reduce <maxnumf> %2 [0] : vector<8x16xf32> into vector<1x16xf32>
        %6 = xetile.init_tile %xi[%0, %0] : memref<?x?xi32, strided<[?, 1]>> -> !xetile.tile<8x16xi32>
        %7 = xetile.load_tile %6 : !xetile.tile<8x16xi32> -> vector<8x16xi32>
        %8 = xetile.tile_reduce <maxsi> %7 [0, 1] : vector<8x16xi32> into vector<1x1xi32>
        %9 = xetile.tile_broadcast %4 [1] : vector<8x1xf32> into vector<8x16xf32>
        %10 = xetile.init_tile %out[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x16xf32>
        %11 = xetile.atomic_rmw_tile <addf> %9, %10 : vector<8x16xf32>, !xetile.tile<8x16xf32> -> vector<8x16xf32>
        %12 = xetile.init_tile %outi[%0, %0] : memref<?x?xi32, strided<[?, 1]>> -> !xetile.tile<8x16xi32>
        %13 = xetile.atomic_rmw_tile <maxs> %7, %12 : vector<8x16xi32>, !xetile.tile<8x16xi32> -> vector<8x16xi32>
        func.return
    """)


@xetile.kernel
def reduce_kind(x, KIND: xetile.constexpr):
    r = xetile.tile_reduce(KIND, xetile.load_tile(xetile.init_tile(x, [0, 0], [4, 8])), [0])


@pytest.mark.parametrize("dtype, kind, rfc_kind", [
    (np.float32, "add", "add"), (np.float16, "mul", "mul"), (np.float32, "max", "maxnumf"),
    (ml_dtypes.bfloat16, "min", "minnumf"), (np.int32, "max", "maxsi"), (np.int8, "min", "minsi"),
    (np.uint8, "max", "maxui"), (np.uint8, "min", "minui"), (np.int16, "and", "and"), (np.int64, "or", "or"),
    (np.int32, "xor", "xor"), (np.bool_, "max", "maxui"), (np.float32, "maximum", "maximumf"),
    (np.float16, "minimum", "minimumf"),
], ids=lambda v: dtype_id(v) if isinstance(v, type) else str(v))
def test_tile_reduce_kinds(dtype, kind, rfc_kind):
    x = np.zeros((4, 8), dtype)
    t = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(ml_dtypes.bfloat16): "bf16",
         np.dtype(np.int32): "i32", np.dtype(np.int8): "i8", np.dtype(np.uint8): "ui8", np.dtype(np.int16): "i16",
         np.dtype(np.int64): "i64", np.dtype(np.bool_): "i1"}[np.dtype(dtype)]
    asm = reduce_kind.warmup(x, KIND=kind).asm["xetile"]
    assert_lines(asm, f"%3 = xetile.tile_reduce <{rfc_kind}> %2 [0] : vector<4x8x{t}> into vector<1x8x{t}>")


@xetile.kernel
def atomic_kind(x, KIND: xetile.constexpr):
    t = xetile.init_tile(x, [0, 0], [4, 8])
    old = xetile.atomic_rmw_tile(KIND, xetile.load_tile(t), t)


@pytest.mark.parametrize("dtype, kind, rfc_kind", [
    (np.float32, "add", "addf"), (np.float32, "max", "maximumf"), (np.float32, "min", "minimumf"),
    (np.float32, "xchg", "assign"), (np.int32, "add", "addi"), (np.int64, "max", "maxs"), (np.int32, "min", "mins"),
    (np.int32, "and", "andi"), (np.int64, "or", "ori"), (np.int32, "xchg", "assign"), (np.float16, "mul", "mulf"),
    (ml_dtypes.bfloat16, "add", "addf"), (np.uint32, "max", "maxu"), (np.uint64, "min", "minu"),
    (np.int32, "mul", "muli"), (np.uint32, "xor", "xori"),
], ids=lambda v: dtype_id(v) if isinstance(v, type) else str(v))
def test_atomic_rmw_kinds(dtype, kind, rfc_kind):
    x = np.zeros((4, 8), dtype)
    t = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.float16): "f16",
         np.dtype(ml_dtypes.bfloat16): "bf16", np.dtype(np.uint32): "ui32", np.dtype(np.uint64): "ui64"}[np.dtype(dtype)]
    asm = atomic_kind.warmup(x, KIND=kind).asm["xetile"]
    assert_lines(asm, f"%3 = xetile.atomic_rmw_tile <{rfc_kind}> %2, %1 : vector<4x8x{t}>, !xetile.tile<4x8x{t}> "
                      f"-> vector<4x8x{t}>")


# ---- arith, math, select, casts, vector.broadcast -------------------------------------------------------

@xetile.kernel
def arith_ops(x, xi, out, s, f):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    vi = xetile.load_tile(xetile.init_tile(xi, [0, 0], [8, 8]))
    a1 = v + v
    a2 = v - 1.5
    a3 = v * f
    a4 = v / v
    i1 = vi + 2
    i2 = vi - vi
    i3 = vi * s
    i4 = vi // vi
    i5 = vi % 3
    c1 = v < 0.0
    c2 = v >= a1
    c3 = vi == 0
    c4 = vi != s
    c5 = vi > 1
    sel = xetile.where(c1, a2, a3)
    h = sel.to(xetile.float16)
    g = h.to(xetile.float32)
    n = g.to(xetile.int32)
    n64 = n.to(xetile.int64)
    n16 = n64.to(xetile.int16)
    back = n16.to(xetile.float32)
    e = xetile.exp(back)
    l = xetile.log(e)
    q = xetile.sqrt(l)
    r = xetile.rsqrt(q)
    t = xetile.tanh(r)
    e2 = xetile.exp2(t)
    ab = xetile.abs(e2)
    mx = xetile.maximum(ab, v)
    splat = xetile.full([8, 8], f, xetile.float32)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 8]), mx + splat)


def test_arith_math_select_casts_whole_text():
    x, xi = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.int32)
    asm = arith_ops.warmup(x, xi, x.copy(), 3, 2.0).asm["xetile"]
    assert asm == """\
func.func @arith_ops(%x: memref<?x?xf32, strided<[?, 1]>>, %xi: memref<?x?xi32, strided<[?, 1]>>, %out: memref<?x?xf32, strided<[?, 1]>>, %s: i32, %f: f32) {
  %0 = arith.constant 0 : index
  %1 = xetile.init_tile %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x8xf32>
  %2 = xetile.load_tile %1 : !xetile.tile<8x8xf32> -> vector<8x8xf32>
  %3 = xetile.init_tile %xi[%0, %0] : memref<?x?xi32, strided<[?, 1]>> -> !xetile.tile<8x8xi32>
  %4 = xetile.load_tile %3 : !xetile.tile<8x8xi32> -> vector<8x8xi32>
  %5 = arith.addf %2, %2 : vector<8x8xf32>
  %6 = arith.constant dense<1.500000e+00> : vector<8x8xf32>
  %7 = arith.subf %2, %6 : vector<8x8xf32>
  %8 = vector.broadcast %f : f32 to vector<8x8xf32>
  %9 = arith.mulf %2, %8 : vector<8x8xf32>
  %10 = arith.divf %2, %2 : vector<8x8xf32>
  %11 = arith.constant dense<2> : vector<8x8xi32>
  %12 = arith.addi %4, %11 : vector<8x8xi32>
  %13 = arith.subi %4, %4 : vector<8x8xi32>
  %14 = vector.broadcast %s : i32 to vector<8x8xi32>
  %15 = arith.muli %4, %14 : vector<8x8xi32>
  %16 = arith.divsi %4, %4 : vector<8x8xi32>
  %17 = arith.constant dense<3> : vector<8x8xi32>
  %18 = arith.remsi %4, %17 : vector<8x8xi32>
  %19 = arith.constant dense<0.000000e+00> : vector<8x8xf32>
  %20 = arith.cmpf olt, %2, %19 : vector<8x8xf32>
  %21 = arith.cmpf oge, %2, %5 : vector<8x8xf32>
  %22 = arith.constant dense<0> : vector<8x8xi32>
  %23 = arith.cmpi eq, %4, %22 : vector<8x8xi32>
  %24 = vector.broadcast %s : i32 to vector<8x8xi32>
  %25 = arith.cmpi ne, %4, %24 : vector<8x8xi32>
  %26 = arith.constant dense<1> : vector<8x8xi32>
  %27 = arith.cmpi sgt, %4, %26 : vector<8x8xi32>
  %28 = arith.select %20, %7, %9 : vector<8x8xi1>, vector<8x8xf32>
  %29 = arith.truncf %28 : vector<8x8xf32> to vector<8x8xf16>
  %30 = arith.extf %29 : vector<8x8xf16> to vector<8x8xf32>
  %31 = arith.fptosi %30 : vector<8x8xf32> to vector<8x8xi32>
  %32 = arith.extsi %31 : vector<8x8xi32> to vector<8x8xi64>
  %33 = arith.trunci %32 : vector<8x8xi64> to vector<8x8xi16>
  %34 = arith.sitofp %33 : vector<8x8xi16> to vector<8x8xf32>
  %35 = math.exp %34 : vector<8x8xf32>
  %36 = math.log %35 : vector<8x8xf32>
  %37 = math.sqrt %36 : vector<8x8xf32>
  %38 = math.rsqrt %37 : vector<8x8xf32>
  %39 = math.tanh %38 : vector<8x8xf32>
  %40 = math.exp2 %39 : vector<8x8xf32>
  %41 = math.absf %40 : vector<8x8xf32>
  %42 = arith.maximumf %41, %2 : vector<8x8xf32>
  %43 = vector.broadcast %f : f32 to vector<8x8xf32>
  %44 = xetile.init_tile %out[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x8xf32>
  %45 = arith.addf %42, %43 : vector<8x8xf32>
  xetile.store_tile %45, %44 : vector<8x8xf32>, !xetile.tile<8x8xf32>
  func.return
}"""


@xetile.kernel
def scalar_casts(out, f, i, u, h):
    c1 = h.to(xetile.float32)
    c2 = f.to(xetile.float16)
    c3 = i.to(xetile.float32)
    c4 = f.to(xetile.int32)
    c5 = i.to(xetile.int64)
    c6 = i.to(xetile.int8)
    c7 = u.to(xetile.float32)
    c8 = f.to(xetile.uint8)
    c9 = u.to(xetile.int32)
    c10 = u.to(xetile.int8)
    c11 = h.to(xetile.bfloat16)


def test_scalar_casts():
    out = np.zeros((8, 8), np.float32)
    asm = scalar_casts.warmup(out, 1.5, 3, np.uint8(2), np.float16(1)).asm["xetile"]
    assert_lines(asm, """
        func.func @scalar_casts(%out: memref<?x?xf32, strided<[?, 1]>>, %f: f32, %i: i32, %u: ui8, %h: f16) {
        %0 = arith.extf %h : f16 to f32
        %1 = arith.truncf %f : f32 to f16
        %2 = arith.sitofp %i : i32 to f32
        %3 = arith.fptosi %f : f32 to i32
        %4 = arith.extsi %i : i32 to i64
        %5 = arith.trunci %i : i32 to i8
        %6 = arith.uitofp %u : ui8 to f32
        %7 = arith.fptoui %f : f32 to ui8
        %8 = arith.extui %u : ui8 to i32
        %9 = arith.bitcast %u : ui8 to i8
        %10 = arith.extf %h : f16 to f32
        %11 = arith.truncf %10 : f32 to bf16
    """)


@xetile.kernel
def compares(out, a, b):
    r1 = a < b
    r2 = a <= b
    r3 = a > b
    r4 = a >= b
    r5 = a == b
    r6 = a != b
    pick = xetile.where(r1, a, b)


@pytest.mark.parametrize("value, t, op, preds", [
    (1.0, "f32", "cmpf", "olt ole ogt oge oeq une"),
    (np.float16(1), "f16", "cmpf", "olt ole ogt oge oeq une"),
    (1, "i32", "cmpi", "slt sle sgt sge eq ne"),
    (np.int8(1), "i8", "cmpi", "slt sle sgt sge eq ne"),
    (np.uint8(1), "ui8", "cmpi", "ult ule ugt uge eq ne"),
    (True, "i1", "cmpi", "ult ule ugt uge eq ne"),
], ids=["f32", "f16", "i32", "i8", "ui8", "i1"])
def test_compare_predicates_and_scalar_select(value, t, op, preds):
    out = np.zeros((8, 8), np.float32)
    asm = compares.warmup(out, value, value).asm["xetile"]
    expected = [f"%{i} = arith.{op} {p}, %a, %b : {t}" for i, p in enumerate(preds.split())]
    expected.append(f"%6 = arith.select %0, %a, %b : i1, {t}")
    assert_lines(asm, "\n".join(expected))


@xetile.kernel
def int_ops(x, y):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [4, 4]))
    u = xetile.load_tile(xetile.init_tile(y, [0, 0], [4, 4]))
    o1 = v & v
    o2 = v | v
    o3 = v ^ v
    o4 = v << v
    o5 = v >> v
    o6 = u >> u
    o7 = u // u
    o8 = u % u
    o9 = xetile.minimum(v, v)
    o10 = xetile.maximum(u, u)
    o11 = -v
    o12 = xetile.abs(v)


def test_integer_ops():
    x, y = np.zeros((4, 4), np.int32), np.zeros((4, 4), np.uint8)
    asm = int_ops.warmup(x, y).asm["xetile"]
    assert_lines(asm, """
        %2 = xetile.load_tile %1 : !xetile.tile<4x4xi32> -> vector<4x4xi32>
        %4 = xetile.load_tile %3 : !xetile.tile<4x4xui8> -> vector<4x4xui8>
        %5 = arith.andi %2, %2 : vector<4x4xi32>
        %6 = arith.ori %2, %2 : vector<4x4xi32>
        %7 = arith.xori %2, %2 : vector<4x4xi32>
        %8 = arith.shli %2, %2 : vector<4x4xi32>
        %9 = arith.shrsi %2, %2 : vector<4x4xi32>
        %10 = arith.shrui %4, %4 : vector<4x4xui8>
        %11 = arith.divui %4, %4 : vector<4x4xui8>
        %12 = arith.remui %4, %4 : vector<4x4xui8>
        %13 = arith.minsi %2, %2 : vector<4x4xi32>
        %14 = arith.maxui %4, %4 : vector<4x4xui8>
        %15 = arith.constant dense<0> : vector<4x4xi32>
        %16 = arith.subi %15, %2 : vector<4x4xi32>
        %17 = math.absi %2 : vector<4x4xi32>
    """)


@xetile.kernel
def constants(out, i):
    a = i + 7
    b = i + 3000000000
    c = i.to(xetile.float32) + 0.25
    d = (i > 0) & True
    v1 = xetile.full([2, 4], 1.0, xetile.float16)
    v2 = xetile.full([2, 4], -3, xetile.int8)
    v3 = xetile.full([2, 4], True, xetile.bool)
    v4 = xetile.zeros([2, 4], xetile.bfloat16)


def test_constants_scalar_and_dense():
    out = np.zeros((8, 8), np.float32)
    asm = constants.warmup(out, 5).asm["xetile"]
    assert_lines(asm, """
        %0 = arith.constant 7 : i32
        %1 = arith.addi %i, %0 : i32
        %2 = arith.extsi %i : i32 to i64
        %3 = arith.constant 3000000000 : i64
        %4 = arith.addi %2, %3 : i64
        %5 = arith.sitofp %i : i32 to f32
        %6 = arith.constant 2.500000e-01 : f32
        %7 = arith.addf %5, %6 : f32
        %8 = arith.constant 0 : i32
        %9 = arith.cmpi sgt, %i, %8 : i32
        %10 = arith.constant true : i1
        %11 = arith.andi %9, %10 : i1
        %12 = arith.constant dense<1.000000e+00> : vector<2x4xf16>
        %13 = arith.constant dense<-3> : vector<2x4xi8>
        %14 = arith.constant dense<true> : vector<2x4xi1>
        %15 = arith.constant dense<0.000000e+00> : vector<2x4xbf16>
    """)


# ---- gpu ids, scf.if ---------------------------------------------------------------------------------------

@xetile.kernel
def grid_ops(out, flag):
    px = xetile.program_id(0)
    py = xetile.program_id(1)
    pz = xetile.program_id(2)
    nx = xetile.num_programs(0)
    ny = xetile.num_programs(1)
    nz = xetile.num_programs(2)
    if px > 0:
        val = px * 2
    else:
        val = nx + 1
    xetile.store_tile(xetile.init_tile(out, [py, pz], [1, 1]), xetile.full([1, 1], val + ny + nz, xetile.int32))


def test_grid_ids_and_scf_if_with_results_and_else():
    out = np.zeros((8, 8), np.int32)
    asm = grid_ops.warmup(out, True).asm["xetile"]
    assert asm == """\
func.func @grid_ops(%out: memref<?x?xi32, strided<[?, 1]>>, %flag: i1) {
  %0 = gpu.block_id x : i32
  %1 = gpu.block_id y : i32
  %2 = gpu.block_id z : i32
  %3 = gpu.grid_dim x : i32
  %4 = gpu.grid_dim y : i32
  %5 = gpu.grid_dim z : i32
  %6 = arith.constant 0 : i32
  %7 = arith.cmpi sgt, %0, %6 : i32
  %val = scf.if %7 -> (i32) {
    %8 = arith.constant 2 : i32
    %9 = arith.muli %0, %8 : i32
    scf.yield %9 : i32
  } else {
    %10 = arith.constant 1 : i32
    %11 = arith.addi %3, %10 : i32
    scf.yield %11 : i32
  }
  %12 = arith.index_cast %1 : i32 to index
  %13 = arith.index_cast %2 : i32 to index
  %14 = xetile.init_tile %out[%12, %13] : memref<?x?xi32, strided<[?, 1]>> -> !xetile.tile<1x1xi32>
  %15 = arith.addi %val, %4 : i32
  %16 = arith.addi %15, %5 : i32
  %17 = vector.broadcast %16 : i32 to vector<1x1xi32>
  xetile.store_tile %17, %14 : vector<1x1xi32>, !xetile.tile<1x1xi32>
  func.return
}"""


@xetile.kernel
def if_without_results(out, flag):
    t = xetile.init_tile(out, [0, 0], [2, 2])
    if flag:
        xetile.store_tile(t, 1.0)


def test_scf_if_without_results():
    out = np.zeros((2, 2), np.float32)
    asm = if_without_results.warmup(out, True).asm["xetile"]
    assert_lines(asm, """
        %1 = xetile.init_tile %out[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<2x2xf32>
        scf.if %flag {
        %2 = arith.constant dense<1.000000e+00> : vector<2x2xf32>
        xetile.store_tile %2, %1 : vector<2x2xf32>, !xetile.tile<2x2xf32>
        scf.yield
        } else {
        scf.yield
        }
        func.return
    """)


@xetile.kernel
def loop_scalar_carry(out, n):
    total = 0
    for i in range(n):
        total = total + i
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 1]), xetile.full([1, 1], total, xetile.int32))


def test_scf_for_carrying_a_python_int():
    out = np.zeros((1, 1), np.int32)
    asm = loop_scalar_carry.warmup(out, 5).asm["xetile"]
    assert_lines(asm, """
        %0 = arith.constant 0 : i32
        %1 = arith.constant 1 : i32
        %total = scf.for %i = %0 to %n step %1 iter_args(%total_1 = %0) -> (i32) : i32 {
        %2 = arith.addi %total_1, %i : i32
        scf.yield %2 : i32
        }
    """)
    loop_scalar_carry[(1,)](out, 5)
    assert out[0, 0] == 10


# ---- XETILE_DUMP_IR --------------------------------------------------------------------------------------

@xetile.kernel
def dumped(x):
    xetile.store_tile(xetile.init_tile(x, [0, 0], [2, 2]), 3.0)


def test_dump_ir_env_prints_at_first_launch(monkeypatch, capsys, on_each_device):
    """The XeTile IR, then (compiling for a SYCL device) every later stage and the LLVM IR. (XETILE_QUIET: the 2x2
    array's block-IO warning would reach stderr too where pytest does not capture warnings, `-p no:warnings`.)"""
    monkeypatch.setenv("XETILE_DUMP_IR", "1")
    monkeypatch.setenv("XETILE_QUIET", "1")
    dumped.cache.clear()
    x = np.zeros((2, 2), np.float32)
    dumped[(1,)](x)
    err = capsys.readouterr().err
    asm = dumped.warmup(x).asm["xetile"]
    xetile_dump = f"// -----// XeTile IR: dumped //----- //\n{asm}\n"
    later = [f"// -----// {stage}: dumped //----- //" for stage in STAGE_NAMES + ["llvm"]]
    if on_each_device == "numpy":
        assert err == xetile_dump
    else:
        assert err.startswith(xetile_dump) and all(header in err for header in later)
    assert "xetile.store_tile %2, %1 : vector<2x2xf32>, !xetile.tile<2x2xf32>" in ir_lines(asm)
    np.testing.assert_array_equal(x, np.full((2, 2), 3.0, np.float32))
    dumped[(1,)](x)                                   # cached: not printed again
    assert capsys.readouterr().err == ""


def test_no_dump_without_env(monkeypatch, capsys):
    monkeypatch.delenv("XETILE_DUMP_IR", raising=False)
    monkeypatch.setenv("XETILE_QUIET", "1")
    dumped.cache.clear()
    x = np.zeros((2, 2), np.float32)
    dumped[(1,)](x)
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(x, np.full((2, 2), 3.0, np.float32))


# ---- arrays of any rank, 1-D tiles and vectors, arange, shape casts, base_shape/base_strides ---------------------

@xetile.kernel
def shapes(x, w, flat, y, R):
    z = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [z, 0, 0], [4, 8]))
    row = xetile.load_tile(xetile.init_tile(w, [0], [8]))
    col = xetile.expand_dims(xetile.where(xetile.arange(0, 8) < R, row, 0.0), 1)
    s = v + xetile.broadcast_to(row, [4, 8]) + xetile.tile_reduce("add", col.reshape([1, 8]), [0])
    t = xetile.init_tile(flat, [0, 0], [4, 8], base_shape=[R, 8], base_strides=[8, 1])
    xetile.store_tile(t, s)
    xetile.store_tile(xetile.init_tile(y, [z, 0, 0], [4, 8]), xetile.load_tile(t))


SHAPES_IR = """\
func.func @shapes(%x: memref<?x?x?xf32, strided<[?, ?, 1]>>, %w: memref<?xf32, strided<[1]>>, %flat: memref<?xf32, strided<[1]>>, %y: memref<?x?x?xf32, strided<[?, ?, 1]>>, %R: i32) {
  %0 = gpu.block_id x : i32
  %1 = arith.index_cast %0 : i32 to index
  %2 = arith.constant 0 : index
  %3 = xetile.init_tile %x[%1, %2, %2] : memref<?x?x?xf32, strided<[?, ?, 1]>> -> !xetile.tile<4x8xf32>
  %4 = xetile.load_tile %3 : !xetile.tile<4x8xf32> -> vector<4x8xf32>
  %5 = xetile.init_tile %w[%2] : memref<?xf32, strided<[1]>> -> !xetile.tile<8xf32>
  %6 = xetile.load_tile %5 : !xetile.tile<8xf32> -> vector<8xf32>
  %7 = vector.iota %2 [0] : vector<8xi32>
  %8 = vector.broadcast %R : i32 to vector<8xi32>
  %9 = arith.cmpi slt, %7, %8 : vector<8xi32>
  %10 = arith.constant dense<0.000000e+00> : vector<8xf32>
  %11 = arith.select %9, %6, %10 : vector<8xi1>, vector<8xf32>
  %12 = vector.shape_cast %11 : vector<8xf32> to vector<8x1xf32>
  %13 = vector.shape_cast %6 : vector<8xf32> to vector<1x8xf32>
  %14 = xetile.tile_broadcast %13 [0] : vector<1x8xf32> into vector<4x8xf32>
  %15 = arith.addf %4, %14 : vector<4x8xf32>
  %16 = vector.shape_cast %12 : vector<8x1xf32> to vector<1x8xf32>
  %17 = xetile.tile_reduce <add> %16 [0] : vector<1x8xf32> into vector<1x8xf32>
  %18 = xetile.tile_broadcast %17 [0] : vector<1x8xf32> into vector<4x8xf32>
  %19 = arith.addf %15, %18 : vector<4x8xf32>
  %20 = arith.index_cast %R : i32 to index
  %21 = arith.constant 8 : index
  %22 = arith.constant 1 : index
  %23 = memref.reinterpret_cast %flat to sizes: [%20, %21], strides: [%21, %22] : memref<?xf32, strided<[1]>> to memref<?x?xf32, strided<[?, 1]>>
  %24 = xetile.init_tile %23[%2, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<4x8xf32>
  xetile.store_tile %19, %24 : vector<4x8xf32>, !xetile.tile<4x8xf32>
  %25 = arith.index_cast %0 : i32 to index
  %26 = xetile.init_tile %y[%25, %2, %2] : memref<?x?x?xf32, strided<[?, ?, 1]>> -> !xetile.tile<4x8xf32>
  %27 = xetile.load_tile %24 : !xetile.tile<4x8xf32> -> vector<4x8xf32>
  xetile.store_tile %27, %26 : vector<4x8xf32>, !xetile.tile<4x8xf32>
  func.return
}"""


def shapes_args():
    return (np.zeros((2, 4, 8), np.float32), np.zeros(8, np.float32), np.zeros(64, np.float32),
            np.zeros((2, 4, 8), np.float32), 3)


def test_any_rank_arrays_one_d_vectors_and_shape_ops_whole_text():
    assert shapes.warmup(*shapes_args()).asm["xetile"] == SHAPES_IR


def test_subview_and_reinterpret_cast_at_the_xegpu_level():
    func = shapes.warmup(*shapes_args(), target="numpy").func
    asm = print_func(lower(func, "xegpu-wg")["xegpu-wg"])
    matrix = "memref<?x?xf32, strided<[?, 1]>>"
    views = [line.split(" = ", 1)[1] for line in ir_lines(asm) if " = memref." in line]
    assert views == [
        f"memref.subview %x[%1, 0, 0] [1, ?, ?] [1, 1, 1] : memref<?x?x?xf32, strided<[?, ?, 1]>> to {matrix}",
        f"memref.subview %w[0] [?] [1] : memref<?xf32, strided<[1]>> to {matrix}",
        f"memref.reinterpret_cast %flat to sizes: [%22, %23], strides: [%23, %24] : memref<?xf32, strided<[1]>> "
        f"to {matrix}",
        f"memref.subview %y[%27, 0, 0] [1, ?, ?] [1, 1, 1] : memref<?x?x?xf32, strided<[?, ?, 1]>> to {matrix}",
    ]


def test_one_d_values_are_one_row_from_layout_propagation_on():
    """transforms/xetile/rank2.py: 1-D tiles and vectors become 1xN, iota and reduction dims shift, N -> Nx1 is a transpose."""
    func = shapes.warmup(*shapes_args(), target="numpy").func
    lines = ir_lines(print_func(lower(func, "xetile-layouts")["xetile-layouts"]))
    ops = [re.sub(r" \{wg_map = #xetile\.wg_map<[^>]*>\}", "", line) for line in lines]
    for want in ["%5 = xetile.init_tile %w[%2] : memref<?xf32, strided<[1]>> -> !xetile.tile<1x8xf32, ",
                 "%7 = vector.iota %2 [1] : vector<1x8xi32>",
                 "%12 = xetile.tile_transpose %11 [1, 0] : vector<1x8xf32> into vector<8x1xf32>",
                 "%13 = xetile.tile_broadcast %6 [0] : vector<1x8xf32> into vector<4x8xf32>"]:
        assert any(op.startswith(want) for op in ops), want
    assert not any("vector.shape_cast" in line or "vector<8xf32>" in line for line in lines)


# ---- cache hints (ir/cache_hints.py): upstream XeGPU's attribute syntax at every level -----------------------

@xetile.kernel
def hinted_copy(x, out):
    t = xetile.init_tile(x, [0, 0], [8, 16])
    xetile.prefetch_tile(t, locality=2)
    v = xetile.load_tile(t, cache=("uncached", "cached"))
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16]), v, cache="streaming")


def hint_text(dialect: str, l1: str, l3: str) -> str:
    return f"{{l1_hint = #{dialect}.cache_hint<{l1}>, l3_hint = #{dialect}.cache_hint<{l3}>"


def test_cache_hints_print_at_every_level():
    """load_tile/store_tile keep their hints (a store's one policy takes L3 write_back); prefetch_tile's locality 2
    is L1 uncached, L3 cached from the XeGPU level on; the SIMT level keeps every hint."""
    x = np.zeros((8, 16), np.float32)
    compiled = hinted_copy.warmup(x, x, target="numpy")
    tile, vec, tdesc = "!xetile.tile<8x16xf32>", "vector<8x16xf32>", "!xegpu.tensor_desc<8x16xf32>"
    assert_lines(compiled.asm["xetile"], f"""
        xetile.prefetch_tile %1 locality<2> : {tile}
        %2 = xetile.load_tile %1 {hint_text("xetile", "uncached", "cached")}}} : {tile} -> {vec}
        xetile.store_tile %2, %3 {hint_text("xetile", "streaming", "write_back")}}} : {vec}, {tile}""")
    wg = print_func(lower(compiled.func, "xegpu-wg")["xegpu-wg"])
    assert f"xegpu.prefetch_nd %1 {hint_text('xegpu', 'uncached', 'cached')}}} : !xegpu.tensor_desc<8x16xf32, " in wg
    assert f"%2 = xegpu.load_nd %1 {hint_text('xegpu', 'uncached', 'cached')}, layout = " in wg
    assert f"xegpu.store_nd %2, %3 {hint_text('xegpu', 'streaming', 'write_back')}}} : {vec}, " in wg
    simt = ir_lines(print_func(lower(compiled.func, "xegpu-simt", target="xe-hpc")["xegpu-simt"]))
    ops = {name: [line for line in simt if name in line] for name in ("prefetch_nd", "load_nd", "store_nd")}
    assert all(len(lines) == 1 for lines in ops.values()), simt
    assert ops["prefetch_nd"][0].endswith(f"{hint_text('xegpu', 'uncached', 'cached')}}} : {tdesc}")
    assert ops["load_nd"][0].endswith(f"{hint_text('xegpu', 'uncached', 'cached')}}} : {tdesc} -> vector<8xf32>")
    assert ops["store_nd"][0].endswith(f"{hint_text('xegpu', 'streaming', 'write_back')}}} : vector<8xf32>, {tdesc}")


# ---- tile_mma input_precision: an attribute on xetile.tile_mma and xegpu.dpas at every level ----------------------

@xetile.kernel
def tf32_mma(a, b, c):
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [8, 16])),
                          xetile.load_tile(xetile.init_tile(b, [0, 0], [16, 16])), input_precision="tf32")
    xetile.store_tile(xetile.init_tile(c, [0, 0], [8, 16]), acc)


def test_tf32_input_precision_is_printed_at_every_level():
    """The XeTile op and every dpas below it carry it (tf32 DPAS is K 8: two of them for K 16); the default is not
    printed."""
    a, b, c = np.zeros((8, 16), np.float32), np.zeros((16, 16), np.float32), np.zeros((8, 16), np.float32)
    func = tf32_mma.warmup(a, b, c, target="numpy").func
    mma = [line for line in ir_lines(print_func(func)) if "tile_mma" in line]
    assert len(mma) == 1 and '{input_precision = "tf32"}' in mma[0]
    for stage, lowered in lower(func).items():
        name = "xetile.tile_mma" if stage == "xetile-layouts" else "xegpu.dpas"
        ops = [line for line in ir_lines(print_func(lowered)) if f" = {name} " in line]
        assert ops and all('input_precision = "tf32"' in line for line in ops), stage
        if stage in ("xegpu-blocked", "xegpu-simt"):
            assert len(ops) == 2, stage
    args, consts = gemm_args()
    assert "input_precision" not in gemm.warmup(*args, **consts).asm["xetile"]
