"""bench/opencl_reference.py: the hand-written OpenCL C rows the CPU bench compares our kernels with compute what
numpy does, in f32 and f16, and refuse a shape they do not cover."""
import pathlib
import sys

import numpy as np
import pytest
from usm_arrays import needs_dpnp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import bench_cpu  # noqa: E402  (needs bench/ on the path for its `common` import)
import opencl_reference  # noqa: E402


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_softmax_and_layer_norm_match_numpy(dtype):
    dpnp = needs_dpnp()
    rng = np.random.default_rng(1)
    host = (rng.standard_normal((32, 64)) * 4).astype(dtype)
    w, b = rng.standard_normal((2, 1, 64)).astype(np.float32)
    x, y = dpnp.asarray(host, device="opencl:cpu"), dpnp.empty(host.shape, dtype=dtype, device="opencl:cpu")
    half = dtype == np.float16
    tolerance = 2e-3 if half else 1e-6
    opencl_reference.launcher("softmax", [x, y], half, bench_cpu.ROWS_PER_WORKGROUP)()
    assert np.abs(dpnp.asnumpy(y).astype(np.float32) - bench_cpu.softmax_numpy(host)).max() < tolerance
    dw, db = dpnp.asarray(w, device="opencl:cpu"), dpnp.asarray(b, device="opencl:cpu")
    opencl_reference.launcher("layernorm", [x, dw, db, y], half, bench_cpu.ROWS_PER_WORKGROUP)()
    expected = bench_cpu.layernorm_numpy(host, w, b)
    assert np.abs(dpnp.asnumpy(y).astype(np.float32) - expected).max() < tolerance * 8


def test_rows_not_a_multiple_of_32_columns_are_refused():
    dpnp = needs_dpnp()
    x = dpnp.zeros((16, 48), dtype=np.float32, device="opencl:cpu")
    with pytest.raises(ValueError, match="multiple of 32 columns"):
        opencl_reference.launcher("softmax", [x, x], False, bench_cpu.ROWS_PER_WORKGROUP)
