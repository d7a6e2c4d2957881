"""`@xetile.kernel`, the JIT front: the kernel object, its launcher `kernel[grid](...)`, argument binding,
specialization, warmup, the in-memory compile cache and the launch (the compiler driver is compiler/driver.py).

A launch first looks for its launch plan (jit/launch_plan.py: a generated binder and a cheap key). On a miss, the slow
path binds the arguments, checks them, picks the device, looks up the compiled kernel by its specialization (array
dtypes and memory orders, scalar types, constexpr values keyed by type and, for floats, by bits) and its
CompileOptions, and makes the plan; the plan runs it: in the numpy interpreter, or as SPIR-V on a SYCL queue
(asynchronously when every array is USM: runtime/ordering.py). Both a plan hit and an in-memory compile hit re-read
what the trace read (globals, closure cells, helper kernels: compiler/dependencies.py) and compile again when any of it
changed. Every check happens before anything runs, so a bad launch leaves the arrays untouched.
"""
from __future__ import annotations

import hashlib
import inspect
import os
import struct
import sys
import threading
import types
from collections.abc import Mapping

from ..ir.interpreter import run_ir
from ..target.targets import get_target, xe_abi
from ..errors import CompilationError, LaunchError, UnvectorizedKernelWarning, did_you_mean, warn
from ..ir.attrs import Layout
from ..ir.types import DType
from ..runtime import ordering, progress, timing
from ..ir.parser import parse_func
from ..runtime.args import ArraySpec, array_layout, as_array, classify, python_scalar, runtime_value
from ..runtime.device import NUMPY, Device, choose_target, named_device, select_device
from ..runtime.kernel_bundles import kernel_bundle_api
from ..runtime.sycl import SyclProgram
from ..runtime.torch_tensors import check_tensor_devices
from ..compiler.driver import Compiled, CompileOptions, compile_kernel, debugging
from ..compiler.dependencies import all_unchanged
from ..compiler.mlir_export import ArrayShape, export_mlir
from ..language.dsl import constexpr
from .launch_plan import MAX_PLANS, LaunchPlan, made_before_dpnp, make_binder, make_specializer, normalize_grid
from ..compiler.tracer import Function

LAUNCH_OPTIONS = ("device", "target", "sg_layout", "sg_data", "num_subgroups", "prefetch_distance", "fast_math",
                  "fp_fusion", "check")
TRITON_OPTIONS = {  # Triton's launch options, and what to write here instead
    "num_warps": "num_warps is Triton's; here it is num_subgroups: the subgroups of a workgroup, as warps are a "
                 "CTA's; a kernel with tile_mma takes sg_layout and sg_data",
    "num_stages": "num_stages is Triton's; the nearest here is prefetch_distance: how many loop steps ahead a "
                  "loop's tiles are prefetched",
    "enable_fp_fusion": "enable_fp_fusion is Triton's (on there unless turned off); here it is fp_fusion, off unless "
                        "turned on: device code rounds each multiply and add as the numpy interpreter does",
}
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


ABSENT = "absent"  # the key part naming the parameters launched with None (Kernel.specialize)


def hashable(value):
    """A cache-key form of a constexpr: typed because 2 == 2.0 == True in Python, floats by their bits because
    0.0 == -0.0 and NaN != NaN."""
    if isinstance(value, (list, tuple)):
        return type(value), tuple(hashable(v) for v in value)
    if isinstance(value, float):
        return float, struct.pack("<d", value)
    return type(value), value


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


def prefetch_distance(options: dict) -> int:
    """The `prefetch_distance` launch option: loop steps ahead to prefetch walked tiles (0: none), an int >= 0."""
    distance = python_scalar(options.get("prefetch_distance", 0))
    if not isinstance(distance, int) or isinstance(distance, bool) or distance < 0:
        raise LaunchError(f"prefetch_distance must be an int >= 0 (loop steps to prefetch ahead), got {distance!r}")
    return distance


def fast_math(options: dict) -> bool:
    """The `fast_math` launch option: True lets device code approximate exp, exp2, log, log2, sqrt, rsqrt and
    division (transforms/xetile/relax_float_math.py) and contract multiply-adds into FMAs (`fp_fusion`); the numpy
    interpreter stays exact."""
    return bool_option(options, "fast_math", "approximate math in device code")


def fp_fusion(options: dict) -> bool:
    """Whether device code contracts multiply-adds into FMAs (transforms/xetile/contract_float_math.py): the
    `fp_fusion` launch option (Triton's `enable_fp_fusion`, there on by default), or `fast_math`, which includes it;
    the numpy interpreter stays exact."""
    fused = bool_option(options, "fp_fusion", "FMA contraction in device code")
    return fused or fast_math(options)


def bool_option(options: dict, name: str, meaning: str) -> bool:
    value = python_scalar(options.get(name, False))
    if not isinstance(value, bool):
        raise LaunchError(f"{name} must be True or False ({meaning}), got {value!r}")
    return value


def interpret_check(options: dict, device: Device) -> bool | None:
    """The `check` launch option: True or False to turn the numpy interpreter's checking mode (ir/checking.py) on
    or off for this launch, None (not given) to leave it to XETILE_INTERPRET_CHECK; only the numpy device checks."""
    check = python_scalar(options.get("check"))
    if check is not None and not isinstance(check, bool):
        raise LaunchError(f"check must be True or False (the numpy interpreter's checking mode), got {check!r}")
    if check and device.kind != NUMPY:
        raise LaunchError("check=True is the numpy interpreter's checking mode: launch with device='numpy'")
    return check


class KernelAsm(Mapping):
    """A compiled kernel's `asm`: the artifact's levels and, beside a workgroup XeGPU level ("xegpu"), "mlir": that
    level in upstream MLIR's syntax (compiler/mlir_export.py), made when first asked for (reading it, or listing the
    keys: iterating, `len`, `in`). A kernel upstream has no form for has no "mlir" key, and reading it raises the
    export's NotImplementedError (so does `asm.get("mlir")`: Mapping's get passes KeyError only)."""

    def __init__(self, levels: dict, arrays: dict[str, ArrayShape], workgroup_size: int):
        self.levels = levels
        self.arrays = arrays
        self.workgroup_size = workgroup_size
        self.mlir: str | tuple | None = None  # the text, or the export's NotImplementedError's args

    def exported(self) -> str | tuple | None:
        """The "mlir" level, or the args of the NotImplementedError saying why upstream has no form of the kernel;
        None without a workgroup XeGPU level."""
        if "xegpu" not in self.levels:
            return None
        if self.mlir is None:
            try:
                self.mlir = export_mlir(parse_func(self.levels["xegpu"]), self.arrays, self.workgroup_size)
            except NotImplementedError as e:
                self.mlir = e.args
        return self.mlir

    def __getitem__(self, level: str):
        found = self.exported() if level == "mlir" else None
        if found is None:
            return self.levels[level]
        if isinstance(found, tuple):
            raise NotImplementedError(*found)
        return found

    def __contains__(self, level) -> bool:
        return level in self.levels or level == "mlir" and isinstance(self.exported(), str)

    def __iter__(self):
        yield from self.levels
        if isinstance(self.exported(), str):
            yield "mlir"

    def __len__(self) -> int:
        return len(self.levels) + isinstance(self.exported(), str)


class CompiledKernel:
    """A kernel compiled for one specialization and CompileOptions. `.asm` holds the printed IR of each level
    ("xetile", "xegpu", ...), and for device targets "llir", "spirv" (bytes) and "mlir" (KernelAsm: with the array
    shapes of `arrays`, the launch that compiled it); `build_options` are the driver's, for the SYCL program;
    `.artifact` is the CompiledArtifact."""

    def __init__(self, specs: dict, target: str, compiled: Compiled, arrays: dict[str, ArrayShape] | None = None):
        self.artifact = compiled.artifact
        self.specs = specs
        self.target = target
        self.func = compiled.func
        self.reads = compiled.reads
        self.programs: dict = {}  # SYCL context -> SyclProgram
        self.asm = KernelAsm(self.artifact.asm, arrays or {}, self.artifact.num_subgroups * self.artifact.lanes)

    name = property(lambda self: self.artifact.name)
    written = property(lambda self: self.artifact.written)
    build_options = property(lambda self: self.artifact.build_options)
    workgroup_size = property(lambda self: self.artifact.num_subgroups * self.artifact.lanes)

    def run(self, grid, values: dict, check: bool | None = None) -> None:
        """In the numpy interpreter; `check` as the launch option (`interpret_check`)."""
        args = [runtime_value(self.specs[name], values[name]) for name in self.specs]
        run_ir(self.func, grid, args, check)

    def launch_on(self, queue, grid, values: dict):
        """Runs this kernel on `queue` for `values` (by parameter name, constexprs left out) through the launch
        path, without choosing a kernel or a device (tools, tests of made-up targets); waits for it."""
        ordered = list(values.values())
        plan = LaunchPlan.of(self, Device("sycl", queue, self.target), tuple(values), ordered, threading.Lock())
        event = plan.launch(grid, ordered)
        if event is not None:
            event.wait()

    def unvectorized(self, queue) -> bool:
        """Whether the OpenCL CPU compiler, building its program for `queue`, did not vectorize it: its work-items
        then run one at a time (runtime/opencl/build_log.py)."""
        return self.program(queue).unvectorized(self.name)

    def sycl_kernel(self, queue):
        """The dpctl SyclKernel on `queue`'s context."""
        return self.program(queue).kernel(self.name)

    def program(self, queue) -> SyclProgram:
        """The SYCL program on `queue`'s context, built once per context."""
        program = self.programs.get(queue.sycl_context)
        if program is None:
            program = self.programs[queue.sycl_context] = self.build(queue)
        return program

    def build(self, queue) -> SyclProgram:
        """The SYCL program; a driver that refuses to build it (bad XETILE_BUILD_OPTIONS, say) is a LaunchError."""
        try:
            with timing.stage(self.name, f"driver build ({queue.sycl_device.filter_string}, {self.target})"):
                return SyclProgram(self.asm["spirv"], queue, self.build_options)
        except kernel_bundle_api().compilation_error as e:
            log = str(e).strip() or "the driver gave no build log"
            raise LaunchError(f"the SYCL driver could not build kernel {self.name} for "
                              f"{queue.sycl_device.filter_string} with the build options {self.build_options!r} "
                              f"and XETILE_BUILD_OPTIONS={os.environ.get('XETILE_BUILD_OPTIONS', '')!r}: "
                              f"{log}") from None


def launch_shapes(specs: dict, values: dict) -> dict[str, ArrayShape]:
    """The shape and strides (in elements) of each array argument, by name."""
    shapes = {}
    for name, spec in specs.items():
        if isinstance(spec, ArraySpec):
            shape, strides, dtype = array_layout(as_array(name, values[name]))
            shapes[name] = ArrayShape(tuple(shape), tuple(s // dtype.itemsize for s in strides))
    return shapes


class CompileCache(dict):
    """A kernel's in-memory compile cache (specialization key -> CompiledKernel) and, in `plans`, the launch plans
    made from its kernels (launch_plan.launch_key -> LaunchPlan): clearing it forgets both."""

    def __init__(self):
        super().__init__()
        self.plans: dict = {}

    def clear(self) -> None:
        super().clear()
        self.plans.clear()


def binding_hint(kernel: Kernel, args, kwargs) -> str:
    """What to write instead, for an error binding a launch's arguments: for a keyword that is no parameter, the
    option of ours a Triton option name stands for, or the parameter nearest it (a misspelt constexpr); else the
    constexprs not given."""
    unknown = [k for k in kwargs if k not in kernel.signature.parameters]
    if unknown:
        name = unknown[0]
        return f" ({TRITON_OPTIONS[name]})" if name in TRITON_OPTIONS else \
            f" ('{name}' is not a parameter{did_you_mean(name, kernel.params + list(LAUNCH_OPTIONS))})"
    missing = [n for n in kernel.constexprs if n not in kwargs and kernel.signature.parameters[n].default
               is inspect.Parameter.empty and kernel.params.index(n) >= len(args)]
    return f" (missing constexpr {', '.join(missing)})" if missing else ""


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
        self.heuristics: dict = {}  # parameter -> function of the arguments by name (`heuristics`)
        hide_launches_from_torch_compile()
        self.source_hash = hashlib.sha256(self.function.source.encode()).hexdigest()
        clash = set(self.params) & set(LAUNCH_OPTIONS + ("grid",))
        if clash:
            raise CompilationError(f"kernel {fn.__name__}: parameter names {sorted(clash)} are reserved for launch "
                                   "options", self.function.loc(self.function.node))
        self.cache = CompileCache()  # specialization key -> CompiledKernel
        self.lock = threading.RLock()
        self.specializer = self.new_specializer()
        self.binder = make_binder(self.signature, LAUNCH_OPTIONS)  # named_arguments'
        self.launcher = Launcher(self, None)  # the last tuple grid's (a Launcher holds nothing else)

    def __repr__(self) -> str:
        return f"<xetile.kernel {self.__name__}>"

    def new_specializer(self):
        """The launch binder generated for this kernel's signature and the array types imported now
        (jit/launch_plan.py make_specializer)."""
        return make_specializer(self.signature, self.constexprs, LAUNCH_OPTIONS, hashable)

    def __getitem__(self, grid):
        launcher = self.launcher
        if launcher.grid is not grid:  # `kernel[(n,)]` with a literal gives the same tuple at each launch
            launcher = Launcher(self, grid)
            if type(grid) is tuple:  # never a callable grid, which may hold what it closes over
                self.launcher = launcher
        return launcher

    def __call__(self, *args, **kwargs):
        raise TypeError(f"launch a kernel as {self.__name__}[grid](...); kernels may call it only from inside a kernel")

    # ---- binding and specialization ---------------------------------------------------------
    def bind(self, args, kwargs) -> tuple[dict, dict]:
        options = {k: kwargs.pop(k) for k in LAUNCH_OPTIONS if k in kwargs}
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise LaunchError(f"{self.__name__}(): {e}{binding_hint(self, args, kwargs)}; parameters are "
                              f"({', '.join(self.params)})") from None
        bound.apply_defaults()
        return dict(bound.arguments), options

    def specialize(self, values: dict, options: dict, target: str):
        """The in-memory cache key of a launch, its argument specs, constexpr values and CompileOptions. None for a
        parameter that is not a constexpr (Triton's optional pointer) is specialized as a constexpr: the kernel
        takes no argument for it and its trace reads None (`if bias is not None:` is decided while tracing)."""
        absent = tuple(n for n, v in values.items() if v is None and n not in self.constexprs)
        specs = {n: classify(n, v) for n, v in values.items() if n not in self.constexprs and n not in absent}
        consts = {n: constexpr_value(n, values[n]) for n in self.constexprs}
        key_consts = tuple(hashable(v) for v in consts.values()) + ((ABSENT, absent),) * bool(absent)
        consts |= dict.fromkeys(absent)
        compile_options = CompileOptions(target, mma_layout(options), xe_abi(), debugging(),
                                         subgroup_count(options), prefetch_distance(options), fast_math(options),
                                         fp_fusion(options))
        return (tuple(specs.values()), key_consts, compile_options), specs, consts, compile_options

    def compiled_for(self, values: dict, options: dict, target: str, queue=None) -> CompiledKernel:
        """The kernel compiled for these arguments, options and target; for a launch on `queue` (a SYCL queue), one
        that runs right there: where its lanes read each other's values, one the OpenCL CPU compiler vectorized
        (`vectorized_fallback`)."""
        key, specs, consts, compile_options = self.specialize(values, options, target)
        compiled = self.cache.get(key)
        if compiled is None or not all_unchanged(compiled.reads):
            result = compile_kernel(self, specs, consts, key[1], compile_options)
            compiled = self.cache[key] = CompiledKernel(specs, target, result, launch_shapes(specs, values))
        if queue is not None and compiled.artifact.exchanges_lanes and compiled.unvectorized(queue):
            return self.vectorized_fallback(compiled, values, options, queue)
        return compiled

    def vectorized_fallback(self, compiled: CompiledKernel, values: dict, options: dict, queue) -> CompiledKernel:
        """For a kernel whose lanes read each other's values and which the OpenCL CPU compiler did not vectorize on
        `queue`, so that its lanes would not run as a sub-group: the kernel compiled for its target's
        `unvectorized_fallback` (itself vectorized, or refused the same way); a LaunchError where there is none."""
        fallback = get_target(compiled.target).unvectorized_fallback
        if fallback is None:
            raise LaunchError(f"the OpenCL CPU compiler did not vectorize kernel {self.__name__} for target "
                              f"{compiled.target}: it would run each work-item alone, and lanes that exchange values "
                              "would read each other's before they are there (docs/guide.md §6.6, 'Kernels the "
                              "OpenCL CPU compiler does not vectorize')")
        if not progress.quiet():
            warn(f"xetile_jit: the OpenCL CPU compiler did not vectorize kernel {self.__name__} for target "
                 f"{compiled.target}; it runs as compiled for target {fallback} (slower). XETILE_QUIET=1 silences "
                 "this.", UnvectorizedKernelWarning)
        return self.compiled_for(values, options, fallback, queue)

    # ---- launch ----------------------------------------------------------------------------
    def run(self, grid, args, kwargs):
        """A launch: through the plan of its key (jit/launch_plan.py), made on the slow path on a miss; returns the
        launch's SYCL event (None on the numpy device)."""
        callable_grid = type(grid) is not tuple and callable(grid)
        if self.heuristics or callable_grid:  # a dict's truth: a launch with neither binds nothing more here
            kwargs, named = self.launch_arguments(args, kwargs)
            if callable_grid and named is not None:  # Triton's META: `meta["x"].numel()` reads the caller's tensor
                grid = grid(named)
        try:  # fast_bind's call, inline (a frame less a launch)
            bound = self.specializer(*args, **kwargs)
            plan = None if bound is None else self.cache.plans.get(bound[0])
        except (TypeError, LaunchError):  # as fast_bind's; a TypeError too from an unhashable constexpr or option, or
            plan, bound = None, None      # no specializer (None): the slow path binds, refuses, reports
        if plan is None or not all_unchanged(plan.compiled.reads):
            with progress.activity(f"first launch of {self.__name__}"):
                with self.lock:  # one thread compiles; the cache dicts are only written here
                    plan, values = self.make_plan(args, kwargs, bound)
                with timing.stage(self.__name__, "first launch"):
                    return plan.launch(grid, values)
        return plan.launch(grid, bound[1], bound[2], bound[3])

    def named_arguments(self, args, kwargs: dict) -> dict:
        """The launch's arguments as given, by parameter name, defaults included (launch options left out); the
        binding's TypeError where they do not bind."""
        if self.binder is not None:
            return self.binder(*args, **kwargs)
        bound = self.signature.bind_partial(*args, **{k: v for k, v in kwargs.items() if k not in LAUNCH_OPTIONS})
        bound.apply_defaults()
        return dict(bound.arguments)

    def launch_arguments(self, args, kwargs: dict) -> tuple[dict, dict | None]:
        """`kwargs` with the value of each of the kernel's heuristics (`heuristics`), in their order, each a
        function of every argument by name (defaults, an autotuner's config and the heuristics before it
        included); and those arguments by name, the heuristics' values among them (what a callable grid reads).
        Arguments that do not bind are left for the launch to report (None for the names)."""
        given = [n for n in self.heuristics if n in kwargs or n in self.params[:len(args)]]
        if given:
            raise LaunchError(f"kernel {self.__name__}: {given} are set by its @xetile.heuristics; neither a launch "
                              "nor an autotune config may set them too")
        try:
            named = self.named_arguments(args, kwargs)
        except TypeError:
            return kwargs, None
        if not self.heuristics:
            return kwargs, named
        for name, rule in self.heuristics.items():
            named[name] = rule(named)
        return {**kwargs, **{name: named[name] for name in self.heuristics}}, named

    def with_heuristics(self, args, kwargs: dict) -> dict:
        """`kwargs` with the heuristics' values (`launch_arguments`); `kwargs` itself for a kernel without any."""
        return self.launch_arguments(args, kwargs)[0] if self.heuristics else kwargs

    def fast_bind(self, args, kwargs):
        """(plan key, argument values as launched, their kernel-argument parts, the parts of all of the kernel
        arguments or None: launch_plan.make_specializer), or None: the slow path binds and reports."""
        if self.specializer is None:
            return None
        try:
            return self.specializer(*args, **kwargs)
        except (TypeError, LaunchError):  # the slow path reports it, after the errors it checks first
            return None

    def make_plan(self, args, kwargs, bound) -> tuple[LaunchPlan, tuple]:
        """The slow path: binding through inspect (its errors), device selection, classification, the compile
        cache; the plan is kept under its key when the launch has one."""
        values, options = self.bind(args, dict(kwargs))
        if made_before_dpnp(self.specializer):  # dpnp arrays take their own path from now on: key them so
            self.specializer = self.new_specializer()
            bound = self.fast_bind(args, kwargs)
        device: Device = select_device(options.get("device"), values.values())
        check_tensor_devices(values, device.queue)
        compiled = self.compiled_for(values, options, choose_target(device.target, options.get("target")),
                                     None if device.kind == NUMPY else device.queue)
        launched = bound[1] if bound is not None else tuple(values.values())
        plan = LaunchPlan.of(compiled, device, self.params, launched,
                             self.lock, interpret_check(options, device))
        if bound is not None:
            if len(self.cache.plans) >= MAX_PLANS:
                self.cache.plans.clear()
            self.cache.plans[bound[0]] = plan
        return plan, launched

    def warmup(self, *args, grid=None, target: str | None = None, **kwargs) -> CompiledKernel:
        """Compiles for these arguments without running, for `target` (default: the launch's device's).
        `grid` is accepted for symmetry with a launch."""
        values, options = self.bind(args, self.with_heuristics(args, kwargs))
        if target is None:
            target = select_device(options.get("device"), values.values()).target
        with progress.activity(f"compile of {self.__name__}"):
            compiled = self.compiled_for(values, options, target)
        if grid is not None:
            normalize_grid(grid, values, values.values())
        return compiled


class Launcher:
    """`kernel[grid]`: called with the kernel's arguments and, by keyword, launch options: `device` ("numpy" for
    the interpreter, a SYCL filter string or queue), `target`, `sg_layout` and `sg_data` (tile_mma's layout),
    `num_subgroups`, `prefetch_distance`, `fast_math` (approximate exp, exp2, log, log2, sqrt, rsqrt and division,
    and FMA contraction, in device code: docs/guide.md "Fast math"), `fp_fusion` (the contraction alone), and
    `check`: True runs the numpy interpreter in checking mode (data races, reads of uninitialized SLM, unpadded
    out-of-bounds accesses raise InterpretCheckError: ir/checking.py), False runs it without, whatever
    XETILE_INTERPRET_CHECK says."""
    __slots__ = ("kernel", "grid")  # one is made at each launch with a new grid

    def __init__(self, kernel: Kernel, grid):
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args, **kwargs):
        return self.kernel.run(self.grid, args, kwargs)


TORCH_COMPILE_REASON = ("an xetile_jit launch runs eagerly; inside one graph (fullgraph=True), launch through "
                        "xetile.torch.op")


def hide_launches_from_torch_compile() -> None:
    """Where torch is imported (when a kernel is made, or xetile.torch is), `Launcher.__call__` becomes a function
    torch.compile does not trace into (`torch.compiler.disable`): a launch in a compiled function is then a graph
    break, run as in eager mode. Traced, the launch path's caches made Dynamo guard on each tensor's identity and
    compile the function again at every call (a 20x30 scale: 95-156 ms a call against 0.13 eager, Zen 4,
    2026-12-03), and a new shape failed in its argument checks. Inside one graph (fullgraph=True) a launch goes
    through `xetile.torch.op`. The wrapper costs ~0.4 us a call (timeit, the same machine); without torch,
    nothing."""
    torch = sys.modules.get("torch")
    launch = Launcher.__call__
    if torch is None or getattr(launch, "_torchdynamo_disable", False) or not hasattr(torch, "compiler"):
        return
    try:
        Launcher.__call__ = torch.compiler.disable(launch, reason=TORCH_COMPILE_REASON)
    except TypeError:  # a torch whose disable takes no reason
        Launcher.__call__ = torch.compiler.disable(launch)


def synchronize(device=None) -> None:
    """Waits for all work on `device` (as the `device=` launch option takes it; "numpy" has nothing to wait for),
    or, when None, on every queue a launch ran asynchronously on (runtime/ordering.py)."""
    if device is None:
        ordering.synchronize()
        return
    queue = named_device(device).queue
    if queue is not None:
        ordering.synchronize(queue)


def heuristics(values: dict):
    """Decorator above `@xetile.kernel` (and below `@xetile.autotune`), Triton's: each parameter named in `values`
    gets, at every launch, the value of its function of the launch's arguments by name (a dict, defaults and the
    autotuner's config included): `@xetile.heuristics({"EVEN_K": lambda args: args["K"] % args["BK"] == 0})`."""
    def decorate(kern: Kernel) -> Kernel:
        """A new Kernel of the same function with these heuristics after `kern`'s: `kern` launches as before."""
        if not isinstance(kern, Kernel):
            raise TypeError("@xetile.heuristics goes above @xetile.kernel and below @xetile.autotune")
        unknown = [n for n in values if n not in kern.params]
        if unknown:
            raise ValueError(f"heuristics: {unknown} are not parameters of {kern.__name__} ({kern.params})")
        made = Kernel(kern.fn)
        made.heuristics = {**kern.heuristics, **values}
        return made
    return decorate


def kernel(fn) -> Kernel:
    """Decorator: makes `fn` an XeTile kernel, launched as `fn[grid](*args, **constexprs)`; a kernel decorated
    again is itself (idempotent, as decorating twice changes nothing the user meant)."""
    if isinstance(fn, Kernel):
        return fn
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"@xetile.kernel decorates a Python function (a def), not an object of type "
                        f"{type(fn).__name__}; decorators that wrap a kernel, such as @xetile.autotune, go above it")
    return Kernel(fn)
