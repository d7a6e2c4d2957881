"""The launch hot path (issue 10, item 1), after Triton's generated binder (docs/DESIGN.md §4 "Launch").

A launch binds its arguments with a function generated from the kernel's signature (`make_specializer`: Python
itself binds, no `inspect`), which also computes a cheap specialization key, and looks up a `LaunchPlan` in the
kernel's plan cache. A miss takes the slow path (jit.py: `inspect` binding, classification, device selection, the
compile cache, every check) and stores the plan it made; an error there stores nothing.

The key holds whatever decides a check or a choice the slow path makes once per plan:
- an array by its type, dtype, shape and strides (they decide the memory order and the 2D block surface width,
  pitch and height rules) and, for USM arrays, whether its first element is 64-byte aligned (the surface's base
  rule) and its queue (the device choice and the USM context check); a usm_ndarray's part is read once per array
  and stands in the key as a token (usm_entries.py), with the array's kernel arguments;
- a scalar by its type and its dtype (an int's i32 or i64 depends on its value);
- a constexpr by `hashable` (typed, floats by bits), the launch options likewise;
- the environment variables that choose the device and the compile options (ENVIRONMENT), read at each launch.
What can differ between launches with one key is checked at each launch: the grid (and its work-item limit), arrays
the kernel writes being read-only, zero loop steps, and what the trace read (dependencies.py: jit.py re-checks it).
dpnp arrays are launched as their dpnp.tensor.usm_ndarray and DLPack producers as the array they import as.

A plan is asynchronous (runtime/ordering.py) when every array is a usm_ndarray on the launch queue itself: another
queue's work is ordered by that queue's SequentialOrderManager, which the launch does not join, so it waits.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from inspect import Parameter

import numpy as np

from ..errors import LaunchError
from ..runtime.args import (BLOCK_BASE_ALIGN, ArraySpec, as_array, is_array, python_scalar, read_only, runtime_value,
                            scalar_dtype)
from ..runtime.device import NUMPY, Device, check_launch, check_work_items
from ..runtime.memory import prepare_arguments, size_args, usm_ndarray_memory
from ..runtime.sycl import scalar_arg, submit, submit_ranges
from .usm_entries import entries_get, entry

# read by select_device (the device and its target) and CompileOptions
ENVIRONMENT = ("XETILE_DEVICE", "XETILE_TARGET", "XETILE_XE_ABI", "XETILE_DEBUG")
MAX_PLANS = 1024  # per kernel; a full cache starts over
SCALARS = (bool, int, float, np.generic)


class NotImported:
    """Stands for dpnp's array types until the program imports dpnp: no value is of this type."""


def dpnp_types() -> tuple[type, type]:
    """(dpnp.ndarray, dpnp.tensor.usm_ndarray) once the program has imported dpnp, else NotImported twice: dpnp is
    optional (the `bench` extra) and takes 0.4 s to import, and a program with dpnp arrays has imported it."""
    if "dpnp" not in sys.modules:
        return NotImported, NotImported
    from dpnp import ndarray
    from dpnp.tensor import usm_ndarray
    return ndarray, usm_ndarray


def refresh_dpnp_types(specializer) -> None:
    """Gives a specializer made before the program imported dpnp the real types (the slow path calls it)."""
    if specializer is not None and specializer.__globals__["_xt_usm_ndarray"] is NotImported:
        specializer.__globals__["_xt_DpnpArray"], specializer.__globals__["_xt_usm_ndarray"] = dpnp_types()


def make_specializer(signature, constexprs, options: tuple[str, ...], hashable):
    """A function taking the kernel's parameters and, keyword-only, the launch `options` that returns the plan key
    of a launch (module docstring), the parameters' values as launched (dpnp arrays as their usm_ndarray, DLPack
    producers imported), their kernel-argument parts (LaunchPlan.launch) and, when every argument is a
    usm_ndarray with its part, the kernel arguments themselves (else None); or None when an argument is of a kind
    only the slow path handles. Generated from
    the signature, so Python itself binds: a TypeError from a call is a binding error (as is one from an
    unhashable constexpr or option), for the slow path to report. None for a signature with positional-only or
    variadic parameters (the slow path binds those)."""
    params = list(signature.parameters.values())
    if any(p.kind not in (Parameter.POSITIONAL_OR_KEYWORD, Parameter.KEYWORD_ONLY) for p in params):
        return None
    dpnp_array, usm_ndarray = dpnp_types()
    # the generated code's own names start with "_xt_", so that no parameter name shadows them
    namespace = {"_xt_DpnpArray": dpnp_array, "_xt_usm_ndarray": usm_ndarray, "_xt_other_key": other_key,
                 "_xt_hashable": hashable, "_xt_environment": environment, "_xt_type": type,
                 "_xt_id": id, "_xt_entries_get": entries_get, "_xt_make_entry": entry}
    pieces, star, body, keys, parts = [], False, [], [], []
    for i, p in enumerate(params):
        if p.kind is Parameter.KEYWORD_ONLY and not star:
            pieces.append("*")
            star = True
        if p.default is Parameter.empty:
            pieces.append(p.name)
        else:
            namespace[f"_xt_default_{i}"] = p.default
            pieces.append(f"{p.name}=_xt_default_{i}")
        key, name = f"_xt_key_{i}", p.name
        keys.append(key)
        if name in constexprs:
            body.append(f"    {key} = _xt_hashable({name})")
            parts.append("None")
        else:  # usm_ndarray inline (the hot case: its entry, usm_entries.py), the rest in other_key
            found, part = f"_xt_entry_{i}", f"_xt_part_{i}"
            parts.append(part)
            usm = [f"        {found} = _xt_entries_get(_xt_id({name}))",
                   f"        if {found} is None or {found}[0] != {name}.shape or {found}[1] != {name}.strides:",
                   f"            {found} = _xt_make_entry({name})",
                   f"        {key}, {part} = {found}[2], {found}[3]", "        _xt_usm = True",
                   f"        if {part} is None:", "            _xt_whole = False"]
            body += [f"    if _xt_type({name}) is _xt_DpnpArray:", f"        {name} = {name}.get_array()", *usm,
                     f"    elif _xt_type({name}) is _xt_usm_ndarray:", *usm,
                     "    else:", f"        {key}, {name} = _xt_other_key({name!r}, {name})",
                     f"        {part}, _xt_whole = None, False",
                     f"        if {key} is None:", "            return None"]
    pieces += ([] if star else ["*"]) + [f"{o}=None" for o in options]
    source = "\n".join([
        f"def specialize({', '.join(pieces)}):", "    _xt_usm, _xt_whole = False, True", *body,
        f"    _xt_options = ({''.join(o + ', ' for o in options)})",
        "    if _xt_options.count(None) != len(_xt_options):",
        "        _xt_options = tuple(map(_xt_hashable, _xt_options))",
        f"    return ({''.join(k + ', ' for k in keys)}_xt_options, _xt_environment(_xt_usm)), "
        f"({''.join(p.name + ', ' for p in params)}), ({''.join(p + ', ' for p in parts)}), "
        f"[{''.join('*' + p + ', ' for p in parts if p != 'None')}] if _xt_whole else None"])
    exec(source, namespace)  # noqa: S102 - the source is built from the parameter names only
    return namespace["specialize"]


def other_key(name: str, value):
    """The key part of an argument that is not a usm_ndarray and the value as launched, or (None, None)."""
    kind = type(value)
    if kind is not np.ndarray and not isinstance(value, SCALARS):
        if not is_array(value) or hasattr(value, "__sycl_usm_array_interface__"):
            return None, None  # not an array, or a USM array of another kind
        value = as_array(name, value)  # a DLPack producer
        kind = type(value)
        if kind is dpnp_types()[1]:
            return (kind, value.dtype, value.shape, value.strides, value._pointer % BLOCK_BASE_ALIGN == 0,
                    value.sycl_queue), value
    if kind is np.ndarray:
        return (kind, value.dtype, value.shape, value.strides), value
    if isinstance(value, SCALARS):
        return (kind, scalar_dtype(name, value)), value
    return None, None


def environment(usm: bool) -> tuple:
    """The values of ENVIRONMENT, read at each launch (os.environ may change between launches), but for
    XETILE_DEVICE when the launch has a usm_ndarray: its queue decides the device (select_device). Each read of
    an unset variable costs ~0.7 us (os.environ raises and catches KeyError inside)."""
    get = os.environ.get
    return None if usm else get("XETILE_DEVICE"), get("XETILE_TARGET"), get("XETILE_XE_ABI"), get("XETILE_DEBUG")


@dataclass
class LaunchPlan:
    """What a launch with one key does: the compiled kernel, the device, which parameters need a per-launch check,
    and whether it runs asynchronously (module docstring)."""
    compiled: object  # CompiledKernel
    device: Device
    names: tuple[str, ...]  # the kernel's parameters
    constexprs: dict  # name -> value, for a callable grid
    # (position, ArraySpec or ScalarSpec, the i64 size arguments of a usm_ndarray: the key fixes its shape and
    # strides) of each kernel argument
    arguments: tuple[tuple[int, object, list | None], ...]
    written: tuple[int, ...]  # positions of the arrays the kernel writes
    steps: tuple[int, ...]  # positions of the range() loop steps
    asynchronous: bool
    other_queues: tuple = ()  # of usm_ndarray arguments, when not the launch queue: a synchronous launch waits for them
    sycl_kernel: object = None  # dpctl SyclKernel, built at the first non-empty launch
    lock: object = None  # the kernel's: builds the SYCL program once
    checked: bool = False  # check_launch's device limits passed once

    @classmethod
    def of(cls, compiled, device: Device, names, constexprs: dict, values, lock) -> "LaunchPlan":
        """The plan of `compiled` on `device` for `values` (in parameter order, as launched)."""
        position, usm_ndarray = {name: i for i, name in enumerate(names)}, dpnp_types()[1]
        arguments = tuple((position[n], spec, size_args(values[position[n]].shape, values[position[n]].strides)
                           if type(values[position[n]]) is usm_ndarray else None)
                          for n, spec in compiled.specs.items())
        queues = {values[i].sycl_queue for i, _, sizes in arguments if sizes is not None}
        asynchronous = all(sizes is not None for _, spec, sizes in arguments if isinstance(spec, ArraySpec)) and \
            queues <= {device.queue}
        return cls(compiled, device, tuple(names), constexprs, arguments, tuple(position[n] for n in compiled.written),
                   tuple(position[n] for n in compiled.artifact.loop_steps), asynchronous,
                   tuple(queues - {device.queue}), lock=lock)

    def launch(self, grid, values, parts=None, args=None):
        """Runs the plan with `values` (in parameter order, as the specializer gave them), `parts`, the kernel
        arguments of each usm_ndarray the specializer found in its entry (usm_entries.py; None: none found), and
        `args`, all of the kernel arguments when the parts are (else None); the event of a SYCL launch, None on the
        numpy device or for an empty grid."""
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
            with self.lock:
                self.sycl_kernel, self.checked = self.compiled.sycl_kernel(self.device.queue), True
        check_work_items(grid, size)
        queue = self.device.queue
        if self.asynchronous:  # the ranges in SYCL order (sycl.py), made here: the hot path
            return submit_ranges(queue, self.sycl_kernel, [grid[2], grid[1], grid[0] * size], [1, 1, size],
                                 self.kernel_args(values, parts) if args is None else args, wait=False)
        global_size, local_size = (grid[0] * size, grid[1], grid[2]), (size, 1, 1)
        named = {self.names[i]: values[i] for i, _, _ in self.arguments}
        args, finish = prepare_arguments(queue, named, self.compiled.specs, self.compiled.written)
        event = submit(queue, self.sycl_kernel, global_size, local_size, args, wait=True, after=self.other_queues)
        finish()
        return event

    def kernel_args(self, values, parts=None) -> list:
        """The kernel arguments of an asynchronous plan's launch: usm_ndarray pointers and sizes (from `parts`, as
        in `launch`, where given), scalars."""
        if parts is None:
            parts = (None,) * len(values)
        args = []
        for i, spec, sizes in self.arguments:
            part = parts[i]
            if part is not None:
                args += part
            elif sizes is None:
                args.append(scalar_arg(runtime_value(spec, values[i])))
            else:
                args.append(usm_ndarray_memory(values[i]))
                args += sizes
        return args


def normalize_grid(grid, constexprs: dict) -> tuple[int, int, int]:
    if callable(grid):
        grid = grid(constexprs)
    grid = python_scalar(grid)
    if isinstance(grid, int):
        grid = (grid,)
    if isinstance(grid, (tuple, list)):
        grid = tuple(map(python_scalar, grid))
    if not isinstance(grid, tuple) or not 1 <= len(grid) <= 3 or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in grid):
        raise LaunchError(f"grid must be a tuple of 1 to 3 non-negative ints (workgroups), got {grid!r}")
    return grid + (1,) * (3 - len(grid))


def fast_grid(grid):
    """A grid already a tuple of 1 to 3 non-negative Python ints, padded to 3; None for the slow path's rules."""
    if type(grid) is tuple and 0 < len(grid) <= 3:
        for n in grid:
            if type(n) is not int or n < 0:
                return None
        return grid + (1,) * (3 - len(grid))
    return None
