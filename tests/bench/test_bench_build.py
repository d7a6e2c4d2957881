"""bench/bench_build.py: the compiles an XETILE_TIMING log shows, each with our own seconds and the driver's."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import bench_build  # noqa: E402

LOG = """xetile timing: add: disk cache lookup 0.1 ms
xetile timing: add: trace 1.0 ms
xetile timing: add: llvm-ir 76.0 ms
xetile timing: add: spirv 3.0 ms
xetile timing: gemm: trace 2.0 ms
xetile timing: gemm: llvm-ir 40.0 ms
xetile timing: add: driver build (opencl:cpu:0, cpu) 507.5 ms
xetile timing: add: first launch 518.1 ms
xetile timing: gemm: driver build (opencl:cpu:0, xe-emulated) 3250.0 ms
xetile timing: add: trace 1.5 ms
"""


def test_a_compile_is_its_stages_from_the_trace_and_its_kernels_next_driver_build():
    rows = [{**row, "ours_s": round(row["ours_s"], 6)} for row in bench_build.compiles(LOG)]
    assert rows == [
        {"kernel": "add", "ours_s": 0.08, "driver_s": 0.5075, "built_for": "cpu"},
        {"kernel": "gemm", "ours_s": 0.042, "driver_s": 3.25, "built_for": "xe-emulated"},
        {"kernel": "add", "ours_s": 0.0015, "driver_s": None}]


def test_the_worst_builds_of_a_log_come_slowest_first(tmp_path):
    log = tmp_path / "timing.log"
    log.write_text(LOG)
    assert [line.split()[-2:] for line in bench_build.worst(log, 5)] == [["gemm", "(xe-emulated)"], ["add", "(cpu)"]]
    assert bench_build.worst(log, 1)[0].split()[0] == "3.25"
