"""Where the current Intel GPU compiler stack is (ocloc 26.x with IGC 2.x, spirv-tools 2026): the one that takes
the 2025 SPIR-V extensions of the "spirv" builtin ABI and knows Xe2 and Xe3 devices (ocloc.py uses it for those).

`XETILE_OCLOC` names its ocloc; otherwise `python -m xetile_jit install-gpu-compiler` puts the stack in
`root()` (the user's cache directory), with one launcher script per tool in `root()/bin`, and it is found there.
The 2022 stack of Debian 12 (`ocloc`, `iga64` on the PATH) checks the "legacy" ABI.
"""
from __future__ import annotations

import os
from pathlib import Path

TOOLS = ("ocloc", "spirv-val", "iga64")


def root() -> Path:
    """The install directory: $XDG_CACHE_HOME (default ~/.cache)/xetile_jit/gpu-compiler."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "xetile_jit" / "gpu-compiler"


def find_tool(name: str) -> str | None:
    """The current stack's `name` (one of TOOLS) as an executable path, or None when it is not installed.
    XETILE_OCLOC names ocloc, and the other tools beside it when they are there."""
    chosen = os.environ.get("XETILE_OCLOC")
    directory = Path(chosen).parent if chosen else root() / "bin"
    path = Path(chosen) if chosen and name == "ocloc" else directory / name
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None
