"""Differential tests: the same kernels through the numpy interpreter and as SPIR-V on opencl:cpu (the GPU code
path with the Xe builtins of the `cpu` target, and, for the pipeline's kernels and the block-message rules, of
`xe-emulated`, the bit-exact emulation), compared; every module passes spirv-val."""
import copy
import os
import re
import subprocess
import sys
import warnings

import dpctl
import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.codegen.cpu.block_loops import fold_chains
from xetile_jit.codegen.llvm import lane_slots
from xetile_jit.codegen.llvm.lowering import exchange_rounds
from xetile_jit.codegen.xe.llvm_helpers import BROADCAST, SHUFFLE
from xetile_jit.ir.simt_ops import OWN, SHUFFLED, gather_plan, moves_in, row_moves
from xetile_jit.target.cpu_features import CpuFeatures
from conftest import AVX2, AVX512, assert_close, built_for_cpu, rand, subprocess_env
from test_passes import CASES
from usm_arrays import UsmArray

DEVICE = "opencl:cpu"


def run_both(kern, args, kwargs, grid, target="cpu"):
    """(interpreter results, device results for `target`) of the arrays after running `kern` on copies of `args`;
    the SPIR-V passes spirv-val in conftest's every_module_passes_spirv_val, as every module built does."""
    results = []
    for device in ("numpy", DEVICE):
        copies = [copy.deepcopy(a) for a in args]
        kern[grid](*copies, device=device, target=target, **kwargs)
        results.append([a for a in copies if isinstance(a, np.ndarray)])
    return results


def assert_same(kern, args, kwargs, grid, scale=1.0, target="cpu"):
    reference, device = run_both(kern, args, kwargs, grid, target)
    for got, want in zip(device, reference):
        assert_close(got, want, np.float32 if got.dtype.kind == "f" and got.dtype.itemsize < 4 else None,
                     scale=scale)


# on the default target only: 3.0 s of driver build on xe-emulated (5.2 s with AVX2 code), 0.8 s on cpu (the Zen 4)
ONE_TARGET = ("causal-attention",)


@pytest.mark.parametrize("case, target", [(case, target) for case in CASES for target in ("cpu", "xe-emulated")
                                          if target == "cpu" or case not in ONE_TARGET])
def test_pipeline_kernels(rng, case, target):
    kern, args, kwargs, grid = CASES[case](rng)
    assert_same(kern, args, kwargs, grid, scale=64, target=target)


@pytest.mark.parametrize("target, shuffles, exchanges", [("cpu", 64, 1), ("xe-emulated", 64, 1),
                                                        ("xe-hpc", 512, 16)])
def test_column_major_regroups_and_atomics_are_short_on_the_cpu_targets(rng, target, shuffles, exchanges,
                                                                        monkeypatch):
    """The column-major kernel's regroups between its lanes' columns and rows (six lane_gathers of 8 components a
    lane from 8 lanes each) take 8 shuffles each on the CPU targets, in exchange_rounds, not 64; its atomic max is
    one compare-exchange loop, in a function out of line that a loop over each block's elements calls
    (Target.out_of_line_atomics). A GPU keeps both unrolled. Both CPU
    targets' numbers are the interpreter's (test_pipeline_kernels). The `cpu` target's CPU is one with AVX-512,
    where the 16x32 tile takes 2 subgroups of 8 rows (with AVX2 it takes 16 of one row: Target.one_row_a_subgroup)."""
    kern, args, kwargs, _ = CASES["column-major-io"](rng)
    built_for_cpu(monkeypatch, kern, AVX512)
    with warnings.catch_warnings():  # y and z are element by element: no 2D block message addresses them
        warnings.simplefilter("ignore", xetile.BlockIOFallbackWarning)
        llir = kern.warmup(*args, **kwargs, target=target).asm["llir"]
    assert llir.count('SubgroupShuffleINTEL"(') - 1 == shuffles and llir.count(" cmpxchg ") == exchanges


def gathered(pools: np.ndarray, source_lanes: np.ndarray, components: np.ndarray) -> np.ndarray:
    """A lane_gather's result by its tables: [result component, lane]."""
    return pools[source_lanes, components]


def in_rounds(pools: np.ndarray, rounds, count: int) -> np.ndarray:
    """The same by exchange_rounds: each lane sends pool[sent], reads its source's, keeps it at its slot."""
    lanes = pools.shape[0]
    result = np.full((count + 1, lanes), np.nan)
    for sent, source, slot in rounds:
        moved = pools[np.arange(lanes), sent][source]
        result[slot, np.arange(lanes)] = moved
    return result[:count]


TRANSPOSE = (np.array([[2 * c + lane // 8 for lane in range(16)] for c in range(8)]),
             np.array([[lane % 8 for lane in range(16)] for _ in range(8)]))


@pytest.mark.parametrize("tables", ["transpose", "random", "broadcast", "own lanes"])
def test_exchange_rounds_move_what_the_tables_name(rng, tables):
    """Each result component of each lane arrives, in each round a lane sends one component and keeps at most one;
    a transpose of 8 components from 8 lanes each takes 8 rounds where unrolled it takes 64 shuffles."""
    lanes, count, pool = 16, 8, 12
    source_lanes, components = {
        "transpose": TRANSPOSE,
        "random": (rng.integers(0, lanes, (count, lanes)), rng.integers(0, pool, (count, lanes))),
        "broadcast": (np.zeros((count, lanes), np.int64), np.tile(np.arange(count)[:, None], (1, lanes))),
        "own lanes": (np.tile(np.arange(lanes), (count, 1)), rng.integers(0, pool, (count, lanes))),
    }[tables]
    pools = rng.standard_normal((lanes, pool))
    rounds = exchange_rounds(source_lanes, components, lanes)
    np.testing.assert_array_equal(in_rounds(pools, rounds, count), gathered(pools, source_lanes, components))
    if tables == "transpose":
        assert (len(rounds), moves_in(gather_plan(source_lanes, components))) == (8, 64)
    if tables == "broadcast":  # every lane reads lane 0's component c: one round a component
        assert len(rounds) == count


def test_a_lane_gather_row_moves_only_what_changes_lanes():
    """A row's source components: those every lane takes from itself need no move, those all its readers take
    from one lane a broadcast, the rest a shuffle; the rounds' rule counts the moves."""
    lanes = np.arange(16)
    mixed = (np.where(lanes < 8, lanes, lanes - 8), np.where(lanes < 8, 0, 1))  # t 1: lanes 8-15 read lanes 0-7
    shift = (np.where(lanes < 5, lanes, 3), np.where(lanes < 5, 2, 4))  # t 4: every reader reads lane 3
    assert row_moves(*mixed) == [(0, OWN), (1, SHUFFLED)]
    assert row_moves(*shift) == [(2, OWN), (4, 3)]
    assert moves_in(gather_plan(np.array([mixed[0], shift[0]]), np.array([mixed[1], shift[1]]))) == 2


def test_a_misaligned_flip_shuffles_only_between_lanes():
    """flip of 13x37 columns on `cpu` (one subgroup, 8x16 blocks): each block's lanes reversed, then realigned by 5
    columns through chains of gathers and inserts, which fold_lane_gathers makes one gather a result block reading
    the loaded blocks; each of its rows shuffles only what other lanes hold. 112 shuffles (where each row of each
    gather of the chains took one a source component, 360). The numbers are test_value_shape_ops'."""
    from test_value_shape_ops import CASES as SHAPE_CASES
    kern, args, kwargs, *_ = SHAPE_CASES["flip-cols-13x37"](np.random.default_rng(0))
    llir = kern.warmup(*args, **kwargs, target="cpu").asm["llir"]
    assert len(re.findall(r'call [^@]*@"__spirv_SubgroupShuffleINTEL"\(', llir)) == 112


@xetile.kernel
def elementwise(x, y, out, s, BM: xetile.constexpr, BN: xetile.constexpr, OP: xetile.constexpr):
    m = xetile.program_id(0) * BM
    a = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
    b = xetile.load_tile(xetile.init_tile(y, [m, 0], [BM, BN]))
    if OP == "arith":
        r = (a + b) * s - a / (xetile.abs(b) + 1)
    elif OP == "int":
        r = (a * b + s) // 3 % 7 ^ (a & b) | (a << 1)
    elif OP == "math":
        r = xetile.exp(a * 0.25) + xetile.sqrt(xetile.abs(b)) + xetile.tanh(a) - xetile.rsqrt(xetile.abs(b) + 1)
    else:
        r = xetile.where(a > b, a, b * s) + xetile.maximum(a, b) - xetile.minimum(a, s)
    xetile.store_tile(xetile.init_tile(out, [m, 0], [BM, BN]), r)


@pytest.mark.parametrize("dtype, op", [(np.float32, "arith"), (np.float16, "arith"), (ml_dtypes.bfloat16, "arith"),
                                       (np.float32, "math"), (np.float16, "select"), (np.int32, "int"),
                                       (np.int8, "int"), (np.int64, "select"), (np.uint8, "int")])
def test_elementwise_ops(rng, dtype, op):
    x, y = rand(rng, (37, 40), dtype), rand(rng, (37, 40), dtype)
    s = dtype(3) if np.dtype(dtype).kind in "iu" else 1.5
    kwargs = dict(BM=8, BN=48, OP=op)
    assert_same(elementwise, (x, y, np.zeros((37, 40), dtype), s), kwargs, (5,), scale=4)


@xetile.kernel
def reductions(x, rows, cols, total, KIND: xetile.constexpr):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 48]))
    xetile.store_tile(xetile.init_tile(rows, [0, 0], [16, 1]), xetile.tile_reduce(KIND, v, [1]))
    xetile.store_tile(xetile.init_tile(cols, [0, 0], [1, 48]), xetile.tile_reduce(KIND, v, [0]))
    xetile.store_tile(xetile.init_tile(total, [0, 0], [1, 1]), xetile.tile_reduce(KIND, v, [0, 1]))


@pytest.mark.parametrize("dtype, kind", [(np.float32, "add"), (np.float32, "max"), (np.float16, "min"),
                                         (np.int32, "add"), (np.int32, "xor"), (np.int64, "max")])
def test_reductions(rng, dtype, kind):
    x = rand(rng, (13, 45), dtype)
    outs = [np.zeros(s, dtype) for s in ((16, 1), (1, 48), (1, 1))]
    assert_same(reductions, (x, *outs), dict(KIND=kind), (1,), scale=16)


@xetile.kernel
def atomics(x, z, old_out, KIND: xetile.constexpr, BM: xetile.constexpr):
    t = xetile.init_tile(z, [0, 0], [BM, 16])
    old = xetile.atomic_rmw_tile(KIND, xetile.load_tile(xetile.init_tile(x, [0, 0], [BM, 16])), t)
    xetile.store_tile(xetile.init_tile(old_out, [xetile.program_id(0) * BM, 0], [BM, 16]), old)


@pytest.mark.parametrize("dtype, kind", [(np.float32, "add"), (np.float32, "max"), (np.int32, "add"),
                                         (np.int64, "min"), (np.int32, "or"), (np.float32, "xchg")])
def test_atomics_from_several_workgroups(rng, dtype, kind):
    x, z = rand(rng, (8, 16), dtype), rand(rng, (7, 13), dtype)  # partly out of bounds: dropped
    args = (x, z, np.zeros((32, 16), dtype))
    (_, z_ref, old_ref), (_, z_dev, old_dev) = run_both(atomics, args, dict(KIND=kind, BM=8), (4,))
    if kind != "xchg":  # xchg leaves whichever workgroup came last
        assert_close(z_dev, z_ref, scale=4)  # the final memory is the same in any order
        # each workgroup saw the memory before it: in some order, the same states as the interpreter's
        np.testing.assert_allclose(np.sort(old_dev.reshape(4, -1), axis=0), np.sort(old_ref.reshape(4, -1), axis=0),
                                   rtol=1e-5)
    assert not np.array_equal(z_dev, args[1]) or kind == "min"


@xetile.kernel
def vector_add(x, y, out, BLOCK: xetile.constexpr):
    start = xetile.program_id(0) * BLOCK
    tx, ty = xetile.init_tile(x, [0, start], [1, BLOCK]), xetile.init_tile(y, [0, start], [1, BLOCK])
    xetile.store_tile(xetile.init_tile(out, [0, start], [1, BLOCK]), xetile.load_tile(tx) + xetile.load_tile(ty))


def test_vectors_of_one_row(rng):
    n = 1000
    x, y = rand(rng, (1, n), np.float32), rand(rng, (1, n), np.float32)
    assert_same(vector_add, (x, y, np.zeros((1, n), np.float32)), dict(BLOCK=256), (xetile.cdiv(n, 256),))


@xetile.kernel
def bools_and_bytes(flags, values, out):
    f = xetile.load_tile(xetile.init_tile(flags, [0, 0], [8, 16]))
    v = xetile.load_tile(xetile.init_tile(values, [0, 0], [8, 16]), padding=7)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16]), xetile.where(f, v, -v))


def test_bool_and_int8_data_with_padding(rng):
    flags, values = rand(rng, (6, 11), np.bool_), rand(rng, (5, 12), np.int8)
    assert_same(bools_and_bytes, (flags, values, np.zeros((8, 16), np.int8)), {}, (1,))


@xetile.kernel
def where_mask(mask, x, y, out, above, BLOCK: xetile.constexpr):
    start = xetile.program_id(0) * BLOCK
    m = xetile.load_tile(xetile.init_tile(mask, [0, start], [1, BLOCK]))
    a = xetile.load_tile(xetile.init_tile(x, [0, start], [1, BLOCK]))
    b = xetile.load_tile(xetile.init_tile(y, [0, start], [1, BLOCK]))
    xetile.store_tile(xetile.init_tile(out, [0, start], [1, BLOCK]), xetile.where(m, a, b))
    xetile.store_tile(xetile.init_tile(above, [0, start], [1, BLOCK]), a > b)


def llvm_instructions(llir: str) -> int:
    return sum(line.startswith("  ") and not line.lstrip().startswith(";") for line in llir.splitlines())


def test_bool_rows_are_block_messages_in_the_loop_over_the_blocks(rng):
    """A bool mask is read and a bool result written as the bytes of 8-bit block messages, so on `cpu` their blocks
    join the f32 operands' loop over the blocks: a 1024-element `where` plus a bool store is not much more code
    than a vector add of that size (on the element path, each of the mask's 64 blocks was its own per-element code:
    4287 LLVM instructions against 469, and a driver build 4.6x the add's). Results as the interpreter's, over a
    row whose last block lies partly outside the arrays."""
    n, block = 1000, 1024
    mask, x, y = rand(rng, (1, n), np.bool_), rand(rng, (1, n), np.float32), rand(rng, (1, n), np.float32)
    args = (mask, x, y, np.zeros((1, n), np.float32), np.zeros((1, n), np.bool_))
    where_llir = where_mask.warmup(*args, BLOCK=block, target="cpu").asm["llir"]
    add_llir = vector_add.warmup(x, y, args[3], BLOCK=block, target="cpu").asm["llir"]
    assert llvm_instructions(where_llir) < 2 * llvm_instructions(add_llir)
    for target in ("cpu", "xe-emulated"):
        assert_same(where_mask, args, dict(BLOCK=block), (1,), target=target)


@xetile.kernel
def either_array(a, b, out, first, K: xetile.constexpr):
    """A tile chosen at run time, then carried through a loop that swaps which array it reads."""
    if first > 0:
        t = xetile.init_tile(a, [0, 0], [8, 16])
    else:
        t = xetile.init_tile(b, [0, 0], [8, 16])
    acc = xetile.zeros([8, 16], xetile.float32)
    for k in range(K):
        acc = acc + xetile.load_tile(t)
        if k % 2 == 0:
            t = xetile.init_tile(b, [k, 0], [8, 16])
        else:
            t = xetile.init_tile(a, [0, k], [8, 16])
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16]), acc)


@pytest.mark.parametrize("first", [1, 0])
def test_tile_from_either_of_two_arrays(rng, first):
    a, b = rand(rng, (16, 24), np.float32), rand(rng, (12, 20), np.float32)
    assert_same(either_array, [a, b, np.zeros((8, 16), np.float32), first], dict(K=5), (1,))
    expected = np.zeros((8, 16), np.float32)
    src = (a[:8, :16] if first else np.pad(b, ((0, 4), (0, 0)))[:8, :16])
    for k in range(5):
        expected += src
        src = np.pad(b, ((0, 8), (0, 0)))[k:k + 8, :16] if k % 2 == 0 else np.pad(a, ((0, 0), (0, 8)))[:8, k:k + 16]
    out = np.zeros((8, 16), np.float32)
    either_array[(1,)](a, b, out, first, K=5, device=DEVICE)
    assert_close(out, expected)


@xetile.kernel
def shifted_copy(x, y, col):
    v = xetile.load_tile(xetile.init_tile(x, [0, col], [8, 32]))
    xetile.store_tile(xetile.init_tile(y, [0, col], [8, 32]), v + 1)


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
@pytest.mark.parametrize("dtype", [np.float16, np.int16, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("pitched", [False, True])
def test_block_messages_only_where_their_rules_hold(rng, dtype, pitched, target, monkeypatch):
    """Xe's 2D block messages need a 64-byte aligned, 16-byte pitched surface (checked at launch: a pitched view of
    67 columns is not) and, for 8/16-bit data on xe-emulated, a start column on a 4-byte boundary (checked in the
    kernel: every `col` below takes one path or the other). The `cpu` target's block builtins address any pitch
    and start anywhere (BlockIO.any_layout, start_bytes 1), so it has no element path either way (its code for a
    CPU with AVX-512: with AVX2 a 16-bit tile is a run of blocks of one row, with no builtin call)."""
    built_for_cpu(monkeypatch, shifted_copy, AVX512)
    width = 67 if pitched else 64
    x = rand(rng, (8, width), dtype)[:, :64]
    llir = shifted_copy.warmup(x, np.zeros((8, 64), dtype), 0, target=target).asm["llir"]
    assert ("xe_block2d_load" in llir) == (target == "cpu" or not pitched)
    kernel_body = llir.split("define internal")[0]  # the kernel's own code, not the builtins'
    element_path = re.search(r'%"element[.\d]*" = load ', kernel_body) is not None  # to_llvm_elements' reads
    assert element_path == (target == "xe-emulated" and (pitched or dtype != np.float32))
    for col in range(4):
        y = np.zeros((8, 64), dtype)
        shifted_copy[(1,)](x, y, col, device=DEVICE, target=target)
        expected = np.zeros((8, 64), dtype)
        expected[:, col:col + 32] = (x[:, col:col + 32].astype(np.float32) + 1).astype(dtype)
        assert_close(y, expected)


@pytest.mark.parametrize("cpu, builtins", [(AVX512, True), (AVX2, False)], ids=["avx512", "avx2"])
def test_the_cpu_target_reads_a_misaligned_usm_view_in_place(rng, monkeypatch, cpu, builtins):
    """A USM view one f16 element into its allocation (a base 2 bytes off every Xe alignment) and 67 elements a row
    apart: the `cpu` target reads and writes it in place (BlockIO.any_layout), no element path, through its block
    builtins where the CPU unrolls 16-bit block loops (AVX-512) and as a run of blocks of one row where it keeps
    them rolled (AVX2: Target.one_row_rolled_blocks); xe-emulated goes element by element. All give the
    interpreter's numbers, at every start column."""
    built_for_cpu(monkeypatch, shifted_copy, cpu)
    queue = dpctl.get_device_cached_queue(DEVICE)
    host = rand(rng, (8, 67), np.float16)
    x = UsmArray(queue, host, (8, 64), (67, 1), offset=1)
    for target in ("cpu", "xe-emulated"):
        llir = shifted_copy.warmup(x, np.zeros((8, 64), np.float16), 0, target=target).asm["llir"]
        kernel_body = llir.split("define internal")[0]
        assert ("xe_block2d_load" in llir) == (target == "cpu" and builtins)
        assert (re.search(r'%"element[.\d]*" = load ', kernel_body) is None) == (target == "cpu")
        for col in (0, 1, 3):
            y = np.zeros((8, 64), np.float16)
            shifted_copy[(1,)](x, y, col, device=DEVICE, target=target)
            expected = np.zeros((8, 64), np.float16)
            expected[:, col:col + 32] = (host[:, 1 + col:33 + col].astype(np.float32) + 1).astype(np.float16)
            np.testing.assert_array_equal(y, expected)


@xetile.kernel
def add_one_1d(x, y, BLOCK: xetile.constexpr):
    start = xetile.program_id(0) * BLOCK
    xetile.store_tile(xetile.init_tile(y, [start], [BLOCK]), xetile.load_tile(xetile.init_tile(x, [start], [BLOCK])) + 1)


def test_a_row_past_the_messages_2_24_bytes_takes_the_cpu_targets_block_builtins():
    """A 1-D array is one memory row; Xe's messages address 2**24 bytes of it (EXTENT_RULE), the `cpu` target's own
    builtins 2**29 (LAYOUT_FREE_RULES): 2**22 + 16 f32 elements run through them there, a loop over the 64 blocks
    (two an iteration: block_loops.rolled_store_loop) after one bounds test, and where the tile crosses the array's
    end one over its blocks inside and one testing the rest (a 16M-element vector add ran element by element, 16x
    slower), and element by element on xe-emulated."""
    n = 2**22 + 16
    x, y = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    for target, loops, ranged in (("cpu", 1, 2), ("xe-emulated", 0, 0)):
        llir = kernel_body(add_one_1d.warmup(x, y, BLOCK=1024, target=target).asm["llir"])
        assert (len(loop_bodies(llir, 1024 // 16 // 2)), len(ranged_loop_bodies(llir))) == (loops, ranged)
    add_one_1d[(xetile.cdiv(n, 1024),)](x, y, BLOCK=1024, device=DEVICE, target="cpu")
    np.testing.assert_array_equal(y, x + 1)


@xetile.kernel
def negative_zero_padded(x, y):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 16]),
                      xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16]), padding=-0.0))


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
def test_a_block_load_padded_with_negative_zero_is_not_the_messages_zero(target):
    """A block message reads +0.0 outside its surface; padding -0.0 compares equal to it but is another value, so
    the load pads it itself (its rows 4-7 here, through the message on both CPU targets: a 64-byte row)."""
    x, y = np.ones((4, 16), np.float32), np.full((8, 16), 5.0, np.float32)
    assert "xe_block2d_load" in negative_zero_padded.warmup(x, y, target=target).asm["llir"]
    negative_zero_padded[(1,)](x, y, device=DEVICE, target=target)
    np.testing.assert_array_equal(y, np.r_[np.ones((4, 16)), np.zeros((4, 16))])
    assert np.signbit(y[4:]).all()


@xetile.kernel
def padded_rows(x, y, row, BN: xetile.constexpr):
    """Rows `row`.. of x, padded with 7 past its columns, into y: [4, BN], one subgroup, blocks of 4x16."""
    v = xetile.load_tile(xetile.init_tile(x, [row, 0], [4, BN]), padding=7.0)
    xetile.store_tile(xetile.init_tile(y, [row, 0], [4, BN]), v * 2)


def kernel_body(llir: str) -> str:
    """The kernel's LLVM IR, without the builtins defined after it."""
    return llir.split("define internal")[0]


def block_calls(llir: str, kind: str) -> int:
    return len(re.findall(rf'call void @"xe_block2d_{kind}', kernel_body(llir)))


# the bounds test of the builtins' border path, written inline on the `cpu` target (Pieces.block_access): an element's
# offset kept inside the surface (codegen/xe/emulation.py Surface.element)
BORDER_TEST = re.compile(r'select\s+i1 %"[^"]+", i64')


@pytest.mark.parametrize("width", [256, 248], ids=["inside", "border"])
def test_a_pieces_blocks_share_one_bounds_test_on_the_cpu_target(rng, width):
    """On the `cpu` target a subgroup's consecutive block loads (stores) on one array, 16 blocks or more
    (to_llvm_pieces.MIN_RUN), are one bounds test of the whole piece: inside, plain loads and stores; at a border, the
    blocks element by element in a loop over the grid, the builtin's border path written there rather than called (no
    call site). xe-emulated has the loop with no bounds test, every block through its builtin (two call sites: two
    blocks an iteration, block_loops.rolled_store_loop); fewer blocks keep a builtin call per block. Padding and dropped
    writes at the border are the interpreter's either way, in columns (width 248) and in rows (rows 4-7 of 6)."""
    x, y = rand(rng, (6, width), np.float32), rand(rng, (6, width), np.float32)
    options = dict(BN=256, num_subgroups=1)
    cpu = padded_rows.warmup(x, y, 0, target="cpu", **options).asm["llir"]
    emulated = padded_rows.warmup(x, y, 0, target="xe-emulated", **options).asm["llir"]
    few = padded_rows.warmup(x, y, 0, target="cpu", BN=64, num_subgroups=1).asm["llir"]
    assert (block_calls(cpu, "load"), block_calls(cpu, "store")) == (0, 0) and BORDER_TEST.search(cpu)
    assert (block_calls(emulated, "load"), block_calls(emulated, "store")) == (2, 2)
    assert (block_calls(few, "load"), block_calls(few, "store")) == (4, 4)
    for row in (0, 4):
        reference, device = run_both(padded_rows, [x, y.copy(), row], options, (1,))
        np.testing.assert_array_equal(device[1], reference[1])


@xetile.kernel
def row_norm(x, y, N, BN: xetile.constexpr):
    """Rows centered and scaled by their max, kept where they were positive: the mask (booleans) lives across both
    reductions; 16 rows a workgroup, one a subgroup."""
    m = xetile.program_id(0) * 16
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [16, BN]), padding=0.0)
    positive = v > 0.0
    mean = xetile.tile_broadcast(xetile.tile_reduce("add", v, [1]) / N, [1], [16, BN])
    top = xetile.tile_broadcast(xetile.tile_reduce("max", v, [1]), [1], [16, BN])
    xetile.store_tile(xetile.init_tile(y, [m, 0], [16, BN]), xetile.where(positive, (v - mean) / (top - mean), 0.0))


def kernel_lines(llir: str) -> int:
    return llir.split("define internal")[0].count("\n")


@pytest.mark.parametrize("rows, width", [(32, 2048), (37, 2040)], ids=["inside", "border"])
def test_a_row_is_computed_in_loops_over_its_blocks_on_the_cpu_target(rng, rows, width):
    """On the `cpu` target the block ops of a row (128 blocks of 1x16 at 2048 columns) are loops over the blocks
    (codegen/cpu/block_loops.py): the load, the mask and the two folds in one, the output in another; the mask's and
    the row's blocks kept in private arrays between them. So the kernel's code does not grow with the row (2048
    columns within 10% of 512; one value a block it was about 4x), and the numbers are the interpreter's, at the
    array's border too (rows 32-36, columns 2040-2047 padding)."""
    x, y = rand(rng, (rows, width), np.float32), np.zeros((rows, width), np.float32)
    options = dict(BN=2048, num_subgroups=16)
    long_row = kernel_lines(row_norm.warmup(x, y, width, target="cpu", **options).asm["llir"])
    short_row = kernel_lines(row_norm.warmup(x[:, :512], y[:, :512], 512, target="cpu", BN=512,
                                             num_subgroups=16).asm["llir"])
    assert long_row < 1.1 * short_row
    reference, device = run_both(row_norm, [x, y, width], options, (xetile.cdiv(rows, 16),))
    assert_close(device[1], reference[1], np.float32, scale=width)


@xetile.kernel
def scaled_rows(x, w, b, y, BN: xetile.constexpr):
    """Rows centered and scaled by a weight and a bias row: 16 rows a workgroup, no layout given."""
    m = xetile.program_id(0) * 16
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [16, BN]))
    mean = xetile.tile_reduce("add", v, [1]) / BN
    weight = xetile.load_tile(xetile.init_tile(w, [0, 0], [1, BN]))
    bias = xetile.load_tile(xetile.init_tile(b, [0, 0], [1, BN]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [16, BN]), (v - mean) * weight + bias)


@pytest.mark.parametrize("rows", [32, 37], ids=["inside", "border"])
def test_rows_of_eight_blocks_are_loops_over_them_on_the_cpu_target(rng, rows):
    """Rows of 128 columns on the `cpu` target: one row a subgroup by default (Target.row_subgroups), so that a row
    is 8 blocks of one row, which are runs (Target.row_run_blocks): no block op is written out block by block.
    With two rows a subgroup (num_subgroups=8) the row's blocks are two rows high and stay straight-line
    (pieces.MIN_RUN), the weight's and bias's of one row are loops still. The numbers are the interpreter's either
    way, past the array's last row too."""
    x, y = rand(rng, (rows, 128), np.float32), np.zeros((rows, 128), np.float32)
    w, b = rand(rng, (1, 128), np.float32), rand(rng, (1, 128), np.float32)
    one_row = scaled_rows.warmup(x, w, b, y, BN=128, target="cpu", grid=(1,)).asm["llir"]
    two_rows = scaled_rows.warmup(x, w, b, y, BN=128, target="cpu", grid=(1,), num_subgroups=8).asm["llir"]
    assert (block_calls(one_row, "load"), block_calls(one_row, "store")) == (0, 0)
    assert (block_calls(two_rows, "load"), block_calls(two_rows, "store")) == (8, 8)
    for options in (dict(BN=128), dict(BN=128, num_subgroups=8)):
        reference, device = run_both(scaled_rows, [x, w, b, y], options, (xetile.cdiv(rows, 16),))
        assert_close(device[3], reference[3], np.float32, scale=128)


@pytest.mark.parametrize("rows", [32, 37], ids=["inside", "border"])
@pytest.mark.parametrize("cpu, calls", [(AVX2, (4, 0)), (AVX512, (8, 4))], ids=["avx2", "avx512"])
def test_sixteen_bit_rows_are_blocks_of_one_row_where_block_loops_stay_rolled(rng, monkeypatch, rows, cpu, calls):
    """With AVX2 the `cpu` target's loops over a lane's components of 16-bit block loads and stores stay rolled
    (CpuFeatures.unrolls_blocks), so a value it loads or stores as 16-bit elements takes blocks of one row
    (Target.one_row_rolled_blocks): the 16x32 f16 rows, one subgroup's, are 16 blocks of one row, a run, loaded
    and stored with no builtin call (the weight's and bias's rows, two blocks each, take theirs); with AVX-512
    they are 4 blocks of 8 rows, each load and store through its builtin. The numbers are the interpreter's either
    way, past the array's last row too."""
    x, y = rand(rng, (rows, 32), np.float16), np.zeros((rows, 32), np.float16)
    w, b = rand(rng, (1, 32), np.float16), rand(rng, (1, 32), np.float16)
    built_for_cpu(monkeypatch, scaled_rows, cpu)
    llir = scaled_rows.warmup(x, w, b, y, BN=32, target="cpu", grid=(1,)).asm["llir"]
    assert (block_calls(llir, "load"), block_calls(llir, "store")) == calls
    reference, device = run_both(scaled_rows, [x, w, b, y], dict(BN=32), (xetile.cdiv(rows, 16),))
    assert_close(device[3], reference[3], np.float16, scale=32)


@xetile.kernel
def shifted_row(x, y, BN: xetile.constexpr):
    """A row from a constant column on (8), scaled by its largest magnitude: one workgroup, one subgroup."""
    v = xetile.load_tile(xetile.init_tile(x, [1, 8], [1, BN]), padding=0.0)
    top = xetile.tile_broadcast(xetile.tile_reduce("max", xetile.abs(v), [1]) + 1.0, [1], [1, BN])
    xetile.store_tile(xetile.init_tile(y, [1, 8], [1, BN]), v / top)


@pytest.mark.parametrize("width", [2056, 2050], ids=["inside", "border"])
def test_a_tile_at_constant_coordinates_is_one_run_on_the_cpu_target(rng, width):
    """Blocking writes block 0's column as the tile's (a constant here) and block j's as that plus 16 j: all of them
    are one run (pieces.base_and_shift folds the constants), so the load, the ops and the store are loops over the
    blocks, with no builtin call, and the code does not grow with the row (2048 columns within 10% of 512; with
    block 0 apart, every op on the row was written out a block at a time). The numbers are the interpreter's, the
    padding past the array's end (2050 columns) too."""
    x, y = rand(rng, (2, width), np.float32), np.zeros((2, width), np.float32)
    long_row = shifted_row.warmup(x, y, target="cpu", BN=2048, num_subgroups=1).asm["llir"]
    short_row = shifted_row.warmup(x[:, :520], y[:, :520], target="cpu", BN=512, num_subgroups=1).asm["llir"]
    assert (block_calls(long_row, "load"), block_calls(long_row, "store")) == (0, 0)
    assert kernel_lines(long_row) < 1.1 * kernel_lines(short_row)
    reference, device = run_both(shifted_row, [x, y], dict(BN=2048, num_subgroups=1), (1,))
    np.testing.assert_array_equal(device[1], reference[1])


@xetile.kernel
def row_after_store(x, y, z, BN: xetile.constexpr):
    """z = x + y after y's first 16 columns are set to 5: a row read after a store to it, by the same subgroup."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [1, BN]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [1, 16]), xetile.full([1, 16], 5.0, xetile.float32))
    w = xetile.load_tile(xetile.init_tile(y, [0, 0], [1, BN]))
    xetile.store_tile(xetile.init_tile(z, [0, 0], [1, BN]), v + w)


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
def test_a_row_read_after_a_store_reads_what_it_stored_on_the_cpu_targets(rng, target):
    """The loop over x's blocks is lowered before the store of 16 columns of y that follows it (block_loops.regions
    defers the store); y's load is a run too but must not join that loop, which would read y before the store."""
    x, y = rand(rng, (1, 512), np.float32), rand(rng, (1, 512), np.float32)
    reference, device = run_both(row_after_store, [x, y, np.zeros_like(x)], dict(BN=512, num_subgroups=1), (1,),
                                 target)
    np.testing.assert_array_equal(device[2], reference[2])
    np.testing.assert_array_equal(device[2][0, :16], x[0, :16] + np.float32(5))


@xetile.kernel
def stored_then_read(x, y, z, BN: xetile.constexpr):
    """y = x, then z = y from its 17th column on: a row read after a row store that wrote it, block by block."""
    xetile.store_tile(xetile.init_tile(y, [0, 0], [1, BN]), xetile.load_tile(xetile.init_tile(x, [0, 0], [1, BN])))
    xetile.store_tile(xetile.init_tile(z, [0, 0], [1, BN]), xetile.load_tile(xetile.init_tile(y, [0, 16], [1, BN])))


@xetile.kernel
def shifted_in_place(x, BN: xetile.constexpr):
    """x[16:16 + BN] = 2 x[:BN], in place: each block stored over the one the next block reads."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [1, BN]))
    xetile.store_tile(xetile.init_tile(x, [0, 16], [1, BN]), v * 2.0)


@xetile.kernel
def stored_twice(x, y, BN: xetile.constexpr):
    """y[:BN] = x, then y[16:16 + BN] = 2 x: the second store overwrites all but the first block of the first."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [1, BN]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [1, BN]), v)
    xetile.store_tile(xetile.init_tile(y, [0, 16], [1, BN]), v * 2.0)


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
def test_rows_stored_and_read_in_one_kernel_keep_program_order_on_the_cpu_targets(rng, target):
    """The load, store and element-wise runs over one row's blocks share a loop (block_loops.regions), which computes
    each run's block i in turn: a load run after a store run, or a store over blocks of its array that another run
    reads or writes at another origin, stays out of that loop (block_loops.in_order), so every access sees the
    stores before it in the program and none after; in it, y's block 1 was read before the store of it, x's block 1
    after, and the first store's block 1 overwrote the second's block 0."""
    x = rand(rng, (1, 1024), np.float32)
    reference, device = run_both(stored_then_read, [x, np.zeros_like(x), np.zeros_like(x)],
                                 dict(BN=512, num_subgroups=1), (1,), target)
    np.testing.assert_array_equal(device[2], reference[2])
    np.testing.assert_array_equal(device[2][0, :496], x[0, 16:512])
    reference, device = run_both(shifted_in_place, [x], dict(BN=512, num_subgroups=1), (1,), target)
    np.testing.assert_array_equal(device[0], reference[0])
    np.testing.assert_array_equal(device[0][0, 16:528], x[0, :512] * np.float32(2))
    reference, device = run_both(stored_twice, [x, np.zeros_like(x)], dict(BN=512, num_subgroups=1), (1,), target)
    np.testing.assert_array_equal(device[1], reference[1])
    np.testing.assert_array_equal(device[1][0, 16:528], x[0, :512] * np.float32(2))


@xetile.kernel
def row_from(x, y, col, BN: xetile.constexpr):
    """A row of f16 from column `col` on (a run-time value), scaled by its largest magnitude: one subgroup."""
    v = xetile.load_tile(xetile.init_tile(x, [1, col], [1, BN]), padding=0.0)
    top = xetile.tile_broadcast(xetile.tile_reduce("max", xetile.abs(v), [1]) + 1.0, [1], [1, BN])
    xetile.store_tile(xetile.init_tile(y, [1, col], [1, BN]), v / top)


@pytest.mark.parametrize("pitch, col", [(3, 8), (0, 7), (0, 8)], ids=["odd-pitch", "odd-start", "even-start"])
def test_rows_xe_messages_cannot_address_are_loops_over_their_blocks_on_xe_emulated(rng, pitch, col):
    """On `xe-emulated` Xe's rules hold: no 2D block message addresses rows whose pitch is not a multiple of 16 bytes
    (3 columns of f16 more than the row), and one of 16-bit data must start on a multiple of 4 bytes, which a column
    known only at run time may not (7). Such blocks of a run are still one loop over the blocks (pieces.Access): the
    element path in it, or the message and the element path behind the first block's test of its start. So the code
    does not grow with the row (2048 columns within 10% of 512; written out a block at a time it was 4x), and the
    numbers are the interpreter's, the padding past the array's end too."""
    def arrays(width):
        x = rand(rng, (2, width + pitch), np.float16)[:, :width]
        return x, np.zeros_like(x)
    lines = [kernel_lines(row_from.warmup(*arrays(n), col, target="xe-emulated", BN=n, num_subgroups=1)
                          .asm["llir"]) for n in (512, 2048)]
    assert lines[1] < 1.1 * lines[0]
    x, y = arrays(2050)
    reference, device = run_both(row_from, [x, y, col], dict(BN=2048, num_subgroups=1), (1,), "xe-emulated")
    np.testing.assert_array_equal(device[1], reference[1])


@xetile.kernel
def softmax_rows(x, y, BN: xetile.constexpr, PLUS_ROW: xetile.constexpr):
    """Softmax of 16 rows a workgroup, one a subgroup, in f32: the row is kept from the max to the exponentials, the
    exponentials from their sum to the division; with PLUS_ROW the row is added to the result, read after the
    exponentials too."""
    m = xetile.program_id(0) * 16
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [16, BN]), padding=float("-inf")).to(xetile.float32)
    e = xetile.exp(v - xetile.tile_broadcast(xetile.tile_reduce("max", v, [1]), [1], [16, BN]))
    out = e / xetile.tile_broadcast(xetile.tile_reduce("add", e, [1]), [1], [16, BN])
    xetile.store_tile(xetile.init_tile(y, [m, 0], [16, BN]), out + v if PLUS_ROW else out)


@pytest.mark.parametrize("width", [1024, 1000], ids=["inside", "border"])
@pytest.mark.parametrize("plus_row, arrays", [(False, 1), (True, 2)], ids=["softmax", "row-read-after"])
def test_softmax_exponentials_take_the_rows_private_array_on_the_cpu_target(rng, width, plus_row, arrays):
    """The row's blocks are read last by the loop that makes the exponentials, block i before block i of the
    exponentials is put: those take the row's private array (block_loops.recycled_stash), one array of a lane's 64
    f32 where there were two (at 4096 f16 columns the two, 32 KiB a subgroup, ran at 0.85x the hand-written OpenCL C
    kernel: docs/performance.md "CPU notes"), and one value beside it, that of the blocks past the row
    (block_loops.outside). Where the row is read after that loop, each keeps its own. The numbers are the
    interpreter's, at the border (1000 columns) too."""
    x, y = rand(rng, (32, width), np.float16), np.zeros((32, width), np.float16)
    options = dict(BN=1024, PLUS_ROW=plus_row, num_subgroups=16)
    llir = softmax_rows.warmup(x, y, target="cpu", **options).asm["llir"]
    allocas = re.findall(r"alloca \[\d+ x float\]", kernel_body(llir))
    assert allocas == ["alloca [64 x float]", "alloca [1 x float]"] * arrays
    reference, device = run_both(softmax_rows, [x, y], options, (2,))
    assert_close(device[1], reference[1], np.float16)


@xetile.kernel
def masked_rows(x, y, N, BLOCK: xetile.constexpr):
    """Rows centered where a column counts (`arange(0, BLOCK) < N`, as tutorials/05 masks the padding past N) and
    scaled by their sum of squares; a row a workgroup, one subgroup."""
    row = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [row, 0], [BLOCK]))
    inside = xetile.arange(0, BLOCK) < N
    centered = xetile.where(inside, v - xetile.broadcast_to(xetile.tile_reduce("add", v, [0]) / N, [BLOCK]), 0.0)
    scale = xetile.broadcast_to(xetile.rsqrt(xetile.tile_reduce("add", centered * centered, [0]) + 1.0), [BLOCK])
    xetile.store_tile(xetile.init_tile(y, [row, 0], [BLOCK]), centered * scale)


@pytest.mark.parametrize("width", [2048, 2000])
def test_a_masked_rows_arange_is_computed_in_the_loops_over_its_blocks_on_the_cpu_target(rng, width):
    """`arange` over a row is a `vector.iota` a block, each with its own offset: as a run of the loop over the
    blocks (block_loops.iota_run, the offset computed from the block's index), the mask and the ops on it join the
    loops too, and the kernel's code does not grow with the row (2048 columns within 10% of 512; each block's
    iota, compare and select written out, tutorials/05's layer norm ran at 0.2-0.5x the hand-written OpenCL C one:
    docs/performance.md "On the Xeon AVX-512"). The numbers are the interpreter's, the padding past N (2000)
    masked."""
    x, y = rand(rng, (4, width), np.float32), np.zeros((4, width), np.float32)
    options = dict(BLOCK=2048, num_subgroups=1)
    long_row = kernel_lines(masked_rows.warmup(x, y, width, target="cpu", **options).asm["llir"])
    short_row = kernel_lines(masked_rows.warmup(x[:, :512], y[:, :512], 512, target="cpu", BLOCK=512,
                                                num_subgroups=1).asm["llir"])
    assert long_row < 1.1 * short_row
    reference, device = run_both(masked_rows, [x, y, width], options, (4,))
    assert_close(device[1], reference[1], np.float32, scale=width)


@xetile.kernel
def row_extremes(x, y, BN: xetile.constexpr):
    """Per row of 16: the max, the min and the sum, in columns 0-2 of y (16 wide)."""
    m = xetile.program_id(0) * 16
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [16, BN]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [16, 1]), xetile.tile_reduce("max", v, [1]))
    xetile.store_tile(xetile.init_tile(y, [m, 1], [16, 1]), xetile.tile_reduce("min", v, [1]))
    xetile.store_tile(xetile.init_tile(y, [m, 2], [16, 1]), xetile.tile_reduce("add", v, [1]))


# The partial results each of a loop's two or three folds of 16 lanes' f32 keeps on any host
# (block_loops.fold_chains: SHARED_FOLD_CHAINS, which AVX2's 16 ymm registers hold as well).
HOST_CHAINS = 2


def chains_of(blocks: int) -> int:
    return next(chains for chains in (HOST_CHAINS, 2, 1) if blocks % chains == 0)


@pytest.mark.parametrize("width", [256, 288, 272, 2048])
def test_a_fold_is_independent_chains_on_the_cpu_target(rng, width):
    """A row's three folds over its N blocks of 1x16 keep HOST_CHAINS partial results each (2, 1 where N is not a
    multiple) folded pairwise after the loop, which then runs N / chains times (block_loops.fold_chains): a
    single chain of maxnumf waited for each block's compare. The numbers stay the interpreter's: max and min
    exactly, NaNs losing, as in any order."""
    loop = width // 16 // chains_of(width // 16)
    x = rand(rng, (32, width), np.float32)
    x[3, 5] = x[4, :width // 2] = np.nan
    x[5, :] = np.nan
    y = np.zeros((32, 16), np.float32)
    llir = row_extremes.warmup(x, y, BN=width, target="cpu").asm["llir"]
    assert re.search(rf"icmp ult i32 %\"[^\"]+\", {loop}\n", llir)
    reference, device = run_both(row_extremes, [x, y], dict(BN=width), (2,))
    np.testing.assert_array_equal(device[1][:, :2], reference[1][:, :2])
    assert_close(device[1][:, 2], reference[1][:, 2], np.float32, scale=width)


@xetile.kernel
def lane_rows(x, y, KIND: xetile.constexpr):
    """Each row's reduction: one subgroup's 32x32 tile, so a lane holds 8 rows of a 16-column block."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32]), layout=xetile.Layout([1, 1], [32, 32]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 1]), xetile.tile_reduce(KIND, v, [1]))


# a lane's own slot: lane 0's moved by the lane's index (lane_slots.own_slot)
OWN_SLOT = re.compile(r'getelementptr i32, i32 addrspace\(3\)\* %"[^"]+", i64 %"[^"]+"')


@pytest.mark.parametrize("kind, dtype", [("max", np.float32), ("min", np.float32), ("add", np.float32),
                                         ("max", np.int32), ("add", np.int32)])
def test_a_lanes_rows_are_reduced_across_lanes_through_their_slots_on_the_cpu_targets(rng, kind, dtype):
    """On the CPU targets a reduction across lanes of a lane's rows (32 of them here) stores each row in the lane's
    slot once (lane 0's slot moved by the lane's index, lane_slots.own_slot) and reads the 16 lanes' of each back as
    one vector from one address on every lane (XeGPULowering.slot_row_reduction: 32 stores, 32 loads, every slot
    lane 0's), with no shuffle and no group op, combining its halves in the butterfly's pairs: the butterfly's
    value, bit for bit. A NaN loses, a row of NaNs is NaN, infinities and signed zeros keep their order, as numpy's
    fmax and fmin."""
    x = rand(rng, (32, 32), dtype, -100, 100)
    if dtype == np.float32:
        x[0, :] = np.nan
        x[1, ::2] = np.nan
        x[2, :] = np.where(np.arange(32) % 3, -0.0, 0.0)
        x[3, :] = -np.inf
        x[4, :], x[4, 7] = np.nan, -np.inf
        x[5, :], x[5, 30] = np.nan, np.inf
        x[6, 9], x[6, 20] = np.inf, -np.inf
    y = np.zeros((32, 16), dtype)  # rows of 64 bytes, which block messages address on both targets
    counts = {}
    for target in ("cpu", "xe-emulated"):
        llir = lane_rows.warmup(x, y, KIND=kind, target=target).asm["llir"]
        assert "__spirv_Group" not in llir and "__spirv_Subgroup" not in llir
        calls = re.findall(rf'call [^@]*@"{lane_slots.SLOT}"\(i32 [^,]+, i32 ([^)]+)\)', llir)
        counts[target] = (len(calls), sum(not lane.startswith("%") for lane in calls), len(OWN_SLOT.findall(llir)))
    assert counts == {"cpu": (32 + 32, 32 + 32, 32), "xe-emulated": (32 + 32, 32 + 32, 32)}
    reference, device = run_both(lane_rows, [x, y], dict(KIND=kind), (1,))
    with np.errstate(invalid="ignore"):  # inf + -inf
        numpy = {"max": np.fmax, "min": np.fmin, "add": np.add}[kind].reduce(x, axis=1)
    got, interpreted = device[1][:, 0], reference[1][:, 0]
    if kind == "add":
        assert_close(got, numpy, scale=32)
        assert_close(got, interpreted, scale=32)
    else:
        np.testing.assert_array_equal(got, numpy)
        np.testing.assert_array_equal(got, interpreted)


@xetile.kernel
def waiting_lane_rows(x, y, KIND: xetile.constexpr):
    """lane_rows in a kernel that waits at a barrier: its lanes exchange values by sub-group built-ins."""
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32]), layout=xetile.Layout([1, 1], [32, 32]))
    xetile.barrier()
    xetile.store_tile(xetile.init_tile(y, [0, 0], [32, 1]), xetile.tile_reduce(KIND, v, [1]))


def butterfly(x: np.ndarray, combine) -> np.ndarray:
    """Each row of `x` (32 columns, 2 a lane) reduced as a sub-group of 16 does it, lane 0's value: its two columns
    combined in the lane, then the lanes in pairs at distances 8, 4, 2 and 1."""
    lanes = combine(x[:, :16], x[:, 16:])
    for distance in (8, 4, 2, 1):
        lanes = combine(lanes, lanes[:, np.arange(16) ^ distance])
    return lanes[:, 0]


@pytest.mark.parametrize("kind, combine", [("add", np.add), ("max", np.fmax)])
def test_a_lanes_rows_are_reduce_scattered_on_both_cpu_targets(rng, kind, combine):
    """Where the lanes exchange values by sub-group built-ins, a whole sub-group's reduction of a lane's rows (4 of
    8 rows here, one a block row) is a reduce-scatter, 4 + 2 + 1 shuffles and 1 more for the last, odd, row, and a
    broadcast a row (Target.scattered_reductions), not 4 shuffles a row: in the driver's masked copy of such a
    kernel a shuffle is a test and a blend a lane. On `xe-emulated` too, whose value is the GPU's: the butterfly's,
    bit for bit (a NaN loses)."""
    x = rand(rng, (32, 32), np.float32, -100, 100)
    x[3, 5], x[4, :] = np.nan, np.nan
    for target in ("cpu", "xe-emulated"):
        y = np.zeros((32, 16), np.float32)
        llir = waiting_lane_rows.warmup(x, y, KIND=kind, target=target).asm["llir"]
        calls = {name: len(re.findall(rf'call [^@]*@"{name}"\(', llir)) for name in (SHUFFLE, BROADCAST)}
        assert calls == {SHUFFLE: 4 * (4 + 2 + 1 + 1), BROADCAST: 4 * 8}
        waiting_lane_rows[(1,)](x, y, KIND=kind, target=target, device=DEVICE)
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(y[:, 0], butterfly(x, combine))


def test_a_loops_folds_keep_as_many_chains_as_the_cpus_vector_registers_hold():
    """fold_chains: a loop's only fold keeps 4 chains at most, each of several folds 2, all of them in at most 3/4
    of the CPU's vector registers, a divisor of the blocks: on AVX2 (16 ymm) one fold of 16 lanes' f32 (two
    registers) keeps 4 chains, two or three folds 2 each (layer norm's sums: 4 each spilled), four 1, a fold of 8
    such values (16 registers) one; on AVX-512 (32 zmm) one fold 4, two to twelve folds 2 each; the same where the
    ISA is unknown."""
    f32_lanes = 16 * 32
    assert [fold_chains(64, folds, f32_lanes, AVX2) for folds in (1, 2, 3, 4)] == [4, 2, 2, 1]
    assert fold_chains(64, 1, 8 * f32_lanes, AVX2) == 1
    assert [fold_chains(64, folds, f32_lanes, AVX512) for folds in (1, 2, 12, 13)] == [4, 2, 2, 1]
    unknown = CpuFeatures("aarch64", frozenset())
    assert [fold_chains(64, folds, f32_lanes, unknown) for folds in (1, 2)] == [4, 2]
    assert [fold_chains(blocks, 1, f32_lanes, AVX2) for blocks in (18, 17)] == [2, 1]


@xetile.kernel
def layer_norm(x, w, y, N, BN: xetile.constexpr):
    """A layer norm as a user writes it (no bias), 16 rows a workgroup, f32 inside."""
    m = xetile.program_id(0) * 16
    rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [16, BN])).to(xetile.float32)
    mean = xetile.tile_reduce("add", rows, [1]) / N
    var = xetile.tile_reduce("add", rows * rows, [1]) / N - mean * mean
    weight = xetile.load_tile(xetile.init_tile(w, [0, 0], [1, BN]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [16, BN]), (rows - mean) * xetile.rsqrt(var + 1e-5) * weight)


GLOBAL_STORE = re.compile(r"store [^\n]*addrspace\(1\)")  # a store to an array


def loop_bodies(llir: str, trips: int) -> list[str]:
    """The text of each loop of `trips` iterations (counted_loop's: header label to back edge)."""
    bodies = []
    for match in re.finditer(rf"icmp ult i32 %\"[^\"]+\", {trips}\n\s+br i1 %\"[^\"]+\", label %\"([^\"]+)\"", llir):
        bodies.append(llir[llir.index(f"\n{match.group(1)}:"):match.end()])
    return bodies


def ranged_loop_bodies(llir: str) -> list[str]:
    """The text of each loop over a range known at run time (ranged_loop's: header label to back edge; the test
    before it branches forward to the same label)."""
    bodies = []
    for match in re.finditer(r'icmp slt i32 %"[^"]+", (?:%"[^"]+"|-?\d+)\n\s+br i1 %"[^"]+", label %"([^"]+)"', llir):
        header = llir.find(f"\n{match.group(1)}:")
        if 0 <= header < match.start():
            bodies.append(llir[header:match.end()])
    return bodies


@pytest.mark.parametrize("rows, width, dtype", [(32, 1024, np.float16), (37, 1024, np.float16),
                                               (32, 8192, np.float32)], ids=["inside", "border", "split-row"])
def test_a_rows_folds_share_one_loop_with_no_border_path_inside_on_the_cpu_target(rng, rows, width, dtype):
    """Layer norm on the `cpu` target (to_llvm_block_loops.regions, unswitched): the sum of squares is folded in
    the loop of the sum (the reduction and the division between them come after it; for a row of 32 KiB, split
    over two subgroups, the exchange through shared local memory and its barrier too), the weight is loaded in the
    loop that uses it, not before; and each loop is three, one test before them choosing: plain loads in the one of
    whole pieces, else plain loads over the blocks before the row's end and each block tested after them up to the
    last one the row reaches, the sums' loop over the blocks wholly past it folding a value computed once, with no
    memory access (block_loops.outside); and no call in any (a call in the loop kept the partial sums in memory; one
    in the border loop, the values live across the two, the mean and the scale). The numbers are the
    interpreter's, at the array's border too (rows 32-36)."""
    x, w = rand(rng, (rows, width), dtype), rand(rng, (1, width), np.float32)
    y = np.zeros_like(x)
    llir = layer_norm.warmup(x, w, y, width, BN=width, target="cpu").asm["llir"].split("define internal")[0]
    blocks = min(width, 4096) // 16  # of 1x16, a subgroup's
    # the output loop: unrolled (f16 where the CPU has 32 vector registers) or two blocks an iteration
    folds = [body for body in loop_bodies(llir, blocks // HOST_CHAINS) if not GLOBAL_STORE.search(body)]
    outputs = [body for trips in {blocks, blocks // 2} for body in loop_bodies(llir, trips)
               if GLOBAL_STORE.search(body)]
    ranged = ranged_loop_bodies(llir)
    assert (len(folds), len(outputs), len(ranged)) == (1, 1, 5)
    plain, tested, outside = ranged[0::3], ranged[1::3], ranged[2]
    for body in folds + outputs + plain + [outside]:
        assert not BORDER_TEST.search(body)
    assert all(BORDER_TEST.search(body) for body in tested)
    assert "addrspace(1)" not in outside and outside.count("fadd") == 2 * HOST_CHAINS
    assert "@\"xe_block2d" not in "".join(folds + outputs + ranged)
    assert folds[0].count("phi  float") == 2 * HOST_CHAINS and outputs[0].count("addrspace(1)*") > 0
    # the mean and the variance one scalar a sub-group for the driver: read from the 16 lanes' slots at addresses the
    # same on every lane, lane 0's first (lane_slots.py), or, where the row is split and its kernel waits at a barrier,
    # from lane 0 after their butterflies
    lane_0 = (r'@"__spirv_SubgroupShuffleINTEL"\(i32 %"[^"]+", i32 0\)' if width > 4096 else
              rf'@"{lane_slots.SLOT}"\(i32 0, i32 0\)')
    assert len(re.findall(lane_0, llir)) - (0 if width > 4096 else len(OWN_SLOT.findall(llir))) == 2
    assert ("__spirv_ControlBarrier" in llir) == (width > 4096)
    reference, device = run_both(layer_norm, [x, w, y, width], dict(BN=width), (xetile.cdiv(rows, 16),))
    assert_close(device[2], reference[2], dtype, scale=8)


@xetile.kernel
def softmax_row(x, y, N, BLOCK: xetile.constexpr):
    """A softmax a row as Triton's tests write one: a tile of the next power of two, padded with -inf."""
    row = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [row, 0], [BLOCK]), padding=float("-inf"))
    e = xetile.exp(v - xetile.broadcast_to(xetile.tile_reduce("max", v, [0]), [BLOCK]))
    xetile.store_tile(xetile.init_tile(y, [row, 0], [BLOCK]),
                      e / xetile.broadcast_to(xetile.tile_reduce("add", e, [0]), [BLOCK]))


@pytest.mark.parametrize("width, dtype", [(768, np.float32), (760, np.float32), (1000, np.float16), (7, np.float16)])
def test_a_row_past_the_arrays_end_tests_only_the_blocks_after_it_on_the_cpu_target(rng, width, dtype):
    """A row in a tile wider than the array (768 columns in a tile of 1024) takes the plain loads and stores for
    its blocks before the array's end, in a loop of their own with no bounds test, and tests each block after
    them: across the end (760, 1000, 7 columns) element by element, wholly outside it no memory access, the
    padding (-inf) read. The numbers are the interpreter's."""
    x, y = rand(rng, (3, width), dtype), np.zeros((3, width), dtype)
    llir = kernel_body(softmax_row.warmup(x, y, width, BLOCK=1024, target="cpu").asm["llir"])
    ranged = ranged_loop_bodies(llir)
    assert ranged and not BORDER_TEST.search(ranged[0]) and BORDER_TEST.search(ranged[1])
    assert_same(softmax_row, [x, y, width], dict(BLOCK=1024), (3,))


def test_a_tiles_blocks_past_the_row_are_computed_once_on_the_cpu_target():
    """The blocks of a tile wholly past the row's end (768 columns in a tile of 1024) compute one value: each fold's
    loop over them folds it in with no memory access and no exponential (block_loops.outside), the max's loop and
    the sum's."""
    x, y = np.ones((3, 768), np.float32), np.zeros((3, 768), np.float32)
    llir = kernel_body(softmax_row.warmup(x, y, 768, BLOCK=1024, target="cpu").asm["llir"])
    outside = [body for body in ranged_loop_bodies(llir)
               if not re.search(r"addrspace\(1\)|lane_id|__spirv_ocl_exp", body)]
    assert [("fmax" in body, body.count("fadd")) for body in outside] == [(True, 0), (False, 4)]


@xetile.kernel
def scaled_into(x, y, BLOCK: xetile.constexpr):
    """A row of x, padded with 2 past its end, times its sum, into the same row of y: where y is wider, its columns
    past x's take the padding's value."""
    row = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [row, 0], [BLOCK]), padding=2.0)
    xetile.store_tile(xetile.init_tile(y, [row, 0], [BLOCK]), v * xetile.broadcast_to(
        xetile.tile_reduce("add", v, [0]), [BLOCK]))


@pytest.mark.parametrize("x_width, y_width", [(700, 1024), (1024, 700), (700, 900), (5, 1024)])
def test_a_rows_blocks_past_one_arrays_end_and_not_anothers_take_its_padding_on_the_cpu_target(rng, x_width,
                                                                                                y_width):
    """The blocks past x's end but inside y's (block_loops.outside): the padding (2, not the sum's identity) summed
    once a block, and each block y stores past x's end the value kept once for all of them; the numbers are the
    interpreter's either way round."""
    x, y = rand(rng, (3, x_width), np.float32), np.zeros((3, y_width), np.float32)
    assert_same(scaled_into, [x, y], dict(BLOCK=1024), (3,))


def unroll_hinted(llir: str) -> list[int]:
    """The offsets in `llir` of the back edges that carry `llvm.loop.unroll.enable`."""
    hint = re.search(r'^(!\d+) = !\{ !"llvm.loop.unroll.enable" \}', llir, re.M)
    if hint is None:
        return []
    loops = set(re.findall(rf'^(!\d+) = !{{ \1, {hint.group(1)} }}', llir, re.M))
    return [m.start() for m in re.finditer(r"!llvm.loop (!\d+)", llir) if m.group(1) in loops]


@pytest.mark.parametrize("dtype, cpu, width, unrolled", [
    (np.float32, AVX2, 1024, []),
    (np.float16, AVX2, 1024, []),
    (np.float32, AVX512, 1024, []),
    (np.float16, AVX512, 1024, ["folds", "output"]),
    (np.float16, AVX512, 256, ["output"]),
    (np.float32, CpuFeatures("aarch64", frozenset()), 1024, [])],
    ids=["f32-avx2", "f16-avx2", "f32-avx512", "f16-avx512", "f16-avx512-256", "f32-unknown"])
def test_a_rows_loops_are_unrolled_as_the_cpu_runs_them_fastest(dtype, cpu, width, unrolled, monkeypatch):
    """Layer norm's output loop (it loads, scales and stores, and folds nothing) runs two blocks an iteration, the
    hand-written kernel's loop (block_loops.rolled_store_loop), save where it stores 16-bit blocks and the CPU has
    32 vector registers: there its inside path carries the unroll hint (block_loops.unrolled; OpLoopMerge Unroll in
    SPIR-V). The OpenCL CPU compiler left the loop of the sums rolled below 2048 columns, so the loop of the sums of
    16-bit rows of 512-1024 columns carries it too where the CPU has 32 (f32 rows, and 256 columns, ran no faster
    so); no border path carries it."""
    built_for_cpu(monkeypatch, layer_norm, cpu)
    x, w = np.ones((32, width), dtype), np.ones((1, width), np.float32)
    llir = layer_norm.warmup(x, w, np.zeros_like(x), width, BN=width, target="cpu").asm["llir"]
    blocks = width // 16
    output_blocks = 1 if "output" in unrolled else 2
    stores = {body: len(GLOBAL_STORE.findall(body))
              for body in loop_bodies(llir, blocks // output_blocks)}
    fast = {"folds": loop_bodies(llir, blocks // 2)[0],  # 2 chains
            "output": next(body for body, count in stores.items() if count)}
    assert stores[fast["output"]] == output_blocks  # a block's store each
    back_edges = {name: llir.index("!llvm.loop", llir.index(body) + len(body)) for name, body in fast.items()}
    assert unroll_hinted(llir) == [back_edges[name] for name in unrolled]


def test_a_rows_inside_path_skips_the_arithmetic_of_the_blocks_past_the_end_on_the_cpu_target(monkeypatch):
    """Where every block of a row lies inside, no block lies wholly outside: the first such block
    (block_loops.outside_from, each array's columns over the blocks' step) is computed on the split path alone,
    after the test, where before it the OpenCL CPU compiler ran it once a row."""
    built_for_cpu(monkeypatch, layer_norm, AVX512)
    x, w = np.ones((32, 1024), np.float32), np.ones((1, 1024), np.float32)
    llir = kernel_body(layer_norm.warmup(x, w, np.zeros_like(x), 1024, BN=1024, target="cpu").asm["llir"])
    first_test = re.search(r"br i1 %\S+, label %\S+, label %\S+", llir)
    step_divisions = [m.start() for m in re.finditer(r"sdiv i64 %\S+, 16\n", llir)]
    assert step_divisions and min(step_divisions) > first_test.start()


def test_a_whole_subgroups_row_sums_are_combined_as_vectors_on_the_cpu_target(monkeypatch):
    """A whole sub-group's sum read as one row of its slots (slot_row_reduction) is combined as halves of vectors
    (Components.whole), not component by component as the CPU targets compute a lane's vectors elsewhere: layer
    norm's two sums are 3 vector adds each (8, 4 and 2 lanes) and a last scalar one."""
    built_for_cpu(monkeypatch, layer_norm, AVX512)
    x, w = np.ones((32, 1024), np.float32), np.ones((1, 1024), np.float32)
    llir = kernel_body(layer_norm.warmup(x, w, np.zeros_like(x), 1024, BN=1024, target="cpu").asm["llir"])
    assert [len(re.findall(rf"fadd <{n} x float>", llir)) for n in (8, 4, 2)] == [2, 2, 2]


@xetile.kernel
def far_tile(x, y, out, row, col, UPDATE: xetile.constexpr):
    """Reads x and writes y at (row, col), reached by init_tile or (UPDATE) by an offset update from (0, 0)."""
    if UPDATE:
        tx = xetile.update_tile_offset(xetile.init_tile(x, [0, 0], [8, 16]), [row, col])
        ty = xetile.update_tile_offset(xetile.init_tile(y, [0, 0], [8, 16]), [row, col])
    else:
        tx, ty = xetile.init_tile(x, [row, col], [8, 16]), xetile.init_tile(y, [row, col], [8, 16])
    v = xetile.load_tile(tx, padding=5)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16]), v)
    xetile.store_tile(ty, v + 1)


def check_far_tile(dtype, row: int, col: int, update: bool) -> None:
    """far_tile at (row, col) on the device equals the interpreter; a tile wholly outside reads padding only and
    leaves y untouched."""
    rng = np.random.default_rng(0)
    x, y = rand(rng, (16, 32), dtype), rand(rng, (16, 32), dtype)
    args = [x, y, np.zeros((8, 16), dtype), np.int64(row), np.int64(col)]
    reference, device = run_both(far_tile, args, dict(UPDATE=update), (1,))
    for got, want in zip(device, reference):
        np.testing.assert_array_equal(got, want)
    if not (-8 < row < 16 and -16 < col < 32):
        np.testing.assert_array_equal(device[1], y)
        np.testing.assert_array_equal(device[2], np.full((8, 16), 5, dtype))


def check_far_tiles(cases) -> None:
    """check_far_tile for each (dtype name, row, col, update); the case is printed first, so a crash names it."""
    for dtype, row, col, update in cases:
        print("far_tile", dtype, row, col, update, flush=True)
        check_far_tile(np.dtype(dtype), row, col, update)


def run_isolated(call: str) -> None:
    """`call` (a call of this module's functions) in a subprocess: a crash (the faults guarded against are SIGSEGVs)
    or a hang fails the test, not pytest; a skip there skips the test."""
    env = subprocess_env()
    try:
        done = subprocess.run([sys.executable, "-c", f"import test_spirv_path as t; t.{call}"],
                              cwd=os.path.dirname(__file__), env=env,
                              capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired as hung:
        raise AssertionError(f"{call[:80]} did not finish in {hung.timeout} s:\n{hung.stdout}") from None
    skipped = re.search(r"^Skipped: (.*)$", done.stderr, re.MULTILINE)
    if done.returncode != 0 and skipped:  # a tool the call needs is missing, as the test itself would skip
        pytest.skip(skipped.group(1))
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-300:]}\n{done.stderr[-2000:]}"


FAR = [2**32, 2**62, -2**32, 2**31 - 1, -1, -2**63]
FAR_CASES = [(dtype, *where, update) for dtype in ("float32", "float16") for update in (False, True)
             for where in [(0, f) for f in FAR] + [(f, 0) for f in FAR]]
FAR_COLUMNS = [("float32", 0, 2**29, False), ("float32", 0, 2**31 - 16, False), ("float16", 0, 2**30, False)]


def test_offsets_beyond_i32():
    """i64 offsets are not truncated to i32, so 2**32 reads padding and writes nothing (the index-width rule,
    codegen/llvm/lowering.py); rows and columns, f32 (block messages) and f16 (odd columns: the element path), set by
    init_tile and by an offset update."""
    run_isolated("check_far_tiles(t.FAR_CASES)")


def test_far_column_does_not_crash():
    """The emulated block message's column check must not overflow i32 ((col + 1) * size <= width did, and the
    emulation read far outside the array: SIGSEGV)."""
    run_isolated("check_far_tiles(t.FAR_COLUMNS)")


@xetile.kernel
def stepped_tile(x, out, col, n, ROW: xetile.constexpr):
    """Sums x's 8x16 tile at (ROW, col + k) times 3**(steps left) over range(0, n, 2**24): a descriptor the loop
    moves by its step, whose block coordinate is the iv's (the stepped-coordinate rule)."""
    t = xetile.init_tile(x, [ROW, col], [8, 16])
    acc = xetile.zeros([8, 16], xetile.int32)
    for k in range(0, n, 2**24):
        acc = acc * 3 + xetile.load_tile(t, padding=1)
        t = xetile.update_tile_offset(t, [0, 2**24])
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16]), acc)


@xetile.kernel
def stepped_slice(x, out, batch, n):
    """stepped_tile's loop on slice `batch` of a 3-D x (a slice outside it has no rows), from (0, 8) - 100 * 2**24,
    both moved by the step: at (0, 8) after 100 steps, over the row an empty slice stands in with."""
    t = xetile.init_tile(x, [batch, -100 * 2**24, 8 - 100 * 2**24], [8, 16])
    acc = xetile.zeros([8, 16], xetile.int32)
    for k in range(0, n, 2**24):
        acc = acc * 3 + xetile.load_tile(t, padding=1)
        t = xetile.update_tile_offset(t, [2**24, 2**24])
    xetile.store_tile(xetile.init_tile(out, [0, 0], [8, 16]), acc)


# start columns: a step of 2**24 crosses the 32 columns at steps 100 (from the left edge, over it and in) and 64;
# starts beyond 2**26 and below -(2**31 + 2**26) (the clamp of the start), 2**32 away from one inside (a truncation
# alone would read it), near the ends of i32
STEPPED = [8 - 100 * 2**24, -8 - 100 * 2**24, 24 - 64 * 2**24, 2**26 + 1, 2**31 - 8, -2**31 + 8, 8 - 2**32,
           8 + 2**32, -2**31 - 2**26 - 1, 2**62]


def check_stepped_tiles(cases, target: str) -> None:
    """stepped_tile for each start column over 128 steps of 2**24 (2**31 columns): the device equals the
    interpreter, and the steps whose tile overlaps the array read it, the others padding; stepped_slice the same
    on slices of a 3-D array, inside it or not."""
    x = np.arange(16 * 32, dtype=np.int32).reshape(16, 32)
    padding_only = np.zeros((8, 16), np.int32)
    for _ in range(128):
        padding_only = padding_only * 3 + 1  # wraps as the kernel's i32
    for col in cases:
        print("stepped_tile", col, target, flush=True)
        out = np.zeros((8, 16), np.int32)
        reference, device = run_both(stepped_tile, [x, out, np.int64(col), 2**31 - 1], dict(ROW=4), (1,), target)
        np.testing.assert_array_equal(device[1], reference[1])
        inside = [k for k in range(0, 2**31 - 1, 2**24) if -16 < col + k < 32]
        assert (reference[1] != padding_only).any() == bool(inside), col
    for batch in (1, 2, -1):  # inside, and outside x's 2 slices: the stand-in row with every block far below it
        print("stepped_slice", batch, target, flush=True)
        out = np.zeros((8, 16), np.int32)
        reference, device = run_both(stepped_slice, [np.stack([x, x]), out, batch, 2**31 - 1], {}, (1,), target)
        np.testing.assert_array_equal(device[1], reference[1])
        assert (reference[1] != padding_only).any() == (batch == 1), batch


@pytest.mark.parametrize("target", ["xe-emulated", "cpu"])
def test_a_loop_stepped_tile_reads_the_array_only_where_it_lies(target):
    """The block coordinate of a tile the loop moves by its step is the iv's plus the start clamped once, with no
    clamp in the loop: exact where the tile nears the array, outside it wherever the i64 column is (the 2D block
    message's own bounds test does the rest), from starts at the array's edges to beyond 2**62."""
    run_isolated(f"check_stepped_tiles(t.STEPPED, {target!r})")


@xetile.kernel
def outside_leading(x, out, lead, row):
    v = xetile.load_tile(xetile.init_tile(x, [0, lead, row, 1], [2, 1]), padding=7)
    xetile.store_tile(xetile.init_tile(out, [1, 2, 0, 1], [2, 1]), v ^ 5)


def check_outside_leading(leads) -> None:
    """A tile whose leading index is outside its 4-D array sees 0 rows there: it reads padding only, and the masked
    element loads stay inside the array (they once read the row before it: SIGSEGV at the start of a page). A
    narrow int32 array (element path), on both CPU targets; the case is printed first, so a crash names it."""
    x = np.arange(3 * 3 * 30 * 9, dtype=np.int32).reshape(3, 3, 30, 9)
    for lead in leads:
        for target in ("cpu", "xe-emulated"):
            print("outside_leading", lead, target, flush=True)
            out = np.zeros((3, 3, 4, 2), np.int32)
            reference, device = run_both(outside_leading, [x, out, np.int64(lead), np.int64(3)], {}, (1,), target)
            np.testing.assert_array_equal(device[1], reference[1])
            np.testing.assert_array_equal(device[1][1, 2, 0:2, 1], [7 ^ 5, 7 ^ 5])


def test_leading_index_outside_reads_padding():
    run_isolated("check_outside_leading([5, 3, -2**31, 2**31 - 1, 2**32 + 1])")


@xetile.kernel
def bytes_at(x, out, col):
    v = xetile.load_tile(xetile.init_tile(x, [0, col], [1, 64]), padding=7)
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 64]), v)


def test_columns_past_2_31():
    """Data past column 2**31 of a big array is reached, not read as padding. A 2 GB uint8 row (the smallest array
    with such columns) read across column 2**31 by the element path (too wide for block messages). The row lies in
    USM shared memory, which the launch takes in place: a host array would be copied whole to the device (2 GB), and
    only the pages the test writes and the kernel reads are ever touched."""
    x = xetile.empty_shared((1, 2**31 + 32), np.uint8, device=DEVICE)
    x[0, 2**31 - 16:] = np.concatenate([np.zeros(16), np.arange(1, 33)])
    out = np.zeros((1, 64), np.uint8)
    bytes_at[(1,)](x, out, 2**31 - 16, device=DEVICE)
    np.testing.assert_array_equal(out[0], np.concatenate([np.zeros(16), np.arange(1, 33), np.full(16, 7)]))


@xetile.kernel
def count_steps(out, lo, hi, step, scale):
    n = 0
    total = 0
    for i in range(lo, hi, step * scale):  # a computed step: the kernel's own rule, not the launch check
        n = n + 1
        total = total + i
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), xetile.zeros([1, 16], xetile.int32) + n * 1000 + total)


def check_loop_steps(device: str) -> None:
    """count_steps on `device` for runtime steps of either sign and 0 (the loop rule, ForOp: Python's range,
    zero iterations for a step of 0), and near the ends of i32, where iv + step would wrap."""
    cases = [(0, 10, 3), (10, 0, -3), (10, 0, -1), (0, 10, -1), (0, 10, 0), (5, 5, 1),
             (2**31 - 10, 2**31 - 1, 8), (-2**31 + 9, -2**31, -4)]
    for lo, hi, step in cases:
        out = np.zeros((1, 16), np.int32)
        count_steps[(1,)](out, lo, hi, step, 1, device=device)
        steps = range(lo, hi, step) if step else range(0)
        expected = np.int64(len(steps) * 1000 + sum(steps)).astype(np.int32)  # wraps like the kernel's i32
        assert (out == expected).all(), f"range({lo}, {hi}, {step}) on {device}: {out[0, 0]}, not {expected}"


@pytest.mark.parametrize("device", ["numpy", DEVICE])
def test_runtime_loop_steps(device):
    """A runtime step of 0 runs the loop zero times (no hang), a step of -1 runs it as Python's range does."""
    run_isolated(f"check_loop_steps({device!r})")


@xetile.kernel
def steps_by(out, step):
    n = 0
    for i in range(0, 10, step):
        n = n + 1
    xetile.store_tile(xetile.init_tile(out, [0, 0], [1, 16]), xetile.zeros([1, 16], xetile.int32) + n)


@pytest.mark.parametrize("device", ["numpy", DEVICE])
def test_a_step_argument_of_zero_is_refused_at_launch(device):
    """Where a loop's step is a scalar argument, a step of 0 is a LaunchError before anything runs."""
    out = np.full((1, 16), 7, np.int32)
    steps_by[(1,)](out, 3, device=device)
    assert (out == 4).all()
    out[:] = 7
    with pytest.raises(xetile.LaunchError, match=re.escape("argument 'step' is the step of a range() loop in the "
                                                           "kernel and must not be 0")):
        steps_by[(1,)](out, 0, device=device)
    assert (out == 7).all()


@xetile.kernel
def mma_at(a, b, c, k0):
    tb = xetile.init_tile(b, [k0, 0], [32, 16])
    v = xetile.tile_mma(xetile.load_tile(xetile.init_tile(a, [0, 0], [16, 32])), xetile.load_tile(tb))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [16, 16]), v)


def check_column_major_b_at(offsets) -> None:
    """mma_at with a column-major f16 B (read by paired d32 transposed messages) starting at each row k0 of
    `offsets`, on the device as in the interpreter (one kernel: k0 is an argument)."""
    rng = np.random.default_rng(0)
    a = rand(rng, (16, 32), np.float16)
    b = np.asfortranarray(rand(rng, (32, 16), np.float16))
    for k0 in offsets:
        print("mma_at", k0, flush=True)
        reference, device = run_both(mma_at, [a, b, np.zeros((16, 16), np.float32), k0], {}, (1,))
        assert reference[2].any()
        # the same products in f32; the OpenCL CPU driver may fuse multiply-adds (intel-opencl-rt 2026.2 does), so
        # equal to rounding, not bit for bit: a misread block is off by whole products
        assert_close(device[2], reference[2], scale=4)


def test_transposed_pairs_at_negative_offsets():
    """The paired transpose halved the column with a logical shift: at a negative (even) column the block read
    2**31 - 4 dwords away, all zeros or, with the old column check, out of the array (SIGSEGV)."""
    run_isolated("check_column_major_b_at([-8, -2])")


@xetile.kernel
def tile_products(a, b, c):
    """C = A @ B of one 64x64x64 tile a workgroup, A's tile at the program's rows: no K loop, every load at its
    place plus constants, as runs would take them."""
    m = xetile.program_id(0) * 64
    va = xetile.load_tile(xetile.init_tile(a, [m, 0], [64, 64]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [64, 64]))
    xetile.store_tile(xetile.init_tile(c, [m, 0], [64, 64]), xetile.tile_mma(va, vb, xetile.zeros([64, 64], xetile.float32)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=["f16", "f32"])
def test_loads_only_dpas_reads_stay_out_of_runs_on_the_cpu_target(rng, dtype):
    """A and B tiles that only tile_mma reads are not runs (pieces.feeds_dpas_only): each of a subgroup's 24 blocks
    (8 of A, 16 of B, whose 16 would make a run) goes through its builtin, and DPAS takes it as a value, where a
    run's private array of blocks had the driver shuffle them between lanes and components. The numbers are the
    interpreter's."""
    a, b = rand(rng, (128, 64), dtype, -2, 2), rand(rng, (64, 64), dtype, -2, 2)
    c = np.zeros((128, 64), np.float32)
    compiled = tile_products.warmup(a, b, c, target="cpu", grid=(2,))
    assert block_calls(compiled.asm["llir"], "load") == compiled.asm["xegpu-simt"].count("xegpu.load_nd") == 24
    reference, device = run_both(tile_products, [a, b, c], {}, (2,))
    assert_close(device[2], reference[2], np.float32, scale=64)
