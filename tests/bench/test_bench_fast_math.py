"""bench/bench_fast_math.py's ISA figures: instructions an element and the math-unit count, and a peer row."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import bench_fast_math as bench  # noqa: E402  (needs bench/ on the path for its `common` import)

ISA = """\
         mov (16|M0)   r10.0<1>:f   r2.0<1;1,0>:f
L16:
         math.exp (16|M0)   r12.0<1>:f   r10.0<1;1,0>:f
         add (16|M0)   r10.0<1>:f   r10.0<1;1,0>:f   r12.0<1;1,0>:f
         sync.nop                null
         (W&f0.0) jmpi                       L16
         send.ugm (16|M0)   null   r20   r10:2   0x0   0x04000504
"""


def test_per_element_counts_the_kernel_and_its_loop_per_subgroup_and_element():
    """5 instructions (the label and the sync mark left out), 3 of them in the loop, 4 subgroups over 8 elements;
    one math op."""
    assert bench.per_element(ISA, 4, 8) == {"kernel_per_element": 2.5, "math": 1, "loop_per_element": 1.5}


def test_a_row_upstream_refused_prints_its_reason(capsys):
    ours = {"kernel": "attention", "fast_math": True, "subgroups": 4, "kernel_per_element": 4.37, "math": 32}
    bench.print_isa([ours | {"peer": {"mlir": {"skipped": "mlir-opt: invalid layout"}}},
                     ours | {"kernel": "softmax", "peer": {"mlir": {"kernel_per_element": 3.6, "math": 192}}}],
                    "mlir")
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].endswith("skipped: mlir-opt: invalid layout") and lines[1].split()[:4] == ["attention", "True",
                                                                                              "4", "4.37"]
    assert lines[2].split()[-3:] == ["3.6", "-", "192"]
