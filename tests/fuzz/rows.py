"""Row kernels for the differential fuzzer: the softmax and layer-norm shape, which gen.py's small tiles never reach.

A row kernel loads a wide tile (a subgroup holds 16 blocks of a row or more), computes on it element-wise, reduces
its rows, broadcasts a row result back, combines, reduces again and stores the tile and the row results. On the
`cpu` target such runs of block ops are loops over the blocks (codegen/cpu/block_loops.py: folds in chains,
one bounds test before two loops, ops deferred past a loop); on `xe-emulated` the pieces of rows the blocks do not
divide pad their reductions with the kind's identity. Arrays are row-major, mostly with 16-byte pitches (the 2D
block rules), so that the block paths run on both CPU targets, inside and across the arrays' edges, and some with
odd widths and pitches, which only the `cpu` target's block builtins take (BlockIO.any_layout); some rows are
split over subgroups (the exchange through shared local memory). Half the batches read the stored tile back right
after its store (RowGen.reread: the loops over the blocks keep program order). Each batch holds one case: a wide tile
builds for long on `xe-emulated`.
"""
from __future__ import annotations

import numpy as np

from .gen import LITERALS, REDUCE_KINDS, TOLERANCE, Array, Batch, Expr, Gen, fusion, kind

ROWS = (1, 2, 4, 8, 16)
WIDTHS = (256, 272, 320, 512, 1024)   # 272, 320: rows of 17 and 20 blocks, or pieces the blocks do not divide
DTYPES = ["float32", "float32", "float16", "bfloat16", "int32", "int8"]
# a row result `{b}` (broadcast over the row) combined with the tile `{v}`
COMBINE = {"f": ["({v} - {b})", "({v} * {b})", "xetile.exp(xetile.minimum({v} - {b}, 4.0))",
                 "xetile.where({v} > {b}, {v}, {b})", "({v} / (xetile.abs({b}) + 1.0))"],
           "i": ["({v} - {b})", "({v} ^ {b})", "xetile.where({v} > {b}, {v}, {b})", "xetile.maximum({v}, {b})"]}
SUM_ERROR = 8   # float sums reorder between levels: the tolerance in roundings of the dtype
REREAD = 0.5    # the share of batches that read their stored tile back (RowGen.reread)


class RowGen(Gen):
    """Gen drawing row-major arrays, mostly with 16-byte pitches, whose extents stay near the tile's."""

    def extent(self, tile: int) -> int:
        return max(1, tile + int(self.pick([0, 0, 16, -16, 1, -self.rng.integers(0, tile)])))

    def offset(self, extent: int, size: int) -> int:
        """Where a tile starts: at the origin, inside, across the far edge, before the origin or past the end."""
        return int(self.pick([0, 0, self.rng.integers(0, max(1, extent - size + 1)),
                              extent - size + self.rng.integers(-1, 17), -self.rng.integers(1, 17), extent]))

    store_offset = offset   # output tiles sit where input tiles do

    def array(self, stem: str, shape, dtype: str, fill: str = "small", col_major: bool | None = None, lead=(),
              step: int = 1) -> str:
        name = self.fresh(stem)
        rows, cols = shape
        odd = self.chance(0.25)
        self.case.args.append(Array(name, (rows, cols if odd else -(-cols // 16) * 16), dtype,
                                    int(self.rng.integers(2**31)), pitch=int(self.pick([1, 5] if odd else [0, 0, 16])),
                                    fill=fill, lead=tuple(lead), step=step))
        return name

    def rows(self) -> None:
        dtype = self.pick(DTYPES)
        k = kind(dtype)
        shape = self.shape = (self.pick(ROWS), self.pick(WIDTHS))
        kinds = [r for r in REDUCE_KINDS[k] if r != "mul"]
        first, second = self.pick(kinds), self.pick(kinds)
        reorders = k == "f" and "add" in (first, second)
        # NaN, infinities and overflow only where no sum is: inf + -inf is NaN or not by the order of the terms
        special = k == "f" and not reorders and self.chance(0.5)
        extent = (self.extent(shape[0]), self.extent(shape[1]))
        src = self.array("x", extent, dtype, fill="special" if special else "small")
        pads = [""] + [f", padding={value}" for value in LITERALS[k][:2]] + ([", padding=float('-inf')"] * (k == "f"))
        expr = Expr(self, shape)
        expr.inputs[dtype] = [self.load(src, extent, shape, pad=self.pick(pads))]
        tree, _, ops = expr.tree(dtype, int(self.rng.integers(0, 3)))
        v = self.fresh("t")
        self.case.lines.append(f"{v} = {tree}")
        combined = self.fresh("e")
        broadcast = f"xetile.tile_broadcast(xetile.tile_reduce({first!r}, {v}, [1]), [1], {list(shape)})"
        self.case.lines.append(f"{combined} = {self.pick(COMBINE[k]).format(v=v, b=broadcast)}")
        tol = TOLERANCE[dtype] * (ops + 3) * (SUM_ERROR if reorders else 1) if k == "f" else 0.0
        self.stored = (dtype, *self.store(dtype, shape, combined, (tol, reorders)), (tol, reorders),
                       len(self.case.lines))
        self.store(dtype, (shape[0], 1), f"xetile.tile_reduce({second!r}, {combined}, [1])", (tol, reorders))

    def reread(self, split: int) -> None:
        """Reads the stored tile back right after its store, in place or some columns on, and stores that into
        another array: a row read after the store that wrote it (codegen/cpu/block_loops.py keeps their order).
        Columns on only where one subgroup holds the row (split 1): no other subgroup wrote what it reads, and the
        workgroups' rows are apart."""
        dtype, out, offsets, tol, after = self.stored
        shift = self.pick([0, 1, 16, -16, 32]) if split == 1 else 0
        w = self.fresh("w")
        tile = f"xetile.init_tile({out}, [{offsets[0]}, {offsets[1]} + {shift}], {list(self.shape)})"
        lines, self.case.lines = self.case.lines, []
        self.store(dtype, self.shape, w, tol)
        self.case.lines = lines[:after] + [f"{w} = xetile.load_tile({tile})"] + self.case.lines + lines[after:]


def batch(seed: int, index: int) -> Batch:
    """Row batch `index` of the run with `seed` (a stream of its own, apart from gen.batch's)."""
    rng = np.random.default_rng([seed, index, 1])
    grid = (int(rng.choice([1, 2, 3])), 1)
    gen = RowGen(rng, 1, None, grid)
    case = gen.make(0, "rows")
    rows, width = gen.shape
    split = int(rng.choice([1, 1, 2, 4]))
    options = {"sg_layout": [rows, split], "sg_data": [1, width // split]} if split > 1 and width % split == 0 else {}
    math = fusion(rng)
    gen.rng = np.random.default_rng([seed, index, 2])  # a stream of its own: the draws above stay the seed's
    if gen.chance(REREAD):
        gen.reread(split if options else 1)
    return Batch(f"fuzz_rows_{seed}_{index}", [case], grid, options | math)
