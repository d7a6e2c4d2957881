"""Debugging ops (issue 14, item 3): `cf.assert`, what `xetile.device_assert` traces to.

The numpy interpreter checks an assertion over every element of its condition, out-of-bounds elements of a tile
included (they hold the load's padding). The device code has none: the pipeline drops them before layout
propagation (backend/pipeline.py), and asking for them on a device with XETILE_DEBUG=1 is a NotImplementedError
(frontend/compiler.py), since the SPIR-V path has no way yet to stop a kernel and report.
"""
from __future__ import annotations

import json

import numpy as np

from ..errors import DeviceAssertionError
from .core import Operation, Value
from .types import ScalarType, VectorType, bool_

ASSERT_RULE = "cf.assert takes an i1 scalar or vector"


class DeviceAssertOp(Operation):
    name = "cf.assert"
    effects = ()  # stops the kernel, touches no memory

    def __init__(self, cond: Value, message: str, loc=None):
        super().__init__([cond], [], loc=loc)
        self.message = message

    def verify(self):
        t = self.operands[0].type
        if not isinstance(t, (ScalarType, VectorType)) or t.dtype != bool_:
            raise self.error(f"condition must be i1, got {t}", ASSERT_RULE)

    def format(self, p) -> str:
        cond = self.operands[0]
        return f" {p.name(cond)}, {json.dumps(self.message)} : {cond.type}"

    def interpret(self, interp, cond):
        cond = np.asarray(cond)
        if not cond.all():
            failed = f"{cond.size - int(np.count_nonzero(cond))} of {cond.size} elements" if cond.ndim else "scalar"
            raise DeviceAssertionError(f"device_assert failed: {self.message or 'assertion failed'} (workgroup "
                                       f"{interp.program_id}; {failed} false)", self.loc)
