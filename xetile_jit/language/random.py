"""Counter-based random numbers: Philox 4x32 with Triton's constants, rounds and conversions
(triton/language/random.py), traced into integer element-wise ops, so the numpy interpreter and the device compute
the same bits. Unsigned 32-bit words are held in i32 (two's complement add, multiply and xor are the unsigned ones);
the high half of a 32 x 32-bit product is taken from the zero-extended operands multiplied in i64.

`randint(seed, offsets)` is the first word of Philox(counter = (offsets, 0, 0, 0), key = the seed's low and high
32 bits); `rand` maps it to a float32 in [0, 1) as Triton's uint_to_uniform_float; `randn` takes the first two words
through Box-Muller (its log, sqrt and cos are the device's OpenCL functions: within their ulp bounds of the
interpreter's, not bit-identical).
"""
from __future__ import annotations

from ..ir.core import Value
from ..ir.types import ScalarType, int32, int64
from .dsl import _describe, builtin
from .semantic import current

N_ROUNDS_DEFAULT = 10
KEY_A, KEY_B = 0x9E3779B9, 0xBB67AE85        # added to the key halves after each round
ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57    # the round multipliers
UNIFORM_SCALE = 4.6566127342e-10             # the largest scale with MAX_INT32 * scale < 1.0 in f32 (Triton's)
LOW_WORD = 0xFFFFFFFF


def as_i32(word: int) -> int:
    """An unsigned 32-bit constant as the i32 literal with its bits."""
    return word - 2**32 if word >= 2**31 else word


def _umulhi(sem, constant: int, x: Value) -> Value:
    """The high 32 bits of the unsigned product `constant` x `x` (an i32 holding a u32)."""
    wide = sem.binary("&", sem.cast(x, int64), LOW_WORD)
    return sem.cast(sem.binary(">>", sem.binary("*", wide, constant), 32), int32)


def _philox(sem, seed, offsets, n_rounds: int) -> list[Value]:
    """The four words of Philox 4x32-`n_rounds` for counter (offsets, 0, 0, 0) and the seed's 64-bit key."""
    key = sem.to_value(seed)
    if not isinstance(key.type, ScalarType) or not key.type.dtype.is_int:
        raise sem.error(f"random: the seed must be an integer scalar, got {_describe(seed)}")
    key = sem.cast(key, int64)  # as Triton: a signed seed is sign-extended to 64 bits
    k0, k1 = sem.cast(key, int32), sem.cast(sem.binary(">>", key, 32), int32)
    c0 = _counter(sem, offsets)
    c1 = c2 = c3 = sem.to_value(0, int32, getattr(c0.type, "shape", ()))
    for _ in range(n_rounds):
        c0, c1, c2, c3 = (sem.binary("^", sem.binary("^", _umulhi(sem, ROUND_B, c2), c1), k0),
                          sem.binary("*", c2, as_i32(ROUND_B)),
                          sem.binary("^", sem.binary("^", _umulhi(sem, ROUND_A, c0), c3), k1),
                          sem.binary("*", c0, as_i32(ROUND_A)))
        k0, k1 = sem.binary("+", k0, as_i32(KEY_A)), sem.binary("+", k1, as_i32(KEY_B))
    return [c0, c1, c2, c3]


def _counter(sem, offsets) -> Value:
    """The offsets as i32 words (integers of at most 32 bits; Triton takes 64-bit offsets with other constants)."""
    c0 = sem.to_value(offsets)
    if not c0.type.dtype.is_int or c0.type.dtype.bits > 32:
        raise sem.error(f"random: offsets must be integers of at most 32 bits, got {_describe(offsets)}")
    return sem.cast(c0, int32)


def _uniform(sem, word: Value) -> Value:
    """Triton's uint_to_uniform_float: a float32 in [0, 1) from an i32 word."""
    folded = sem.where(sem.compare("<", word, 0), sem.binary("-", sem.binary("-", 0, word), 1), word)
    return sem.binary("*", folded, UNIFORM_SCALE)


def _rounds(sem, n_rounds) -> int:
    if not isinstance(n_rounds, int) or isinstance(n_rounds, bool) or n_rounds < 1:
        raise sem.error(f"random: n_rounds must be a positive compile-time int, got {_describe(n_rounds)}")
    return n_rounds


@builtin
def randint(seed, offsets, n_rounds=N_ROUNDS_DEFAULT) -> Value:
    """The first Philox word for each offset, as i32 bits (Triton's uint32 randint)."""
    sem = current()
    return _philox(sem, seed, offsets, _rounds(sem, n_rounds))[0]


@builtin
def rand(seed, offsets, n_rounds=N_ROUNDS_DEFAULT) -> Value:
    """A float32 uniform in [0, 1) for each offset."""
    sem = current()
    return _uniform(sem, _philox(sem, seed, offsets, _rounds(sem, n_rounds))[0])


@builtin
def randn(seed, offsets, n_rounds=N_ROUNDS_DEFAULT) -> Value:
    """A float32 standard normal for each offset (Box-Muller on the first two words, as Triton)."""
    sem = current()
    words = _philox(sem, seed, offsets, _rounds(sem, n_rounds))
    u1 = sem.binary("max", 1.0e-7, _uniform(sem, words[0]))
    angle = sem.binary("*", 6.283185307179586, _uniform(sem, words[1]))
    radius = sem.unary("math.sqrt", sem.binary("*", -2.0, sem.unary("math.log", u1)))
    return sem.binary("*", radius, sem.unary("math.cos", angle))
