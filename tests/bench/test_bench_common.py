"""bench/common.py: the machine line the benchmarks' headers start with names the CPU's model, vector ISA and
cores."""
import os
import pathlib
import sys

from xetile_jit.testing import host_cpu

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import common  # noqa: E402


def test_the_machine_line_names_the_cpu_and_its_cores():
    line = common.machine()
    assert line == f"CPU {host_cpu().summary()}; {os.cpu_count()} cores"
    assert host_cpu().model in line and (host_cpu().isa in line or "unknown" in line)
