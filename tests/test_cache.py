"""DESIGN 4 on-disk compile cache: round trips, stable keys across processes, atomic writes, corrupt entries
rejected and removed, XETILE_CACHE_DIR."""
from __future__ import annotations

import hashlib
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.ir.types import COL_MAJOR
from xetile_jit.runtime.args import ArraySpec, ScalarSpec
from xetile_jit.runtime.cache import DiskCache, header

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


# ---- what the trace read, between processes (issue 7, item 7) ----------------------------------------------

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
from xetile_jit.frontend import compiler
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
    assert len(list((tmp_path / "cache").iterdir())) == 1  # stale entries were overwritten
