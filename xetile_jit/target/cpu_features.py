"""The host CPU's vector ISA, as the `cpu` target's code meets it: the OpenCL CPU runtime compiles a kernel's SPIR-V
for the CPU it runs on, so its vector width (AVX2: 256-bit, AVX-512: 512-bit), whether 512-bit instructions run on
256-bit units (AMD Zen 4 executes each as two halves), and the AMX tiles it may use for bf16 / f16 products decide
how fast a blocking is, and a native binary built on one CPU is not another's.

`host_cpu()` reads them once from /proc/cpuinfo (the first processor's entry: the runtime builds for the host, whose
processors share an ISA); where that file is absent or unreadable the model is the platform's processor name and
the flags are empty (`isa` "unknown"). The runtime builds for an older ISA when `CL_CONFIG_CPU_TARGET_ARCH` names
one of its architectures (`DRIVER_ARCHES`): then the code meets that ISA, not the host's, so `host_cpu()` keeps
only the host's vector flags that architecture has (`driver_arch` says which). This is how AVX2 code is built and
timed on an AVX-512 machine; any other value is the driver's to refuse (it then makes no device). `CpuFeatures.key` identifies the flags in the compile cache's keys (compiled
kernels of the `cpu` targets, the driver's native binaries, autotuning winners); `summary()` is the line
benchmarks print in their headers.
"""
from __future__ import annotations

import functools
import hashlib
import os
import platform
from dataclasses import dataclass, replace

CPUINFO = "/proc/cpuinfo"
# /proc/cpuinfo flag -> the name a summary prints, in the order it prints them
EXTENSIONS = {"fma": "FMA", "f16c": "F16C", "avx512_bf16": "AVX512-BF16", "avx512_fp16": "AVX512-FP16",
              "amx_bf16": "AMX-BF16", "amx_fp16": "AMX-FP16"}
AMD_ZEN4_FAMILY = "25"  # AMD family 25 with AVX-512 is Zen 4, whose vector units are 256 bits wide
DRIVER_ARCH_VARIABLE = "CL_CONFIG_CPU_TARGET_ARCH"

# The vector ISA flags each architecture the OpenCL CPU runtime accepts in CL_CONFIG_CPU_TARGET_ARCH may use.
_SSE42 = frozenset({"sse", "sse2", "ssse3", "sse4_1", "sse4_2", "popcnt"})
_AVX = _SSE42 | {"avx"}
_AVX2 = _AVX | {"avx2", "fma", "f16c", "bmi1", "bmi2"}
_SKX = _AVX2 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}
_ICX = _SKX | {"avx512ifma", "avx512vbmi", "avx512_vbmi2", "avx512_vnni", "avx512_bitalg", "avx512_vpopcntdq"}
_SPR = _ICX | {"avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"}
DRIVER_ARCHES = {"corei7": _SSE42, "corei7-avx": _AVX, "core-avx2": _AVX2, "skx": _SKX, "icelake-server": _ICX,
                 "sapphirerapids": _SPR}
VECTOR_FLAGS = _SPR | {"amx_fp16", "avx512_vp2intersect", "avx_vnni", "avx512er", "avx512pf"}


@dataclass(frozen=True)
class CpuFeatures:
    """One CPU's vendor, family, model name and /proc/cpuinfo feature flags."""
    model: str
    flags: frozenset[str]
    vendor: str = ""
    family: str = ""
    driver_arch: str = ""  # the CL_CONFIG_CPU_TARGET_ARCH the flags were cut to ("": the host's own)

    @property
    def isa(self) -> str:
        """The widest vector ISA: "AVX-512", "AVX2", "AVX", "SSE4.2", or "unknown" (no flags known)."""
        for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("sse4_2", "SSE4.2")):
            if flag in self.flags:
                return name
        return "unknown"

    @property
    def vector_bits(self) -> int:
        """The width of the ISA's vector registers (0: unknown)."""
        return {"AVX-512": 512, "AVX2": 256, "AVX": 256, "SSE4.2": 128}.get(self.isa, 0)

    @property
    def unit_bits(self) -> int:
        """The width of the units that execute the vectors: 256 for AVX-512 on AMD Zen 4, else vector_bits."""
        if self.isa == "AVX-512" and self.vendor == "AuthenticAMD" and self.family == AMD_ZEN4_FAMILY:
            return 256
        return self.vector_bits

    @property
    def shuffles_lanes(self) -> bool:
        """Whether the loops over k read A[r][k] of lane k by a sub-group shuffle in every kernel
        (dpas_emulation.k_loops): on AMD's AVX-512 CPUs, whose shuffle of a zmm of 16 lanes is one `vpermd`. On a Zen 5
        (512-bit units) the tutorial GEMM ran 1.02-1.14x as fast so as with A read through the lanes' slots and
        1.12-1.21x as with the broadcast, and built in 0.61-0.62 s against 0.66-0.76 with the slots; on a Zen 4 the
        broadcast ran 0.8x as fast, the built-ins as the slots (docs/performance.md "On the Zen 5")."""
        return self.isa == "AVX-512" and self.vendor == "AuthenticAMD"

    @property
    def vector_registers(self) -> int:
        """The ISA's vector registers: 32 with AVX-512, 16 with AVX2, AVX and SSE (x86-64; 0: unknown)."""
        return {"AVX-512": 32, "AVX2": 16, "AVX": 16, "SSE4.2": 16}.get(self.isa, 0)

    def registers_for(self, bits: int) -> int:
        """The vector registers a value of `bits` bits takes (a lane value across a sub-group's lanes: 16 lanes' f32
        are two ymm registers, one zmm), at least 1; 0 where the ISA is unknown."""
        return -(-bits // self.vector_bits) if self.vector_bits else 0

    def unrolls_blocks(self, bits: int) -> bool:
        """Whether the `cpu` target's block loads and stores unroll their loops over a lane's components of `bits`-bit
        blocks, so that the driver keeps the block in registers: with AVX-512, and with AVX2 for 32-bit blocks
        (codegen/cpu/builtins.py component_hints has the measurements that decided it). A rolled loop indexes the
        block by a variable, which keeps it in private memory."""
        return self.vector_bits == 512 or (self.vector_bits == 256 and bits == 32)

    def stages_border_loads(self, bits: int) -> bool:
        """Whether the `cpu` target's loads of `bits`-bit blocks whose component loops unroll take their border path
        in one rolled loop filling an array of its own (codegen/cpu/builtins.py _border_words): with AVX2, where a
        call a component saved and restored the caller's vector registers around each call. With AVX-512 the same
        staging slowed the tutorial GEMM on the Xeon (docs/performance.md "Driver builds"), so there the border
        path keeps a call a component."""
        return self.vector_registers == 16 and self.unrolls_blocks(bits)

    def subgroup_builtin_ids(self, multiplies: bool) -> bool:
        """Whether a CPU target's kernel reads its lane and sub-group ids by the sub-group built-ins also where it calls
        no other (codegen/llvm/work_item_ids.py): every kernel with AVX-512, on 512-bit units or on 256-bit ones; with
        256-bit vectors (AVX2) a kernel that `multiplies` not (runs no DPAS). The OpenCL CPU driver vectorizes a kernel
        that calls one as a whole sub-group; with local ids it ran row kernels a work-item at a time. On the Xeon of
        docs/performance.md ("On the Xeon of model 167") softmax and layer norm rows of 128 and 256 columns then ran
        1.2-4.5x, the GEMMs 1.2-1.35x and the attention 1.7x as fast, for 8% more driver build (the masked copy such a
        kernel gets); on the Zen 4 ("On the Zen 4, 2026-12-02") those rows 2.4-4.9x, a copy 3-10x, the f32 GEMM at 2048
        1.2x and the attention 1.1-1.8x as fast, its tutorials' builds as long. With AVX2 code on the same Zen 4 the
        built-ins ran those rows 1.8-3.3x and the f32 copy 3-10x as fast (the f16 copy of 512-2048 columns 0.57-1.0x),
        for 0.15 s more build at most, but the f32 GEMM at 0.47-0.71x, and they built the GEMMs and the attention in
        1.4-2.2x the time, up to 3 s, where a 2-core AVX2 machine's builds of them already were over the 3 s asked
        (docs/performance.md "Driver builds"): a kernel that multiplies keeps the local ids there, which spare that
        copy."""
        return self.vector_bits == 512 or (self.vector_bits == 256 and not multiplies)

    @property
    def f32_lanes(self) -> int:
        """f32 elements in one vector register (0: unknown)."""
        return self.vector_bits // 32

    @property
    def amx_bf16(self) -> bool:
        return "amx_bf16" in self.flags

    @property
    def amx_fp16(self) -> bool:
        return "amx_fp16" in self.flags

    @property
    def key(self) -> str:
        """The identity of the code's CPU in cache keys (sha256 of the sorted flags, the unit width and
        `shuffles_lanes`): code built for one set of flags is not another's, nor code for AVX-512 on 256-bit units
        (Zen 4) or an AMD CPU's a Xeon's with the same flags (dpas_emulation.k_loops)."""
        return hashlib.sha256(" ".join([*sorted(self.flags), f"units={self.unit_bits}",
                                        f"shuffles={self.shuffles_lanes}"]).encode()).hexdigest()

    def summary(self) -> str:
        """One line: model, ISA with its vector and unit widths, the extensions the kernels' code may use."""
        if self.isa == "unknown":
            return f"{self.model or 'unknown CPU'}: vector ISA unknown (no {CPUINFO} flags)"
        units = f" on {self.unit_bits}-bit units" if self.unit_bits != self.vector_bits else ""
        extensions = [name for flag, name in EXTENSIONS.items() if flag in self.flags]
        no_avx512 = "" if self.isa == "AVX-512" else ", no AVX-512"
        driver = f" (driver target {self.driver_arch})" if self.driver_arch else ""
        return (f"{self.model}: {self.isa} ({self.vector_bits}-bit{units}){no_avx512}{driver}"
                + (f"; {', '.join(extensions)}" if extensions else ""))

    def built_for(self, arch: str) -> CpuFeatures:
        """These features as code built for the driver architecture `arch` meets them: the vector flags it lacks
        dropped. An architecture outside DRIVER_ARCHES leaves them as they are."""
        allowed = DRIVER_ARCHES.get(arch)
        if allowed is None:
            return self
        return replace(self, flags=self.flags - (VECTOR_FLAGS - allowed), driver_arch=arch)


def parse_cpuinfo(text: str) -> CpuFeatures:
    """The features of the first processor described in /proc/cpuinfo's `text`."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # the end of the first processor's entry
            continue
        name, _, value = line.partition(":")
        fields.setdefault(name.strip(), value.strip())
    return CpuFeatures(fields.get("model name", ""), frozenset(fields.get("flags", "").split()),
                       fields.get("vendor_id", ""), fields.get("cpu family", ""))


@functools.cache
def host_cpu() -> CpuFeatures:
    """The host CPU's features as the OpenCL CPU runtime builds for them (module docstring), read once per process."""
    try:
        with open(CPUINFO) as info:
            cpu = parse_cpuinfo(info.read())
    except OSError:
        cpu = CpuFeatures(platform.processor() or platform.machine(), frozenset())
    return cpu.built_for(os.environ.get(DRIVER_ARCH_VARIABLE, ""))
