"""User-facing errors: every message names the rule broken and, where there is one, the kernel's source line."""
from __future__ import annotations

import difflib
import linecache
import os
import sys
import warnings
from dataclasses import dataclass


def did_you_mean(name: str, candidates) -> str:
    """"; did you mean 'X'?" naming the candidate nearest to a misspelt `name`, or "" when none is near."""
    close = difflib.get_close_matches(name, [c for c in candidates if c != name], n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


@dataclass(frozen=True)
class Loc:
    filename: str
    line: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}"

    def source(self) -> str:
        return linecache.getline(self.filename, self.line).strip()


def located(message: str, loc: Loc | None) -> str:
    """`message` after the kernel's file and line, with the line's source text below."""
    if loc is None:
        return message
    text = f"{loc}: {message}"
    source = loc.source()
    return f"{text}\n    {source}" if source else text


class CompilationError(Exception):
    """A kernel that the tracer or a verifier rejects. Raised before anything runs."""

    def __init__(self, message: str, loc: Loc | None = None):
        self.message = message
        self.loc = loc
        super().__init__(located(message, loc))


class DeviceAssertionError(AssertionError):
    """A `device_assert` whose condition was false where the numpy interpreter ran it. The workgroups before
    the failing one have run: arrays they wrote are left as they wrote them."""

    def __init__(self, message: str, loc: Loc | None = None):
        self.message = message
        self.loc = loc
        super().__init__(located(message, loc))


class InterpretCheckError(DeviceAssertionError):
    """A data race, a read of uninitialized shared local memory or an access outside an array that the numpy
    interpreter's checking mode (XETILE_INTERPRET_CHECK=1 or `check=True` at launch: ir/checking.py) found: an
    assertion every kernel makes implicitly. Raised before the op's access; workgroups before it have run."""


class LaunchError(Exception):
    """A launch whose arguments, grid or options do not fit the kernel. Raised before anything runs."""


class BlockIOFallbackWarning(UserWarning):
    """An array the kernel reads or writes whose memory 2D block messages cannot address (base alignment, row pitch,
    width: target/block_io.py names the rule), so its tiles go element by element: slower, and on GPUs more registers.
    Given once per kernel compile; XETILE_QUIET=1 silences it."""


class UnvectorizedKernelWarning(UserWarning):
    """A kernel the OpenCL CPU compiler did not vectorize for its target, which then runs as compiled for the
    target's fallback (Target.unvectorized_fallback: the `cpu` target's is `xe-emulated`, each block through its
    builtin; slower). Given once per kernel compile; XETILE_QUIET=1 silences it."""


def warn(message: str, category: type[Warning]) -> None:
    """warnings.warn, attributed to the first frame outside xetile_jit (the user's launch or warmup line), so that
    the warning shows the user's source line and Python's filters see the user's module."""
    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(0), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class ParseError(Exception):
    """IR text (ir/parser.py) that is not the printer's syntax, or names what the text does not define: the message
    names the line and column (1-based) where reading stopped."""

    def __init__(self, message: str, line: int, column: int):
        self.message, self.line, self.column = message, line, column
        super().__init__(f"line {line}, column {column}: {message}")
