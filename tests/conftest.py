"""Shared test helpers: random data per dtype, numpy references in f32, tolerances per dtype."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil
from dataclasses import replace

import ml_dtypes
import numpy as np
import pytest
from spirv_tools import validate

import device_cover
from usm_arrays import Dpnp, Interface

import xetile_jit as xetile
from xetile_jit.toolchain import ocloc
from xetile_jit.compiler import pipeline
from xetile_jit.jit.kernel import Kernel
from xetile_jit.runtime import memory
from xetile_jit.runtime.device import named_device
from xetile_jit.runtime.kernel_bundles import kernel_bundle_api
from xetile_jit.target.cpu_features import CpuFeatures
from xetile_jit.target.targets import TARGETS

TESTS = pathlib.Path(__file__).resolve().parent
ROOT = TESTS.parent


def tutorial(name: str):
    """tutorials/NAME.py imported as a module (its `if __name__ == "__main__"` part does not run)."""
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), ROOT / "tutorials" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def subprocess_env(**variables: str) -> dict[str, str]:
    """The environment for a child Python that imports test modules: the test folders (pytest's `pythonpath`, one
    per layer) and the project root come first on its path, so it imports what this run imports."""
    folders = [TESTS, *sorted(p for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py"))), ROOT]
    path = os.pathsep.join(filter(None, [*map(str, folders), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **variables}


FLOAT_DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32]
INT_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.int64]
ALL_NP_DTYPES = FLOAT_DTYPES + INT_DTYPES + [np.bool_]

XETILE_DTYPE = {
    np.dtype(np.float16): xetile.float16, np.dtype(ml_dtypes.bfloat16): xetile.bfloat16,
    np.dtype(np.float32): xetile.float32, np.dtype(np.int8): xetile.int8, np.dtype(np.uint8): xetile.uint8,
    np.dtype(np.int16): xetile.int16, np.dtype(np.int32): xetile.int32, np.dtype(np.int64): xetile.int64,
    np.dtype(np.uint16): xetile.uint16, np.dtype(np.uint32): xetile.uint32, np.dtype(np.uint64): xetile.uint64,
    np.dtype(np.bool_): xetile.bool,
}

# relative/absolute tolerance of one rounding in the dtype, with headroom for a few ops
TOLERANCE = {
    np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 1.6e-2, np.dtype(np.float32): 1e-5,
}


def dtype_id(dt) -> str:
    return np.dtype(dt).name


def rand(rng: np.random.Generator, shape, dtype, low=-4, high=4) -> np.ndarray:
    """Random values exactly representable in `dtype` (small ints for integer types)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(low, info.min), min(high, info.max) + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(np.float32).astype(dtype)


def f32(x) -> np.ndarray:
    return np.asarray(x).astype(np.float32)


def host_array_at(array: np.ndarray, offset: int) -> np.ndarray:
    """A copy of `array` in host memory whose first element is `offset` bytes past a 64-byte boundary (the base
    alignment of a 2D block message, which decides whether a launch on `xe-emulated` takes a host array in place:
    runtime/memory.py)."""
    buffer = np.empty(array.nbytes + 64 + offset, np.uint8)
    start = -buffer.ctypes.data % 64 + offset
    copy = buffer[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


@pytest.fixture
def staged() -> list:
    """The host arrays each launch staged to device memory (runtime/memory.py stage_group: the names of each group
    copied), recorded; a patch of its own, which the `monkeypatch` fixture's undo leaves in place."""
    groups, stage_group = [], memory.stage_group

    def recording(queue, arrays, written):
        groups.append(sorted(arrays))
        return stage_group(queue, arrays, written)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(memory, "stage_group", recording)
        yield groups


# CPUs whose code the `cpu` target's tests pin (built_for_cpu): AVX2, 16 vector registers and 16-bit block loops
# rolled; AVX-512, 32 registers and every block loop unrolled
AVX2 = CpuFeatures("epyc", frozenset({"avx2", "fma"}))
AVX512 = CpuFeatures("zen4", frozenset({"avx512f", "avx2", "fma"}))


def built_for_cpu(monkeypatch, kernel: Kernel, cpu) -> None:
    """The `cpu` target's code for the CPU `cpu` (its ISA decides the lowering's register blocking, loop hints and
    default layouts) for the rest of the test; `kernel` gets a cache of its own, so that its compiled forms for the
    host's CPU stay as they were for the other tests."""
    monkeypatch.setitem(TARGETS, "cpu", replace(TARGETS["cpu"], cpu=cpu))
    monkeypatch.setattr(kernel, "cache", type(kernel.cache)())


def assert_close(actual, expected, dtype=None, scale: float = 1.0) -> None:
    """Exact for integers and bools; within a few roundings of `dtype` (default: actual's) for floats."""
    actual = np.asarray(actual)
    dtype = np.dtype(dtype or actual.dtype)
    if dtype.kind in "iub":
        np.testing.assert_array_equal(actual, np.asarray(expected).astype(actual.dtype))
        return
    tol = TOLERANCE[dtype] * scale
    np.testing.assert_allclose(f32(actual), f32(expected), rtol=tol, atol=tol)


DEVICES = ("numpy", "opencl:cpu")


def pytest_addoption(parser):
    parser.addoption("--device", action="append", choices=DEVICES,
                     help="where the core tests launch their kernels (repeatable; default: each of "
                          f"{', '.join(DEVICES)})")
    parser.addoption("--device-all", action="store_true",
                     help="run every parametrization of the core tests on opencl:cpu, not a covering set "
                          "(tests/device_cover.py)")


def pytest_configure(config):
    config.addinivalue_line("markers", "device_cover(strength): on opencl:cpu, run the parametrizations that hold "
                                       "every combination of `strength` parameters' values (tests/device_cover.py)")


def device_parameters(item) -> dict | None:
    """The parameters of an opencl:cpu parametrization of a core test (values by repr), else None."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if params.get("on_each_device") != "opencl:cpu":
        return None
    return {name: repr(value) for name, value in params.items() if name != "on_each_device"}


def pytest_collection_modifyitems(config, items):
    """On opencl:cpu each core test runs a covering set of its parametrizations (tests/device_cover.py)."""
    if config.getoption("device_all"):
        return
    groups: dict[tuple, list[tuple[int, dict]]] = {}
    for index, item in enumerate(items):
        params = device_parameters(item)
        if params:
            groups.setdefault((item.path, item.cls, item.originalname), []).append((index, params))
    dropped = set()
    for members in groups.values():
        marker = items[members[0][0]].get_closest_marker("device_cover")
        strength = marker.args[0] if marker else device_cover.DEFAULT_STRENGTH
        kept = device_cover.covering([params for _, params in members], strength)
        dropped |= {index for index, _ in members} - {members[k][0] for k in kept}
    if dropped:
        config.hook.pytest_deselected(items=[items[i] for i in sorted(dropped)])
        items[:] = [item for i, item in enumerate(items) if i not in dropped]


def pytest_generate_tests(metafunc):
    if "on_each_device" in metafunc.fixturenames:
        metafunc.parametrize("on_each_device", metafunc.config.getoption("device") or DEVICES, indirect=True)


@pytest.fixture
def on_each_device(request, monkeypatch):
    """The test's launches go to request.param (XETILE_DEVICE): the core tests run in the numpy interpreter and
    as SPIR-V on opencl:cpu, against the same numpy references."""
    monkeypatch.setenv("XETILE_DEVICE", request.param)
    return request.param


def target_options(device: str) -> list[dict]:
    """The launch options that try each target `device` runs: cpu and xe-emulated on opencl:cpu, the
    interpreter's own on numpy."""
    return [{}] if device == "numpy" else [{"target": "cpu"}, {"target": "xe-emulated"}]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture(params=[Interface, Dpnp], ids=lambda kind: kind.name)
def usm_kind(request):
    """Makes and reads USM arrays of one kind on the opencl:cpu queue (usm_arrays.py): known by their
    `__sycl_usm_array_interface__` alone, and dpnp arrays (skipped without dpnp)."""
    return request.param(named_device("opencl:cpu").queue)


@pytest.fixture(scope="module")
def queue():
    """The opencl:cpu queue, for tests that run OpenCL C kernels of their own."""
    return named_device("opencl:cpu").queue


@pytest.fixture(scope="module")
def program(queue, request):
    """The test module's OpenCL C `SOURCE`, built for `queue`."""
    return kernel_bundle_api().from_source(queue, request.module.SOURCE)


@pytest.fixture(autouse=True)
def private_cache_dir(tmp_path_factory, monkeypatch):
    """Compiled kernels go to a cache directory of this test run, not the user's. The pytest-xdist workers share it
    (their base temporary directories are folders of the run's): the driver's build of a kernel that tests on both
    workers launch, most of a first launch on opencl:cpu, is then done once."""
    run_dir = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_dir = run_dir.parent
    monkeypatch.setenv("XETILE_CACHE_DIR", str(run_dir / "xetile-cache"))


def release_programs(module) -> None:
    """The module's kernels (an autotuner's too) forget what they compiled, and so free their SYCL programs: the
    OpenCL CPU driver keeps megabytes of native code per program, and a test worker runs every module."""
    for value in vars(module).values():
        kernel = getattr(value, "kernel", value)
        if isinstance(kernel, Kernel):
            kernel.cache.clear()


@pytest.fixture(autouse=True, scope="module")
def programs_freed_after_each_module(request):
    yield
    release_programs(request.module)


@pytest.fixture(autouse=True)
def every_module_passes_spirv_val(monkeypatch):
    """Every SPIR-V module the tests build passes spirv-val: the PATH's for the `cpu` target, the current stack's
    (2025 extensions) for the GPU targets' "spirv" ABI. "legacy"-ABI modules hold inline vISA, which spirv-val
    cannot check (ocloc checks those)."""
    compile_spirv = pipeline.compile_spirv

    def validated(func, target, *args, **kwargs):
        result = compile_spirv(func, target, *args, **kwargs)
        tool = ocloc.spirv_validator(target) if not target.abi.legacy_stack else None
        if tool is not None and shutil.which(tool) is not None:
            validate(result["spirv"], tool=tool)
        return result

    monkeypatch.setattr("xetile_jit.compiler.driver.compile_spirv", validated)


def pytest_terminal_summary(terminalreporter):
    """The differential fuzzer's run (test_fuzz.py `xetile_fuzz` properties, also from pytest-xdist workers): case
    count, seed, failing cases and time, in the CI log."""
    runs = [value for reports in terminalreporter.stats.values() for r in reports
            if getattr(r, "when", None) == "call" for name, value in r.user_properties if name == "xetile_fuzz"]
    if runs:
        total = {k: round(sum(r[k] for r in runs), 1) for k in ("cases", "failing_cases", "wall_s", "cpu_s")}
        terminalreporter.write_line(
            f"xetile fuzz: {total['cases']} cases (XETILE_FUZZ_SEED={runs[0]['seed']}), each in the numpy "
            f"interpreter at every level and as SPIR-V on opencl:cpu; {total['failing_cases']} failing; "
            f"{total['wall_s']} s wall, {total['cpu_s']} s CPU")
