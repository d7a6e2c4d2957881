"""Xe builtins (codegen/xe/builtins.py): the table against the names IGC defines, the cpu emulation run on
opencl:cpu against numpy (layouts, zero padding, dropped stores, DPAS bit-exact in the documented order), and the
same kernels compiled for PVC / DG2 with ocloc (the ISA must hold dpas and block2d sends and no `calla`)."""
from __future__ import annotations

import math
import os
import re
from dataclasses import replace

import dpctl.memory
import ml_dtypes
import numpy as np
import pytest
from llvmlite import ir
from spirv_tools import cpu_queue, validate

from xetile_jit.toolchain import ocloc
from xetile_jit.toolchain.isa_stats import block_messages
from xetile_jit.codegen.backends import backend
from xetile_jit.codegen.llvm import lane_slots, work_item_ids
from xetile_jit.codegen.xe import builtins as xb
from xetile_jit.codegen.xe.llvm_helpers import BROADCAST
from xetile_jit.codegen.spirv import emit_spirv, spec
from xetile_jit.target.cpu_features import CpuFeatures
from xetile_jit.target.targets import get_target
from xetile_jit.ir.cache_hints import cache_hints, locality_hints
from xetile_jit.runtime import sycl

I32, I64 = ir.IntType(32), ir.IntType(64)
BYTES = ir.PointerType(ir.IntType(8), 1)
SG = 16
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "reference", "examples")
NP_DTYPE = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "i8": np.int8, "ui8": np.uint8}
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32}
HALF_MASK = ir.VectorType(I32, 8)  # shufflevector mask picking one A operand out of a v2 load


# --- helpers ---------------------------------------------------------------------------------------------------
def kernel(module: ir.Module, name: str, *arg_types: ir.Type) -> tuple[ir.Function, ir.IRBuilder]:
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), arg_types), name)
    fn.calling_convention = "spir_kernel"
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def spirv_builtin(b: ir.IRBuilder, name: str, *dim: int) -> ir.Value:
    """An i32 id: `__spirv_BuiltIn<name>` (the vector built-ins take a dimension and return i64)."""
    full = f"__spirv_BuiltIn{name}"
    fn = b.module.globals.get(full) or ir.Function(
        b.module, ir.FunctionType(I64 if dim else I32, [I32] * len(dim)), full)
    value = b.call(fn, [ir.Constant(I32, d) for d in dim])
    return b.trunc(value, I32) if dim else value


def coord(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    pair = ir.Constant(ir.VectorType(I32, 2), None)
    return b.insert_element(b.insert_element(pair, x, ir.Constant(I32, 0)), y, ir.Constant(I32, 1))


def i32(value: int) -> ir.Constant:
    return ir.Constant(I32, value)


# the builtin ABIs: the two of the CPU device (xe-emulated's bit-exact emulation, cpu's vector definitions) and
# the two of xe-hpc
ABI_TARGETS = {"emulated": get_target("xe-emulated"), "vector": get_target("cpu"),
               "spirv": get_target("xe-hpc", "spirv"),
               "legacy": get_target("xe-hpc", "legacy")}


def builtin(module: ir.Module, target, key, cache=None) -> ir.Function:
    """The builtin `key` as `target`'s builtin ABI defines or declares it in `module`, in a module whose lanes
    exchange values by sub-group built-ins (these modules define no lane slots)."""
    return xb.builtin(module, target, key, backend(target).definitions(target, BROADCAST), cache)


def call(b: ir.IRBuilder, target: str, key, *args: ir.Value) -> ir.Value:
    return b.call(builtin(b.module, ABI_TARGETS.get(target) or get_target(target), key), args)


def load(b: ir.IRBuilder, target: str, key, *args: ir.Value) -> ir.Value:
    """A block load's lane vector (straight-line code: the private variable may sit anywhere in the entry)."""
    data_type = xb.describe(ABI_TARGETS[target], key).data_type
    dst = b.alloca(data_type)
    call(b, target, key, *args, dst)
    return b.load(b.bitcast(dst, ir.VectorType(data_type.element, data_type.count).as_pointer()))


def surface_args(width_bytes: int, height: int, pitch: int) -> list[ir.Constant]:
    return [i32(width_bytes), i32(height), i32(pitch)]


def run_cpu(module: ir.Module, launches) -> None:
    """Validate `module` and run it on opencl:cpu; `launches` = [(kernel, groups, numpy arrays)], one
    sub-group per workgroup; the arrays are updated in place. The lanes' slots and ids the definitions use are
    written as the lowering writes them (codegen/llvm/lane_slots.py, codegen/llvm/work_item_ids.py)."""
    lane_slots.define(module, 1, SG)
    work_item_ids.define(module, builtin_ids=False)
    binary = emit_spirv(module, subgroup_size=SG)
    validate(binary)
    queue = cpu_queue()
    program = sycl.SyclProgram(binary, queue)
    for name, groups, arrays in launches:
        memories = [dpctl.memory.MemoryUSMShared(a.nbytes, queue=queue) for a in arrays]
        for memory, array in zip(memories, arrays):
            memory.copy_from_host(array.view(np.uint8).reshape(-1))
        sycl.launch(queue, program.kernel(name), [SG * groups[0], groups[1]], [SG, 1], memories)
        for memory, array in zip(memories, arrays):
            array[...] = np.frombuffer(memory.copy_to_host(), array.dtype).reshape(array.shape)


def garbage_surface(rng, rows: int, pitch: int, dtype) -> np.ndarray:
    """A surface buffer full of non-zero garbage, so zero padding can only come from the bounds checks."""
    info = np.iinfo(UINT[np.dtype(dtype).itemsize * 8])
    return rng.integers(1, info.max, size=(rows, pitch), dtype=info.dtype).view(dtype)


# --- the table -------------------------------------------------------------------------------------------------
def _names(file: str) -> set[str]:
    path = os.path.join(EXAMPLES, file)
    if not os.path.exists(path):
        pytest.skip(f"{path} is missing")
    return {line.strip() for line in open(path) if line.strip() and not line.startswith("#")}


def test_table_names_are_the_builtins_igc_defines():
    dpas_names = _names("igc12504_dpas_names.txt")
    assert all(d.name in dpas_names for table in xb.DPAS_TABLE.values() for d in table.values())
    reads = _names("igc12504_blockread_names.txt")
    assert {d.igc_name for d in xb.BLOCK2D_TABLE.values() if d.igc_name} == reads
    # the verified rows of reference §1.2
    hpc, hpg = get_target("xe-hpc"), get_target("xe-hpg")
    assert xb.describe(hpc, xb.Dpas("f16")).name == "_Z38intel_sub_group_f16_f16_matrix_mad_k16Dv8_sDv8_iDv8_f"
    assert xb.describe(hpc, xb.Dpas("i8")).name == "_Z36intel_sub_group_i8_i8_matrix_mad_k32Dv8_sDv8_iS0_"
    assert xb.describe(hpc, xb.Dpas("ui8")).name == "_Z36intel_sub_group_u8_u8_matrix_mad_k32Dv8_tDv8_jDv8_i"
    assert xb.describe(hpg, xb.Dpas("bf16")).name == "_Z40intel_sub_group_bf16_bf16_matrix_mad_k16Dv8_iS_Dv8_f"
    assert xb.describe(hpc, xb.Dpas("f16", m=1)).name == "_Z38intel_sub_group_f16_f16_matrix_mad_k16sDv8_if"


def test_builtin_api_per_target():
    """Same signatures everywhere; Imports of IGC builtins and vISA wrappers on GPU targets, bodies on cpu."""
    keys = [xb.Dpas("bf16"), xb.BlockLoad(16, 8, 16, 2), xb.BlockStore(32, 8, 16)]
    for target in ("spirv", "legacy", "emulated", "vector"):
        module = ir.Module()
        fns = [builtin(module, ABI_TARGETS[target], key) for key in keys]
        assert [builtin(module, ABI_TARGETS[target], key) for key in keys] == fns  # created once per module
        assert [fn.is_declaration for fn in fns] == [target == "legacy", False, False]
        assert str(fns[1].function_type) == "void (i8 addrspace(1)*, i32, i32, i32, <2 x i32>, [16 x i16]*)"
    assert builtin(ir.Module(), get_target("xe2"), keys[1]).function_type == fns[1].function_type
    assert builtin(ir.Module(), get_target("xe-hpg"), xb.Dpas("f16")).args[0].type == ir.VectorType(I32, 8)
    with pytest.raises(NotImplementedError, match="xe-hpg has no 2D block IO"):
        builtin(ir.Module(), get_target("xe-hpg"), xb.BlockLoad(16, 8, 16, 2))
    with pytest.raises(NotImplementedError, match="on target cpu: a 2D block is 4 to 64 bytes wide .*not 128"):
        builtin(ir.Module(), get_target("cpu"), xb.BlockLoad(16, 8, 16, 4))
    with pytest.raises(NotImplementedError, match="at most 8 rows high, not 16"):
        builtin(ir.Module(), get_target("xe-hpc"), xb.BlockStore(16, 16, 16))
    with pytest.raises(NotImplementedError, match="no Xe builtin for BlockLoad"):  # legal, but not in IGC 2022
        builtin(ir.Module(), ABI_TARGETS["legacy"], xb.BlockLoad(8, 4, 16))


def instructions(binary: bytes):
    """(opcode, operand words) of each instruction of a SPIR-V binary."""
    words = np.frombuffer(binary, np.uint32)
    at = 5
    while at < len(words):
        count = int(words[at] >> 16)
        yield int(words[at] & 0xFFFF), [int(w) for w in words[at + 1:at + count]]
        at += count


def string(words: list[int]) -> str:
    return bytes(np.array(words, np.uint32)).rstrip(b"\0").decode()


def test_inline_asm_encoding():
    """The vISA wrappers: AsmINTEL capability, the extension, OpAsmTargetINTEL without a result type, one
    OpAsmINTEL per message, SideEffectsINTEL on the store and prefetch only."""
    module = ir.Module()
    fn, b = kernel(module, "asm", BYTES)
    where = [fn.args[0], *surface_args(64, 8, 64), coord(b, i32(0), i32(0))]
    tile = load(b, "legacy", xb.BlockLoad(16, 8, 16), *where)
    call(b, "legacy", xb.BlockStore(16, 8, 16), *where, tile)
    call(b, "legacy", xb.BlockStore(16, 8, 16), *where, tile)
    call(b, "legacy", xb.BlockPrefetch(16, 8, 16, 2), *where)
    b.ret_void()
    code = list(instructions(emit_spirv(module, subgroup_size=SG)))
    ops = [op for op, _ in code]
    assert (spec.OpCapability, [spec.CapabilityAsmINTEL]) in code
    assert any(op == spec.OpExtension and string(w) == "SPV_INTEL_inline_assembly" for op, w in code)
    (target_words,) = [w for op, w in code if op == spec.OpAsmTargetINTEL]
    assert string(target_words[1:]) == "spirv64-unknown-unknown"  # word 0 is the result id: no result type
    asms = {w[1] for op, w in code if op == spec.OpAsmINTEL}
    assert len(asms) == ops.count(spec.OpAsmCallINTEL) == 3  # one wrapper per message, the store's called twice
    side_effects = {w[0] for op, w in code if op == spec.OpDecorate and w[1] == spec.DecorationSideEffectsINTEL}
    assert len(side_effects) == 2 and side_effects < asms


# --- GEMM tiles: block loads -> DPAS -> block store -------------------------------------------------------------
def _random(rng, shape, dtype):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    return rng.uniform(-4, 4, size=shape).astype(dtype)


class Gemm:
    """C (M x N, f32 / i32) += A (M x K) @ B (K x N), one 8x16 C tile per sub-group; surfaces with odd pitches,
    garbage around them and shapes that are not multiples of the tiles (13 x 21, K not a multiple of 2 DPAS)."""
    M, N = 13, 21

    def __init__(self, a: str, b: str, k: int):
        self.dpas = xb.Dpas(a, b)
        mad = xb.describe(get_target("cpu"), self.dpas)
        self.bits, self.kd, self.K, self.esize = mad.bits, mad.k, k, mad.bits // 8
        self.pitch_a, self.pitch_b, self.pitch_c = k + 3, self.N + 5, self.N + 3  # elements
        self.a_key = xb.BlockLoad(self.bits, 8, 256 // self.bits, 2)  # two A operands side by side
        self.b_key = xb.BlockLoad(self.bits, self.kd, 16, vnni=True)
        self.prefetch_key = xb.BlockPrefetch(16, 8, 16, 2) if self.bits == 16 else xb.BlockPrefetch(8, 32, 32, 2)
        self.groups = (math.ceil(self.N / 16), math.ceil(self.M / 8))

    def module(self, target: str) -> ir.Module:
        """Kernel `gemm`: C tile block-loaded, per 2 DPAS steps one A load, a prefetch of the next A, two B loads
        and two DPAS, then the C tile block-stored."""
        module = ir.Module()
        fn, b = kernel(module, "gemm", BYTES, BYTES, BYTES)
        pa, pb, pc = fn.args
        n0, m0 = b.mul(spirv_builtin(b, "WorkgroupId", 0), i32(16)), b.mul(spirv_builtin(b, "WorkgroupId", 1), i32(8))
        a_surface = [pa, *surface_args(self.K * self.esize, self.M, self.pitch_a * self.esize)]
        b_surface = [pb, *surface_args(self.N * self.esize, self.K, self.pitch_b * self.esize)]
        c_surface = [pc, *surface_args(self.N * 4, self.M, self.pitch_c * 4)]
        c_tile = load(b, target, xb.BlockLoad(32, 8, 16), *c_surface, coord(b, n0, m0))
        acc = b.bitcast(c_tile, xb.describe(ABI_TARGETS[target], self.dpas).signature.return_type)
        for k in range(0, self.K, 2 * self.kd):
            a_tile = load(b, target, self.a_key, *a_surface, coord(b, i32(k), m0))
            call(b, target, self.prefetch_key, *a_surface, coord(b, i32(k + 2 * self.kd), m0))
            for half in range(2):
                a_half = b.shuffle_vector(a_tile, a_tile, ir.Constant(HALF_MASK, [*range(8 * half, 8 * half + 8)]))
                b_tile = load(b, target, self.b_key, *b_surface, coord(b, n0, i32(k + half * self.kd)))
                acc = call(b, target, self.dpas, a_half, b_tile, acc)
        call(b, target, xb.BlockStore(32, 8, 16), *c_surface, coord(b, n0, m0), b.bitcast(acc, c_tile.type))
        b.ret_void()
        return module

    def data(self, rng):
        a_dtype, b_dtype = NP_DTYPE[self.dpas.a], NP_DTYPE[self.dpas.b]
        c_dtype = np.float32 if self.bits == 16 else np.int32
        a = garbage_surface(rng, self.M + 2, self.pitch_a, a_dtype)
        b = garbage_surface(rng, self.K + 2, self.pitch_b, b_dtype)
        c = garbage_surface(rng, self.M + 2, self.pitch_c, c_dtype)
        a[:self.M, :self.K] = _random(rng, (self.M, self.K), a_dtype)
        b[:self.K, :self.N] = _random(rng, (self.K, self.N), b_dtype)
        c[:self.M, :self.N] = _random(rng, (self.M, self.N), c_dtype)
        return a, b, c

    def reference(self, a, b, c) -> np.ndarray:
        """C + A @ B as the emulation documents it: f32, k in order, one rounding per addition, the zero padding of
        K up to whole DPAS steps included (it can turn -0.0 into +0.0); integers exact, wrapping to i32."""
        k_padded = math.ceil(self.K / (2 * self.kd)) * 2 * self.kd
        work = np.float32 if self.bits == 16 else np.int64
        a_pad, b_pad = np.zeros((self.M, k_padded), work), np.zeros((k_padded, self.N), work)
        a_pad[:, :self.K], b_pad[:self.K] = a[:self.M, :self.K], b[:self.K, :self.N]
        acc = c[:self.M, :self.N].astype(work)
        if self.bits == 8:
            acc = acc + a_pad @ b_pad
        else:
            for k in range(k_padded):
                acc = acc + np.outer(a_pad[:, k], b_pad[k])
        out = c.copy()
        out[:self.M, :self.N] = acc.astype(c.dtype)
        return out


GEMMS = [Gemm("f16", "f16", 40), Gemm("bf16", "bf16", 40), Gemm("i8", "i8", 72), Gemm("ui8", "ui8", 72),
         Gemm("i8", "ui8", 40), Gemm("ui8", "i8", 40)]


@pytest.mark.parametrize("gemm", GEMMS, ids=lambda g: f"{g.dpas.a}x{g.dpas.b}")
def test_cpu_gemm_tile_bit_exact(gemm, rng):
    a, b, c = gemm.data(rng)
    expected = gemm.reference(a, b, c)
    run_cpu(gemm.module("emulated"), [("gemm", gemm.groups, [a, b, c])])
    np.testing.assert_array_equal(c.view(UINT[32]), expected.view(UINT[32]))  # bits, garbage outside included


# --- DPAS alone: per-lane registers straight from numpy (reference §1.3) ------------------------------------------
def dpas_module(target: str, keys) -> ir.Module:
    """Kernel `dpas<i>` per key: each lane loads its A, B and C registers from lane-major arrays and stores D."""
    module = ir.Module()
    for index, key in enumerate(keys):
        fn, b = kernel(module, f"dpas{index}", BYTES, BYTES, BYTES, BYTES)
        mad = builtin(module, ABI_TARGETS.get(target) or get_target(target), key)
        lane = spirv_builtin(b, "SubgroupLocalInvocationId")
        types = [*mad.function_type.args, mad.function_type.return_type]
        ptrs = [b.gep(b.bitcast(arg, ir.PointerType(ty, 1)), [lane]) for arg, ty in zip(fn.args, types)]
        b.store(b.call(mad, [b.load(p) for p in ptrs[:3]]), ptrs[3])
        b.ret_void()
    return module


def dpas_case(rng, key: xb.Dpas, draw=_random):
    """Lane-major A, B, C registers for random matrices (`draw`), and the expected D registers."""
    mad = xb.describe(get_target("cpu"), key)
    a, b = draw(rng, (key.m, mad.k), NP_DTYPE[key.a]), draw(rng, (mad.k, SG), NP_DTYPE[key.b])
    c = draw(rng, (key.m, SG), np.float32 if mad.is_float else np.int32)
    a_lanes = np.ascontiguousarray(a.view(UINT[mad.bits]).reshape(key.m, -1).view(np.uint16).T)  # lane i: A[r][i*]
    b_lanes = np.ascontiguousarray(b.view(UINT[mad.bits]).T).view(np.uint32)  # lane n: column n, packed in k
    if mad.is_float:
        d = c.copy()
        for k in range(mad.k):
            d = d + np.outer(a[:, k].astype(np.float32), b[k].astype(np.float32))
    else:
        d = (c + a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    return [a_lanes, b_lanes, np.ascontiguousarray(c.T), np.zeros((SG, key.m), c.dtype)], d.T


def check_dpas_rows(abi: str, keys, cases) -> None:
    """Runs one kernel per DPAS row of `keys` on opencl:cpu with its (registers, expected D) of `cases`; D must
    equal the expected bits."""
    run_cpu(dpas_module(abi, keys), [(f"dpas{i}", (1, 1), arrays) for i, (arrays, _) in enumerate(cases)])
    for key, (arrays, expected) in zip(keys, cases):
        np.testing.assert_array_equal(arrays[3].view(np.uint32), expected.view(np.uint32), err_msg=str(key))


def tf32_case(rng, m: int):
    """tf32 A, B, C registers of random f32 matrices (reference §1.3: A component j holds row 2j on lanes 0-7, row
    2j + 1 on lanes 8-15, column lane % 8; B component k = B[k][n]), and D: each operand truncated to tf32 (its low 13
    mantissa bits dropped), then d = c + a[k] * b[k] in order, rounded after each addition."""
    a, b = rng.standard_normal((m, 8), dtype=np.float32), rng.standard_normal((8, SG), dtype=np.float32)
    c = rng.standard_normal((m, SG), dtype=np.float32)
    a_lanes = np.stack([[a[2 * j + lane // 8, lane % 8] for j in range(-(-m // 2))] for lane in range(SG)])
    truncate = [(x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32) for x in (a, b)]
    d = c.copy()
    for k in range(8):
        d = d + np.outer(truncate[0][:, k], truncate[1][k])
    assert not np.array_equal(d, c + a @ b)  # the truncation shows
    return [np.ascontiguousarray(a_lanes), np.ascontiguousarray(b.T), np.ascontiguousarray(c.T),
            np.zeros((SG, m), np.float32)], d.T


def test_vector_border_paths_are_functions_the_driver_does_not_inline():
    """The `cpu` target's block loads and stores call their bit-exact border path, one DontInline function per
    message taking the block's x and y as scalars (as a <2 x i32> the driver built it lane after lane on the fast
    path too) and the caller's lane; the load's returns one component, the index its argument (the caller's
    private array does not escape, and the driver vectorizes a function returning a scalar: it called one
    returning the whole vector lane by lane). The `xe-emulated` target has no border functions: every access is
    the emulation."""
    module = block_module("vector")
    borders = {f.name: f for f in module.functions if f.name.endswith("_border")}
    assert sorted(borders) == sorted(f"{xb.describe(ABI_TARGETS['vector'], key).name}_border"
                                     for key in (*LOADS, *STORES))
    for fn in borders.values():
        assert "noinline" in fn.attributes and fn.args[-1].type == I32
        is_load = "_load_" in fn.name
        assert isinstance(fn.function_type.return_type, ir.IntType) == is_load
        assert not is_load or str(fn.args[-2].type) == "i32"  # a load's component index
        assert [str(arg.type) for arg in fn.args[1:6]] == ["i32"] * 5  # width, height, pitch, x, y
        assert not [arg for arg in fn.args[1:] if isinstance(arg.type, ir.PointerType)]  # args[0]: the surface
    controls = [words[2] for op, words in instructions(emit_spirv(module, 16)) if op == spec.OpFunction]
    assert controls.count(spec.FunctionControlDontInline) == len(borders)
    assert not [f for f in block_module("emulated").functions if f.name.endswith("_border")]


# CPUs from their flags: AVX2, AVX-512 on 256-bit units (AMD Zen 4), AVX-512 on 512-bit units (Intel Xeon)
AVX2 = CpuFeatures("AMD EPYC", frozenset({"avx2", "fma"}), "AuthenticAMD", "23")
ZEN4 = CpuFeatures("AMD Ryzen 9 7950X", frozenset({"avx2", "avx512f"}), "AuthenticAMD", "25")
XEON = CpuFeatures("Intel(R) Xeon(R) Processor", frozenset({"avx2", "avx512f", "amx_bf16"}), "GenuineIntel", "6")


@pytest.mark.parametrize("abi, cpu, rolled", [("emulated", XEON, {8, 16, 32}), ("vector", AVX2, {8, 16}),
                                              ("vector", ZEN4, set()), ("vector", XEON, set())],
                         ids=["emulated", "vector-avx2", "vector-zen4", "vector-xeon"])
def test_cpu_block_messages_component_loops(monkeypatch, abi, cpu, rolled):
    """Every loop over a lane's components in the CPU definitions of the block loads and stores asks the driver not
    to unroll it (OpLoopMerge DontUnroll): unrolled at each inlined block op, they made most of a GEMM's or an
    attention's driver build (codegen/xe/llvm_helpers.py ROLLED). Not the `cpu` target's where the ISA is AVX-512
    (Zen 4's 256-bit units too), nor its 32-bit blocks' with AVX2: there the driver unrolls them and keeps the
    blocks in registers (cpu/builtins.component_hints); the border stores' out-of-line emulation keeps its loop,
    and with AVX2 the `cpu` target's loads their border path's (cpu/builtins._border_words)."""
    monkeypatch.setitem(ABI_TARGETS, abi, replace(ABI_TARGETS[abi], cpu=cpu))
    module = block_module(abi)
    loops = [block for fn in module.functions for block in fn.blocks if re.fullmatch(r"loop(\.\d+)?", block.name)]
    merges = [words for op, words in instructions(emit_spirv(module, 16)) if op == spec.OpLoopMerge]
    hinted = {fn.name for fn in module.functions for block in fn.blocks
              if block.terminator is not None and "llvm.loop" in block.terminator.metadata}
    assert len(loops) >= len(LOADS) + len(STORES) and {words[2] for words in merges} == {spec.LoopControlDontUnroll}
    blocks = {fn.name for fn in module.functions if re.match(r"xe_block2d_(load|store)_d\d+_", fn.name)}
    in_loops = {name for name in blocks if not name.endswith("_border") or "_store_" in name}
    staged = abi == "vector" and cpu.vector_registers == 16
    rolled_border = {name for name in in_loops if name.endswith("_border") or (staged and "_load_" in name)}
    assert {name for name in blocks if name in hinted} == rolled_border | {
        name for name in in_loops if int(re.search(r"_d(\d+)_", name).group(1)) in rolled}
    if rolled == {8, 16, 32}:
        assert len(merges) == len(loops)


@pytest.mark.parametrize("cpu, staged", [(AVX2, {32}), (ZEN4, set()), (XEON, set())], ids=["avx2", "zen4", "xeon"])
def test_a_border_load_is_one_call_filling_its_own_array_with_avx2(monkeypatch, cpu, staged):
    """The `cpu` target's block load calls its border function at one place, in a loop. With AVX2, where the
    inside path's loop is unrolled (32-bit blocks: cpu/builtins.component_hints), that loop fills an array of its
    own, so the block's array (the builtin's last argument) is indexed only where the driver unrolls
    (cpu/builtins._border_words); with AVX-512 it fills the block's array."""
    monkeypatch.setitem(ABI_TARGETS, "vector", replace(ABI_TARGETS["vector"], cpu=cpu))
    loads = [fn for fn in block_module("vector").functions
             if re.match(r"xe_block2d_load_d\d+_", fn.name) and not fn.name.endswith("_border")]
    assert loads
    for fn in loads:
        calls = [i for block in fn.blocks for i in block.instructions
                 if isinstance(i, ir.CallInstr) and i.callee.name.endswith("_border")]
        assert len(calls) == 1, fn.name
        (store,) = [i for i in calls[0].parent.instructions if isinstance(i, ir.StoreInstr)]
        filled = store.operands[1].pointer
        components = fn.args[-1].type.pointee.count if isinstance(fn.args[-1].type.pointee, ir.ArrayType) else 1
        bits = int(re.search(r"_d(\d+)_", fn.name).group(1))
        assert (filled is not fn.args[-1]) == (bits in staged and components > 1), fn.name


@pytest.mark.parametrize("abi", ["emulated", "vector"])
def test_cpu_tf32_dpas_every_row(rng, abi):
    keys = list(xb.TF32_DPAS_TABLE[SG])
    cases = [tf32_case(rng, key.m) for key in keys]
    check_dpas_rows(abi, keys, cases)


def _f16_extremes(rng, shape, dtype):
    """The largest and smallest f16 magnitudes (65504, 2**-14, the subnormal 2**-24), both signs, and values whose
    products need all 22 bits; f32 accumulators of any magnitude near them."""
    if dtype == np.float32:
        return (rng.choice([-1, 1], size=shape) * 2.0 ** rng.integers(-60, 40, size=shape)).astype(np.float32)
    values = np.array([65504, 2 ** -14, 2 ** -24, 2047 / 1024, 1 + 2 ** -10, 3 ** 5, 0.1], np.float16)
    return (rng.choice(values, size=shape) * rng.choice([-1, 1], size=shape)).astype(dtype)


ONE = "float 0x3ff0000000000000"  # how llvmlite prints 1.0


def fma_calls(module) -> list[str]:
    return [line for line in str(module).splitlines() if "call float @\"__spirv_ocl_fma\"" in line]


@pytest.mark.parametrize("abi", ["emulated", "vector"])
def test_f16_dpas_fuses_its_multiply_adds_bit_for_bit(rng, abi):
    """f16 x f16 DPAS adds each product with OpenCL's fma (a CPU's one instruction; 12-17% of the cpu target's
    f16 GEMM, docs/performance.md "CPU notes"): an f16 product is exact and normal in f32, so the fused and the unfused
    add round alike, also at f16's extremes. bf16 and tf32 products can leave f32's range: their products are fmuls,
    each added by an fma of it by 1.0 (test_bf16_dpas_rounds_its_products_at_f32s_bounds)."""
    keys = [key for key in xb.DPAS_TABLE[SG] if key.a == key.b == "f16"]
    f16_calls = fma_calls(dpas_module(abi, keys[:1]))
    assert f16_calls and not any(ONE in call for call in f16_calls)
    for key in (xb.Dpas("bf16", "bf16"), xb.Dpas("tf32", m=8)):
        module = dpas_module(abi, [key])
        assert "fmul float" in str(module) and all(ONE in call for call in fma_calls(module)), key
    cases = [dpas_case(rng, key, _f16_extremes) for key in keys]
    check_dpas_rows(abi, keys, cases)


def _bf16_extremes(rng, shape, dtype):
    """bf16 magnitudes whose products leave f32's normal range (2**128, 2**-128, and 2**-140 with bits to round off)
    or stay just inside it, and f32 accumulators near those bounds: there an fma of the operands rounds otherwise
    than the product rounded, then added."""
    if dtype == np.float32:
        values = [2.0 ** 127, 1.5 * 2.0 ** 126, 2.0 ** -126, 3 * 2.0 ** -140, 1.0]
    else:
        values = [2.0 ** 64, 1.5 * 2.0 ** 63, 2.0 ** -64, (1 + 2 ** -7) * 2.0 ** -70, 1.0, 3.0]
    return (rng.choice(values, size=shape) * rng.choice([-1, 1], size=shape)).astype(dtype)


@pytest.mark.parametrize("abi", ["emulated", "vector"])
def test_bf16_dpas_rounds_its_products_at_f32s_bounds(rng, abi):
    """Each bf16 product is rounded to f32 (to infinity past its largest value, to a subnormal below its smallest
    normal) before its add, as the interpreter computes it."""
    key = xb.Dpas("bf16", "bf16")
    with np.errstate(over="ignore", invalid="ignore"):
        cases = [dpas_case(rng, key, _bf16_extremes) for _ in range(4)]
    expected = np.concatenate([d for _, d in cases])
    assert np.isinf(expected).any() and (np.abs(expected[np.isfinite(expected)]) < 2.0 ** -126).any()
    check_dpas_rows(abi, [key] * len(cases), cases)


# Each A x B pair at M = 8 is launched by test_cpu_gemm_tile_bit_exact, and every f16 row by the test above; the
# rest of the table differs from those rows in M alone (the rows a lane sums, a scalar for M = 1), which does not
# depend on the operands' signs: each other pair once at an M below 8, every such M with 8-bit operands, and bf16
# (its own widening, no fma) with a scalar row
SMALL_M_ROWS = [xb.Dpas("bf16", "bf16", 1), xb.Dpas("i8", "i8", 1), xb.Dpas("ui8", "ui8", 2),
                xb.Dpas("i8", "ui8", 4), xb.Dpas("ui8", "i8", 2)]


def test_cpu_dpas_of_fewer_rows_bit_exact(rng):
    """SMALL_M_ROWS on opencl:cpu; every row of the table defined in one module that passes spirv-val."""
    validate(emit_spirv(dpas_module("emulated", xb.DPAS_TABLE[SG]), subgroup_size=SG))
    keys = SMALL_M_ROWS
    assert set(keys) <= set(xb.DPAS_TABLE[SG])
    cases = [dpas_case(rng, key) for key in keys]
    check_dpas_rows("emulated", keys, cases)


# --- 2D block load / store layouts (reference §2, §5) -------------------------------------------------------------
LEGACY_LOADS = [key for key in xb.BLOCK2D_TABLE if isinstance(key, xb.BlockLoad)]
# and shapes only the spirv ABI and the emulation give: a lane's 32 (or 64) components go through private memory
LOADS = LEGACY_LOADS + [xb.BlockLoad(16, 32, 16), xb.BlockLoad(16, 32, 16, 2), xb.BlockLoad(16, 32, 16, vnni=True),
                        xb.BlockLoad(16, 32, 16, 2, vnni=True), xb.BlockLoad(8, 32, 16, 2, vnni=True),
                        xb.BlockLoad(8, 32, 16, 4, vnni=True),  # 8-bit DPAS B of the int8 GEMM: 64 bytes wide
                        xb.BlockLoad(8, 32, 32, 2), xb.BlockLoad(8, 32, 16, 4), xb.BlockLoad(32, 32, 16),
                        xb.BlockLoad(32, 8, 8), xb.BlockLoad(32, 32, 8, 2),  # narrow blocks (tf32 A)
                        xb.BlockLoad(32, 32, 8, transpose=True)]  # 16-bit B^T, 32 rows: rows i and i + 16 a lane
LEGACY_STORES = [key for key in xb.BLOCK2D_TABLE if isinstance(key, xb.BlockStore)]
STORES = LEGACY_STORES + [xb.BlockStore(16, 1, 16), xb.BlockStore(32, 2, 16)]  # one component a lane, and two
PREFETCHES = [key for key in xb.BLOCK2D_TABLE if isinstance(key, xb.BlockPrefetch)]
WIDTH, HEIGHT, PITCH = 75, 37, 82  # surface in elements; odd width and pitch
COORDS = [(4, 3), (WIDTH - 9, HEIGHT - 5), (-3, -2)]  # inside, over the bottom-right edge, over the top-left


def block_module(target: str) -> ir.Module:
    """Kernels `load<i>` (surface -> lane-major registers), `store<i>` (registers -> surface) per load and store
    the ABI has, and `prefetch` calling every prefetch; the block coordinate is read from a 2 x i32 buffer."""
    module = ir.Module()
    legacy = target == "legacy"
    for kind, keys in (("load", LEGACY_LOADS if legacy else LOADS), ("store", LEGACY_STORES if legacy else STORES)):
        for index, key in enumerate(keys):
            fn, b = kernel(module, f"{kind}{index}", BYTES, BYTES, BYTES)
            surface, registers, xy = fn.args
            data_type = xb.describe(ABI_TARGETS[target], key).data_type
            lane = spirv_builtin(b, "SubgroupLocalInvocationId")
            slot = b.gep(b.bitcast(registers, ir.PointerType(data_type, 1)), [lane])
            xy = b.bitcast(xy, ir.PointerType(I32, 1))
            where = [*surface_args(WIDTH * key.bits // 8, HEIGHT, PITCH * key.bits // 8),
                     coord(b, b.load(xy), b.load(b.gep(xy, [i32(1)])))]
            if kind == "load":
                dst = b.alloca(data_type)
                call(b, target, key, surface, *where, dst)
                b.store(b.load(dst), slot)
            else:
                call(b, target, key, surface, *where, b.load(slot))
            b.ret_void()
    fn, b = kernel(module, "prefetch", BYTES)
    for key in PREFETCHES:
        call(b, target, key, fn.args[0], *surface_args(WIDTH * key.bits // 8, HEIGHT, PITCH * key.bits // 8),
             coord(b, i32(8), i32(4)))
    b.ret_void()
    return module


def lane_cells(desc: xb.Block2DBuiltin, lane: int, component: int, x: int, y: int) -> list[tuple[int, int]]:
    """The surface (row, column) of each element of `component` on `lane`, lowest bits first (reference §2)."""
    p = desc.per_lane
    if desc.transpose:  # lane i: rows i, i + 16, ... taking turns column by column
        column, group = divmod(component, desc.rows // SG)
        return [(y + group * SG + lane, x + column)]
    if desc.vnni:  # block by block, rows / p words each
        block, word = divmod(component, desc.rows // p)
        return [(y + word * p + j, x + block * desc.cols + lane) for j in range(p)]
    if desc.cols < SG:  # narrower than the lanes: consecutive rows on consecutive groups of `cols` lanes
        rows = SG // desc.cols
        block, word = divmod(component, desc.rows // rows)
        return [(y + word * rows + lane // desc.cols, x + block * desc.cols + lane % desc.cols)]
    block, row = divmod(component, desc.rows)
    return [(y + row, x + block * desc.cols + lane * p + j) for j in range(p)]


def inside(row: int, col: int) -> bool:
    return 0 <= row < HEIGHT and 0 <= col < WIDTH


def expected_registers(desc: xb.Block2DBuiltin, surface: np.ndarray, x: int, y: int) -> np.ndarray:
    registers = np.zeros((SG, desc.components), UINT[desc.bits * desc.per_lane])
    for lane in range(SG):
        for component in range(desc.components):
            cells = lane_cells(desc, lane, component, x, y)
            registers[lane, component] = sum(int(surface[r, c]) << (desc.bits * j)
                                             for j, (r, c) in enumerate(cells) if inside(r, c))
    return registers


def expected_surface(desc: xb.Block2DBuiltin, surface: np.ndarray, registers: np.ndarray, x: int, y: int):
    surface = surface.copy()
    for lane in range(SG):
        for component in range(desc.components):
            for j, (r, c) in enumerate(lane_cells(desc, lane, component, x, y)):
                if inside(r, c):
                    surface[r, c] = (int(registers[lane, component]) >> (desc.bits * j)) & ((1 << desc.bits) - 1)
    return surface


@pytest.mark.parametrize("abi", ["emulated", "vector"])
def test_cpu_block_loads_and_stores(rng, abi):
    """Both CPU ABIs: each key at a coordinate inside the surface (the vector ABI's fast path) and over two edges."""
    prefetched = garbage_surface(rng, HEIGHT + 2, PITCH, np.uint8)
    launches = [("prefetch", (1, 1), [prefetched])]
    checks = [("prefetch", [prefetched], (0, prefetched.copy()))]
    for kind, keys in (("load", LOADS), ("store", STORES)):
        for index, key in enumerate(keys):
            desc = xb.describe(ABI_TARGETS[abi], key)
            for x, y in COORDS:
                surface = garbage_surface(rng, HEIGHT + 2, PITCH, UINT[key.bits])
                registers = garbage_surface(rng, SG, desc.components, UINT[desc.bits * desc.per_lane])
                if kind == "load":
                    expected = (1, expected_registers(desc, surface, x, y))
                else:
                    expected = (0, expected_surface(desc, surface, registers, x, y))
                arrays = [surface, registers, np.array([x, y], np.int32)]
                launches.append((f"{kind}{index}", (1, 1), arrays))
                checks.append((f"{key} at {(x, y)}", arrays, expected))
    run_cpu(block_module(abi), launches)
    for name, arrays, (which, expected) in checks:
        np.testing.assert_array_equal(arrays[which], expected, err_msg=name)


# --- GPU targets: ocloc ----------------------------------------------------------------------------------------
def gpu_isa(binary: bytes, target: str) -> str:
    chosen = ABI_TARGETS.get(target) or get_target(target)
    if not ocloc.available(chosen):
        pytest.skip(f"no GPU compiler for the {chosen.abi.name} ABI of {chosen.name} is installed")
    if chosen.abi.spirv_extensions:
        validate(binary, tool=ocloc.spirv_validator(chosen))
    return ocloc.gpu_build(binary, chosen).isa


@pytest.mark.parametrize("abi", ["spirv", "legacy"])
@pytest.mark.parametrize("gemm", GEMMS, ids=lambda g: f"{g.dpas.a}x{g.dpas.b}")
def test_pvc_gemm_tile_isa(gemm, abi):
    isa = gpu_isa(emit_spirv(gemm.module(abi), subgroup_size=SG), abi)
    kinds = [m.kind for m in block_messages(isa)]
    steps = math.ceil(gemm.K / (2 * gemm.kd))
    assert isa.count("dpas.8x8 (16|M0)") == 2 * steps
    assert kinds.count("load") == 1 + 3 * steps  # C, then A and 2 B per step
    assert kinds.count("prefetch") == steps and kinds.count("store") == 1
    assert "calla" not in isa


@pytest.mark.parametrize("target, sg", [("spirv", 16), ("legacy", 16), ("xe-hpg", 8)])
def test_gpu_dpas_isa(target, sg):
    keys = list(xb.DPAS_TABLE[sg])
    isa = gpu_isa(emit_spirv(dpas_module(target, keys), subgroup_size=sg), target)
    for m in (1, 2, 4, 8):
        assert isa.count(f"dpas.8x{m} ({sg}|M0)") == len([key for key in keys if key.m == m])
    assert "calla" not in isa


@pytest.mark.parametrize("target", ["xe-hpc", "xe2", "xe3"])
def test_gpu_tf32_dpas_isa(target):
    """The 2025 extension with MatrixATF32INTEL | MatrixBTF32INTEL: one `dpas.8xM f = f, tf32, tf32` per row."""
    keys = list(xb.TF32_DPAS_TABLE[SG])
    isa = gpu_isa(emit_spirv(dpas_module(target, keys), subgroup_size=SG), target)
    for key in keys:
        assert len(re.findall(rf"dpas\.8x{key.m} \(16\|M0\)\s+\S+:f\s+\S+:f\s+\S+:tf32\s+\S+:tf32", isa)) == 1
    assert "calla" not in isa


def test_tf32_on_the_legacy_abi_is_a_named_error():
    with pytest.raises(NotImplementedError, match="tf32 tile_mma on the legacy builtin ABI"):
        xb.describe(ABI_TARGETS["legacy"], xb.Dpas("tf32"))


@pytest.mark.parametrize("abi", ["spirv", "legacy"])
def test_pvc_block_messages_isa(abi):
    """One block2d send per load, store and prefetch the ABI has: the 2025 extension's instructions; the IGC 2022
    builtins and the vISA wrappers."""
    isa = gpu_isa(emit_spirv(block_module(abi), subgroup_size=SG), abi)
    kinds = [m.kind for m in block_messages(isa)]
    assert kinds.count("load") == len(LOADS if abi == "spirv" else LEGACY_LOADS)
    assert kinds.count("prefetch") == len(PREFETCHES)
    assert kinds.count("store") == len(STORES if abi == "spirv" else LEGACY_STORES)
    assert "calla" not in isa


# --- cache hints (ir/cache_hints.py) -----------------------------------------------------------------------------
HINTED = {xb.BlockLoad(16, 8, 16): cache_hints("load", "streaming"),              # .st.ca
          xb.BlockLoad(16, 8, 16, 2): cache_hints("load", ("uncached", "uncached")),  # an IGC 2022 builtin's shape
          xb.BlockStore(16, 8, 16): cache_hints("store", "write_through"),         # .wt.wb
          xb.BlockPrefetch(16, 8, 16, 2): locality_hints(2)}                       # .uc.ca


def hinted_module(target: str) -> ir.Module:
    """One kernel: each HINTED message with its hints, then an unhinted prefetch (L1 and L3 cached)."""
    module = ir.Module()
    fn, b = kernel(module, "hinted", BYTES)
    where = [fn.args[0], *surface_args(64, 16, 64), coord(b, i32(0), i32(0))]
    rows = None
    for key, hints in HINTED.items():
        function = builtin(module, ABI_TARGETS[target], key, hints)
        if isinstance(key, xb.BlockLoad):
            dst = b.alloca(xb.describe(ABI_TARGETS[target], key).data_type)
            b.call(function, [*where, dst])
            rows = rows or b.load(b.bitcast(dst, ir.VectorType(ir.IntType(16), 8).as_pointer()))
        else:
            b.call(function, where + ([rows] if isinstance(key, xb.BlockStore) else []))
    call(b, target, xb.BlockPrefetch(16, 8, 16, 2), *where)
    b.ret_void()
    return module


def test_cache_hints_name_the_gpu_messages_and_leave_the_cpu_ones_alone():
    """GPU ABIs: the hints are part of the message (its name; spirv: a cache-controlled base; legacy: the vISA
    suffix, an IGC builtin's shape included); an unhinted prefetch is L1 and L3 cached. CPU ABIs: the emulation
    has no caches; the same functions as without hints."""
    for abi in ("spirv", "legacy", "emulated", "vector"):
        module = hinted_module(abi)
        names = sorted(f.name for f in module.functions
                       if f.name.startswith("xe_block2d") and not f.name.endswith("_border"))
        if abi in ("emulated", "vector"):
            assert names == ["xe_block2d_load_d16_1x16x8nn", "xe_block2d_load_d16_2x16x8nn",
                             "xe_block2d_prefetch_d16_2x16x8nn", "xe_block2d_store_d16_1x16x8nn"]
            assert "CacheControl" not in str(module) and "lsc_" not in str(module)
            continue
        assert names == ["xe_block2d_load_d16_1x16x8nn_st_ca", "xe_block2d_load_d16_2x16x8nn_uc_uc",
                         "xe_block2d_prefetch_d16_2x16x8nn_ca_ca", "xe_block2d_prefetch_d16_2x16x8nn_uc_ca",
                         "xe_block2d_store_d16_1x16x8nn_wt_wb"]
        text = str(module)
        if abi == "spirv":
            for control in ("LoadINTEL.2_1", "LoadINTEL.0_0", "StoreINTEL.1_2", "LoadINTEL.0_1", "LoadINTEL.1_1"):
                assert f'@"__spirv_CacheControl{control}"' in text, control
        else:
            for message in ("lsc_load_block2d.ugm.st.ca (M1, 1) $0:d16.1x16x8nn",
                            "lsc_load_block2d.ugm.uc.uc (M1, 1) $0:d16.2x16x8nn",
                            "lsc_store_block2d.ugm.wt.wb (M1, 1)", "lsc_load_block2d.ugm.uc.ca (M1, 1) %null",
                            "lsc_load_block2d.ugm.ca.ca (M1, 1) %null"):
                assert message in text, message
            assert "intel_subgroup_block_read_u16_m8k16v2" not in text  # a hinted load is the vISA message


def test_cache_controls_are_decorations_through_groups():
    """SPV_INTEL_cache_controls: the capability and extension; each base pointer an OpInBoundsPtrAccessChain with
    one decoration group per (kind, level, control): level 0 (L1), level 1 (L3)."""
    code = list(instructions(emit_spirv(hinted_module("spirv"), subgroup_size=SG)))
    assert (spec.OpCapability, [spec.CapabilityCacheControlsINTEL]) in code
    assert any(op == spec.OpExtension and string(w) == "SPV_INTEL_cache_controls" for op, w in code)
    groups = {w[0]: tuple(w[1:]) for op, w in code if op == spec.OpDecorate and w[1] in (
        spec.DecorationCacheControlLoadINTEL, spec.DecorationCacheControlStoreINTEL)}
    assert {w[0] for op, w in code if op == spec.OpDecorationGroup} == set(groups)
    chains = {w[1]: w for op, w in code if op == spec.OpInBoundsPtrAccessChain}
    decorated = {}
    for op, w in code:
        if op == spec.OpGroupDecorate:
            decorated.setdefault(w[1], []).append(groups[w[0]])
    assert set(decorated) <= set(chains)
    load, store = spec.DecorationCacheControlLoadINTEL, spec.DecorationCacheControlStoreINTEL
    assert sorted(sorted(v) for v in decorated.values()) == sorted([
        [(load, 0, 2), (load, 1, 1)], [(load, 0, 0), (load, 1, 0)], [(store, 0, 1), (store, 1, 2)],
        [(load, 0, 0), (load, 1, 1)], [(load, 0, 1), (load, 1, 1)]])


@pytest.mark.parametrize("abi", ["spirv", "legacy"])
def test_cache_hints_reach_the_pvc_isa(abi):
    """The L1/L3 modifiers of each send in Intel's ISA: a dropped hint shows as the default (no suffix)."""
    isa = gpu_isa(emit_spirv(hinted_module(abi), subgroup_size=SG), abi)
    sends = [line.split("//")[-1].strip() for line in isa.splitlines() if "block2d" in line]
    suffixes = sorted(s.split(".a64")[-1] for s in sends)
    assert suffixes == [".ca.ca", ".st.ca", ".uc.ca", ".uc.uc", ".wt.wb"], sends
    assert "calla" not in isa
