"""Tutorial 12: layer normalization as a torch operator, forward and backward in xetile kernels.

The forward kernel is tutorial 5's, in f32, that also keeps each row's mean and 1/std for the backward. With
xhat = (x - mean) * rstd and g = dy * w, the backward gives

    dx = (g - (xhat * mean(g * xhat) + mean(g))) * rstd      (per row, the means over the row)
    dw = sum over rows of dy * xhat,   db = sum over rows of dy

in two kernels: one per row writes dx and the row's terms of dw and db (dy * xhat and dy, into M x N buffers), one per
block of columns sums those down the rows (as Triton's layer norm tutorial does in two stages, without its locks).

`xetile.torch.op` registers the forward ("xetile_tutorial::layer_norm", returning y, mean and rstd) and the backward as
torch custom ops, each with its fake implementation from its output shapes, and the forward's autograd formula
calls the backward op. So `layer_norm` is one node in a torch.compile graph and trains like
torch.nn.functional.layer_norm: `main` trains a small model with each for a few steps, eagerly and compiled, and
compares losses and gradients.

Run: python tutorials/12-torch-layer-norm.py
"""
import time

import torch

import xetile_jit as xetile


@xetile.kernel
def forward_kernel(x, w, b, y, mean, rstd, N, eps, BLOCK: xetile.constexpr):
    row = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [row, 0], [BLOCK]))
    inside = xetile.arange(0, BLOCK) < N
    mu = xetile.tile_reduce("add", v, [0]) / N
    centered = xetile.where(inside, v - xetile.broadcast_to(mu, [BLOCK]), 0.0)
    r = xetile.rsqrt(xetile.tile_reduce("add", centered * centered, [0]) / N + eps)
    weight = xetile.load_tile(xetile.init_tile(w, [0], [BLOCK]))
    bias = xetile.load_tile(xetile.init_tile(b, [0], [BLOCK]))
    xetile.store_tile(xetile.init_tile(y, [row, 0], [BLOCK]), centered * xetile.broadcast_to(r, [BLOCK]) * weight + bias)
    xetile.store_tile(xetile.init_tile(mean, [row], [1]), mu)
    xetile.store_tile(xetile.init_tile(rstd, [row], [1]), r)


@xetile.kernel
def backward_kernel(dy, x, w, mean, rstd, dx, dw_terms, N, BLOCK: xetile.constexpr):
    row = xetile.program_id(0)
    inside = xetile.arange(0, BLOCK) < N
    r = xetile.broadcast_to(xetile.load_tile(xetile.init_tile(rstd, [row], [1])), [BLOCK])
    mu = xetile.broadcast_to(xetile.load_tile(xetile.init_tile(mean, [row], [1])), [BLOCK])
    xhat = xetile.where(inside, (xetile.load_tile(xetile.init_tile(x, [row, 0], [BLOCK])) - mu) * r, 0.0)
    d = xetile.load_tile(xetile.init_tile(dy, [row, 0], [BLOCK]))
    g = d * xetile.load_tile(xetile.init_tile(w, [0], [BLOCK]))
    c1 = xetile.broadcast_to(xetile.tile_reduce("add", g * xhat, [0]) / N, [BLOCK])
    c2 = xetile.broadcast_to(xetile.tile_reduce("add", g, [0]) / N, [BLOCK])
    xetile.store_tile(xetile.init_tile(dx, [row, 0], [BLOCK]), (g - (xhat * c1 + c2)) * r)
    xetile.store_tile(xetile.init_tile(dw_terms, [row, 0], [BLOCK]), d * xhat)


@xetile.kernel
def column_sum_kernel(terms, total, M, BM: xetile.constexpr, BN: xetile.constexpr):
    """total[0, j] = sum of terms[:, j] over the M rows, a workgroup per BN columns walking down BM rows a step."""
    col = xetile.program_id(0) * BN
    tile = xetile.init_tile(terms, [0, col], [BM, BN])
    acc = xetile.zeros([1, BN], xetile.float32)
    for _ in range(0, M, BM):
        acc += xetile.tile_reduce("add", xetile.load_tile(tile), [0])
        tile = xetile.update_tile_offset(tile, [BM, 0])
    xetile.store_tile(xetile.init_tile(total, [0, col], [1, BN]), acc)


def block_of(n: int) -> int:
    """The next power of two: one tile holds a whole row."""
    return 1 << max(0, (n - 1).bit_length())


def stats_shape(x):
    return (x.shape[0],), torch.float32


@xetile.torch.op("xetile_tutorial::layer_norm_forward",
                 outputs=lambda x, w, b, eps: ((x.shape, x.dtype), stats_shape(x), stats_shape(x)))
def layer_norm_forward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> tuple[
        torch.Tensor, torch.Tensor, torch.Tensor]:
    """y, mean and rstd of the rows of a 2-D f32 x."""
    m, n = x.shape
    y, mean, rstd = torch.empty_like(x), torch.empty(m, device=x.device), torch.empty(m, device=x.device)
    forward_kernel[(m,)](x, w, b, y, mean, rstd, n, eps, BLOCK=block_of(n))
    return y, mean, rstd


COLUMNS = 64  # a column_sum_kernel workgroup's columns
ROWS = 16  # and its rows a step


@xetile.torch.op("xetile_tutorial::layer_norm_backward",
                 outputs=lambda dy, x, w, mean, rstd: ((x.shape, x.dtype), (w.shape, w.dtype), (w.shape, w.dtype)))
def layer_norm_backward(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor, mean: torch.Tensor,
                        rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dx, dw and db of layer_norm_forward's rows for the gradient dy of y."""
    m, n = x.shape
    dy = dy.contiguous()
    dx, dw_terms = torch.empty_like(x), torch.empty_like(x)
    backward_kernel[(m,)](dy, x, w, mean, rstd, dx, dw_terms, n, BLOCK=block_of(n))
    dw, db = torch.empty(1, n, device=x.device), torch.empty(1, n, device=x.device)
    grid = (xetile.cdiv(n, COLUMNS),)
    column_sum_kernel[grid](dw_terms, dw, m, BM=ROWS, BN=COLUMNS)
    column_sum_kernel[grid](dy, db, m, BM=ROWS, BN=COLUMNS)
    return dx, dw.reshape(n), db.reshape(n)


def setup_context(ctx, inputs, output):
    x, w, _, _ = inputs
    _, mean, rstd = output
    ctx.save_for_backward(x, w, mean, rstd)


def backward(ctx, dy, _dmean, _drstd):
    x, w, mean, rstd = ctx.saved_tensors
    dx, dw, db = layer_norm_backward(dy, x, w, mean, rstd)
    return dx, dw, db, None


layer_norm_forward.register_autograd(backward, setup_context=setup_context)


def layer_norm(x: torch.Tensor, normalized_shape, w: torch.Tensor, b: torch.Tensor, eps: float = 1e-5):
    """torch.nn.functional.layer_norm over the last dim of an f32 x of any rank."""
    rows = x.reshape(-1, x.shape[-1])
    return layer_norm_forward(rows, w, b, eps)[0].reshape(x.shape)


class Model(torch.nn.Module):
    """Linear, layer norm, ReLU, linear: the layer norm torch's or the tutorial's."""

    def __init__(self, width: int, norm):
        super().__init__()
        self.first, self.second = torch.nn.Linear(width, width), torch.nn.Linear(width, 1)
        self.w, self.b = torch.nn.Parameter(torch.ones(width)), torch.nn.Parameter(torch.zeros(width))
        self.norm = norm

    def forward(self, x):
        return self.second(torch.relu(self.norm(self.first(x), (x.shape[-1],), self.w, self.b)))


def train(model, steps: int, x, target) -> tuple[list[float], list[torch.Tensor]]:
    """Losses of `steps` SGD steps and the gradients of the last one."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.grad.clone() for p in model.parameters()]


def compare(width: int = 96, rows: int = 64, steps: int = 5, compile_backend: str | None = None) -> float:
    """Trains the model with torch's layer norm and with the tutorial's from the same start (compiled with
    `compile_backend` when given); the largest difference of their losses and last gradients."""
    torch.manual_seed(0)
    x, target = torch.randn(rows, width), torch.randn(rows, 1)
    reference = Model(width, torch.nn.functional.layer_norm)
    ours = Model(width, layer_norm)
    ours.load_state_dict(reference.state_dict())
    model = ours if compile_backend is None else torch.compile(ours, backend=compile_backend)
    expected_losses, expected_grads = train(reference, steps, x, target)
    losses, grads = train(model, steps, x, target)
    differences = [abs(a - b) for a, b in zip(losses, expected_losses)]
    differences += [(a - b).abs().max().item() for a, b in zip(grads, expected_grads)]
    return max(differences)


def speed(rows: int = 4096, width: int = 768, repeat: int = 5) -> dict:
    """Best-of-`repeat` ms of a forward and a backward of each layer norm on CPU tensors: torch eager's and ours
    (whose CPU tensors opencl:cpu reads and writes in place: runtime/memory.py)."""
    torch.manual_seed(0)
    x = torch.randn(rows, width, requires_grad=True)
    w, b = torch.ones(width, requires_grad=True), torch.zeros(width, requires_grad=True)
    dy = torch.randn(rows, width)
    times = {}
    for name, norm in (("torch eager", torch.nn.functional.layer_norm), ("xetile", layer_norm)):
        norm(x, (width,), w, b).backward(dy)  # compiles ours once
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            norm(x, (width,), w, b).backward(dy)
            best = min(best, time.perf_counter() - start)
        times[name] = best * 1e3
    return times


def main() -> None:
    print(f"device: {xetile.default_device()}")
    for backend in (None, "inductor"):
        start = time.perf_counter()
        difference = compare(compile_backend=backend)
        print(f"{'eager' if backend is None else 'torch.compile':>13}: largest difference of losses and gradients "
              f"{difference:.2e} ({time.perf_counter() - start:.1f} s)")
        if difference > 1e-4:
            raise SystemExit("FAILED: training differs from torch.nn.functional.layer_norm")
    print("OK: training matches torch.nn.functional.layer_norm, eagerly and compiled")
    times = speed()
    print("forward + backward, 4096 x 768 f32, ms: " + ", ".join(f"{k} {v:.2f}" for k, v in times.items()))


if __name__ == "__main__":
    main()
