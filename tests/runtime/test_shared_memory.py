"""Host arrays in USM shared memory (runtime/shared_memory.py, `xetile.empty_shared`, `xetile.torch.empty_shared`):
launches on a queue of their context take them and their views in place, with no staging copy either way; ordinary
host memory beside them is staged as before; the registry forgets an allocation with the last view of it."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import host_array_at
from xetile_jit.runtime import shared_memory

DEVICE = "opencl:cpu"


@xetile.kernel
def doubled(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    p = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [p * BM, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(y, [p * BM, 0], [BM, BN]), v * 2)


def filled(shape, dtype=np.float32, device=DEVICE) -> np.ndarray:
    array = xetile.empty_shared(shape, dtype, device=device)
    array[...] = np.arange(array.size).reshape(shape) % 251
    return array


@pytest.mark.parametrize("dtype", [np.float32, xetile.float16, np.int32])
def test_shared_arrays_are_written_in_place_without_copies(staged, dtype):
    x, y = filled((64, 32), dtype), filled((64, 32), dtype)
    doubled[(4,)](x, y, BM=16, BN=32, device=DEVICE)
    np.testing.assert_array_equal(y, x * 2)
    assert staged == []


def test_a_view_of_shared_memory_is_taken_in_place(staged):
    """A pitched view (every other column block of a wider allocation) and a row slice."""
    x, big = filled((32, 16)), filled((40, 48))
    y = big[4:36, 16:32]
    before = big.copy()
    doubled[(2,)](x, y, BM=16, BN=16, device=DEVICE)
    expected = before.copy()
    expected[4:36, 16:32] = x * 2
    np.testing.assert_array_equal(big, expected)
    assert staged == []


def test_host_memory_beside_shared_memory_is_staged(staged):
    """Host memory the device does not take in place (runtime/memory.py `in_place`: here 16 bytes past the
    alignment an `xe-emulated` kernel was specialized for) is staged beside a shared array."""
    x, y = filled((32, 16)), host_array_at(np.zeros((32, 16), np.float32), 16)
    doubled[(2,)](x, y, BM=16, BN=16, device=DEVICE, target="xe-emulated")
    np.testing.assert_array_equal(y, x * 2)
    assert staged == [["y"]]


def test_the_registry_forgets_an_allocation_with_its_array():
    x = xetile.empty_shared((8, 8), np.float32, device=DEVICE)
    start, view = x.ctypes.data, x[2:]
    del x
    gc.collect()
    assert start in shared_memory._blocks  # the view keeps the allocation
    del view
    gc.collect()
    assert start not in shared_memory._blocks


def test_the_numpy_interpreter_has_no_shared_memory():
    with pytest.raises(xetile.LaunchError, match="empty_shared: the numpy interpreter has no shared memory"):
        xetile.empty_shared((4,), np.float32, device="numpy")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int16"])
def test_torch_tensors_in_shared_memory_are_taken_in_place(staged, dtype):
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, dtype)
    x, y = xetile.torch.empty_shared((32, 16), dtype), xetile.torch.empty_shared((32, 16), dtype)
    x.copy_(torch.arange(32 * 16).reshape(32, 16) % 100)
    y.zero_()
    assert x.device.type == "cpu" and x.dtype == dtype
    doubled[(2,)](x, y, BM=16, BN=16)
    assert torch.equal(y, x * 2)
    assert staged == []
