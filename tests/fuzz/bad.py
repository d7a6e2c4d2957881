"""Bad-input fuzzing: random mutations of a valid launch (wrong dtypes, shapes, strides, grids, scalar and
constexpr types, missing and extra arguments, launch options) must raise LaunchError or CompilationError before
anything runs, leaving the arrays untouched; never another exception, a crash or a hang. Mutations that may be valid
(another supported dtype, a column-major view, a float scalar) may also succeed.

`python -m fuzz.bad SEED CASES` runs the cases in this process and prints one JSON line per case ("start" before
it, then its outcome), so that the caller (tests/test_fuzz_bad_inputs.py) sees which case crashed or hung the
process. Each case is a line of Python run against fresh arrays: its own reproducer.
"""
from __future__ import annotations

import json
import sys

import ml_dtypes  # noqa: F401 - the mutations' namespace
import numpy as np

import xetile_jit as xetile


@xetile.kernel
def target(x, y, out, n, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    v = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
    w = xetile.load_tile(xetile.init_tile(y, [m, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(out, [m, 0], [BM, BN]), v + w.to(xetile.float32) + n)


VALID = {"grid": "(2,)", "x": "x", "y": "y", "out": "out", "n": "3", "BM": "8", "BN": "16"}
# (mutation, whether it must fail). {a} is the argument it replaces.
ARRAY = [("{a}.astype(np.float64)", True), ("{a}.astype(np.complex64)", True), ("{a}.astype(np.float128)", True),
         ("{a}.astype(np.complex128)", True), ("{a}.astype(object)", True), ("{a}.reshape(-1)", True),
         ("{a}[None]", True), ("{a}[0, 0]", True), ("{a}.tolist()", True), ("None", True), ("'x'", True),
         ("3", True), ("{a}.astype(np.float16)", False), ("{a}.astype(np.int8)", False),
         ("{a}.astype(ml_dtypes.bfloat16)", False), ("np.asfortranarray({a})", False), ("{a}[:0]", False),
         ("{a}[:, ::2]", False), ("{a}[::2, ::2]", False),   # steps and broadcasts go as copies (runtime/memory.py)
         ("np.broadcast_to({a}[:1], {a}.shape)", None),    # read-only: it fails where the kernel writes it
         ("readonly({a})", None)]   # None: must fail only for the array the kernel writes
SCALAR = [("'3'", True), ("None", True), ("[3]", True), ("2**70", True), ("np.complex128(3)", True),
          ("np.complex64(1)", True), ("3.5", False), ("np.float64(3)", False), ("True", False),
          ("2**40", False), ("np.int8(-3)", False), ("x", True)]
GRID = [("(-1,)", True), ("(2.0,)", True), ("('2',)", True), ("None", True), ("(1, 1, 1, 1)", True), ("()", True),
        ("-1", True), ("1.5", True), ("(True,)", True), ("lambda meta: (-1,)", True), ("lambda meta: 'x'", True),
        ("(2, -1)", True), ("lambda meta: (meta['BM'] // 4,)", False), ("(0,)", False), ("[2]", False),
        ("(1, 2, 1)", False), ("(np.int64(2),)", False), ("np.int32(1)", False), ("(2**40,)", True),
        ("(2**31, 2**31)", True)]
CONSTEXPR = [("'8'", True), ("8.5", True), ("None", True), ("[8]", True), ("-1", True), ("0", True), ("True", True),
             ("(8,)", True), ("xetile.float32", True), ("8.0", None), ("{'a': 8}", True), ("{8}", True),
             ("np.zeros(2)", True), ("object()", True), ("np.int64(8)", False),
             ("4096", None)]   # an 8x4096 f32 tile: over the register budget on a device, fine in the interpreter
CALL = [("target[{grid}]({x}, {y}, {out}, BM={BM}, BN={BN}, device={device!r})", True),        # missing n
        ("target[{grid}]({x}, {y}, {out}, {n}, 7, BM={BM}, BN={BN}, device={device!r})", True),  # extra argument
        ("target[{grid}]({x}, {y}, {out}, {n}, BM={BM}, BN={BN}, BK=3, device={device!r})", True),
        ("target[{grid}]({x}, {y}, {out}, {n}, BM={BM}, device={device!r})", True),            # missing constexpr
        ("target[{grid}]({x}, {y}, {out}, {n}, BM={BM}, BN={BN}, device='nosuch:gpu')", True),
        ("target[{grid}]({x}, {y}, {out}, {n}, BM={BM}, BN={BN}, device={device!r}, sg_layout=[2, 1])", True),
        ("target[{grid}]({x}, {y}, {out}, {n}, BM={BM}, BN={BN}, device={device!r}, sg_layout=[0, 1], "
         "sg_data=[8, 16])", True),
        ("target[{grid}]({x}, {y}, {out}, {n}, BM={BM}, BN={BN}, device={device!r}, sg_layout='ab', "
         "sg_data=[1, 1])", True),
        ("target[{grid}]({x}, {y}, {out}, {n}, {BM}, {BN}, device={device!r})", False),        # constexprs by position
        ("target[{grid}](x={x}, y={y}, out={out}, n={n}, BM={BM}, BN={BN}, device={device!r})", False)]
LAUNCH = "target[{grid}]({x}, {y}, {out}, {n}, BM={BM}, BN={BN}, device={device!r})"
DEVICES = ("numpy", "opencl:cpu")


def readonly(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.setflags(write=False)
    return view


def arrays(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-4, 4, (20, 16)).astype(np.float32), "y": rng.integers(-8, 8, (20, 16), np.int32),
            "out": np.zeros((20, 16), np.float32)}


def case(rng: np.random.Generator) -> tuple[str, bool | None]:
    """A mutated launch (a line of Python) and whether it must fail (None: it may succeed)."""
    parts = dict(VALID, device=str(rng.choice(DEVICES)))
    what = str(rng.choice(["array", "scalar", "grid", "constexpr", "call"]))
    template = LAUNCH
    if what == "array":
        name = str(rng.choice(["x", "y", "out"]))
        mutation, must = ARRAY[rng.integers(len(ARRAY))]
        parts[name] = mutation.format(a=name)
        must = (name == "out") if must is None else must
    elif what == "scalar":
        parts["n"], must = SCALAR[rng.integers(len(SCALAR))]
    elif what == "grid":
        parts["grid"], must = GRID[rng.integers(len(GRID))]
    elif what == "constexpr":
        name = str(rng.choice(["BM", "BN"]))
        parts[name], must = CONSTEXPR[rng.integers(len(CONSTEXPR))]
    else:
        template, must = CALL[rng.integers(len(CALL))]
    return template.format(**parts), must


def outcome(code: str, must_fail: bool | None, seed: int) -> str:
    """"ok" or what went wrong."""
    namespace = {"np": np, "ml_dtypes": ml_dtypes, "xetile": xetile, "target": target, "readonly": readonly,
                 **arrays(seed)}
    before = {k: namespace[k].copy() for k in ("x", "y", "out")}
    try:
        exec(code, namespace)
    except (xetile.LaunchError, xetile.CompilationError):
        changed = [k for k, v in before.items() if not np.array_equal(v, namespace[k], equal_nan=True)]
        return f"raised, but changed {changed}" if changed else "ok"
    except Exception as e:  # noqa: BLE001 - the finding: a raw error instead of LaunchError/CompilationError
        return f"raised {type(e).__name__}: {e}"
    return "succeeded, but must fail" if must_fail else "ok"


def main(seed: int, cases: int) -> None:
    rng = np.random.default_rng(seed)
    for i in range(cases):
        code, must_fail = case(rng)
        print(json.dumps({"start": i, "code": code}), flush=True)
        print(json.dumps({"case": i, "code": code, "outcome": outcome(code, must_fail, seed + i)}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
