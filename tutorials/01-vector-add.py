"""Tutorial 1: vector addition.

The smallest xetile kernel. A program instance is one workgroup; `program_id(0)` says which block of the
vector it owns: a 1-D tile of the 1-D array, loaded as a `vector<BLOCKxf32>`. The last block runs past the end of
the vector; loads pad the missing elements with 0 and stores drop them, so the kernel needs no bounds check.

Run: python tutorials/01-vector-add.py
"""
import time

import numpy as np

import xetile_jit as xetile


@xetile.kernel
def add(x, y, out, BLOCK: xetile.constexpr):
    start = xetile.program_id(0) * BLOCK
    tx = xetile.init_tile(x, [start], [BLOCK])
    ty = xetile.init_tile(y, [start], [BLOCK])
    xetile.store_tile(xetile.init_tile(out, [start], [BLOCK]), xetile.load_tile(tx) + xetile.load_tile(ty))


def vector_add(x: np.ndarray, y: np.ndarray, block: int = 1024) -> np.ndarray:
    out = np.empty_like(x)
    n = x.shape[0]
    add[(xetile.cdiv(n, block),)](x, y, out, BLOCK=block)
    return out


def main() -> None:
    rng = np.random.default_rng(0)
    n = 98_432  # not a multiple of the block
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    start = time.perf_counter()
    out = vector_add(x, y)
    elapsed = time.perf_counter() - start
    error = np.abs(out - (x + y)).max()
    print(f"device: {xetile.default_device()}")
    print(f"vector add of {n} floats: max |error| vs numpy = {error:.3g} ({elapsed * 1e3:.1f} ms, first call compiles)")
    if error != 0:
        raise SystemExit("FAILED: result differs from numpy")
    print("OK")


if __name__ == "__main__":
    main()
