"""The IR mutation API (ir/core.py): use lists, insertion, replace-all-uses, erase and clone with regions."""
from __future__ import annotations

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.ir.interpreter import Interpreter
from xetile_jit.ir import core_ops as C
from xetile_jit.ir.core import Builder, FuncOp
from xetile_jit.ir.types import i32 as I32


def new_func():
    func = FuncOp("f", [I32, I32], ["a", "b"], {})
    return func, Builder(func.body)


def test_uses_tracked_through_create_set_operand_and_replace():
    func, b = new_func()
    a, x = func.args
    add = b.create(C.BinaryOp, "arith.addi", a, a)
    mul = b.create(C.BinaryOp, "arith.muli", add.result, x)
    assert sorted(i for op, i in a.uses if op is add) == [0, 1]
    assert add.result.uses == [(mul, 0)] and x.uses == [(mul, 1)]
    mul.set_operand(1, a)
    assert x.uses == [] and (mul, 1) in a.uses
    add.result.replace_all_uses_with(x)
    assert mul.operands == (x, a) and add.result.uses == [] and x.uses == [(mul, 0)]


def test_operands_cannot_be_assigned_behind_the_use_lists():
    func, b = new_func()
    add = b.create(C.BinaryOp, "arith.addi", *func.args)
    with pytest.raises(TypeError):
        add.operands[0] = func.args[1]


def test_insert_before_after_and_erase_keep_parent_and_uses():
    func, b = new_func()
    a, x = func.args
    add = b.create(C.BinaryOp, "arith.addi", a, x)
    ret = b.create(C.ReturnOp)
    sub = func.body.insert_before(ret, C.BinaryOp("arith.subi", a, x))
    first = func.body.insert_after(add, C.BinaryOp("arith.muli", x, x))
    assert func.body.ops == [add, first, sub, ret]
    assert all(op.parent is func.body for op in func.body.ops)
    first.erase()
    assert first.parent is None and func.body.ops == [add, sub, ret]
    assert [op for op, _ in x.uses] == [add, sub]


def test_erase_of_an_op_with_uses_raises():
    func, b = new_func()
    add = b.create(C.BinaryOp, "arith.addi", *func.args)
    b.create(C.BinaryOp, "arith.muli", add.result, add.result)
    with pytest.raises(xetile.CompilationError, match="still used by arith.muli"):
        add.erase()
    assert add.parent is func.body


def test_inserting_an_op_twice_raises():
    func, b = new_func()
    add = b.create(C.BinaryOp, "arith.addi", *func.args)
    with pytest.raises(xetile.CompilationError, match="already in a block"):
        func.body.append(add)


def loop_func():
    """sum = a; for i in [0, b): sum = sum + i; return value is the loop's result."""
    func, b = new_func()
    a, n = func.args
    zero = b.create(C.ConstantOp, 0, I32).result
    one = b.create(C.ConstantOp, 1, I32).result
    loop = b.create(C.ForOp, zero, n, one, [a], "i", ["acc"])
    with b.at_end_of(loop.body):
        iv, acc = loop.body.args
        b.create(C.YieldOp, [b.create(C.BinaryOp, "arith.addi", acc, iv).result])
    return func, b, loop


def test_clone_with_regions_maps_values_inside_the_body():
    func, b, loop = loop_func()
    a, n = func.args
    mapping = {a: n}  # the clone starts from b instead of a
    copy = func.body.insert_after(loop, loop.clone(mapping))
    iv, acc = copy.body.args
    add, yield_ = copy.body.ops
    assert copy.operands[3] is n and copy.operands[:3] == loop.operands[:3]
    assert add.operands == (acc, iv) and yield_.operands == (add.result,)
    assert add.parent is copy.body and copy.body is not loop.body
    assert mapping[loop.result] is copy.result and mapping[loop.body.args[1]] is acc
    assert all(op is not loop.body.ops[0] for op, _ in acc.uses)  # the clone reads its own arguments
    assert loop.body.args[1].uses == [(loop.body.ops[0], 0)]  # and the original keeps its own
    b.create(C.ReturnOp)
    interp = Interpreter(func)
    interp.run_block(func.body, [np.int32(10), np.int32(4)])
    assert interp.env[loop.result] == 10 + 0 + 1 + 2 + 3 and interp.env[copy.result] == 4 + 0 + 1 + 2 + 3


def test_detach_moves_an_op_and_a_detached_op_cannot_leave_again():
    func, b = new_func()
    add = b.create(C.BinaryOp, "arith.addi", *func.args)
    ret = b.create(C.ReturnOp)
    func.body.insert_after(ret, add.detach())
    assert func.body.ops == [ret, add] and add.parent is func.body
    add.erase()
    with pytest.raises(xetile.CompilationError, match="is in no block"):
        add.erase()
