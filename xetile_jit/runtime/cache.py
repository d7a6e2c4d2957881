"""The on-disk compile cache (DESIGN 4, "Compile cache").

Entries live in `XETILE_CACHE_DIR` (default `~/.cache/xetile_jit`), one file per key. A key is the sha256 of a
stable text form of its parts (the compiler's own hash, source hash, signature, constexprs, target, options): the
same in every process,
type-exact (2, 2.0 and True differ), float-exact (by bits: -0.0 and 0.0 differ, NaN is itself) and independent
of dict order; a part without a stable form (an object
whose repr is its address) is a TypeError rather than a key that silently never hits.

An entry is a dict of `bytes` or `str` fields (SPIR-V, IR texts). The file is one header line,
`xetile-cache 1 <sha256 of the body>`, and a JSON body that tags each field with its type (bytes in base64);
JSON rather than pickle, because a cache file is never trusted: a file that is unreadable, truncated or fails
its checksum makes `get` return None and is deleted, so the kernel is recompiled. Writes are atomic: a
temporary file in the same directory, then `os.replace`, so readers and concurrent writers see either no
entry or a whole one; there is no fsync, since a file a crash truncates fails its checksum. A cache directory
that cannot be written is a warning, not an error.
"""
from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import struct
import tempfile
import warnings
from pathlib import Path

import numpy as np

MAGIC = b"xetile-cache 1"
PACKAGE = Path(__file__).resolve().parent.parent


@functools.cache
def compiler_hash() -> str:
    """sha256 of xetile_jit's own sources: a changed compiler never reuses what an older one compiled."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def stable_repr(part) -> str:
    """A text form of a key part that is the same in every process (see the module docstring)."""
    if isinstance(part, float):  # by its bits: -0.0 is not 0.0, and every NaN equals itself
        return f"float({struct.pack('<d', part).hex()})"
    if isinstance(part, np.generic):
        return f"{part.dtype.name}({part.tobytes().hex()})"
    if part is None or isinstance(part, (str, bytes, int, np.dtype)):
        return repr(part)
    if isinstance(part, type):
        return f"{part.__module__}.{part.__qualname__}"
    if isinstance(part, (list, tuple)):
        return f"{type(part).__name__}({', '.join(map(stable_repr, part))})"
    if isinstance(part, dict):
        return f"dict({', '.join(sorted(f'{stable_repr(k)}: {stable_repr(v)}' for k, v in part.items()))})"
    if dataclasses.is_dataclass(part):
        fields = (f"{f.name}={stable_repr(getattr(part, f.name))}" for f in dataclasses.fields(part))
        return f"{stable_repr(type(part))}({', '.join(fields)})"
    raise TypeError(f"cache key part {part!r} ({type(part).__name__}) has no stable representation")


def encode(entry: dict) -> bytes:
    body = json.dumps({name: encode_field(name, value) for name, value in entry.items()}, sort_keys=True).encode()
    return header(body) + b"\n" + body


def decode(data: bytes) -> dict:
    """The entry in a cache file's bytes; raises when they are not a whole, intact entry."""
    first_line, _, body = data.partition(b"\n")
    if first_line != header(body):
        raise ValueError("bad header or checksum")
    return {name: decode_field(*field) for name, field in json.loads(body).items()}


def header(body: bytes) -> bytes:
    return MAGIC + b" " + hashlib.sha256(body).hexdigest().encode()


def encode_field(name: str, value) -> list[str]:
    if isinstance(value, bytes):
        return ["bytes", base64.b64encode(value).decode("ascii")]
    if isinstance(value, str):
        return ["str", value]
    raise TypeError(f"cache entry field {name!r} must be bytes or str, got {type(value).__name__}")


def decode_field(tag: str, text: str) -> bytes | str:
    if tag == "bytes":
        return base64.b64decode(text, validate=True)
    if tag == "str":
        return text
    raise ValueError(f"unknown field type {tag!r}")


class DiskCache:
    def __init__(self, directory=None):
        self.directory = Path(directory or os.environ.get("XETILE_CACHE_DIR")
                              or Path.home() / ".cache" / "xetile_jit")

    @staticmethod
    def key(*parts) -> str:
        return hashlib.sha256(stable_repr(parts).encode()).hexdigest()

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.entry"

    def get(self, key: str) -> dict | None:
        path = self.path(key)
        try:
            return decode(path.read_bytes())
        except FileNotFoundError:
            return None
        except Exception:  # whatever is wrong with the file, it is not trusted
            with contextlib.suppress(OSError):
                path.unlink()
            return None

    def put(self, key: str, entry: dict) -> None:
        data = encode(entry)
        try:
            write_atomically(self.path(key), data)
        except OSError as e:
            warnings.warn(f"xetile_jit: cannot write the compile cache entry {self.path(key)}: {e}", RuntimeWarning)


def write_atomically(path: Path, data: bytes) -> None:
    """Writes a temporary file next to `path` and renames it, so `path` is always absent or whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
