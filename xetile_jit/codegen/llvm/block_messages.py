"""to-llvm: 2D block messages (XeGPU load_nd, store_nd, prefetch_nd) through the target's Xe builtins
(codegen/xe/builtins.py), where the rules of docs/reference/xe_builtins.md §6 let one address the block
(codegen/llvm/lowering.py's module docstring). `BlockMessages` picks the message of an access (`block_key`), calls
it on a descriptor's surface (codegen/llvm/descriptors.py) and gives a load's lane value, the padding applied
outside the surface; `by_message` branches to the element path where a start may not be aligned."""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from ...ir import simt_ops as S
from ...ir.types import ScalarType
from ...target.targets import MAX_VECTOR_COMPONENTS
from ..xe import builtins as X
from ..xe import prefetch_payload as payload
from .context import LoweringContext
from .core import (I32, components, dense_constant, from_storage, literal, llvm_type, shaped, storage_bits,
                   storage_type, to_storage)
from .descriptors import Descriptors
from .lanes import PrivateBlock


def hardware_padding(op) -> bool:
    """Whether a load's padding is what a block message reads outside its surface: 0 (+0.0; -0.0 is not)."""
    return op.padding == 0 and not np.signbit(op.padding)


def scalar_type(t) -> ir.Type:
    """The LLVM type of one element of a value of type `t`."""
    return llvm_type(ScalarType(t.dtype))


class BlockMessages:
    """The block messages of one kernel: its `descriptors`, and the builtin `definitions` of the target's ABI."""

    def __init__(self, context: LoweringContext, descriptors: Descriptors, definitions: X.Definitions):
        self.context, self.descriptors, self.definitions = context, descriptors, definitions

    @property
    def builder(self) -> ir.IRBuilder:
        return self.context.builder

    def block_call(self, key, tdesc, *data: ir.Value, xy: ir.Value | None = None, cache=None) -> ir.Value:
        """The block message `key` on `tdesc`, with the op's `cache` hints (X.builtin: where the target has caches
        to steer)."""
        fn = X.builtin(self.context.module, self.context.target, key, self.definitions, cache)
        return self.builder.call(fn, self.descriptors.surface(tdesc) + [xy or self.descriptors.xy(tdesc), *data])

    def block_key(self, tdesc, layout: S.LaneLayout, kind, transpose=None):
        """The 2D block message for this access, or None when none fits: the general path does it then. Lanes
        [1, N] holding `chunk` adjacent columns are a message of blocks N * chunk wide (a lane's chunk is one
        component word of the message); a block of several column groups is one load of that many blocks side by
        side (array length). A load whose lanes pack two rows a word (lane_data [2, 1]) is a VNNI-transform read
        where the target has it: the same elements in each lane, in the register form DPAS B takes. Lanes
        [N / C, C] of one 32-bit element (C < N columns a block) are a load of C-wide blocks: their rows go to
        groups of C lanes (tf32 DPAS A: a d32 8-wide block; narrower data keeps the element path). Bools are the
        bytes of an 8-bit message (`lane_value`, `raw_data`), in a vector: on the element path every block of a
        1024-element `where` mask was its own per-element code, 9x the code of the f32 operands' loop over the
        blocks on `cpu`."""
        rows, cols = layout.block
        dtype = tdesc.type.dtype
        if transpose or layout.replicated or not self.descriptors.block_surface(tdesc) or (
                dtype.is_bool and rows * cols // self.context.lanes.size > MAX_VECTOR_COMPONENTS):
            return None
        bits = storage_bits(dtype)
        groups = layout.column_groups
        width = cols // groups
        lanes = self.context.lanes.size
        narrow = kind is X.BlockLoad and bits == 32 and width < lanes and \
            layout.grid == (lanes // width, width, 1)
        if layout.grid[:2] != (1, lanes) and not narrow:
            return None
        if kind is X.BlockStore:
            keys = [X.BlockStore(bits, rows, cols)] if groups == 1 else []
        else:
            keys = [X.BlockLoad(bits, rows, cols // groups, groups)]
            if layout.lane_data[0] == 32 // bits > 1:
                keys.insert(0, X.BlockLoad(bits, rows, cols // groups, groups, vnni=True))
        return next((key for key in keys if X.provides(self.context.target, key)), None)

    def by_message(self, aligned: ir.Value | None, message, elements):
        """message() where `aligned` (x_aligned, pairs_aligned: None for sure) lets a 2D block message address the
        block, else elements(); the value they give, if any."""
        if aligned is None:
            return message()
        b = self.builder
        lanes = self.context.lanes
        with b.if_else(aligned) as (then, otherwise):
            with then:
                by_block, block_end = message(), b.block
            with otherwise:
                one_by_one = elements()
                if isinstance(by_block, PrivateBlock):  # both write one variable: no phi of pointers
                    lanes.assemble(lanes.elements(one_by_one), into=by_block)
                elements_end = b.block
        if by_block is None:
            return None
        if isinstance(by_block, PrivateBlock):
            return by_block
        merged = b.phi(by_block.type)
        merged.add_incoming(by_block, block_end)
        merged.add_incoming(one_by_one, elements_end)
        return merged

    def load(self, key, op, xy: tuple | None = None) -> ir.Value | PrivateBlock:
        """The load `op` as message `key`; at the coordinates `xy` (x, y) when given, not its descriptor's (a block
        of a run's grid, codegen/cpu/pieces.py)."""
        tdesc = op.operands[0]
        lanes = self.context.lanes
        result_type = llvm_type(op.result.type)
        words = self.read(key, tdesc, None if xy is None else lanes.assemble(list(xy)),
                          components(result_type), cache=op.cache)
        return self.padded_value(words, op, tdesc, xy)

    def padded_value(self, words: ir.Value | PrivateBlock, op, tdesc,
                     xy: tuple | None = None) -> ir.Value | PrivateBlock:
        """A block load's `words` as the lane value of `op`, its `padding` outside the surface where that is not
        the message's 0 (`hardware_padding`, `padded`)."""
        value = self.lane_value(words, op.result.type)
        return value if hardware_padding(op) else self.padded(value, op, tdesc, xy)

    def padding_value(self, op) -> ir.Constant:
        """The lane value of a block load wholly outside its surface, read from no memory: its `padding` in every
        element."""
        t = op.result.type
        return dense_constant(t, np.full(components(llvm_type(t)), op.padding).reshape(
            () if not isinstance(llvm_type(t), ir.VectorType) else -1))

    def lane_value(self, words: ir.Value | PrivateBlock, t) -> ir.Value | PrivateBlock:
        """A block load's `words` as the lane value of type `t` (bools: their bytes truncated, as the element path
        reads them)."""
        value = self.context.lanes.reinterpret(words, shaped(llvm_type(t), storage_type(t.dtype)))
        return from_storage(self.builder, value, t.dtype)

    def raw_data(self, data: ir.Value, t, raw_type: ir.Type) -> ir.Value:
        """A lane's `data` of type `t` as a block store's message takes it (`raw_type`; bools as bytes)."""
        return self.builder.bitcast(to_storage(self.builder, data, t.dtype), raw_type)

    def read(self, key, tdesc, xy: ir.Value | None = None, elements: int = 1, cache=None) -> ir.Value | PrivateBlock:
        """A lane's data of the block load `key`: the builtin writes it to private memory, from where a vector
        is read, or which is kept as a PrivateBlock when larger than a vector, in its words or in the `elements`
        the lane holds (16 words of a 16-bit VNNI load are 32 elements)."""
        data_type = X.describe(self.context.target, key).data_type
        dst = self.context.lanes.private(data_type)
        self.block_call(key, tdesc, dst, xy=xy, cache=cache)
        return self.lane_words(dst, data_type, elements)

    def lane_words(self, dst: ir.Value, data_type: ir.ArrayType, elements: int) -> ir.Value | PrivateBlock:
        """A lane's data of a block load, from the private array `dst` the load wrote (read)."""
        if max(data_type.count, elements) > MAX_VECTOR_COMPONENTS:
            return PrivateBlock(dst)
        return self.context.lanes.lane_vector(dst, data_type)

    def padded(self, value: ir.Value | PrivateBlock, op, tdesc, xy: tuple | None = None) -> ir.Value | PrivateBlock:
        """Elements outside the surface read as `padding` instead of the hardware's 0. The coordinates are the
        message's (clamped, i32; `xy` when given) plus each component's place in the block; the column test
        divides the width rather than multiply the column, which could overflow."""
        b = self.builder
        lanes = self.context.lanes
        _, width, height, _ = self.descriptors.surface(tdesc)
        columns = b.udiv(width, ir.Constant(I32, max(1, op.result.type.dtype.bits // 8)))
        x, y = xy or (self.descriptors.block_coord(tdesc, 0), self.descriptors.block_coord(tdesc, 1))
        pad = ir.Constant(scalar_type(op.result.type), literal(op.padding, op.result.type.dtype))
        zero = ir.Constant(I32, 0)
        items = []
        for (r, c), item in zip(lanes.positions(op.layout), lanes.elements(value)):
            row, col = b.add(y, b.trunc(r, I32)), b.add(x, b.trunc(c, I32))
            inside = b.and_(b.and_(b.icmp_signed(">=", row, zero), b.icmp_signed("<", row, height)),
                            b.and_(b.icmp_signed(">=", col, zero), b.icmp_signed("<", col, columns)))
            items.append(b.select(inside, item, pad))
        return lanes.assemble(items, into=value if isinstance(value, PrivateBlock) else None)

    def store(self, key, op, data: ir.Value | None = None, xy: tuple | None = None) -> None:
        """The store `op` as message `key`; of `data` at (x, y) `xy` when given, not its operand at its descriptor's
        (a block of a run's grid, codegen/cpu/pieces.py)."""
        value, tdesc = op.operands
        raw_type = X.describe(self.context.target, key).signature.args[-1]
        data = self.context.values[value] if data is None else data
        message_xy = None if xy is None else self.context.lanes.assemble(list(xy))
        self.block_call(key, tdesc, self.raw_data(data, value.type, raw_type), xy=message_xy, cache=op.cache)

    def prefetch(self, op) -> None:
        """A cache hint: emitted, with the op's L1/L3 controls, where the target has the prefetch message of this
        shape, else dropped; through a payload built once where codegen/xe/prefetch_payload.py applies."""
        t = op.operands[0].type
        key = X.BlockPrefetch(t.dtype.bits, *t.shape)
        tdesc = op.operands[0]
        descriptors = self.descriptors
        if not (X.provides(self.context.target, key) and descriptors.block_surface(tdesc)):
            return
        if payload.applies(descriptors, key, tdesc):
            self.by_message(descriptors.x_aligned(tdesc), lambda: payload.prefetch(descriptors, key, tdesc, op.cache),
                            lambda: None)
        else:
            self.by_message(descriptors.x_aligned(tdesc),
                            lambda: self.block_call(key, tdesc, xy=descriptors.xy(tdesc, hint=True), cache=op.cache),
                            lambda: None)
