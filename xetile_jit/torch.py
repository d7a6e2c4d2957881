"""`xetile.torch`: functions that launch xetile kernels as torch operators (docs/guide.md "PyTorch").

`op(name, fn, outputs=...)` registers `fn` as `torch.library.custom_op(name)`: torch calls it with real tensors, and
with fake ones (FakeTensor, under torch.compile and torch.export) calls its fake implementation instead, which makes
empty tensors of the shapes and dtypes `outputs` gives, on the device of the first tensor argument. So an op is
one node of a torch.compile graph (no graph break: dynamo never traces into it) and `backward=` (torch's
`register_autograd`) gives it a gradient, written as more xetile ops.

`empty_shared(shape, dtype)` makes a CPU tensor in USM shared memory, which launches on the CPU SYCL device read and
write in place (runtime/shared_memory.py): zero copy, where a tensor of torch's allocator is copied both ways.

`fn` is a Python function whose annotations give the op's schema (torch.library.custom_op's rules: Tensor, int,
float, bool, ... arguments; a Tensor or a tuple of Tensors returned, or None for an op that writes the tensors
`mutates_args` names), or an `@xetile.kernel`: its op takes the kernel's parameters that are neither outputs nor
`constants` (Tensors, but for those named in `scalars` with their Python type), allocates the outputs and launches
`kernel[grid(*inputs)]` with inputs, outputs and constants.

Imported on first use of `xetile.torch` (xetile_jit/__init__.py): torch takes seconds to import.
"""
from __future__ import annotations

from typing import Callable

import torch

from .jit.kernel import Kernel, hide_launches_from_torch_compile
from .runtime import device as devices
from .runtime.torch_tensors import numpy_dtype

hide_launches_from_torch_compile()  # kernels made before torch was imported launch so too

SCHEMA_TYPES = {int: "SymInt", float: "float", bool: "bool"}


def op(name: str, fn=None, *, outputs: Callable | None = None, mutates_args=(), backward: Callable | None = None,
       setup_context: Callable | None = None, grid: Callable | None = None, constants: dict | None = None,
       scalars: dict | None = None):
    """Registers `fn` (a function or a Kernel: module docstring) as the custom op `name` ("namespace::op_name") and
    returns it (torch's CustomOpDef: call it like `fn`). `outputs(*args, **kwargs)` gives the shape and dtype of its
    output, a `(shape, dtype)` pair, or a tuple of pairs for several; for a Kernel a dict of the output
    parameters' names to such functions of the inputs. None: the function returns nothing and writes the tensors
    `mutates_args` names (an in-place op, `-> None`). `backward` and `setup_context` go to torch's
    `register_autograd`. Without `fn`, a decorator."""
    if fn is None:
        return lambda f: op(name, f, outputs=outputs, mutates_args=mutates_args, backward=backward,
                            setup_context=setup_context, grid=grid, constants=constants, scalars=scalars)
    schema = None
    if isinstance(fn, Kernel):
        fn, outputs, schema = kernel_op(fn, outputs, grid, constants or {}, scalars or {})
    elif grid is not None or constants or scalars:
        raise TypeError(f"op {name!r}: grid=, constants= and scalars= describe a kernel; a function launches its "
                        "kernels itself")
    elif outputs is None and not mutates_args:
        raise TypeError(f"op {name!r}: outputs=None is an op that returns nothing; name the tensors it writes in "
                        "mutates_args")
    custom = torch.library.custom_op(name, fn, mutates_args=mutates_args, schema=schema)
    custom.register_fake(fake_of(outputs))
    if backward is not None:
        custom.register_autograd(backward, setup_context=setup_context)
    return custom


def fake_of(outputs: Callable | None) -> Callable:
    """The fake implementation: empty tensors of the `outputs` shapes and dtypes on the first tensor's device;
    nothing for an op without outputs."""
    def fake(*args, **kwargs):
        if outputs is None:
            return None
        device = first_device(*args, *kwargs.values())
        specs = outputs(*args, **kwargs)
        if is_pair(specs):
            return torch.empty(specs[0], dtype=specs[1], device=device)
        return tuple(torch.empty(shape, dtype=dtype, device=device) for shape, dtype in specs)
    return fake


def first_device(*args):
    """The device of the first tensor among `args` (None: torch's default)."""
    return next((a.device for a in args if isinstance(a, torch.Tensor)), None)


def is_pair(specs) -> bool:
    """Whether `outputs` gave one (shape, dtype) pair rather than a tuple of them."""
    return len(specs) == 2 and isinstance(specs[1], torch.dtype)


def kernel_op(kernel: Kernel, outputs: dict, grid: Callable | None, constants: dict, scalars: dict):
    """(function, outputs, schema) of the op launching `kernel` (module docstring)."""
    if grid is None or not isinstance(outputs, dict):
        raise TypeError(f"op of kernel {kernel.__name__}: give grid= (a function of the inputs) and outputs= (a dict "
                        "of output parameter names to functions of the inputs giving (shape, dtype))")
    unknown = set(outputs) | set(constants) | set(scalars)
    unknown -= set(kernel.params)
    if unknown:
        raise TypeError(f"op of kernel {kernel.__name__}: no parameters {sorted(unknown)}; its parameters are "
                        f"{kernel.params}")
    inputs = [p for p in kernel.params if p not in outputs and p not in constants]
    bad = {p: t for p, t in scalars.items() if t not in SCHEMA_TYPES}
    if bad:
        raise TypeError(f"op of kernel {kernel.__name__}: scalars are int, float or bool, not {bad}")
    arguments = ", ".join(f"{SCHEMA_TYPES[scalars[p]] if p in scalars else 'Tensor'} {p}" for p in inputs)
    results = "Tensor" if len(outputs) == 1 else f"({', '.join('Tensor' for _ in outputs)})"

    def shapes(*args):
        return tuple(spec(*args) for spec in outputs.values())

    def launch(*args):
        made = {name: torch.empty(shape, dtype=dtype, device=first_device(*args))
                for name, (shape, dtype) in zip(outputs, shapes(*args))}
        kernel[grid(*args)](**dict(zip(inputs, args)), **made, **constants)
        results = tuple(made.values())
        return results[0] if len(results) == 1 else results

    def single_or_all(*args):
        found = shapes(*args)
        return found[0] if len(found) == 1 else found

    return launch, single_or_all, f"({arguments}) -> {results}"


def empty_shared(shape, dtype=torch.float32, device=None) -> torch.Tensor:
    """An uninitialized CPU tensor in USM shared memory of `device`'s SYCL context (default: the CPU device), which
    launches there take in place, zero copy (module docstring); views of it too. bfloat16, which numpy lacks, is
    allocated as int16 and viewed."""
    bf16 = dtype is torch.bfloat16
    array = devices.empty_shared(shape, "int16" if bf16 else numpy_dtype(dtype), device or devices.cpu_device().queue)
    tensor = torch.from_numpy(array)  # holds the array, which holds the memory
    return tensor.view(torch.bfloat16) if bf16 else tensor
