"""The on-disk compile cache (docs/DESIGN.md §4 Runtime, "Compile cache").

Entries live in `XETILE_CACHE_DIR` (default `~/.cache/xetile_jit`), one file per key. A key is the sha256 of a
stable text form of its parts (the compiler's own hash, source hash, signature, constexprs, target, options): the
same in every process,
type-exact (2, 2.0 and True differ), float-exact (by bits: -0.0 and 0.0 differ, NaN is itself) and independent
of dict order; a part without a stable form (an object
whose repr is its address) is a TypeError rather than a key that silently never hits.

An entry is a dict of `bytes` or `str` fields (SPIR-V, IR texts). The file is one header line,
`xetile-cache 1 <sha256 of the body>`, and a JSON body that tags each field with its type (bytes in base64);
JSON rather than pickle, because a cache file is never trusted: a file that is unreadable, truncated or fails
its checksum makes `get` return None and is deleted, so the kernel is recompiled; so does `discard`, for an
intact file whose fields the caller cannot use. Writes are atomic: a temporary file in the same directory, then
`os.replace`, so readers and concurrent writers see either no entry or a whole one; there is no fsync, since a
file a crash truncates fails its checksum. A cache directory that cannot be written is a warning, not an error,
but for a read-only one (a read-only filesystem or a directory this user may not write, such as a cache made
ahead and shipped in an image): its entries are read, a hit keeps its mtime, and writes are skipped quietly.

The checksum only detects damage: anyone can compute it. What keeps another user's SPIR-V (native code on the CPU
device) out is that the cache is private. The directory is created mode 0700 (missing parents 0700 too,
whatever the umask), and a directory or an entry that is not owned by this process's effective user, or that
the group or others may write, is refused with a warning: a refused directory (warned once per process) is treated
as absent (`get` finds nothing, `put` keeps nothing), so kernels compile in memory; a refused entry is deleted
and recompiled. Entries are opened with O_NOFOLLOW | O_NONBLOCK and must be regular files, so a symlink or a
FIFO at an entry's path is refused rather than followed or waited on.

Size: `XETILE_CACHE_MAX_MB` (MiB, default 1024; 0 keeps nothing) caps the entries' total size. A hit refreshes
the entry's mtime; after each `put` that takes the total over the cap, the entries least recently used (oldest
mtime) are deleted until it fits. Only `put` scans the directory.
"""
from __future__ import annotations

import base64
import contextlib
import dataclasses
import errno
import functools
import hashlib
import json
import math
import os
import stat
import struct
import tempfile
import warnings
from pathlib import Path

import numpy as np

from ..errors import LaunchError

MAGIC = b"xetile-cache 1"
PACKAGE = Path(__file__).resolve().parent.parent
DEFAULT_MAX_MB = 1024
SHARED_WRITE = stat.S_IWGRP | stat.S_IWOTH
READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)  # a write to a read-only cache fails with these
_warned_directories: set[str] = set()


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
        self.max_bytes = max_bytes_from_environment()

    @staticmethod
    def key(*parts) -> str:
        return hashlib.sha256(stable_repr(parts).encode()).hexdigest()

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.entry"

    def get(self, key: str) -> dict | None:
        if not self.trusted_directory():
            return None
        try:
            return decode(read_private_file(self.path(key)))
        except FileNotFoundError:
            return None
        except UntrustedFile as e:
            warnings.warn(f"xetile_jit: refusing the compile cache entry {self.path(key)}: {e}; it is deleted and "
                          "the kernel recompiled", RuntimeWarning)
        except Exception:  # noqa: BLE001 - whatever is wrong with the file, the entry is not trusted
            pass
        self.discard(key)
        return None

    def put(self, key: str, entry: dict) -> None:
        data = encode(entry)
        try:
            make_private_directory(self.directory)
            if not self.trusted_directory():
                return
            write_atomically(self.path(key), data)
        except OSError as e:
            if e.errno not in READ_ONLY:
                warnings.warn(f"xetile_jit: cannot write the compile cache entry {self.path(key)}: {e}",
                              RuntimeWarning)
            return
        self.evict()

    def discard(self, key: str) -> None:
        """Deletes the entry (a symlink or FIFO there is removed itself, never followed)."""
        with contextlib.suppress(OSError):
            self.path(key).unlink()

    def trusted_directory(self) -> bool:
        """Whether the directory exists and is private (module docstring); warns once about one that is not."""
        try:
            problem = untrusted(os.stat(self.directory), stat.S_ISDIR, "a directory")
        except (FileNotFoundError, NotADirectoryError):  # absent, as is a path under a file
            return False
        except OSError as e:
            problem = str(e)
        if problem and str(self.directory) not in _warned_directories:
            _warned_directories.add(str(self.directory))
            warnings.warn(f"xetile_jit: not using the compile cache directory {self.directory}: {problem}; kernels "
                          "compile in memory", RuntimeWarning)
        return problem is None

    def evict(self) -> None:
        """Deletes the least recently used entries until their total size is within the cap."""
        entries = []
        with contextlib.suppress(OSError), os.scandir(self.directory) as scan:
            for item in scan:
                with contextlib.suppress(OSError):
                    if item.name.endswith(".entry") and item.is_file(follow_symlinks=False):
                        info = item.stat(follow_symlinks=False)
                        entries.append((info.st_mtime_ns, info.st_size, item.path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):  # another process may have evicted it already
                os.unlink(path)
            total -= size


class UntrustedFile(Exception):
    """A cache file another user could have written, or that is not a regular file."""


def untrusted(info: os.stat_result, is_kind, kind: str) -> str | None:
    """Why a file with this stat may hold someone else's bytes (None when it may not)."""
    if not is_kind(info.st_mode):
        return f"not {kind}"
    if info.st_uid != os.geteuid():
        return f"owned by uid {info.st_uid}, not by this user (uid {os.geteuid()})"
    if info.st_mode & SHARED_WRITE:
        return f"writable by its group or others (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def read_private_file(path: Path) -> bytes:
    """The bytes of `path` if it is a regular file of this user's that nobody else may write; raises
    UntrustedFile otherwise (a symlink fails to open, a FIFO opens without waiting and fails the check)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UntrustedFile("a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as f:
        problem = untrusted(os.fstat(fd), stat.S_ISREG, "a regular file")
        if problem:
            raise UntrustedFile(problem)
        data = f.read()
        with contextlib.suppress(OSError):  # a read-only cache (module docstring) is read all the same
            os.utime(fd)  # the entry was used: least recently used goes first
    return data


def make_private_directory(directory: Path) -> None:
    """Creates `directory` and its missing parents mode 0700, whatever the umask (mkdir, then chmod: changing
    the umask would race with other threads)."""
    if directory.is_dir():
        return
    make_private_directory(directory.parent)
    with contextlib.suppress(FileExistsError):  # another process made it; trusted_directory checks it
        os.mkdir(directory, 0o700)
        os.chmod(directory, 0o700)


def max_bytes_from_environment() -> int:
    text = os.environ.get("XETILE_CACHE_MAX_MB", str(DEFAULT_MAX_MB))
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = math.nan
    if not 0 <= megabytes < math.inf:
        raise LaunchError(f"XETILE_CACHE_MAX_MB must be a non-negative number of MiB, got {text!r}")
    return int(megabytes * 2**20)


def write_atomically(path: Path, data: bytes) -> None:
    """Writes a temporary file next to `path` (mode 0600, by mkstemp) and renames it, so `path` is always absent
    or whole."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
