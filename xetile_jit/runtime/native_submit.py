"""Kernel submission through dpctl's C interface: `DPCTLQueue_SubmitNDRange` of libDPCTLSyclInterface, the call
dpctl's `SyclQueue.submit_async` makes once it has turned each Python argument into a C one.

That turning, not the SYCL runtime, is most of what dpctl's submit costs per argument on the OpenCL CPU device: with
21 arguments (20 arrays' pointers and their packed sizes) `submit_async` took 62-87 us where the C call with the same
arguments took 36-50. The Python this module runs around the C call costs about what dpctl's turning of 4 arguments
does, and right after a kernel that streamed its data (caches cold) 20-30 us more than dpctl's whole submit with 4
arguments, and as much as it with 21 (docs/performance.md "Launch overhead"). So a launch with C_CALL_FROM arguments or
more calls the C function itself; one with fewer calls dpctl's submit, unless it passes host memory in place (a
HostAddress, which dpctl's submit does not take). Each argument kind's C form is read with one C-level getter: a USM
memory object and a HostAddress pass their address (dpctl_void_ptr: the pointer itself), a `dpctl.RawKernelArg` its
reference, a ctypes scalar the address of its value under the code of its type. The codes are those of dpctl's
own `kernel_arg_type` enum (beside SyclQueue), so a dpctl that numbers them otherwise is followed.

The event returned is a `dpctl.SyclEvent` made by dpctl's C API `SyclEvent_Make` (which copies the C event), for
dpctl's and dpnp's order of work (ordering.py). The arguments' lifetime is the caller's, as with `submit_async`.
These go to `submit_async` as well: a dpctl without the library, the event maker or the enum; an argument of another
kind; a launch without a local range; a submission the C call refuses (dpctl's own checks then raise its error).
"""
from __future__ import annotations

import ctypes
import functools
import operator
import os
import sys
from array import array
from dataclasses import dataclass

import dpctl
import dpctl.memory

from .capsules import capsule_function

LIBRARY = "libDPCTLSyclInterface.so"
C_CALL_FROM = 12  # arguments: with fewer, dpctl's submit costs less (module docstring)
MAX_FORMS = 256  # argument type lists whose forms are remembered; a full table starts over
# each ctypes scalar type a launch passes (runtime/sycl.py scalar_arg, jit/launch_plan.py PYTHON_SCALAR_ARGS), by the
# name of its code; c_bool is one byte, as the kernel's i8 parameter
SCALAR_CODES = {ctypes.c_bool: "dpctl_uint8", ctypes.c_uint8: "dpctl_uint8", ctypes.c_int8: "dpctl_int8",
                ctypes.c_uint16: "dpctl_uint16", ctypes.c_int16: "dpctl_int16", ctypes.c_uint32: "dpctl_uint32",
                ctypes.c_int32: "dpctl_int32", ctypes.c_uint64: "dpctl_uint64", ctypes.c_int64: "dpctl_int64",
                ctypes.c_float: "dpctl_float32", ctypes.c_double: "dpctl_float64"}
MEMORY_TYPES = (dpctl.memory.MemoryUSMDevice, dpctl.memory.MemoryUSMShared, dpctl.memory.MemoryUSMHost)
NOT_NATIVE = None  # the forms of an argument list dpctl's submit_async takes instead
NO_FORMS = object()  # no forms remembered yet for an argument type list
_forms: dict = {}
CALL = getattr(operator, "call", lambda function, argument: function(argument))  # Python 3.10 has no operator.call


@dataclass(frozen=True)
class HostAddress:
    """A pointer argument into host memory of the system's allocator (a numpy array's, a torch CPU tensor's), which
    a device with USM system allocations reads and writes in place (runtime/memory.py). dpctl's submit takes USM
    memory objects only, so a launch with one always makes the C call."""
    address: int


@dataclass(frozen=True)
class CInterface:
    """The C functions, typed, and the argument type codes by name."""
    submit: object  # DPCTLQueue_SubmitNDRange
    delete_event: object  # DPCTLEvent_Delete
    make_event: object  # dpctl's C API SyclEvent_Make: a SyclEvent of a copy of the C event
    codes: dict

    def forms(self, kinds: tuple) -> tuple | None:
        """The C type codes (an int array, with its address) and the getters of the C words of arguments of types
        `kinds`; NOT_NATIVE when one has no C form here."""
        codes, getters = [], []
        for kind in kinds:
            if issubclass(kind, MEMORY_TYPES):
                code, getter = "dpctl_void_ptr", operator.attrgetter("_pointer")
            elif kind is HostAddress:
                code, getter = "dpctl_void_ptr", operator.attrgetter("address")
            elif kind is dpctl.RawKernelArg:
                code, getter = "dpctl_raw_kernel_arg", operator.attrgetter("_ref")
            else:
                code, getter = SCALAR_CODES.get(kind), ctypes.addressof
            if code not in self.codes:
                return NOT_NATIVE
            codes.append(self.codes[code])
            getters.append(getter)
        codes = array("i", codes)
        return codes, codes.buffer_info()[0], tuple(getters)


@functools.cache
def c_interface() -> CInterface | None:
    """dpctl's C interface, or None when this dpctl ships no library, event maker or argument type enum of the names
    read here, or where its words are not the size of array's "Q" and its enums of "i"."""
    try:
        library = ctypes.CDLL(os.path.join(os.path.dirname(dpctl.__file__), LIBRARY))
        submit, delete_event = library.DPCTLQueue_SubmitNDRange, library.DPCTLEvent_Delete
        make_event = sys.modules[dpctl.SyclEvent.__module__].__pyx_capi__["SyclEvent_Make"]
        kinds = sys.modules[dpctl.SyclQueue.__module__].kernel_arg_type  # an object with a member per kind
        codes = {name: getattr(kinds, name).value for name in dir(kinds) if name.startswith("dpctl_")}
    except (OSError, AttributeError, KeyError):
        return None
    if "dpctl_void_ptr" not in codes or array("Q").itemsize != ctypes.sizeof(ctypes.c_void_p) or \
            array("i").itemsize != ctypes.sizeof(ctypes.c_int):
        return None
    handle, size = ctypes.c_void_p, ctypes.c_size_t
    submit.restype = handle
    submit.argtypes = [handle, handle, handle, handle, size, handle, handle, size, handle, size]
    delete_event.restype, delete_event.argtypes = None, [handle]
    return CInterface(submit, delete_event, capsule_function(make_event, ctypes.py_object, handle), codes)


def forms_of(kinds: tuple) -> tuple | None:
    """CInterface.forms of an argument list's types, remembered (a plan passes the same types at every launch)."""
    forms = _forms.get(kinds, NO_FORMS)
    if forms is NO_FORMS:
        if len(_forms) >= MAX_FORMS:
            _forms.clear()
        forms = _forms[kinds] = c_interface().forms(kinds)
    return forms


def submit_async(queue: dpctl.SyclQueue, kernel, args: list, global_range, local_range,
                 dependencies: list) -> dpctl.SyclEvent:
    """`queue.submit_async(kernel, args, global_range, local_range, dependencies)`, through the C call where it can
    (module docstring). The words, ranges and dependencies are passed as `array`s: a ctypes array costs ~2x more
    to make."""
    interface, forms = c_forms(args) if takes_c_call(args) and local_range is not None else (None, NOT_NATIVE)
    if forms is NOT_NATIVE:
        check_no_host_address(args)
        return queue.submit_async(kernel, args, global_range, local_range, dependencies)
    return submit_native(interface, forms, queue, kernel, args, global_range, local_range, dependencies)


def submit_native(interface: CInterface, forms: tuple, queue: dpctl.SyclQueue, kernel, args: list, global_range,
                  local_range, dependencies: list) -> dpctl.SyclEvent:
    """The C call of `submit_async` with the `forms` of the types of `args` (CInterface.forms) and a local range."""
    _, codes, getters = forms
    words = array("Q", map(CALL, getters, args))
    sizes, local = array("Q", global_range), array("Q", local_range)
    after = array("Q", [e.addressof_ref() for e in dependencies])
    event = interface.submit(kernel.addressof_ref(), queue.addressof_ref(), words.buffer_info()[0], codes, len(args),
                             sizes.buffer_info()[0], local.buffer_info()[0], len(sizes), after.buffer_info()[0],
                             len(after))
    if not event:  # refused: dpctl's submit raises its error (SyclKernelSubmitError, a range error)
        check_no_host_address(args)
        return queue.submit_async(kernel, args, global_range, local_range, dependencies)
    try:
        return interface.make_event(event)
    finally:
        interface.delete_event(event)


def sender(args: list):
    """The submission function of a launch that passes arguments of the kinds of `args` and a local range at every
    launch (an asynchronous plan's: USM memory and scalars, no HostAddress), with the signature of `submit_async`:
    dpctl's own submit below C_CALL_FROM arguments, from there the C call with the forms of those kinds bound (or
    `submit_async`, where they have none). Chosen once, so a launch makes neither the count nor the scan of its types
    (0.22 us of a 3-array launch's Python under `timeit`, AVX2 EPYC, 2026-12-04), nor the forms' lookup."""
    if not takes_c_call(args):
        return dpctl.SyclQueue.submit_async
    interface, forms = c_forms(args)
    return submit_async if forms is NOT_NATIVE else functools.partial(submit_native, interface, forms)


def c_forms(args: list) -> tuple:
    """dpctl's C interface and the forms of the types of `args` (forms_of), NOT_NATIVE where either is missing."""
    interface = c_interface()
    return interface, NOT_NATIVE if interface is None else forms_of(tuple(map(type, args)))


def takes_c_call(args: list) -> bool:
    """Whether a submission of `args` makes the C call (module docstring): C_CALL_FROM arguments or more, or a
    HostAddress among them (`in` over the types costs half an any() over a generator)."""
    return len(args) >= C_CALL_FROM or HostAddress in map(type, args)


def check_no_host_address(args: list) -> None:
    """dpctl's submit cannot pass a HostAddress: a launch with one that the C call does not take (no local range, a
    refused submission) raises dpctl's error for a refused submission."""
    if HostAddress in map(type, args):
        raise dpctl.SyclKernelSubmitError("Kernel submission to Sycl queue failed: host memory passed in place needs "
                                          "dpctl's C interface and a local range")
