"""What a launch reads of a USM array argument, read once per array (the launch hot path).

A usm_ndarray's part of a plan key (jit/launch_plan.py) is its dtype, shape, strides, base alignment and queue; reading
them costs ~0.5 us an array (`.dtype` alone ~0.3 us) and hashing the dtype in the key as much again, 20 us for a
launch with 20 arrays. So each live array gets an entry, made at its first launch and kept by its id until the array
dies (a weakref callback drops it). A launch uses an entry only when its weakref's referent is the array itself: an
id is reused once its object is freed, so an entry that outlived its array for any reason (a callback not yet run)
can never give a later array at the same id another array's memory. The entry holds:
- its shape, which a launch compares with the array's: `usm_ndarray.shape = ...` reshapes the array in place, the
  only change its metadata can undergo. Its strides need no reading (~0.1 us an array): a reshape without a copy keeps
  each element's address in C order, so an array back at its entry's shape addresses every element as it did when
  the entry was made. Only strides that address nothing can differ then (of an axis of length 1, or of an empty
  array), and the entry's kernel arguments, made with the old ones, address the same elements;
- a token, an int standing for the whole key part: arrays with equal key parts have equal tokens, so a plan key is
  a tuple of small ints, cheap to hash;
- its kernel arguments (the pointer's memory object and the i64 shape and strides), when the view starts at its
  allocation (`usm_data`); a view further in gets its memory object at each launch (memory.usm_ndarray_memory),
  because that object holds the array, and the entry would keep it alive.

Any other array with `__sycl_usm_array_interface__` (dpctl.memory objects, other producers) is known by what its
interface says, read at each launch (a producer may change it): its address, offset, shape, strides, typestr and
syclobj find its entry (`interface_entry`), so no weakref is needed (dpctl.memory objects refuse them). The entry
holds a token (its key part starts with INTERFACE, so a plan made for such arrays is never used for usm_ndarrays and
back) and its kernel arguments, the pointer as a memory object that refers to the memory by address alone
(memory.interface_memory): an array that dies takes nothing with it here, and an array later made at the same
address with the same interface finds an entry that is right for it too.
"""
from __future__ import annotations

import functools
import itertools
import weakref

import numpy as np

from ..target.block_io import BLOCK_BASE_ALIGN
from .args import usm_strides
from .memory import interface_memory, size_args

MAX_TOKENS = 4096  # distinct key parts remembered; a full table starts over with new tokens (old plans then miss)
MAX_INTERFACE_ENTRIES = 4096  # likewise for the arrays known by their interface
INTERFACE = "__sycl_usm_array_interface__"
_entries: dict[int, tuple] = {}  # id(array) -> (shape, weakref, token, kernel args or None)
_interface_entries: dict[tuple, tuple] = {}  # (address, offset, shape, strides, typestr, syclobj) -> (token, args)
_tokens: dict[tuple, int] = {}  # (dtype, shape, strides, aligned, queue) -> token
_counter = itertools.count()  # tokens are never reused, so a token in an old plan key cannot mean another key part

entries_get = _entries.get
STALE = (None, lambda: None)  # the shape and weakref `current_entry` reads where an array has no entry


def current_entry(array) -> tuple:
    """The entry of `array`, made now where it has none or a stale one (the module docstring's rule; the launch
    binder, jit/launch_plan.py make_specializer, writes the same test inline)."""
    found = _entries.get(id(array), STALE)
    return found if found[1]() is array and found[0] == array.shape else entry(array)


def entry(array) -> tuple:
    """The entry of `array` (module docstring), made now: the launch found none, or a stale one."""
    shape, strides = array.shape, array.strides
    token = key_token((array.dtype, shape, strides, array._pointer % BLOCK_BASE_ALIGN == 0, array.sycl_queue))
    args = [array.usm_data, *size_args(shape, strides)] if array._element_offset == 0 else None
    # the callback is called with the weakref: _entries.pop(id, weakref) drops the entry (the weakref is pop's
    # default), and holds no global that interpreter shutdown may have cleared
    drop = functools.partial(_entries.pop, id(array))
    made = _entries[id(array)] = (shape, weakref.ref(array, drop), token, args)
    return made


def key_token(part: tuple) -> int:
    """The token standing for the key part `part` (module docstring)."""
    token = _tokens.get(part)
    if token is None:
        if len(_tokens) >= MAX_TOKENS:
            _tokens.clear()
        token = _tokens[part] = next(_counter)
    return token


def interface_entry(usm: dict) -> tuple:
    """(token, kernel arguments or None) of an array whose `__sycl_usm_array_interface__` is `usm` (module
    docstring); a TypeError when the interface holds an unhashable shape or strides (the slow path takes those)."""
    contents = (usm["data"][0], usm.get("offset"), usm["shape"], usm.get("strides"), usm["typestr"], usm["syclobj"])
    found = _interface_entries.get(contents)
    if found is None:
        found = make_interface_entry(contents, usm)
    return found


def make_interface_entry(contents: tuple, usm: dict) -> tuple:
    """The entry of an array known by its interface, made now (an empty array gets its memory at each launch: a
    producer may give it no address dpctl knows)."""
    dtype, shape, strides = np.dtype(usm["typestr"]), tuple(usm["shape"]), usm_strides(usm)
    address = usm["data"][0] + (usm.get("offset") or 0) * dtype.itemsize
    token = key_token((INTERFACE, dtype, shape, strides, address % BLOCK_BASE_ALIGN == 0, usm["syclobj"]))
    args = [interface_memory(usm), *size_args(shape, strides)] if all(shape) else None
    if len(_interface_entries) >= MAX_INTERFACE_ENTRIES:
        _interface_entries.clear()
    made = _interface_entries[contents] = (token, args)
    return made
