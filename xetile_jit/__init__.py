"""xetile_jit: a Triton-like Python DSL for XeTile kernels (workgroup-level tiles) on Intel GPUs."""
import importlib

from .runtime.opencl.environment import enable_gpu_driver_cache, expose_cpu_runtime

expose_cpu_runtime()  # before anything imports dpctl (docs/DESIGN.md §4)
enable_gpu_driver_cache()  # likewise: the GPU driver reads it when it initializes

from .errors import (BlockIOFallbackWarning, CompilationError, DeviceAssertionError, InterpretCheckError, LaunchError,
                     UnvectorizedKernelWarning)
from .jit.autotune import Config, autotune
from .language.dsl import (PropagateNan, abs, alloc_slm, arange, associative_scan, atomic_rmw_tile, barrier,
                           bitcast, broadcast_to, cast, cdiv, ceil, constexpr, convert_layout, cos, cumsum,
                           device_assert, device_print, erf, exp, exp2, expand_dims, fence, floor, fma, full, init_tile,
                           iota, load_tile, log, log2, maximum, minimum, named_barrier, nbarrier_arrive, nbarrier_wait,
                           num_programs, prefetch_tile, program_id, reduce, reshape, rsqrt, sigmoid, sin, sqrt,
                           static_assert, static_range, store_tile, subgroup_id, tanh, tile_broadcast, tile_mma,
                           tile_reduce, tile_scan, tile_transpose, update_tile_offset, where, zeros)
from .language.scatter import load_gather, store_scatter
from .language.pointers import (atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg,
                                atomic_xor, load, store)
from .language.shapes import cat, flip, interleave, join, sort, split, topk
from .language.triton_spellings import triton_spelling
from .jit.kernel import CompiledKernel, Kernel, heuristics, kernel, synchronize
from .compiler.layout_space import layouts
from .language.random import rand, randint, randn
from .ir.attrs import Layout
from .runtime.device import default_device, default_target, empty_shared
from .ir.types import bfloat16, bool_, float8_e4m3fn, float8_e5m2, float16, float32, int8, int16, int32, int64, uint8, uint16, uint32, uint64

bool = bool_  # the public spelling of the dtype, as numpy's `bool`

from . import ops, testing

__version__ = "0.1.0"  # pyproject.toml's


def __getattr__(name: str):
    """`xetile.torch` (xetile_jit/torch.py), imported on first use: torch takes seconds to import, and is optional
    (pip install "xetile_jit[torch]")."""
    if name != "torch":
        raise AttributeError(f"module 'xetile_jit' has no attribute {name!r}{triton_spelling(name)}")
    try:
        import torch  # noqa: F401 - whether it is installed
    except ImportError:
        raise ImportError('xetile.torch needs torch: pip install "xetile_jit[torch]"') from None
    return importlib.import_module(".torch", __name__)  # not `from . import torch`: it would ask this function

__all__ = [
    "__version__", "BlockIOFallbackWarning", "CompilationError", "DeviceAssertionError", "InterpretCheckError",
    "LaunchError", "UnvectorizedKernelWarning",
    "default_device", "default_target", "empty_shared", "synchronize", "CompiledKernel", "Kernel", "kernel",
    "heuristics", "constexpr", "Layout",
    "Config", "autotune", "layouts",
    "ops", "testing",
    "program_id", "num_programs", "cdiv", "static_range", "init_tile", "load_tile", "store_tile",
    "update_tile_offset", "prefetch_tile", "load_gather", "store_scatter", "tile_mma", "tile_transpose", "tile_reduce",
    "tile_broadcast", "atomic_rmw_tile", "atomic_cas", "convert_layout", "subgroup_id", "alloc_slm", "barrier", "fence", "named_barrier", "nbarrier_arrive",
    "nbarrier_wait", "zeros", "full", "where", "maximum", "minimum", "exp", "exp2", "log", "sqrt", "rsqrt",
    "abs", "tanh", "sin", "cos", "erf", "sigmoid", "floor", "ceil", "log2", "fma", "static_assert", "device_assert",
    "device_print", "rand", "randn", "randint", "tile_scan", "cumsum", "iota", "cast", "float16", "bfloat16", "float32", "float8_e4m3fn", "float8_e5m2",
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool_", "bool", "arange", "reshape",
    "expand_dims", "broadcast_to", "bitcast", "PropagateNan", "load", "store", "atomic_add", "atomic_max", "atomic_min",
    "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "reduce", "associative_scan", "cat", "flip", "join", "split",
    "interleave", "sort", "topk",
]
