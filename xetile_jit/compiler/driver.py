"""The compiler driver: a kernel's specialization and `CompileOptions` in, a `CompiledArtifact`
out, through the trace, the backend and the on-disk cache (docs/DESIGN.md §4).

`CompileOptions` (target, tile_mma anchor layout, subgroup count, prefetch distance, fast math) is the one source of
the options' part of both cache keys.
`CompiledArtifact` is what a compile produces and what the disk cache holds; it owns its serialisation to the
cache's entry format (a dict of str and bytes fields). The disk key covers the compiler, the kernel's source,
the specialization and the options, and for the CPU targets the host CPU's feature flags; what the trace read besides
(globals, closure cells, module attributes, inlined kernels: compiler/dependencies.py) is only known after tracing,
so the entry lists it with its values and a load checks them (a mismatch recompiles and overwrites the entry).
"""
from __future__ import annotations

import contextlib
import gc
import json
import os
import struct
import sys
from dataclasses import dataclass

from ..codegen.spirv.spec import MAGIC as SPIRV_MAGIC
from ..toolchain import ocloc
from .pipeline import compile_spirv, lower
from ..target.targets import get_target
from ..errors import BlockIOFallbackWarning, CompilationError, warn
from ..ir.attrs import Layout
from ..ir.core import Builder, FuncOp, walk
from ..ir.core_ops import ForOp, IndexCastOp, ReturnOp, SubgroupIdOp
from ..ir.debug_ops import DeviceAssertOp
from ..ir.types import MemRefType
from ..ir.printer import print_func
from ..ir.verifier import verify
from ..ir.scatter_ops import InitScatterTileOp
from ..ir.xetile_ops import InitTileOp, written_arrays
from ..runtime.cache import DiskCache, compiler_hash
from ..runtime import timing
from ..runtime.device import NUMPY
from .dependencies import Dependency, Reads, Rereads, resolve
from .layout_space import INTERPRETER_TARGET
from ..language.semantic import Semantic
from .tracer import Tracer

META_FIELD = "meta"  # the entry field holding everything but the IR texts and the SPIR-V, as JSON
# of compile_spirv's result: not IR
LAUNCH_FIELDS = ("num_subgroups", "lanes", "build_options", "packed_sizes", "subgroup_rows", "exchanges_lanes")


@dataclass(frozen=True)
class CompileOptions:
    """Everything besides the kernel's specialization that changes what a compile produces."""
    target: str                      # "numpy" or the name of a Target (target/targets.py)
    mma_layout: Layout | None = None  # the tile_mma anchor layout (sg_layout, sg_data launch options)
    abi: str = ""  # the Xe builtin ABI asked for (XETILE_XE_ABI), "" for the target's own
    debug: bool = False  # XETILE_DEBUG=1: device_assert in device code (not implemented: check_debug)
    num_subgroups: int | None = None  # subgroups of a kernel without anchors (None: layout propagation chooses)
    prefetch_distance: int = 0  # loop steps a walked tile is prefetched ahead (transforms/xetile/prefetch_insertion.py)
    # approximate functions and contraction in device code (transforms/xetile/relax_float_math.py)
    fast_math: bool = False
    fp_fusion: bool = False  # contraction alone (transforms/xetile/contract_float_math.py); True with fast_math


@dataclass(frozen=True)
class CompiledArtifact:
    """A compiled kernel: its printed IR levels and, for device targets, the SPIR-V (`asm`), the arrays it
    writes, the launch shape of a workgroup, the driver's build options and what the trace read."""
    name: str
    asm: dict  # level -> text; "spirv" -> bytes
    written: frozenset[str]
    num_subgroups: int = 1
    lanes: int = 1
    build_options: str = ""
    dependencies: tuple[Dependency, ...] = ()
    loop_steps: tuple[str, ...] = ()  # scalar arguments a runtime loop steps by: a launch refuses 0 for them
    packed_sizes: bool = False  # the kernel takes its arrays' sizes as one struct (BuiltinAbi.packed_sizes)
    subgroup_rows: bool = False  # its sub-groups are the rows of its local range (BuiltinAbi.subgroup_rows)
    exchanges_lanes: bool = False  # a lane reads other lanes' values (simt_ops.exchanges_lanes)

    def to_entry(self) -> dict:
        meta = {"name": self.name, "written": sorted(self.written), "num_subgroups": self.num_subgroups,
                "lanes": self.lanes, "build_options": self.build_options,
                "dependencies": [d.to_json() for d in self.dependencies], "loop_steps": list(self.loop_steps),
                "packed_sizes": self.packed_sizes, "subgroup_rows": self.subgroup_rows,
                "exchanges_lanes": self.exchanges_lanes}
        return {**self.asm, META_FIELD: json.dumps(meta)}

    @property
    def local_size(self) -> tuple[int, int, int]:
        """A workgroup's work-items along x, y and z: its lanes by its sub-groups where those are rows, else one
        row of them all."""
        if self.subgroup_rows:
            return self.lanes, self.num_subgroups, 1
        return self.num_subgroups * self.lanes, 1, 1

    @classmethod
    def from_entry(cls, entry: dict) -> "CompiledArtifact":
        """Raises (KeyError, ValueError, TypeError) when the entry is not one `to_entry` wrote for a device target
        (those the disk cache holds): its SPIR-V is bytes that start as a SPIR-V module does."""
        if not isinstance(entry["spirv"], bytes) or entry["spirv"][:4] != struct.pack("<I", SPIRV_MAGIC):
            raise ValueError("the entry holds no SPIR-V module")
        meta = json.loads(entry[META_FIELD])
        return cls(str(meta["name"]), {k: v for k, v in entry.items() if k != META_FIELD},
                   frozenset(map(str, meta["written"])), int(meta["num_subgroups"]), int(meta["lanes"]),
                   str(meta["build_options"]), tuple(Dependency(*map(str, d)) for d in meta["dependencies"]),
                   tuple(map(str, meta["loop_steps"])), bool(meta["packed_sizes"]), bool(meta["subgroup_rows"]),
                   bool(meta["exchanges_lanes"]))


@dataclass
class Compiled:
    """A compile's result for the launcher: the artifact, the traced function for the numpy interpreter
    (None when loaded from disk) and the reads to re-check at each in-memory cache hit."""
    artifact: CompiledArtifact
    func: FuncOp | None
    reads: Rereads


def compile_kernel(kernel, specs: dict, consts: dict, key_consts: tuple, options: CompileOptions) -> Compiled:
    """`kernel` compiled for argument `specs`, constexpr values `consts` (`key_consts`: their key form) and
    `options`; device targets go through the disk cache."""
    if options.target == NUMPY:
        func, reads = trace(kernel, specs, consts, options.mma_layout)
        return Compiled(artifact_of(kernel.__name__, func, {}, reads), interpreted(func, options), reads.rereads())
    target = get_target(options.target, options.abi)
    cache = DiskCache()
    # an entry holds the ISA of the GPU compiler installed when it was made; a CPU target's, code chosen for its
    # CPU's vector ISA (Target.cpu)
    key = cache.key(compiler_hash(), kernel.source_hash, tuple(specs.values()), key_consts, options,
                    ocloc.identity(target), target.cpu and target.cpu.key)
    with timing.stage(kernel.__name__, "disk cache lookup"):
        cached = None if dumping_ir() else load(cache.get(key), kernel, specs)  # a dump shows every level: compile
    if cached is not None:
        return cached
    with collector_paused():
        func, reads = trace(kernel, specs, consts, options.mma_layout)
        check_debug(func, options)
        fallbacks = block_io_fallbacks(func, specs, target.block_io.any_layout) if target.block_io is not None else {}
        artifact = artifact_of(kernel.__name__, func, compile_spirv(func, target, options.num_subgroups, fallbacks,
                                                                    options.prefetch_distance, options.fast_math,
                                                                    options.fp_fusion),
                               reads)
    warn_block_io_fallback(func.sym_name, fallbacks)
    cache.put(key, artifact.to_entry())
    return Compiled(artifact, None, reads.rereads())


@contextlib.contextmanager
def collector_paused():
    """Python's cycle collector off while compiling: a compile makes ~10^5 short-lived IR objects, and the passes
    the collector makes over them took 10-30% of the tutorial GEMM's compile. What they leave is collected after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def interpreted(func: FuncOp, options: CompileOptions) -> FuncOp:
    """The level the numpy interpreter runs: the workgroup level, or the subgroup level for a kernel that asks its
    subgroup id (each subgroup then runs its own part of the ops in its branches)."""
    if not any(isinstance(op, SubgroupIdOp) for op in walk(func.body)):
        return func
    return lower(func, "xegpu-sg", target=INTERPRETER_TARGET, num_subgroups=options.num_subgroups)["xegpu-sg"]


def debugging() -> bool:
    """XETILE_DEBUG=1: device_assert in device code as well (CompileOptions.debug)."""
    return os.environ.get("XETILE_DEBUG") == "1"


def check_debug(func: FuncOp, options: CompileOptions) -> None:
    """The SPIR-V path cannot stop a kernel and report, so a device_assert in device code is not implemented."""
    if options.debug and any(isinstance(op, DeviceAssertOp) for op in walk(func.body)):
        raise NotImplementedError(f"kernel {func.sym_name}: device_assert in device code (XETILE_DEBUG=1, target "
                                  f"{options.target}); the numpy interpreter checks it (device='numpy'), device code "
                                  "leaves it out without XETILE_DEBUG")


def block_io_fallbacks(func: FuncOp, specs: dict, any_layout: bool) -> dict[str, str]:
    """The arrays `func` uses that 2D block messages cannot address, each with the surface rule it breaks
    (ArraySpec.surface_rule: `any_layout`, the target's BlockIO.any_layout); `asm["isa_stats"]` lists them as
    "block_io_fallback"."""
    rules = {a.name_hint: specs[a.name_hint].surface_rule(any_layout) for a in func.args
             if isinstance(a.type, MemRefType) and block_tiles_read(a)}
    return {name: rule for name, rule in rules.items() if rule is not None}


def warn_block_io_fallback(kernel: str, fallbacks: dict[str, str]) -> None:
    """One BlockIOFallbackWarning for a kernel compiled for a target with 2D block messages, naming each array of
    `fallbacks` and its rule; XETILE_QUIET=1 silences it."""
    broken = [f"'{name}' (rule: {rule})" for name, rule in fallbacks.items()]
    if not broken or os.environ.get("XETILE_QUIET") == "1":
        return
    arrays = f"array {broken[0]}" if len(broken) == 1 else f"arrays {', '.join(broken[:-1])} and {broken[-1]}"
    warn(f"xetile_jit: kernel {kernel}: 2D block messages cannot address {arrays}; loads and stores there go "
         "element by element (slower; on GPUs more registers, possibly spills). The rules: a 64-byte aligned base, a "
         "row pitch of 16-byte units, rows 64 bytes to 2**24 bytes wide (README, 'SPIR-V and GPU builds'). "
         "XETILE_QUIET=1 silences this.", BlockIOFallbackWarning)


def block_tiles_read(array) -> bool:
    """The array has a block tile on it: #scatter tiles and element reads (`a[i, j]`) go element by element
    whatever the surface."""
    return any(isinstance(op, InitTileOp) and not isinstance(op, InitScatterTileOp) for op, _ in array.uses)


def dumping_ir() -> bool:
    """XETILE_DUMP_IR=1: print every level of each kernel compiled, also when the disk cache has it."""
    return os.environ.get("XETILE_DUMP_IR") == "1"


def load(entry: dict | None, kernel, specs: dict) -> Compiled | None:
    """A disk cache entry, if it is a compiled form of `kernel` for arguments `specs` and what its trace read is
    unchanged; else None, and the kernel is compiled again and the entry overwritten."""
    if entry is None:
        return None
    try:
        artifact = CompiledArtifact.from_entry(entry)
    except (KeyError, ValueError, TypeError):  # an entry of another layout
        return None
    if artifact.name != kernel.__name__ or not artifact.written | set(artifact.loop_steps) <= set(specs) \
            or min(artifact.num_subgroups, artifact.lanes) < 1:  # intact, but another kernel's
        return None
    reads = resolve(kernel, artifact.dependencies)
    return None if reads is None else Compiled(artifact, None, reads)


def artifact_of(name: str, func: FuncOp, backend: dict, reads: Reads) -> CompiledArtifact:
    """The artifact of a traced `func` and the backend's result (compile_spirv's dict; empty for numpy)."""
    launch = {k: backend[k] for k in LAUNCH_FIELDS if k in backend}
    asm = {"xetile": print_func(func)} | {k: v for k, v in backend.items() if k not in LAUNCH_FIELDS}
    return CompiledArtifact(name, asm, frozenset(a.name_hint for a in written_arrays(func)), **launch,
                            dependencies=reads.dependencies, loop_steps=loop_step_arguments(func))


def loop_step_arguments(func: FuncOp) -> tuple[str, ...]:
    """The scalar arguments some scf.for steps by, as they are (through index casts): a step of 0 would run the
    loop zero times (ForOp), so a launch refuses it instead (never hang, never silently skip)."""
    names = []
    for op in walk(func.body):
        if isinstance(op, ForOp):
            step = op.operands[2]
            while isinstance(step.owner, IndexCastOp):
                step = step.owner.operands[0]
            if step in func.args and step.name_hint not in names:
                names.append(step.name_hint)
    return tuple(names)


def trace(kernel, specs: dict, consts: dict, layout) -> tuple[FuncOp, Reads]:
    """The kernel's XeTile IR for this specialization, verified, and what the trace read."""
    function = kernel.function
    func = FuncOp(kernel.__name__, [s.ir_type() for s in specs.values()], list(specs), consts,
                  loc=function.loc(function.node))
    builder = Builder(func.body)
    tracer = Tracer(function, Semantic(builder, layout), dict(zip(specs, func.args)) | consts)
    with timing.stage(kernel.__name__, "trace"):
        if tracer.trace() is not None:
            raise CompilationError(f"kernel {kernel.__name__} must not return a value", builder.loc)
        builder.create(ReturnOp)
        verify(func)
    if dumping_ir():
        print(f"// -----// XeTile IR: {kernel.__name__} //----- //\n{print_func(func)}", file=sys.stderr)
    return func, tracer.reads
