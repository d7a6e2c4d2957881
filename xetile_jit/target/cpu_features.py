"""The host CPU's vector ISA, as the `cpu` target's code meets it: the OpenCL CPU runtime compiles a kernel's SPIR-V
for the CPU it runs on, so its vector width (AVX2: 256-bit, AVX-512: 512-bit), whether 512-bit instructions run on
256-bit units (AMD Zen 4 executes each as two halves), and the AMX tiles it may use for bf16 / f16 products decide
how fast a blocking is, and a native binary built on one CPU is not another's.

`host_cpu()` reads them once from /proc/cpuinfo (the first processor's entry: the runtime builds for the host, whose
processors share an ISA); where that file is absent or unreadable the model is the platform's processor name and
the flags are empty (`isa` "unknown"). `CpuFeatures.key` identifies the flags in the compile cache's keys (compiled
kernels of the `cpu` targets, the driver's native binaries, autotuning winners); `summary()` is the line
benchmarks print in their headers.
"""
from __future__ import annotations

import functools
import hashlib
import platform
from dataclasses import dataclass

CPUINFO = "/proc/cpuinfo"
# /proc/cpuinfo flag -> the name a summary prints, in the order it prints them
EXTENSIONS = {"fma": "FMA", "f16c": "F16C", "avx512_bf16": "AVX512-BF16", "avx512_fp16": "AVX512-FP16",
              "amx_bf16": "AMX-BF16", "amx_fp16": "AMX-FP16"}
AMD_ZEN4_FAMILY = "25"  # AMD family 25 with AVX-512 is Zen 4, whose vector units are 256 bits wide


@dataclass(frozen=True)
class CpuFeatures:
    """One CPU's vendor, family, model name and /proc/cpuinfo feature flags."""
    model: str
    flags: frozenset[str]
    vendor: str = ""
    family: str = ""

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
    def vector_registers(self) -> int:
        """The ISA's vector registers: 32 with AVX-512, 16 with AVX2, AVX and SSE (x86-64; 0: unknown)."""
        return {"AVX-512": 32, "AVX2": 16, "AVX": 16, "SSE4.2": 16}.get(self.isa, 0)

    def registers_for(self, bits: int) -> int:
        """The vector registers a value of `bits` bits takes (a lane value across a sub-group's lanes: 16 lanes' f32
        are two ymm registers, one zmm), at least 1; 0 where the ISA is unknown."""
        return -(-bits // self.vector_bits) if self.vector_bits else 0

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
        """The flags' identity in cache keys (sha256 of the sorted flags): code built for one set is not another's."""
        return hashlib.sha256(" ".join(sorted(self.flags)).encode()).hexdigest()

    def summary(self) -> str:
        """One line: model, ISA with its vector and unit widths, the extensions the kernels' code may use."""
        if self.isa == "unknown":
            return f"{self.model or 'unknown CPU'}: vector ISA unknown (no {CPUINFO} flags)"
        units = f" on {self.unit_bits}-bit units" if self.unit_bits != self.vector_bits else ""
        extensions = [name for flag, name in EXTENSIONS.items() if flag in self.flags]
        no_avx512 = "" if self.isa == "AVX-512" else ", no AVX-512"
        return (f"{self.model}: {self.isa} ({self.vector_bits}-bit{units}){no_avx512}"
                + (f"; {', '.join(extensions)}" if extensions else ""))


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
    """The host CPU's features (module docstring), read once per process."""
    try:
        with open(CPUINFO) as info:
            return parse_cpuinfo(info.read())
    except OSError:
        return CpuFeatures(platform.processor() or platform.machine(), frozenset())
