"""The tutorials run and match numpy on each device, at sizes small enough for CI."""
import numpy as np

from conftest import assert_close
from test_gpu_code import tutorial


def test_gemm_bias_reduce_tutorial(on_each_device):
    """RFC Appendix 2.2 with every op's own layout, partial tiles in M, N and K."""
    t = tutorial("07-gemm-bias-reduce")
    rng = np.random.default_rng(0)
    a, bt = (rng.standard_normal(shape, dtype=np.float32).astype(np.float16) for shape in ((200, 72), (300, 72)))
    bias = rng.standard_normal((1, 300), dtype=np.float32)
    expected = (a.astype(np.float64) @ bt.astype(np.float64).T + bias).sum(axis=1, keepdims=True)
    assert_close(t.gemm_bias_reduce_rows(a, bt, bias), expected, np.float32, scale=300)


def test_grouped_gemm_tutorial(on_each_device):
    """Five GEMMs of different M, N and K in one launch, found through the index arrays; f16 and f32."""
    t = tutorial("11-grouped-gemm")
    sizes = [(100, 70, 50), (64, 128, 96), (33, 17, 200), (7, 300, 40)]
    for dtype in (np.float16, np.float32):
        pairs = t.problems_of(sizes, dtype)
        for (a, b), c in zip(pairs, t.grouped_gemm(pairs)):
            assert_close(c, a.astype(np.float32) @ b.astype(np.float32), np.float32, scale=a.shape[1])
