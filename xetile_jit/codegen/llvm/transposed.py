"""to-llvm: transposed 2D block loads (XeGPU `load_nd` with `transpose = [1, 0]`, the XeTile RFC's column-major
tiles): d32 transposed messages (docs/reference/xe_builtins.md §6) where the value's lane layout is the one the
message gives, the element path otherwise.

* 16-bit pairs (a column-major f16/bf16 DPAS B): each dword a pair of K rows of one column, as DPAS takes B;
  the pairs must be 4-byte words of memory (`pairs_aligned`).
* R x 16 blocks whose lane n holds the value's column n (a column-major f32 B, a column-major f16 DPAS A): 16
  memory rows by up to 8 dwords a message, lane n getting memory row n, the value's column n, narrower elements
  packed in its dwords as the lane's components are; element by element instead, a tf32 GEMM's main loop on PVC
  had 64 gathers and 1319 other instructions per K step, against 40 with these messages.

Both need the hardware's padding: a message reads +0 outside its surface (`hardware_padding`).
"""
from __future__ import annotations

from math import gcd

from llvmlite import ir

from ...ir import simt_ops as S
from ..xe import builtins as X
from .block_messages import BlockMessages, hardware_padding
from .context import LoweringContext
from .core import I32, I64, components, llvm_type
from .descriptors import Descriptors
from ...target.targets import MAX_VECTOR_COMPONENTS
from .lanes import PrivateBlock


def paired_transpose(layout: S.LaneLayout) -> X.BlockLoad:
    """The d32 transposed message of a 16 x C block of 16-bit pairs: C rows of 8 dwords in memory."""
    return X.BlockLoad(32, layout.block[1], 8, transpose=True)


class TransposedLoads:
    """The transposed loads of one kernel, on its `descriptors` through its block `messages`."""

    def __init__(self, context: LoweringContext, descriptors: Descriptors, messages: BlockMessages):
        self.context, self.descriptors, self.messages = context, descriptors, messages

    @property
    def builder(self) -> ir.IRBuilder:
        return self.context.builder

    @property
    def target(self):
        return self.context.target

    @property
    def lanes(self):
        return self.context.lanes

    def message(self, op):
        """The lowering of the transposed load `op` by d32 transposed messages (paired_transpose_load or
        dword_transpose_load), None where its block takes none."""
        if not (hardware_padding(op) and op.layout.grid == (1, self.lanes.size, 1)
                and self.descriptors.block_surface(op.operands[0])):
            return None
        if self.pairs_transpose(op):
            return self.paired_transpose_load
        return self.dword_transpose_load if self.dword_transpose(op) else None

    def pairs_transpose(self, op) -> bool:
        """A transposed 16 x 16g block of 16-bit data (g = 1, 2), read as a d32 transpose of 16g rows of 8
        dwords: lane n gets memory rows n (and n + 16), whose dword c is the pair of rows 2c, 2c+1 of column n
        (n + 16) of the value, as the value's lane layout (column groups of DPAS B's VNNI packing) has them.
        Needs a surface of 4-byte units (pairs_aligned)."""
        return (op.operands[0].type.dtype.bits == 16 and op.layout.block[0] == 16
                and X.provides(self.target, paired_transpose(op.layout)))

    def dword_transpose(self, op) -> bool:
        """A transposed R x 16 block of 8-, 16- or 32-bit data, lane n holding the value's column n (a component a
        row), read as d32 transposed messages of 16 memory rows (dword_transpose_key): lane n gets memory row n,
        the value's column n, its R elements in R * bits / 32 dwords, consecutive ones packed low first as the
        lane's components are (a column-major f16 DPAS A, an f32 B). Needs whole dwords (pairs_aligned, for
        narrower data)."""
        rows, cols = op.layout.block
        bits = op.operands[0].type.dtype.bits
        return (bits in (8, 16, 32) and rows * bits % 32 == 0 and cols == self.lanes.size
                and X.provides(self.target, self.dword_transpose_key(rows * bits // 32)))

    def dword_transpose_key(self, dwords: int) -> X.BlockLoad:
        """The d32 transposed message of a lane's `dwords`: 16 memory rows by as many dwords as the target's widest
        transposed message holds and divide `dwords`."""
        widest = self.target.block_io.max_transpose_width_bytes // 4
        return X.BlockLoad(32, self.lanes.size, gcd(dwords, widest), transpose=True)

    def dword_transpose_load(self, op) -> ir.Value | PrivateBlock:
        """The lane's dwords in chunks of a message each (dword_transpose_key): chunk j is the message at memory
        dword x + j * its width (x in dwords: the block starts on one, pairs_aligned), and gives each lane the
        j-th run of its dwords. More elements than a vector holds (a 32-row column-major f16 B, 8-bit B) stay in
        private memory, each message writing its run in place."""
        tdesc = op.operands[0]
        b = self.builder
        dwords = op.layout.block[0] * tdesc.type.dtype.bits // 32
        key = self.dword_transpose_key(dwords)
        x, y = self.dword_coordinates(tdesc)
        chunks = [self.lanes.assemble([b.add(x, ir.Constant(I32, j * key.cols)), y]) for j in range(dwords // key.cols)]
        result_type = llvm_type(op.result.type)
        if components(result_type) > MAX_VECTOR_COMPONENTS:
            block = PrivateBlock(self.lanes.private(ir.ArrayType(I32, dwords)))
            data_type = X.describe(self.target, key).data_type.as_pointer()
            for j, xy in enumerate(chunks):
                self.messages.block_call(key, tdesc, b.bitcast(block.slot(b, j * key.cols), data_type), xy=xy, cache=op.cache)
            return self.lanes.reinterpret(block, result_type)
        items = [item for xy in chunks for item in self.lanes.elements(self.messages.read(key, tdesc, xy, key.cols,
                                                                                 cache=op.cache))]
        return self.lanes.reinterpret(self.lanes.assemble(items), result_type)

    def dword_coordinates(self, tdesc) -> tuple[ir.Value, ir.Value]:
        """The block's (x, y) with x in dwords: its column over the elements a dword holds, shifted (x is a
        multiple, pairs_aligned, and may be negative)."""
        b = self.builder
        x, y = self.descriptors.block_coord(tdesc, 0), self.descriptors.block_coord(tdesc, 1)
        shift = {32: 0, 16: 1, 8: 2}[tdesc.type.dtype.bits]
        return (b.ashr(x, ir.Constant(I32, shift)) if shift else x), y

    def pairs_aligned(self, tdesc) -> ir.Value | None:
        """i1: the narrow elements a d32 transposed message reads in pairs (quads) are 4-byte words of memory: the
        block starts on a dword and the surface's base, pitch and row width are in 4-byte units (launch-checked for
        memory that meets Xe's rules, MemRefType.block_io, and for 32-bit data; tested here for the rest, which the
        `cpu` target's builtins take, BlockIO.any_layout). None: for sure."""
        start = self.descriptors.x_aligned(tdesc, 4)
        if self.descriptors.xe_surface(tdesc) or tdesc.type.dtype.bits >= 32:
            return start
        b = self.builder
        base, width, _, pitch = self.descriptors.surface(tdesc)
        units = b.or_(b.ptrtoint(base, I64), b.zext(b.or_(width, pitch), I64))
        words = b.icmp_unsigned("==", b.and_(units, ir.Constant(I64, 3)), ir.Constant(I64, 0))
        return words if start is None else b.and_(start, words)

    def paired_transpose_load(self, op) -> ir.Value | PrivateBlock:
        """The message gives lane n the words of its rows taking turns column by column (codegen/xe/builtins.py); a
        lane's value has them row by row (column group by group), put in that order in private memory. IGC 2.40
        reads a 32-row message so reordered as two 16-row ones (docs/DESIGN.md, "Transposed loads")."""
        tdesc = op.operands[0]
        b = self.builder
        key = paired_transpose(op.layout)
        words = self.lanes.assemble(list(self.dword_coordinates(tdesc)))
        desc = X.describe(self.target, key)
        if desc.row_groups == 1:
            return self.lanes.reinterpret(self.messages.read(key, tdesc, words, cache=op.cache), llvm_type(op.result.type))
        message, value = (PrivateBlock(self.lanes.private(desc.data_type)) for _ in range(2))
        self.messages.block_call(key, tdesc, message.pointer, xy=words, cache=op.cache)
        order = [column * desc.row_groups + group for group in range(desc.row_groups) for column in range(desc.cols)]
        value_words = self.lanes.assemble([b.load(message.slot(b, word)) for word in order])
        b.store(value_words, b.bitcast(value.pointer, value_words.type.as_pointer()))
        return self.lanes.reinterpret(value, llvm_type(op.result.type))
