"""The compiler driver's data: CompileOptions, the source of the options' part of the cache keys,
and CompiledArtifact, which owns its serialisation to a disk cache entry."""
from __future__ import annotations

import json
import re
import struct
import warnings

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.toolchain import ocloc
from xetile_jit.target.targets import get_target
from xetile_jit.compiler import driver as compiler
from xetile_jit.compiler.driver import CompiledArtifact, CompileOptions
from xetile_jit.codegen.spirv.spec import MAGIC
from xetile_jit.compiler.dependencies import Dependency
from xetile_jit.runtime.cache import DiskCache

ARTIFACT = CompiledArtifact("k", {"xetile": "func.func @k() {\n}\n", "spirv": struct.pack("<I", MAGIC) + bytes(range(252)), "isa": ""},
                            frozenset({"y", "z"}), num_subgroups=4, lanes=16,
                            build_options="-ze-opt-large-register-file",
                            dependencies=(Dependency("global", "m.k", "OFFSET", "float(000000000000f03f)"),
                                          Dependency("attribute", "helpers", "bump", "kernel helpers.bump 5d41")))


def test_artifact_round_trips_through_the_disk_cache(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put("k", ARTIFACT.to_entry())
    loaded = CompiledArtifact.from_entry(cache.get("k"))
    assert loaded == ARTIFACT
    assert isinstance(loaded.num_subgroups, int) and isinstance(loaded.asm["spirv"], bytes)


@pytest.mark.parametrize("entry", [{"xetile": "an entry of an older layout"}, {"meta": "not json"},
                                   {"meta": '{"name": "k"}'}], ids=["no meta", "bad json", "missing fields"])
def test_an_entry_that_is_no_artifact_is_refused(entry):
    with pytest.raises((KeyError, ValueError)):
        CompiledArtifact.from_entry(entry)


@xetile.kernel
def mma_copy(x, y, BM: xetile.constexpr):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [BM, 16]), xetile.load_tile(xetile.init_tile(x, [0, 0], [BM, 16])))


@pytest.fixture
def traces(monkeypatch, tmp_path):
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path / "cache"))
    calls = []
    trace = compiler.trace
    monkeypatch.setattr(compiler, "trace", lambda kernel, *args: calls.append(kernel.__name__) or trace(kernel, *args))
    return calls


def test_compile_options_key_the_in_memory_cache(traces):
    mma_copy.cache.clear()
    x, y = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    mma_copy.warmup(x, y, BM=16, target="cpu", sg_layout=[2, 1], sg_data=[8, 16])
    mma_copy.warmup(x, y, BM=16, target="numpy")
    assert [key[-1] for key in mma_copy.cache] == [CompileOptions("cpu", xetile.Layout([2, 1], [8, 16])),
                                                    CompileOptions("numpy")]


def test_a_fresh_kernel_object_loads_the_same_artifact_from_disk(traces, tmp_path):
    x, y = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    mma_copy.cache.clear()
    compiled = mma_copy.warmup(x, y, BM=16, target="cpu")
    mma_copy.cache.clear()
    loaded = mma_copy.warmup(x, y, BM=16, target="cpu")
    assert traces == ["mma_copy"] and loaded is not compiled
    assert loaded.artifact == compiled.artifact and loaded.written == {"y"}
    assert loaded.workgroup_size == compiled.artifact.num_subgroups * compiled.artifact.lanes > 0


def test_an_entry_of_another_layout_is_compiled_again_and_overwritten(traces, tmp_path):
    x, y = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    mma_copy.cache.clear()
    mma_copy.warmup(x, y, BM=8, target="cpu")
    cache = DiskCache()
    (path,) = cache.directory.iterdir()
    cache.put(path.stem, {"xetile": "an entry of an older layout", "num_subgroups": "1"})
    mma_copy.cache.clear()
    assert "spirv" in mma_copy.warmup(x, y, BM=8, target="cpu").asm
    assert traces == ["mma_copy", "mma_copy"]
    assert CompiledArtifact.from_entry(cache.get(path.stem)).name == "mma_copy"


def test_num_subgroups_is_part_of_both_cache_keys(traces):
    """The launch option num_subgroups (Triton's num_warps) is a CompileOptions field, so it keys the
    in-memory and the disk cache, and the artifact has that many subgroups."""
    mma_copy.cache.clear()
    x, y = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    default = mma_copy.warmup(x, y, BM=16, target="cpu")
    four = mma_copy.warmup(x, y, BM=16, target="cpu", num_subgroups=4)
    assert [key[-1] for key in mma_copy.cache] == [CompileOptions("cpu"), CompileOptions("cpu", num_subgroups=4)]
    assert (default.artifact.num_subgroups, four.artifact.num_subgroups) == (1, 4)  # 1 KiB: one subgroup by default
    assert len(list(DiskCache().directory.iterdir())) == 2 and traces == ["mma_copy", "mma_copy"]


@pytest.mark.parametrize("bad", [0, -2, 2.0, "4", True, [4]])
def test_num_subgroups_must_be_a_positive_int(bad):
    x = np.zeros((16, 16), np.float32)
    with pytest.raises(xetile.LaunchError, match=r"num_subgroups must be a positive int \(the subgroups of a "
                                                 rf"workgroup\), got {re.escape(repr(bad))}"):
        mma_copy.warmup(x, x, BM=16, target="cpu", num_subgroups=bad)


@xetile.kernel
def two_copies(x, y, z, w):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 8]), xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 8])))
    xetile.store_tile(xetile.init_tile(w, [0, 0], [8, 8]), xetile.load_tile(xetile.init_tile(z, [0, 0], [8, 8])))


def block_io_warnings(monkeypatch, tmp_path, quiet: str | None, *args, target="xe-emulated") -> list:
    """The BlockIOFallbackWarnings of compiling two_copies for `args` on `target` (a fresh cache: it compiles)."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path / f"cache-{quiet}-{target}"))
    if quiet is not None:
        monkeypatch.setenv("XETILE_QUIET", quiet)
    two_copies.cache.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        two_copies.warmup(*args, target=target)
    return [w for w in caught if issubclass(w.category, xetile.BlockIOFallbackWarning)]


def test_block_io_fallback_warns_once_per_compile_naming_arrays_and_rules(monkeypatch, tmp_path):
    """Arrays 2D block messages cannot address are named, with the rule, in one warning."""
    pitched = np.zeros((16, 45), np.float32)[:, 3:40]  # a 180-byte row pitch
    narrow, good = np.zeros((8, 8), np.float32), np.zeros((16, 16), np.float32)  # 32 bytes wide; 64 bytes wide
    (warning,) = block_io_warnings(monkeypatch, tmp_path, None, pitched, good, narrow, good)
    assert str(warning.message).startswith(
        "xetile_jit: kernel two_copies: 2D block messages cannot address arrays 'x' (rule: the pitch between memory "
        "rows is a multiple of 16 bytes) and 'z' (rule: a memory row is at least 64 bytes wide, in whole 4-byte "
        "units); "
        "loads and stores there go element by element")
    assert "XETILE_QUIET=1 silences this" in str(warning.message)
    assert warning.filename == __file__  # attributed to the warmup line, not to xetile_jit's own code
    assert block_io_warnings(monkeypatch, tmp_path, "1", pitched, good, narrow, good) == []
    assert block_io_warnings(monkeypatch, tmp_path, None, good, good, good, good) == []
    # the `cpu` target's builtins address any base, pitch and width (BlockIO.any_layout): nothing falls back there
    assert block_io_warnings(monkeypatch, tmp_path, None, pitched, good, narrow, good, target="cpu") == []


def test_block_io_fallback_is_in_the_isa_stats(monkeypatch, tmp_path):
    if not ocloc.available(get_target("xe-hpc")):
        pytest.skip("the current GPU compiler is not installed")
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("XETILE_QUIET", "1")
    pitched, good = np.zeros((16, 45), np.float32)[:, 3:40], np.zeros((16, 16), np.float32)
    stats = json.loads(two_copies.warmup(pitched, good, good, good, target="xe-hpc").asm["isa_stats"])
    assert stats["block_io_fallback"] == {"x": "the pitch between memory rows is a multiple of 16 bytes"}
    assert json.loads(two_copies.warmup(good, good, good, good, target="xe-hpc").asm["isa_stats"])[
        "block_io_fallback"] == {}
