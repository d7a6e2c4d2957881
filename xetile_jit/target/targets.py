"""Targets as data (docs/DESIGN.md §3): the one object that says what a target has. Made once per compile
(`get_target`) and passed by reference; every stage reads it and no other module keeps a per-target table.

A `Target` holds the subgroup size, the DPAS shapes per operand dtype, the 2D block-IO limits (`BlockIO`), the
shared local memory and register file sizes, how Xe builtins are provided (`abi`, a builtin ABI object of
target/builtin_abi.py: "spirv", "legacy", "emulated" or "vector", which says what that module's docstring does), the
ocloc device and iga platform that check its code, and the driver options for kernels that use DPAS. The ABI decides
how large a block one load may give a lane: a SPIR-V vector has at most 16 components, private memory holds any
block (a 32x16 f16 A load is 32 elements a lane), so where the ABI has `private_blocks` ("spirv" and the CPU ones)
blocks are loaded up to the message limits where only layout conversions use them.

DPAS shapes are (M, N, K) per operand dtype: M the repeat count (rows of A and C per instruction), N the subgroup
size (columns of B and C), K from the builtin (docs/reference/xe_builtins.md §1). f32 x f32 tile_mma (the default
input_precision "ieee") is blocked like f16 and computed with exact f32 multiply-adds; with input_precision "tf32"
it runs on tf32 DPAS (key "tf32": M 8, N 16, K 8) on the sub-group 16 targets, the ones whose DPAS has tf32 (Xe-HPC,
Xe2, Xe3; cl_intel_subgroup_matrix_multiply_accumulate_tf32 is for sub-group 16 devices). Xe-HPG (DG2) has no tf32
DPAS: there tf32 is the f32 multiply-adds on tf32-truncated operands.
Block-IO limits are PVC's (target/block_io.py). Xe-HPC and Xe2 build kernels with DPAS in the large
register file mode (256 GRFs): a 32x64 f32 accumulator alone is 128 of them, and PVC's ISA of the tutorial GEMM has
501 scratch (spill) messages in 128.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from math import gcd

from ..errors import LaunchError
from .block_io import BlockIO
from .builtin_abi import EMULATED, GPU_ABIS, LEGACY, SPIRV, VECTOR, BuiltinAbi
from .cpu_features import CpuFeatures, host_cpu


def dpas_shapes(subgroup: int) -> dict[str, tuple[int, int, int]]:
    # f32 (multiply-adds: lane k holds A's column k, Target.lane_fields) takes K = the sub-group size
    shapes = {"f16": (8, subgroup, 16), "bf16": (8, subgroup, 16), "f32": (8, subgroup, subgroup),
              "i8": (8, subgroup, 32), "ui8": (8, subgroup, 32)}
    return {**shapes, "tf32": (8, subgroup, 8)} if subgroup == TF32_SUBGROUP else shapes


TF32_SUBGROUP = 16  # tf32 DPAS exists on sub-group 16 devices only (module docstring)


@dataclass(frozen=True)
class Target:
    name: str
    subgroup_size: int
    dpas: dict = field(hash=False)
    block_io: BlockIO | None = None  # None: no 2D block messages
    abi: BuiltinAbi = SPIRV  # how the Xe builtins are provided (target/builtin_abi.py)
    slm_bytes: int = 128 * 1024
    grf_count: int = 128
    large_grf_count: int = 256
    grf_bytes: int = 64
    max_workgroup_size: int = 1024  # work-items (PVC, Xe2, DG2); a launch checks its device's own (check_launch)
    dpas_build_options: str = ""  # driver options for kernels that use DPAS
    ocloc_device: str | None = None  # the offline compiler's device name (None: no ISA check)
    # a tile_mma operand tile only loaded and fed to tile_mma is read in the largest load messages (layout
    # completion); False: in DPAS blocks, for the `cpu` target, whose block loads are per-component loops the CPU
    # compiler keeps in registers for small blocks only (tutorial GEMM 1024 f16: 15-35% slower in 32x32 blocks)
    largest_loads: bool = True
    iga_platform: str | None = None
    # the general memory path, gathers, scatters and atomics (codegen/llvm/elements.py, scatter.py, atomics.py) as a
    # loop over a lane's components, not unrolled: the CPU targets, whose driver build time follows the straight-line
    # code; GPUs keep the components in registers
    element_loops: bool = False
    # an atomic's compare-exchange loop (the kinds and types without a hardware atomic) as one function of the
    # module out of line, called for each element: the CPU targets, whose driver built each inlined loop (a fuzz
    # case's 16 f16 atomic maxima 3.4 s, out of line 1.3 s); GPUs keep the loops inline
    out_of_line_atomics: bool = False
    # a lane's vectors computed as their components (codegen/llvm/core.py: a loop's carried vectors a phi a component, an
    # element-wise op an op a component): the CPU targets, whose compiler kept a vector value lane after lane in
    # memory and transposed it around its uses (the tutorial GEMM's 16 accumulators: 2824 permutes, a third of its
    # driver build; docs/performance.md "CPU notes"); GPUs keep vectors
    lane_scalars: bool = False
    # a lane reads its own components by a lane-dependent index from private memory, so a lane_gather can go in
    # rounds of one shuffle (codegen/llvm/lowering.py exchange_rounds): the CPU targets, where such a read is one
    # gather across the vectorized lanes and the driver's build time grew with the unrolled form's shuffles (a
    # column-major tile's regroup to rows: 64 a regroup, 8 rounds); GPUs pick among registers
    indexed_lane_reads: bool = False
    # a reduction across the whole sub-group of a value of several components (gpu.subgroup_reduce, i32 or f32: a
    # lane's rows of a tile) is not a butterfly of shuffles a component but a reduce-scatter and a broadcast a
    # component, the butterfly's pairs in its order: the value of the butterfly at the lane holding the result, bit
    # for bit (codegen/llvm/lowering.py scattered_reduction): the CPU targets, where those butterflies doubled the
    # driver build of a GEMM with row reductions (each shuffle a test and a blend a lane in the driver's masked copy
    # of the kernel). One component (a row a sub-group: softmax, layer norm) keeps its butterfly, which ran faster
    # there; GPUs keep it
    scattered_reductions: bool = False
    # a reduction of such a value over clusters of consecutive lanes is SPIR-V's GroupNonUniform arithmetic, which the
    # driver implements itself (lowering.py group_reduction): the `cpu` target; `xe-emulated` keeps the GPU's order of
    # a float sum, bit for bit
    group_reductions: bool = False
    # a kernel without anchors spreads its rows over its subgroups, one row over several only past this many bytes
    # of a value a subgroup (0: no such rule). The `cpu` target: there a row's partial sums meeting in shared local
    # memory cost more than a longer row a subgroup, up to the point where the driver's build time grows too long
    # (docs/performance.md "CPU notes"; 4096x4096 softmax f16 2.5 against 3.4 ms in 1 subgroup a row, not 2)
    whole_row_bytes: int = 0
    # a run of this many blocks of one row or more is lowered as one loop over them (codegen/cpu/pieces.py; 0: not a
    # CPU target): a row kernel's 8 blocks tested one by one, their border calls between them, ran at half the
    # hand-written kernel's speed (16x128 f32 layer norm and softmax: 0.5-0.7x, in a loop 0.9x)
    row_run_blocks: int = 0
    # such a kernel's value of several subgroups gives each one row where a row is a run of blocks of one row
    # (`one_row_a_subgroup`: row_run_blocks blocks of N columns, 128 on the `cpu` target); a subgroup's piece of two
    # such rows is blocks of two rows, which codegen/cpu/pieces.py lowers straight-line (a 16x128 f32 layer norm ran
    # at 0.5x the hand-written kernel so, 0.9x one row a subgroup; docs/performance.md "Softmax and layer norm on the
    # `cpu` target")
    row_subgroups: bool = False
    # the columns from which that rule holds where the CPU has 16 vector registers (AVX2): the `cpu` target, 64
    # (one_row_a_subgroup says why; rows of 32 columns one a subgroup took a min or max scan along them 8 s of driver
    # build with AVX2 code, 0.1 s at 64)
    few_registers_row_columns: int = 0
    # a value's default block is one row where the CPU's block loads and stores keep their loops over a lane's
    # components rolled (CpuFeatures.unrolls_blocks: 16-bit blocks with AVX2, every width on an older or unknown
    # ISA), a block of one row being one component a lane: in a rolled loop a lane's rows of a block went through
    # private memory element by element (16x32 f16 layer norm with AVX2 code 0.24x the hand-written kernel, 1.04-1.07x
    # in blocks of one row; docs/performance.md "Softmax and layer norm on the `cpu` target"). The `cpu` target
    one_row_rolled_blocks: bool = False
    # a column-major tile_mma operand is read by gathers (a lane takes a column's elements from memory rows apart):
    # the CPU targets, where xetile.ops.matmul copies such an operand to row-major first (f32 2048 with a
    # column-major B: 105 GFLOP/s against 150 row-major; GPUs read it by d32 transposed messages)
    column_major_gathers: bool = False
    # DPAS takes FP8 (e4m3fn, e5m2) A and B: on none of these targets (PVC, Xe2, Xe3 DPAS take f16, bf16, tf32 and
    # 8-bit integers), so FP8 tile_mma operands are up-converted to f16 in registers (transforms/xetile/float8_mma.py)
    fp8_dpas: bool = False
    # the target a kernel is compiled for instead where the OpenCL CPU compiler did not vectorize it for this one
    # (runtime/opencl/build_log.py: it then runs each work-item alone, and lanes that exchange values read the others'
    # before they are there; a fuzzed row kernel crashed so): the `cpu` target's fast paths after a tile's blocks
    # left of its array left that kernel unvectorized, `xe-emulated`'s blocks each through its builtin did not.
    # None: a launch refuses such a kernel (jit/kernel.py Kernel.vectorized_fallback)
    unvectorized_fallback: str | None = None
    # the CPU whose vector units run the code (the CPU targets: the host's, whose OpenCL runtime builds the SPIR-V
    # for itself); its ISA decides the `cpu` lowering's register blocking and the pieces xetile.ops.matmul tries,
    # and its key is part of the compile cache's keys. None on GPU targets.
    cpu: CpuFeatures | None = None

    def workgroup_rule(self, num_subgroups: int) -> str | None:
        """Why a workgroup of `num_subgroups` subgroups cannot run here (None: it can)."""
        work_items = num_subgroups * self.subgroup_size
        if work_items > self.max_workgroup_size:
            return (f"{num_subgroups} subgroups of {self.subgroup_size} lanes are {work_items} work-items; a "
                    f"workgroup on target {self.name} has at most {self.max_workgroup_size}")
        return None

    # ---- how many subgroups a kernel without an anchor layout gets (transforms/xetile/layout_propagation.py)
    @property
    def max_subgroups(self) -> int:
        return self.max_workgroup_size // self.subgroup_size

    @property
    def subgroup_value_bytes(self) -> int:
        """The modest per-subgroup footprint of one value the default subgroup count aims at: an eighth of the small
        register file (16 GRFs, 1 KiB, on every target here), so that the values live at once stay in registers and
        each subgroup's code is short: the driver's build time grows with it (a 16x1024 f32 softmax built in 0.8 s
        on 64 subgroups of 1 KiB, 3.8 s on 16 of 4 KiB; docs/performance.md has current numbers)."""
        return self.grf_count * self.grf_bytes // 8

    @property
    def accumulator_bytes(self) -> int:
        """The per-subgroup piece of a tile_mma result the default subgroup count aims at: half the small register
        file, room for the A and B blocks beside it. DPAS ops per subgroup set the driver's build time on the CPU
        targets (a 64x64x64 f16 GEMM on `xe-emulated`: 102 s on one subgroup, 16-20 s on 4, 27-29 s on 8)."""
        return self.grf_count * self.grf_bytes // 2

    def default_subgroups(self, value_bytes: int, each: int | None = None) -> int:
        """The smallest power of two of subgroups that brings a value of `value_bytes` to `each` bytes (default
        subgroup_value_bytes) each, at most max_subgroups."""
        wanted = -(-value_bytes // (each or self.subgroup_value_bytes))
        return min(1 << max(0, wanted - 1).bit_length(), self.max_subgroups)

    def one_row_a_subgroup(self, columns: int) -> bool:
        """Whether a kernel without anchors gives each subgroup one row of its value `columns` wide, where that
        takes several subgroups (`row_subgroups`). With 16 vector registers (AVX2) from fewer columns
        (`few_registers_row_columns`): there blocks of several rows ran at 0.16-0.30x the hand-written kernel at 32
        and 64 columns, one row a subgroup 0.8-1.0x, measured while the block builtins' component loops were rolled
        there for every width (16-bit ones still are, and 16-bit values now take blocks of one row:
        `one_row_rolled_blocks`): a lane's rows of a block went through private memory element by element (with
        AVX-512 the reverse: 0.8-1.0x against 0.6-0.7x; docs/performance.md "Softmax and layer norm on the `cpu`
        target")."""
        if not self.row_subgroups:
            return False
        if self.cpu is not None and self.cpu.vector_registers == 16:
            return columns >= self.few_registers_row_columns
        return columns >= self.row_run_blocks * self.subgroup_size

    def dpas_kind(self, dtype, precision: str = "ieee") -> str:
        """The DPAS table key of a tile_mma: "tf32" for input_precision "tf32" where the target has tf32 DPAS, else
        the operand dtype's (f32 then means multiply-adds)."""
        return "tf32" if precision == "tf32" and "tf32" in self.dpas else dtype.mlir

    def dpas_shape(self, dtype, precision: str = "ieee") -> tuple[int, int, int]:
        return self.dpas[self.dpas_kind(dtype, precision)]

    @property
    def block_prefetch(self) -> bool:
        """Whether a 2D block prefetch reaches a cache: a GPU target with 2D block IO (on a CPU it does nothing)."""
        return self.block_io is not None and not self.abi.runs_on_cpu

    # ---- instruction blocks and lanes: the rules layout completion applies (XeGPU RFC blocking and
    # ---- "subgroup to work item distribution" rules); blocking and lane distribution read what it wrote
    @property
    def repeat_count(self) -> int:
        """M, the rows of a DPAS C block: the height of a default instruction block."""
        return self.dpas["f32"][0]

    def padded_shape(self, shape) -> tuple[int, int]:
        """The extent a value's blocks cover: columns to a multiple of N (narrow ones to a power of two), rows to
        a multiple of the block height. Blocks reach past a shape they do not divide, as a 2D block message
        reaches past its surface."""
        rows, cols = shape
        n = self.subgroup_size
        cols = padded(cols, n)
        return padded(rows, self.repeat_count if cols % n == 0 else n // cols), cols

    def value_block(self, shape, bits: Iterable[int] = ()) -> tuple[int, int]:
        """The default instruction block of a value: [M, N], one column per lane, as a DPAS C operand; fewer rows
        for shorter values, one row for a value loaded or stored as elements of one of `bits` wide whose block
        loops the CPU keeps rolled (`one_row_rolled_blocks`), and for narrow ones a power-of-two block of N
        elements, so that a lane holds 1 to N of them (SPIR-V vectors have 2, 4, 8 or 16 components)."""
        rows, cols = self.padded_shape(shape)
        n = self.subgroup_size
        if cols % n == 0:
            rolled = self.one_row_rolled_blocks and not all(self.cpu.unrolls_blocks(b) for b in bits)
            return (1 if rolled else gcd(rows, self.repeat_count)), n
        return gcd(rows, n // cols), cols

    def dpas_blocks(self, dtype, precision: str = "ieee") -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
        """The instruction blocks of DPAS A [M, K], B [K, N] and C [M, N] for operand `dtype` (tf32: A [8, 8],
        whose lane fields [2, 8] give lanes 0-7 the even rows and 8-15 the odd ones, as tf32 DPAS takes A)."""
        m, n, k = self.dpas_shape(dtype, precision)
        return (m, k), (k, n), (m, n)

    def lane_fields(self, block, packed_rows: int = 1) -> tuple[tuple[int, int], tuple[int, int]]:
        """(lane_layout, lane_data) of a block: [1, N] lanes with [packed_rows, C/N] each when N divides C (DPAS C,
        2D block messages; `packed_rows` > 1, DPAS B's VNNI form: a lane's consecutive rows in one 32-bit word, as
        a VNNI-transform load gives them); [N/C, C] lanes of one element when C divides N and N/C divides R;
        otherwise [1, 1] lanes of [1, 1]: every lane holds the whole block (the RFC's broadcast of a value smaller
        than the lanes)."""
        rows, cols = block
        n = self.subgroup_size
        if cols % n == 0:
            return (1, n), (packed_rows if rows % packed_rows == 0 else 1, cols // n)
        if n % cols == 0 and rows % (n // cols) == 0:
            return (n // cols, cols), (1, 1)
        return (1, 1), (1, 1)

    def packed_rows(self, dtype, mma_operand: int | None, rows: int) -> int:
        """Rows a lane packs into one 32-bit word in a block of `rows` rows (VNNI, as a VNNI-transform load gives
        them and DPAS takes B): 2 for a 16-bit DPAS B operand; 4 for an 8-bit one in blocks of whole DPAS K steps
        (32 rows: the 8-bit transform load the 2D block IO extension has; a smaller block is a value other ops
        use, which would have to be unpacked again: B is then packed by blocking); else 1."""
        if mma_operand != 1 or dtype.bits not in (8, 16):
            return 1
        if dtype.bits == 8 and rows % self.dpas_shape(dtype)[2]:
            return 1
        return 32 // dtype.bits

    def lane_components(self, block) -> int:
        lane_layout, _ = self.lane_fields(block)
        return block[0] * block[1] // (lane_layout[0] * lane_layout[1])

    def inst_rule(self, kinds, inst, dtype) -> str | None:
        """Why `inst` cannot be the instruction block of a value or tile of `dtype` used by ops of `kinds`
        ("load", "store", "prefetch", "value": a vector some op other than a layout conversion uses): the 2D block
        limits first, then the lanes; None when it can."""
        if self.block_io is not None and not dtype.is_bool:
            if "store" in kinds and (rule := self.block_io.store_rule(dtype.bits, *inst)):
                return rule
            if {"load", "prefetch"} & set(kinds) and (rule := self.block_io.load_rule(dtype.bits, *inst)):
                return rule
        components = self.lane_components(inst)
        if components == 1 or components in VECTOR_SIZES:
            return None
        if components > MAX_VECTOR_COMPONENTS and self.abi.private_blocks and "value" not in kinds:
            return None  # a load's or store's data stays in private memory
        held = f"a lane holds {components} elements of a {inst[0]}x{inst[1]} block on sub-group {self.subgroup_size}"
        if components < MAX_VECTOR_COMPONENTS:
            return f"{held}; SPIR-V vectors have 2, 3, 4, 8 or 16 components"
        where = ("used by other ops than layout conversions" if self.abi.private_blocks else
                 f"with the {self.abi.name} builtin ABI")
        return f"{held}; SPIR-V vectors have at most {MAX_VECTOR_COMPONENTS} ({where})"


VECTOR_SIZES = (2, 3, 4, 8, 16)  # the component counts of SPIR-V (Kernel) vectors; a lane value is one, or a scalar
MAX_VECTOR_COMPONENTS = VECTOR_SIZES[-1]


def padded(n: int, unit: int) -> int:
    """`n` rounded up to a multiple of `unit`, or, below it, to a power of two (which divides the unit)."""
    if n >= unit:
        return -(-n // unit) * unit
    return 1 << (n - 1).bit_length()


LARGE_GRF = "-ze-opt-large-register-file"
TARGETS = {target.name: target for target in (
    Target("xe-hpc", 16, dpas_shapes(16), BlockIO(), dpas_build_options=LARGE_GRF, ocloc_device="pvc",
           iga_platform="12p72"),
    Target("xe2", 16, dpas_shapes(16), BlockIO(), dpas_build_options=LARGE_GRF, ocloc_device="bmg"),
    Target("xe3", 16, dpas_shapes(16), BlockIO(), dpas_build_options=LARGE_GRF, ocloc_device="ptl"),
    Target("xe-hpg", 8, dpas_shapes(8), None, abi=LEGACY, slm_bytes=64 * 1024, ocloc_device="acm-g10",
           iga_platform="12p71"),
    # OpenCL CPU: the fast path (the default on a CPU device) and the bit-exact Xe emulation
    Target("cpu", 16, dpas_shapes(16), BlockIO(start_bytes=1, any_layout=True), abi=VECTOR,
           max_workgroup_size=8192, element_loops=True, out_of_line_atomics=True, lane_scalars=True,
           indexed_lane_reads=True, scattered_reductions=True, group_reductions=True, largest_loads=False,
           whole_row_bytes=16 * 1024, row_run_blocks=8, row_subgroups=True, one_row_rolled_blocks=True,
           few_registers_row_columns=64, unvectorized_fallback="xe-emulated",
           column_major_gathers=True, cpu=host_cpu()),
    Target("xe-emulated", 16, dpas_shapes(16), BlockIO(), abi=EMULATED, max_workgroup_size=8192,
           element_loops=True, out_of_line_atomics=True, lane_scalars=True, indexed_lane_reads=True,
           scattered_reductions=True, row_run_blocks=8,
           column_major_gathers=True, cpu=host_cpu()),
)}
CPU_TARGETS = tuple(name for name, target in TARGETS.items() if target.abi.runs_on_cpu)


def xe_abi() -> str:
    """The builtin ABI XETILE_XE_ABI asks for GPU targets ("" for each target's own)."""
    abi = os.environ.get("XETILE_XE_ABI", "")
    if abi and abi not in GPU_ABIS:
        raise LaunchError(f"XETILE_XE_ABI={abi!r}: the builtin ABIs are {', '.join(GPU_ABIS)}")
    return abi


def get_target(name: str, abi: str = "") -> Target:
    """The target named `name`, with the builtin ABI named `abi` when given (GPU targets only: a CPU target keeps
    its own, as does one without 2D block IO asked for an ABI that needs it); a LaunchError listing the names
    otherwise ("numpy", the interpreter, is a device with no target)."""
    try:
        target = TARGETS[name]
    except KeyError:
        raise LaunchError(f"unknown target {name!r}; targets: numpy, {', '.join(TARGETS)}") from None
    if not abi or target.abi.runs_on_cpu:
        return target
    chosen = GPU_ABIS[abi]
    if chosen.needs_block_io and target.block_io is None:
        return target
    return replace(target, abi=chosen)
