"""`@xetile.kernel`: the kernel object, its launcher `kernel[grid](...)`, warmup and the compile caches.

A launch binds the arguments, checks them, picks the device, looks up the compiled kernel by its
specialization (array dtypes and memory orders, scalar types, constexpr values, layout options, target)
and runs it: in the numpy interpreter, or as SPIR-V on a SYCL queue. Every check happens before anything
runs, so a bad launch leaves the arrays untouched. Compiled SPIR-V is also kept on disk (DESIGN 4), keyed
so that a fresh process reuses it without tracing again.
"""
from __future__ import annotations

import hashlib
import inspect
import os
import sys

from ..backend.interpreter import Interpreter
from ..backend.pipeline import compile_spirv
from ..backend.targets import get_target
from ..errors import CompilationError, LaunchError
from ..ir.attrs import Layout
from ..ir.core import Builder, FuncOp
from ..ir.core_ops import ReturnOp
from ..ir.printer import print_func
from ..ir.verifier import verify
from ..ir.xetile_ops import written_arrays
from ..runtime.args import classify, runtime_value
from ..runtime.cache import DiskCache, compiler_hash
from ..runtime.device import NUMPY, Device, check_launch, select_device
from ..runtime.memory import prepare_arguments
from ..runtime.sycl import SyclProgram, launch
from .dsl import constexpr
from .semantic import Semantic
from .tracer import Function, Tracer

LAUNCH_OPTIONS = ("device", "sg_layout", "sg_data")


def is_constexpr(annotation) -> bool:
    if annotation is constexpr:
        return True
    return isinstance(annotation, str) and annotation.split(".")[-1] == "constexpr"


def hashable(value):
    """A cache-key form of a constexpr; the type is part of it because 2 == 2.0 == True in Python."""
    if isinstance(value, (list, tuple)):
        return type(value), tuple(hashable(v) for v in value)
    return type(value), value


def normalize_grid(grid, constexprs: dict) -> tuple[int, int, int]:
    if callable(grid):
        grid = grid(constexprs)
    if isinstance(grid, int):
        grid = (grid,)
    if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3 or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in grid):
        raise LaunchError(f"grid must be a tuple of 1 to 3 non-negative ints (workgroups), got {grid!r}")
    return tuple(grid) + (1,) * (3 - len(grid))


def mma_layout(options: dict) -> Layout | None:
    sg_layout, sg_data = options.get("sg_layout"), options.get("sg_data")
    if sg_layout is None and sg_data is None:
        return None
    if sg_layout is None or sg_data is None:
        raise LaunchError("sg_layout and sg_data go together: give both or neither")
    try:
        return Layout(sg_layout, sg_data)
    except (TypeError, ValueError) as e:
        raise LaunchError(f"bad tile_mma layout: {e}") from None


class CompiledKernel:
    """A kernel compiled for one specialization and target. `.asm` holds the printed IR of each level
    ("xetile", "xegpu", ...), and for device targets "llir" and "spirv" (bytes); `build_options` are the
    driver's, for the SYCL program."""

    def __init__(self, name: str, specs: dict, target: str, asm: dict, written: set, func: FuncOp | None = None,
                 num_subgroups: int = 1, lanes: int = 1, build_options: str = ""):
        self.name = name
        self.build_options = build_options
        self.specs = specs
        self.target = target
        self.asm = asm
        self.written = written
        self.func = func
        self.workgroup_size = num_subgroups * lanes
        self.programs: dict = {}  # SYCL context -> SyclProgram

    @classmethod
    def from_entry(cls, name: str, specs: dict, target: str, entry: dict) -> "CompiledKernel":
        asm = {k: v for k, v in entry.items() if k not in ("written", "num_subgroups", "lanes", "build_options")}
        return cls(name, specs, target, asm, set(filter(None, entry["written"].split(","))),
                   num_subgroups=int(entry["num_subgroups"]), lanes=int(entry["lanes"]),
                   build_options=entry["build_options"])

    def run(self, grid, values: dict) -> None:
        """In the numpy interpreter."""
        args = [runtime_value(self.specs[name], values[name]) for name in self.specs]
        Interpreter(self.func).run(grid, args)

    def run_sycl(self, queue, grid, values: dict) -> None:
        """As SPIR-V on `queue`: workgroups of num_subgroups x lanes work-items along dimension 0."""
        program = self.programs.get(queue.sycl_context)
        if program is None:
            program = SyclProgram(self.asm["spirv"], queue, self.build_options)
            self.programs[queue.sycl_context] = program
        args, finish = prepare_arguments(queue, values, self.specs, self.written)
        local = (self.workgroup_size, 1, 1)
        launch(queue, program.kernel(self.name), (grid[0] * local[0], grid[1], grid[2]), local, args)
        finish()


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
        clash = set(self.params) & set(LAUNCH_OPTIONS + ("grid", "target"))
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
        specs = {n: classify(n, v) for n, v in values.items() if n not in self.constexprs}
        consts = {n: values[n] for n in self.constexprs}
        layout = mma_layout(options)
        key = (tuple(specs.values()), tuple(hashable(v) for v in consts.values()), layout, target)
        return key, specs, consts, layout

    def compiled_for(self, values: dict, options: dict, target: str) -> CompiledKernel:
        key, specs, consts, layout = self.specialize(values, options, target)
        compiled = self.cache.get(key)
        if compiled is None:
            compiled = self.cache[key] = self.compile(specs, consts, layout, target)
        return compiled

    def compile(self, specs: dict, consts: dict, layout, target: str) -> CompiledKernel:
        if target == NUMPY:
            func = self.trace(specs, consts, layout)
            return CompiledKernel(self.__name__, specs, target, {"xetile": print_func(func)},
                                  {a.name_hint for a in written_arrays(func)}, func=func)
        chosen = get_target(target)
        cache = DiskCache()
        key = cache.key(compiler_hash(), self.source_hash, specs, consts, layout, target)
        entry = cache.get(key)
        if entry is not None:
            try:
                return CompiledKernel.from_entry(self.__name__, specs, target, entry)
            except (KeyError, TypeError, ValueError):  # an intact file, but not a compiled kernel: recompile
                cache.discard(key)
        func = self.trace(specs, consts, layout)
        entry = {"xetile": print_func(func), **compile_spirv(func, chosen),
                 "written": ",".join(sorted(a.name_hint for a in written_arrays(func)))}
        entry = {k: v if isinstance(v, (str, bytes)) else str(v) for k, v in entry.items()}
        cache.put(key, entry)
        return CompiledKernel.from_entry(self.__name__, specs, target, entry)

    def trace(self, specs: dict, consts: dict, layout) -> FuncOp:
        func = FuncOp(self.__name__, [s.ir_type() for s in specs.values()], list(specs), consts,
                      loc=self.function.loc(self.function.node))
        builder = Builder(func.body)
        scope = dict(zip(specs, func.args)) | consts
        result = Tracer(self.function, Semantic(builder, layout), scope).trace()
        if result is not None:
            raise CompilationError(f"kernel {self.__name__} must not return a value", builder.loc)
        builder.create(ReturnOp)
        verify(func)
        if os.environ.get("XETILE_DUMP_IR") == "1":
            print(f"// -----// XeTile IR: {self.__name__} //----- //\n{print_func(func)}", file=sys.stderr)
        return func

    # ---- launch -----------------------------------------------------------------------------
    def run(self, grid, args, kwargs) -> None:
        values, options = self.bind(args, kwargs)
        device: Device = select_device(options.get("device"), values.values())
        compiled = self.compiled_for(values, options, device.target)
        grid = normalize_grid(grid, {n: values[n] for n in self.constexprs})
        for name in compiled.written:
            if not getattr(getattr(values[name], "flags", None), "writeable", True):
                raise LaunchError(f"argument '{name}' is read-only but the kernel writes it")
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
