"""What a launch reads of a usm_ndarray argument, read once per array (issue 10, item 1: the launch hot path).

A usm_ndarray's part of a plan key (launch_plan.py) is its dtype, shape, strides, base alignment and queue; reading
them costs ~0.5 us an array (`.dtype` alone ~0.3 us) and hashing the dtype in the key as much again, 20 us for a
launch with 20 arrays. So each live array gets an entry, made at its first launch and kept by its id until the array
dies (a weakref callback drops it):
- its shape and strides, which a launch compares with the array's: `usm_ndarray.shape = ...` reshapes the array in
  place (and may change its strides), the only part of its key that can change;
- a token, an int standing for the whole key part: arrays with equal key parts have equal tokens, so a plan key is
  a tuple of small ints, cheap to hash;
- its kernel arguments (the pointer's memory object and the i64 shape and strides), when the view starts at its
  allocation (`usm_data`); a view further in gets its memory object at each launch (memory.usm_ndarray_memory),
  because that object holds the array, and the entry would keep it alive.
"""
from __future__ import annotations

import functools
import itertools
import weakref

from ..runtime.args import BLOCK_BASE_ALIGN
from ..runtime.memory import size_args

MAX_TOKENS = 4096  # distinct key parts remembered; a full table starts over with new tokens (old plans then miss)
_entries: dict[int, tuple] = {}  # id(array) -> (shape, strides, token, kernel args or None, weakref)
_tokens: dict[tuple, int] = {}  # (dtype, shape, strides, aligned, queue) -> token
_counter = itertools.count()  # tokens are never reused, so a token in an old plan key cannot mean another key part

entries_get = _entries.get


def entry(array) -> tuple:
    """The entry of `array` (module docstring), made now: the launch found none, or a stale one."""
    shape, strides = array.shape, array.strides
    part = (array.dtype, shape, strides, array._pointer % BLOCK_BASE_ALIGN == 0, array.sycl_queue)
    token = _tokens.get(part)
    if token is None:
        if len(_tokens) >= MAX_TOKENS:
            _tokens.clear()
        token = _tokens[part] = next(_counter)
    args = [array.usm_data, *size_args(shape, strides)] if array._element_offset == 0 else None
    # the callback is called with the weakref: _entries.pop(id, weakref) drops the entry (the weakref is pop's
    # default), and holds no global that interpreter shutdown may have cleared
    drop = functools.partial(_entries.pop, id(array))
    made = _entries[id(array)] = (shape, strides, token, args, weakref.ref(array, drop))
    return made
