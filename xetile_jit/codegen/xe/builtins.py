"""Xe builtins the LLVM lowering calls: DPAS and 2D block load / store / prefetch, provided as the Target's builtin ABI
(`Target.abi`, target/builtin_abi.py) says.

Every target calls the same function names with the same LLVM signatures and per-lane layouts
(docs/reference/xe_builtins.md §1.3, §2 and §5); only the definition differs (docs/DESIGN.md §3):

* ABI "spirv" (Xe-HPC and newer, current drivers): every 2D block message is a small function around one
  instruction of SPV_INTEL_2d_block_io (`OpSubgroup2DBlock{Load,LoadTransform,LoadTranspose,Store,Prefetch}INTEL`,
  §4), which reads into and writes from private memory; any shape the target's BlockIO allows. DPAS is a small
  function around `OpSubgroupMatrixMultiplyAccumulateINTEL` (SPV_INTEL_subgroup_matrix_multiply_accumulate) with
  the operand mask of its dtypes; same per-lane layouts.
* ABI "legacy" (drivers before the extensions): DPAS and the 2D block reads IGC 2022 defines are Imports of the
  Intel names (mangled `intel_sub_group_*_matrix_mad_k*`, §1.2; unmangled `intel_subgroup_block_read_*`, §2). The
  other block loads, the stores and the prefetches are small functions around one inline-vISA `lsc_*_block2d`
  message (§5), which IGC inlines. A load gives a lane at most one SPIR-V vector (16 components).
* "xe-hpg" (DG2): DPAS Imports with the sub-group 8 signatures (A carries 32 bits per lane); no 2D block IO.
* "xe-emulated" (ABI "emulated"): the same functions defined in the module, emulating the hardware bit-exactly
  with what the SPIR-V emitter supports (`__spirv_SubgroupShuffleINTEL`, the lane id, global loads and stores,
  arithmetic, loops).

API: a key names what the lowering needs (`Dpas(a, b, m)`, `BlockLoad(bits, rows, cols, blocks, vnni,
transpose)`, `BlockStore(bits, rows, cols)`, `BlockPrefetch(bits, rows, cols, blocks)`); the tables `DPAS_TABLE`
(per sub-group size) and `BLOCK2D_TABLE` map the supported keys to their descriptions (`DpasBuiltin`,
`Block2DBuiltin`: name, kind, shape, layout, LLVM signature, vISA text); `describe(target, key)` gives the row
(a key must also fit the Target's `BlockIO` limits: `block_rule` names the one it breaks) and
`builtin(module, target, key, definitions)` the
function, once per module: defined by the target's ABI's `Definitions` (GPU ABIs: codegen/xe/gpu_definitions.py;
"emulated": codegen/xe/emulation.py; "vector": codegen/cpu/builtins.py; codegen/backends.py chooses them by the
class of `target.abi`) or, for a kind they leave out, declared. tf32 DPAS (`Dpas("tf32")`, K 8,
sub-group 16, `TF32_DPAS_TABLE`) is there on the "spirv" ABI (operand flags MatrixATF32INTEL | MatrixBTF32INTEL)
and the CPU ones; the legacy ABI raises NotImplementedError: IGC 2022 has only an early tf32 builtin
(`_Z43intel_sub_group_tf32_tf32_matrix_mad_k8_f32Dv8_sDv8_iDv8_f`, A as short8) whose A layout is undocumented.

Call-site ABI (lane = sub-group local id; vectors of one component are scalars):

* DPAS: `C dpas(A a, <8 x i32> b, C c)` computes D = A*B + C for M x N x K (N = sub-group size, M = components
  of `c`). Lane n holds column n of B (VNNI-packed in 32-bit words) and of C/D (component r = row r); A's K
  columns are spread over the lanes (§1.3). tf32: `<8 x float> dpas(<M/2 x float> a, <8 x float> b, <8 x float>
  c)` (the 2025 OpenCL signature): B component k = B[k][n]; A component j holds row 2j on lanes 0-7 and row 2j + 1
  on lanes 8-15, column lane % 8.
* block load: `void load(i8 addrspace(1)* base, i32 width, i32 height, i32 pitch, <2 x i32> coord, [n x T]* dst)`
  writes a lane's n components to private memory (as the 2025 extension does; n may exceed a vector's 16); width
  and pitch in bytes, height in rows, coord = (x in elements, y in rows). Plain layout: component `v * rows + r` holds
  row y + r of block v and lane i its columns `x + v * cols + i * p .. + p - 1` (p = cols / sub-group size,
  lower column in the lower bits); a block narrower than the sub-group (g = sub-group size / cols rows a
  component): component `v * rows / g + j` holds on lane i row y + j * g + i / cols, column x + v * cols + i %
  cols; VNNI: component `v * rows / p + k` holds rows `y + k * p .. + p - 1` (p = 32 / bits) of column
  x + v * cols + i; transpose (rows a multiple of 16, g = rows / 16): component c * g + h holds column x + c of
  row y + 16 * h + i (a 32-row block gives lane i rows i and i + 16, alternating column by column, as the
  registers hold the transposed block: row c of 32 dwords in two registers). Elements outside width x height
  read 0.
* block store: `void store(base, width, height, pitch, coord, T value)` with the plain layout; elements outside
  width x height are dropped. Prefetch: `void prefetch(base, width, height, pitch, coord)`; a no-op on a CPU.
* "cpu" (ABI "vector"): defined in the module for the CPU's vector units (codegen/cpu/builtins.py), same results. The
  "xe-emulated" block messages are codegen/xe/emulation.py's; the GPU ABIs' definitions codegen/xe/gpu_definitions.py's.
* T is an integer (vector, for stores; bitcast f16 / bf16 / f32 data). As on the hardware, the surface operands must be
  sub-group uniform and the calls made by the whole sub-group (the emulation shuffles between lanes).

DPAS on a CPU: codegen/xe/dpas_emulation.py (its numerics, tf32 truncation included).
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Callable, Union

from llvmlite import ir

from ...ir.cache_hints import CacheHints, locality_hints
from ...target.targets import Target
from ..llvm.core import F32, I8, I32, VOID
from .llvm_helpers import vector

GLOBAL_BYTES = ir.PointerType(I8, 1)
COORD = ir.VectorType(I32, 2)
SURFACE_ARGS = [GLOBAL_BYTES, I32, I32, I32, COORD]  # base, width bytes, height rows, pitch bytes, (x, y)


# --- keys: what the lowering asks for -----------------------------------------------------------------------
@dataclass(frozen=True)
class Dpas:
    """D = A*B + C with M = `m` rows; `a`, `b` are IR dtype names: "f16", "bf16", "tf32" (f32 accumulator), "i8",
    "ui8" (i32 accumulator). `b` defaults to `a`."""
    a: str
    b: str = ""
    m: int = 8

    def __post_init__(self):
        object.__setattr__(self, "b", self.b or self.a)


@dataclass(frozen=True)
class BlockLoad:
    """A 2D block read of `blocks` side-by-side blocks of rows x cols elements of `bits` bits."""
    bits: int
    rows: int
    cols: int
    blocks: int = 1
    vnni: bool = False
    transpose: bool = False


@dataclass(frozen=True)
class BlockStore:
    """A 2D block write of rows x cols elements of `bits` bits (plain layout)."""
    bits: int
    rows: int
    cols: int


@dataclass(frozen=True)
class BlockPrefetch:
    """A 2D block prefetch into the caches of the block a BlockLoad of this shape reads (the hints: `builtin`)."""
    bits: int
    rows: int
    cols: int
    blocks: int = 1


Key = Union[Dpas, BlockLoad, BlockStore, BlockPrefetch]


# --- descriptions: the table rows ---------------------------------------------------------------------------
BLOCK_IO_SUBGROUP = 16  # 2D block messages' layouts are a sub-group of 16's (docs/reference/xe_builtins.md §6)
_FLOAT_DTYPES = ("f16", "bf16", "tf32")
_DTYPE_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "i8": 8, "ui8": 8}
_INTEL_DTYPE = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "i8": "i8", "ui8": "u8"}  # as in the builtin names
# Itanium codes of the OpenCL scalar types in the DPAS names: (kind, bits) -> letter (s signed, u unsigned, f float)
_MANGLED_SCALAR = {("s", 16): "s", ("u", 16): "t", ("s", 32): "i", ("u", 32): "j", ("f", 32): "f"}


def _mangle(function: str, params: list[str]) -> str:
    """Itanium name of `function(params)`; a repeated vector type is a substitution (S_, S0_, S1_, ...)."""
    seen: list[str] = []
    parts = []
    for param in params:
        if param in seen:
            index = seen.index(param)
            parts.append("S_" if index == 0 else f"S{index - 1}_")
            continue
        parts.append(param)
        if param.startswith("Dv"):
            seen.append(param)
    return f"_Z{len(function)}{function}{''.join(parts)}"


def _mangled_type(kind: str, bits: int, count: int) -> str:
    letter = _MANGLED_SCALAR[kind, bits]
    return letter if count == 1 else f"Dv{count}_{letter}"


@dataclass(frozen=True)
class DpasBuiltin:
    """One DPAS builtin (§1.1, §1.2): operand dtypes, M and the sub-group size fix its name and signature."""
    a: str
    b: str
    m: int
    subgroup: int
    kind = "dpas"

    @property
    def bits(self) -> int:
        return _DTYPE_BITS[self.a]

    @property
    def is_float(self) -> bool:
        return self.a in _FLOAT_DTYPES

    @property
    def tf32(self) -> bool:
        return self.a == "tf32"

    @property
    def a_lane_bits(self) -> int:
        """Bits of A per lane and row: a short on sub-group 16, an int on sub-group 8; tf32 a float (of half the
        rows: a lane holds every other row)."""
        return 32 if self.tf32 else 256 // self.subgroup

    @property
    def a_components(self) -> int:
        """Components of a lane's A: M, or ceil(M / 2) for tf32 (§1.3)."""
        return -(-self.m // 2) if self.tf32 else self.m

    @property
    def per_lane(self) -> int:
        """Consecutive K columns of A in one lane."""
        return 1 if self.tf32 else self.a_lane_bits // self.bits

    @property
    def k(self) -> int:
        """tf32: half a sub-group of columns (8); otherwise a lane's columns on every lane."""
        return self.subgroup // 2 if self.tf32 else self.subgroup * self.per_lane

    @property
    def name(self) -> str:
        def sign(dtype):
            return "u" if dtype == "ui8" else "s"

        acc_kind = "f" if self.is_float else "s"
        a_kind, b_kind = ("f", "f") if self.tf32 else (sign(self.a), sign(self.b))
        return _mangle(f"intel_sub_group_{_INTEL_DTYPE[self.a]}_{_INTEL_DTYPE[self.b]}_matrix_mad_k{self.k}",
                       [_mangled_type(a_kind, self.a_lane_bits, self.a_components), _mangled_type(b_kind, 32, 8),
                        _mangled_type(acc_kind, 32, self.m)])

    @property
    def operands_mask(self) -> int:
        """SPV_INTEL_subgroup_matrix_multiply_accumulate's Matrix Multiply Accumulate Operands of the dtypes."""
        if self.is_float:  # A and B packed f16 / bf16, or tf32 (MatrixATF32INTEL | MatrixBTF32INTEL)
            return {"f16": 0x400 | 0x800, "bf16": 0x1000 | 0x2000, "tf32": 0x100 | 0x200}[self.a]
        signed = (0x1 if self.a == "i8" else 0) | (0x2 if self.b == "i8" else 0)
        return 0x10 | 0x20 | signed  # A and B packed int8

    @property
    def signature(self) -> ir.FunctionType:
        acc = vector(F32 if self.is_float else I32, self.m)
        a, b = (F32, F32) if self.tf32 else (ir.IntType(self.a_lane_bits), I32)
        return ir.FunctionType(acc, [vector(a, self.a_components), ir.VectorType(b, 8), acc])


@dataclass(frozen=True)
class Block2DBuiltin:
    """One 2D block message: its shape, the per-lane layout it gives (module docstring) and how GPU targets
    provide it: an Import of the IGC builtin `igc_name`, or else a wrapper around the inline vISA `visa`; `cache`,
    the message's L1/L3 cache controls (None: the hardware's default), is part of the name."""
    kind: str  # "load", "store" or "prefetch"
    bits: int
    rows: int
    cols: int
    blocks: int = 1
    vnni: bool = False
    transpose: bool = False
    igc_name: str = ""
    cache: CacheHints | None = None

    @classmethod
    def of(cls, key: BlockLoad | BlockStore | BlockPrefetch, igc_name: str = "") -> Block2DBuiltin:
        kind = {BlockLoad: "load", BlockStore: "store", BlockPrefetch: "prefetch"}[type(key)]
        # the key's fields as they are (dataclasses.asdict deep-copies each: a tenth of a GEMM's compile)
        return cls(kind, **{f.name: getattr(key, f.name) for f in fields(key)}, igc_name=igc_name)

    @property
    def per_lane(self) -> int:
        """Elements of one component in one lane."""
        if self.vnni:
            return 32 // self.bits
        return 1 if self.transpose else max(1, self.cols // BLOCK_IO_SUBGROUP)

    @property
    def lane_rows(self) -> int:
        """Rows one plain component holds: N / cols for a block narrower than the sub-group, whose consecutive rows
        go to consecutive groups of cols lanes (§2; a d32 8-wide block is tf32 DPAS A), else 1."""
        return 1 if self.vnni or self.transpose else max(1, BLOCK_IO_SUBGROUP // self.cols)

    @property
    def row_groups(self) -> int:
        """Transposed: the groups of 16 rows a lane takes one row of (the module docstring's g)."""
        return self.rows // BLOCK_IO_SUBGROUP

    @property
    def components(self) -> int:
        if self.transpose:
            return self.cols * self.row_groups
        return self.rows * self.blocks // (self.per_lane if self.vnni else self.lane_rows)

    @property
    def lane_type(self) -> ir.IntType:
        return ir.IntType(self.bits * self.per_lane)

    @property
    def shape(self) -> str:
        """The vISA data shape, e.g. d16.2x16x8nn (transpose flag, then VNNI flag)."""
        flags = "".join("t" if flag else "n" for flag in (self.transpose, self.vnni))
        return f"d{self.bits}.{self.blocks}x{self.cols}x{self.rows}{flags}"

    @property
    def name(self) -> str:
        hints = self.cache.visa.replace(".", "_") if self.cache else ""
        return f"xe_block2d_{self.kind}_{self.shape.replace('.', '_')}{hints}"

    @property
    def data_type(self) -> ir.Type:
        """A lane's data: a vector (or scalar) for stores, an array in private memory for loads."""
        if self.kind == "load":
            return ir.ArrayType(self.lane_type, self.components)
        return vector(self.lane_type, self.components)

    @property
    def signature(self) -> ir.FunctionType:
        data = {"load": [ir.PointerType(self.data_type)], "store": [self.data_type], "prefetch": []}[self.kind]
        return ir.FunctionType(VOID, SURFACE_ARGS + data)

    @property
    def spirv_op(self) -> str:
        """The SPV_INTEL_2d_block_io instruction, as the emitter's `__spirv_` name."""
        variant = "Transform" if self.vnni else "Transpose" if self.transpose else ""
        return f"__spirv_Subgroup2DBlock{self.kind.capitalize()}{variant}INTEL"

    @property
    def visa(self) -> str:
        """The vISA message: operands are the data ($0, loads and stores) then base, width-1, height-1, pitch-1,
        x, y (§5); the cache controls follow `ugm`, L1 then L3."""
        hints = self.cache.visa if self.cache else ""
        if self.kind == "prefetch":
            return f"lsc_load_block2d.ugm{hints} (M1, 1) %null:{self.shape} flat[$0, $1, $2, $3, $4, $5]"
        address = "flat[$1, $2, $3, $4, $5, $6]"
        if self.kind == "load":
            return f"lsc_load_block2d.ugm{hints} (M1, 1) $0:{self.shape} {address}"
        return f"lsc_store_block2d.ugm{hints} (M1, 1) {address} $0:{self.shape}"


_DPAS_KEYS = [Dpas(a, b, m) for a, b in [("f16", "f16"), ("bf16", "bf16"), ("i8", "i8"), ("ui8", "ui8"),
                                          ("i8", "ui8"), ("ui8", "i8")] for m in (1, 2, 4, 8)]
# the 2D block reads IGC 1.0.12504 defines (§2), by shape
_IGC_BLOCK_READS = {
    **{BlockLoad(16, m, 16, 2): f"intel_subgroup_block_read_u16_m{m}k16v2" for m in (1, 2, 4, 8)},
    **{BlockLoad(8, m, 32, 2): f"intel_subgroup_block_read_u8_m{m}k32v2" for m in (1, 2, 4, 8)},
    BlockLoad(16, 16, 16, vnni=True): "intel_subgroup_block_read_transform_u16_k16",
    BlockLoad(8, 32, 16, vnni=True): "intel_subgroup_block_read_transform_u8_k32",
    BlockLoad(32, 16, 8, transpose=True): "intel_subgroup_block_read_transpose_u32_k8",
}
# shapes reached through inline vISA on GPU targets (§5; each is one block2d send on pvc, see the tests)
_VISA_BLOCKS = [BlockLoad(16, 8, 16), BlockLoad(16, 16, 16), BlockLoad(32, 8, 16), BlockLoad(32, 16, 16),
                BlockStore(32, 8, 16), BlockStore(16, 8, 16), BlockStore(8, 8, 32),
                BlockPrefetch(16, 8, 16, 2), BlockPrefetch(16, 32, 16, 2), BlockPrefetch(8, 32, 32, 2)]

DPAS_TABLE = {sg: {key: DpasBuiltin(key.a, key.b, key.m, sg) for key in _DPAS_KEYS} for sg in (8, 16)}
# tf32 (2025 extension and CPU ABIs only; sub-group 16): M 2, 4, 8, whose A is a [2, 8] lane grid (M 1 has none)
TF32_DPAS_TABLE = {16: {Dpas("tf32", m=m): DpasBuiltin("tf32", "tf32", m, 16) for m in (2, 4, 8)}}
LEGACY_TF32 = ("tf32 tile_mma on the legacy builtin ABI: IGC 2022 has only the early builtin "
               "_Z43intel_sub_group_tf32_tf32_matrix_mad_k8_f32Dv8_sDv8_iDv8_f, whose A layout is undocumented; "
               "use the spirv ABI (XETILE_XE_ABI unset) or input_precision='ieee'")
BLOCK2D_TABLE = {**{key: Block2DBuiltin.of(key, name) for key, name in _IGC_BLOCK_READS.items()},
                 **{key: Block2DBuiltin.of(key) for key in _VISA_BLOCKS}}


# How an ABI provides the builtins: builtin kind ("dpas", "load", "store", "prefetch") -> the function that writes a
# builtin's body (builder at its entry, the function, its description); a kind missing is an Import
Definitions = dict[str, Callable[[ir.IRBuilder, ir.Function, Union[DpasBuiltin, Block2DBuiltin]], None]]


def block_rule(target: Target, key: Key) -> str | None:
    """Why `target` has no 2D block message for `key` (its BlockIO limits), None when it has one."""
    if target.block_io is None:
        return f"target {target.name} has no 2D block IO"
    if target.subgroup_size != BLOCK_IO_SUBGROUP:
        return f"2D block IO needs sub-group {BLOCK_IO_SUBGROUP}"
    if isinstance(key, BlockStore):
        return target.block_io.store_rule(key.bits, key.rows, key.cols)
    return target.block_io.load_rule(key.bits, key.rows, key.cols, key.blocks, getattr(key, "vnni", False),
                                     getattr(key, "transpose", False))


def provides(target: Target, key: Key) -> bool:
    """Whether the lowering may call `key` on `target`: the target has the message and its ABI the builtin (the
    legacy ABI the loads and stores of BLOCK2D_TABLE's shapes, and every prefetch: it has no data operand)."""
    return (key in BLOCK2D_TABLE or _any_shape(target, key)) and block_rule(target, key) is None


def _any_shape(target: Target, key: Key) -> bool:
    """Whether `target`'s ABI provides the block message `key` in any shape its BlockIO allows."""
    return target.abi.any_block_shape or isinstance(key, BlockPrefetch)


def describe(target: Target, key: Key) -> DpasBuiltin | Block2DBuiltin:
    """The table row of `key` on `target`; NotImplementedError when the target has no such builtin."""
    if isinstance(key, Dpas):
        if key.a == "tf32" and not target.abi.tf32_dpas:
            raise NotImplementedError(LEGACY_TF32)
        table = {**DPAS_TABLE.get(target.subgroup_size, {}), **TF32_DPAS_TABLE.get(target.subgroup_size, {})}
    else:
        rule = block_rule(target, key)
        if rule is not None:
            raise NotImplementedError(f"no 2D block message {key} on target {target.name}: {rule}")
        if _any_shape(target, key):
            return Block2DBuiltin.of(key)
        table = BLOCK2D_TABLE
    if key not in table:
        raise NotImplementedError(f"no Xe builtin for {key} on target {target.name}")
    return table[key]


def builtin(module: ir.Module, target: Target, key: Key, definitions: Definitions,
            cache: CacheHints | None = None) -> ir.Function:
    """The function the lowering calls for `key`: defined in `module` by `definitions[kind]` (the target's ABI's
    definitions, codegen/backends.py), or declared (an Import) where they have none for the kind; once per module.
    A 2D block message a driver provides carries the `cache` controls (a prefetch without them: L1 and L3 cached; a
    hinted load on the legacy ABI is the vISA message, as IGC's builtins take none); builtins the module defines
    (the CPU targets) have no caches to steer and ignore them."""
    desc = describe(target, key)
    if isinstance(desc, Block2DBuiltin) and not target.abi.defines_builtins:
        cache = cache or (locality_hints(3) if desc.kind == "prefetch" else None)
        desc = replace(desc, cache=cache, igc_name="" if cache else desc.igc_name)
    if desc.name in module.globals:
        return module.globals[desc.name]
    fn = ir.Function(module, desc.signature, desc.name)
    body = definitions.get(desc.kind)
    if body is not None:
        fn.linkage = "internal"
        body(ir.IRBuilder(fn.append_basic_block("entry")), fn, desc)
    return fn
