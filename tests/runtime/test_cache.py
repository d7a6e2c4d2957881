"""docs/DESIGN.md §4 on-disk compile cache: round trips, stable keys across processes, atomic writes, corrupt entries
rejected and removed, XETILE_CACHE_DIR; a private directory (owner and mode checked, no links or FIFOs
followed) and a size cap with LRU eviction (XETILE_CACHE_MAX_MB)."""
from __future__ import annotations

import errno
import hashlib
import json
import multiprocessing
import os
import re
import stat
import subprocess
import sys
import tempfile
import threading
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.compiler.driver import CompiledArtifact
from xetile_jit.ir.types import COL_MAJOR
from xetile_jit.runtime.args import ArraySpec, ScalarSpec
from xetile_jit.runtime.cache import DiskCache, decode, encode, header, untrusted

ENTRY = {"spirv": bytes(range(256)) * 3, "xetile": "func.func @k() {\n  return\n}\n", "isa": ""}
SIGNATURE = (ArraySpec(xetile.float16, COL_MAJOR), ScalarSpec(xetile.int32))
CONSTEXPRS = ((int, 64), (float, 2.0), (tuple, ((int, 1), (bool, True))))


def key_parts(**options):
    return "5d41402abc4b2a76", SIGNATURE, CONSTEXPRS, "xe-hpc", {"sg_layout": (8, 4), **options}


def run_python(code: str, **env) -> str:
    result = subprocess.run([sys.executable, "-c", code], env=os.environ | env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_round_trip(tmp_path):
    cache = DiskCache(tmp_path)
    key = cache.key(*key_parts())
    assert cache.get(key) is None
    cache.put(key, ENTRY)
    assert cache.get(key) == ENTRY
    assert list(tmp_path.iterdir()) == [cache.path(key)]  # no temporary files left


def test_fresh_process_reads_the_entry(tmp_path):
    cache = DiskCache(tmp_path)
    key = cache.key(*key_parts())
    cache.put(key, ENTRY)
    code = ("from xetile_jit.runtime.cache import DiskCache; import hashlib; "
            f"e = DiskCache({str(tmp_path)!r}).get({key!r}); "
            "print(hashlib.sha256(e['spirv']).hexdigest(), len(e['xetile']), repr(e['isa']))")
    digest, length, isa = run_python(code).split()
    assert digest == hashlib.sha256(ENTRY["spirv"]).hexdigest()
    assert int(length) == len(ENTRY["xetile"]) and isa == "''"


def test_keys_are_stable_across_processes():
    code = ("from xetile_jit.runtime.cache import DiskCache; import xetile_jit as x; "
            "from xetile_jit.ir.types import COL_MAJOR; from xetile_jit.runtime.args import ArraySpec, ScalarSpec; "
            "print(DiskCache.key('5d41402abc4b2a76', (ArraySpec(x.float16, COL_MAJOR), ScalarSpec(x.int32)), "
            "((int, 64), (float, 2.0), (tuple, ((int, 1), (bool, True)))), 'xe-hpc', {'sg_layout': (8, 4)}))")
    assert {run_python(code, PYTHONHASHSEED=seed) for seed in ("1", "2")} == {DiskCache.key(*key_parts())}


def test_keys_distinguish_types_and_ignore_dict_order():
    assert len({DiskCache.key(2), DiskCache.key(2.0), DiskCache.key(True), DiskCache.key("2"), DiskCache.key((2,)),
                DiskCache.key([2])}) == 6
    assert DiskCache.key({"a": 1, "b": np.dtype(np.float32)}) == DiskCache.key({"b": np.dtype(np.float32), "a": 1})
    assert DiskCache.key(*key_parts()) != DiskCache.key(*key_parts(sg_data=(32, 64)))
    with pytest.raises(TypeError, match="has no stable representation"):
        DiskCache.key(object())


def test_float_keys_are_bits():
    """0.0 == -0.0 but they compile differently; NaN != NaN but must find its own entry; repr() gives "nan" for
    NaNs of either sign, their bits differ."""
    assert DiskCache.key(0.0) != DiskCache.key(-0.0)
    assert DiskCache.key(float("nan")) == DiskCache.key(float("nan"))
    assert DiskCache.key(float("nan")) != DiskCache.key(-float("nan"))
    assert DiskCache.key(np.float32("nan")) != DiskCache.key(-np.float32("nan"))
    assert DiskCache.key(np.float32(0.0)) != DiskCache.key(np.float32(-0.0))
    assert DiskCache.key(np.float16(1)) != DiskCache.key(np.float32(1))


def corruptions(data: bytes) -> dict:
    return {"truncated": data[:len(data) // 2], "flipped byte": data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],
            "empty": b"", "garbage": os.urandom(100), "no header": data.partition(b"\n")[2],
            "other version": data.replace(b"xetile-cache 1", b"xetile-cache 2", 1)}


@pytest.mark.parametrize("kind", list(corruptions(b"x\n" * 10)))
def test_corrupt_entry_is_dropped(tmp_path, kind):
    cache = DiskCache(tmp_path)
    key = cache.key(*key_parts())
    cache.put(key, ENTRY)
    cache.path(key).write_bytes(corruptions(cache.path(key).read_bytes())[kind])
    assert cache.get(key) is None
    assert not cache.path(key).exists()


def test_entry_with_a_valid_checksum_but_bad_fields_is_dropped(tmp_path):
    cache = DiskCache(tmp_path)
    key = cache.key("k")
    body = b'{"spirv": ["pickle", "gASVAAAA"]}'
    cache.path(key).write_bytes(header(body) + b"\n" + body)
    assert cache.get(key) is None and not cache.path(key).exists()


def write_many(directory: str, key: str, writer: int) -> None:
    cache = DiskCache(directory)
    for i in range(20):
        cache.put(key, {"spirv": bytes([writer]) * 300_000, "xetile": f"writer {writer} round {i}"})


def test_concurrent_writers_leave_whole_entries(tmp_path):
    cache = DiskCache(tmp_path)
    key = cache.key("contended")
    with ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(write_many, str(tmp_path), key, w) for w in range(4)]
        while not all(f.done() for f in futures):
            entry = cache.get(key)
            if entry is not None:
                writer = entry["spirv"][0]
                assert entry["spirv"] == bytes([writer]) * 300_000 and entry["xetile"].startswith(f"writer {writer}")
        for f in futures:
            f.result()
    assert cache.get(key)["xetile"].endswith("round 19")
    assert [p.name for p in tmp_path.iterdir()] == [cache.path(key).name]  # no partial or temporary files


def test_directory_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path / "env"))
    assert DiskCache().directory == tmp_path / "env"
    assert DiskCache(tmp_path / "explicit").directory == tmp_path / "explicit"
    DiskCache().put("k", {"a": "b"})
    assert (tmp_path / "env" / "k.entry").exists()
    monkeypatch.delenv("XETILE_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert DiskCache().directory == tmp_path / "home" / ".cache" / "xetile_jit"


def test_unwritable_directory_warns(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    cache = DiskCache(tmp_path / "file" / "cache")
    with pytest.warns(RuntimeWarning, match="cannot write the compile cache entry"):
        cache.put("k", ENTRY)
    assert cache.get("k") is None


def test_fields_must_be_bytes_or_str(tmp_path):
    with pytest.raises(TypeError, match="cache entry field 'n' must be bytes or str, got int"):
        DiskCache(tmp_path).put("k", {"n": 3})
    assert not (tmp_path / "k.entry").exists()


# ---- the cache is private, bounded, and never blocks or follows links -------------------------------------

def test_directory_and_parents_are_created_private_under_umask_000(tmp_path):
    cache = DiskCache(tmp_path / "parent" / "cache")
    old = os.umask(0)
    try:
        cache.put("k", ENTRY)
    finally:
        os.umask(old)
    modes = [stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "parent", cache.directory, cache.path("k"))]
    assert modes == [0o700, 0o700, 0o600]
    assert cache.get("k") == ENTRY


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777], ids=oct)
def test_directory_others_may_write_is_refused(tmp_path, mode):
    cache = DiskCache(tmp_path / "cache")
    cache.put("k", ENTRY)
    cache.directory.chmod(mode)
    with pytest.warns(RuntimeWarning, match=re.escape(f"{cache.directory}: writable by its group or others "
                                                      f"(mode {mode:o}); kernels compile in memory")):
        assert cache.get("k") is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # warned once per directory
        cache.put("other", ENTRY)
        assert cache.get("k") is None
    assert sorted(p.name for p in cache.directory.iterdir()) == ["k.entry"]  # nothing written, nothing deleted


def test_directory_of_another_user_is_refused(tmp_path, monkeypatch):
    cache = DiskCache(tmp_path / "cache")
    cache.put("k", ENTRY)
    owner = cache.directory.stat().st_uid
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)
    with pytest.warns(RuntimeWarning, match=re.escape(f"owned by uid {owner}, not by this user (uid {owner + 1})")):
        assert cache.get("k") is None
    cache.put("other", ENTRY)
    assert sorted(p.name for p in cache.directory.iterdir()) == ["k.entry"]


def stat_of(mode: int, uid: int) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, uid, 0, 100, 0, 0, 0))


def test_ownership_and_mode_rules():
    me = os.geteuid()
    assert untrusted(stat_of(stat.S_IFREG | 0o600, me), stat.S_ISREG, "a regular file") is None
    assert untrusted(stat_of(stat.S_IFREG | 0o644, me), stat.S_ISREG, "a regular file") is None
    assert untrusted(stat_of(stat.S_IFREG | 0o600, me + 1), stat.S_ISREG, "a regular file") == (
        f"owned by uid {me + 1}, not by this user (uid {me})")
    assert untrusted(stat_of(stat.S_IFREG | 0o620, me), stat.S_ISREG, "a regular file") == (
        "writable by its group or others (mode 620)")
    assert untrusted(stat_of(stat.S_IFIFO | 0o600, me), stat.S_ISREG, "a regular file") == "not a regular file"
    assert untrusted(stat_of(stat.S_IFREG | 0o700, me), stat.S_ISDIR, "a directory") == "not a directory"


@pytest.mark.parametrize("mode", [0o660, 0o606], ids=oct)
def test_entry_others_may_write_is_refused_and_deleted(tmp_path, mode):
    cache = DiskCache(tmp_path)
    cache.put("k", ENTRY)
    cache.path("k").chmod(mode)
    with pytest.warns(RuntimeWarning, match=re.escape(f"k.entry: writable by its group or others (mode {mode:o})")):
        assert cache.get("k") is None
    assert not cache.path("k").exists()


def test_symlinked_entry_is_refused_not_followed(tmp_path):
    cache = DiskCache(tmp_path / "cache")
    cache.put("k", ENTRY)
    planted = tmp_path / "planted"
    cache.path("k").rename(planted)                     # a whole, valid entry, reached through a link
    cache.path("k").symlink_to(planted)
    with pytest.warns(RuntimeWarning, match="k.entry: a symbolic link; it is deleted and the kernel recompiled"):
        assert cache.get("k") is None
    assert not cache.path("k").is_symlink() and planted.exists()


def test_fifo_entry_is_refused_without_waiting(tmp_path):
    cache = DiskCache(tmp_path)
    os.mkfifo(cache.path("k"), 0o600)
    results = []
    reader = threading.Thread(target=lambda: results.append(cache.get("k")), daemon=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reader.start()
        reader.join(timeout=10)
    if reader.is_alive():                               # release the blocked reader before failing
        os.close(os.open(cache.path("k"), os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO entry blocked")
    assert results == [None]
    assert [str(w.message).split(": ", 2)[-1] for w in caught] == [
        "not a regular file; it is deleted and the kernel recompiled"]
    assert not cache.path("k").exists()


def sized_entry(tag: int) -> dict:
    return {"spirv": bytes([tag]) * 60_000}             # about 80 kB once base64-encoded


def test_least_recently_used_entries_are_evicted_over_the_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("XETILE_CACHE_MAX_MB", "0.2")     # 209715 bytes: room for two entries, not three
    cache = DiskCache(tmp_path)
    assert cache.max_bytes == 209715
    cache.put("a", sized_entry(1))
    cache.put("b", sized_entry(2))
    os.utime(cache.path("a"), (1000, 1000))             # a was written first, b later
    os.utime(cache.path("b"), (2000, 2000))
    assert cache.get("a") == sized_entry(1)             # ... but a was used last
    assert cache.path("a").stat().st_mtime > 2000
    cache.put("c", sized_entry(3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.entry", "c.entry"]
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= cache.max_bytes


def test_default_cap_and_zero_cap(tmp_path, monkeypatch):
    monkeypatch.delenv("XETILE_CACHE_MAX_MB", raising=False)
    assert DiskCache(tmp_path).max_bytes == 1024 * 2**20
    monkeypatch.setenv("XETILE_CACHE_MAX_MB", "0")
    DiskCache(tmp_path).put("k", ENTRY)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["-1", "lots", "nan", "inf"])
def test_bad_cap_is_a_launch_error(tmp_path, monkeypatch, value):
    monkeypatch.setenv("XETILE_CACHE_MAX_MB", value)
    with pytest.raises(xetile.LaunchError, match=re.escape(f"XETILE_CACHE_MAX_MB must be a non-negative number "
                                                           f"of MiB, got {value!r}")):
        DiskCache(tmp_path)


@xetile.kernel
def add_one(x, y):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 8]), xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8])) + 1)


def test_intact_entry_that_is_no_compiled_kernel_is_recompiled(tmp_path, monkeypatch):
    """An entry whose checksum holds but whose fields are wrong is replaced, not an error at every launch."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    x, y = np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)
    add_one.cache.clear()
    add_one.warmup(x, y, target="cpu")
    [path] = tmp_path.iterdir()
    path.write_bytes(encode({"spirv": b"\x03\x02\x23\x07", "lanes": "sixteen"}))
    add_one.cache.clear()
    compiled = add_one.warmup(x, y, target="cpu")
    assert compiled.workgroup_size == 16 and compiled.asm["spirv"][:4] == b"\x03\x02\x23\x07"
    assert CompiledArtifact.from_entry(decode(path.read_bytes())).lanes == 16  # a whole entry again


@xetile.kernel
def add_two(x, y):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 8]), xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8])) + 2)


def another_kernels_entry(directory, x, y) -> dict:
    """The disk cache entry of add_two, compiled now."""
    before = set(directory.iterdir())
    add_two.cache.clear()
    add_two.warmup(x, y, target="cpu")
    [path] = set(directory.iterdir()) - before
    return decode(path.read_bytes())


@pytest.mark.parametrize("replacement", ["another kernel's", "no SPIR-V", "bytes that are no SPIR-V"])
def test_an_intact_entry_that_is_not_this_kernels_is_recompiled(tmp_path, monkeypatch, replacement):
    """An entry whose checksum and fields hold but that is not a compiled form of this kernel (another kernel's, an
    interpreter artifact without SPIR-V, other bytes) is compiled again and replaced, not an error at every
    launch."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    x, y = np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)
    add_one.cache.clear()
    add_one.warmup(x, y, target="cpu")
    [path] = tmp_path.iterdir()
    own, other = decode(path.read_bytes()), another_kernels_entry(tmp_path, x, y)
    meta = json.loads(own["meta"])  # what the trace read stays add_one's: only the compiled form is wrong
    if replacement == "another kernel's":
        entry = own | {"spirv": other["spirv"], "meta": json.dumps(meta | {"name": "add_two"})}
    elif replacement == "no SPIR-V":
        entry = {k: v for k, v in own.items() if k != "spirv"}
    else:
        entry = own | {"spirv": b"\x7fELF, say"}
    path.write_bytes(encode(entry))
    add_one.cache.clear()
    add_one[(1,)](x, y, device="opencl:cpu")
    np.testing.assert_array_equal(y, x + 1)
    assert CompiledArtifact.from_entry(decode(path.read_bytes())).name == "add_one"  # its own entry again


def read_only_filesystem(monkeypatch, directory) -> None:
    """The calls the cache writes with (entries, temporary files, mtimes, deletions) fail as on a read-only
    filesystem: tests run as root, whom a chmod does not stop."""
    def fails(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(directory))

    for module, name in ((os, "utime"), (os, "unlink"), (tempfile, "mkstemp")):
        monkeypatch.setattr(module, name, fails)


def test_a_read_only_cache_is_read_and_written_quietly_never(tmp_path, monkeypatch):
    """A cache made ahead and shipped read-only (a container image): its entries hit, writes are skipped without a
    warning, and nothing is deleted."""
    cache = DiskCache(tmp_path)
    key = cache.key(*key_parts())
    cache.put(key, ENTRY)
    read_only_filesystem(monkeypatch, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get(key) == ENTRY
        cache.put(cache.key("another"), ENTRY)
    assert cache.get(cache.key("another")) is None and cache.get(key) == ENTRY


# ---- what the trace read, between processes ----------------------------------------------------------------

HELPERS = """
import xetile_jit as xetile

OFFSET = {offset}


@xetile.kernel
def bump(v):
    return v {op} OFFSET
"""

MAIN = """
import numpy as np
import xetile_jit as xetile
from xetile_jit.compiler import driver as compiler
import helpers

traces = []
trace = compiler.trace
compiler.trace = lambda kernel, *args: traces.append(kernel.__name__) or trace(kernel, *args)


@xetile.kernel
def apply(x, y):
    tile = xetile.load_tile(xetile.init_tile(x, [0, 0], [2, 2]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [2, 2]), helpers.bump(tile))


x, y = np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)
apply[(1,)](x, y, device="opencl:cpu")
print(y[0, 0], len(traces))
"""


def test_edited_helper_and_constant_recompile_in_a_fresh_process(tmp_path):
    """One cache directory, a fresh process each run: the kernel's own source never changes, but the helper
    kernel it inlines and the module constant that helper reads do."""
    (tmp_path / "main.py").write_text(MAIN)

    def run(offset, op="+"):
        (tmp_path / "helpers.py").write_text(HELPERS.format(offset=offset, op=op))
        result = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True,
                                env=os.environ | {"XETILE_CACHE_DIR": str(tmp_path / "cache"),
                                                  "PYTHONDONTWRITEBYTECODE": "1"},  # edits of equal size
                                timeout=120)
        assert result.returncode == 0, result.stderr
        value, traces = result.stdout.split()
        return float(value), int(traces)

    assert run(1.0) == (2.0, 1)
    assert run(1.0) == (2.0, 0)                         # from the disk cache: no trace
    assert run(5.0) == (6.0, 1)                         # the constant changed
    assert run(5.0, "*") == (5.0, 1)                    # the helper's source changed
    assert run(5.0, "*") == (5.0, 0)
    entries = [decode(path.read_bytes()) for path in (tmp_path / "cache").iterdir()]
    assert sum("spirv" in entry for entry in entries) == 1  # stale entries were overwritten
    assert sum("binary" in entry for entry in entries) == 3  # the driver's binaries, keyed by their SPIR-V


def test_dump_ir_prints_every_level_on_a_disk_cache_hit(tmp_path):
    """XETILE_DUMP_IR=1 in a fresh process whose kernel is in the disk cache still prints every level (the
    dump command must print even after the demo has run once)."""
    (tmp_path / "main.py").write_text(MAIN)
    (tmp_path / "helpers.py").write_text(HELPERS.format(offset=1.0, op="+"))

    def run(dump: str) -> str:
        result = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                                env=os.environ | {"XETILE_CACHE_DIR": str(tmp_path / "cache"), "XETILE_DUMP_IR": dump,
                                                  "XETILE_QUIET": "1"})  # no block-IO warning for its narrow arrays
        assert result.returncode == 0, result.stderr
        return result.stderr

    assert run("0") == ""                               # fills the cache
    dumped = run("1")
    for level in ("XeTile IR", "xetile-layouts", "xegpu-wg", "xegpu-sg", "xegpu-blocked", "xegpu-simt", "llvm"):
        assert f"// -----// {level}: apply //----- //" in dumped


# ---- the GPU driver's own cache of built programs (runtime/opencl/environment.py) ------------------------------------

@pytest.mark.parametrize("given, expected", [(None, "1"), ("0", "0")])
def test_importing_turns_the_gpu_driver_cache_on_unless_the_user_chose(given, expected):
    env = {k: v for k, v in os.environ.items() if k != "NEO_CACHE_PERSISTENT"}
    if given is not None:
        env["NEO_CACHE_PERSISTENT"] = given
    probe = "import os, xetile_jit; print(os.environ['NEO_CACHE_PERSISTENT'])"
    result = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == expected, result.stderr
