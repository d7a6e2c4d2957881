"""Debugging ops (issue 14, item 3): `cf.assert` (`xetile.device_assert`) and `gpu.printf` (`xetile.device_print`).

`gpu.printf` prints one line per workgroup for scalars (every work-item holds the same ones, so the first of
the workgroup prints them: subgroup 0 in the interpreters, work-item 0 in device code, to_llvm.py), or in the
numpy interpreter one line per element for vectors, with the element's index. Numbers are written as C's printf
writes them (%d, %ld, %f), so the interpreter's lines and the device's are the same text.

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
from .types import DType, ScalarType, VectorType, bool_

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


def printf_conversion(dtype: DType) -> str:
    """The printf conversion of a value of `dtype` (device code passes floats as double, small ints as i32)."""
    return "%f" if dtype.is_float else "%ld" if dtype.bits == 64 else "%d"


def printf_text(value, dtype: DType) -> str:
    return printf_conversion(dtype) % (float(value) if dtype.is_float else int(value))


class DevicePrintOp(Operation):
    name = "gpu.printf"
    effects = ()  # writes to the process's stdout, not to kernel memory

    def __init__(self, prefix: str, values, loc=None):
        super().__init__(list(values), [], loc=loc)
        self.prefix = prefix

    @property
    def vector_shape(self) -> tuple[int, ...] | None:
        shapes = {v.type.shape for v in self.operands if isinstance(v.type, VectorType)}
        return shapes.pop() if shapes else None

    def verify(self):
        if not all(isinstance(v.type, (ScalarType, VectorType)) for v in self.operands):
            raise self.error(f"prints scalars and vectors, got {', '.join(str(v.type) for v in self.operands)}",
                             "gpu.printf operands")
        if len({v.type.shape for v in self.operands if isinstance(v.type, VectorType)}) > 1:
            raise self.error("vectors printed together must have one shape", "gpu.printf operands")

    def format(self, p) -> str:
        values = ", ".join(p.name(v) for v in self.operands)
        types = ", ".join(str(v.type) for v in self.operands)
        return f" {json.dumps(self.prefix)}" + (f" {values} : {types}" if values else "")

    def interpret(self, interp, *values):
        if getattr(interp, "subgroup_id", 0) != 0:
            return
        x, y, z = interp.program_id
        head = f"pid ({x}, {y}, {z})"
        dtypes = [v.type.dtype for v in self.operands]
        shape = self.vector_shape
        if shape is None:
            print(self.line(head, values, dtypes), flush=True)
            return
        arrays = [np.broadcast_to(v, shape) for v in values]
        for i, j in np.ndindex(*shape):
            print(self.line(f"{head} idx ({i}, {j})", [a[i, j] for a in arrays], dtypes), flush=True)

    def line(self, head: str, values, dtypes) -> str:
        return " ".join([head, self.prefix, *(printf_text(v, d) for v, d in zip(values, dtypes))])
