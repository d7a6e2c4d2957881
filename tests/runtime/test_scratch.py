"""runtime/scratch.py: a thread's scratch buffers, reused from call to call, one a place."""
from __future__ import annotations

import threading

import ml_dtypes
import numpy as np

from xetile_jit.runtime.scratch import DeviceArray, interface_typestr, scratch


def address(array) -> int:
    return array.__sycl_usm_array_interface__["data"][0] if isinstance(array, DeviceArray) else \
        array.__array_interface__["data"][0]


def test_a_scratch_array_reuses_the_thread_s_buffer_and_grows_it():
    """Host memory (no queue) and device memory on a queue: a smaller array reuses the buffer, a larger one gets a
    new buffer, which the next smaller one reuses."""
    from spirv_tools import cpu_queue
    for queue in (None, cpu_queue()):
        first = scratch((64, 64), np.float32, queue)
        assert first.shape == (64, 64) and first.dtype == np.float32
        assert address(scratch((8, 64), np.float16, queue)) == address(first)
        larger = scratch((128, 64), np.float32, queue)
        assert address(scratch((64, 64), np.int8, queue)) == address(larger)


def test_another_thread_gets_buffers_of_its_own():
    """Two threads' launches on one queue need not run in the order of their calls, so they share no buffer."""
    mine = address(scratch((16, 64), np.float32, None))
    theirs = []
    thread = threading.Thread(target=lambda: theirs.append(address(scratch((16, 64), np.float32, None))))
    thread.start()
    thread.join()
    assert theirs[0] != mine and address(scratch((16, 64), np.float32, None)) == mine


def test_a_device_array_is_known_by_its_interface():
    """C-contiguous on the buffer's queue; bfloat16 by its name, which numpy's str of it ('<V2') is not."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    array = scratch((3, 64), ml_dtypes.bfloat16, queue)
    usm = array.__sycl_usm_array_interface__
    assert (usm["shape"], usm["strides"], usm["typestr"], usm["syclobj"]) == ((3, 64), None, "bfloat16", queue)
    assert interface_typestr(np.dtype(np.float16)) == "<f2"
