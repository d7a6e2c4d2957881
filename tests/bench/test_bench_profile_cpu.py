"""bench/profile_cpu.py: perf samples attributed to the instructions of the OpenCL CPU driver's code, by loop."""
import collections
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import profile_cpu  # noqa: E402

# objdump -D -b binary of two nested loops and one loop after them: the inner one at 0x1008-0x1010
OBJDUMP = """
/tmp/x.bin:     file format binary

Disassembly of section .data:

0000000000001000 <.data>:
    1000:	xor    %eax,%eax
    1004:	xor    %ecx,%ecx
    1008:	vfmadd231ps %ymm2,%ymm3,%ymm4
    100c:	inc    %ecx
    1010:	jne    0x1008
    1014:	inc    %eax
    1018:	jne    0x1004
    101c:	vmovups %ymm4,(%rdi)
    1020:	jne    0x101c
    1024:	ret
"""
PERF = """    1008 (/tmp/perf-4242.map)
    1008 (/tmp/perf-4242.map)
    100c (/tmp/perf-4242.map)
    101c (/tmp/perf-4242.map)
    1024 (/tmp/perf-4242.map)
    7f00aa (/usr/lib/libc.so.6)
"""


def test_only_the_samples_in_jit_code_count():
    samples = profile_cpu.jit_samples(PERF)
    assert samples == collections.Counter({0x1008: 2, 0x100c: 1, 0x101c: 1, 0x1024: 1})


def test_innermost_loops_hold_no_other_loop():
    code = profile_cpu.disassembly(OBJDUMP, collections.Counter())
    assert [(code[loop.start].address, code[loop.stop - 1].address) for loop in profile_cpu.innermost_loops(code)] \
        == [(0x1008, 0x1010), (0x101c, 0x1020)]


def test_the_report_gives_each_loop_size_its_samples_and_the_rest():
    samples = collections.Counter({0x1008: 2, 0x100c: 1, 0x101c: 1, 0x1024: 1})
    lines = profile_cpu.report(profile_cpu.disassembly(OBJDUMP, samples), 10, 2)
    assert lines[0] == "5 of 10 samples (50.0%) in this code"
    assert lines[1:4] == ["  loops of 3 instructions (x1): 3 samples, 60.0%",
                          "  loops of 2 instructions (x1): 1 samples, 20.0%",
                          "  outside those loops: 1 samples, 20.0%"]
    assert lines[4].split() == ["2", "1008", "vfmadd231ps", "%ymm2,%ymm3,%ymm4"]
    assert len(lines) == 6
