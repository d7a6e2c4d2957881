"""Triton's names for what the language spells otherwise: what to write instead of `tl.sum`, `tl.dot`, ..., for the
error a kernel ported from Triton meets (compiler/tracer.py) and for `xetile.sum` outside a kernel (the package's
`__getattr__`). A near name (`did_you_mean`) misleads there: `sum` is nearest `cumsum`, `max` nearest `fma`."""
from __future__ import annotations

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
    "multiple_of": HINT,
    "max_contiguous": HINT,
    "max_constancy": HINT,
    "assume": HINT,
}


def triton_spelling(name: str) -> str:
    """" (tl.NAME is Triton's; here: ...)" for a Triton name the language spells otherwise, else ""."""
    spelling = TRITON_SPELLINGS.get(name)
    return f" (tl.{name} is Triton's; here: {spelling})" if spelling else ""
