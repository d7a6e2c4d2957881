"""The launch hot path, after Triton's generated binder (docs/DESIGN.md §4 "Launch").

A launch binds its arguments with a function generated from the kernel's signature (`make_specializer`: Python
itself binds, no `inspect`), which also computes a cheap specialization key, and looks up a `LaunchPlan` in the
kernel's plan cache. A miss takes the slow path (jit/kernel.py: `inspect` binding, classification, device selection, the
compile cache, every check) and stores the plan it made; an error there stores nothing.

The key holds whatever decides a check or a choice the slow path makes once per plan:
- an array by its type, dtype, shape and strides (they decide the memory order and the 2D block surface width,
  pitch and height rules) and, for USM arrays, whether its first element is 64-byte aligned (the surface's base
  rule) and its queue (the device choice and the USM context check); a USM array's part (a usm_ndarray's read once
  per array, any other's `__sycl_usm_array_interface__` at each launch) stands in the key as a token
  (runtime/usm_entries.py), with the array's kernel arguments;
- a scalar by its type and its dtype (an int's i32 or i64 depends on its value);
- a constexpr by `hashable` (typed, floats by bits), the launch options likewise (None, ints, bools and strings
  written inline: `inline_hashable`);
- the environment variables that choose the device and the compile options (ENVIRONMENT), read at each launch.
What can differ between launches with one key is checked at each launch: the grid (and its work-item limit), arrays
the kernel writes being read-only, zero loop steps, and what the trace read (compiler/dependencies.py: jit/kernel.py
re-checks it).
dpnp arrays are launched as their dpnp.tensor.usm_ndarray and DLPack producers as the array they import as; torch
CPU tensors as numpy views, whose layouts a launch reads one by one (tensor_key) or, for tensors launched before,
checks all at once (HeldTensors).

A plan is asynchronous (runtime/ordering.py) when every array is a USM array whose queue (a usm_ndarray's, or the
interface's `syclobj` when it is a SyclQueue) is the launch queue itself: another queue's work is ordered by that
queue's SequentialOrderManager, which the launch does not join, and an interface naming a SyclContext names no
order at all, so those launches wait.
"""
from __future__ import annotations

import ctypes
import os
import types
from dataclasses import dataclass
from inspect import Parameter

import dpctl
import numpy as np

from ..errors import LaunchError
from ..ir.types import int32
from ..runtime.args import (INT32_RANGE, ArraySpec, NotImported, as_array, dpnp_types, is_array, python_scalar,
                            read_only, runtime_value, scalar_dtype, usm_interface, usm_strides)
from ..runtime.device import NUMPY, Device, check_launch, check_work_items
from ..runtime.memory import interface_pointer, prepare_arguments, size_args, usm_ndarray_memory
from ..runtime import native_submit, ordering
from ..runtime.packed_sizes import AS_GIVEN, SizePacking
from ..runtime.profiling import active_recording, launch_queue
from ..runtime.sycl import scalar_arg, submit_ranges
from ..runtime.torch_tensors import (bits_visible, host_view, is_tensor_type, layout_check, tensor_data_ptr,
                                     unowned_view)
from ..runtime.usm_entries import entries_get, entry, interface_entry, key_token
from ..target.block_io import BLOCK_BASE_ALIGN
from ..target.targets import TARGETS

# read by select_device (the device and its target) and CompileOptions
ENVIRONMENT = ("XETILE_DEVICE", "XETILE_TARGET", "XETILE_XE_ABI", "XETILE_DEBUG")
MAX_PLANS = 1024  # per kernel; a full cache starts over
SCALARS = (bool, int, float, np.generic)
PYTHON_SCALARS = frozenset((bool, int, float))
# the kernel argument of a Python scalar of each dtype scalar_dtype gives it: its bits as `scalar_arg` of the numpy
# scalar has them (floats rounded to nearest), made with no numpy scalar in between
PYTHON_SCALAR_ARGS = {"bool": ctypes.c_bool, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
                      "float32": ctypes.c_float}
# the types whose cache-key form (jit/kernel.py hashable) is (type, value), made inline by the specializer
PLAIN_CONSTANTS = frozenset((int, bool, str))
INT32_KEY = (int, int32.name)  # scalar_key's key part of an int in INT32_RANGE
MAX_KEY_FUNCTIONS = 256  # argument types whose key function is remembered; a full table starts over
MAX_HOST_VIEWS = 4096  # CPU tensors whose host view is kept (tensor_key)
MAX_HELD = 64  # address tuples of a kernel's CPU tensors checked at once (HeldTensors)
NO_GRID = object()  # no launch's grid (LaunchPlan.grid_ranges before the first)
NO_ENTRY = (None, lambda: None, None, None)  # what the binder reads for a usm_ndarray without an entry
NO_ARGUMENT = object()  # a parameter make_binder's function was not given


def made_before_dpnp(specializer) -> bool:
    """Whether `specializer` was made before the program imported dpnp, which it has now: such a specializer knows
    no dpnp array and keys one by its `__sycl_usm_array_interface__`, read at each launch, so the kernel makes it
    again at its first launch with one (jit/kernel.py make_plan)."""
    return specializer is not None and specializer.__globals__["_xt_usm_ndarray"] is NotImported and \
        dpnp_types()[1] is not NotImported


def make_specializer(signature, constexprs, options: tuple[str, ...], hashable):
    """A function taking the kernel's parameters and, keyword-only, the launch `options` that returns the plan key
    of a launch (module docstring), the parameters' values as launched (dpnp arrays as their usm_ndarray, DLPack
    producers imported), their kernel-argument parts (LaunchPlan.launch) and, when every argument has its part
    (USM arrays with their entry's, scalars), those parts alone, in order (else None); or None when an argument is of
    a kind only the slow path handles. Generated from the signature, so Python itself binds: a TypeError from a
    call is a binding error (as is one from an unhashable constexpr or option), for the slow path to report. None for
    a signature with positional-only or variadic parameters (the slow path binds those)."""
    params = list(signature.parameters.values())
    if any(p.kind not in (Parameter.POSITIONAL_OR_KEYWORD, Parameter.KEYWORD_ONLY) for p in params):
        return None
    environment_read, environment_names = environment_reads()
    dpnp_array, usm_ndarray = dpnp_types()
    unwrap = dpnp_unwrap(dpnp_array)
    # the generated code's own names start with "_xt_", so that no parameter name shadows them
    namespace = {"_xt_DpnpArray": dpnp_array, "_xt_usm_ndarray": usm_ndarray, "_xt_key_of": _key_functions.get,
                 "_xt_key_function": key_function, "_xt_hashable": hashable,
                 "_xt_type": type, "_xt_id": id, "_xt_entries_get": entries_get, "_xt_make_entry": entry,
                 "_xt_no_entry": NO_ENTRY,
                 **environment_names}
    namespace |= {"_xt_held": HeldTensors(), "_xt_tensor_key": tensor_key, "_xt_scalar_key": scalar_key,
                  "_xt_int": int, "_xt_int32_key": INT32_KEY, "_xt_c_int32": PYTHON_SCALAR_ARGS[int32.name],
                  "_xt_plain": PLAIN_CONSTANTS, "_xt_none_key": hashable(None)}
    body, keys, parts, arguments = [], [], [], []
    for i, p in enumerate(params):
        key, name = f"_xt_key_{i}", p.name
        keys.append(key)
        if name in constexprs:
            body.append(f"    {key} = {inline_hashable(name)}")
            parts.append("None")
        else:  # usm_ndarray inline (the hot case: usm_entries.current_entry, no call), the rest by key_function
            part = f"_xt_part_{i}"
            parts.append(part)
            held = f"_xt_views[{len(arguments)}]"
            arguments.append((name, key))
            # an id without an entry gets NO_ENTRY, whose reference is dead: one unpacking for either
            usm = [f"        _xt_shape, _xt_ref, {key}, {part} = _xt_entries_get(_xt_id({name}), _xt_no_entry)",
                   f"        if _xt_ref() is not {name} or _xt_shape != {name}.shape:",
                   f"            _xt_shape, _xt_ref, {key}, {part} = _xt_make_entry({name})",
                   "        _xt_usm = True",
                   f"        if {part} is None:", "            _xt_whole = False"]
            body += [f"    if _xt_views is not None and {held} is not None:",  # a CPU tensor HeldTensors checked
                     f"        ({key}, {name}), {part} = {held}, None", "        _xt_whole = False",
                     "    else:", *indent([
                         f"    _xt_kind = _xt_type({name})",
                         "    if _xt_kind is _xt_DpnpArray:", f"        {name} = {name}{unwrap}",
                         "        _xt_kind = _xt_usm_ndarray",
                         "    if _xt_kind is _xt_usm_ndarray:", *usm,
                         # an int in i32's range, a size or an offset (the common scalar), as scalar_key makes it
                         f"    elif _xt_kind is _xt_int and {INT32_RANGE.start} <= {name} < {INT32_RANGE.stop}:",
                         f"        {key}, {part} = _xt_int32_key, [_xt_c_int32({name})]",
                         # None: no kernel argument (Kernel.specialize), so the parts are not every argument's
                         f"    elif {name} is None:", f"        {key}, {part}, _xt_whole = _xt_none_key, None, False",
                         "    else:", "        _xt_key = _xt_key_of(_xt_kind) or _xt_key_function(_xt_kind)",
                         f"        {key}, {name}, {part} = _xt_key({name!r}, {name})",
                         f"        if {key} is None:", "            return None",
                         "        if _xt_key is _xt_tensor_key:", "            _xt_tensors = True",
                         f"        if {part} is None:", "            _xt_whole = False",
                         "        elif _xt_key is not _xt_scalar_key:", "            _xt_usm = True"])]
    given = f"({''.join(name + ', ' for name, _ in arguments)})"
    source = "\n".join([
        f"def specialize({generated_parameters(params, options, namespace)}):",
        "    _xt_usm, _xt_whole, _xt_tensors = False, True, False",
        f"    _xt_arguments = {given}",
        "    _xt_views = None if _xt_held.pattern is None else _xt_held.views(_xt_arguments)", *body,
        # a launch that read tensors one by one holds those whose views it found kept (HeldTensors.keep)
        "    if _xt_tensors:",
        f"        _xt_held.keep(_xt_arguments, {given}, ({''.join(key + ', ' for _, key in arguments)}))",
        # no option given (the hot case): None in the key, no tuple to build and hash
        f"    _xt_options = None if {' and '.join(o + ' is None' for o in options) or 'True'} else "
        f"({''.join(inline_hashable(o) + ', ' for o in options)})",
        f"    return ({''.join(k + ', ' for k in keys)}_xt_options, {environment_read}), "
        f"({''.join(p.name + ', ' for p in params)}), ({''.join(p + ', ' for p in parts)}), "
        f"({''.join(p + ', ' for p in parts if p != 'None')}) if _xt_whole else None"])
    exec(source, namespace)  # noqa: S102 - the source is built from the parameter names only
    return namespace["specialize"]


def make_binder(signature, options: tuple[str, ...]):
    """A function taking the kernel's parameters and, keyword-only, the launch `options` (dropped) that returns the
    arguments given by parameter name, in the signature's order, defaults included and parameters not given left out:
    `inspect.Signature.bind_partial` and `apply_defaults`, generated so that Python itself binds (an argument list that
    does not bind is its TypeError). For what reads every argument by name at each launch: an autotuned kernel's key,
    a callable grid, the heuristics (`xetile.ops.matmul` bound in 11.8 us a launch by `inspect`, 1.5 us so; Zen 5,
    2026-12-04). None for a signature with positional-only or variadic parameters (`inspect` binds those)."""
    params = list(signature.parameters.values())
    if any(p.kind not in (Parameter.POSITIONAL_OR_KEYWORD, Parameter.KEYWORD_ONLY) for p in params):
        return None
    namespace = {"_xt_missing": NO_ARGUMENT}
    source = "\n".join([
        f"def bind({generated_parameters(params, options, namespace, missing=NO_ARGUMENT)}):",
        f"    _xt_named = {{{''.join(f'{p.name!r}: {p.name}, ' for p in params)}}}",
        "    return {n: v for n, v in _xt_named.items() if v is not _xt_missing}"])
    exec(source, namespace)  # noqa: S102 - the source is built from the parameter names only
    return namespace["bind"]


def generated_parameters(params: list, options: tuple[str, ...], namespace: dict, missing=Parameter.empty) -> str:
    """The parameter list of a function generated from a kernel's signature (make_specializer, make_binder): its
    parameters as they are, each default a name bound in `namespace` (`missing` the default of those without one,
    where given), then the launch `options`, keyword-only, None by default."""
    pieces, star = [], False
    for i, p in enumerate(params):
        if p.kind is Parameter.KEYWORD_ONLY and not star:
            pieces.append("*")
            star = True
        default = missing if p.default is Parameter.empty else p.default
        if default is Parameter.empty:
            pieces.append(p.name)
        else:
            namespace[f"_xt_default_{i}"] = default
            pieces.append(f"{p.name}=_xt_default_{i}")
    return ", ".join(pieces + ([] if star else ["*"]) + [f"{o}=None" for o in options])


def inline_hashable(name: str) -> str:
    """The generated expression of `hashable(name)`: inline for None, ints, bools and strings (a launch's constexprs
    and options mostly), whose form is their type and value; a call for the others. The bench's layer norm with two
    constexprs and an option by keyword bound in 6.0-11.1 us with a call each, 3.1-5.1 us so (docs/performance.md
    "On the AVX2 EPYC")."""
    return (f"(_xt_none_key if {name} is None else (_xt_type({name}), {name}) if _xt_type({name}) in _xt_plain "
            f"else _xt_hashable({name}))")


def indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def dpnp_unwrap(dpnp_array) -> str:
    """How the binder gets a dpnp array's usm_ndarray: what `get_array()` returns, the `_array_obj` slot, read inline
    when the class has that slot (no call: ~0.04 us an array of the ~0.4 a dpnp array's binding costs), else by the
    call (a dpnp without the slot)."""
    slot = getattr(dpnp_array, "_array_obj", None)
    return "._array_obj" if isinstance(slot, types.MemberDescriptorType) else ".get_array()"


def key_function(kind: type):
    """The key function of the arguments of type `kind`, remembered (MAX_KEY_FUNCTIONS types), for an argument that
    is not a usm_ndarray: it gives the argument's key part, its value as launched and, for a USM array known by its
    interface, its kernel arguments (runtime/usm_entries.py; None for the others); or (None, None, None). The
    specializer looks it up by the argument's type: the isinstance tests cost ~1.5 us an argument on a loaded 2-core
    machine, as much as the rest of a numpy array's key."""
    if kind is np.ndarray:
        key_of = numpy_key
    elif issubclass(kind, SCALARS):
        key_of = scalar_key
    elif is_tensor_type(kind):
        key_of = tensor_key
    else:
        key_of = interface_key
    if len(_key_functions) >= MAX_KEY_FUNCTIONS:
        _key_functions.clear()
    _key_functions[kind] = key_of
    return key_of


def numpy_key(name: str, value: np.ndarray, kind=np.ndarray):
    """`kind` stands for the type that brought the array: a torch CPU tensor's view picks its own device."""
    return (kind, value.dtype, value.shape, value.strides), value, None


def scalar_key(name: str, value):
    """A scalar's key part is its type and its dtype's name (hashing the DType itself hashes its numpy dtype at each
    launch), and its part the kernel argument `LaunchPlan.kernel_args` would make of it: a launch with scalars
    then passes the specializer's arguments as a launch of arrays alone does."""
    dtype, kind = scalar_dtype(name, value), type(value)
    make = PYTHON_SCALAR_ARGS.get(dtype.name) if kind in PYTHON_SCALARS else None
    return (kind, dtype.name), value, [make(value) if make else scalar_arg(dtype.np_dtype.type(value))]


def tensor_key(name: str, tensor):
    """A CPU tensor as its numpy view (runtime/torch_tensors.py), an XPU tensor as the array it imports as. A CPU
    tensor's key part and view are kept by its id with what decides them (`_host_views`), read at each launch because
    in-place ops (`t_`, `resize_`, `set_`) and `.data = ...` change them: its type, address, dtype, shape and strides,
    and its negative bit (a view with it set, which `Tensor.numpy()` refuses, is never kept). The view kept is made
    over the memory by address alone, so it keeps no tensor alive, and it is right for any tensor that has the id and
    all of these when launched. The key part is a token (usm_entries.key_token) standing for the view's numpy key,
    so that the plan key hashes an int for it. The reads cost a tensor ~0.8 us more than a numpy array's whole key
    (docs/performance.md "The torch path"): tensors launched again are checked all at once instead (HeldTensors)."""
    if not tensor.is_cpu:
        return interface_key(name, tensor)
    layout = (type(tensor), tensor.data_ptr(), tensor.dtype, tensor.shape, tensor.stride())
    kept = _host_views.get(id(tensor))
    if kept is not None and kept[2] is not None and kept[0] == layout and not tensor.is_neg():
        return kept[1], kept[2], None
    return host_view_key(name, tensor, layout, kept)


def host_view_key(name: str, tensor, layout: tuple, kept: tuple | None):
    """`tensor_key` of a CPU tensor with no view kept for its id and layout: its view made now; kept (by address
    alone: torch_tensors.unowned_view) when its id had this layout at its last launch, so that a tensor made for one
    launch (an op's output) pays no more than its view; MAX_HOST_VIEWS ids, a full table starts over."""
    view = host_view(tensor)
    key = key_token(numpy_key(name, view, type(tensor))[0])
    if view.size:
        again = kept is not None and kept[0] == layout
        if len(_host_views) >= MAX_HOST_VIEWS:
            _host_views.clear()
        _host_views[id(tensor)] = (layout, key, unowned_view(view, layout[1]) if again else None)
    return key, view, None


def interface_key(name: str, value):
    """A USM array known by its interface, or another DLPack producer by the array it imports as."""
    kind = type(value)
    usm = usm_interface(value)
    if usm is None:
        if not is_array(value):
            return None, None, None
        value = as_array(name, value)  # a torch tensor or another DLPack producer
        if type(value) is dpnp_types()[1]:
            return (kind, value.dtype, value.shape, value.strides, value._pointer % BLOCK_BASE_ALIGN == 0,
                    value.sycl_queue), value, None
        if type(value) is np.ndarray:  # keyed by the producer's type: a torch CPU tensor picks its own device
            return numpy_key(name, value, kind)
        usm = usm_interface(value)  # an XPU torch tensor's StreamArray
        if usm is None:
            return None, None, None
    token, args = interface_entry(usm)
    return token, value, args


@dataclass
class HeldTensors:
    """The CPU tensors of a kernel's launches checked with one call a launch rather than read one by one: ~0.7 us a
    tensor less (docs/performance.md "The torch path"). A launch that read its CPU tensors one by one holds those
    whose views it found kept (`tensor_key`: each was launched before with its layout): their positions among the
    kernel's non-constexpr arguments and their types, and under the tuple of their addresses (`data_ptr()`) a check
    of their layouts (runtime/torch_tensors.py layout_check: type, dispatch keys with the negative bit, dtype,
    device, shape, strides) and their key parts and views. A later launch with tensors at those positions at those
    addresses that pass the check takes the key parts and views held: a view made over the memory by address alone
    is right for any tensor with its address and layout, whatever its id, as in `tensor_key`. Launches with one set
    of positions and types share up to MAX_HELD address tuples (tensors that take turns, such as a loop's two
    buffers); another set starts over. Inside an operator's implementation nothing is held or taken
    (runtime/torch_tensors.py bits_visible)."""
    # (positions, types, {addresses: (layout check, (key part, view) or None by position)}), replaced whole, so that
    # a launch in another thread reads one set
    pattern: tuple | None = None
    data_ptr: object = None  # torch.Tensor.data_ptr, read once torch is imported

    def views(self, arguments: tuple) -> tuple | None:
        """The (key part, view) of each held position of a launch with `arguments` (None elsewhere), or None."""
        positions, kinds, held = self.pattern
        if type(arguments[positions[0]]) is not kinds[0] or not bits_visible():  # other arrays, or inside an op
            return None
        tensors = tuple(map(arguments.__getitem__, positions))
        try:
            found = held.get(tuple(map(self.data_ptr, tensors)))
        except (TypeError, RuntimeError):  # not a tensor, or one without storage
            return None
        if found is None or not found[0](*tensors):  # the check's types are `kinds`
            return None
        return found[1]

    def keep(self, arguments: tuple, values: tuple, keys: tuple) -> None:
        """Holds the CPU tensors among `arguments` whose views (`values`, with their key parts `keys`) were kept."""
        positions = tuple(i for i, (argument, value) in enumerate(zip(arguments, values))
                          if is_kept_view(argument, value))
        tensors = tuple(arguments[i] for i in positions)
        if not tensors or len(set(map(id, tensors))) < len(tensors):  # TensorGuards fails a tensor given twice
            return
        kinds, addresses = tuple(map(type, tensors)), tuple(map(tensor_data_ptr(), tensors))
        pattern = self.pattern
        held = pattern[2] if pattern is not None and pattern[:2] == (positions, kinds) else None
        found = None if held is None else held.get(addresses)
        if found is not None and found[0](*tensors):  # held, beside a new tensor (an op's output)
            return
        check = layout_check(tensors)
        if check is None:
            return
        if held is None or len(held) >= MAX_HELD:
            held, self.data_ptr = {}, tensor_data_ptr()
            self.pattern = (positions, kinds, held)  # `kinds` keeps alive the types the checks know by address
        held[addresses] = (check, tuple((keys[i], values[i]) if i in positions else None
                                        for i in range(len(arguments))))


def is_kept_view(argument, value) -> bool:
    """Whether the launch took `value` for `argument` from the views `tensor_key` keeps."""
    kept = _host_views.get(id(argument))
    return kept is not None and kept[2] is value


_key_functions: dict[type, object] = {}
# id of a CPU tensor -> ((type, address, dtype, shape, strides) at its last launch, its key part's token, its host
# view by address or None when launched once: tensor_key)
_host_views: dict[int, tuple] = {}


def environment(usm: bool) -> tuple:
    """The values of ENVIRONMENT, read at each launch (os.environ may change between launches), but for
    XETILE_DEVICE when the launch has a USM array: its queue decides the device (select_device). What the specializer
    reads off POSIX; on POSIX it reads them itself (`environment_reads`)."""
    return tuple(None if usm and name == "XETILE_DEVICE" else os.environ.get(name) for name in ENVIRONMENT)


def environment_reads() -> tuple[str, dict]:
    """The specializer's expression of `environment(_xt_usm)` and the names it uses. On POSIX the values are read
    inline (no Python frame a launch) as bytes from the dict under os.environ, `os.environ._data`: `os.environ.get` of
    an unset variable raises and catches a KeyError inside, 0.7 us a variable on a quiet machine and 5.7 us on a
    loaded 2-core one, where the dict's `get` takes 0.2. Windows' os.environ keeps its keys upper-cased: there the
    specializer calls `environment`."""
    if os.name != "posix":
        return "_xt_environment(_xt_usm)", {"_xt_environment": environment}
    reads = [f"_xt_getenv({os.fsencode(name)!r})" for name in ENVIRONMENT]
    reads[0] = f"None if _xt_usm else {reads[0]}"  # XETILE_DEVICE
    return f"({', '.join(reads)})", {"_xt_getenv": os.environ._data.get}


@dataclass
class LaunchPlan:
    """What a launch with one key does: the compiled kernel, the device, which parameters need a per-launch check,
    and whether it runs asynchronously (module docstring)."""
    compiled: object  # CompiledKernel
    device: Device
    names: tuple[str, ...]  # the kernel's parameters
    # (position, ArraySpec or ScalarSpec, the i64 size arguments of a USM array: the key fixes its shape and
    # strides, and the function giving its pointer argument when the specializer found none) of each kernel argument
    arguments: tuple[tuple[int, object, list | None, object], ...]
    written: tuple[int, ...]  # positions of the arrays the kernel writes
    steps: tuple[int, ...]  # positions of the range() loop steps
    asynchronous: bool
    other_queues: tuple = ()  # of USM arguments, when not the launch queue: a synchronous launch waits for them
    sycl_kernel: object = None  # dpctl SyclKernel, built at the first non-empty launch
    lock: object = None  # the kernel's: builds the SYCL program once
    checked: bool = False  # check_launch's device limits passed once
    interpret_check: bool | None = None  # the `check` launch option (jit/kernel.py interpret_check)
    workgroup_size: int = 0  # the compiled kernel's, read once (a property chain of 0.5 us)
    local_size: tuple = (1, 1, 1)  # its work-items along x, y and z (CompiledArtifact.local_size), read once as well
    pack: object = AS_GIVEN  # the kernel arguments as its ABI takes them (runtime/packed_sizes.py)
    # the kernel's block builtins read blocks at any base address (BlockIO.any_layout): host arrays go in place
    # whatever their alignment (runtime/memory.py in_place)
    any_base: bool = False
    # (grid, as 3 ints, its SYCL global and local ranges) of the last tuple grid a SYCL launch checked: a tuple never
    # changes, and `kernel[(n,)]` with a literal passes the same one at each launch, which then skips the grid's
    # normalization, its work-item check and its ranges (the ranges' lists are only read by dpctl)
    grid_ranges: tuple = (NO_GRID, None, None, None)
    send: object = None  # an asynchronous launch's submission function (native_submit.sender), at its first launch

    @classmethod
    def of(cls, compiled, device: Device, names, values, lock,
           interpret_check: bool | None = None) -> "LaunchPlan":
        """The plan of `compiled` on `device` for `values` (in parameter order, as launched); `interpret_check` is
        the `check` launch option."""
        position, usm_ndarray = {name: i for i, name in enumerate(names)}, dpnp_types()[1]
        usm = {position[n]: usm_argument(values[position[n]], usm_ndarray) for n in compiled.specs}
        arguments = tuple((position[n], spec, *usm[position[n]][:2]) for n, spec in compiled.specs.items())
        queues = {queue for sizes, _, queue in usm.values() if sizes is not None}
        asynchronous = all(sizes is not None for _, spec, sizes, _ in arguments if isinstance(spec, ArraySpec)) \
            and queues <= {device.queue}
        return cls(compiled, device, tuple(names), arguments, tuple(position[n] for n in compiled.written),
                   tuple(position[n] for n in compiled.artifact.loop_steps), asynchronous,
                   tuple(queues - {device.queue, None}), lock=lock, interpret_check=interpret_check,
                   workgroup_size=compiled.workgroup_size, local_size=compiled.artifact.local_size,
                   pack=argument_packing(compiled), any_base=reads_any_base(compiled.target))

    def launch(self, grid, values, parts=None, whole=None):
        """Runs the plan with `values` (in parameter order, as the specializer gave them), `parts`, the kernel
        arguments of each USM array the specializer found in its entry (runtime/usm_entries.py; None: none found) and
        of each scalar, and `whole`, the parts of every kernel argument when each has one (else None); the event of a
        SYCL launch, None on the numpy device or for an empty grid."""
        for i in self.written:
            if read_only(values[i]):
                raise LaunchError(f"argument '{self.names[i]}' is read-only but the kernel writes it")
        for i in self.steps:
            if values[i] == 0:
                raise LaunchError(f"argument '{self.names[i]}' is the step of a range() loop in the kernel and must "
                                  "not be 0")
        ranges = self.grid_ranges
        if ranges[0] is grid and self.asynchronous:  # the hot path: a grid this plan checked on its SYCL device
            return self.submit_async(ranges, values, parts, whole)
        given = grid
        grid = ranges[1] if ranges[0] is given else fast_grid(given) or normalize_grid(given, self.names, values)
        if self.device.kind == NUMPY:
            # the interpreter checks its grid limit
            self.compiled.run(grid, dict(zip(self.names, values)), self.interpret_check)
            return None
        if not all(grid):
            return None
        size = self.workgroup_size
        if not self.checked:
            check_launch(self.device.queue.sycl_device, grid, size)
            with self.lock:
                self.sycl_kernel, self.checked = self.compiled.sycl_kernel(self.device.queue), True
        if ranges[0] is not given:
            check_work_items(grid, size)
            ranges = (given, grid, *self.sycl_ranges(grid))
            if type(given) is tuple:  # only a SYCL launch of a non-empty grid keeps it (the hot path's test)
                self.grid_ranges = ranges
        if self.asynchronous:
            return self.submit_async(ranges, values, parts, whole)
        queue = self.device.queue
        run_on = launch_queue(queue)  # do_bench's profiling queue, ordered with the launch queue's work
        named = {self.names[i]: values[i] for i, *_ in self.arguments}
        args, finish = prepare_arguments(queue, named, self.compiled.specs, self.compiled.written, self.any_base)
        args = self.pack(args)
        event = submit_ranges(run_on, self.sycl_kernel, ranges[2], ranges[3], args, wait=True,
                              after=self.other_queues, ordered_with=queue)
        finish()
        return event

    def submit_async(self, ranges, values, parts, whole) -> object:
        """An asynchronous launch's submission (`launch`'s arguments; `ranges` its grid_ranges): its values kept
        until it completes, through ordering.py directly outside a `do_bench` recording, else on the recording's
        profiling queue, ordered with the launch queue's work."""
        args = self.kernel_args(values, parts) if whole is None else self.pack.parts(whole)
        queue = self.device.queue
        if active_recording() is not None:
            return submit_ranges(launch_queue(queue), self.sycl_kernel, ranges[2], ranges[3], args, wait=False,
                                 owners=values, ordered_with=queue)
        if self.send is None:  # the same argument kinds at every launch of the plan
            self.send = native_submit.sender(args)
        return ordering.submit_kept(queue, self.send, self.sycl_kernel, args, ranges[2], ranges[3], values, queue)

    def sycl_ranges(self, grid: tuple[int, int, int]) -> tuple[list[int], list[int]]:
        """The global and local ranges of a SYCL launch of `grid` workgroups, in SYCL's order (runtime/sycl.py)."""
        x, y, z = self.local_size
        return [grid[2] * z, grid[1] * y, grid[0] * x], [z, y, x]

    def kernel_args(self, values, parts=None) -> list:
        """The kernel arguments of an asynchronous plan's launch, as its ABI takes them (`pack`): USM array pointers
        and sizes (from `parts`, as in `launch`, where given), scalars."""
        if parts is None:
            parts = (None,) * len(values)
        whole = []
        for i, spec, sizes, memory in self.arguments:
            part = parts[i]
            if part is None:
                part = [scalar_arg(runtime_value(spec, values[i]))] if sizes is None else [memory(values[i]), *sizes]
            whole.append(part)
        return self.pack.parts(whole)


def argument_packing(compiled):
    """What a launch of `compiled` (a CompiledKernel) does to its kernel arguments: pack its arrays' sizes where its
    ABI takes them packed, else nothing (runtime/packed_sizes.py)."""
    if compiled.artifact.packed_sizes:
        return SizePacking.of(compiled.specs.values())
    return AS_GIVEN


def reads_any_base(target: str) -> bool:
    """Whether the block builtins of the target named `target` read blocks at any base address (BlockIO.any_layout;
    the interpreter, "numpy", has no target)."""
    found = TARGETS.get(target)
    return found is not None and found.block_io is not None and found.block_io.any_layout


def usm_argument(value, usm_ndarray) -> tuple:
    """(its i64 size arguments, the function giving its pointer argument, the queue that orders its work or None) of
    a USM array argument, (None, None, None) of the others. The interface's `syclobj` orders an array's work when
    it is a SyclQueue; a SyclContext (or a capsule) names no queue."""
    if type(value) is usm_ndarray:
        return size_args(value.shape, value.strides), usm_ndarray_memory, value.sycl_queue
    usm = None if type(value) is np.ndarray else usm_interface(value)
    if usm is None:
        return None, None, None
    queue = usm["syclobj"] if isinstance(usm["syclobj"], dpctl.SyclQueue) else None
    return size_args(tuple(usm["shape"]), usm_strides(usm)), interface_pointer, queue


def normalize_grid(grid, names, values) -> tuple[int, int, int]:
    """`grid` as 3 ints; a callable one called with the launch's arguments by parameter name (`names`, `values`),
    constexprs among them: Triton's META (`lambda meta: (cdiv(meta["n_elements"], meta["BLOCK"]),)`)."""
    if callable(grid):
        grid = grid(dict(zip(names, values)))
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
