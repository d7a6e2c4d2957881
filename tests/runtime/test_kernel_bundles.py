"""dpctl's kernel-bundle API found by its features (runtime/kernel_bundles.py): dpctl 0.22's names, the next
release's (SyclKernelBundle in dpctl.compiler) and the names between, through stand-in modules; and the launch path
building its programs through whichever was found."""
from __future__ import annotations

import types

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.runtime import sycl
from xetile_jit.runtime.kernel_bundles import NAMINGS, api_of, find_api, kernel_bundle_api


def stand_in(naming, recorded: list) -> types.ModuleType:
    """A module offering the installed dpctl's API under `naming`, recording the SPIR-V builds."""
    real = kernel_bundle_api()
    module = types.ModuleType(naming.module)

    def from_spirv(queue, spirv, options=""):
        recorded.append(naming)
        return real.from_spirv(queue, spirv, options)

    setattr(module, naming.from_spirv, from_spirv)
    setattr(module, naming.from_source, real.from_source)
    setattr(module, naming.error, real.compilation_error)
    setattr(module, naming.bundle, real.bundle_type)
    return module


def importer(modules: dict):
    def import_module(name):
        if name not in modules:
            raise ImportError(name)
        return modules[name]
    return import_module


def test_the_installed_dpctl_is_found_with_its_c_api():
    api = kernel_bundle_api()
    assert api.naming in NAMINGS
    assert api.make_capsule is not None  # runtime/opencl/api.py makes bundles from kept binaries with it
    assert isinstance(api.compilation_error, type) and issubclass(api.compilation_error, Exception)


@pytest.mark.parametrize("naming", NAMINGS, ids=lambda n: f"{n.module}.{n.bundle}")
def test_each_naming_is_found_alone(naming):
    recorded = []
    found = find_api(importer({naming.module: stand_in(naming, recorded)}))
    assert found.naming == naming


def test_the_newest_naming_wins_where_dpctl_keeps_the_deprecated_one():
    both = stand_in(NAMINGS[2], [])
    for name in ("from_spirv", "from_source", "error", "bundle"):  # the class renamed, the old names kept
        setattr(both, getattr(NAMINGS[1], name), getattr(both, getattr(NAMINGS[2], name)))
    assert find_api(importer({"dpctl.program": both})).naming == NAMINGS[1]


def test_a_dpctl_without_any_naming_is_an_import_error_naming_them():
    with pytest.raises(ImportError, match="create_kernel_bundle_from_spirv.*create_program_from_spirv"):
        find_api(importer({"dpctl.program": types.ModuleType("dpctl.program")}))
    assert api_of(types.ModuleType("dpctl.compiler"), NAMINGS[0]) is None


@xetile.kernel
def triple(x, y, N: xetile.constexpr):
    xetile.store_tile(xetile.init_tile(y, [0], [N]), xetile.load_tile(xetile.init_tile(x, [0], [N])) * 3)


def test_a_launch_builds_through_the_renamed_api(monkeypatch, tmp_path):
    """The path a launch takes where dpctl builds its programs (SyclProgram.build where no binary is kept: devices
    other than the OpenCL CPU one), with dpctl.compiler's names: the kernel runs and is right."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(sycl.driver_binaries, "binary_key", lambda *args: None)  # as on a device with no kept binary
    recorded = []
    renamed = find_api(importer({"dpctl.compiler": stand_in(NAMINGS[0], recorded)}))
    monkeypatch.setattr(sycl, "kernel_bundle_api", lambda: renamed)
    x, y = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    triple[(1,)](x, y, N=16, device="opencl:cpu")
    np.testing.assert_array_equal(y, 3 * x)
    assert recorded == [NAMINGS[0]]
