"""The project's own SPIR-V backend: `emit_spirv` turns an llvmlite module into an OpenCL-kernel SPIR-V binary."""
from .emitter import emit_spirv

__all__ = ["emit_spirv"]
