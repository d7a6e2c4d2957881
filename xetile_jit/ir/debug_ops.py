"""Debugging ops: `cf.assert` (`xetile.device_assert`) and `gpu.printf` (`xetile.device_print`).

`gpu.printf` prints one line per workgroup for scalars (every work-item holds the same ones, so the first of
the workgroup prints them: subgroup 0 in the interpreters, work-item 0 in device code, codegen/llvm/core.py), and one line
per element of a vector, with the element's index, by whichever subgroup and lane holds it (one of them where
several do). Numbers are written as C's printf writes them (%d, %ld, %f), so the interpreters' lines and the
device's are the same text, in another order.

The numpy interpreter checks an assertion over every element of its condition, out-of-bounds elements of a tile
included (they hold the load's padding). The device code has none: the pipeline drops them before layout
propagation (compiler/pipeline.py), and asking for them on a device with XETILE_DEBUG=1 is a NotImplementedError
(compiler/driver.py), since the SPIR-V path has no way yet to stop a kernel and report.
"""
from __future__ import annotations

import json
import sys

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


def printf_format(prefix: str, dtypes, indexed: bool) -> str:
    """The line's C format: the workgroup id, a vector element's index when there is one, the prefix, the values.
    The interpreters format with it too (Python's % reads C's conversions), so both write the same text."""
    parts = ["pid (%ld, %ld, %ld)", *(["idx (%ld, %ld)"] if indexed else []), prefix.replace("%", "%%"),
             *map(printf_conversion, dtypes)]
    return " ".join(parts) + "\n"


def printf_value(value, dtype: DType):
    return float(value) if dtype.is_float else int(value)


class DevicePrintOp(Operation):
    """`values` (at most one of them a vector) and, with a vector, the index operands `origin` of its first element
    in the workgroup's vector and the leading part `valid` of it that is real: each pass that cuts the vector into
    pieces moves the origin along and cuts `valid`, so the padding of blocks is not printed."""

    name = "gpu.printf"
    effects = ()  # writes to the process's stdout, not to kernel memory

    def __init__(self, prefix: str, values, origin=(), valid=None, loc=None):
        super().__init__([*values, *origin], [], loc=loc)
        self.prefix, self.valid, self.count = prefix, valid, len(values)

    @property
    def values(self) -> tuple[Value, ...]:
        return self.operands[:self.count]

    @property
    def origin(self) -> tuple[Value, ...]:
        return self.operands[self.count:]

    @property
    def vector(self) -> int | None:
        """The position of the vector among the values, if one is."""
        return next((i for i, v in enumerate(self.values) if isinstance(v.type, VectorType)), None)

    @property
    def format_string(self) -> str:
        return printf_format(self.prefix, [v.type.dtype for v in self.values], self.vector is not None)

    def verify(self):
        if not all(isinstance(v.type, (ScalarType, VectorType)) for v in self.values):
            raise self.error(f"prints scalars and vectors, got {', '.join(str(v.type) for v in self.values)}",
                             "gpu.printf operands")
        vectors = sum(isinstance(v.type, VectorType) for v in self.values)
        if vectors > 1 or len(self.origin) != 2 * vectors or (self.valid is None) != (vectors == 0):
            raise self.error("prints at most one vector, with the index of its first element and its valid part",
                             "gpu.printf operands")

    def format(self, p) -> str:
        values = ", ".join(p.name(v) for v in self.values)
        types = ", ".join(str(v.type) for v in self.values)
        origin = f" at [{', '.join(p.name(v) for v in self.origin)}] valid {list(self.valid)}" if self.origin else ""
        return f" {json.dumps(self.prefix)}" + (f" {values}{origin} : {types}" if values else "")

    def interpret(self, interp, *operands):
        values, origin = operands[:self.count], operands[self.count:]
        if self.vector is None:
            if not interp.subgroup_id:  # the same scalars in every subgroup: print them once
                self.write(interp, values)
            return
        piece = values[self.vector]
        for i, j in np.ndindex(*self.valid):
            self.write_element(interp, values, (int(origin[0]) + i, int(origin[1]) + j), piece[i, j])

    def write_element(self, interp, values, index, element) -> None:
        values = list(values)
        values[self.vector] = element
        self.write(interp, values, index)

    def write(self, interp, values, index=()) -> None:
        numbers = [printf_value(v, d.type.dtype) for v, d in zip(values, self.values)]
        sys.stdout.write(self.format_string % (*interp.program_id, *index, *numbers))
        sys.stdout.flush()
