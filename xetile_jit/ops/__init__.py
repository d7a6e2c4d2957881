"""Library ops built on the DSL: `matmul`, the autotuned GEMM template."""
from .matmul import matmul

__all__ = ["matmul"]
