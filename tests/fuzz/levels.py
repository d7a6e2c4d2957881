"""Runs one generated kernel at every level and compares (the differential fuzzer's oracle).

The numpy interpreter on the XeTile IR is the reference; the SPIR-V built for each CPU target runs on the device, and
each stage that build lowered (`pipeline.observing_stages`) in the level interpreters, all on fresh copies of the
same inputs. Every interpreter run is in checking mode (ir/checking.py): a data race, a read of unwritten SLM or an access
no padding rule covers, at any level, is a problem of the case. Every array argument's whole base allocation is
compared (a pitched view's margin too), exactly or within a tolerance per array. This module is self-contained (numpy,
ml_dtypes, xetile_jit): a reproducer script embeds its source.
"""

import threading

import ml_dtypes
import numpy as np

from xetile_jit.ir.interpreter import run_ir
from xetile_jit.compiler.pipeline import STAGE_NAMES, lower, observing_stages
from xetile_jit.target.targets import CPU_TARGETS
from xetile_jit.runtime.args import runtime_value

NP_DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "int8": np.int8,
             "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
             "int64": np.int64, "uint64": np.uint64, "bool": np.bool_}
# relative and absolute tolerance of one rounding in each float dtype (with headroom); integers are exact
TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5}
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 6e-5, 65504.0, 3.0e38, 1.0, -1.0, 0.5]
DEVICE = "opencl:cpu"
HANG_SECONDS = 60   # a level interpreter still running after this is reported as a hang
CHECKING = True     # the interpreters run in checking mode (module docstring)


def make_array(seed: int, shape, dtype: str, col_major=False, pitch=0, origin=(0, 0), fill="small", lead=(),
               step=1):
    """(base, view): `view` is a `shape` array of `dtype` inside the allocation `base`, row- or column-major,
    its rows (columns) `pitch` elements longer than it, starting at `origin` of the base. A 1-D `shape` is one row
    of such a matrix. `lead`: the sizes of leading dims (a batch, heads) before it; along them the view takes every
    `step`-th slice of the base, in reverse where `step` is negative. fill: "small" (ints in [-8, 8], floats in
    [-4, 4]), "full" (any value of an integer dtype), "special" (floats: NaN, inf, -0.0, denormals mixed in)."""
    rng = np.random.default_rng(seed)
    rows, cols = (1, shape[0]) if len(shape) == 1 else shape
    matrix = (origin[0] + cols + pitch, origin[1] + rows) if col_major else (origin[0] + rows, origin[1] + cols + pitch)
    base_shape = tuple(n * abs(step) for n in lead) + matrix
    np_dtype = np.dtype(NP_DTYPES[dtype])
    if np_dtype == np.bool_:
        base = rng.random(base_shape) < 0.5
    elif np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        lo, hi = (int(info.min), int(info.max)) if fill == "full" else (max(-8, int(info.min)), 8)
        base = rng.integers(lo, hi, size=base_shape, dtype=np_dtype, endpoint=True)
    else:
        values = rng.uniform(-4, 4, size=base_shape).astype(np.float32)
        if fill == "special":
            mask = rng.random(base_shape) < 0.4
            values[mask] = rng.choice(np.array(SPECIALS, np.float32), size=int(mask.sum()))
        with np.errstate(over="ignore"):   # specials such as 3e38 overflow to inf in 16-bit floats
            base = values.astype(np_dtype)
    slices = base[tuple(slice(None, None, step) for _ in lead)]
    view = slices[..., origin[0]:origin[0] + cols, origin[1]:origin[1] + rows].swapaxes(-1, -2) if col_major else \
        slices[..., origin[0]:origin[0] + rows, origin[1]:origin[1] + cols]
    return base, view[..., 0, :] if len(shape) == 1 else view


def scalar(dtype: str | None, value):
    """A kernel's runtime scalar argument: a Python number (dtype None) or a numpy scalar of `dtype`."""
    return value if dtype is None else NP_DTYPES[dtype](value)


def fresh(make_args):
    """New copies of the arguments: (bases of the arrays, the argument values)."""
    args = make_args()
    return [a[0] for a in args if isinstance(a, tuple)], [a[1] if isinstance(a, tuple) else a for a in args]


def mismatch(name: str, got, want, tol) -> str | None:
    """None if `got` matches `want`: bit for bit (NaNs equal) when tol is 0, else within tol * max(1, |want|)
    (NaN and infinities at the same places)."""
    if got.dtype.kind in "iub" or got.dtype == np.bool_:
        bad = got != want
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        if tol:
            finite = np.isfinite(g) & np.isfinite(w)
            scale = max(1.0, float(np.abs(w[np.isfinite(w)]).max(initial=0)))
            same |= finite & (np.abs(g - w) <= tol * scale)
        bad = ~same
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{name}: {int(bad.sum())} of {bad.size} elements differ, first at {where}: got {got[where]!r}, " \
           f"want {want[where]!r}"


def compare(level: str, names, got, want, tols, interpreter: bool) -> list[str]:
    """Mismatches of one level against the reference. tols[name] = (tolerance on a device, whether the level
    interpreters may reorder float sums, e.g. of tile_mma and tile_reduce)."""
    out = []
    for name, g, w in zip(names, got, want):
        device_tol, reorders = tols.get(name, (0.0, False))
        tol = (device_tol if reorders else 0.0) if interpreter else device_tol
        problem = mismatch(name, g, w, tol)
        if problem:
            out.append(f"[{level}] {problem}")
    return out


def watchdog(fn, *args) -> None:
    """fn(*args) in a daemon thread (the subgroup threads it starts are daemons too, so a deadlock at a barrier
    cannot keep the process alive); raises TimeoutError if it has not finished in HANG_SECONDS."""
    errors = []

    def body():
        try:
            fn(*args)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(e)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(HANG_SECONDS)
    if thread.is_alive():
        raise TimeoutError(f"the level interpreter hangs (still running after {HANG_SECONDS} s)")
    if errors:
        raise errors[0]


def run_levels(kern, make_args, names, grid, options, tols, targets=CPU_TARGETS) -> list[str]:
    """Runs `kern` at every level; returns the mismatches. names: the array arguments' names. targets: the CPU
    targets whose levels run in the interpreter and whose SPIR-V runs on the device (each blocks its own way)."""
    bases, values = fresh(make_args)
    compiled = kern.warmup(*values, device="numpy", **options)
    grid3 = tuple(grid) + (1,) * (3 - len(grid))

    def interpret(func):
        bases, values = fresh(make_args)
        watchdog(run_ir, func, grid3, [runtime_value(spec, v) for spec, v in zip(compiled.specs.values(), values)],
                 CHECKING)
        return bases

    want = interpret(compiled.func)
    problems = []
    for target in targets:
        compiled_stages = {}

        def keep_stage(kernel, stage, func):
            if kernel == compiled.func.sym_name:
                compiled_stages.setdefault(stage, func)

        def on_device():
            bases, values = fresh(make_args)
            with observing_stages(keep_stage):
                kern[grid](*values, device=DEVICE, target=target, **options)
            return compare(f"spirv {target}", names, bases, want, tols, interpreter=False)

        device_problems = guarded(f"spirv {target}", on_device)
        # the levels the launch compiled; lowered here where it stopped early or its compile came from the disk cache
        stages = compiled_stages if len(compiled_stages) == len(STAGE_NAMES) else lower(compiled.func, target=target)
        for stage, func in stages.items():
            level = stage if len(targets) == 1 else f"{target} {stage}"
            problems += guarded(level, lambda: compare(level, names, interpret(func), want, tols, interpreter=True))
        problems += device_problems
    return problems


def guarded(level: str, check) -> list[str]:
    """check()'s mismatches, or the exception it raised as one."""
    try:
        return check()
    except Exception as e:  # noqa: BLE001 - every level must run a valid kernel: report which did not
        return [f"[{level}] raised {type(e).__name__}: {e}"]
