"""The IR parser (ir/parser.py): print -> parse -> print gives the same text for every tutorial kernel at every
level, the parsed function is the same IR (ops, attributes, types, layouts) and runs to the same numbers, and text
that is not the printer's syntax raises ParseError at its line and column."""
from __future__ import annotations

import dataclasses
import functools
import re
from unittest import mock

import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import rand
from test_gpu_code import tutorial
from test_blocking import mma_stored_b
from test_passes import CASES, run_func
from test_printer import hinted_copy, tf32_mma
from test_value_shape_ops import CASES as SHAPE_CASES
from xetile_jit.compiler.pipeline import STAGE_NAMES, lower
from xetile_jit.errors import CompilationError, ParseError
from xetile_jit.ir.combine_ops import CombineReduceOp
from xetile_jit.ir.core import FuncOp, Value, walk
from xetile_jit.ir.core_ops import YieldOp
from xetile_jit.ir.parser import parse_func, parse_funcs
from xetile_jit.ir.printer import ARG_ATTRS, print_func
from xetile_jit.ir.types import MemRefType, VectorType, float32
from xetile_jit.jit.kernel import Kernel

LEVELS = ["xetile", *STAGE_NAMES]


def f16(rng, *shape):
    return rand(rng, shape, np.float16)


# Each tutorial's host function at a small size: its launches give the kernels and their representative arguments.
TUTORIAL_CALLS = {
    "01-vector-add": lambda t, rng: t.vector_add(rand(rng, (1000,), np.float32), rand(rng, (1000,), np.float32),
                                                 block=256),
    "02-fused-softmax": lambda t, rng: t.softmax(rand(rng, (32, 64), np.float32)),
    "03-matrix-multiplication": lambda t, rng: t.matmul(f16(rng, 64, 32), f16(rng, 32, 64), "relu", bm=64, bn=64),
    "04-autotuning": lambda t, rng: t.tutorial_gemm()[(1, 1)](
        f16(rng, 32, 16), f16(rng, 16, 32), np.zeros((32, 32), np.float32), 32, 32, 16,
        **{**t.configs()[0].kwargs, "sg_layout": t.configs()[0].sg_layout, "sg_data": t.configs()[0].sg_data}),
    "05-layer-norm": lambda t, rng: t.layer_norm(f16(rng, 4, 256), f16(rng, 256), f16(rng, 256)),
    "06-fused-attention": lambda t, rng: t.attention(*t.inputs(1, 1, 64, 64), causal=True),
    "07-gemm-bias-reduce": lambda t, rng: t.gemm_bias_reduce_rows(f16(rng, 64, 32), f16(rng, 64, 32),
                                                                  rand(rng, (1, 64), np.float32), bm=64, bn=64),
    "08-slm-cooperative-gemm": lambda t, rng: t.slm_gemm(f16(rng, 32, 32), f16(rng, 32, 32)),
    "09-batched-gemm": lambda t, rng: t.bmm(f16(rng, 2, 32, 32), f16(rng, 2, 32, 32), bm=32, bn=32),
    "10-embedding-gather": lambda t, rng: t.embedding(rand(rng, (100, 64), np.float32),
                                                      rng.integers(-1, 100, (1, 64), dtype=np.int32),
                                                      np.zeros((64, 64), np.float32)),
    "11-grouped-gemm": lambda t, rng: t.grouped_gemm(t.problems_of([(40, 30, 20), (16, 48, 32)], np.float16)),
}


@functools.cache
def tutorial_levels(name: str) -> dict[str, FuncOp]:
    """The IR of the tutorial's first kernel launch at every level (the levels for the cpu target)."""
    launches = []
    with mock.patch.object(Kernel, "run", lambda kernel, grid, args, kwargs: launches.append((kernel, args, kwargs))):
        TUTORIAL_CALLS[name](tutorial(name), np.random.default_rng(0))
    kernel, args, kwargs = launches[0]
    func = kernel.warmup(*args, **{k: v for k, v in kwargs.items() if k != "device"}, target="numpy").func
    stages = lower(func, target="cpu", num_subgroups=kwargs.get("num_subgroups"),
                   prefetch_distance=kwargs.get("prefetch_distance", 0))
    return {"xetile": func, **stages}


INFRASTRUCTURE = {"_operands", "results", "regions", "parent", "loc"}


def same_attribute(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    if isinstance(a, float) and isinstance(b, float) and a != a:
        return b != b
    return a == b


def assert_same_ir(old: FuncOp, new: FuncOp) -> None:
    """Op by op: class, attributes (everything but the links), operands (by position of definition), result and
    block argument types and layouts; the function's own attributes (a constexpr tuple prints as a list). Names
    are the text's, which the round trip compares."""
    assert (new.sym_name, new.dialect, new.num_subgroups, new.lanes) == \
        (old.sym_name, old.dialect, old.num_subgroups, old.lanes)
    assert new.constexprs == {k: list(v) if isinstance(v, tuple) else v for k, v in old.constexprs.items()}
    numbering: dict = {}

    def values(block_old, block_new):
        for a, b in zip(block_old.args, block_new.args):
            assert (b.type, b.layout) == (a.type, a.layout), f"block argument {a}"
            numbering[a], numbering[b] = len(numbering), len(numbering)

    if old.dialect == "xetile":  # XeTile text leaves out the launch facts of arrays (printer.Printer.arg_attrs)
        for a, b in zip(old.args, new.args):
            if isinstance(a.type, MemRefType):
                assert b.type == dataclasses.replace(a.type, **dict.fromkeys(ARG_ATTRS, True))
                b.type = a.type
    values(old.body, new.body)
    for a, b in zip(walk(old.body), walk(new.body), strict=True):
        where = f"{a.name} (parsed as {type(b).__name__} {b.name})"
        assert type(b) is type(a), where
        fields = lambda op: {k: v for k, v in vars(op).items() if k not in INFRASTRUCTURE}  # noqa: E731
        fa, fb = fields(a), fields(b)
        assert fa.keys() == fb.keys() and all(same_attribute(fa[k], fb[k]) for k in fa), f"{where}: {fa} != {fb}"
        assert [numbering[v] for v in b.operands] == [numbering[v] for v in a.operands], where
        for ra, rb in zip(a.results, b.results, strict=True):
            assert (rb.type, rb.layout) == (ra.type, ra.layout), where
            numbering[ra], numbering[rb] = len(numbering), len(numbering)
        for ra, rb in zip(a.regions, b.regions, strict=True):
            values(ra.block, rb.block)


def round_trip(func: FuncOp) -> FuncOp:
    text = print_func(func)
    parsed = parse_func(text)
    assert print_func(parsed) == text
    return parsed


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", sorted(TUTORIAL_CALLS))
def test_tutorial_round_trip(name, level):
    func = tutorial_levels(name)[level]
    assert_same_ir(func, round_trip(func))


def levels_of(kernel, args, consts, num_subgroups=None) -> dict[str, FuncOp]:
    func = kernel.warmup(*args, **consts, target="numpy").func
    return {"xetile": func, **lower(func, target="cpu", num_subgroups=num_subgroups)}


ROWS = xetile.Layout(sg_layout=[4, 1], sg_data=[8, 32])
COLS = xetile.Layout(sg_layout=[1, 4], sg_data=[32, 8])


@xetile.kernel
def assorted(x, keys, counts, y, n):
    """What the tutorials leave out: device_assert and device_print, SLM behind a fence, a named barrier and a
    barrier, a select, a masked atomic on a #scatter tile, a #scatter tile moved in a loop, a masked scatter, the
    grid's size, a prefetch, an fma and a reduction of 8x24 (blocks of 8x16: the second one masked)."""
    nb = xetile.named_barrier(1, 4)
    s = xetile.alloc_slm([32, 32], xetile.float32)
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32], layout=COLS))
    xetile.device_assert(n > 0, "n is positive")
    xetile.store_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=COLS), v * 2.0)
    xetile.fence(scope="workgroup", memory="slm")
    xetile.nbarrier_arrive(nb)
    xetile.nbarrier_wait(nb)
    w = xetile.load_tile(xetile.init_tile(s, [0, 0], [32, 32], layout=ROWS))
    xetile.device_print("n and w:", n, w)
    xetile.barrier()
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 32], layout=ROWS), xetile.where(w > 1.0, w, -w))
    k = xetile.load_tile(xetile.init_tile(keys, [0, 0], [4, 16]))
    t = xetile.init_tile(counts, indices=k)
    for i in range(2):
        xetile.atomic_rmw_tile("add", 1, t, mask=k != 3)
        t = xetile.update_tile_offset(t, xetile.full([4, 16], 1, xetile.int32))
    xetile.store_scatter(xetile.init_tile(counts, indices=k * 0 + xetile.iota([4, 16], 1)), k, k > 100)
    band = xetile.init_tile(x, [xetile.num_programs(0) - 1, 0], [8, 24])
    xetile.prefetch_tile(band, locality=1)
    v = xetile.load_tile(band)
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 1]), xetile.tile_reduce("max", xetile.fma(v, v, v), [1]))


def assorted_case(rng):
    keys = rng.integers(-2, 12, (4, 16)).astype(np.int32)
    args = (rand(rng, (32, 32), np.float32), keys, np.zeros((1, 16), np.int32), np.zeros((32, 32), np.float32), 3)
    return assorted, args, {}, (1,)


@pytest.mark.parametrize("level", LEVELS)
def test_assorted_ops_round_trip(level, rng):
    kernel, args, consts, _ = assorted_case(rng)
    func = levels_of(kernel, args, consts)[level]
    assert_same_ir(func, round_trip(func))


@pytest.mark.parametrize("level", LEVELS)
def test_value_shape_ops_round_trip_and_run_like_the_printed(level, rng):
    """xetile.slice, concat and flip (1-D and 2-D, 4 subgroups), and the flips left at each lower level."""
    for case in ("slices-32x64-4-subgroups", "1-d-37", "flip-cols-32x64-2x2-subgroups-i8"):
        kernel, args, consts, options, *_ = SHAPE_CASES[case](rng)
        func = levels_of(kernel, args, consts, options.get("num_subgroups"))[level]
        parsed = round_trip(func)
        assert_same_ir(func, parsed)
        for e, g in zip(run_func(func, (1,), args), run_func(parsed, (1,), args), strict=True):
            assert np.array_equal(e, g), f"{case} at {level}"


@xetile.kernel
def float8_mma(a, b, c):
    acc = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [8, 32])),
                          xetile.load_tile(xetile.init_tile(b, [0, 0], [32, 16])))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [8, 16]), acc)


ATTRIBUTE_CASES = {  # kernels whose ops carry the attributes the others leave out
    "cache-hints": (hinted_copy, (np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32))),
    "tf32": (tf32_mma, (np.zeros((8, 16), np.float32), np.zeros((16, 16), np.float32), np.zeros((8, 16), np.float32))),
    "vnni-b": (mma_stored_b, (np.zeros((16, 64), np.int8), np.zeros((64, 32), np.int8), np.zeros((16, 32), np.int32),
                              np.zeros((64, 32), np.int8))),
    "fp8-mma": (float8_mma, (np.zeros((8, 32), ml_dtypes.float8_e5m2), np.zeros((32, 16), ml_dtypes.float8_e4m3fn),
                             np.zeros((8, 16), np.float32))),
}


@pytest.mark.parametrize("case", list(ATTRIBUTE_CASES))
def test_op_attributes_round_trip(case):
    kernel, args = ATTRIBUTE_CASES[case]
    levels = levels_of(kernel, args, {})
    for func in levels.values():
        assert_same_ir(func, round_trip(func))
    texts = "".join(print_func(f) for f in levels.values())
    assert {"cache-hints": "l1_hint = #xegpu.cache_hint<uncached>", "tf32": 'input_precision = "tf32"',
            "vnni-b": "vnni_b = i8", "fp8-mma": "{any_nan_payload = true"}[case] in texts


@pytest.mark.parametrize("case", ["epilogue", "indexed", "two-mma-own-layouts", "rows-1d", "column-major-io"])
def test_parsed_ir_runs_like_the_printed(case):
    """The interpreter gives the same arrays, bit for bit, on the parsed function as on the original at every
    level."""
    kernel, args, consts, grid = CASES[case](np.random.default_rng(1))
    for level, func in levels_of(kernel, args, consts).items():
        expected = run_func(func, grid, args)
        got = run_func(parse_func(print_func(func)), grid, args)
        for e, g in zip(expected, got, strict=True):
            assert np.array_equal(e, g, equal_nan=True), f"{case} at {level}"
        assert any(np.any(e != 0) for e in expected), f"{case} at {level} wrote nothing"


def test_assorted_ops_run_like_the_printed(rng, capfd):
    kernel, args, consts, grid = assorted_case(rng)
    for level, func in levels_of(kernel, args, consts).items():
        expected = run_func(func, grid, args)
        printed = capfd.readouterr().out
        got = run_func(parse_func(print_func(func)), grid, args)
        lines = sorted(printed.splitlines())  # subgroups print in the order their threads run
        assert sorted(capfd.readouterr().out.splitlines()) == lines and len(lines) == 32 * 32
        for e, g in zip(expected, got, strict=True):
            assert np.array_equal(e, g), level


def test_the_stage_dump_parses_into_every_stage(capsys, monkeypatch):
    """XETILE_DUMP_IR=1 prints each stage's function under a comment line: the dump reads back as those functions."""
    func = tutorial_levels("02-fused-softmax")["xetile"]
    monkeypatch.setenv("XETILE_DUMP_IR", "1")
    stages = lower(func, target="cpu")
    funcs = parse_funcs(capsys.readouterr().err)
    assert [print_func(f) for f in funcs] == [print_func(f) for f in stages.values()]
    assert [f.dialect for f in funcs] == ["xetile"] + ["xegpu"] * 4


GOOD = """\
func.func @k(%x: memref<?x?xf32, strided<[?, 1]>>, %n: i32) {
  %0 = arith.constant 0 : index
  %1 = xetile.init_tile %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x16xf32>
  %2 = xetile.load_tile %1 : !xetile.tile<8x16xf32> -> vector<8x16xf32>
  func.return
}"""


@pytest.mark.parametrize("old, new, line, column, message", [
    ("%2 = xetile.load_tile %1", "%2 = xetile.load_tile %9", 4, 25, "value %9 is not defined"),
    ("xetile.load_tile", "xetile.lod_tile", 4, 8, "unknown op xetile.lod_tile"),
    ("-> vector<8x16xf32>", "-> vector<8x8xf32>", 4, 56, "gives vector<8x16xf32>, the text says vector<8x8xf32>"),
    ("%1 = xetile", "%0 = xetile", 3, 3, "value %0 is defined twice"),
    ("load_tile %1 : !xetile.tile<8x16xf32>", "load_tile %0 : index", 4, 25, "xetile.load_tile cannot take these"),
    ("%n: i32", "%n: i33", 1, 56, "unknown type i33"),
    ("%x[%0, %0]", "%x[%0 %0]", 3, 31, "expected ']'"),
    (": index", ": idx", 2, 27, "unknown type idx"),
    ("  func.return\n}", "  func.return\n", 6, 1, "expected an op or '}'"),
    ("%0 = arith.constant 0 : index", "%0 = arith.constant 0 : index {bogus = 1}", 2, 33, "expected an op"),
    ("%2 = xetile.load_tile %1 :", "%2 = xetile.load_tile %1 {volatile = true} :", 4, 28,
     "xetile.load_tile has no attribute volatile"),
    ("  func.return", "  %3 = arith.truncf %2 {any_nan_payload = yes} : vector<8x16xf32> to vector<8x16xf16>\n"
     "  func.return", 5, 24, "any_nan_payload = 'yes' on arith.truncf: true or false"),
])
def test_parse_errors_name_line_and_column(old, new, line, column, message):
    assert GOOD.count(old) == 1
    parse_func(GOOD)
    with pytest.raises(ParseError) as error:
        parse_func(GOOD.replace(old, new))
    assert (error.value.line, error.value.column) == (line, column)
    assert message in error.value.message and str(error.value).startswith(f"line {line}, column {column}: ")


@pytest.mark.parametrize("line, message", [
    ("xetile.prefetch_tile %1 locality<7> : !xetile.tile<8x16xf32>", "xetile.prefetch_tile: locality must be 0..3"),
    ("%3 = arith.truncf %2 {any_nan_payload = true} : vector<8x16xf32> to vector<8x16xf16>",
     "arith.truncf: frees the NaN payload of a cast other than a float extension"),
])
def test_an_op_that_breaks_its_rule_is_reported_at_its_line(line, message):
    """The parsed function is verified; each op's loc is its line of the text."""
    text = GOOD.replace("  func.return", f"  {line}\n  func.return")
    with pytest.raises(CompilationError, match=rf"^kernel.mlir:5: {message}"):
        parse_func(text, "kernel.mlir")


def test_parse_error_after_the_function():
    with pytest.raises(ParseError, match=r"^line 7, column 1: expected the end of the text"):
        parse_func(GOOD + "\nfunc.return")


# ---- scf.while and compare-and-swap, written by hand -----------------------------------------------------------
WHILE_IR = """\
func.func @doubling(%limit: i32, %lock: memref<?x?xi32, strided<[?, 1]>>) {
  %0 = arith.constant 1 : i32
  %1 = arith.constant 0 : i32
  %2:2 = scf.while (%p = %0, %n = %1) do (%p_1, %n_1) -> (i32, i32) {
    %3 = arith.cmpi sle, %p, %limit : i32
    scf.condition(%3) %p, %n : i32, i32
  } do {
    %4 = arith.addi %p_1, %p_1 : i32
    %5 = arith.constant 1 : i32
    %6 = arith.addi %n_1, %5 : i32
    scf.yield %4, %6 : i32, i32
  }
  %7 = arith.constant 0 : index
  %8 = xetile.init_tile %lock[%7, %7] : memref<?x?xi32, strided<[?, 1]>> -> !xetile.tile<1x1xi32>
  %9 = vector.broadcast %2#1 : i32 to vector<1x1xi32>
  %10 = vector.broadcast %1 : i32 to vector<1x1xi32>
  %11 = xetile.atomic_rmw_tile <cas> %9, %8, %10 : vector<1x1xi32>, !xetile.tile<1x1xi32>, vector<1x1xi32> -> vector<1x1xi32>
  %12 = vector.extract %11[0, 0] : i32 from vector<1x1xi32>
  func.return
}"""

COMBINE_SUM = """func.func @row_sums(%src: memref<?x?xf32, strided<[?, 1]>>, %dst: memref<?x?xf32, strided<[?, 1]>>) {
  %0 = arith.constant 0 : index
  %1 = xetile.init_tile %src[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<16x32xf32>
  %2 = xetile.load_tile %1 : !xetile.tile<16x32xf32> -> vector<16x32xf32>
  %3 = xetile.reduce %2 [1] combine(%acc, %next) : vector<16x32xf32> into vector<16x1xf32> {
    %4 = arith.addf %acc, %next : f32
    scf.yield %4 : f32
  }
  %5 = xetile.init_tile %dst[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<16x1xf32>
  xetile.store_tile %3, %5 : vector<16x1xf32>, !xetile.tile<16x1xf32>
  func.return
}"""


def test_scf_while_and_cas_round_trip_and_run():
    """The loop doubles 1 until it passes the limit, counting the steps; the count is swapped into a lock that
    holds 0 (a second swap finds it taken)."""
    func = parse_func(WHILE_IR)
    assert print_func(func) == WHILE_IR
    (lock,) = run_func(func, (1, 1, 1), [100, np.zeros((1, 1), np.int32)])
    assert lock[0, 0] == 7  # 1, 2, 4, ..., 128: seven doublings
    (lock,) = run_func(func, (1, 1, 1), [1000, lock])
    assert lock[0, 0] == 7  # held 7, not 0: left alone


@pytest.mark.parametrize("old, new, message", [
    ("scf.condition(%3) %p, %n : i32, i32", "scf.condition(%3) %p : i32",
     "scf.condition forwards (i32) but the loop carries (i32, i32)"),
    ("%11 = xetile.atomic_rmw_tile <cas> %9, %8, %10 : vector<1x1xi32>, !xetile.tile<1x1xi32>, vector<1x1xi32>",
     "%11 = xetile.atomic_rmw_tile <cas> %9, %8 : vector<1x1xi32>, !xetile.tile<1x1xi32>",
     "kind 'cas' takes 3 operands, got 2"),
    ("%11 = xetile.atomic_rmw_tile <cas>", "%11 = xetile.atomic_rmw_tile <addi>", "kind 'add' takes 2 operands, got 3"),
])
def test_scf_while_and_cas_rules(old, new, message):
    assert WHILE_IR.count(old) == 1
    with pytest.raises(CompilationError, match=re.escape(message)):
        parse_func(WHILE_IR.replace(old, new))


def test_a_while_condition_is_a_workgroup_scalar():
    text = WHILE_IR.replace("%3 = arith.cmpi sle, %p, %limit : i32\n    scf.condition(%3)",
                            "%3 = arith.cmpi sle, %p, %limit : i32\n"
                            "    %v = vector.broadcast %3 : i1 to vector<1x16xi1>\n    scf.condition(%v)")
    with pytest.raises(CompilationError, match="condition must be a scalar i1, got vector<1x16xi1>: a while loop's "
                                               "condition is one value for the whole workgroup"):
        parse_func(text)


def test_combine_text_runs_its_region_as_a_tree_of_pairs(rng):
    x = rand(rng, (16, 32), np.float32)
    func = parse_func(COMBINE_SUM)
    assert print_func(func) == COMBINE_SUM
    expected = x.copy()
    while expected.shape[1] > 1:
        expected = expected[:, 0::2] + expected[:, 1::2]  # neighbours paired, in f32: the tree's rounding
    for level in [func, *lower(func).values()]:
        _, dst = run_func(level, (1,), [x, np.zeros((16, 1), np.float32)])
        np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("old, new, message", [
    ("scf.yield %4 : f32", "%6 = arith.cmpf olt, %acc, %next : f32\n    scf.yield %6 : i1",
     "region yields (i1) but the op returns (f32)"),
    ("combine(%acc, %next)", "combine(%acc, %next, %more)", "takes one dim and two combine arguments per operand"),
    ("into vector<16x1xf32> {", "into vector<1x32xf32> {", "type vector<1x32xf32> does not match vector<16x1xf32>"),
])
def test_combine_text_errors(old, new, message):
    with pytest.raises((ParseError, CompilationError), match=re.escape(message)):
        parse_func(COMBINE_SUM.replace(old, new))


@pytest.mark.parametrize("shapes, dim, message", [
    ([(16, 32)], 2, "dim 2 is not a dim of the 2-D vectors"),
    ([(16, 32), (16, 16)], 1, "vectors of one shape, got vector<16x32xf32>, vector<16x16xf32>"),
])
def test_combine_verifier(shapes, dim, message):
    values = [Value(VectorType(shape, float32)) for shape in shapes]
    op = CombineReduceOp(values, dim)
    op.body.append(YieldOp(op.body.args[:len(values)]))
    with pytest.raises(CompilationError, match=re.escape(message)):
        op.verify()


def test_combine_ops_round_trip_at_every_level(rng):
    """xetile.reduce and xetile.scan keep their regions through the text; the levels below hold their loops."""
    from test_combine import LAYOUTS, argmax, segmented_sum
    x = np.zeros((32, 64), np.float32)
    cases = [(argmax, [x, np.zeros((1, 64), np.float32), np.zeros((1, 64), np.int32)]),
             (segmented_sum, [x, np.zeros((32, 64), np.int32), np.zeros((32, 64), np.int32)])]
    for kernel, args in cases:
        levels = levels_of(kernel, args, dict(AXIS=0, LAYOUT=LAYOUTS["2x2_subgroups"], BM=32, BN=64))
        assert [op.name for op in walk(levels["xetile"].body) if op.regions] in (["xetile.reduce"], ["xetile.scan"])
        for func in levels.values():
            assert_same_ir(func, round_trip(func))
