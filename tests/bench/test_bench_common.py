"""bench/common.py: the machine line the benchmarks' headers start with names the CPU's model, vector ISA and
cores, and the variables holding the baselines to another ISA."""
import os
import pathlib
import sys

from xetile_jit.testing import host_cpu

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import common  # noqa: E402


def test_the_machine_line_names_the_cpu_and_its_cores(monkeypatch):
    for name in common.BASELINE_ISA_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    line = common.machine()
    assert line == f"CPU {host_cpu().summary()}; {os.cpu_count()} cores"
    assert host_cpu().model in line and (host_cpu().isa in line or "unknown" in line)


def test_the_machine_line_says_when_the_baselines_are_held_to_another_isa(monkeypatch):
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "AVX2")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    assert common.machine().endswith("cores; baselines MKL_ENABLE_INSTRUCTIONS=AVX2 OPENBLAS_CORETYPE=Haswell")
