"""Device selection (docs/DESIGN.md §4) on the real opencl:cpu device: device= -> the arrays' queue -> XETILE_DEVICE
-> a Level Zero GPU -> opencl:cpu -> numpy (warned once); targets from device names; LaunchError for bad devices and
for launches beyond a device's limits."""
from __future__ import annotations

import re
import warnings

import dpctl
import dpctl.memory
import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.runtime import device as dev
from xetile_jit.runtime.device import NUMPY_DEVICE, Device, select_device
from usm_arrays import UsmArray


def usm(queue) -> UsmArray:
    return UsmArray(queue, np.zeros((4, 4), np.float32), (4, 4), None)


@pytest.fixture
def cpu_queue():
    return dpctl.get_device_cached_queue("opencl:cpu")


@pytest.fixture(autouse=True)
def no_env_device(monkeypatch):
    monkeypatch.delenv("XETILE_DEVICE", raising=False)
    dev.automatic_device.cache_clear()
    yield
    dev.automatic_device.cache_clear()


def assert_cpu(device: Device, queue=None):
    assert device.kind == "sycl" and device.target == "cpu" and device.queue.sycl_device.is_cpu
    if queue is not None:
        assert device.queue == queue


def test_filter_string(cpu_queue):
    device = select_device("opencl:cpu")
    assert_cpu(device, cpu_queue)
    assert select_device("opencl:cpu").queue is device.queue  # cached per filter string


def test_sycl_device_and_queue(cpu_queue):
    assert_cpu(select_device(dpctl.SyclDevice("opencl:cpu")), cpu_queue)
    own = dpctl.SyclQueue("opencl:cpu")
    assert select_device(own).queue is own


def test_numpy():
    assert select_device("numpy") == NUMPY_DEVICE == Device("numpy", None, "numpy")


@pytest.mark.parametrize("name, message", [
    ("foo", "device 'foo': Device filter selector string 'foo' is not understood."),
    ("opencl:cpu:7", "device 'opencl:cpu:7': SYCL Device 'opencl:cpu:7' could not be created."),
])
def test_bad_filter_string(name, message):
    with pytest.raises(xetile.LaunchError, match=message):
        select_device(name)


def test_bad_device_type():
    with pytest.raises(xetile.LaunchError, match="device must be a dpctl filter string, a dpctl.SyclDevice, a "
                                                 "dpctl.SyclQueue or 'numpy', got int"):
        select_device(0)


def test_arrays_queue(cpu_queue):
    own = dpctl.SyclQueue("opencl:cpu")
    x = usm(own)
    assert select_device(arrays=[np.zeros((2, 2)), x, 3, usm(own)]).queue is own
    assert select_device("numpy", arrays=[x]) == NUMPY_DEVICE  # device= comes first
    assert select_device(cpu_queue, arrays=[x]).queue is cpu_queue


def test_arrays_on_two_queues_of_one_context(cpu_queue):
    """USM memory belongs to a context, so arrays on two queues of one context and device run on the first's."""
    other = dpctl.SyclQueue("opencl:cpu")
    assert other != cpu_queue and other.sycl_context == cpu_queue.sycl_context
    assert select_device(arrays=[usm(cpu_queue), usm(other)]).queue is cpu_queue


def test_arrays_in_two_contexts(cpu_queue):
    device = dpctl.SyclDevice("opencl:cpu")
    other = dpctl.SyclQueue(dpctl.SyclContext([device]), device)
    assert other.sycl_context != cpu_queue.sycl_context
    with pytest.raises(xetile.LaunchError, match="USM array arguments are on queues of different SYCL contexts or "
                                                 "devices .on opencl:cpu:0 and opencl:cpu:0.; a kernel reads memory "
                                                 "of one context on one device"):
        select_device(arrays=[usm(cpu_queue), usm(other)])


def test_environment_variable(monkeypatch):
    monkeypatch.setenv("XETILE_DEVICE", "numpy")
    assert select_device() == NUMPY_DEVICE
    own = dpctl.SyclQueue("opencl:cpu")
    assert select_device(arrays=[usm(own)]).queue is own  # the arrays' queue comes before XETILE_DEVICE
    monkeypatch.setenv("XETILE_DEVICE", "opencl:cpu")
    assert_cpu(select_device())
    monkeypatch.setenv("XETILE_DEVICE", "foo")
    with pytest.raises(xetile.LaunchError, match="not understood"):
        select_device()


def test_automatic_choice():
    device = select_device(arrays=[np.zeros((2, 2))])
    expected = "level_zero" if dpctl.get_devices(backend="level_zero", device_type="gpu") else "opencl"
    assert device.kind == "sycl" and device.queue.sycl_device.backend.name == expected


def test_numpy_fallback_warns_once(monkeypatch):
    monkeypatch.setattr(dev, "AUTOMATIC_FILTERS", ("foo:gpu", "opencl:cpu:7"))
    with pytest.warns(RuntimeWarning, match="no SYCL device .* kernels run in the numpy interpreter"):
        assert select_device() == NUMPY_DEVICE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert select_device() == NUMPY_DEVICE


@pytest.mark.parametrize("name, target", [
    ("Intel(R) Data Center GPU Max 1550", "xe-hpc"),
    ("Intel(R) Data Center GPU Max 1100", "xe-hpc"),
    ("Intel(R) Graphics [PVC]", "xe-hpc"),
    ("Intel(R) Arc(TM) B580 Graphics", "xe2"),
    ("Intel(R) Arc(TM) Pro B60 Graphics", "xe2"),
    ("Intel(R) Arc(TM) 140V GPU (16GB)", "xe2"),
    ("Intel(R) Graphics (Lunar Lake)", "xe2"),
    ("Intel(R) Arc(TM) A770 Graphics", "xe-hpg"),
    ("Intel(R) Data Center GPU Flex 170", "xe-hpg"),
    ("Intel(R) UHD Graphics 770", "xe-hpg"),
])
def test_gpu_targets(name, target):
    assert dev.gpu_target(name) == target


def test_cpu_target(monkeypatch):
    monkeypatch.delenv("XETILE_TARGET", raising=False)
    assert dev.device_target(dpctl.SyclDevice("opencl:cpu")) == "cpu"
    monkeypatch.setenv("XETILE_TARGET", "xe-emulated")
    assert dev.device_target(dpctl.SyclDevice("opencl:cpu")) == "xe-emulated"
    monkeypatch.setenv("XETILE_TARGET", "xe-hpc")
    with pytest.raises(dev.LaunchError, match=r"XETILE_TARGET 'xe-hpc': a CPU device runs the targets cpu, "
                                              r"xe-emulated"):
        dev.device_target(dpctl.SyclDevice("opencl:cpu"))


def test_a_target_the_device_does_not_run_is_a_launch_error():
    assert dev.choose_target("xe-hpc", "xe2") == "xe2" and dev.choose_target("cpu", None) == "cpu"
    assert dev.choose_target("numpy", "xe-emulated") == "numpy"  # the interpreter has no target
    with pytest.raises(dev.LaunchError, match=r"target= 'cpu': an Intel GPU runs the targets xe-hpc, xe2, xe3, "
                                              r"xe-hpg$"):
        dev.choose_target("xe-hpc", "cpu")
    with pytest.raises(dev.LaunchError, match=r"target= 'gpu': a CPU device runs the targets cpu, xe-emulated"):
        dev.choose_target("cpu", "gpu")


def test_a_mistyped_xetile_target_is_named_on_every_device(monkeypatch):
    """The interpreter runs any target's kernel, but a name that is no target is a mistake it names too."""
    x = np.zeros((8, 16), np.float32)
    monkeypatch.setenv("XETILE_TARGET", "xe-emulatd")
    for device, valid in (("numpy", "no target has that name; targets: xe-hpc, xe2, xe3, xe-hpg, cpu, xe-emulated"),
                          ("opencl:cpu", "a CPU device runs the targets cpu, xe-emulated")):
        with pytest.raises(xetile.LaunchError, match=f"XETILE_TARGET 'xe-emulatd': {valid}"):
            plus_one[(1,)](x, x, device=device)
    np.testing.assert_array_equal(x, 0)


def test_a_gpu_target_on_the_cpu_device_found_is_an_error_not_the_interpreter(monkeypatch):
    """No device a launch finds by itself (opencl:cpu alone here) runs XETILE_TARGET=xe-hpc: that is the launch's
    error, not a reason to fall back to the numpy interpreter as if no device existed (where a GPU exists, it runs
    xe-hpc's code, and XETILE_TARGET=cpu there takes opencl:cpu)."""
    monkeypatch.delenv("XETILE_DEVICE", raising=False)
    monkeypatch.setenv("XETILE_TARGET", "xe-hpc")
    monkeypatch.setattr(dev, "AUTOMATIC_FILTERS", ("opencl:cpu",))   # whatever GPU the machine has
    dev.automatic_device.cache_clear()
    try:
        with pytest.raises(xetile.LaunchError, match="XETILE_TARGET 'xe-hpc': a CPU device runs the targets cpu"):
            dev.automatic_device()
    finally:
        dev.automatic_device.cache_clear()


@xetile.kernel
def plus_one(x, y):
    tile = xetile.init_tile(x, [0, 0], [8, 16])
    xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 16]), xetile.load_tile(tile) + 1.0)


def test_the_target_launch_option_picks_the_cpu_devices_target(monkeypatch):
    """target= (over XETILE_TARGET): xe-emulated and cpu give the same numbers, each compiled once."""
    monkeypatch.setenv("XETILE_TARGET", "xe-emulated")
    plus_one.cache.clear()
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    for target in ("cpu", "xe-emulated", None):
        y = np.zeros((8, 16), np.float32)
        plus_one[(1,)](x, y, device="opencl:cpu", target=target)
        np.testing.assert_array_equal(y, x + 1)
    assert sorted(key[-1].target for key in plus_one.cache) == ["cpu", "xe-emulated"]


def test_a_launch_naming_no_device_runs_spirv_on_the_automatic_device():
    """docs/DESIGN.md §4: with no device=, no USM array and no XETILE_DEVICE, the first SYCL device found runs the
    SPIR-V (opencl:cpu on the CI machines)."""
    plus_one.cache.clear()
    x, y = np.arange(128, dtype=np.float32).reshape(8, 16), np.zeros((8, 16), np.float32)
    plus_one[(1,)](x, y)
    np.testing.assert_array_equal(y, x + 1)
    assert xetile.default_device() == select_device().queue.sycl_device.filter_string
    (compiled,) = plus_one.cache.values()
    assert compiled.target == select_device().target and "spirv" in compiled.asm


def test_default_target_is_what_a_launch_compiles_for(monkeypatch):
    """xetile.default_target: the target of the device a launch would pick (device=, else the arrays' queue, else
    XETILE_DEVICE, else the first found), XETILE_TARGET applied, "numpy" for the interpreter."""
    monkeypatch.delenv("XETILE_TARGET", raising=False)
    monkeypatch.delenv("XETILE_DEVICE", raising=False)
    assert xetile.default_target() == "cpu" and xetile.default_target("numpy") == "numpy"
    monkeypatch.setenv("XETILE_DEVICE", "numpy")
    assert xetile.default_target(None, [usm(dpctl.SyclQueue("opencl:cpu"))]) == "cpu"  # the arrays' queue
    assert xetile.default_target() == "numpy" and xetile.default_target("opencl:cpu") == "cpu"
    monkeypatch.setenv("XETILE_TARGET", "xe-emulated")
    assert xetile.default_target("opencl:cpu") == "xe-emulated"


# ---- launch limits: checked before any argument is copied ----------------------------------------------------

@xetile.kernel
def copy_by_subgroups(x, y, SG0: xetile.constexpr, SG1: xetile.constexpr):
    """A workgroup of SG0 x SG1 subgroups, each copying one 1 x 16 row piece."""
    layout = xetile.Layout([SG0, SG1], [1, 16])
    tile = xetile.load_tile(xetile.init_tile(x, [0, 0], [SG0, SG1 * 16], layout=layout))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [SG0, SG1 * 16], layout=layout), tile)


def test_workgroup_beyond_the_device_maximum_is_a_launch_error():
    device = dpctl.SyclDevice("opencl:cpu")
    subgroups = 2 * device.max_work_group_size // 16                # twice the maximum, in 16-lane subgroups
    x = np.ones((subgroups // 32, 32 * 16), np.float32)
    y = np.zeros_like(x)
    expected = (f"a workgroup of {subgroups * 16} work-items (num_subgroups x lanes) exceeds the "
                f"{device.max_work_group_size} that {device.filter_string} allows (max_work_group_size "
                f"{device.max_work_group_size}, max_work_item_sizes3d {device.max_work_item_sizes3d})")
    with pytest.raises(xetile.LaunchError, match=re.escape(expected)):
        copy_by_subgroups[(1,)](x, y, SG0=subgroups // 32, SG1=32, device="opencl:cpu")
    np.testing.assert_array_equal(y, 0)
    half = subgroups // 64                                           # exactly the maximum runs
    copy_by_subgroups[(1,)](x[:half], y[:half], SG0=half, SG1=32, device="opencl:cpu")
    np.testing.assert_array_equal(y[:half], 1)


def test_sycl_work_item_limit_is_int_max():
    device = dpctl.SyclDevice("opencl:cpu")
    dev.check_launch(device, (2**31 - 1, 1, 1), 1)
    dev.check_launch(device, (1, 2**26 - 1, 2), 16)                 # the product counts, not each dimension
    with pytest.raises(xetile.LaunchError, match=re.escape("grid (1, 67108864, 2) of 16-work-item workgroups is "
                                                           "2147483648 work-items; a SYCL launch takes at most")):
        dev.check_launch(device, (1, 2**26, 2), 16)


@xetile.kernel
def count_workgroups(out):
    tile = xetile.init_tile(out, [xetile.program_id(0) + xetile.num_programs(0) * xetile.program_id(1), 0], [1, 1])
    xetile.store_tile(tile, xetile.full([1, 1], 1, xetile.int32))


def test_interpreter_grid_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("XETILE_INTERPRETER_MAX_WORKGROUPS", "6")
    out = np.zeros((8, 1), np.int32)
    count_workgroups[(2, 3)](out, device="numpy")
    assert out.sum() == 6
    with pytest.raises(xetile.LaunchError, match=re.escape("grid (7, 1, 1) is 7 workgroups; the numpy interpreter "
                                                           "runs at most 6")):
        count_workgroups[(7,)](out, device="numpy")
    monkeypatch.setenv("XETILE_INTERPRETER_MAX_WORKGROUPS", "many")
    with pytest.raises(xetile.LaunchError, match="XETILE_INTERPRETER_MAX_WORKGROUPS must be a non-negative integer, "
                                                 "got 'many'"):
        count_workgroups[(1,)](out, device="numpy")
