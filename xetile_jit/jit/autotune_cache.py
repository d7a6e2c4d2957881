"""The autotuner's winners on disk, as entries of the compile cache (runtime/cache.py: same directory,
atomic writes, privacy checks and size cap), so a fresh process reuses a tuning without timing anything.

A winner's key covers xetile_jit's own sources (`compiler_hash`), the kernel's source, the config list, the
tuning key's values, every array argument's dtype and the device (its target, name and driver version). The
entry holds the winner's index in the config list and what the winner's trace read (globals, closure cells,
inlined kernels: compiler/dependencies.py), checked on load as the compile cache does: a changed helper kernel or global
tunes again.
"""
from __future__ import annotations

import json

from ..runtime.cache import DiskCache, compiler_hash
from ..runtime.device import NUMPY, Device
from ..compiler.dependencies import Dependency, resolve

FIELD = "autotune"


def device_identity(device: Device) -> tuple:
    if device.kind == NUMPY:
        return (NUMPY,)
    sycl = device.queue.sycl_device
    return device.target, sycl.name, sycl.driver_version


def winner_key(kernel, configs, key: tuple, device: Device) -> str:
    return DiskCache.key(FIELD, compiler_hash(), kernel.source_hash, configs, key, device_identity(device))


def load_winner(kernel, cache_key: str) -> int | None:
    """The index of the cached winner, or None (no entry, another layout of entry, or a changed dependency)."""
    entry = DiskCache().get(cache_key)
    if entry is None or FIELD not in entry:
        return None
    try:
        data = json.loads(entry[FIELD])
        index = int(data["index"])
        dependencies = tuple(Dependency(*map(str, d)) for d in data["dependencies"])
    except (KeyError, ValueError, TypeError):
        return None
    return None if resolve(kernel, dependencies) is None else index


def store_winner(cache_key: str, index: int, config, dependencies) -> None:
    data = {"index": index, "config": repr(config), "dependencies": [d.to_json() for d in dependencies]}
    DiskCache().put(cache_key, {FIELD: json.dumps(data)})
