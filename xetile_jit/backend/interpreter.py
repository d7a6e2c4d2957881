"""The numpy interpreter: runs IR op by op, workgroups of the grid one after another.

Each op's numpy rule is its `interpret` method; this module only walks blocks and keeps the values.
It is the reference every backend is checked against and the device "numpy".
"""
from __future__ import annotations

import itertools

from ..ir.core import Block, FuncOp
from ..ir.core_ops import ReturnOp, YieldOp


class Interpreter:
    def __init__(self, func: FuncOp):
        self.func = func
        self.env: dict = {}
        self.grid = (1, 1, 1)
        self.program_id = (0, 0, 0)

    def run(self, grid: tuple[int, int, int], args) -> None:
        self.grid = grid
        for z, y, x in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
            self.program_id = (x, y, z)
            self.env = {}
            self.run_block(self.func.body, args)

    def run_block(self, block: Block, args) -> list:
        env = self.env
        env.update(zip(block.args, args))
        for op in block.ops:
            operands = [env[v] for v in op.operands]
            if isinstance(op, (YieldOp, ReturnOp)):
                return operands
            out = op.interpret(self, *operands)
            if op.regions or len(op.results) > 1:  # region ops return what their region yielded
                env.update(zip(op.results, out))
            elif op.results:
                env[op.results[0]] = out
        return []
