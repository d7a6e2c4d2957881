"""xetile.torch.op (xetile_jit/torch.py): kernels and functions launching them as torch custom ops, eager, under
torch._dynamo.explain (no graph break) and under torch.compile with the default (inductor) backend on the CPU; and
what `xetile.torch` says without torch."""
from __future__ import annotations

import sys

import pytest

import xetile_jit as xetile

torch = pytest.importorskip("torch")


@xetile.kernel
def scale_kernel(x, y, s, BM: xetile.constexpr, BN: xetile.constexpr):
    i, j = xetile.program_id(0) * BM, xetile.program_id(1) * BN
    xetile.store_tile(xetile.init_tile(y, [i, j], [BM, BN]), xetile.load_tile(xetile.init_tile(x, [i, j], [BM, BN])) * s)


scale = xetile.torch.op("xetile_test::scale", scale_kernel, outputs={"y": lambda x, s: (x.shape, x.dtype)},
                        grid=lambda x, s: (xetile.cdiv(x.shape[0], 8), xetile.cdiv(x.shape[1], 16)),
                        constants={"BM": 8, "BN": 16}, scalars={"s": float})


@xetile.torch.op("xetile_test::scale_and_shift", outputs=lambda x, s: ((x.shape, x.dtype), (x.shape, x.dtype)))
def scale_and_shift(x: torch.Tensor, s: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(x * s, x * s + 1), the second from the first by another launch."""
    y = scale(x, s)
    return y, scale(y, 1.0) + 1


def keep_scale(ctx, inputs, output):
    ctx.s = inputs[1]


@xetile.torch.op("xetile_test::scaled", outputs=lambda x, s: (x.shape, x.dtype),
                 backward=lambda ctx, dy: (scale(dy.contiguous(), ctx.s), None), setup_context=keep_scale)
def scaled(x: torch.Tensor, s: float) -> torch.Tensor:
    """x * s with its gradient, both launches of scale_kernel."""
    return scale(x, s)


def model(x):
    y, z = scale_and_shift(torch.sin(x), 3.0)
    return torch.relu(scale(y + z, 0.5))


def test_ops_of_a_kernel_and_of_a_function_run_eagerly():
    x = torch.randn(20, 40)
    torch.testing.assert_close(scale(x, 2.5), x * 2.5)
    y, z = scale_and_shift(x, -2.0)
    torch.testing.assert_close(y, x * -2.0)
    torch.testing.assert_close(z, x * -2.0 + 1)


def test_the_ops_are_nodes_of_one_graph():
    explained = torch._dynamo.explain(model)(torch.randn(20, 40))
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    code = explained.graphs[0].code
    assert "xetile_test.scale_and_shift" in code and "xetile_test.scale" in code


def test_a_model_with_the_ops_compiled_by_inductor_matches_eager():
    x = torch.randn(20, 40)
    compiled = torch.compile(model)  # the default backend, inductor, generating C++ for the CPU
    torch.testing.assert_close(compiled(x), model(x))
    x2 = torch.randn(20, 40)
    torch.testing.assert_close(compiled(x2), model(x2))  # the compiled graph again, new data


def test_backward_given_to_op_passes_gradcheck():
    """f32 (the kernels have no f64): finite differences with a step of 1e-2 against the backward kernel's dy * s."""
    x = torch.randn(8, 16, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: scaled(x, -1.5), (x,), eps=1e-2, atol=1e-3, rtol=1e-3)
    (grad,) = torch.autograd.grad(scaled(x, -1.5).sum(), x)
    torch.testing.assert_close(grad, torch.full_like(x, -1.5))


@xetile.torch.op("xetile_test::scale_", mutates_args=("x",))
def scale_(x: torch.Tensor, s: float) -> None:
    """x *= s in place: an op without outputs (outputs=None), writing the tensor mutates_args names."""
    scale_kernel[(xetile.cdiv(x.shape[0], 8), xetile.cdiv(x.shape[1], 16))](x, x, s, BM=8, BN=16)


def shifted_and_scaled(t):
    t = t + 1
    scale_(t, 3.0)
    return t * 2


def test_an_in_place_op_is_one_node_of_a_compiled_graph():
    x = torch.randn(16, 32)
    torch.testing.assert_close(shifted_and_scaled(x), (x + 1) * 6)
    assert torch._dynamo.explain(shifted_and_scaled)(x).graph_break_count == 0
    torch.testing.assert_close(torch.compile(shifted_and_scaled, backend="eager")(x), (x + 1) * 6)
    with pytest.raises(TypeError, match="outputs=None is an op that returns nothing; name the tensors it writes"):
        xetile.torch.op("xetile_test::nothing", lambda x: None)


def scaled_sine(x):
    """A raw launch between torch ops, as Triton users write it in a compiled function."""
    y = torch.empty_like(x)
    scale_kernel[(xetile.cdiv(x.shape[0], 8), xetile.cdiv(x.shape[1], 16))](x, y, 2.0, BM=8, BN=16)
    return y.sin()


def test_a_raw_launch_in_a_compiled_function_is_a_graph_break_run_eagerly():
    """torch.compile does not trace into a launch (jit/kernel.py hide_launches_from_torch_compile): each call runs
    the compiled graphs around it and the launch eagerly, a new shape too, with no compile per call; inside one
    graph (fullgraph=True) the error says to launch through xetile.torch.op."""
    torch._dynamo.reset()
    compiled = torch.compile(scaled_sine, backend="eager")
    explained = torch._dynamo.explain(scaled_sine)(torch.randn(16, 32))
    assert explained.graph_break_count == 1
    graphs = []
    for shape in [(16, 32), (16, 32), (16, 32), (24, 48)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(compiled(x), (x * 2).sin())
        graphs.append(torch._dynamo.utils.counters["stats"]["unique_graphs"])
    assert graphs[0] == graphs[1] == graphs[2]   # no compile for another tensor of a seen shape
    with pytest.raises(Exception, match=r"launch through xetile.torch.op"):
        torch.compile(scaled_sine, backend="eager", fullgraph=True)(torch.randn(16, 32))


def test_op_arguments_that_do_not_fit_are_type_errors():
    with pytest.raises(TypeError, match="give grid=.* and outputs="):
        xetile.torch.op("xetile_test::bad", scale_kernel, outputs=lambda x: (x.shape, x.dtype))
    with pytest.raises(TypeError, match=r"no parameters \['z'\]"):
        xetile.torch.op("xetile_test::bad", scale_kernel, outputs={"z": lambda x: (x.shape, x.dtype)},
                        grid=lambda x: (1,))
    with pytest.raises(TypeError, match="describe a kernel"):
        xetile.torch.op("xetile_test::bad", model, outputs=lambda x: (x.shape, x.dtype), grid=lambda x: (1,))


def test_without_torch_xetile_torch_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    monkeypatch.delitem(sys.modules, "xetile_jit.torch")
    monkeypatch.delattr(xetile, "torch")  # the attribute importing the submodule set
    with pytest.raises(ImportError, match=r'pip install "xetile_jit\[torch\]"'):
        xetile.torch
