"""Tutorial 6: fused attention (flash-attention forward).

O = softmax(Q K^T * scale) V for (batch, heads, seq, head_dim) arrays, causal or not, without ever writing the
seq x seq scores: a workgroup takes BM query rows of one head and walks the keys in blocks of BN, keeping the running
row maximum `m_i`, the running row sum `l_i` and the unnormalized output `acc` (the online softmax): for each block,

    s = Q K_blk^T * scale * log2(e) (masked: keys past seq, and in causal attention keys after the query)
    m_new = max(m_i, rowmax(s));  p = exp2(s - m_new);  alpha = exp2(m_i - m_new)
    l_i = l_i * alpha + rowsum(p);  acc = acc * alpha + p V_blk;  m_i = m_new

and O = acc / l_i at the end. exp(x) is exp2(x * log2(e)), and the factor log2(e) goes into the scale, once: the
scores are in base 2 from the start, so each exponential is one exp2 and no multiply (as the fastest flash-attention
kernels do). With `fast_math=True` the exp2s and the final division take their approximate forms and the
multiply-adds of l_i and acc become FMAs (docs/guide.md "Fast math"). The arrays are 4-D:
`init_tile(q, [b, h, m, 0], [BM, D])` takes the batch and head as leading offsets (one per array dim), and a tile
never reads past its head's matrix. The two `tile_mma`s have layouts of their own (`layout=`): both split the query
rows over the subgroups, so each subgroup's row maxima and sums stay inside it, and S (BM x BN) and O (BM x D) are
cut differently. The masks come from `arange`: key columns `n + arange(0, BN)` against `seq` and against the query
rows `m + arange(0, BM)`.

Run: python tutorials/06-fused-attention.py
"""
import math
import time

import numpy as np

import xetile_jit as xetile
from xetile_jit import Layout

SUBGROUPS = 4
# The largest relative errors of the approximate exp2 and division on the OpenCL CPU runtime (docs/guide.md "Fast
# math"): with fast_math an output may differ by twice the first (p and l_i) and the second more
FAST_MATH_ERROR = 2 * 1.5e-4 + 3.2e-4


@xetile.kernel
def attention_kernel(q, k, v, o, seq, scale, causal, BM: xetile.constexpr,
                     BN: xetile.constexpr, D: xetile.constexpr, LS: xetile.constexpr, LO: xetile.constexpr):
    m = xetile.program_id(0) * BM
    h = xetile.program_id(1)
    b = xetile.program_id(2)
    queries = xetile.load_tile(xetile.init_tile(q, [b, h, m, 0], [BM, D]))
    tk = xetile.init_tile(k, [b, h, 0, 0], [BN, D])
    tv = xetile.init_tile(v, [b, h, 0, 0], [BN, D])
    rows = xetile.broadcast_to(xetile.expand_dims(m + xetile.arange(0, BM), 1), [BM, BN])
    m_i = xetile.full([BM, 1], float("-inf"), xetile.float32)
    l_i = xetile.zeros([BM, 1], xetile.float32)
    acc = xetile.zeros([BM, D], xetile.float32)
    # `causal` is a runtime 0 or 1, not a constexpr: one compiled kernel serves both kinds of attention (each
    # constexpr value is a driver build of its own, 1-2 s on a CPU). Not causal, `reach` moves the causal bounds
    # (the loop's end, the keys a query sees) past the last key.
    reach = (1 - causal) * seq
    end = min(seq, m + BM + reach)
    for n in range(0, end, BN):
        s = xetile.tile_mma(queries, xetile.tile_transpose(xetile.load_tile(tk)), layout=LS) * scale
        cols = xetile.broadcast_to(n + xetile.arange(0, BN), [BM, BN])
        keep = (cols <= rows + reach) & (cols < seq)
        s = xetile.where(keep, s, float("-inf"))
        m_new = xetile.maximum(m_i, xetile.tile_reduce("max", s, [1]))
        p = xetile.exp2(s - xetile.tile_broadcast(m_new, [1], [BM, BN]))
        alpha = xetile.exp2(m_i - m_new)
        l_i = l_i * alpha + xetile.tile_reduce("add", p, [1])
        pv = xetile.tile_mma(p.to(xetile.float16), xetile.load_tile(tv), layout=LO)
        acc = acc * xetile.tile_broadcast(alpha, [1], [BM, D]) + pv
        m_i = m_new
        tk = xetile.update_tile_offset(tk, [BN, 0])
        tv = xetile.update_tile_offset(tv, [BN, 0])
    xetile.store_tile(xetile.init_tile(o, [b, h, m, 0], [BM, D]), acc / xetile.tile_broadcast(l_i, [1], [BM, D]))


def attention(q, k, v, causal: bool = False, bm: int = 32, bn: int | None = None, device=None,
              fast_math: bool = False) -> np.ndarray:
    """softmax(q k^T / sqrt(head_dim)) v per (batch, head), f16 in and out; q, k, v are (batch, heads, seq, dim).
    `bn`, the keys a step: by default the target's (key_block)."""
    batch, heads, seq, _ = q.shape
    o = np.zeros_like(q)
    bn = bn or key_block(xetile.default_target(device, (q,)))
    args, options = launch_arguments(q, k, v, o, causal, bm, bn, fast_math)
    attention_kernel[(xetile.cdiv(seq, bm), heads, batch)](*args, **options, device=device)
    return o


def key_block(target: str) -> int:
    """The keys a step on `target`. 32 on a GPU: Intel's compiler gives the head-dim-128 main loop 599 instructions
    besides its 32 DPAS for 32 keys, 476 besides 16 DPAS for 16 keys, so 16 would cost 1.6x the instructions a key.
    16 on the CPU targets: there attention ran 1.1-1.3x as fast with 16 (head dims 64 and 128, causal and not) and
    the head-dim-128 kernel's driver build took about a second less (docs/performance.md "On the AVX2 EPYC")."""
    return 16 if target in ("cpu", "xe-emulated") else 32


def launch_arguments(q, k, v, o, causal: bool, bm: int, bn: int, fast_math: bool = False) -> tuple[tuple, dict]:
    seq, dim = q.shape[2:]
    rows = [SUBGROUPS, 1]  # query rows over the subgroups: row maxima and sums stay inside each
    layouts = dict(LS=Layout(rows, [bm // SUBGROUPS, bn]), LO=Layout(rows, [bm // SUBGROUPS, dim]))
    scale = math.log2(math.e) / math.sqrt(dim)  # the softmax's scale in base 2
    return (q, k, v, o, seq, scale, int(causal)), dict(BM=bm, BN=bn, D=dim, fast_math=fast_math, **layouts)


def reference(q, k, v, causal: bool) -> np.ndarray:
    q, k, v = (x.astype(np.float32) for x in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
    if causal:
        seq = q.shape[2]
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


def inputs(batch: int, heads: int, seq: int, dim: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((batch, heads, seq, dim), dtype=np.float32).astype(np.float16) for _ in range(3)]


def check(batch: int, heads: int, seq: int, dim: int, causal: bool, fast_math: bool = False) -> bool:
    q, k, v = inputs(batch, heads, seq, dim)
    attention(q, k, v, causal, fast_math=fast_math)  # compile once
    start = time.perf_counter()
    o = attention(q, k, v, causal, fast_math=fast_math)
    elapsed = time.perf_counter() - start
    expected = reference(q, k, v, causal)
    error = np.abs(o.astype(np.float32) - expected).max()
    flops = 4 * batch * heads * seq * seq * dim // (2 if causal else 1)
    ok = error < 1e-2 + (FAST_MATH_ERROR * np.abs(expected).max() if fast_math else 0)
    print(f"{batch:>5} {heads:>5} {seq:>5} {dim:>4} {'yes' if causal else 'no':>6} {'yes' if fast_math else 'no':>4}  "
          f"{error:>9.2e}  "
          f"{elapsed * 1e3:>8.1f}  {flops / elapsed / 1e9:>7.2f}  {'ok' if ok else 'FAILED'}")
    return ok


def main() -> None:
    print(f"device: {xetile.default_device()}")
    print(f"{'batch':>5} {'heads':>5} {'seq':>5} {'dim':>4} {'causal':>6} {'fast':>4}  {'max.error':>9}  {'ms':>8}  "
          f"{'GFLOP/s':>7}")
    shapes = [(2, 2, 128, 64, False), (1, 2, 1000, 64, True), (1, 1, 200, 128, False), (2, 1, 77, 128, True)]
    results = [check(*shape, fast_math=fast_math) for fast_math in (False, True) for shape in shapes]
    if not all(results):
        raise SystemExit("FAILED: result differs from numpy")
    q = np.zeros((1, 2, 1000, 64), np.float16)
    args, options = launch_arguments(q, q, q, q, True, 32, 32)
    print(xetile.testing.gpu_code_stats(attention_kernel, *args, **options))
    print("OK: every result matches numpy")


if __name__ == "__main__":
    main()
