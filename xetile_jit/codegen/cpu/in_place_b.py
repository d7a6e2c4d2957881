"""to-llvm on the `cpu` target: the B columns of the loops over k that read A in its memory (codegen/cpu/lowering.py
`FmaProducts`, f32, and `EmulatedProducts`, f16, bf16 and 8-bit DPAS) read from B's memory rather than from B's lanes.

A lane's column is B[k][n] for k = 0..K-1, widened. From B's lanes it is a copy: f32 B's block load's private array
copied again, f16 B's VNNI words (lane n holds B[2w][n] and B[2w + 1][n] in word w, the register form the DPAS
instruction takes) unpacked again (dpas_emulation.widened_chain). Read in B's memory, element k of lane n is
B[y + k][x + n], one vector load of a row across the lanes (and one conversion): the tutorial f16 GEMM with AVX2 code
spent a fifth of its time packing and unpacking B, and the f32 one ran about a tenth faster at 1024^3
(docs/performance.md "GEMM on the `cpu` target"). The loads read the same values, since nothing writes memory between
the block load and the DPAS op (in_place_a.source_load). A block at the array's border is read in its memory too,
each element tested against the array (0 outside, as the block load's padding): then no path reads the block load's
value and the compiler drops it, as for A (codegen/cpu/in_place_a.py).
"""
from __future__ import annotations

import functools

from llvmlite import ir

from ...ir import simt_ops as S
from ..llvm.core import I64, counted_loop
from ..llvm.descriptors import Descriptors
from ..llvm.lanes import PrivateBlock
from ..xe.llvm_helpers import ROLLED
from .in_place_a import InPlaceA, source_load, within


def b_source(op: S.SimtDpasOp) -> S.SimtLoadNdOp | None:
    """The block load whose value is B of `op`, where its column may be read in B's memory: its block of rows by
    the sub-group's columns, lane n holding column n of every row (VNNI or plain), and source_load's conditions."""
    load = source_load(op, 1)
    if load is None:
        return None
    layout = load.layout
    if layout.block[1] != layout.lanes or layout.lane_layout != (1, layout.lanes) or layout.lane_data[1] != 1:
        return None
    return load


class InPlaceB:
    """B's columns in its memory, for one kernel's `descriptors` (codegen/llvm/descriptors.py)."""

    def __init__(self, descriptors: Descriptors):
        self.blocks = InPlaceA(descriptors)

    def column(self, b: ir.IRBuilder, private, loads: list, element: ir.Type, stored: ir.Type, convert,
               lane: ir.Value) -> tuple[PrivateBlock, list[PrivateBlock]]:
        """A private column of `stored` (`private(type)` makes it) holding each load's rows one after another, each
        element read as `element` and `convert(builder, element)`ed, and each load's part of it: from the blocks of
        `loads` (b_source's) in their memory, plain loads where every block lies inside its array, else each element
        tested. `lane`: the lane's index (i64)."""
        rows = [load.layout.block[0] for load in loads]
        column = PrivateBlock(private(ir.ArrayType(stored, sum(rows))))
        with b.if_else(functools.reduce(b.and_, [self.blocks.inside(b, load) for load in loads])) as (inside, border):
            with inside:
                self.reads(b, column, loads, element, convert, lane, tested=False)
            with border:
                self.reads(b, column, loads, element, convert, lane, tested=True)
        starts = [sum(rows[:i]) for i in range(len(rows))]
        return column, [column.part(b, start, count) for start, count in zip(starts, rows)]

    def reads(self, b: ir.IRBuilder, column: PrivateBlock, loads: list, element: ir.Type, convert, lane: ir.Value,
              tested: bool) -> None:
        """A loop over each block's rows: element k of lane n is B[y + k][x + n], its columns a unit stride apart
        (as the block message takes its array's rows)."""
        start = 0
        for load in loads:
            m, x, y = self.blocks.place(load)

            def step(bld, k, _, m=m, x=x, y=y, start=start):
                row = bld.add(y, bld.zext(k, I64))
                address = bld.bitcast(bld.gep(m.element_pointer(bld, row, x), [lane]),
                                      element.as_pointer(m.pointer.type.addrspace))
                if tested:
                    inside = bld.and_(within(bld, row, m.rows), within(bld, bld.add(x, lane), m.cols))
                    value = bld.load(bld.select(inside, address, bld.bitcast(m.pointer, address.type)))
                    value = bld.select(inside, value, ir.Constant(element, 0))
                else:
                    value = bld.load(address)
                bld.store(convert(bld, value), column.slot(bld, bld.add(k, ir.Constant(k.type, start))))
            counted_loop(b, load.layout.block[0], None, step, ROLLED)
            start += load.layout.block[0]
