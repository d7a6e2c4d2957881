"""What a launch pays a torch CPU tensor to know its host view is still right (docs/performance.md "The torch path"),
in us a tensor: a numpy array's whole key, a tensor read one by one (`tensor_key`), tensors held (`HeldTensors.views`:
one TensorGuards check, their addresses) and those two parts, then each read from Python mapped over the tensors
(no Python frame a read: the floor of reading them). Each is timed over 20 (1, 16) f32 arrays or tensors, best of
9 rounds of `--calls` calls, the cases in turns.

    python bench/bench_torch_reads.py [--calls 20000] [--json out.json]
"""
import argparse
import json
import timeit

import numpy as np
import torch
from common import machine

from xetile_jit.jit import launch_plan
from xetile_jit.runtime.torch_tensors import layout_check

COUNT = 20
ROUNDS = 9


def cases() -> dict:
    """name -> a function doing it for all COUNT tensors or arrays."""
    tensors = tuple(torch.ones(1, 16) for _ in range(COUNT))
    arrays = tuple(np.ones((1, 16), np.float32) for _ in range(COUNT))
    launch_plan._host_views.clear()  # so that no table full of earlier tensors starts over under these
    for _ in range(3):  # the second launch keeps the views, the third takes them
        keys = [launch_plan.tensor_key("t", t) for t in tensors]
    held = launch_plan.HeldTensors()
    held.keep(tensors, tuple(view for _, view, _ in keys), tuple(key for key, _, _ in keys))
    assert held.views(tensors) is not None
    check = layout_check(tensors)
    shape, dtype = torch.Tensor.shape.__get__, torch.Tensor.dtype.__get__
    reads = {"data_ptr": torch.Tensor.data_ptr, "dtype": dtype, "shape": shape, "stride()": torch.Tensor.stride,
             "is_neg()": torch.Tensor.is_neg}
    known = {name: list(map(read, tensors)) for name, read in reads.items()}
    return {
        "numpy array's whole key (numpy_key)": lambda: [launch_plan.numpy_key("a", a) for a in arrays],
        "tensor read one by one (tensor_key)": lambda: [launch_plan.tensor_key("t", t) for t in tensors],
        "tensors held (HeldTensors.views)": lambda: held.views(tensors),
        "  of it: TensorGuards check": lambda: check(*tensors),
        "  of it: data_ptr": lambda: tuple(map(torch.Tensor.data_ptr, tensors)),
        **{f"read mapped: {name}": (lambda read=read, name=name: list(map(read, tensors)) == known[name])
           for name, read in reads.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--json", help="also write the table (us a tensor by case) to this file")
    args = parser.parse_args()
    calls = args.calls
    print(f"{machine()}; torch {torch.__version__}; us a tensor, best of {ROUNDS} x {calls} over {COUNT}")
    best = {}
    functions = cases()
    for _ in range(ROUNDS):
        for name, function in functions.items():
            best[name] = min(best.get(name, float("inf")), timeit.timeit(function, number=calls) / calls / COUNT * 1e6)
    for name, us in best.items():
        print(f"{name:40s} {us:6.3f}")
    floor = sum(us for name, us in best.items() if name.startswith("read mapped"))
    print(f"{'the reads mapped, together':40s} {floor:6.3f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"machine": machine(), "us_a_tensor": best, "reads_mapped_together": floor}, out, indent=1)


if __name__ == "__main__":
    main()
