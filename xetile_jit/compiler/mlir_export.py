"""The workgroup-level XeGPU IR in the syntax upstream MLIR (23) parses and verifies, for its XeGPU pipeline
(`mlir-opt --gpu-lower-to-xevm-pipeline="xegpu-op-level=workgroup ..."`): `export_mlir(func, arrays, size)`.

Our RFC syntax differs from upstream's where upstream moved on: upstream takes the block offsets as operands of
load_nd/store_nd/prefetch_nd and has no update_nd_offset, so a descriptor here is created once on its memref and
its offsets travel as index values (scf.for iter_args where the RFC carries the descriptor); upstream reads the
layouts only where they sit on the anchor ops (`layout` on loads, stores and prefetches, `layout_a`/`layout_b`/
`layout_cd` on dpas), propagates from there, and takes `layout_result_N` on the ops printed as they are (arith,
math) where its propagation finds none (a relu after the GEMM loop); layout conversions that keep the subgroup
split print nothing. An SLM buffer is workgroup memory (address space 3) seen as upstream's `xegpu.mem_desc`,
its blocks read and written by load_matrix and store_matrix. An atomic_rmw, which takes no offsets upstream,
works on a descriptor of a subview at its block's place, masked to the array. A tf32 dpas takes its operands
truncated to tf32; an 8-bit one takes B as the 8-bit matrix. Cache hints are left out. The kernel is a `gpu.func`
with its workgroup size in a `gpu.module`, and every memref argument has the launch's static shape and strides. An
op upstream has no form for raises NotImplementedError naming it.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..ir.attrs import Layout
from ..ir.core import FuncOp, Operation, Value
from ..ir.core_ops import (ConstantOp, ForOp, IotaOp, ProgramIdOp, ReturnOp, SlmAllocOp, SplatOp, YieldOp,
                           format_scalar)
from ..ir.elementwise import ATOMIC_KINDS
from ..ir.printer import Printer
from ..ir.types import DType, MemRefType, VectorType, bool_, index_dtype
from ..ir.xegpu_ops import (AtomicRMWOp, CreateNdDescOp, DpasOp, LoadNdOp, MemRefSubviewOp, MultiReductionOp,
                            PrefetchNdOp, StoreNdOp, TensorDescType, UpdateNdOffsetOp, VectorBroadcastOp,
                            VectorTransposeOp, XeGPUConvertLayoutOp)

ANCHOR_FIELDS = ("sg_layout", "sg_data", "inst_data")  # what upstream reads at the workgroup level
PRINTED_AS_IS = ("arith.", "math.", "gpu.barrier")  # ops our printer writes as upstream does
REDUCTION_START = {"add": 0, "mul": 1, "maxnumf": -math.inf, "minnumf": math.inf}  # upstream's accumulator


@dataclass(frozen=True)
class ArrayShape:
    """A memref argument's launch shape and strides, in elements."""
    shape: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass(frozen=True)
class Block:
    """A descriptor at the upstream level: the created descriptor's name (None where only atomics use it, which
    make their own), the names of its index offsets and the memref it is on; for a block of an SLM buffer, `matrix`
    is the type of the buffer's `xegpu.mem_desc` (named `desc`), which upstream reads and writes with load_matrix
    and store_matrix."""
    desc: str | None
    offsets: tuple[str, ...]
    base: Value
    matrix: str | None = None


def anchor_layout(layout: Layout | None, perm: tuple[int, ...] | None = None) -> str:
    """`#xegpu.layout<sg_layout = ..., sg_data = ..., inst_data = ...>` (the lane fields left to upstream); with
    `perm`, that of the loaded block before the load transposes it (upstream's layout is the descriptor's)."""
    if layout is None:
        raise NotImplementedError("upstream MLIR export: an anchor op without a layout")
    fields = {k: tuple(v[i] for i in perm or range(len(v))) for k, v in layout.set_fields().items()
              if k in ANCHOR_FIELDS}
    return Layout(**fields).text("xegpu")


def attributes(items: dict) -> str:
    return " {" + ", ".join(f"{k} = {v}" for k, v in items.items()) + "}" if items else ""


def tdesc_type(t: TensorDescType) -> str:
    if t.memory_space != "global":
        raise NotImplementedError(f"upstream MLIR export: a tensor_desc in {t.memory_space} memory")
    return f"!xegpu.tensor_desc<{'x'.join(map(str, t.shape))}x{t.dtype.mlir}>"


def memref_type(name: str, t: MemRefType, array: ArrayShape | None) -> str:
    if array is None:
        raise NotImplementedError(f"upstream MLIR export: memref argument {name} without the launch's shape")
    if len(array.shape) != t.rank:
        raise NotImplementedError(f"upstream MLIR export: array {name}, rank {len(array.shape)}, seen as rank "
                                  f"{t.rank} by the kernel")
    return static_memref(array, t.dtype.mlir)


def static_memref(array: ArrayShape, dtype: str) -> str:
    return f"memref<{'x'.join(map(str, array.shape))}x{dtype}, strided<[{', '.join(map(str, array.strides))}]>>"


class UpstreamPrinter(Printer):
    """Our printer with upstream's forms for the ops that differ; descriptors as `Block`s."""

    def __init__(self):
        super().__init__("xegpu")
        self.blocks: dict[Value, Block] = {}
        self.memrefs: dict[Value, str] = {}  # memref argument -> its upstream type
        self.arrays: dict[Value, ArrayShape] = {}  # memref argument -> its launch shape
        self.matrices: dict[Value, str] = {}  # SLM buffer -> the type of its mem_desc
        self.array_names: dict[Value, str] = {}  # memref argument or its view -> the argument's name

    def attr_dict(self, op: Operation, attrs: dict | None = None) -> str:
        """For the ops printed as they are: their attributes and the layouts of their vector results, which
        upstream's propagation needs where no anchor op reaches (an activation after the GEMM loop)."""
        layouts = {f"layout_result_{i}": anchor_layout(v.layout) for i, v in enumerate(op.results)
                   if v.layout is not None and isinstance(v.type, VectorType)}
        return attributes({**(attrs or {}), **layouts})

    def line(self, indent: int, text: str) -> None:
        self.lines.append(" " * indent + text)

    def fresh(self, hint: str | None = None) -> str:
        return self._fresh(hint)

    def block(self, v: Value) -> Block:
        if v not in self.blocks:
            raise NotImplementedError("upstream MLIR export: a tensor_desc not made by create_nd_tdesc in the kernel")
        return self.blocks[v]

    def at(self, v: Value) -> str:
        block = self.block(v)
        return f"{block.desc}[{', '.join(block.offsets)}]"

    def global_block(self, v: Value, op: Operation) -> Block:
        """The block of `v`, which `op` (upstream has no form of it on SLM) needs in global memory."""
        block = self.block(v)
        if block.matrix is not None:
            raise NotImplementedError(f"upstream MLIR export: {op.name} of a block in shared local memory (upstream's "
                                      "load_matrix neither pads nor transposes, nothing prefetches there, and "
                                      "its atomic_rmw takes no mem_desc)")
        return block

    def block_message(self, v: Value, op: Operation) -> Block:
        """The block of `v` in global memory, which `op` reads or writes with 2D block messages: upstream lowers
        every load_nd, store_nd and prefetch_nd to them, and its create_nd_tdesc of an array that breaks their
        surface rules (base alignment, pitch, width) would verify and then be wrong on the GPU."""
        block = self.global_block(v, op)
        if not block.base.type.block_io:
            raise NotImplementedError(f"upstream MLIR export: {op.name} of array {self.array_names[block.base]}, "
                                      "which 2D block messages cannot address (upstream lowers every load_nd, "
                                      "store_nd and prefetch_nd to them)")
        return block

    def print_op(self, op: Operation, indent: int) -> None:
        handler = HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op, indent)
        elif op.name.startswith(PRINTED_AS_IS) and not op.regions:
            super().print_op(op, indent)
        else:
            raise NotImplementedError(f"upstream MLIR export: no upstream form for {op.name} "
                                      f"({type(op).__name__})")


def scalar_literal(value, dtype: DType) -> str:
    """A constant as upstream reads it: a float that is not finite as its bits in hex."""
    if dtype.is_float and not math.isfinite(float(value)):
        bits = np.array(value, dtype.np_dtype).view(f"u{dtype.np_dtype.itemsize}")
        return f"0x{int(bits):0{2 * dtype.np_dtype.itemsize}X}"
    return format_scalar(value, dtype)


def constant(p: UpstreamPrinter, indent: int, value, t, hint: str | None = None, attrs: str = "") -> str:
    name = p.fresh(hint)
    literal = scalar_literal(value, t.dtype)
    dense = f"dense<{literal}>" if isinstance(t, VectorType) else literal
    p.line(indent, f"{name} = arith.constant{attrs} {dense} : {t}")
    return name


def print_constant(p: UpstreamPrinter, op: ConstantOp, indent: int) -> None:
    p.names[op.result] = constant(p, indent, op.value, op.result.type, op.result.name_hint, p.attr_dict(op))


def print_reduction(p: UpstreamPrinter, op: MultiReductionOp, indent: int) -> None:
    """Upstream's multi_reduction drops the reduced dims and takes a start value; ours keeps them as 1s."""
    (source,) = op.operands
    if op.rfc_kind not in REDUCTION_START:
        raise NotImplementedError(f"upstream MLIR export: a vector.multi_reduction <{op.rfc_kind}>")
    kept = VectorType(tuple(n for i, n in enumerate(source.type.shape) if i not in op.dims), source.type.dtype)
    start = constant(p, indent, REDUCTION_START[op.rfc_kind], kept, "start")
    reduced = p.fresh("reduced")
    p.line(indent, f"{reduced} = vector.multi_reduction <{op.rfc_kind}>, {p.name(source)}, {start} "
                   f"[{', '.join(map(str, op.dims))}] : {source.type} to {kept}")
    p.line(indent, f"{p.name(op.result)} = vector.shape_cast {reduced} : {kept} to {op.result.type}")


def print_broadcast(p: UpstreamPrinter, op: VectorBroadcastOp | SplatOp, indent: int) -> None:
    """Of a vector's unit dims or of a scalar."""
    (source,) = op.operands
    p.line(indent, f"{p.name(op.result)} = vector.broadcast {p.name(source)} : {source.type} to {op.result.type}")


def print_transpose(p: UpstreamPrinter, op: VectorTransposeOp, indent: int) -> None:
    (source,) = op.operands
    p.line(indent, f"{p.name(op.result)} = vector.transpose {p.name(source)}, [{', '.join(map(str, op.perm))}] : "
                   f"{source.type} to {op.result.type}")


def print_program_id(p: UpstreamPrinter, op: ProgramIdOp, indent: int) -> None:
    """Upstream's gpu.block_id is an index; ours an i32."""
    block_id = p.fresh("block_id")
    p.line(indent, f"{block_id} = gpu.block_id {'xyz'[op.axis]}")
    p.line(indent, f"{p.name(op.result)} = arith.index_cast {block_id} : index to {op.result.type}")


def print_slm_alloc(p: UpstreamPrinter, op: SlmAllocOp, indent: int) -> None:
    """An SLM buffer: workgroup memory of its bytes (address space 3) seen as upstream's `mem_desc` of its shape."""
    t = op.result.type
    raw = f"memref<{math.prod(t.shape) * t.dtype.bits // 8}xi8, 3>"
    matrix = f"!xegpu.mem_desc<{'x'.join(map(str, t.shape))}x{t.dtype.mlir}>"
    storage = p.fresh("slm")
    p.line(indent, f"{storage} = memref.alloca() : {raw}")
    p.line(indent, f"{p.name(op.result)} = xegpu.create_mem_desc {storage} : {raw} -> {matrix}")
    p.matrices[op.result] = matrix


def print_create(p: UpstreamPrinter, op: CreateNdDescOp, indent: int) -> None:
    base, *offsets = op.operands
    offsets = tuple(p.name(v) for v in offsets)
    if base in p.matrices:  # a block of an SLM buffer: its mem_desc and offsets, read by load_matrix
        p.blocks[op.result] = Block(p.name(base), offsets, base, p.matrices[base])
        return
    if all(isinstance(user, AtomicRMWOp) for user, _ in op.result.uses):
        p.blocks[op.result] = Block(None, offsets, base)
        return
    desc = p.name(op.result)
    p.line(indent, f"{desc} = xegpu.create_nd_tdesc {p.name(base)} : {p.memrefs[base]} -> "
                   f"{tdesc_type(op.result.type)}")
    p.blocks[op.result] = Block(desc, offsets, base)


def print_update(p: UpstreamPrinter, op: UpdateNdOffsetOp, indent: int) -> None:
    t, *deltas = op.operands
    block = p.block(t)
    moved = []
    for offset, delta in zip(block.offsets, deltas):
        name = p.fresh("offset")
        p.line(indent, f"{name} = arith.addi {offset}, {p.name(delta)} : index")
        moved.append(name)
    p.blocks[op.result] = dataclasses.replace(block, offsets=tuple(moved))


def matrix_operands(block: Block) -> str:
    """The types after a load_matrix's or store_matrix's mem_desc: its own and its dynamic offsets'."""
    return ", ".join([block.matrix, *["index"] * len(block.offsets)])


def print_load(p: UpstreamPrinter, op: LoadNdOp, indent: int) -> None:
    (t,) = op.operands
    block = p.block(t)
    if block.matrix is not None and not op.transpose and op.padding == 0:
        p.line(indent, f"{p.name(op.result)} = xegpu.load_matrix {p.at(t)}"
                       f"{attributes({'layout': anchor_layout(op.result.layout)})} : {matrix_operands(block)} -> "
                       f"{op.result.type}")
        return
    p.block_message(t, op)
    attrs = {"layout": anchor_layout(op.result.layout, op.transpose)}
    if op.transpose:
        attrs["transpose"] = f"array<i64: {', '.join(map(str, op.transpose))}>"
    loaded = p.name(op.result) if op.padding == 0 else p.fresh("loaded")
    p.line(indent, f"{loaded} = xegpu.load_nd {p.at(t)}{attributes(attrs)} : "
                   f"{tdesc_type(t.type)} -> {op.result.type}")
    if op.padding != 0:
        padded(p, indent, loaded, op.result, p.block(t), op.padding)


def padded(p: UpstreamPrinter, indent: int, loaded: str, result: Value, block: Block, padding) -> None:
    """Upstream's load_nd reads 0 outside the memref; ours reads `padding` there: the elements outside are
    replaced."""
    t = result.type
    valid = inside(p, indent, block, t.shape)
    fill = constant(p, indent, padding, t, "padding")
    p.line(indent, f"{p.name(result)} = arith.select {valid}, {loaded}, {fill} : {VectorType(t.shape, bool_)}, {t}")


def inside(p: UpstreamPrinter, indent: int, block: Block, shape: tuple[int, ...]) -> str:
    """The mask of the elements of a `shape` block at `block`'s offsets that lie inside its memref, by their row
    and column against the memref's extents."""
    mask = VectorType(shape, bool_)
    within_dims = []
    for dim, (offset, extent) in enumerate(zip(block.offsets, p.arrays[block.base].shape)):
        at = indices(p, indent, offset, shape[dim])
        indices_type = VectorType((shape[dim],), index_dtype)
        limit, within = p.fresh("limit"), p.fresh("within")
        p.line(indent, f"{limit} = arith.constant dense<{extent}> : {indices_type}")
        p.line(indent, f"{within} = arith.cmpi ult, {at}, {limit} : {indices_type}")  # a negative index is beyond too
        within_dims.append(spread(p, indent, within, VectorType(indices_type.shape, bool_), dim, mask))
    valid = p.fresh("inside")
    p.line(indent, f"{valid} = arith.andi {within_dims[0]}, {within_dims[1]} : {mask}")
    return valid


def indices(p: UpstreamPrinter, indent: int, offset: str, size: int) -> str:
    """`offset`, `offset` + 1, ..., as a vector<SIZExindex>."""
    t = VectorType((size,), index_dtype)
    step, start, at = p.fresh("step"), p.fresh("start"), p.fresh("at")
    p.line(indent, f"{step} = vector.step : {t}")
    p.line(indent, f"{start} = vector.broadcast {offset} : index to {t}")
    p.line(indent, f"{at} = arith.addi {step}, {start} : {t}")
    return at


def spread(p: UpstreamPrinter, indent: int, values: str, t: VectorType, dim: int, target: VectorType,
           name: str | None = None) -> str:
    """The 1-D `values` along dim `dim` of the 2-D `target`, the same in every row (dim 1) or column (dim 0)."""
    name = name or p.fresh("spread")
    if dim == 1:
        p.line(indent, f"{name} = vector.broadcast {values} : {t} to {target}")
        return name
    column = VectorType((t.shape[0], 1), t.dtype)
    shaped = p.fresh("column")
    p.line(indent, f"{shaped} = vector.shape_cast {values} : {t} to {column}")
    p.line(indent, f"{name} = vector.broadcast {shaped} : {column} to {target}")
    return name


def print_iota(p: UpstreamPrinter, op: IotaOp, indent: int) -> None:
    t = op.result.type
    at = indices(p, indent, p.name(op.operands[0]), t.shape[op.dim])
    line = VectorType((t.shape[op.dim],), t.dtype)
    if len(t.shape) == 1:
        p.line(indent, f"{p.name(op.result)} = arith.index_cast {at} : {VectorType(line.shape, index_dtype)} to {t}")
        return
    cast = p.fresh("iota")
    p.line(indent, f"{cast} = arith.index_cast {at} : {VectorType(line.shape, index_dtype)} to {line}")
    spread(p, indent, cast, line, op.dim, t, p.name(op.result))


def print_subview(p: UpstreamPrinter, op: MemRefSubviewOp, indent: int) -> None:
    """The matrix at fixed leading offsets (which the export takes to be inside the array: upstream's subview has
    no empty matrices), or a 1-D array as one row."""
    base, *offsets = op.operands
    array = p.arrays[base]
    name, dtype = p.name(op.result), base.type.dtype.mlir
    if base.type.rank == 1:
        if array.strides[0] != 1:
            raise NotImplementedError(f"upstream MLIR export: 1-D array {base.name_hint} with stride "
                                      f"{array.strides[0]}")
        matrix = ArrayShape((1, array.shape[0]), (array.shape[0], 1))
        p.memrefs[op.result] = f"memref<1x{array.shape[0]}x{dtype}>"  # the layout upstream infers
        p.line(indent, f"{name} = memref.expand_shape {p.name(base)} [[0, 1]] output_shape [1, {array.shape[0]}] : "
                       f"{p.memrefs[base]} into {p.memrefs[op.result]}")
    else:
        matrix = ArrayShape(array.shape[-2:], array.strides[-2:])
        p.memrefs[op.result] = view_type(matrix.shape, matrix.strides, dtype)
        kept = len(array.shape) - 2
        starts = [p.name(v) for v in offsets] + ["0", "0"]
        print_view(p, indent, name, base, starts, (1,) * kept + matrix.shape, p.memrefs[op.result])
    p.arrays[op.result] = matrix
    p.array_names[op.result] = p.array_names[base]


def view_type(shape: tuple[int, ...], strides: tuple[int, ...], dtype: str) -> str:
    """The memref type of a subview of `shape` with the array's `strides`, at an offset known at run time."""
    return f"memref<{'x'.join(map(str, shape))}x{dtype}, strided<[{', '.join(map(str, strides))}], offset: ?>>"


def print_view(p: UpstreamPrinter, indent: int, name: str, base: Value, starts: list[str], sizes: tuple[int, ...],
               view: str) -> None:
    """`name` = the subview of memref `base` at `starts` of `sizes` (unit steps), of type `view`."""
    p.line(indent, f"{name} = memref.subview {p.name(base)}[{', '.join(starts)}] [{', '.join(map(str, sizes))}] "
                   f"[{', '.join(['1'] * len(sizes))}] : {p.memrefs[base]} to {view}")


def print_store(p: UpstreamPrinter, op: StoreNdOp, indent: int) -> None:
    value, t = op.operands
    if op.valid is not None:
        raise NotImplementedError("upstream MLIR export: store_nd of a padded block (valid)")
    layout = {"layout": anchor_layout(value.layout)}
    block = p.block(t)
    if block.matrix is not None:
        p.line(indent, f"xegpu.store_matrix {p.name(value)}, {p.at(t)}{attributes(layout)} : {value.type}, "
                       f"{matrix_operands(block)}")
        return
    p.block_message(t, op)
    p.line(indent, f"xegpu.store_nd {p.name(value)}, {p.at(t)}{attributes(layout)} : {value.type}, "
                   f"{tdesc_type(t.type)}")


def print_atomic(p: UpstreamPrinter, op: AtomicRMWOp, indent: int) -> None:
    """Upstream's atomic_rmw takes no offsets, and its create_nd_tdesc none either: the block's place is a subview of
    the array at the block's offsets, of the block's shape, its elements outside the array masked off (the view
    reaches past the array's end only where they are). The array need not meet the 2D block messages' surface rules
    (refused for load_nd, store_nd and prefetch_nd): no block message does atomics, so an atomic_rmw is lowered
    element by element, each addressed from the descriptor's base and strides, as ours is (codegen/llvm/atomics.py),
    and an array that breaks those rules is no hazard for it."""
    value, t = op.operands[:2]
    if op.kind == "cas":
        raise NotImplementedError("upstream MLIR export: an atomic compare-and-swap (upstream's atomic_rmw kinds "
                                  "have none)")
    if op.valid is not None:
        raise NotImplementedError("upstream MLIR export: atomic_rmw of a padded block (valid)")
    block = p.global_block(t, op)
    shape, array = t.type.shape, p.arrays[block.base]
    view, desc, ty = p.fresh("view"), p.fresh("desc"), view_type(shape, array.strides, t.type.dtype.mlir)
    print_view(p, indent, view, block.base, list(block.offsets), shape, ty)
    p.line(indent, f"{desc} = xegpu.create_nd_tdesc {view} : {ty} -> {tdesc_type(t.type)}")
    mask = inside(p, indent, block, shape)
    kind = ATOMIC_KINDS[op.kind][t.type.dtype.kind].rmw
    layout = attributes({"layout": anchor_layout(value.layout)})
    p.line(indent, f"{p.name(op.result)} = xegpu.atomic_rmw {kind} {desc}, {mask}, {p.name(value)}{layout} : "
                   f"{tdesc_type(t.type)}, {VectorType(shape, bool_)}, {value.type} -> {op.result.type}")


def print_prefetch(p: UpstreamPrinter, op: PrefetchNdOp, indent: int) -> None:
    (t,) = op.operands
    p.block_message(t, op)
    layout = {"layout": anchor_layout(t.type.layout)}
    p.line(indent, f"xegpu.prefetch_nd {p.at(t)}{attributes(layout)} : {tdesc_type(t.type)}")


def print_dpas(p: UpstreamPrinter, op: DpasOp, indent: int) -> None:
    """8-bit A and B as they are: upstream packs B into VNNI words itself."""
    if op.vnni_b is not None:  # made by blocking, below the workgroup level
        raise NotImplementedError("upstream MLIR export: dpas on B packed into VNNI words (vnni_b)")
    a, b, *c = op.operands
    names = dict(zip(("layout_a", "layout_b", "layout_cd"), (a, b, op.result)))
    attrs = {k: anchor_layout(v.layout) for k, v in names.items()}
    inputs = [(p.name(v), str(v.type)) for v in (a, b)]
    if op.precision == "tf32":
        inputs = [tf32(p, indent, p.name(v), v.type) for v in (a, b)]
    operands = [*inputs, *((p.name(v), str(v.type)) for v in c)]
    p.line(indent, f"{p.name(op.result)} = xegpu.dpas {', '.join(name for name, _ in operands)}"
                   f"{attributes(attrs)} : {', '.join(t for _, t in operands)} -> {op.result.type}")


def tf32(p: UpstreamPrinter, indent: int, name: str, t: VectorType) -> tuple[str, str]:
    """A tf32 dpas operand: the f32 values truncated to tf32 (toward zero, the low 13 mantissa bits dropped), as the
    hardware's tf32 DPAS reads f32 words and as our tf32 computes. The f32 operands as they are would not do: a dpas
    on f32 states no truncation (upstream 23's XeVM conversion has no DPAS for it at all), and it is how our exact
    "ieee" f32 dpas exports, which the tf32 one must stay apart from."""
    narrow = f"vector<{'x'.join(map(str, t.shape))}xtf32>"
    truncated = p.fresh("tf32")
    p.line(indent, f"{truncated} = arith.truncf {name} toward_zero : {t} to {narrow}")
    return truncated, narrow


def print_convert(p: UpstreamPrinter, op: XeGPUConvertLayoutOp, indent: int) -> None:
    """A conversion that keeps each subgroup's data is a change of instruction blocks, which upstream's blocking
    makes from the anchors' inst_data: the value passes through."""
    (source,) = op.operands
    before, after = source.layout, op.result.layout
    if before is None or after is None or not before.distributes_like(after, source.type.shape):
        raise NotImplementedError("upstream MLIR export: xegpu.convert_layout between subgroup splits")
    p.names[op.result] = p.name(source)


def print_for(p: UpstreamPrinter, op: ForOp, indent: int) -> None:
    """Descriptor iter_args become their offsets: the created descriptor serves the whole loop."""
    lower, upper, step, *inits = op.operands
    iv, *args = op.body.args
    pairs, types = [], []
    for init, arg in zip(inits, args):
        if isinstance(init.type, TensorDescType):
            block = p.block(init)
            offsets = tuple(p.fresh(f"{p.name(arg)[1:]}_offset") for _ in block.offsets)
            p.blocks[arg] = dataclasses.replace(block, offsets=offsets)
            pairs += [f"{o} = {i}" for o, i in zip(offsets, block.offsets)]
            types += ["index"] * len(offsets)
        else:
            pairs.append(f"{p.name(arg)} = {p.name(init)}")
            types.append(str(init.type))
    base = p.fresh()
    count = len(types)
    position = 0
    for init, result in zip(inits, op.results):
        if isinstance(init.type, TensorDescType):
            width = len(p.block(init).offsets)
            p.blocks[result] = dataclasses.replace(p.block(init), offsets=tuple(f"{base}#{position + k}"
                                                                                 for k in range(width)))
            position += width
        else:
            p.names[result] = f"{base}#{position}" if count > 1 else base
            position += 1
    results = f"{base}:{count} = " if count > 1 else f"{base} = " if count else ""
    carried_text = f" iter_args({', '.join(pairs)}) -> ({', '.join(types)})" if pairs else ""
    p.line(indent, f"{results}scf.for {p.name(iv)} = {p.name(lower)} to {p.name(upper)} step {p.name(step)}"
                   f"{carried_text} : {lower.type} {{")
    loop_yield = op.body.ops[-1]
    for body_op in op.body.ops:
        if body_op is loop_yield:
            print_yield(p, body_op, indent + 2, args)
        else:
            p.print_op(body_op, indent + 2)
    p.line(indent, "}")


def print_yield(p: UpstreamPrinter, op: YieldOp, indent: int, args: list[Value]) -> None:
    names, types = [], []
    for value, arg in zip(op.operands, args):
        if isinstance(value.type, TensorDescType):
            if p.block(value).desc != p.block(arg).desc:
                raise NotImplementedError("upstream MLIR export: a loop carrying another descriptor than its own")
            names += p.block(value).offsets
            types += ["index"] * len(p.block(value).offsets)
        else:
            names.append(p.name(value))
            types.append(str(value.type))
    p.line(indent, f"scf.yield {', '.join(names)} : {', '.join(types)}" if names else "scf.yield")


def print_return(p: UpstreamPrinter, op: ReturnOp, indent: int) -> None:
    if op.operands:
        raise NotImplementedError("upstream MLIR export: a kernel returning values")
    p.line(indent, "gpu.return")


HANDLERS = {ProgramIdOp: print_program_id, CreateNdDescOp: print_create, UpdateNdOffsetOp: print_update,
            LoadNdOp: print_load, StoreNdOp: print_store, PrefetchNdOp: print_prefetch, DpasOp: print_dpas,
            XeGPUConvertLayoutOp: print_convert, ForOp: print_for, ReturnOp: print_return, ConstantOp: print_constant,
            MultiReductionOp: print_reduction, VectorBroadcastOp: print_broadcast, IotaOp: print_iota,
            MemRefSubviewOp: print_subview, SplatOp: print_broadcast, VectorTransposeOp: print_transpose,
            SlmAllocOp: print_slm_alloc, AtomicRMWOp: print_atomic}


def export_mlir(func: FuncOp, arrays: dict[str, ArrayShape], workgroup_size: int) -> str:
    """`func` (the workgroup-level XeGPU IR, asm["xegpu"]) as an upstream `gpu.module`; `arrays` gives each memref
    argument's launch shape and strides by name, `workgroup_size` the work-items of a workgroup."""
    p = UpstreamPrinter()
    for a in func.args:
        if isinstance(a.type, MemRefType):
            p.memrefs[a] = memref_type(a.name_hint, a.type, arrays.get(a.name_hint))
            p.arrays[a] = arrays[a.name_hint]
            p.array_names[a] = a.name_hint
    args = ", ".join(f"{p.name(a)}: {p.memrefs.get(a, a.type)}" for a in func.args)
    p.line(0, f"gpu.module @{func.sym_name}_module {{")
    p.line(2, f"gpu.func @{func.sym_name}({args}) kernel attributes "
              f"{{known_block_size = array<i32: {workgroup_size}, 1, 1>}} {{")
    p.print_block(func.body, 4)
    p.line(2, "}")
    p.line(0, "}")
    return "\n".join(p.lines) + "\n"

