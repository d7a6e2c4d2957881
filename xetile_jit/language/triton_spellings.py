"""Triton's names for what the language spells otherwise: what to write instead of `tl.sum`, `tl.dot`, ..., for the
error a kernel ported from Triton meets (compiler/tracer.py) and for `xetile.sum` outside a kernel (the package's
`__getattr__`). A near name (`did_you_mean`) misleads there: `sum` is nearest `cumsum`, `max` nearest `fma`."""
from __future__ import annotations

import re

HINT = ("a hint for Triton's analysis of pointer offsets; a tile's type carries what it says here, so drop it (a "
        "block tile, init_tile(x, [r, c], [M, N]), is the contiguous spelling)")

TRITON_SPELLINGS = {
    "sum": 'xetile.tile_reduce("add", x, [axis])',
    "max": 'xetile.tile_reduce("max", x, [axis]) for a reduction, xetile.maximum(a, b) element by element',
    "min": 'xetile.tile_reduce("min", x, [axis]) for a reduction, xetile.minimum(a, b) element by element',
    "argmax": 'xetile.tile_reduce("argmax", x, [axis])',
    "argmin": 'xetile.tile_reduce("argmin", x, [axis])',
    "xor_sum": 'xetile.tile_reduce("xor", x, [axis])',
    "cumprod": 'xetile.tile_scan("mul", x, axis)',
    "dot": "xetile.tile_mma(a, b, acc)",
    "trans": "xetile.tile_transpose(x, [1, 0]) or x.T",
    "permute": "xetile.tile_transpose(x, [1, 0]) or x.T",
    "view": "xetile.reshape(x, shape)",
    "ravel": "xetile.reshape(x, [n])",
    "broadcast": "xetile.broadcast_to(x, shape)",
    "zeros_like": "xetile.zeros(x.shape, x.dtype)",
    "clamp": "xetile.minimum(xetile.maximum(x, lo), hi)",
    "softmax": 'e = xetile.exp(x - xetile.tile_reduce("max", x, [1])), then e / xetile.tile_reduce("add", e, [1])',
    "div_rn": "a / b (true division, rounded to nearest)",
    "fdiv": "a / b (true division, rounded to nearest)",
    "sqrt_rn": "xetile.sqrt(x)",
    "debug_barrier": "xetile.barrier()",
    "make_block_ptr": "xetile.init_tile(x, offsets, shape, order=...), a tile of the block",
    "advance": "xetile.update_tile_offset(tile, offsets)",
    "range": "Python's range(...) (one loop) or xetile.static_range(...) (unrolled while tracing)",
    "math": "the functions themselves: xetile.exp, xetile.log, xetile.sqrt, xetile.erf, ... (no math namespace)",
    "int1": "xetile.bool",
    "gather": "no gather across a vector's lanes; from memory, xetile.load(x + indices)",
    "umulhi": "the high half of the product in 64 bits: ((a.to(xetile.uint64) * b) >> 32).to(xetile.uint32)",
    "swizzle2d": "the grouped order written out with program_id, // and %",
    "histogram": "xetile.atomic_add(counts + values, 1) (a count per value, atomically)",
    "multiple_of": HINT,
    "max_contiguous": HINT,
    "max_constancy": HINT,
    "assume": HINT,
}


# Triton's keyword arguments of tl.dot, the atomics and .to(), which the language's functions do not take
TRITON_KEYWORDS = {
    "allow_tf32": "input_precision=\"tf32\" for allow_tf32=True; the default, \"ieee\", for False",
    "out_dtype": "tile_mma accumulates f16, bf16 and f32 in f32 and 8-bit integers in int32: convert its result "
                 "with .to(dtype)",
    "max_num_imprecise_acc": "tile_mma accumulates every product in f32: drop it",
    "sem": "every atomic is sequentially consistent, stronger than any sem: drop it",
    "scope": "every atomic is seen by the whole device: drop it",
    "fp_downcast_rounding": "a conversion rounds to nearest even: drop it",
}
UNEXPECTED_KEYWORD = re.compile(r"got an unexpected keyword argument '(\w+)'")


def triton_keyword(message: str) -> str:
    """" (NAME= is Triton's; here: ...)" for a Python TypeError's `message` about a Triton keyword, else ""."""
    found = UNEXPECTED_KEYWORD.search(message)
    spelling = TRITON_KEYWORDS.get(found.group(1)) if found else None
    return f" ({found.group(1)}= is Triton's; here: {spelling})" if spelling else ""


def triton_spelling(name: str) -> str:
    """" (tl.NAME is Triton's; here: ...)" for a Triton name the language spells otherwise, else ""."""
    spelling = TRITON_SPELLINGS.get(name)
    return f" (tl.{name} is Triton's; here: {spelling})" if spelling else ""
