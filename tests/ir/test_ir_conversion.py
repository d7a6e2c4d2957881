"""The typed conversion registry (ir/conversion.py): @converts dispatch by type, legal and illegal ops."""
from __future__ import annotations

import pytest

import xetile_jit as xetile
from xetile_jit.transforms.xetile.to_xegpu import xetile_to_xegpu
from xetile_jit.ir import core_ops as C
from xetile_jit.ir.conversion import Conversion, converts
from xetile_jit.ir.core import Builder, FuncOp, Operation
from xetile_jit.ir.types import i32


class NewOp(Operation):
    """An op no pass knows, as a newly added op would be."""

    name = "test.new_op"
    effects = ()

    def __init__(self, x, loc=None):
        super().__init__([x], [x.type], loc=loc)


class NewerOp(NewOp):
    name = "test.newer_op"


def func_with(op_class):
    func = FuncOp("f", [i32], ["a"], {})
    b = Builder(func.body)
    b.create(op_class, func.args[0])
    b.create(C.ReturnOp)
    return func


def test_an_op_without_handler_fails_in_the_pass_naming_it():
    """Before the registry the op was cloned into XeGPU IR and failed passes later."""
    with pytest.raises(xetile.CompilationError, match=r"XeTileToXeGPU: no conversion for test.new_op \(NewOp\)"):
        xetile_to_xegpu(func_with(NewOp))


class Renaming(Conversion):
    legal = (C.ReturnOp,)

    @converts(NewOp)
    def base(self, op):
        self.set(op.result, self.emit(C.UnaryOp, "math.absi", self.one(op.operands[0])).result)

    @converts(NewerOp)
    def derived(self, op):
        self.set(op.result, self.emit(C.CastOp, "arith.bitcast", self.one(op.operands[0]), i32).result)


class Inheriting(Renaming):
    pass


def test_dispatch_by_type_most_specific_class_first_and_inherited():
    assert [op.name for op in Renaming(func_with(NewOp)).run().body.ops] == ["math.absi", "func.return"]
    assert [op.name for op in Renaming(func_with(NewerOp)).run().body.ops] == ["arith.bitcast", "func.return"]
    assert [op.name for op in Inheriting(func_with(NewerOp)).run().body.ops] == ["arith.bitcast", "func.return"]


class Forgetful(Conversion):
    """Declares NewOp legal but also that it must be gone: the post-condition catches it."""

    legal = (NewOp, C.ReturnOp)
    illegal = (NewOp,)


def test_an_illegal_op_left_after_the_pass_fails():
    with pytest.raises(xetile.CompilationError, match="Forgetful: test.new_op .* is left after the pass"):
        Forgetful(func_with(NewOp)).run()


def test_the_subclass_of_an_illegal_op_is_not_illegal():
    assert [op.name for op in Forgetful(func_with(NewerOp)).run().body.ops] == ["test.newer_op", "func.return"]
