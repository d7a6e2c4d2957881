"""dpctl's C API functions, called through ctypes: each is a PyCapsule in its Cython module's `__pyx_capi__` holding the
function's address, named by the function's C signature (runtime/native_submit.py: the SyclEvent maker;
runtime/opencl/api.py: the kernel bundle maker)."""
from __future__ import annotations

import ctypes


def capsule_function(capsule, restype, *argtypes):
    """The function in `capsule` as a ctypes function of the Python C API (it holds the GIL: these make Python
    objects)."""
    address, name = ctypes.pythonapi.PyCapsule_GetPointer, ctypes.pythonapi.PyCapsule_GetName
    address.restype, address.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return ctypes.PYFUNCTYPE(restype, *argtypes)(address(capsule, name(capsule)))
