"""The DPAS builtin defined for a CPU (both CPU ABIs, "emulated" and "vector"): the call ABI and lane layouts of
codegen/xe/builtins.py (docs/reference/xe_builtins.md §1.3), computed with lane broadcasts and scalar arithmetic.

Numerics: bf16, f16 and 8-bit inputs are converted exactly to f32 / i32; tf32 inputs are f32 words whose low 13
mantissa bits are dropped (truncation, as tf32 DPAS reads an f32 register: ir/numeric.py `tf32`). Each product
is then exact in f32 (at most 22 significant bits). The accumulation is `d = c; for k in 0..K-1: d = d + a[k] *
b[k]` per output element, rounding to nearest even after every addition (integers: exact i32 with wrap-around).
The hardware's systolic adder tree may round differently in the last bit; this order is what the tests reproduce
in numpy.

Where A's element A[r][k] is: lane k / per_lane, component r, field k % per_lane (f16, bf16, 8-bit); tf32 (K 8
on sub-group 16): lane k for the even rows and k + 8 for the odd ones, component r / 2 (tf32_lane).
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...ir.numeric import TF32_MASK
from ...target.cpu_features import CpuFeatures
from ..llvm.core import counted_loop
from ..llvm.core import F32, I32
from .builtins import DpasBuiltin
from ..llvm import lane_slots
from .llvm_helpers import BROADCAST, ROLLED, SHUFFLE, SLOTS, constant, declared, field, i32, like, moved

# The row sums one loop over k carries (row_groups): four DPAS ops sharing A take 4 of its 8 rows a loop, two all 8.
# 16 sums, the B values and A's rows stay within the CPU's 32 vector registers; each A[r][k] is broadcast once for
# every op of the loop, so four ops a loop broadcast half as often as two (with each B widened once, `widened_b`:
# tutorial GEMM 2048 f32 1.00-1.01x oneMKL against 0.92-0.93x, f16 1.03x against 0.94x; 24 sums as fast as 16, 32
# 0.72x; docs/performance.md "CPU notes"). That is half the register file of AVX-512 in sums of one vector each; a
# CPU of another ISA carries half of its own (carried_sums).
CARRIED_SUMS = 16
# Loops over k of at most this many steps are marked not to unroll: the OpenCL CPU driver unrolled tf32's 8-step loops
# (one row of four DPAS ops each, under AVX2's budget of sums) whole, and built the tutorial's tf32 GEMM in 22 s with
# AVX2 code against 3.2 s rolled, as fast or faster; rolling the 16-step loops of the other types as well cost their
# GEMMs 6-7% at 2048 there (docs/performance.md "AVX2 code on the Xeon").
ROLLED_UP_TO = 8


def carried_sums(cpu: CpuFeatures, lanes: int) -> int:
    """The row sums a loop over k carries on `cpu` for a sub-group of `lanes` lanes: half its vector registers, a sum
    taking as many as a lane's f32 across the sub-group fill (AVX2 at 16 lanes: 2 ymm a sum, so 4 sums in 8 of its 16
    registers, where 16 sums spilled half the accumulators to the stack every step: tutorial GEMM 1024 f32 0.54x numpy
    against 0.37x, docs/performance.md "On the AVX2 EPYC"; f16 1024 62-83 GFLOP/s against 51-55, "AVX2 code on the
    Xeon"); CARRIED_SUMS where the ISA is unknown. For the f32 multiply-adds (CpuDpas.fma_mma) and the `cpu` target's
    DPAS emulation (`dpas_results`), whose A is widened before its loops."""
    return register_sums(cpu, lanes, 1 / 2)


def in_memory_sums(cpu: CpuFeatures, lanes: int) -> int:
    """The row sums a loop over k that reads A[r][k] in A's memory (`a_in_place`) carries: three quarters of the
    vector registers, the rest holding B's column and A[r][k]. With AVX2 at 16 lanes 6 rows of one chain, 12 of the
    16 ymm: a hand-written loop of that shape (B's column private, A's rows in memory, the sums loaded and stored
    around 32 steps) ran at 0.96 of the multiply-add peak in groups of 6, 6 and 4 rows against 0.88 in groups of 4
    (Zen 5 with AVX2 code, 2026-12-05; docs/performance.md "What bounds the tutorial GEMM")."""
    return register_sums(cpu, lanes, 3 / 4)


def register_sums(cpu: CpuFeatures, lanes: int, share: float) -> int:
    """The row sums `share` of `cpu`'s vector registers hold, a sum of `lanes` lanes' f32; CARRIED_SUMS where the ISA
    is unknown."""
    if not cpu.vector_registers:
        return CARRIED_SUMS
    return max(1, int(cpu.vector_registers * share) // cpu.registers_for(lanes * 32))


@dataclass(frozen=True)
class KLoops:
    """How the loops over k run on a CPU (`k_loops`): the row sums a loop carries (`carried_sums`; where it reads A
    in its memory, `in_memory_sums`), how every lane reads A[r][k] of lane k (SLOTS, BROADCAST or SHUFFLE:
    `staged`), whether the f32 multiply-adds read A[r][k] from A's memory instead where A's block lies inside its
    array (`a_in_place`; codegen/cpu/in_place_a.py), and the loops over all of K of a K loop turned inside out
    (`whole_k_loops`; None: not turned)."""
    sums: int = CARRIED_SUMS
    read: str = BROADCAST
    a_in_place: bool = False
    in_memory_sums: int = CARRIED_SUMS
    whole_k: WholeK | None = None


@dataclass(frozen=True)
class WholeK:
    """The loops over all of K of a GEMM's K loop turned inside out (codegen/cpu/k_interchange.py): the sums a loop
    carries, the B columns they take, and the DPAS kinds (Target.dpas_kind) so multiplied."""
    sums: int
    columns: int
    kinds: tuple[str, ...]


def k_loops(cpu: CpuFeatures, lanes: int, lockstep: bool) -> KLoops:
    """The loops over k on `cpu` for a sub-group of `lanes` lanes. On AMD's AVX-512 CPUs A[r][k] is a shuffle from
    lane k in every kernel (CpuFeatures.shuffles_lanes). Elsewhere, in a kernel whose lanes exchange values through
    their slots (`lockstep`, codegen/llvm/lane_slots.py) A's lane words are stored in them once and A[r][k] is a load
    from lane k's slot, the same address on every lane; else A[r][k] is read by OpGroupBroadcast (every lane asks for
    the same k): the OpenCL CPU compiler also builds a masked copy of each kernel calling a sub-group built-in, for
    workgroups whose size is not a multiple of the sub-group's (never ours), and there made each shuffle a test and a
    blend a lane, where the broadcast is one element read (the tutorial GEMM's machine code with AVX2 code 28.7
    thousand lines against 24.0, its builds on the Xeon AVX-512 in half the time; docs/performance.md "Driver
    builds"). On AMD's AVX-512 the 16 lanes are one zmm and the shuffle one `vpermd` in both copies, where the
    broadcast stored A's row to the stack every step for a `vbroadcastss` to read back (the tutorial GEMM 0.8x as fast
    on a Zen 4, 0.83-0.89x on a Zen 5; docs/performance.md "GEMM on the `cpu` target", "On the Zen 5")."""
    read = SHUFFLE if cpu.shuffles_lanes else SLOTS if lockstep else BROADCAST
    sums, in_place = carried_sums(cpu, lanes), a_in_place(cpu, lanes)
    return KLoops(sums, read, in_place, in_memory_sums(cpu, lanes) if in_place else sums, whole_k_loops(cpu, lanes))


# The B columns (each one lane's f32 across the sub-group) a loop over all of K carries sums of, where a sum takes one
# vector register (AVX-512): 4 rows of 4 columns, each A[r][k] broadcast once for 4 multiply-adds, ran 2048^3 f32 at
# 474-494 GFLOP/s against 424 with 8 or 12 rows of one column and 431 with 6 rows of 4 (the row addresses outgrow the
# general registers), 341-348 with the K loop as written (Zen 5, 2026-12-05; docs/performance.md "What bounds the
# tutorial GEMM").
WHOLE_K_COLUMNS = 4


def whole_k_loops(cpu: CpuFeatures, lanes: int) -> WholeK | None:
    """The loops over all of K where a GEMM's K loop is turned inside out (codegen/cpu/k_interchange.py). Where a sum
    takes several vector registers (AVX2): `in_memory_sums` of one B column, f32 only (6 rows: 242-261 GFLOP/s at
    2048^3 with AVX2 code against 228-233 as written; 3 rows of 2 columns spilled; f16, whose A and B each loop would
    widen, 196 against 205). Else `carried_sums` over WHOLE_K_COLUMNS columns, f32, f16 and bf16 (2048^3 with
    AVX-512 code: f16 444-459 against 364-371, bf16 332 against 273; Zen 5, 2026-12-05). None where the ISA is
    unknown."""
    if not cpu.vector_registers:
        return None
    if cpu.registers_for(lanes * 32) > 1:
        return WholeK(in_memory_sums(cpu, lanes), 1, ("f32",))
    return WholeK(carried_sums(cpu, lanes), WHOLE_K_COLUMNS, ("f32", "f16", "bf16"))


def a_in_place(cpu: CpuFeatures, lanes: int) -> bool:
    """Whether the loops over k (the f32 multiply-adds and the DPAS emulation of every kind) read A[r][k] from A's
    memory, one load at an address the same on every lane, where A's block lies inside its array: where a lane's f32
    across the sub-group takes several vector registers (AVX2 at 16 lanes). There the driver moved A[r][k] from lane
    k by storing A's row to the stack every step for a `vbroadcastss` to read one element back, which also kept a
    loop to one row of sums. Read in place, a loop over k is a `vbroadcastss` from A's memory per row (f16: a
    `vpbroadcastw` and a `vcvtph2ps`) and one multiply-add per row and chain of DPAS ops: the tutorial GEMM with
    AVX2 code on a Zen 4 ran at 0.85-0.87 / 0.70-0.74 of oneMKL at 1024 / 2048 against 0.59 / 0.57 in f32, 0.99 /
    0.67 against 0.72 / 0.56 in f16 (`bench/bench_gemm.py`; docs/performance.md "GEMM on the `cpu` target"). With
    AVX-512 on Zen 4 (a lane's f32 one zmm, moved by a shuffle) it ran as fast as the shuffle and built longer, so
    there A stays in its lanes."""
    return cpu.registers_for(lanes * 32) > 1


def widen(b: ir.IRBuilder, value: ir.Value, dtype: str) -> ir.Value:
    """Exact conversion of f16 / bf16 bits to f32 and of i8 / ui8 to i32; tf32: the f32 word truncated."""
    if dtype == "f16":
        return b.fpext(b.bitcast(value, like(value.type, ir.HalfType())), like(value.type, F32))
    if dtype == "bf16":
        wide = b.zext(value, like(value.type, I32))
        return b.bitcast(b.shl(wide, constant(wide.type, 16)), like(value.type, F32))
    if dtype == "tf32":
        return tf32(b, value)
    return (b.sext if dtype == "i8" else b.zext)(value, like(value.type, I32))


def tf32(b: ir.IRBuilder, words: ir.Value) -> ir.Value:
    """f32 words (i32, or a vector of them) as tf32 DPAS reads them: f32 values without their low 13 mantissa bits."""
    mask = constant(words.type, TF32_MASK - (1 << 32))  # the mask's bits as a signed i32
    return b.bitcast(b.and_(words, mask), like(words.type, F32))


def _components(b: ir.IRBuilder, value: ir.Value, count: int) -> list[ir.Value]:
    return [b.extract_element(value, i32(i)) for i in range(count)] if count > 1 else [value]


def _as_words(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """An f32 operand (tf32 A and B) as its i32 words: shuffles and fields work on integers."""
    element = value.type.element if isinstance(value.type, ir.VectorType) else value.type
    return b.bitcast(value, like(value.type, I32)) if element == F32 else value


def tf32_lane(mad: DpasBuiltin, r: int, k: int) -> tuple[int, int]:
    """(lane, component) holding tf32 A[r][k]: lanes 0-7 the even rows, 8-15 the odd ones (§1.3)."""
    return k + mad.k * (r % 2), r // 2


def staged(b: ir.IRBuilder, words: list[ir.Value], read: str, private=None):
    """A function (index, lane) -> word `index` of `words` (values of at most 32 bits) of lane `lane`, on every lane,
    as `read` reads it (KLoops.read): for SLOTS each lane stores its words in its slots once and loads any lane's
    (codegen/llvm/lane_slots.py), where A[r][k] of lane k, k the same on every lane, is one load from one address;
    else moved by the lane builtin `read` from a private array `private(type)` makes (an i32 index), or from `words`
    (an int index) where `private` is None."""
    if read == SLOTS:
        lane_slots.stage(b, [lane_slots.words_of(b, word)[0] for word in words])
        return lambda index, lane: lane_slots.value_of(
            b, [b.load(lane_slots.slot(b, i32(index) if isinstance(index, int) else index, lane))], words[0].type)
    if private is None:
        return lambda index, lane: moved(b, read, words[index], lane)
    array = private(ir.ArrayType(words[0].type, len(words)))
    for i, word in enumerate(words):
        b.store(word, b.gep(array, [i32(0), i32(i)]))
    return lambda index, lane: moved(b, read, b.load(b.gep(array, [i32(0), index])), lane)


def _a_column(b: ir.IRBuilder, mad: DpasBuiltin, parts: list[ir.Value], read: str):
    """A function of k (an i32, the same on every lane) and rows giving [A[r][k] for each of the rows], widened, on
    every lane, each read as `read` says (KLoops.read, `staged`)."""
    if mad.a == "tf32":
        places = [tf32_lane(mad, r, 0) for r in range(mad.m)]
        word = staged(b, parts, read)
        return lambda k, rows: [widen(b, word(places[r][1], b.add(k, i32(places[r][0]))), "tf32") for r in rows]
    return _column_of(b, mad, staged(b, _lane_words(b, mad, parts), read))


def _lane_words(b: ir.IRBuilder, mad: DpasBuiltin, parts: list[ir.Value]) -> list[ir.Value]:
    """The words a lane's A rows are shuffled as (not tf32): one element a lane widened once, as i32 (the driver
    built the GEMM 1 s sooner than widening after the shuffle), else the packed words."""
    if mad.per_lane == 1 and mad.is_float:
        return [b.bitcast(widen(b, part, mad.a), I32) for part in parts]
    return parts


def _column_of(b: ir.IRBuilder, mad: DpasBuiltin, word):
    """_a_column given row r's `_lane_words` word of lane `lane` as `word(r, lane)` (`staged`)."""
    if mad.per_lane == 1 and mad.is_float:
        return lambda k, rows: [b.bitcast(word(r, k), F32) for r in rows]

    def packed(k, rows):  # A[r][k] is field k % per_lane of lane k / per_lane's word
        lane, place = b.udiv(k, i32(mad.per_lane)), b.urem(k, i32(mad.per_lane))
        words = [word(r, lane) for r in rows]
        words = [word if word.type == I32 else b.zext(word, I32) for word in words]
        return [widen(b, field(b, word, place, mad.bits), mad.a) for word in words]
    return packed


def multiply_add(b: ir.IRBuilder, mad: DpasBuiltin):
    """`(a, b, c) -> c + a * b` rounded as the module docstring says. f16 x f16 uses OpenCL's `fma`: a product
    of two f16 values is exact and normal in f32 (at most 22 significant bits, 2**-48 to 2**32), so the fused
    operation rounds once, as the add alone does, and a CPU does it in one instruction. Not for bf16 and tf32,
    whose products can leave f32's range (and then round differently unfused): their product is an `fmul`, and the
    add of it an `fma` of the product by 1.0, exactly the add (the product times 1 is exact). The OpenCL CPU driver
    built an `fmul` feeding an `fadd` in ten times the time with AVX2 code: the bf16 256x256 GEMM of the tests in 39 s
    against 3.2 (docs/performance.md "Driver builds")."""
    if not mad.is_float:
        return lambda x, y, acc: b.add(acc, b.mul(x, y))
    fma = declared(b.module, "__spirv_ocl_fma", ir.FunctionType(F32, [F32] * 3))
    if mad.a == mad.b == "f16":
        return lambda x, y, acc: b.call(fma, [x, y, acc])
    return lambda x, y, acc: b.call(fma, [b.fmul(x, y), ir.Constant(F32, 1.0), acc])


def emulate_dpas(b: ir.IRBuilder, fn: ir.Function, mad: DpasBuiltin, read: str) -> None:
    """The builtin's body, each lane reading A[r][k] of lane k as `read` says (KLoops.read); the "vector" ABI's
    lowering writes `dpas_results` inline instead."""
    a, packed_b, acc = fn.args
    column = widened_b(b, mad, packed_b, b.alloca)
    b.ret(dpas_results(b, mad, a, [(column, acc)], KLoops(read=read))[0])


def b_column_type(mad: DpasBuiltin) -> ir.ArrayType:
    """A lane's K elements of B, widened (f32 or i32): the private array `widened_b` fills."""
    return ir.ArrayType(F32 if mad.is_float else I32, mad.k)


def widened_b(b: ir.IRBuilder, mad: DpasBuiltin, packed_b: ir.Value, private) -> ir.Value:
    """A private `b_column_type` holding this lane's B[k], k = 0..K-1 (field k % per_word of word k / per_word),
    widened: once for every DPAS op that takes this B. `private(type)` makes a private variable. The words go to
    private memory and the widening is one rolled loop over k (ROLLED): unrolled, its K copies were a third of a
    flash attention's LLVM IR."""
    return widened_chain(b, mad, [packed_b], private)


def widened_chain(b: ir.IRBuilder, mad: DpasBuiltin, packed_bs: list[ir.Value], private) -> ir.Value:
    """A private array of this lane's B[k] of each of `packed_bs` one after another (widened_b), in one loop: a B's
    K elements are its K / per_word words, so element k of them all is field k % per_word of word k / per_word."""
    per_word = 32 // mad.bits
    words = [word for packed_b in packed_bs for word in _components(
        b, _as_words(b, packed_b), packed_b.type.count if isinstance(packed_b.type, ir.VectorType) else 1)]
    count = len(packed_bs) * mad.k
    assert len(words) * per_word == count, "a B's words hold its K elements"
    stored = private(ir.ArrayType(words[0].type, len(words)))
    column = private(ir.ArrayType(b_column_type(mad).element, count))
    for w, word in enumerate(words):
        b.store(word, b.gep(stored, [i32(0), i32(w)]))

    def step(b, k, _):
        word = b.load(b.gep(stored, [i32(0), b.udiv(k, i32(per_word))]))
        b.store(widen(b, field(b, word, b.urem(k, i32(per_word)), mad.bits), mad.b), b.gep(column, [i32(0), k]))
    counted_loop(b, count, None, step, ROLLED)
    return column


def dpas_results(b: ir.IRBuilder, mad: DpasBuiltin, a: ir.Value, products: list[tuple],
                 loops: KLoops = KLoops()) -> list[ir.Value]:
    """Lane n, for each (B, C) of `products` (DPAS ops that share A; B a lane's column, `widened_b`): d[r] = c[r] +
    A[r][k] * B[k][n] for k = 0..K-1 in order, as loops over k (`row_loops` of `loops.sums` sums): A[r][k] read from
    lane k once for all of them (k is the same on every lane), B[k] read from its column, the rows' sums carried in
    scalars.
    Unrolled, the OpenCL CPU compiler built K copies of the step, each shuffling A's elements from constant lanes:
    the tutorial GEMM f16 ran at 110-114 against 131-142 GFLOP/s and built in twice the time (docs/performance.md "CPU
    notes")."""
    column = _a_column(b, mad, _components(b, _as_words(b, a), mad.a_components), loops.read)
    return _column_products(b, mad, mad.k, lambda b, k, rows: column(k, rows), products, loops.sums)


def chained_results(b: ir.IRBuilder, mad: DpasBuiltin, a_words, chunks: int, products: list[tuple]) -> list[ir.Value]:
    """Lane n of chains of `chunks` DPAS ops each (op i + 1 taking op i's result as C), for each (B, C) of
    `products`: d[r] = c[r] + A[r][k] * B[k][n] for k = 0..chunks * K - 1 in order, the rounding of the chain op
    after op. Op i of every chain takes the same A (not tf32), whose `_lane_words` are the words i * a_components ..
    of `a_words` (the function `a_words()` gives: (index, lane) -> that lane's word); B is a private array of the chain's chunks * K
    widened elements (`widened_chain`). One loop over all of a chain's k, not one an op: the OpenCL CPU compiler's
    build of a flash attention is mostly its loops over k (docs/performance.md "Driver builds")."""
    def a_column(b, k, rows):  # op k / K's A words, element k % K
        chunk, within = b.udiv(k, i32(mad.k)), b.urem(k, i32(mad.k))
        first = b.mul(chunk, i32(mad.a_components))
        return _column_of(b, mad, lambda r, lane: a_words(b.add(first, i32(r)), lane))(within, rows)
    return _column_products(b, mad, chunks * mad.k, a_column, products)


def _column_products(b: ir.IRBuilder, mad: DpasBuiltin, count: int, a_column, products: list[tuple],
                     budget: int = CARRIED_SUMS) -> list[ir.Value]:
    """Lane n of each (B, C) of `products` after `count` steps over k of c[r] += A[r][k] * B[k][n] (`row_loops` of
    `budget` sums): `a_column(b, k, rows)` gives A[r][k] of the rows, once for every product; B[k] is element k of
    the product's private column."""
    mad_step = multiply_add(b, mad)

    def step(b, k, rows, sums):
        a_k, out = a_column(b, k, rows), []
        for (b_column, _), totals in zip(products, sums):
            b_k = b.load(b.gep(b_column, [i32(0), k]))
            out += [mad_step(a_r, b_k, total) for a_r, total in zip(a_k, totals)]
        return out

    sums = row_loops(b, count, [_components(b, acc, mad.m) for _, acc in products], step, budget)
    return [_rows_value(b, acc, rows) for (_, acc), rows in zip(products, sums)]


def a_words(b: ir.IRBuilder, mad: DpasBuiltin, chunks: list[ir.Value], private, read: str):
    """The `_lane_words` of each A of `chunks` (the DPAS builtin's A operands), one after another, `staged` for
    reads by `read` (KLoops.read) at an i32 index (chained_results); `private(type)` makes a private array."""
    words = [_lane_words(b, mad, _components(b, _as_words(b, a), mad.a_components)) for a in chunks]
    return staged(b, [w for chunk in words for w in chunk], read, private)


def row_loops(b: ir.IRBuilder, count: int, sums: list[list[ir.Value]], step,
              budget: int = CARRIED_SUMS) -> list[list[ir.Value]]:
    """The row sums of DPAS ops sharing A (`sums`: each op's C rows) after `count` steps over k, as one loop over k
    per group of rows (`row_groups` of `budget` sums; rolled up to ROLLED_UP_TO steps); `step(b, k, rows,
    group_sums)` gives the group's new sums, op after op."""
    sums = [list(rows) for rows in sums]
    for rows in row_groups(len(sums[0]), len(sums), budget):
        size = len(rows)

        def group_step(b, k, carried, rows=rows, size=size):
            return step(b, k, rows, [carried[j * size:(j + 1) * size] for j in range(len(sums))])
        carried = counted_loop(b, count, [totals[r] for totals in sums for r in rows], group_step, loop_hints(count))
        for j, totals in enumerate(sums):
            totals[rows.start:rows.stop] = carried[j * size:(j + 1) * size]
    return sums


def loop_hints(count: int) -> tuple:
    """The hints of a loop over `count` k: not to unroll up to ROLLED_UP_TO steps."""
    return ROLLED if count <= ROLLED_UP_TO else ()


def row_groups(m: int, ops: int, budget: int = CARRIED_SUMS) -> list[range]:
    """C's m rows in groups of at most budget // ops rows: each group's loop carries the sums of those rows of
    every op sharing A in the CPU's vector registers, and broadcasts each A[r][k] once for all the ops. A last group
    of fewer than half as many rows shares the rows of the one before (8 rows in 6 at a time: 4 and 4, not 6 and 2),
    whose loop would keep too few sums to hide the multiply-adds' latency."""
    size = max(1, min(m, budget // ops))
    groups = [range(first, min(first + size, m)) for first in range(0, m, size)]
    if len(groups) > 1 and len(groups[-1]) < size // 2:
        first, half = groups[-2].start, (size + len(groups[-1])) // 2
        groups[-2:] = [range(first, first + half), range(first + half, m)]
    return groups


def _rows_value(b: ir.IRBuilder, acc: ir.Value, sums: list[ir.Value]) -> ir.Value:
    """The rows' sums as the accumulator's type (a vector of M, or the scalar for M = 1)."""
    if len(sums) == 1:
        return sums[0]
    result = acc
    for r, value in enumerate(sums):
        result = b.insert_element(result, value, i32(r))
    return result
