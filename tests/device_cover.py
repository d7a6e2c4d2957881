"""Which parametrizations of a device test run on the OpenCL device.

A test marked for devices (conftest's `on_each_device`) runs in the numpy interpreter and on opencl:cpu. The
interpreter runs every parametrization: it is cheap, and it checks the semantics at every IR level. On the device a
parametrization costs a driver build (0.2-4 s on a 2-core machine), and what it adds is the check of the LLVM
lowering and the driver, whose code paths follow one parameter or a pair of them (an op on a dtype, a layout with
a transpose), seldom three at once. So the device runs a covering set: the fewest parametrizations, picked
greedily in collection order (the same ones every run), that together hold every combination of `strength` of the
test's parameters that any parametrization holds: every value of every parameter by default, every pair
(all-pairs testing) with `@pytest.mark.device_cover(2)`, for tests whose lowering follows two parameters together.
`pytest --device-all` runs every parametrization on the device.
"""
from __future__ import annotations

import itertools
from typing import Hashable, Mapping, Sequence

DEFAULT_STRENGTH = 1


def combinations_held(case: Mapping[str, Hashable], strength: int) -> set[tuple]:
    """The combinations of `strength` parameters' values that `case` (parameter -> value) holds."""
    names = sorted(case)
    return {tuple((name, case[name]) for name in combo)
            for combo in itertools.combinations(names, min(strength, len(names)))}


def covering(cases: Sequence[Mapping[str, Hashable]], strength: int = DEFAULT_STRENGTH) -> list[int]:
    """The indices, in order, of a small subset of `cases` that holds every combination of `strength` parameters'
    values some case holds: greedy, each step taking the first case that adds the most combinations not yet held."""
    held = [combinations_held(case, strength) for case in cases]
    missing = set().union(*held)
    chosen = []
    while missing:
        best = max(range(len(cases)), key=lambda i: (len(held[i] & missing), -i))
        chosen.append(best)
        missing -= held[best]
    return sorted(chosen)
