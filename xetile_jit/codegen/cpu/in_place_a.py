"""to-llvm on the `cpu` target: tile_mma loops over k that read A[r][k] from A's memory rather than from A's lanes.

In the loops over k (codegen/cpu/lowering.py, VectorDpas: f32 multiply-adds and the DPAS emulation of f16, bf16, 8-bit
and tf32 A) every lane needs A[r][k], which one lane holds. Where a lane's f32 across the sub-group takes several
vector registers (dpas_emulation.a_in_place: AVX2), the driver moves it by storing A's row to the stack each step. A
block load of A, though, read that element from memory at an address every lane shares: read there again, it is one
broadcast load. So where the block lies inside its array, the loops read A in place. Both read the same values, since
nothing writes memory between the load and the DPAS op (`source_load`). A chain of DPAS ops (a K step's blocks of K)
is one loop over all its k where its A blocks follow one another along the row. The array may be global or shared
local memory: a kernel that waits at barriers keeps the sub-group builtins (codegen/llvm/lane_slots.py), and A read
in its SLM takes the last of them out of tutorial 8's GEMM, whose driver then builds no masked copy of it (1.37-1.65 s
against 2.89-3.15, and it ran at 16 GFLOP/s against 11-14; docs/performance.md "Driver builds").

A border block (whose elements outside read as 0) is read in its memory too, a loop for each DPAS op, each element
tested against the array (`Bounds`: outside it reads 0, as the block load's padding; codegen/cpu/lowering.py
`InMemoryProducts` says why not in A's lanes). Then no path reads the block load's value and the compiler drops it,
so the loops inside the array first load each cache line of A's rows themselves (`touched`): without the block load
or those loads, the tutorial GEMM ran 0.94x as fast.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from llvmlite import ir

from ...ir import simt_ops as S
from ...ir.effects import FENCE, SYNC, WRITE
from ...ir.core import Operation, walk
from ..llvm.block_messages import hardware_padding
from ..llvm.core import I64, MemRef
from ..llvm.descriptors import Descriptors

ORDERING = (WRITE, SYNC, FENCE)


def source_load(op: S.SimtDpasOp, operand: int = 0) -> S.SimtLoadNdOp | None:
    """The block load whose value is A of `op` (or its `operand`: B, codegen/cpu/in_place_b.py), where the
    multiply-adds may read it in its memory instead: an untransposed load in the DPAS op's block, padded with 0 (the
    value a border block's loops read outside, `Bounds`), with no op between them that writes memory or orders
    accesses."""
    load = op.operands[operand].owner
    if not isinstance(load, S.SimtLoadNdOp) or load.transpose or load.parent is not op.parent \
            or not hardware_padding(load):
        return None
    ops = op.parent.ops
    between = ops[ops.index(load) + 1:ops.index(op)]
    if any(effect.kind in ORDERING for nested in between for inner in (nested, *nested_ops(nested))
           for effect in inner.effects):
        return None
    return load


def nested_ops(op: Operation) -> list[Operation]:
    return [inner for region in op.regions for inner in walk(region.block)]


class InPlaceA:
    """A's blocks in their memory, for one kernel's `descriptors` (codegen/llvm/descriptors.py)."""

    def __init__(self, descriptors: Descriptors):
        self.descriptors = descriptors

    def one_array(self, loads: list) -> bool:
        """Whether `loads` read one array, the same for all (not chosen at run time)."""
        arrays = {self.arrays(load) for load in loads}
        return len(arrays) == 1 and len(arrays.pop()) == 1

    def arrays(self, load: S.SimtLoadNdOp) -> frozenset:
        """The arrays `load` may read."""
        return frozenset(self.descriptors.bases[load.operands[0]])

    def readable_chains(self, b: ir.IRBuilder, groups: list) -> ir.Value:
        """i1: the A blocks of every chain of `groups` (chain_groups) lie inside their array, each next one where
        the one before ends along the row: a chain's A is one block of its whole K."""
        tests = []
        for chain in (chain for chains in groups for chain in chains):
            loads = [op.operands[0].owner for op in chain]
            tests += [self.inside(b, load) for load in loads]
            tests += [self.follows(b, load, before) for before, load in zip(loads, loads[1:])]
        return functools.reduce(b.and_, tests)

    def follows(self, b: ir.IRBuilder, load: S.SimtLoadNdOp, before: S.SimtLoadNdOp) -> ir.Value:
        """i1: `load`'s block starts in the rows of `before`'s, in the column after its last."""
        (x, y), (x0, y0) = ([self.descriptors.offset(op.operands[0], axis) for axis in (0, 1)] for op in (load, before))
        width = ir.Constant(I64, before.layout.block[1])
        return b.and_(b.icmp_signed("==", x, b.add(x0, width)), b.icmp_signed("==", y, y0))

    def inside(self, b: ir.IRBuilder, load: S.SimtLoadNdOp) -> ir.Value:
        """i1: `load`'s block lies inside its array (i64 coordinates, no clamp)."""
        tdesc = load.operands[0]
        m = self.descriptors.memref(tdesc)
        rows, cols = load.layout.block
        tests = []
        for axis, extent, size in ((0, cols, m.cols), (1, rows, m.rows)):
            start = self.descriptors.offset(tdesc, axis)
            tests.append(b.icmp_signed(">=", start, ir.Constant(I64, 0)))
            tests.append(b.icmp_signed("<=", b.add(start, ir.Constant(I64, extent)), size))
        return functools.reduce(b.and_, tests)

    def rows(self, b: ir.IRBuilder, load: S.SimtLoadNdOp) -> tuple[list[ir.Value], ir.Value]:
        """The address of each of the block's rows' first element (as its array's storage type), and the elements
        from one column to the next (i64): element k of a row is k of them on."""
        m, x, y = self.place(load)
        return [m.element_pointer(b, b.add(y, ir.Constant(I64, r)), x) for r in range(load.layout.block[0])], \
            m.col_stride

    def bounds(self, b: ir.IRBuilder, load: S.SimtLoadNdOp) -> Bounds:
        """Which of `load`'s elements lie inside its array (`rows`' order)."""
        m, x, y = self.place(load)
        rows = [within(b, b.add(y, ir.Constant(I64, r)), m.rows) for r in range(load.layout.block[0])]
        return Bounds(rows, x, m.cols, m.pointer)

    def place(self, load: S.SimtLoadNdOp) -> tuple[MemRef, ir.Value, ir.Value]:
        """`load`'s array, and its block's first column and row (i64)."""
        tdesc = load.operands[0]
        return (self.descriptors.memref(tdesc), *(self.descriptors.offset(tdesc, axis) for axis in (0, 1)))

    @staticmethod
    def touched(b: ir.IRBuilder, blocks: list[tuple], bits: int, zero: ir.Value) -> ir.Value:
        """An i64 0 after a load of each cache line of A's `blocks`, each (its rows' addresses, the elements (i64)
        from one column to the next, its columns) of `bits`-bit elements (at most 32): the words ORed and ANDed
        with `zero` (a 0 the compiler cannot fold). Added to the loops' strides, it keeps the loads, and the loops
        wait for all of them at once, as they waited for the block load."""
        word = ir.IntType(bits)
        lines = [(row, stride, k) for rows, stride, count in blocks for row in rows
                 for k in range(0, count, CACHE_LINE_BITS // bits)]
        words = [b.load(b.bitcast(b.gep(row, [b.mul(ir.Constant(I64, k), stride)]),
                                  word.as_pointer(row.type.addrspace))) for row, stride, k in lines]
        return b.and_(zero, b.zext(functools.reduce(b.or_, words), I64))


CACHE_LINE_BITS = 512


def products_loop(b: ir.IRBuilder, loop, rows: list[ir.Value], stride: ir.Value, b_reads: list, sums: list[list],
                  operations: tuple, bounds: Bounds | None = None) -> list[list[ir.Value]]:
    """One loop over k, made by `loop(b, carried, step)` (a counted loop, or one over a range known at run time),
    adding A[r][k] * B[k] to `sums` (a list for each B of `b_reads`, a sum for each row of `rows`: the address of its
    A[r][0], its k-th element `stride` elements on), each A[r][k] read once for every B, where inside the array by
    `bounds` (the rows') when given; `b_reads`: for each B, (builder, k) -> B[k] as the multiply-adds take it;
    `operations`: how A[r][k] is read from its address and added times B[k] to the rows' sums
    (lowering.InMemoryProducts.operations). The sums after it."""
    read, multiply_adds = operations
    size = len(rows)

    def step(bld, k, carried):
        at = bld.mul(bld.zext(k, I64), stride)
        addresses = [bld.gep(row, [at]) for row in rows]
        a_k = [read(a) for a in addresses] if bounds is None else bounds.reads(bld, k, addresses, read)
        return [total for j, b_read in enumerate(b_reads)
                for total in multiply_adds(a_k, carried[j * size:(j + 1) * size], b_read(bld, k))]
    carried = loop(b, [total for totals in sums for total in totals], step)
    return [carried[j * size:(j + 1) * size] for j in range(len(b_reads))]


def within(b: ir.IRBuilder, index: ir.Value, size: ir.Value) -> ir.Value:
    """i1: 0 <= index < size (i64)."""
    return b.and_(b.icmp_signed(">=", index, ir.Constant(I64, 0)), b.icmp_signed("<", index, size))


@dataclass(frozen=True)
class Bounds:
    """Which elements of a block of A lie inside its array: each row's test (i1, in the block's order), the block's
    first column and the array's columns (i64), and the array's first element, which an element outside reads
    before its value is dropped for 0."""
    rows: list[ir.Value]
    x: ir.Value
    cols: ir.Value
    base: ir.Value

    def of_rows(self, rows: range) -> Bounds:
        """These bounds for `rows` of the block alone."""
        return dataclasses.replace(self, rows=[self.rows[r] for r in rows])

    def reads(self, b: ir.IRBuilder, k: ir.Value, addresses: list[ir.Value], read) -> list[ir.Value]:
        """A[r][k] of each row, `read` at its address (`addresses`) where inside, else 0."""
        column = within(b, b.add(self.x, b.zext(k, I64)), self.cols)
        values = []
        for row, address in zip(self.rows, addresses):
            inside = b.and_(row, column)
            value = read(b.select(inside, address, b.bitcast(self.base, address.type)))
            values.append(b.select(inside, value, ir.Constant(value.type, None)))
        return values
