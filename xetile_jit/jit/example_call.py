"""`python -m xetile_jit compile`'s CALL: a launch written as text, `kernel(f16[1024,1024], ..., 1024, BM=256,
sg_layout=[8,4])`, compiled for a target without running. `dtype[shape]` is a zero array of that dtype and shape
(`.T` after it: its column-major transpose), every other argument a Python literal, as in a launch."""
from __future__ import annotations

import ast
import runpy
from pathlib import Path

import numpy as np

from ..errors import LaunchError
from ..ir.types import ALL_DTYPES, bool_
from .kernel import CompiledKernel, Kernel

SHORT_NAMES = {d.mlir.replace("ui", "u"): d for d in ALL_DTYPES} | {"bool": bool_}


def compile_call(file: Path, call: str, target: str) -> CompiledKernel:
    """The kernel CALL names, from FILE (run as a module, not as __main__), compiled for `target`."""
    namespace = runpy.run_path(str(file), run_name=Path(file).stem)
    node = ast.parse(call, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise LaunchError(f"--call must be a call of a kernel by name, got {call!r}")
    kernel = namespace.get(node.func.id)
    if not isinstance(kernel, Kernel):
        kernels = sorted(name for name, value in namespace.items() if isinstance(value, Kernel))
        raise LaunchError(f"{file} has no kernel {node.func.id!r}; its kernels: {', '.join(kernels) or 'none'}")
    args = [argument(a) for a in node.args]
    kwargs = {k.arg: argument(k.value) for k in node.keywords}
    return kernel.warmup(*args, target=target, **kwargs)


def argument(node: ast.expr):
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return argument(node.value).T
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in SHORT_NAMES:
        shape = ast.literal_eval(node.slice)
        return np.zeros(shape if isinstance(shape, tuple) else (shape,), SHORT_NAMES[node.value.id].np_dtype)
    return ast.literal_eval(node)
