"""The host CPU's features (target/cpu_features.py): read from /proc/cpuinfo's first processor, a fallback where
there is none, cut to the ISA the OpenCL CPU runtime is told to build for, and their part in the compile cache's
keys."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.codegen.cpu.block_loops import fold_chains
from xetile_jit.codegen.cpu.builtins import component_hints
from xetile_jit.codegen.xe.dpas_emulation import KLoops, WholeK, k_loops
from xetile_jit.codegen.xe.llvm_helpers import BROADCAST, ROLLED, SHUFFLE, SLOTS
from xetile_jit.ops.matmul import PIECE_SPEED, PIECE_SPEED_16_REGISTERS, piece_speeds
from xetile_jit.target import cpu_features
from xetile_jit.target.cpu_features import CpuFeatures, host_cpu, parse_cpuinfo
from xetile_jit.target.targets import TARGETS


def cpuinfo(vendor: str, family: str, model: str, flags: str) -> str:
    """/proc/cpuinfo text of two processors; only the first one's entry counts."""
    entry = (f"processor\t: {{}}\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel name\t: {model}\n"
             f"flags\t\t: {flags}\n")
    return entry.format(0) + "\n" + entry.format(1).replace(flags, "sse2")


EPYC_AVX2 = cpuinfo("AuthenticAMD", "23", "AMD EPYC", "fpu sse2 sse4_2 fma avx f16c avx2 bmi2")
ZEN4 = cpuinfo("AuthenticAMD", "25", "AMD Ryzen 9 7950X", "sse4_2 avx avx2 fma f16c avx512f avx512bw avx512_bf16")
ZEN5 = cpuinfo("AuthenticAMD", "26", "AMD EPYC", "sse4_2 avx avx2 fma f16c avx512f avx512bw avx512vl avx512_bf16")
SAPPHIRE_RAPIDS = cpuinfo("GenuineIntel", "6", "Intel(R) Xeon(R) Platinum 8480+",
                          "sse4_2 avx avx2 fma f16c avx512f avx512_bf16 avx512_fp16 amx_tile amx_bf16")


def test_an_avx2_cpu():
    cpu = parse_cpuinfo(EPYC_AVX2)
    assert (cpu.model, cpu.vendor, cpu.family) == ("AMD EPYC", "AuthenticAMD", "23")
    assert (cpu.isa, cpu.vector_bits, cpu.unit_bits, cpu.f32_lanes) == ("AVX2", 256, 256, 8)
    assert not cpu.amx_bf16 and "sse2" in cpu.flags and "bmi2" in cpu.flags
    assert cpu.summary() == "AMD EPYC: AVX2 (256-bit), no AVX-512; FMA, F16C"


def test_avx512_on_256_bit_units_and_amx():
    zen4, spr = parse_cpuinfo(ZEN4), parse_cpuinfo(SAPPHIRE_RAPIDS)
    assert (zen4.isa, zen4.vector_bits, zen4.unit_bits, zen4.f32_lanes) == ("AVX-512", 512, 256, 16)
    assert zen4.summary() == "AMD Ryzen 9 7950X: AVX-512 (512-bit on 256-bit units); FMA, F16C, AVX512-BF16"
    assert (spr.isa, spr.unit_bits, spr.amx_bf16, spr.amx_fp16) == ("AVX-512", 512, True, False)
    assert spr.summary().endswith("(512-bit); FMA, F16C, AVX512-BF16, AVX512-FP16, AMX-BF16")
    zen5 = parse_cpuinfo(ZEN5)
    assert (zen5.isa, zen5.unit_bits, zen5.summary()) == ("AVX-512", 512, "AMD EPYC: AVX-512 (512-bit); FMA, F16C, "
                                                                          "AVX512-BF16")


def test_the_code_decisions_each_cpu_class_gets():
    """What the `cpu` target's code takes from the CPU, for 16 lanes' f32 (one zmm, two ymm): the GEMM's row sums a loop
    over k and the lane builtin that reads A[r][k] where lanes exchange values by built-ins (k_loops: a shuffle on
    AMD's AVX-512, Zen 4 and Zen 5; A in its memory with AVX2, its loops 6 rows of f32 sums), the sums and B columns
    of a loop over all of K (whole_k_loops: 6 rows of one column, f32, with AVX2; 4 rows of 4, f16 and bf16 too, with
    AVX-512), the partial results of layer norm's two sums of 8 blocks (fold_chains), the pieces' speeds ops.matmul
    estimates with, the block loads' and stores' component loops for 16- and 32-bit blocks (rolled but where the ISA
    is AVX-512 or, for 32-bit blocks, AVX2: component_hints), and whether every kernel reads its ids by the sub-group
    built-ins (with AVX-512, on either width of units, and with AVX2 in a kernel that runs no DPAS:
    subgroup_builtin_ids). Each class keeps what it was measured with (docs/performance.md "On the Xeon AVX-512",
    "GEMM on the `cpu` target", "On the Xeon of model 167", "On the Zen 4, 2026-12-02", "On the Zen 5")."""
    def decisions(cpu):
        hints = (component_hints(cpu, 16), component_hints(cpu, 32))
        ids = (cpu.subgroup_builtin_ids(multiplies=False), cpu.subgroup_builtin_ids(multiplies=True))
        return k_loops(cpu, 16, False), fold_chains(8, 2, 512, cpu), piece_speeds(cpu), hints, ids

    assert decisions(parse_cpuinfo(EPYC_AVX2)) == (
        KLoops(4, BROADCAST, a_in_place=True, in_memory_sums=6, whole_k=WholeK(6, 1, ("f32",))), 2,
        PIECE_SPEED_16_REGISTERS, (ROLLED, ()), (True, False))
    whole_k = dict(whole_k=WholeK(16, 4, ("f32", "f16", "bf16")))
    assert decisions(parse_cpuinfo(ZEN4)) == (KLoops(16, SHUFFLE, **whole_k), 2, PIECE_SPEED, ((), ()), (True, True))
    assert decisions(parse_cpuinfo(ZEN5)) == (KLoops(16, SHUFFLE, **whole_k), 2, PIECE_SPEED, ((), ()), (True, True))
    assert decisions(parse_cpuinfo(SAPPHIRE_RAPIDS)) == (KLoops(16, BROADCAST, **whole_k), 2, PIECE_SPEED, ((), ()),
                                                         (True, True))
    assert decisions(parse_cpuinfo(SAPPHIRE_RAPIDS).built_for("core-avx2"))[-1] == (True, False)  # AVX2 code
    assert decisions(CpuFeatures("aarch64", frozenset())) == (KLoops(16, BROADCAST), 2, PIECE_SPEED, (ROLLED, ROLLED),
                                                              (False, False))
    # a kernel whose lanes exchange values through their slots reads A from them but on AMD's AVX-512
    assert [k_loops(parse_cpuinfo(info), 16, True).read for info in (EPYC_AVX2, ZEN4, ZEN5, SAPPHIRE_RAPIDS)] == \
        [SLOTS, SHUFFLE, SHUFFLE, SLOTS]


def test_older_isas_and_unknown_flags():
    assert CpuFeatures("x", frozenset({"avx", "sse4_2"})).isa == "AVX"
    assert CpuFeatures("x", frozenset({"sse4_2"})).vector_bits == 128
    unknown = CpuFeatures("aarch64", frozenset())
    assert (unknown.isa, unknown.vector_bits, unknown.f32_lanes) == ("unknown", 0, 0)
    assert unknown.summary() == "aarch64: vector ISA unknown (no /proc/cpuinfo flags)"


def test_the_key_is_the_flags_in_any_order_and_the_unit_width():
    cpu = parse_cpuinfo(EPYC_AVX2)
    assert cpu.key == CpuFeatures("another name", frozenset(reversed(sorted(cpu.flags)))).key
    assert cpu.key != parse_cpuinfo(ZEN4).key
    zen4 = parse_cpuinfo(ZEN4)
    assert zen4.key != replace(zen4, vendor="GenuineIntel", family="6").key  # 256-bit units against 512-bit ones
    zen5 = parse_cpuinfo(ZEN5)
    assert zen5.key != replace(zen5, vendor="GenuineIntel", family="6").key  # A by shuffle against slots, broadcast


def test_host_cpu_reads_proc_cpuinfo_and_falls_back_without_it(tmp_path, monkeypatch):
    (tmp_path / "cpuinfo").write_text(ZEN4)
    monkeypatch.setattr(cpu_features, "CPUINFO", str(tmp_path / "cpuinfo"))
    monkeypatch.delenv("CL_CONFIG_CPU_TARGET_ARCH", raising=False)  # the host's own ISA
    host_cpu.cache_clear()
    try:
        assert host_cpu() == parse_cpuinfo(ZEN4)
        monkeypatch.setattr(cpu_features, "CPUINFO", str(tmp_path / "absent"))
        host_cpu.cache_clear()
        assert host_cpu().flags == frozenset() and host_cpu().isa == "unknown"
    finally:
        host_cpu.cache_clear()


def test_a_driver_architecture_cuts_the_flags_to_its_isa():
    """CL_CONFIG_CPU_TARGET_ARCH=core-avx2 makes the OpenCL CPU runtime build AVX2 code on an AVX-512 CPU: the
    features the code meets are then AVX2's, and their cache key another's."""
    spr = parse_cpuinfo(SAPPHIRE_RAPIDS)
    avx2 = spr.built_for("core-avx2")
    assert (avx2.isa, avx2.vector_registers, avx2.amx_bf16, avx2.driver_arch) == ("AVX2", 16, False, "core-avx2")
    assert avx2.flags == {"sse4_2", "avx", "avx2", "fma", "f16c"} and avx2.key != spr.key
    assert avx2.summary() == ("Intel(R) Xeon(R) Platinum 8480+: AVX2 (256-bit), no AVX-512 (driver target core-avx2);"
                              " FMA, F16C")
    skx = spr.built_for("skx")
    assert (skx.isa, skx.vector_registers, "avx512_fp16" in skx.flags, skx.amx_bf16) == ("AVX-512", 32, False, False)
    assert spr.built_for("sapphirerapids").flags == spr.flags
    assert spr.built_for("") is spr and spr.built_for("no such arch") is spr


def test_host_cpu_is_the_cpu_the_driver_builds_for(tmp_path, monkeypatch):
    (tmp_path / "cpuinfo").write_text(SAPPHIRE_RAPIDS)
    monkeypatch.setattr(cpu_features, "CPUINFO", str(tmp_path / "cpuinfo"))
    monkeypatch.setenv("CL_CONFIG_CPU_TARGET_ARCH", "core-avx2")
    host_cpu.cache_clear()
    try:
        assert host_cpu() == parse_cpuinfo(SAPPHIRE_RAPIDS).built_for("core-avx2")
    finally:
        host_cpu.cache_clear()


RUN_AS_AVX2 = """
import numpy as np, xetile_jit as xetile
from xetile_jit.target.targets import TARGETS
@xetile.kernel
def add_three(x, y):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [16, 16]), xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 16])) + 3)
x = np.arange(256, dtype=np.float32).reshape(16, 16)
y = np.empty_like(x)
add_three[(1,)](x, y, target="cpu")
print(TARGETS["cpu"].cpu.isa, bool((y == x + 3).all()))
"""


def test_a_kernel_runs_as_avx2_code_where_the_driver_is_told_to_build_it(tmp_path):
    """The OpenCL CPU runtime accepts core-avx2 on any AVX2 CPU; the `cpu` target then chooses its code for AVX2."""
    env = dict(os.environ, CL_CONFIG_CPU_TARGET_ARCH="core-avx2", XETILE_CACHE_DIR=str(tmp_path), XETILE_QUIET="1")
    if "avx2" not in parse_cpuinfo(pathlib.Path(cpu_features.CPUINFO).read_text()).flags:
        pytest.skip("the host has no AVX2")
    (tmp_path / "avx2.py").write_text(RUN_AS_AVX2)
    done = subprocess.run([sys.executable, str(tmp_path / "avx2.py")], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.split() == ["AVX2", "True"], done.stderr


@xetile.kernel
def add_three(x, y):
    tile = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 16]))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [16, 16]), tile + 3)


def test_a_cpu_targets_compile_cache_entry_is_its_cpus(tmp_path, monkeypatch):
    """A kernel compiled for `cpu` on another CPU's flags (Target.cpu) is another disk cache entry; an Xe target's
    is not."""
    monkeypatch.setenv("XETILE_CACHE_DIR", str(tmp_path))
    x = np.zeros((16, 16), np.float32)

    def entries_after_compiling(target: str, cpu: str) -> int:
        monkeypatch.setitem(TARGETS, "cpu", replace(TARGETS["cpu"], cpu=parse_cpuinfo(cpu)))
        add_three.cache.clear()
        add_three.warmup(x, np.empty_like(x), target=target)
        return len(list(tmp_path.iterdir()))

    assert [entries_after_compiling("cpu", cpu) for cpu in (EPYC_AVX2, EPYC_AVX2, ZEN4)] == [1, 1, 2]
    assert [entries_after_compiling("xe-hpc", cpu) for cpu in (EPYC_AVX2, ZEN4)] == [3, 3]
