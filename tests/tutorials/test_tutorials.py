"""The tutorials run and match numpy on each device, at sizes small enough for CI."""
import numpy as np
import pytest

from conftest import assert_close
from conftest import tutorial
from spirv_tools import cpu_queue
from xetile_jit import Layout


def test_gemm_bias_reduce_tutorial(on_each_device):
    """RFC Appendix 2.2 with every op's own layout (on a 64x64 tile: its 32 subgroups' code builds faster), partial
    tiles in M, N and K."""
    t = tutorial("07-gemm-bias-reduce")
    rng = np.random.default_rng(0)
    a, bt = (rng.standard_normal(shape, dtype=np.float32).astype(np.float16) for shape in ((200, 72), (300, 72)))
    bias = rng.standard_normal((1, 300), dtype=np.float32)
    expected = (a.astype(np.float64) @ bt.astype(np.float64).T + bias).sum(axis=1, keepdims=True)
    assert_close(t.gemm_bias_reduce_rows(a, bt, bias, bm=64, bn=64), expected, np.float32, scale=300)


def test_gemm_bias_reduce_with_the_appendix_2_3_mapping():
    """RFC Appendix 2.3's B^T layout, sg_layout [32, 1] (on the 64x64 tile sg_data [16, 32]: subgroup s holds rows
    16 (s mod 4), as mp_b's transpose gives it), in the numpy interpreter: the same row sums, partial tiles in M, N
    and K."""
    t = tutorial("07-gemm-bias-reduce")
    rng = np.random.default_rng(1)
    a, bt = (rng.standard_normal(shape, dtype=np.float32).astype(np.float16) for shape in ((100, 40), (90, 40)))
    bias = rng.standard_normal((1, 90), dtype=np.float32)
    res = np.zeros((100, 1), np.float32)
    mp_a, _, *rest = t.layouts(64, 64, 32)
    t.gemm_bias_reduce[(2, 2)](a, bt, bias, res, 40, BM=64, BN=64, BK=32, L=(mp_a, Layout([32, 1], [16, 32]), *rest),
                               device="numpy")
    expected = (a.astype(np.float64) @ bt.astype(np.float64).T + bias).sum(axis=1, keepdims=True)
    assert_close(res, expected, np.float32, scale=300)


def test_grouped_gemm_tutorial(on_each_device):
    """Five GEMMs of different M, N and K in one launch, found through the index arrays; f16 and f32."""
    t = tutorial("11-grouped-gemm")
    sizes = [(100, 70, 50), (64, 128, 96), (33, 17, 200), (7, 300, 40)]
    for dtype in (np.float16, np.float32):
        pairs = t.problems_of(sizes, dtype)
        for (a, b), c in zip(pairs, t.grouped_gemm(pairs)):
            assert_close(c, a.astype(np.float32) @ b.astype(np.float32), np.float32, scale=a.shape[1])


ATTENTION_SHAPES = [((2, 2, 128, 64), False), ((1, 2, 1000, 64), True), ((1, 1, 200, 128), False),
                    ((2, 1, 77, 128), True)]


@pytest.mark.parametrize("shape, causal", ATTENTION_SHAPES, ids=str)
def test_attention_tutorial_in_the_interpreter(shape, causal):
    """Head dims 64 and 128, causal and not, a sequence of 1000 (not a multiple of the blocks)."""
    t = tutorial("06-fused-attention")
    q, k, v = t.inputs(*shape)
    o = t.attention(q, k, v, causal, device="numpy")
    assert_close(o, t.reference(q, k, v, causal), np.float16, scale=4)


def test_attention_tutorial_takes_its_targets_key_blocks(monkeypatch):
    """By default 16 keys a step on the CPU targets (faster there, a shorter driver build: key_block), 32 on GPU
    targets and in the interpreter; on opencl:cpu, causal over 77 keys (not a multiple of 16), numpy's numbers."""
    cpu_queue()
    t = tutorial("06-fused-attention")
    assert [t.key_block(target) for target in ("cpu", "xe-emulated", "xe-hpc", "xe2", "numpy")] == [16, 16, 32, 32, 32]
    launched, launch_arguments = [], t.launch_arguments
    monkeypatch.setattr(t, "launch_arguments", lambda *args: launched.append(args[6]) or launch_arguments(*args))
    q, k, v = t.inputs(1, 2, 77, 64)
    o = t.attention(q, k, v, True, device="opencl:cpu")
    assert launched == [16]
    assert_close(o, t.reference(q, k, v, True), np.float16, scale=4)


@pytest.fixture(scope="module")
def torch_layer_norm():
    """Tutorial 12, imported once: it registers its torch ops by name."""
    pytest.importorskip("torch")
    return tutorial("12-torch-layer-norm")


def test_torch_layer_norm_tutorial_trains_as_torch_does(torch_layer_norm):
    """A few SGD steps of the small model, eager and compiled (aot_eager: the graphs of forward and backward with the
    ops in them, without inductor's code generation, which tests/jit/test_torch_op.py runs), against torch's layer
    norm: losses and the last gradients."""
    assert torch_layer_norm.compare(width=40, rows=24, steps=3) < 1e-5
    assert torch_layer_norm.compare(width=40, rows=24, steps=2, compile_backend="aot_eager") < 1e-5


def test_torch_layer_norm_tutorial_backward_passes_gradcheck(torch_layer_norm):
    """dx, dw and db against finite differences, in f32 (the kernels have no f64): a step of 1e-3 and tolerances of
    a few f32 roundings of the differences; widths 20 (padded to a 32-column tile) and 32."""
    import torch
    torch.manual_seed(0)
    for width in (20, 32):
        x, w, b = (torch.randn(shape, requires_grad=True) for shape in ((6, width), (width,), (width,)))
        assert torch.autograd.gradcheck(lambda *a: torch_layer_norm.layer_norm(a[0], (width,), *a[1:]), (x, w, b),
                                        eps=1e-3, atol=5e-3, rtol=5e-3)
