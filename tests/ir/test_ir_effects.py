"""Op traits (ir/effects.py): every op declares its memory effects; barriers and the host copy-back follow them."""
from __future__ import annotations

import pytest

import xetile_jit as xetile
from xetile_jit.transforms.xegpu.barriers import insert_barriers
from xetile_jit.ir import core_ops as C
from xetile_jit.ir import simt_ops, sync_ops, xegpu_ops, xetile_ops
from xetile_jit.ir import xegpu_ops as G
from xetile_jit.ir.core import Builder, FuncOp, Operation
from xetile_jit.ir.effects import GLOBAL, writes
from xetile_jit.ir.types import IndexType, MemRefType, TileType, VectorType, float32
from xetile_jit.ir.verifier import verify
from xetile_jit.ir.xetile_ops import InitTileOp, written_arrays


class UndeclaredOp(Operation):
    name = "test.undeclared"

    def __init__(self, x, loc=None):
        super().__init__([x], [], loc=loc)


class ScatterOp(Operation):
    """A new memory op known only by its declared effect: it writes `value` through operand 1."""

    name = "test.scatter"
    effects = (writes(1),)

    def __init__(self, value, target, loc=None):
        super().__init__([value, target], [], loc=loc)


class GlobalScatterOp(ScatterOp):
    effects = (writes(1, GLOBAL),)


def test_op_without_declared_effects_is_rejected():
    func = FuncOp("f", [MemRefType(float32)], ["x"], {})
    Builder(func.body).create(UndeclaredOp, func.args[0])
    with pytest.raises(xetile.CompilationError, match="op UndeclaredOp declares no memory effects"):
        verify(func)


def test_effect_on_an_operand_that_addresses_no_memory_is_rejected():
    func = FuncOp("f", [MemRefType(float32)], ["x"], {})
    b = Builder(func.body)
    zero = b.create(C.ConstantOp, 0, IndexType()).result
    b.create(ScatterOp, func.args[0], zero)
    with pytest.raises(xetile.CompilationError, match="names operand 1 of type index, which addresses no memory"):
        verify(func)


def test_every_op_class_declares_its_effects():
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    modules = {C.__name__, xetile_ops.__name__, xegpu_ops.__name__, simt_ops.__name__, sync_ops.__name__}
    ops = [cls for cls in subclasses(Operation) if cls.__module__ in modules]
    assert len(ops) > 40
    assert [cls.__name__ for cls in ops if cls.effects is None] == []


def test_a_new_write_op_makes_its_array_copied_back():
    """written_arrays knew store_tile and atomic_rmw_tile only: an array written by another op was not copied back."""
    func = FuncOp("f", [MemRefType(float32), MemRefType(float32)], ["x", "y"], {})
    b = Builder(func.body)
    zero = b.create(C.ConstantOp, 0, IndexType()).result
    value = b.create(C.ConstantOp, 1.0, VectorType((8, 8), float32)).result
    tile = b.create(InitTileOp, func.args[1], [zero, zero], TileType((8, 8), float32)).result
    b.create(GlobalScatterOp, value, tile)
    b.create(C.ReturnOp)
    verify(func)
    assert written_arrays(func) == {func.args[1]}


def test_a_new_write_op_gets_its_barrier():
    """Two subgroups (the workgroup-level layout says): a load through one descriptor, then a write of the same
    array through another, four rows down (subgroup 0 writes the rows subgroup 1 read), must wait at a barrier.
    The barrier pass knew load_nd, store_nd and atomic_rmw only."""
    func = FuncOp("f", [MemRefType(float32)], ["x"], {}, dialect="xegpu")
    b = Builder(func.body)
    zero, four = (b.create(C.ConstantOp, n, IndexType()).result for n in (0, 4))
    tdesc = G.TensorDescType((8, 8), float32, layout=xetile.Layout(sg_layout=[2, 1], sg_data=[4, 8]))
    src = b.create(G.CreateNdDescOp, func.args[0], [zero, zero], tdesc).result
    dst = b.create(G.CreateNdDescOp, func.args[0], [four, zero], tdesc).result
    value = b.create(G.LoadNdOp, src).result
    scatter = b.create(ScatterOp, value, dst)
    b.create(C.ReturnOp)
    insert_barriers(func)
    ops = func.body.ops
    assert isinstance(ops[ops.index(scatter) - 1], C.BarrierOp)
    assert sum(isinstance(op, C.BarrierOp) for op in ops) == 1
