"""What Triton users write, written here: bit casts, numpy broadcasting of a 1-D vector against a 2-D one, Triton's
defaults for integer sums and for NaN in maximum/minimum, and errors that say what to write instead.

Each kernel is a small worked example. It runs in the numpy interpreter on the XeTile IR (checked against numpy), at
every lowered level of both CPU targets and as their SPIR-V on opencl:cpu (all checked against the XeTile IR's
result bit for bit: fuzz/levels.run_levels), and builds for xe-hpc and xe2 with ocloc where it is installed. Two
workgroups of two subgroups each: a 16 x 16 array in blocks of 8 rows, four rows a subgroup."""
import re

import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import rand
from every_level import run_everywhere
from xetile_jit.ir import core_ops as C
from xetile_jit.ir.core import Value
from xetile_jit.ir.parser import parse_func
from xetile_jit.ir.printer import print_func
from xetile_jit.ir.types import VectorType, float32, int16
from xetile_jit.compiler.pipeline import lower
from xetile_jit.language.triton_spellings import TRITON_SPELLINGS
from xetile_jit.target.targets import get_target
from xetile_jit.toolchain import ocloc

ROWS = xetile.Layout(sg_layout=[2, 1], sg_data=[4, 16])   # an 8 x 16 block: two subgroups of four rows
M, N = 16, 16
GRID = (M // 8,)
SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -3.5], np.float32)


def with_specials(rng, shape) -> np.ndarray:
    x = rand(rng, shape, np.float32)
    x.flat[:: 5] = np.resize(SPECIALS, x.flat[:: 5].shape)
    return x


@xetile.kernel
def block(array, layout=ROWS):
    """The tile of this workgroup's 8 rows of `array` (a helper kernel, inlined where it is called)."""
    return xetile.init_tile(array, [xetile.program_id(0) * 8, 0], [8, 16], layout=layout)


# ---- bit casts ----------------------------------------------------------------------------------------------
@xetile.kernel
def sign_bits(x, h, bits, magnitude, h_as_bf16, key):
    """|x| by clearing the sign bit of its int32 bits (NaN, infinities and -0.0 too), the bits of a runtime f32
    scalar mixed in, and f16 bits read as bf16."""
    b = xetile.load_tile(block(x)).to(xetile.int32, bitcast=True)
    xetile.store_tile(block(bits), b ^ xetile.bitcast(key, xetile.int32))
    xetile.store_tile(block(magnitude), xetile.bitcast(b & 0x7FFFFFFF, xetile.float32))
    xetile.store_tile(block(h_as_bf16), xetile.bitcast(xetile.load_tile(block(h)), xetile.bfloat16))


def bit_cast_case(rng):
    x = with_specials(rng, (M, N))
    h = rand(rng, (M, N), np.float16)
    arrays = {"x": x, "h": h, "bits": np.zeros((M, N), np.int32), "magnitude": np.zeros((M, N), np.float32),
              "h_as_bf16": np.zeros((M, N), ml_dtypes.bfloat16)}
    return sign_bits, arrays, (np.float32(-2.75),)


def test_bit_casts_reinterpret_the_bits(rng):
    kern, arrays, scalars = bit_cast_case(rng)
    out = run_everywhere(kern, arrays, GRID, *scalars)
    x, h = arrays["x"], arrays["h"]
    np.testing.assert_array_equal(out["bits"], x.view(np.int32) ^ scalars[0].view(np.int32))
    np.testing.assert_array_equal(out["magnitude"].view(np.int32), x.view(np.int32) & 0x7FFFFFFF)
    np.testing.assert_array_equal(out["h_as_bf16"].view(np.int16), h.view(np.int16))


def test_bit_casts_print_and_parse_back_at_every_level(rng):
    kern, arrays, scalars = bit_cast_case(rng)
    func = kern.warmup(*arrays.values(), *scalars, target="numpy").func
    levels = {"xetile": func, **lower(func, target="cpu")}
    text = print_func(func)
    assert re.search(r"= arith.bitcast %\d+ : vector<8x16xf32> to vector<8x16xi32>", text)
    assert "= arith.bitcast %key : f32 to i32" in text
    for level in levels.values():
        text = print_func(level)
        assert "arith.bitcast" in text and print_func(parse_func(text)) == text


@xetile.kernel
def narrowing_bitcast(x, y):
    xetile.store_tile(block(y, None), xetile.bitcast(xetile.load_tile(block(x, None)), xetile.float16))


@xetile.kernel
def bool_bitcast(x, y):
    xetile.store_tile(block(y, None), xetile.load_tile(block(x, None)).to(xetile.int8, bitcast=True))


def test_a_bit_cast_between_widths_or_of_bools_is_a_named_error():
    x = np.zeros((M, N), np.float32)
    with pytest.raises(xetile.CompilationError, match=r"bitcast: vector<8x16xf32> \(32 bits\) to f16 \(16 bits\): a "
                                                      r"bit cast keeps the width; convert the value with x.to"):
        narrowing_bitcast.warmup(x, x.astype(np.float16), target="numpy")
    with pytest.raises(xetile.CompilationError, match="bitcast: vector<8x16xi1> to i8: a bool has no bit pattern"):
        bool_bitcast.warmup(x.astype(bool), x.astype(np.int8), target="numpy")
    op = C.CastOp("arith.bitcast", Value(VectorType((4,), float32)), VectorType((4,), int16))
    with pytest.raises(xetile.CompilationError, match=r"differ in width \[arith.bitcast keeps the width\]"):
        op.verify()


# ---- broadcasting -------------------------------------------------------------------------------------------
@xetile.kernel
def bias_rows(x, bias, y, z):
    """numpy broadcasting: the 1-D bias [16] meets the 8 x 16 block as a row, with no expand_dims; so do a 1-D
    arange mask in where and maximum; scalars broadcast everywhere."""
    v = xetile.load_tile(block(x))
    b = xetile.load_tile(xetile.init_tile(bias, [0], [16]))
    xetile.store_tile(block(y), v * 2.0 + b)
    xetile.store_tile(block(z), xetile.where(xetile.arange(0, 16) % 3 == 0, xetile.maximum(v, b), b - v))


def test_a_1d_vector_broadcasts_against_a_2d_one_along_the_last_axis(rng):
    x, bias = rand(rng, (M, N), np.float32), rand(rng, (N,), np.float32)
    arrays = {"x": x, "bias": bias, "y": np.zeros((M, N), np.float32), "z": np.zeros((M, N), np.float32)}
    out = run_everywhere(bias_rows, arrays, GRID)
    np.testing.assert_array_equal(out["y"], x * np.float32(2) + bias)
    np.testing.assert_array_equal(out["z"], np.where(np.arange(N) % 3 == 0, np.maximum(x, bias), bias - x))


@xetile.kernel
def mismatched_rows(x, bias, y):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [3, 5]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [3, 5]), v + xetile.load_tile(xetile.init_tile(bias, [0], [4])))


def test_a_shape_mismatch_names_both_shapes():
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(xetile.CompilationError, match=r"vector shapes \(3, 5\) and \(4,\) are not compatible: dims "
                                                      r"must be equal or 1, aligned at the last dim"):
        mismatched_rows.warmup(x, np.zeros(4, np.float32), x, target="numpy")


# ---- Triton's defaults: integer sums, NaN in maximum/minimum ------------------------------------------------
@xetile.kernel
def sums_and_extremes(q, u, a, c, sums, prefix, u_sums, wrapped, counts, most, most_num, least_num):
    """int8 sums accumulate in int32 (tile_reduce and cumsum), uint8 and bool ones in uint32, unless dtype= says so;
    maximum keeps a NaN by default and lets it lose with PropagateNan.NONE (minimum with propagate_nan=False)."""
    pid = xetile.program_id(0)
    v = xetile.load_tile(block(q))
    xetile.static_assert(xetile.tile_reduce("add", v, [1]).dtype == xetile.int32)
    xetile.store_tile(xetile.init_tile(sums, [pid * 8, 0], [8, 1]), xetile.tile_reduce("add", v, [1]))
    xetile.store_tile(block(prefix), xetile.cumsum(v, 1))
    xetile.store_tile(xetile.init_tile(wrapped, [pid * 8, 0], [8, 1]), xetile.tile_reduce("add", v, [1],
                                                                                          dtype=xetile.int8))
    xetile.store_tile(xetile.init_tile(counts, [pid * 8, 0], [8, 1]), xetile.tile_reduce("add", v > 0, [1]))
    w = xetile.load_tile(block(u))
    xetile.store_tile(xetile.init_tile(u_sums, [pid, 0], [1, 1]), xetile.tile_reduce("add", w, [0, 1]))
    s, t = xetile.load_tile(block(a)), xetile.load_tile(block(c))
    xetile.store_tile(block(most), xetile.maximum(s, t))
    xetile.store_tile(block(most_num), xetile.maximum(s, t, propagate_nan=xetile.PropagateNan.NONE))
    xetile.store_tile(block(least_num), xetile.minimum(s, t, propagate_nan=False))


def test_small_integer_sums_accumulate_in_32_bits_and_nan_follows_propagate_nan(rng):
    q = rng.integers(-128, 128, (M, N)).astype(np.int8)
    u = rng.integers(0, 256, (M, N)).astype(np.uint8)
    a, c = with_specials(rng, (M, N)), with_specials(rng, (M, N))[::-1].copy()
    arrays = {"q": q, "u": u, "a": a, "c": c, "sums": np.zeros((M, 1), np.int32), "prefix": np.zeros((M, N), np.int32),
              "u_sums": np.zeros((2, 1), np.uint32), "wrapped": np.zeros((M, 1), np.int8),
              "counts": np.zeros((M, 1), np.uint32),
              **{k: np.zeros((M, N), np.float32) for k in ("most", "most_num", "least_num")}}
    out = run_everywhere(sums_and_extremes, arrays, GRID)
    wide = q.astype(np.int32)
    np.testing.assert_array_equal(out["sums"], wide.sum(1, keepdims=True))
    assert np.abs(out["sums"]).max() > 127   # beyond int8: the old rule wrapped these
    np.testing.assert_array_equal(out["prefix"], np.cumsum(wide, 1))
    np.testing.assert_array_equal(out["wrapped"], q.sum(1, keepdims=True, dtype=np.int8))
    np.testing.assert_array_equal(out["u_sums"][:, 0], u.astype(np.uint32).reshape(2, -1).sum(1))
    np.testing.assert_array_equal(out["counts"], (q > 0).sum(1, keepdims=True))
    np.testing.assert_array_equal(out["most"], np.maximum(a, c))
    np.testing.assert_array_equal(out["most_num"], np.fmax(a, c))
    np.testing.assert_array_equal(out["least_num"], np.fmin(a, c))
    assert np.isnan(out["most"]).sum() > np.isnan(out["most_num"]).sum() > 0   # NaN on both sides stays NaN


@xetile.kernel
def bad_propagate_nan(a, y):
    xetile.store_tile(block(y, None), xetile.maximum(xetile.load_tile(block(a, None)), 0.0, propagate_nan="all"))


def test_propagate_nan_takes_the_enum_or_a_bool():
    a = np.zeros((M, N), np.float32)
    with pytest.raises(xetile.CompilationError, match=r"maximum: propagate_nan must be xetile.PropagateNan.ALL or "
                                                      r".NONE \(or True or False\), got str 'all'"):
        bad_propagate_nan.warmup(a, a, target="numpy")


# ---- Triton's axes, a reduction's kept dims, 1-D combines, float // and % ----------------------------------
@xetile.kernel
def larger(a, b):
    return xetile.maximum(a, b)


@xetile.kernel
def axes_and_ranks(x, v, row_sums, row_max, arg_last, prefix, total, v_max, v_scan, quotient, remainder):
    """Axes as numpy and Triton write them (-1, None), a reduction's [8, 1] stored through 8 pointers and its [1, 1]
    through a scalar pointer (tile_reduce keeps the dims Triton's tl.sum drops), reduce and associative_scan of a
    1-D vector, and float // and % of negative operands."""
    pid = xetile.program_id(0)
    rows = xetile.arange(0, 8) + pid * 8
    t = xetile.load_tile(block(x))
    xetile.store(row_sums + rows, xetile.tile_reduce("add", t, -1))
    xetile.store_tile(xetile.init_tile(row_max, [pid * 8, 0], [8, 1]), xetile.tile_reduce("max", t, [-1]))
    xetile.store(arg_last + rows, xetile.tile_reduce("argmax", t, -1))
    xetile.store_tile(block(prefix), xetile.cumsum(t, -1))
    xetile.store(total + pid, xetile.tile_reduce("add", t, None))
    w = xetile.load(v + xetile.arange(0, 16))
    xetile.store(v_max + pid, xetile.reduce(w, 0, larger))
    xetile.store(v_scan + pid * 16 + xetile.arange(0, 16), xetile.associative_scan(w, -1, larger))
    d = xetile.where(xetile.arange(0, 16) % 2 == 0, 2.5, -2.5)
    xetile.store_tile(block(quotient), t // d)
    xetile.store_tile(block(remainder), t % d)


def test_triton_axes_reduced_dims_1d_combines_and_float_division(rng):
    x = rng.integers(-64, 64, (M, N)).astype(np.float32) / 4   # sums exact in any order: the same at every level
    x[3, 5] = x[3, 4] = x[3].max() + 1                         # argmax: the first of two
    v = rand(rng, (N,), np.float32)
    arrays = {"x": x, "v": v, "row_sums": np.zeros(M, np.float32), "row_max": np.zeros((M, 1), np.float32),
              "arg_last": np.zeros(M, np.int32), "prefix": np.zeros((M, N), np.float32),
              "total": np.zeros(2, np.float32), "v_max": np.zeros(2, np.float32), "v_scan": np.zeros(2 * N, np.float32),
              "quotient": np.zeros((M, N), np.float32), "remainder": np.zeros((M, N), np.float32)}
    out = run_everywhere(axes_and_ranks, arrays, GRID)
    np.testing.assert_array_equal(out["row_sums"], x.sum(1))
    np.testing.assert_array_equal(out["row_max"], x.max(1, keepdims=True))
    np.testing.assert_array_equal(out["arg_last"], x.argmax(1))
    np.testing.assert_array_equal(out["prefix"], np.cumsum(x, 1))
    np.testing.assert_array_equal(out["total"], x.reshape(2, -1).sum(1))
    np.testing.assert_array_equal(out["v_max"], [v.max()] * 2)
    np.testing.assert_array_equal(out["v_scan"], np.tile(np.maximum.accumulate(v), 2))
    d = np.where(np.arange(N) % 2 == 0, np.float32(2.5), np.float32(-2.5))
    np.testing.assert_array_equal(out["quotient"], np.trunc(x / d))   # C's: toward zero, as integers' //
    np.testing.assert_array_equal(out["remainder"], np.fmod(x, d))    # the dividend's sign, as Triton's %
    np.testing.assert_allclose(out["quotient"] * d + out["remainder"], x, rtol=1e-6, atol=1e-5)
    assert (out["quotient"] < 0).any() and (out["remainder"] < 0).any() and (out["remainder"] > 0).any()


# ---- messages that say what to do ---------------------------------------------------------------------------
@xetile.kernel
def prints(x, BLOCK: xetile.constexpr):
    print(xetile.load_tile(xetile.init_tile(x, [0, 0], [BLOCK, BLOCK])))


@xetile.kernel
def comprehends(x, BLOCK: xetile.constexpr):
    tiles = [xetile.init_tile(x, [i * BLOCK, 0], [BLOCK, BLOCK]) for i in range(2)]


@xetile.kernel
def misspells(x, y, BLOCK: xetile.constexpr):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [BLOK, BLOCK]), xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8])))


@xetile.kernel
def misnames(x, ATTRIBUTE: xetile.constexpr):
    t = xetile.init_tile(x, [0, 0], [8, 8])
    v = xetile.load_tile(t).too(xetile.float16) if ATTRIBUTE else xetile.lod_tile(t)


@pytest.mark.parametrize("call, error, message", [
    (lambda x: prints.warmup(x, BLOCK=8, target="numpy"), xetile.CompilationError,
     r"print does not run in a kernel; use xetile.device_print\(\"x =\", x\)"),
    (lambda x: comprehends.warmup(x, BLOCK=8, target="numpy"), xetile.CompilationError,
     r"a list comprehension is not supported in a kernel; write the values out \(\[a, b, c\]\), or unroll with "
     r"`for i in xetile.static_range\(n\):`"),
    (lambda x: misspells.warmup(x, x, BLOCK=8, target="numpy"), xetile.CompilationError,
     r"name 'BLOK' is not defined; did you mean 'BLOCK'\?"),
    (lambda x: misnames.warmup(x, ATTRIBUTE=False, target="numpy"), xetile.CompilationError,
     r"has no attribute 'lod_tile'; did you mean 'load_tile'\?"),
    (lambda x: misnames.warmup(x, ATTRIBUTE=True, target="numpy"), xetile.CompilationError,
     r"vector<8x8xf32> has no attribute 'too'; did you mean 'to'\?"),
    (lambda x: prints[(1,)](x, BLOCK=8, num_warps=4, device="numpy"), xetile.LaunchError,
     r"unexpected keyword argument 'num_warps' \(num_warps is Triton's; here it is num_subgroups: the subgroups"),
    (lambda x: prints[(1,)](x, BLOCK=8, num_stages=3, device="numpy"), xetile.LaunchError,
     r"\(num_stages is Triton's; the nearest here is prefetch_distance: how many loop steps"),
    (lambda x: prints[(1,)](x, BLOCKS=8, device="numpy"), xetile.LaunchError,
     r"\('BLOCKS' is not a parameter; did you mean 'BLOCK'\?\); parameters are \(x, BLOCK\)"),
], ids=["print", "list-comprehension", "misspelt-name", "misspelt-function", "misspelt-attribute", "num_warps",
        "num_stages", "misspelt-constexpr"])
def test_errors_say_what_to_write_instead(call, error, message):
    with pytest.raises(error, match=message):
        call(np.zeros((16, 16), np.float32))


@xetile.kernel
def ported(x, NAME: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    if NAME == "sum":
        v = xetile.sum(v, axis=1)
    if NAME == "multiple_of":
        v = xetile.multiple_of(v, 16)


@xetile.kernel
def triton_keywords(x, o, KEYWORD: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8]))
    if KEYWORD == "allow_tf32":
        v = xetile.tile_mma(v, v, allow_tf32=False)
    if KEYWORD == "sem":
        xetile.atomic_add(o + xetile.arange(0, 8), 1, sem="relaxed")


@pytest.mark.parametrize("keyword, message", [
    ("allow_tf32", "unexpected keyword argument 'allow_tf32' (allow_tf32= is Triton's; here: input_precision=\"tf32\""),
    ("sem", "unexpected keyword argument 'sem' (sem= is Triton's; here: every atomic is sequentially consistent"),
])
def test_a_triton_keyword_says_what_to_write_instead(keyword, message):
    with pytest.raises(xetile.CompilationError, match=re.escape(message)):
        triton_keywords.warmup(np.zeros((8, 8), np.float32), np.zeros(8, np.int32), KEYWORD=keyword, target="numpy")


@pytest.mark.parametrize("name, spelling", [("sum", 'xetile.tile_reduce("add", x, [axis])'),
                                            ("multiple_of", "a hint for Triton's analysis of pointer offsets")])
def test_a_triton_name_says_what_to_write_instead(name, spelling):
    """In a kernel and outside one, a Triton name spelt otherwise here names the spelling, not the nearest name
    (`sum` is nearest `cumsum`)."""
    with pytest.raises(xetile.CompilationError, match=re.escape(f"has no attribute '{name}' (tl.{name} is Triton's; "
                                                                f"here: {spelling}")):
        ported.warmup(np.zeros((8, 8), np.float32), NAME=name, target="numpy")
    with pytest.raises(AttributeError, match=re.escape(f"(tl.{name} is Triton's; here: {spelling}")):
        getattr(xetile, name)


def test_the_spellings_name_what_exists():
    """Every `xetile.NAME` a spelling names is the package's, and every Triton name it answers is not."""
    for name, spelling in TRITON_SPELLINGS.items():
        assert not hasattr(xetile, name), name
        for used in re.findall(r"xetile\.(\w+)", spelling):
            assert hasattr(xetile, used), (name, used)


# ---- GPU builds ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_the_idioms_build_for_gpus(rng, target):
    """The Intel GPU compiler builds each kernel above (no unresolved call left)."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for {target} is installed")
    kern, arrays, scalars = bit_cast_case(rng)
    cases = [(kern, [*arrays.values(), *scalars]),
             (bias_rows, [np.zeros((M, N), np.float32), np.zeros(N, np.float32), *[np.zeros((M, N), np.float32)] * 2]),
             (sums_and_extremes, [np.zeros((M, N), np.int8), np.zeros((M, N), np.uint8),
                                  *[np.zeros((M, N), np.float32)] * 2, np.zeros((M, 1), np.int32),
                                  np.zeros((M, N), np.int32), np.zeros((2, 1), np.uint32), np.zeros((M, 1), np.int8),
                                  np.zeros((M, 1), np.uint32),
                                  *[np.zeros((M, N), np.float32)] * 3])]
    for kernel, args in cases:
        isa = kernel.warmup(*args, target=target).asm["isa"]
        assert isa and "calla" not in isa, kernel
