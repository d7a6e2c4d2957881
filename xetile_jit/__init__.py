"""xetile_jit: a Triton-like Python DSL for XeTile kernels (workgroup-level tiles) on Intel GPUs."""
from .runtime.ocl_icd import expose_cpu_runtime

expose_cpu_runtime()  # before anything imports dpctl (docs/DESIGN.md §4)

from .errors import BlockIOFallbackWarning, CompilationError, LaunchError
from .frontend.dsl import (abs, atomic_rmw_tile, cast, cdiv, constexpr, exp, exp2, full, init_tile, load_tile, log,
                           maximum, minimum, num_programs, prefetch_tile, program_id, rsqrt, sqrt, static_range,
                           store_tile, tanh, tile_broadcast, tile_mma, tile_reduce, tile_transpose, update_tile_offset,
                           where, zeros)
from .frontend.jit import CompiledKernel, Kernel, kernel
from .ir.attrs import Layout
from .runtime.device import default_device
from .ir.types import bfloat16, bool_, float16, float32, int8, int16, int32, int64, uint8

bool = bool_  # the public spelling of the dtype, as in the dtype list

from .version import __version__

__all__ = [
    "__version__", "BlockIOFallbackWarning",
    "CompilationError", "LaunchError", "default_device", "CompiledKernel", "Kernel", "kernel", "constexpr", "Layout",
    "program_id", "num_programs", "cdiv", "static_range", "init_tile", "load_tile", "store_tile",
    "update_tile_offset", "prefetch_tile", "tile_mma", "tile_transpose", "tile_reduce", "tile_broadcast",
    "atomic_rmw_tile", "zeros", "full", "where", "maximum", "minimum", "exp", "exp2", "log", "sqrt", "rsqrt",
    "abs", "tanh", "cast", "float16", "bfloat16", "float32", "int8", "uint8", "int16", "int32", "int64", "bool_", "bool",
]
