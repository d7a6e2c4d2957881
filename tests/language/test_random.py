"""Philox random numbers: `xetile.randint/rand/randn` against a numpy Philox 4x32-10 written
here (checked against the Random123 known-answer vectors), bit for bit for randint and rand in the numpy
interpreter and as SPIR-V on opencl:cpu; randn within the OpenCL math functions' ulp bounds."""
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import assert_close

on_each_device = pytest.mark.usefixtures("on_each_device")  # numpy interpreter and SPIR-V (conftest)

M, N, BM, BN = 20, 48, 8, 32  # partial tiles at the bottom and right edges


# ---- the numpy reference -------------------------------------------------------------------------------------
def philox(key, counter, rounds=10):
    """Philox 4x32: `counter` four uint32 arrays, `key` two uint32 words; Random123's round and key schedule."""
    c = [np.asarray(x, np.uint32) for x in counter]
    k0, k1 = int(key[0]), int(key[1])
    for _ in range(rounds):
        p0 = np.uint64(0xD2511F53) * c[0].astype(np.uint64)
        p1 = np.uint64(0xCD9E8D57) * c[2].astype(np.uint64)
        hi0, lo0 = (p0 >> np.uint64(32)).astype(np.uint32), p0.astype(np.uint32)
        hi1, lo1 = (p1 >> np.uint64(32)).astype(np.uint32), p1.astype(np.uint32)
        c = [hi1 ^ c[1] ^ np.uint32(k0), lo1, hi0 ^ c[3] ^ np.uint32(k1), lo0]
        k0, k1 = (k0 + 0x9E3779B9) % 2**32, (k1 + 0xBB67AE85) % 2**32
    return c


def words(seed: int, offsets):
    key = np.uint64(seed % 2**64)
    zero = np.zeros_like(offsets, np.uint32)
    return philox((key & np.uint64(0xFFFFFFFF), key >> np.uint64(32)), (offsets.astype(np.uint32), zero, zero, zero))


def uniform(word):
    x = word.view(np.int32)
    x = np.where(x < 0, -x - 1, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def normal(w0, w1):
    u1 = np.maximum(np.float32(1e-7), uniform(w0))
    angle = np.float32(6.283185307179586) * uniform(w1)
    return np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(angle)


@pytest.mark.parametrize("key,counter,expected", [
    ((0, 0), (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF,) * 4, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0xA4093822, 0x299F31D0), (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_reference_matches_random123_known_answers(key, counter, expected):
    assert [int(w) for w in philox(key, counter)] == list(expected)


# ---- kernels ---------------------------------------------------------------------------------------------------
@xetile.kernel
def random_kernel(offsets, out, seed, KIND: xetile.constexpr, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    o = xetile.load_tile(xetile.init_tile(offsets, [m, n], [BM, BN]))
    if KIND == "randint":
        r = xetile.randint(seed, o)
    elif KIND == "rand":
        r = xetile.rand(seed, o)
    else:
        r = xetile.randn(seed, o)
    xetile.store_tile(xetile.init_tile(out, [m, n], [BM, BN]), r)


def run(kind, seed, offsets, dtype):
    out = np.zeros((M, N), dtype)
    random_kernel[(xetile.cdiv(M, BM), xetile.cdiv(N, BN))](offsets, out, seed, KIND=kind, BM=BM, BN=BN)
    return out


SEEDS = [0, 1234, np.int32(-7), np.int64(0x123456789ABC)]  # a negative i32 seed sign-extends, as in Triton


def offsets_of(rng):
    return rng.integers(-2**31, 2**31, (M, N), dtype=np.int64).astype(np.int32)


@on_each_device
@pytest.mark.parametrize("seed", SEEDS, ids=str)
def test_randint_is_philox(rng, seed):
    offsets = offsets_of(rng)
    expected = words(int(seed), offsets)[0].view(np.int32)
    np.testing.assert_array_equal(run("randint", seed, offsets, np.int32), expected)


@on_each_device
@pytest.mark.parametrize("seed", SEEDS[1:3], ids=str)
def test_rand_is_bit_exact(rng, seed):
    offsets = offsets_of(rng)
    out = run("rand", seed, offsets, np.float32)
    np.testing.assert_array_equal(out, uniform(words(int(seed), offsets)[0]))
    assert 0 <= out.min() and out.max() < 1


@on_each_device
def test_randn_is_box_muller(rng):
    offsets = np.arange(M * N, dtype=np.int32).reshape(M, N)
    out = run("randn", 42, offsets, np.float32)
    w = words(42, offsets)
    assert_close(out, normal(w[0], w[1]), scale=10)
    assert abs(out.mean()) < 0.1 and abs(out.std() - 1) < 0.1


@on_each_device
def test_rand_rejects_64_bit_offsets():
    offsets = np.zeros((M, N), np.int64)
    with pytest.raises(xetile.CompilationError, match="random: offsets must be integers of at most 32 bits"):
        run("rand", 0, offsets, np.float32)
