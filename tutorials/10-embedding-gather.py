"""Tutorial 10: embedding lookup, a gather of table rows by index.

`out[t, :] = table[ids[t], :]`, as an embedding layer (or a paged KV cache reading its pages) does. A block tile
cannot express it: its rows are not consecutive. A `#scatter` tile (XeTile RFC "load_gather and store_scatter")
gives each element its own offset into the table instead; with `chunk_size` each offset reads that many
consecutive elements (XeGPU RFC `chunk_size`), so one offset per token, `ids[t] * D + c0`, reads a piece of its row.

Each workgroup takes BT tokens and C columns. Tokens equal to PAD_ID read zeros, through the mask (PyTorch's
`padding_idx`); ids outside the table read zeros too: every element is bounds-checked against the table.

Run: python tutorials/10-embedding-gather.py
"""
import numpy as np

import xetile_jit as xetile


@xetile.kernel
def embedding_kernel(table, ids, out, D, PAD_ID: xetile.constexpr, BT: xetile.constexpr, C: xetile.constexpr):
    t0 = xetile.program_id(0) * BT
    c0 = xetile.program_id(1) * C
    ids_row = xetile.load_tile(xetile.init_tile(ids, [0, t0], [1, BT]), padding=PAD_ID)
    rows = xetile.tile_transpose(ids_row)  # [BT, 1]: one offset per token
    tile = xetile.init_tile(table, indices=rows * D + c0, chunk_size=C)  # [BT, C]: C elements from each offset
    xetile.store_tile(xetile.init_tile(out, [t0, c0], [BT, C]), xetile.load_gather(tile, rows != PAD_ID))


def embedding(table, ids, out, pad_id: int = -1, block_tokens: int = 64, chunk: int = 64):
    """table: [V, D]; ids: [1, T] int32; out: [T, D], receives the rows of `ids` (zeros for pad_id). numpy arrays,
    or USM arrays (dpctl, dpnp) on one queue."""
    tokens, dim = ids.shape[1], table.shape[1]
    grid = (xetile.cdiv(tokens, block_tokens), xetile.cdiv(dim, chunk))
    embedding_kernel[grid](table, ids, out, dim, PAD_ID=pad_id, BT=block_tokens, C=chunk)
    return out


def bench(table: np.ndarray, ids: np.ndarray) -> float:
    """ms per lookup on the default device: arrays already there (USM on a profiling queue: the kernel's own
    time), or the numpy interpreter's wall time."""
    device = xetile.default_device()
    out = np.empty((ids.shape[1], table.shape[1]), table.dtype)
    if device == "numpy":
        return xetile.testing.do_bench(lambda: embedding(table, ids, out), warmup=1, rep=20)
    import dpctl
    import dpnp
    queue = dpctl.SyclQueue(device, property="enable_profiling")
    on_device = [dpnp.asarray(a, sycl_queue=queue) for a in (table, ids, out)]
    return xetile.testing.do_bench(lambda: embedding(*on_device), warmup=5, rep=50)


def reference(table: np.ndarray, ids: np.ndarray, pad_id: int = -1) -> np.ndarray:
    keep = (ids != pad_id) & (ids >= 0) & (ids < table.shape[0])
    return np.where(keep[:, None], table[np.clip(ids, 0, table.shape[0] - 1)], 0).astype(table.dtype)


def main() -> None:
    rng = np.random.default_rng(0)
    vocab, dim, tokens = 32_000, 256, 4_096
    table = rng.standard_normal((vocab, dim), dtype=np.float32)
    ids = rng.integers(0, vocab, (1, tokens)).astype(np.int32)
    ids[0, ::17] = -1  # padding tokens
    out = embedding(table, ids, np.empty((tokens, dim), table.dtype))
    if not np.array_equal(out, reference(table, ids[0])):
        raise SystemExit("FAILED: result differs from numpy")
    print(f"device: {xetile.default_device()}")
    ms = bench(table, ids)
    moved = 2 * tokens * dim * table.itemsize  # rows read and written
    print(f"embedding gather of {tokens} rows of {dim} floats from a {vocab}-row table: {ms:.3f} ms "
          f"({moved / ms / 1e6:.2f} GB/s, {ms.clock} clock)")
    print(xetile.testing.gpu_code_stats(embedding_kernel, table, ids, out, dim, PAD_ID=-1, BT=64, C=64))
    print("OK")


if __name__ == "__main__":
    main()
