"""User-facing errors: every message names the rule broken and, where there is one, the kernel's source line."""
from __future__ import annotations

import linecache
from dataclasses import dataclass


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


class LaunchError(Exception):
    """A launch whose arguments, grid or options do not fit the kernel. Raised before anything runs."""
