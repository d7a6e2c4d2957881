"""Pointer arithmetic, Triton's spelling of gather and scatter (language/pointers.py): `x + offsets` with `load`,
`store` and the `atomic_*` functions, on 1-D and 3-D arrays, masked, with `other`, and scalar pointers (`x + i`).
Each kernel runs in the interpreter at every IR level and, launched, in the numpy interpreter and as SPIR-V on
opencl:cpu for both CPU targets, against numpy, and builds for xe-hpc and xe2 with Intel's GPU compiler."""
import re

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.compiler.pipeline import lower
from xetile_jit.target.targets import get_target
from xetile_jit.toolchain import ocloc
from xetile_jit.ir.interpreter import run_ir
from conftest import target_options

constexpr = xetile.constexpr


@xetile.kernel
def embedding(table, ids, out, n, D: constexpr, BT: constexpr):
    """out[t] = 2 * table[ids[t]] for the first n tokens, as a Triton kernel writes it (flat 1-D arrays)."""
    t = xetile.program_id(0) * BT + xetile.arange(0, BT)
    row = xetile.load(ids + t, mask=t < n, other=0)
    cols = xetile.arange(0, D)
    v = xetile.load(table + (xetile.expand_dims(row * D, 1) + xetile.expand_dims(cols, 0)))
    xetile.store(out + xetile.expand_dims(t * D, 1) + xetile.expand_dims(cols, 0), v * 2.0,
                 mask=xetile.expand_dims(t < n, 1))


def embedding_case(rng):
    vocab, d, n = 7, 16, 10
    table = rng.standard_normal(vocab * d).astype(np.float32)
    ids = rng.integers(0, vocab, n).astype(np.int32)
    expected = np.full((16, d), -1, np.float32)
    expected[:n] = 2 * table.reshape(vocab, d)[ids]
    return (table, ids, np.full(16 * d, -1, np.float32), n), dict(D=d, BT=8), (2,), 2, expected.reshape(-1)


@xetile.kernel
def histogram(x, bins, old, n, B: constexpr):
    """bins[x[i]] += 1 for i < n, by atomic_add on `bins + x`, the old counts kept; keys outside bins drop."""
    i = xetile.program_id(0) * B + xetile.arange(0, B)
    key = xetile.load(x + i, mask=i < n, other=-1)
    xetile.store(old + i, xetile.atomic_add(bins + key, 1, mask=i < n), mask=i < n)


def histogram_case(rng):
    x = rng.integers(-2, 10, 100).astype(np.int32)
    expected = np.bincount(x[(x >= 0) & (x < 8)], minlength=8).astype(np.int32)
    return (x, np.zeros(8, np.int32), np.zeros(100, np.int32), 100), dict(B=32), (4,), 1, expected


@xetile.kernel
def shifted(x, out, M: constexpr, N: constexpr):
    """out[i, j] = x.flat[i * N + j - 3], and out's own value where that is before x: `- offsets`, a 2-D `other`
    and a 3-D array indexed in its row-major order."""
    offs = xetile.iota([M, N], 0) * N + xetile.iota([M, N], 1)
    keep = xetile.load(out + offs)
    xetile.store(out + offs, xetile.load(x + offs - 3, mask=offs >= 3, other=keep))


def shifted_case(rng):
    x = rng.standard_normal((2, 4, 8)).astype(np.float32)
    out = rng.standard_normal(64).astype(np.float32)
    expected = out.copy()
    expected[3:] = x.reshape(-1)[:61]
    return (x, out), dict(M=8, N=8), (1,), 1, expected


@xetile.kernel
def scalar_pointers(x, counter, old, out, n):
    """Triton's scalar pointers, in a workgroup of four subgroups: out[p] = 2 * x.flat[3p + 1] for p < n and -2
    beyond (a masked load with `other`, as a scalar), stored through `out + p`; `counter` counts the workgroups
    atomically, each keeping the count it found (one atomic a workgroup, not one a subgroup)."""
    p = xetile.program_id(0)
    v = xetile.load(x + p * 3 + 1, mask=p < n, other=-1.0)
    xetile.store(out + p, v * 2)
    xetile.store(old + p, xetile.atomic_add(counter, 1))


def scalar_pointers_case(rng):
    x = rng.standard_normal((8, 3)).astype(np.float32)
    expected = np.where(np.arange(8) < 6, 2 * x[:, 1], -2).astype(np.float32)
    return (x, np.zeros(1, np.int32), np.zeros(8, np.int32), np.zeros(8, np.float32), 6), \
        dict(num_subgroups=4), (8,), 3, expected


def check_scalar_pointer_counts(args) -> None:
    """The atomic's count and the counts each workgroup found, once a scalar_pointers case ran."""
    assert args[1].tolist() == [8] and sorted(args[2].tolist()) == list(range(8))


@xetile.kernel
def pointer_matmul(a, b, c, M, N, K, BM: constexpr, BN: constexpr, BK: constexpr):
    """Triton's matmul tutorial as its users write it: blocks of pointers moved through the K loop (`a_ptrs += BK`,
    carried as their offsets), masked at the edges, multiplied with tile_mma."""
    offs_m = xetile.program_id(0) * BM + xetile.arange(0, BM)
    offs_n = xetile.program_id(1) * BN + xetile.arange(0, BN)
    offs_k = xetile.arange(0, BK)
    a_ptrs = a + (offs_m[:, None] * K + offs_k[None, :])
    b_ptrs = b + (offs_k[:, None] * N + offs_n[None, :])
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, xetile.cdiv(K, BK)):
        a_block = xetile.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0)
        b_block = xetile.load(b_ptrs, mask=(offs_k[:, None] < K - k * BK) & (offs_n[None, :] < N), other=0.0)
        acc = xetile.tile_mma(a_block, b_block, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    xetile.store(c + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def pointer_matmul_case(rng):
    m, n, k = 37, 21, 40
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    return (a, b, np.zeros((m, n), np.float32), m, n, k), dict(BM=16, BN=16, BK=16), (3, 2), 2, expected


@xetile.kernel
def strides_by_parity(x, out, n, B: constexpr):
    """out = the sum of n blocks of x, the pointer moving one block after an even step and two after an odd one:
    a pointer carried through a loop and through the runtime `if` in it."""
    p = x + xetile.arange(0, B)
    acc = xetile.zeros([B], xetile.float32)
    for i in range(0, n):
        acc += xetile.load(p)
        if i % 2 == 0:
            p += B
        else:
            p += 2 * B
    xetile.store(out + xetile.arange(0, B), acc)


def strides_by_parity_case(rng):
    x = rng.standard_normal(16 * 8).astype(np.float32)
    expected = sum(x[s * 16:(s + 1) * 16] for s in (0, 1, 3, 4, 6))
    return (x, np.zeros(16, np.float32), 5), dict(B=16), (1,), 1, expected


@xetile.kernel
def spin_lock(locks, counts):
    """Triton's spin lock through scalar pointers: each workgroup takes lock i (its parity's), counts under it with
    a plain load and store, and releases it."""
    i = xetile.program_id(0) % 2
    while xetile.atomic_cas(locks + i, 0, 1) == 1:
        pass
    xetile.store(counts + i, xetile.load(counts + i) + 1)
    xetile.atomic_xchg(locks + i, 0)


def spin_lock_case(rng):
    return (np.zeros(2, np.int32), np.zeros(2, np.int32)), {}, (64,), 1, np.array([32, 32])


@xetile.kernel
def cast_others(u8, i8, i32, out, n, B: constexpr):
    """The first n elements of three arrays and `other` past them, cast as Triton's tl.load casts it to the
    elements' type: -1 reads 255 from uint8, 200 reads -56 from int8, -2.7 reads -2 from int32; out, in i32, holds
    the three rows one after the other."""
    offs = xetile.arange(0, B)
    xetile.store(out + offs, xetile.load(u8 + offs, mask=offs < n, other=-1).to(xetile.int32))
    xetile.store(out + B + offs, xetile.load(i8 + offs, mask=offs < n, other=200).to(xetile.int32))
    xetile.store(out + 2 * B + offs, xetile.load(i32 + offs, mask=offs < n, other=-2.7))


def cast_others_case(rng):
    arrays = [rng.integers(0, 100, 16).astype(t) for t in (np.uint8, np.int8, np.int32)]
    expected = np.concatenate([np.where(np.arange(16) < 5, a, other) for a, other in zip(arrays, (255, -56, -2))])
    return (*arrays, np.zeros(48, np.int32), 5), dict(B=16), (1,), 3, expected


CASES = {"embedding": (embedding, embedding_case), "histogram": (histogram, histogram_case),
         "shifted_3d": (shifted, shifted_case), "scalars": (scalar_pointers, scalar_pointers_case),
         "pointer_matmul": (pointer_matmul, pointer_matmul_case),
         "strides_by_parity": (strides_by_parity, strides_by_parity_case), "spin_lock": (spin_lock, spin_lock_case),
         "cast_others": (cast_others, cast_others_case)}
# f32 sums of K products, in another order than numpy's; the other cases move or add a few values
TOLERANCES = {"pointer_matmul": dict(rtol=1e-5, atol=1e-4)}


@pytest.mark.parametrize("case", CASES)
def test_every_level_interprets_like_numpy(rng, case):
    kern, make = CASES[case]
    args, consts, grid, result, expected = make(rng)
    func = kern.warmup(*args, **consts, target="numpy").func
    for name, level in {"xetile": func, **lower(func, "xegpu-simt")}.items():
        fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        run_ir(level, (*grid, 1, 1), fresh)
        np.testing.assert_allclose(fresh[result], expected, err_msg=name, **TOLERANCES.get(case, dict(rtol=1e-6)))
        if case == "scalars":
            check_scalar_pointer_counts(fresh)


@pytest.mark.parametrize("case", CASES)
def test_launch_on_each_device(rng, case, on_each_device):
    kern, make = CASES[case]
    for options in target_options(on_each_device):
        args, consts, grid, result, expected = make(rng)
        kern[grid](*args, **consts, **options)
        np.testing.assert_allclose(args[result], expected, err_msg=str(options),
                                   **TOLERANCES.get(case, dict(rtol=1e-6)))
        if case == "scalars":
            check_scalar_pointer_counts(args)


def test_a_dense_array_is_gathered_with_no_division(rng):
    """Offsets count elements in row-major order: an array the launch found dense (C order) is addressed by the
    offset itself, with no code that divides it by the array's sizes; a pitched one divides (codegen/llvm/scatter.py),
    where the division is guarded by a run-time test of its strides."""
    args, consts, *_ = pointer_matmul_case(rng)
    pitched = np.zeros((args[0].shape[0], 64), args[0].dtype)[:, :args[0].shape[1]]
    divisions = {}
    for name, a in {"dense": args[0], "pitched": pitched}.items():
        llvm = pointer_matmul.warmup(a, *args[1:], **consts, target="cpu").asm["llir"]
        divisions[name] = len(re.findall(r"= s(?:div|rem) i64", llvm))
    assert divisions["dense"] == 0 and divisions["pitched"] > 0, divisions


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_the_kernels_build_for_gpus(rng, target):
    """The Intel GPU compiler builds each kernel above (its SPIR-V passes spirv-val: conftest), no call left."""
    if not ocloc.available(get_target(target)):
        pytest.skip(f"no GPU compiler for {target} is installed")
    for name, (kern, make) in CASES.items():
        args, consts, *_ = make(rng)
        isa = kern.warmup(*args, **consts, target=target).asm["isa"]
        assert isa and "calla" not in isa, name


@xetile.kernel
def misuse(x, y, WHAT: constexpr):
    i = xetile.arange(0, 16)
    if WHAT == "scaled":
        xetile.store(x * 2 + i, 1.0)
    if WHAT == "two_arrays":
        xetile.store(x + y, 1.0)
    if WHAT == "float_offsets":
        xetile.store(x + i + i.to(xetile.float32), 1.0)
    if WHAT == "eviction_policy":
        xetile.store(x + i, xetile.load(y + i, eviction_policy="evict_last"))
    if WHAT == "loop_switches_array":
        p = x + i
        for _ in range(0, 3):
            p = y + i
    if WHAT == "cas_of_lanes":
        xetile.atomic_cas(x + i, 0.0, 1.0)
    if WHAT == "if_switches_array":
        p = x + i
        if xetile.program_id(0) > 0:
            p = y + i
        xetile.store(p, 1.0)


@pytest.mark.parametrize("what, message", [
    ("scaled", "operator * on an array: arrays take `+ offsets` and `- offsets`"),
    ("two_arrays", "pointer arithmetic adds offsets to one array, not two arrays"),
    ("float_offsets", "offsets must be integers, got vector<16xf32>"),
    ("eviction_policy", "load() got an unexpected keyword argument 'eviction_policy' (eviction_policy is an option "
                        "of Triton's tl.load, which `array + offsets` does not take: drop it"),
    ("loop_switches_array", "'p' enters this loop as a pointer into one array, and an iteration must leave it a "
                            "pointer into that array"),
    ("cas_of_lanes", "atomic_cas: through memref<?xf32, strided<[1]>> + vector<16xi32>, an element a lane, is not "
                     "supported; through a scalar pointer (`locks + i`) or a block tile (init_tile) it is"),
    ("if_switches_array", "'p' is a pointer on one path through this runtime `if` and not a pointer into the same "
                          "array on the other"),
])
def test_misuse_is_named(what, message):
    x = np.zeros(16, np.float32)
    with pytest.raises(xetile.CompilationError, match=re.escape(message)):
        misuse.warmup(x, x.copy(), WHAT=what, target="numpy")


@xetile.kernel
def masked_copy(x, y, OTHER: constexpr):
    i = xetile.arange(0, 16)
    xetile.store(y + i, xetile.load(x + i, mask=i < 5, other=OTHER))


@pytest.mark.parametrize("other", [float("nan"), float("inf")])
def test_an_other_no_integer_holds_is_named(other):
    """Triton's cast of a NaN or an infinity to an integer has no defined value: the load names it."""
    x = np.zeros(16, np.int32)
    with pytest.raises(xetile.CompilationError, match=re.escape(f"load(): other={other} has no value in i32 elements")):
        masked_copy.warmup(x, x.copy(), OTHER=other, target="numpy")
