"""Programs the OpenCL CPU runtime built are kept in the compile cache and loaded by later builds and processes
(runtime/opencl/driver_binaries.py): the loaded program computes what the built one does, a binary the runtime refuses
is deleted and the program built again, and the key follows the SPIR-V, the build options and the device."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import subprocess_env

import xetile_jit as xetile
import xetile_jit.language.dsl as xt
from xetile_jit.runtime.opencl import build_log, driver_binaries
from xetile_jit.runtime.cache import DiskCache
from xetile_jit.runtime.device import cached_queue


@xetile.kernel
def axpy(x, y, z, A: xetile.constexpr):
    tile = xt.load_tile(xt.init_tile(x, [0, 0], [16, 64])) * A + xt.load_tile(xt.init_tile(y, [0, 0], [16, 64]))
    xt.store_tile(xt.init_tile(z, [0, 0], [16, 64]), tile)


@pytest.fixture
def setup(tmp_path, monkeypatch, rng):
    """A fresh cache directory, the opencl:cpu queue, the compiled kernel, its key and its inputs."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    queue = cached_queue("opencl:cpu")
    x, y = rng.standard_normal((16, 64)).astype(np.float32), rng.standard_normal((16, 64)).astype(np.float32)
    compiled = axpy.warmup(x, y, np.empty_like(x), A=3.0, device=queue)
    key = driver_binaries.binary_key(compiled.asm["spirv"], queue, compiled.build_options)
    if key is None:
        pytest.skip("programs are kept only on OpenCL CPU devices under the dpctl measured")
    return queue, compiled, key, x, y


def launched(queue, compiled, x, y):
    """(z, whether its program was loaded from a binary), its program made anew."""
    compiled.programs.clear()
    z = np.empty_like(x)
    compiled.launch_on(queue, (1,), {"x": x, "y": y, "z": z})
    return z, compiled.programs[queue.sycl_context].from_binary


def test_a_built_program_is_kept_and_the_next_build_loads_it(setup):
    queue, compiled, key, x, y = setup
    built, from_binary = launched(queue, compiled, x, y)
    assert not from_binary and DiskCache().get(key)[driver_binaries.FIELD][:4] == b"\x7fELF"
    loaded, from_binary = launched(queue, compiled, x, y)
    assert from_binary
    np.testing.assert_array_equal(loaded, built)
    np.testing.assert_allclose(built, 3 * x + y, rtol=1e-6)


def test_a_binary_the_runtime_refuses_is_replaced(setup):
    queue, compiled, key, x, y = setup
    DiskCache().put(key, {driver_binaries.FIELD: b"\x7fELF not a program", driver_binaries.UNVECTORIZED: ""})
    z, from_binary = launched(queue, compiled, x, y)
    assert not from_binary
    np.testing.assert_allclose(z, 3 * x + y, rtol=1e-6)
    assert DiskCache().get(key)[driver_binaries.FIELD] != b"\x7fELF not a program"  # kept from the new build
    assert launched(queue, compiled, x, y)[1]


@xetile.kernel
def scale(x, z, A: xetile.constexpr):
    xt.store_tile(xt.init_tile(z, [0, 0], [16, 64]), xt.load_tile(xt.init_tile(x, [0, 0], [16, 64])) * A)


def test_a_binary_of_another_program_is_replaced(setup):
    """A binary the runtime builds but whose program has not the kernel launched (another program's, under this
    key) is deleted and the program built from SPIR-V, at the launch that finds it."""
    queue, compiled, key, x, y = setup
    other = scale.warmup(x, np.empty_like(x), A=2.0, device=queue)
    other.launch_on(queue, (1,), {"x": x, "z": np.empty_like(x)})
    other_key = driver_binaries.binary_key(other.asm["spirv"], queue, other.build_options)
    DiskCache().put(key, DiskCache().get(other_key))
    z, from_binary = launched(queue, compiled, x, y)
    assert not from_binary
    np.testing.assert_allclose(z, 3 * x + y, rtol=1e-6)
    assert DiskCache().get(key) != DiskCache().get(other_key)  # kept from the new build
    assert launched(queue, compiled, x, y)[1]


def test_the_key_follows_the_spirv_and_the_build_options(setup):
    queue, compiled, key, x, y = setup
    spirv = compiled.asm["spirv"]
    assert driver_binaries.binary_key(spirv, queue, compiled.build_options) == key
    assert driver_binaries.binary_key(spirv + b"\0\0\0\0", queue, compiled.build_options) != key
    assert driver_binaries.binary_key(spirv, queue, compiled.build_options + " -cl-mad-enable") != key


FRESH_PROCESS = """
import numpy as np
import xetile_jit as xetile
from xetile_jit.runtime.device import cached_queue
import test_driver_binaries as t

x = np.arange(1024, dtype=np.float32).reshape(16, 64)
z = np.empty_like(x)
t.axpy[(1,)](x, x, z, A=2.0, device="opencl:cpu")
assert np.array_equal(z, 3 * x)
print(next(iter(t.axpy.cache.values())).programs[cached_queue("opencl:cpu").sycl_context].from_binary)
"""


def test_a_fresh_process_loads_what_an_earlier_one_built(setup, tmp_path):
    env = subprocess_env(XETILE_CACHE_DIR=str(tmp_path))

    def run() -> str:
        result = subprocess.run([sys.executable, "-c", FRESH_PROCESS], env=env, capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    assert (run(), run()) == ("False", "True")


def test_a_binary_keeps_which_kernels_the_compiler_did_not_vectorize(setup, monkeypatch):
    """A program loaded from its binary has no build log to ask (runtime/opencl/build_log.py): its entry names the
    kernels the compiler did not vectorize, here `axpy` as the log is made to say."""
    queue, compiled, key, x, y = setup
    built, from_binary = launched(queue, compiled, x, y)
    assert not from_binary and DiskCache().get(key)[driver_binaries.UNVECTORIZED] == ""
    assert not compiled.programs[queue.sycl_context].unvectorized("axpy")
    DiskCache().discard(key)
    monkeypatch.setattr(build_log, "unvectorized", lambda kernel, q: True)
    launched(queue, compiled, x, y)
    assert DiskCache().get(key)[driver_binaries.UNVECTORIZED] == "axpy"
    z, from_binary = launched(queue, compiled, x, y)
    assert from_binary and compiled.programs[queue.sycl_context].unvectorized("axpy")
    np.testing.assert_array_equal(z, built)


def test_an_entry_without_those_names_is_replaced(setup):
    queue, compiled, key, x, y = setup
    launched(queue, compiled, x, y)
    DiskCache().put(key, {driver_binaries.FIELD: DiskCache().get(key)[driver_binaries.FIELD]})
    z, from_binary = launched(queue, compiled, x, y)
    assert not from_binary and DiskCache().get(key)[driver_binaries.UNVECTORIZED] == ""
    np.testing.assert_allclose(z, 3 * x + y, rtol=1e-6)
