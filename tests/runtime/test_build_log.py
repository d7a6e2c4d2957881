"""runtime/opencl/build_log.py: the OpenCL CPU compiler's build log of a program, and whether it vectorized a
kernel."""
from __future__ import annotations

import numpy as np
import pytest

import xetile_jit as xetile
import xetile_jit.language.dsl as xt
from xetile_jit.runtime.device import cached_queue
from xetile_jit.runtime.opencl import build_log
from xetile_jit.runtime.opencl.api import native_kernel_and_program, opencl_api

LOG = '''Device build done
remark: <unknown>:0:0: Loop was 16-way vectorized
Kernel "rows" was not vectorized
Kernel "rows_2" was successfully vectorized (16)
Done.'''


def test_the_log_names_the_kernels_it_did_not_vectorize():
    assert build_log.not_vectorized(LOG, "rows")
    assert not build_log.not_vectorized(LOG, "rows_2")
    assert not build_log.not_vectorized(LOG, "row")
    assert not build_log.not_vectorized("", "rows")


@xetile.kernel
def row_sums(x, y):
    xt.store_tile(xt.init_tile(y, [0, 0], [16, 1]),
                  xt.tile_reduce("add", xt.load_tile(xt.init_tile(x, [0, 0], [16, 64])), [1]))


def test_the_compiler_says_it_vectorized_a_row_kernel(rng, tmp_path, monkeypatch):
    """The log of a real build (a new cache: no binary kept from an earlier one): a row sum, vectorized 16 wide."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    queue = cached_queue("opencl:cpu")
    if opencl_api() is None:
        pytest.skip("the OpenCL entry points are known under the dpctl measured only")
    x = rng.standard_normal((16, 64)).astype(np.float32)
    compiled = row_sums.warmup(x, np.empty((16, 1), np.float32), device=queue, target="cpu")
    kernel = compiled.sycl_kernel(queue)
    api = opencl_api()
    native, program = native_kernel_and_program(api, kernel)
    log = build_log.build_log(api, program, queue)
    api.release_kernel(native)
    assert 'Kernel "row_sums" was successfully vectorized (16)' in log
    assert not build_log.unvectorized(kernel, queue)
