"""Runs a kernel everywhere it can run here and hands back the interpreter's result, for tests of language features."""
from fuzz.levels import run_levels


def run_everywhere(kern, arrays: dict, grid, *scalars, **consts) -> dict:
    """The arrays (by name) after `kern` in the interpreter on the XeTile IR; asserts that every lowered level of
    both CPU targets, and their SPIR-V on opencl:cpu, write the same bits."""
    def make_args():
        return [(a, a) for a in (x.copy() for x in arrays.values())] + list(scalars)

    assert run_levels(kern, make_args, list(arrays), grid, consts, {}) == []
    out = {name: a.copy() for name, a in arrays.items()}
    kern[grid](*out.values(), *scalars, device="numpy", **consts)
    return out
