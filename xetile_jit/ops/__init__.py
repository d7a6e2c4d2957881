"""Library ops built on the DSL (issue 9): `matmul`, the autotuned GEMM template."""
from .matmul import matmul

__all__ = ["matmul"]
