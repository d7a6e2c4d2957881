"""bench/bench_cpu.py: our row kernels run alone (`kernel_alone`, the `kernel_ms` column) compute what their launch
does, with the arguments of that launch."""
import pathlib
import sys

import numpy as np
import pytest
from usm_arrays import Interface

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import bench_cpu  # noqa: E402  (needs bench/ on the path for its `common` import)

from xetile_jit.runtime.device import named_device  # noqa: E402


@pytest.mark.parametrize("width, padded", [(64, False), (48, True)], ids=["exact", "padded"])
def test_a_kernel_run_alone_computes_its_launchs_rows(width, padded):
    """`--padded` rows (48 columns in tiles of 64) as well."""
    usm = Interface(named_device(bench_cpu.DEVICE).queue)
    rng = np.random.default_rng(2)
    host = rng.standard_normal((32, width)).astype(np.float32)
    w, b = rng.standard_normal((2, 1, width)).astype(np.float32)
    x, dw, db, y = usm.asarray(host), usm.asarray(w), usm.asarray(b), usm.asarray(np.zeros_like(host))
    kernels = bench_cpu.row_kernels(x, y, dw, db, host, w, b, bench_cpu.MATH["precise"], padded)
    assert bench_cpu.tile_width(width, padded) == 64
    _, kernel, grid, args, shape, expected = next(k for k in kernels if k[0] == "layernorm")
    kernel[grid](*args, **shape, target="cpu")
    np.testing.assert_allclose(usm.asnumpy(y), expected(), rtol=1e-5, atol=1e-5)
    y.memory.copy_from_host(np.zeros(host.nbytes, np.uint8))  # the launch's output cleared
    assert not usm.asnumpy(y).any()
    bench_cpu.kernel_alone(kernel, grid, args, {**shape, "target": "cpu"})()
    np.testing.assert_allclose(usm.asnumpy(y), expected(), rtol=1e-5, atol=1e-5)


def test_the_rows_give_the_hand_written_kernels_time_over_ours():
    """`x/opencl-c` over our launch, `k/opencl-c` over our kernel alone; nothing for a kernel without a hand-written
    one (the bounds) nor for the hand-written one itself."""
    times = {"cpu": 0.5e-3, bench_cpu.KERNEL_ALONE + "cpu": 0.4e-3, bench_cpu.REFERENCE: 0.3e-3}
    assert bench_cpu.reference_ratios(times, "cpu") == pytest.approx(
        {"kernel_ms": 0.4, "x/opencl-c": 0.6, "k/opencl-c": 0.75})
    assert bench_cpu.reference_ratios(times, bench_cpu.REFERENCE) == {}
    assert bench_cpu.reference_ratios({"cpu": 0.5e-3}, "cpu") == {}
