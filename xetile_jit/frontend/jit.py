"""`@xetile.kernel`, the JIT front: the kernel object, its launcher `kernel[grid](...)`, argument binding,
specialization, warmup, the in-memory compile cache and the launch (the compiler driver is compiler.py).

A launch binds the arguments, checks them, picks the device, looks up the compiled kernel by its
specialization (array dtypes and memory orders, scalar types, constexpr values keyed by type and, for floats,
by bits) and its CompileOptions, and runs it: in the numpy interpreter, or as SPIR-V on a SYCL queue. An
in-memory hit re-reads what the trace read (globals, closure cells, helper kernels: dependencies.py) and
compiles again when any of it changed. Every check happens before anything runs, so a bad launch leaves the
arrays untouched.
"""
from __future__ import annotations

import hashlib
import inspect
import os
import struct

import dpctl.program

from ..backend.interpreter import Interpreter
from ..backend.targets import xe_abi
from ..errors import CompilationError, LaunchError
from ..ir.attrs import Layout
from ..ir.types import DType
from ..runtime.args import classify, python_scalar, read_only, runtime_value
from ..runtime.device import NUMPY, Device, check_launch, choose_target, select_device
from ..runtime.memory import prepare_arguments
from ..runtime.sycl import SyclProgram, launch
from .compiler import Compiled, CompileOptions, compile_kernel, debugging
from .dependencies import all_unchanged
from .dsl import constexpr
from .tracer import Function

LAUNCH_OPTIONS = ("device", "target", "sg_layout", "sg_data", "num_subgroups")
CONSTEXPR_TYPES = (bool, int, float, str, type(None), DType, Layout)
CONSTEXPR_RULE = ("constexprs must be int, float, bool, str, None, an xetile dtype, a Layout, or a tuple or list "
                  "of these (numpy numbers count as Python ones)")


def is_constexpr(annotation) -> bool:
    if annotation is constexpr:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"


def constexpr_value(name: str, value):
    """A constexpr as the kernel sees it (numpy numbers as Python ones), checked against CONSTEXPR_RULE."""
    value = python_scalar(value)
    if isinstance(value, (list, tuple)):
        return type(value)(constexpr_value(name, v) for v in value)
    if not isinstance(value, CONSTEXPR_TYPES):
        raise LaunchError(f"constexpr '{name}' is a {type(value).__name__}; {CONSTEXPR_RULE}")
    return value


def hashable(value):
    """A cache-key form of a constexpr: typed because 2 == 2.0 == True in Python, floats by their bits because
    0.0 == -0.0 and NaN != NaN."""
    if isinstance(value, (list, tuple)):
        return type(value), tuple(hashable(v) for v in value)
    if isinstance(value, float):
        return float, struct.pack("<d", value)
    return type(value), value


def normalize_grid(grid, constexprs: dict) -> tuple[int, int, int]:
    if callable(grid):
        grid = grid(constexprs)
    grid = python_scalar(grid)
    if isinstance(grid, int):
        grid = (grid,)
    if isinstance(grid, (tuple, list)):
        grid = tuple(map(python_scalar, grid))
    if not isinstance(grid, tuple) or not 1 <= len(grid) <= 3 or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in grid):
        raise LaunchError(f"grid must be a tuple of 1 to 3 non-negative ints (workgroups), got {grid!r}")
    return grid + (1,) * (3 - len(grid))


def mma_layout(options: dict) -> Layout | None:
    sg_layout, sg_data = options.get("sg_layout"), options.get("sg_data")
    if sg_layout is None and sg_data is None:
        return None
    if sg_layout is None or sg_data is None:
        raise LaunchError("sg_layout and sg_data go together: give both or neither")
    try:
        return Layout(*(type(v)(map(python_scalar, v)) if isinstance(v, (list, tuple)) else v
                        for v in (sg_layout, sg_data)))
    except (TypeError, ValueError) as e:
        raise LaunchError(f"bad tile_mma layout: {e}") from None


def subgroup_count(options: dict) -> int | None:
    """The `num_subgroups` launch option (Triton's num_warps): a positive int, or None to let layout propagation
    choose."""
    count = python_scalar(options.get("num_subgroups"))
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        raise LaunchError(f"num_subgroups must be a positive int (the subgroups of a workgroup), got {count!r}")
    return count


class CompiledKernel:
    """A kernel compiled for one specialization and CompileOptions. `.asm` holds the printed IR of each level
    ("xetile", "xegpu", ...), and for device targets "llir" and "spirv" (bytes); `build_options` are the
    driver's, for the SYCL program; `.artifact` is the CompiledArtifact."""

    def __init__(self, specs: dict, target: str, compiled: Compiled):
        self.artifact = compiled.artifact
        self.specs = specs
        self.target = target
        self.func = compiled.func
        self.reads = compiled.reads
        self.programs: dict = {}  # SYCL context -> SyclProgram

    name = property(lambda self: self.artifact.name)
    asm = property(lambda self: self.artifact.asm)
    written = property(lambda self: self.artifact.written)
    build_options = property(lambda self: self.artifact.build_options)
    workgroup_size = property(lambda self: self.artifact.num_subgroups * self.artifact.lanes)

    def run(self, grid, values: dict) -> None:
        """In the numpy interpreter."""
        args = [runtime_value(self.specs[name], values[name]) for name in self.specs]
        Interpreter(self.func).run(grid, args)

    def run_sycl(self, queue, grid, values: dict) -> None:
        """As SPIR-V on `queue`: workgroups of num_subgroups x lanes work-items along dimension 0."""
        program = self.programs.get(queue.sycl_context)
        if program is None:
            program = self.programs[queue.sycl_context] = self.build(queue)
        args, finish = prepare_arguments(queue, values, self.specs, self.written)
        local = (self.workgroup_size, 1, 1)
        launch(queue, program.kernel(self.name), (grid[0] * local[0], grid[1], grid[2]), local, args)
        finish()

    def build(self, queue) -> SyclProgram:
        """The SYCL program; a driver that refuses to build it (bad XETILE_BUILD_OPTIONS, say) is a LaunchError."""
        try:
            return SyclProgram(self.asm["spirv"], queue, self.build_options)
        except dpctl.program.SyclProgramCompilationError as e:
            log = str(e).strip() or "the driver gave no build log"
            raise LaunchError(f"the SYCL driver could not build kernel {self.name} for "
                              f"{queue.sycl_device.filter_string} with the build options {self.build_options!r} "
                              f"and XETILE_BUILD_OPTIONS={os.environ.get('XETILE_BUILD_OPTIONS', '')!r}: "
                              f"{log}") from None


class Kernel:
    __xetile_kernel__ = True

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.function = Function(fn)
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters)
        self.constexprs = [p.name for p in self.signature.parameters.values() if is_constexpr(p.annotation)]
        self.source_hash = hashlib.sha256(self.function.source.encode()).hexdigest()
        clash = set(self.params) & set(LAUNCH_OPTIONS + ("grid",))
        if clash:
            raise CompilationError(f"kernel {fn.__name__}: parameter names {sorted(clash)} are reserved for launch "
                                   "options", self.function.loc(self.function.node))
        self.cache: dict = {}

    def __repr__(self) -> str:
        return f"<xetile.kernel {self.__name__}>"

    def __getitem__(self, grid):
        return Launcher(self, grid)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"launch a kernel as {self.__name__}[grid](...); kernels may call it only from inside a kernel")

    # ---- binding and specialization ---------------------------------------------------------
    def bind(self, args, kwargs) -> tuple[dict, dict]:
        options = {k: kwargs.pop(k) for k in LAUNCH_OPTIONS if k in kwargs}
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            missing = [n for n in self.constexprs if n not in kwargs and self.signature.parameters[n].default
                       is inspect.Parameter.empty and self.params.index(n) >= len(args)]
            hint = f" (missing constexpr {', '.join(missing)})" if missing else ""
            raise LaunchError(f"{self.__name__}(): {e}{hint}; parameters are ({', '.join(self.params)})") from None
        bound.apply_defaults()
        return dict(bound.arguments), options

    def specialize(self, values: dict, options: dict, target: str):
        """The in-memory cache key of a launch, its argument specs, constexpr values and CompileOptions."""
        specs = {n: classify(n, v) for n, v in values.items() if n not in self.constexprs}
        consts = {n: constexpr_value(n, values[n]) for n in self.constexprs}
        key_consts = tuple(hashable(v) for v in consts.values())
        compile_options = CompileOptions(target, mma_layout(options), xe_abi(), debugging(),
                                         subgroup_count(options))
        return (tuple(specs.values()), key_consts, compile_options), specs, consts, compile_options

    def compiled_for(self, values: dict, options: dict, target: str) -> CompiledKernel:
        key, specs, consts, compile_options = self.specialize(values, options, target)
        compiled = self.cache.get(key)
        if compiled is None or not all_unchanged(compiled.reads):
            result = compile_kernel(self, specs, consts, key[1], compile_options)
            compiled = self.cache[key] = CompiledKernel(specs, target, result)
        return compiled

    # ---- launch -----------------------------------------------------------------------------
    def run(self, grid, args, kwargs) -> None:
        values, options = self.bind(args, kwargs)
        device: Device = select_device(options.get("device"), values.values())
        compiled = self.compiled_for(values, options, choose_target(device.target, options.get("target")))
        grid = normalize_grid(grid, {n: values[n] for n in self.constexprs})
        for name in compiled.written:
            if read_only(values[name]):
                raise LaunchError(f"argument '{name}' is read-only but the kernel writes it")
        for name in compiled.artifact.loop_steps:
            if values[name] == 0:
                raise LaunchError(f"argument '{name}' is the step of a range() loop in the kernel and must not be 0")
        if device.kind == NUMPY:
            compiled.run(grid, values)  # the interpreter checks its grid limit before the first workgroup
        elif all(grid):
            check_launch(device.queue.sycl_device, grid, compiled.workgroup_size)
            compiled.run_sycl(device.queue, grid, values)

    def warmup(self, *args, grid=None, target: str | None = None, **kwargs) -> CompiledKernel:
        """Compiles for these arguments without running, for `target` (default: the launch's device's).
        `grid` is accepted for symmetry with a launch."""
        values, options = self.bind(args, kwargs)
        if target is None:
            target = select_device(options.get("device"), values.values()).target
        compiled = self.compiled_for(values, options, target)
        if grid is not None:
            normalize_grid(grid, {n: values[n] for n in self.constexprs})
        return compiled


class Launcher:
    def __init__(self, kernel: Kernel, grid):
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args, **kwargs):
        return self.kernel.run(self.grid, args, kwargs)


def kernel(fn) -> Kernel:
    """Decorator: makes `fn` an XeTile kernel, launched as `fn[grid](*args, **constexprs)`."""
    return Kernel(fn)
