"""The launch hot path (issue 10, item 1), after Triton's generated binder (docs/DESIGN.md §4 "Launch").

A launch binds its arguments with a function generated from the kernel's signature (`make_binder`: Python itself
binds, no `inspect`), computes a cheap specialization key (`launch_key`) and looks up a `LaunchPlan` in the kernel's
plan cache. A miss takes the slow path (jit.py: `inspect` binding, classification, device selection, the compile
cache, every check) and stores the plan it made; an error on the slow path stores nothing.

The key holds whatever decides a check or a choice the slow path makes once per plan:
- an array by its type, dtype, shape and strides (they decide the memory order and the 2D block surface width,
  pitch and height rules) and, for USM arrays, whether its first element is 64-byte aligned (the surface's base
  rule) and its queue (the device choice and the USM context check);
- a scalar by its type and its dtype (an int's i32 or i64 depends on its value);
- a constexpr by `hashable` (typed, floats by bits), the launch options likewise;
- the environment variables that choose the device and the compile options (ENVIRONMENT).
What can differ between launches with one key is checked at each launch: the grid (and its work-item limit), arrays
the kernel writes being read-only, zero loop steps, and what the trace read (dependencies.py: jit.py re-checks it).
dpnp arrays are launched as their dpnp.tensor.usm_ndarray and DLPack producers as the array they import as.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from inspect import Parameter

import numpy as np
from dpnp import ndarray as DpnpArray
from dpnp.tensor import usm_ndarray

from ..errors import LaunchError
from ..runtime.args import BLOCK_BASE_ALIGN, ArraySpec, as_array, is_array, read_only, runtime_value, scalar_dtype
from ..runtime.device import NUMPY, Device, check_launch, check_work_items
from ..runtime.memory import prepare_arguments, usm_ndarray_args
from ..runtime.sycl import scalar_arg, submit

ENVIRONMENT = ("XETILE_DEVICE", "XETILE_XE_ABI", "XETILE_DEBUG")  # read by select_device and CompileOptions
MAX_PLANS = 1024  # per kernel; a full cache starts over
SCALARS = (bool, int, float, np.generic)
_ENVIRON_DATA = os.environ._data  # noqa: SLF001 - see environment()
_ENVIRONMENT_BYTES = tuple(os.fsencode(name) for name in ENVIRONMENT)


def make_binder(signature, options: tuple[str, ...]):
    """A function taking the kernel's parameters and, keyword-only, the launch `options`, returning the tuple of
    the parameters' values and the tuple of the options' (None when not given); None for a signature with
    positional-only or variadic parameters (the slow path binds those). A TypeError it raises is a binding error."""
    params = list(signature.parameters.values())
    if any(p.kind not in (Parameter.POSITIONAL_OR_KEYWORD, Parameter.KEYWORD_ONLY) for p in params):
        return None
    defaults, pieces, star = {}, [], False
    for i, p in enumerate(params):
        if p.kind is Parameter.KEYWORD_ONLY and not star:
            pieces.append("*")
            star = True
        if p.default is Parameter.empty:
            pieces.append(p.name)
        else:
            defaults[f"__xetile_default_{i}"] = p.default
            pieces.append(f"{p.name}=__xetile_default_{i}")
    pieces += ([] if star else ["*"]) + [f"{o}=None" for o in options]
    names = "".join(f"{p.name}, " for p in params)
    source = (f"def bind({', '.join(pieces)}):\n"
              f"    return ({names}), ({''.join(o + ', ' for o in options)})\n")
    namespace = dict(defaults)
    exec(source, namespace)  # noqa: S102 - the source is built from parameter names only
    return namespace["bind"]


def launch_key(names, constexpr_flags, values, options, hashable):
    """The plan cache key of bound `values` (module docstring) and the values as launched (dpnp arrays as
    usm_ndarray, DLPack producers imported); None when an argument is of a kind only the slow path handles."""
    launched, parts = list(values), []
    for i, value in enumerate(values):
        if constexpr_flags[i]:
            parts.append(hashable(value))
            continue
        kind = type(value)
        if kind is DpnpArray:
            value = launched[i] = value.get_array()
            kind = usm_ndarray
        elif kind is not usm_ndarray and kind is not np.ndarray and not isinstance(value, SCALARS):
            if not is_array(value) or hasattr(value, "__sycl_usm_array_interface__"):
                return None
            value = launched[i] = as_array(names[i], value)  # a DLPack producer
            kind = type(value)
            if kind is not usm_ndarray and kind is not np.ndarray:
                return None
        if kind is usm_ndarray:
            parts.append((kind, value.dtype, value.shape, value.strides, value._pointer % BLOCK_BASE_ALIGN == 0,
                          value.sycl_queue))
        elif kind is np.ndarray:
            parts.append((kind, value.dtype, value.shape, value.strides))
        else:
            parts.append((kind, scalar_dtype(names[i], value)))
    parts.append(options if options.count(None) == len(options) else tuple(map(hashable, options)))
    parts.append(environment())
    return tuple(parts), launched


def environment() -> tuple:
    """The values of ENVIRONMENT. os.environ's own lookups encode the name and raise KeyError inside for an unset
    variable (about 0.8 us each, a tenth of a launch's budget), so the bytes mapping it wraps is read directly."""
    return tuple(map(_ENVIRON_DATA.get, _ENVIRONMENT_BYTES))


@dataclass
class LaunchPlan:
    """What a launch with one key does: the compiled kernel, the device, which parameters need a per-launch check,
    and whether it runs asynchronously (every array is a usm_ndarray: no copy back to wait for)."""
    compiled: object  # CompiledKernel
    device: Device
    names: tuple[str, ...]  # the kernel's parameters
    constexprs: dict  # name -> value, for a callable grid
    arguments: tuple[tuple[int, object], ...]  # (position, ArraySpec or ScalarSpec) of each kernel argument
    written: tuple[int, ...]  # positions of the arrays the kernel writes
    steps: tuple[int, ...]  # positions of the range() loop steps
    asynchronous: bool
    sycl_kernel: object = None  # dpctl SyclKernel, built at the first non-empty launch
    checked: bool = False  # check_launch's device limits passed once

    def launch(self, grid, values, normalize_grid, build):
        """Runs the plan with `values` (in parameter order, as launch_key gave them); the event of a SYCL launch,
        None on the numpy device or for an empty grid. `build()` gives the SYCL kernel on first use."""
        grid = fast_grid(grid) or normalize_grid(grid, self.constexprs)
        for i in self.written:
            if read_only(values[i]):
                raise LaunchError(f"argument '{self.names[i]}' is read-only but the kernel writes it")
        for i in self.steps:
            if values[i] == 0:
                raise LaunchError(f"argument '{self.names[i]}' is the step of a range() loop in the kernel and must "
                                  "not be 0")
        if self.device.kind == NUMPY:
            self.compiled.run(grid, dict(zip(self.names, values)))  # the interpreter checks its grid limit
            return None
        if not all(grid):
            return None
        size = self.compiled.workgroup_size
        if not self.checked:
            check_launch(self.device.queue.sycl_device, grid, size)
            self.sycl_kernel, self.checked = build(), True
        check_work_items(grid, size)
        global_size, local_size = (grid[0] * size, grid[1], grid[2]), (size, 1, 1)
        queue = self.device.queue
        if self.asynchronous:
            args = [a for i, spec in self.arguments for a in kernel_args(spec, values[i])]
            return submit(queue, self.sycl_kernel, global_size, local_size, args, wait=False)
        named = {self.names[i]: values[i] for i, _ in self.arguments}
        args, finish = prepare_arguments(queue, named, self.compiled.specs, self.compiled.written)
        event = submit(queue, self.sycl_kernel, global_size, local_size, args, wait=True)
        finish()
        return event


def kernel_args(spec, value) -> list:
    """The kernel arguments of a parameter of an asynchronous plan: a usm_ndarray's or a scalar's."""
    if isinstance(spec, ArraySpec):
        return usm_ndarray_args(value)
    return [scalar_arg(runtime_value(spec, value))]


def fast_grid(grid):
    """A grid already a tuple of 1 to 3 non-negative Python ints, padded to 3; None for the slow path's rules."""
    if type(grid) is tuple and 0 < len(grid) <= 3:
        for n in grid:
            if type(n) is not int or n < 0:
                return None
        return grid + (1,) * (3 - len(grid))
    return None
