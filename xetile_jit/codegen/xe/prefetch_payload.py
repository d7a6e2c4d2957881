"""2D block prefetches whose message payload is built once per kernel, not once per prefetch (ABI "spirv").

A 2D block message's payload is one register: base address, width - 1, height - 1, pitch - 1, x, y and the block
shape. Intel's compiler keeps a *load*'s payload loop-invariant itself: its Decompose2DBlockFuncs pass splits a 2D
block read in a loop into the payload, made before the loop, a store of the changing coordinate into it and the
read from it. It leaves prefetches whole ("performance drops", its comment says), so a prefetch in a loop rebuilt
its whole payload each iteration: the tutorial GEMM with prefetch_distance=2 had 48 other (non-dpas, non-send)
instructions per K step on xe-hpc, 40 on xe2 and xe3, against 15 without prefetches.

Here a prefetch is that split, made with the compiler's own address-payload builtins (declared, resolved by name):
`__builtin_IB_subgroup_createBlock2DAddressPayload` in the kernel's entry block, where the surface is (the
arrays are kernel arguments), then at the prefetch `..._setBlock2DAddressPayloadBlock{X,Y}` and
`__builtin_IB_subgroup_block_read_ap_prefetch_u<bits>_m<rows>k<cols>v<blocks>` with the L1/L3 cache control (the
compiler's LSC_L1_L3_CC enumerant). Each prefetch has its own payload, so a coordinate that does not change in the
loop is one mov. A surface computed in the kernel (a slice of a batched array, a tile that may come from several
arrays) keeps the SPIR-V prefetch instruction (codegen/xe/builtins.py), as do the other ABIs.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.cache_hints import CacheHints, locality_hints
from ..llvm.core import I32, I64, VOID
from . import builtins as X
from .llvm_helpers import declared, i32

PAYLOAD = ir.PointerType(I32)  # the compiler's handle of a payload: a private i32 pointer
CREATE = "__builtin_IB_subgroup_createBlock2DAddressPayload"
SET_COORD = tuple(f"__builtin_IB_subgroup_setBlock2DAddressPayloadBlock{axis}" for axis in "XY")  # x, y
# LSC_L1_L3_CC: a load's (L1, L3) controls as the address-payload builtins take them (ir/cache_hints.LOAD_PAIRS)
CACHE_CONTROL = {("uncached", "uncached"): 1, ("uncached", "cached"): 2, ("cached", "uncached"): 3,
                 ("cached", "cached"): 4, ("streaming", "uncached"): 5, ("streaming", "cached"): 6,
                 ("read_invalidate", "cached"): 7}
# the block shapes the builtin names spell (rows m, columns k, blocks v)
ROWS, COLS, BLOCKS = (1, 2, 4, 8, 16, 32), (1, 2, 4, 8, 16, 32, 64, 128, 256), (1, 2, 4)


def prefetch_name(key: X.BlockPrefetch) -> str:
    return f"__builtin_IB_subgroup_block_read_ap_prefetch_u{key.bits}_m{key.rows}k{key.cols}v{key.blocks}"


def applies(descriptors, key: X.BlockPrefetch, tdesc) -> bool:
    """Whether the prefetch of `tdesc` goes through a payload: an ABI with `prefetch_payloads` (a GPU target's
    "spirv"), a shape the builtins spell, one array whose surface is the kernel's arguments (so the entry block has
    it)."""
    context = descriptors.context
    if not context.target.abi.prefetch_payloads:
        return False
    if key.rows not in ROWS or key.cols not in COLS or key.blocks not in BLOCKS:
        return False
    arrays = descriptors.bases[tdesc]
    if len(arrays) != 1 or descriptors.has_rows(tdesc) is not None:
        return False
    m = context.values[next(iter(arrays))]
    return all(isinstance(v, (ir.Argument, ir.Constant)) for v in (m.pointer, m.rows, m.cols, m.row_stride))


def prefetch(descriptors, key: X.BlockPrefetch, tdesc, cache: CacheHints | None) -> None:
    """The payload made in the entry block, the coordinates set here, the prefetch (hints: L1 and L3 cached
    unless given, as codegen/xe/builtins.py's `builtin`)."""
    b = descriptors.context.builder
    module = descriptors.context.module
    with b.goto_entry_block():
        base, width, height, pitch = descriptors.surface(tdesc)
        less = [b.sub(v, i32(1)) for v in (width, height, pitch)]
        create = declared(module, CREATE, ir.FunctionType(PAYLOAD, [I64] + [I32] * 8))
        payload = b.call(create, [b.ptrtoint(base, I64), *less, i32(0), i32(0),
                                  i32(key.cols), i32(key.rows), i32(key.blocks)])
    for axis, name in enumerate(SET_COORD):
        setter = declared(module, name, ir.FunctionType(VOID, [PAYLOAD, I32]))
        b.call(setter, [payload, descriptors.block_coord(tdesc, axis, hint=True)])
    hints = cache or locality_hints(3)
    fn = declared(module, prefetch_name(key), ir.FunctionType(VOID, [PAYLOAD] + [I32] * 3))
    b.call(fn, [payload, i32(0), i32(0), i32(CACHE_CONTROL[hints.l1, hints.l3])])
