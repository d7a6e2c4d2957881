"""Targets as data (DESIGN 3): subgroup size, DPAS shapes, 2D block-IO limits. The passes read them.

DPAS shapes are (M, N, K) per operand dtype: M the repeat count (rows of A and C per instruction),
N the subgroup size (columns of B and C), K from the builtin (reference note §1). f32 x f32 is not run
on tf32 DPAS, whose rounding would not give f32 results: it is blocked like f16 and computed with f32
multiply-adds. Block-IO limits are
PVC's (reference note §6): a load block is at most 64 bytes wide (width x element size x array length)
and 32 rows high, a store block 64 bytes wide and 8 rows high. Xe-HPC and Xe2 build kernels with DPAS in
the large register file mode (256 GRFs): a 32x64 f32 accumulator alone is 128 of them, and PVC's ISA of the
tutorial GEMM has 501 scratch (spill) messages in 128.
"""
from __future__ import annotations

from dataclasses import dataclass, field


def dpas_shapes(subgroup: int) -> dict[str, tuple[int, int, int]]:
    return {"f16": (8, subgroup, 16), "bf16": (8, subgroup, 16), "f32": (8, subgroup, 16),
            "i8": (8, subgroup, 32), "ui8": (8, subgroup, 32)}


@dataclass(frozen=True)
class Target:
    name: str
    subgroup_size: int
    dpas: dict = field(hash=False)
    block_io: bool
    max_load_width_bytes: int = 64
    max_load_rows: int = 32
    max_store_rows: int = 8
    slm_bytes: int = 128 * 1024
    grf_count: int = 128
    large_grf_count: int = 256
    grf_bytes: int = 64
    dpas_build_options: str = ""  # driver options for kernels that use DPAS

    def dpas_shape(self, dtype) -> tuple[int, int, int]:
        return self.dpas[dtype.mlir]


LARGE_GRF = "-ze-opt-large-register-file"
TARGETS = {
    "xe-hpc": Target("xe-hpc", 16, dpas_shapes(16), block_io=True, dpas_build_options=LARGE_GRF),
    "xe2": Target("xe2", 16, dpas_shapes(16), block_io=True, dpas_build_options=LARGE_GRF),
    "xe-hpg": Target("xe-hpg", 8, dpas_shapes(8), block_io=False, slm_bytes=64 * 1024),
    "cpu": Target("cpu", 16, dpas_shapes(16), block_io=True),
}
