"""The Xe builtins as GPU drivers provide them (codegen/xe/builtins.py's module docstring says which is which):

* ABI "spirv": a 2D block message is a small function around one SPV_INTEL_2d_block_io instruction, DPAS one around
  OpSubgroupMatrixMultiplyAccumulateINTEL (`SPIRV_DEFINITIONS`).
* ABI "legacy": a block message is a small function around IGC 2022's builtin for its shape, if any, or one
  inline-vISA `lsc_*_block2d` message; DPAS is an Import of IGC's name (`LEGACY_DEFINITIONS` has no "dpas").
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.cache_hints import CacheHints
from ..llvm.core import I8, I64, VOID
from . import builtins as X
from .llvm_helpers import declared, i32, vector

MATRIX_MULTIPLY = "__spirv_SubgroupMatrixMultiplyAccumulateINTEL"
CACHE_CONTROL = "__spirv_CacheControl"


# --- GPU, ABI "spirv": SPV_INTEL_2d_block_io ----------------------------------------------------------------
def _spirv_wrapper(b: ir.IRBuilder, fn: ir.Function, msg: X.Block2DBuiltin) -> None:
    """One SPV_INTEL_2d_block_io instruction: element size in bytes, block width, height and count (32-bit
    constants), the surface (real width, height and pitch), the coordinate, and a lane's data in private memory
    (a store's data is put there first)."""
    shape = [i32(msg.bits // 8), i32(msg.cols), i32(msg.rows), i32(msg.blocks)]
    base, *surface = fn.args[:5]
    if msg.cache:
        base = _cache_controlled(b, base, msg.cache)
    data = []
    if msg.kind == "load":
        data = [b.bitcast(fn.args[5], ir.PointerType(I8))]
    elif msg.kind == "store":
        source = b.alloca(msg.data_type)
        b.store(fn.args[5], source)
        data = [b.bitcast(source, ir.PointerType(I8))]
    operands = shape + (data + [base] if msg.kind == "store" else [base]) + surface + (
        data if msg.kind == "load" else [])
    op = declared(b.module, msg.spirv_op, ir.FunctionType(VOID, [v.type for v in operands]))
    b.call(op, operands)
    b.ret_void()


def _cache_controlled(b: ir.IRBuilder, base: ir.Value, cache: CacheHints) -> ir.Value:
    """`base` decorated with SPV_INTEL_cache_controls (levels 0 = L1 and 1 = L3), as the emitter's
    `__spirv_CacheControl{Load,Store}INTEL.<l1>_<l3>` makes it."""
    kind = "Load" if cache.kind == "load" else "Store"
    name = f"{CACHE_CONTROL}{kind}INTEL." + "_".join(map(str, cache.spirv_controls))
    return b.call(declared(b.module, name, ir.FunctionType(base.type, [base.type])), [base])


def _spirv_dpas(b: ir.IRBuilder, fn: ir.Function, mad: X.DpasBuiltin) -> None:
    """OpSubgroupMatrixMultiplyAccumulateINTEL: K, A, B, C and the operand mask of the dtypes."""
    operands = [i32(mad.k), *fn.args, i32(mad.operands_mask)]
    overload = f"{MATRIX_MULTIPLY}.{mad.a}_{mad.b}_m{mad.m}"  # one LLVM signature per name
    op = declared(b.module, overload, ir.FunctionType(fn.function_type.return_type, [v.type for v in operands]))
    b.ret(b.call(op, operands))


# --- GPU, ABI "legacy": IGC 2022 imports and inline vISA -----------------------------------------------------
def _legacy_wrapper(b: ir.IRBuilder, fn: ir.Function, msg: X.Block2DBuiltin) -> None:
    """A load calls IGC's builtin when it has one, else one inline-vISA message, and stores the lane's vector at
    `dst`; stores and prefetches are one inline-vISA message."""
    if msg.kind != "load":
        _visa_message(b, fn.args[:5], msg, list(fn.args[5:]))
        b.ret_void()
        return
    lane_data = vector(msg.lane_type, msg.components)
    if msg.igc_name:
        value = b.call(declared(b.module, msg.igc_name, ir.FunctionType(lane_data, X.SURFACE_ARGS)), fn.args[:5])
    else:
        value = _visa_message(b, fn.args[:5], msg, [])
    b.store(value, b.bitcast(fn.args[5], ir.PointerType(lane_data)))
    b.ret_void()


def _visa_message(b: ir.IRBuilder, surface, msg: X.Block2DBuiltin, data: list) -> ir.Value:
    """One `lsc_*_block2d` message (a load's result); vISA takes the base as u64 and width, height and pitch minus
    one. The address operands are uniform (`rw.u`), the data operand per lane (`rw`)."""
    base, width, height, pitch, coord = surface
    address = [b.ptrtoint(base, I64), b.sub(width, i32(1)), b.sub(height, i32(1)), b.sub(pitch, i32(1)),
               b.extract_element(coord, i32(0)), b.extract_element(coord, i32(1))]
    uniform = ["rw.u"] * len(address)
    if msg.kind == "load":
        asm = ir.InlineAsm(ir.FunctionType(vector(msg.lane_type, msg.components), [a.type for a in address]),
                           msg.visa, ",".join(["=rw", *uniform]))
        return b.call(asm, address)
    asm = ir.InlineAsm(ir.FunctionType(VOID, [a.type for a in data + address]), msg.visa,
                       ",".join(["rw"] * len(data) + uniform), side_effect=True)
    return b.call(asm, data + address)


SPIRV_DEFINITIONS: X.Definitions = {"dpas": _spirv_dpas, "load": _spirv_wrapper, "store": _spirv_wrapper,
                                    "prefetch": _spirv_wrapper}
LEGACY_DEFINITIONS: X.Definitions = {"load": _legacy_wrapper, "store": _legacy_wrapper, "prefetch": _legacy_wrapper}
