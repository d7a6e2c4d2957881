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


@pytest.mark.parametrize("fp_fusion", [False, True])
def test_layer_norm_fuses_a_product_into_its_add_only_with_fp_fusion(fp_fusion):
    """Rows of +-1 (mean 0, variance 1): an output is x * rstd * w + b, rounded after the product and after the add
    (ours without fp_fusion, the interpreter) or once for both (an FMA, OpenCL C's default): the reference must
    round as ours does with the same option, or the bench compares different work."""
    dpnp = needs_dpnp()
    rng = np.random.default_rng(2)
    host = np.where(np.arange(64) % 2, 1.0, -1.0).astype(np.float32) * np.ones((32, 1), np.float32)
    w, b = rng.standard_normal((2, 1, 64)).astype(np.float32)
    arrays = [dpnp.asarray(a, device="opencl:cpu") for a in (host, w, b, np.zeros_like(host))]
    opencl_reference.launcher("layernorm", arrays, False, bench_cpu.ROWS_PER_WORKGROUP, fp_fusion=fp_fusion)()
    got = dpnp.asnumpy(arrays[3])
    scaled = host * np.float32(1 / np.sqrt(1 + 1e-5))  # x * rstd: the device's rstd is within an ulp of it
    candidates = [scaled * np.float32(s) for s in (1 - 2 ** -23, 1, 1 + 2 ** -23)]
    rounded_twice = any(np.array_equal(got, t * w + b) for t in candidates)
    fused = any(np.array_equal(got, (t.astype(np.float64) * w + b).astype(np.float32)) for t in candidates)
    assert (rounded_twice, fused) == (not fp_fusion, fp_fusion)


def test_fma_peak_runs_every_chain_of_every_work_item():
    """Each chain a <- a * 0.999 + 0.001 from its start (the work-item's id plus the chain's) converges to 1 within
    f32 rounding in PEAK_STEPS steps: every element of the output is PEAK_CHAINS, and the flops count every
    multiply-add of every chain and work-item."""
    dpnp = needs_dpnp()
    items = opencl_reference.PEAK_WORKGROUPS * opencl_reference.PEAK_WORKGROUP_SIZE
    out = dpnp.zeros(items, dtype=np.float32, device="opencl:cpu")
    run, flops = opencl_reference.fma_peak(out)
    run()
    np.testing.assert_allclose(dpnp.asnumpy(out), opencl_reference.PEAK_CHAINS, rtol=1e-4)
    assert flops == 2 * opencl_reference.PEAK_CHAINS * opencl_reference.PEAK_STEPS * items
