"""isa_stats: the counts read from the ISA text of both Intel compiler stacks (the lines below are theirs, as
ocloc/iga print them)."""
import json

import numpy as np
import pytest
from conftest import tutorial

from xetile_jit.target.targets import get_target
from xetile_jit.toolchain import ocloc
from xetile_jit.toolchain.isa_stats import (BlockMessage, block_messages, dpas_count, format_summary, innermost_loops,
                                            one_line, spills, summary)

ISA = """\
L0:
(W)     mov (16|M0)              r3.0<1>:ud    0x0:ud
L100:
(W)     mov (1|M0)               r13.6<1>:d    r2.12<0;1,0>:d                   {I@5}
        send.ugm (1|M0)          r4       r13     null:0  0x0            0x02800283           {I@5,$3} // wr:1+0, rd:8; load_block2d.ugm.d16v.a64
        send.ugm (1|M0)          r19      r253    null:0  0x0            0x03000203           {I@4,$4} // wr:1+0, rd:16; load_block2d.ugm.d16.a64
        send.ugm (1|M0)          null     r9      null:0  0x0            0x02800283           {$5} // wr:1+0, rd:0; load_block2d.ugm.d16.a64.ca.ca
(W)     sync.nop                             null                             {Compacted,$3.dst}
        dpas.8x8 (16|M0)         r136:f        r136:f            r78:hf            r95.0:hf         {Atomic,Compacted}
        dpas.8x8 (16|M0)         r168:f        r168:f            r78:hf            r99.0:hf         {Compacted,$2}
(W&~f0.0) jmpi                               L200
(W)     add (1|M0)               r254.4<1>:q   r254.4<0;1,0>:q   32:w
(W)     jmpi                                 L100
L200:
        send.ugm (1|M0)          null     r4      r46:8   0x0            0x02000407           {I@3,$3} // wr:1+8, rd:0; store_block2d.ugm.d32.a64
"""


def test_block_messages_by_kind_data_and_size():
    assert block_messages(ISA) == [BlockMessage("load", "d16v", 8), BlockMessage("load", "d16", 16),
                                   BlockMessage("prefetch", "d16", 0), BlockMessage("store", "d32", 0)]
    assert dpas_count(ISA) == 2


def test_innermost_loop_counts():
    (loop,) = innermost_loops(ISA)
    assert (loop.dpas, loop.loads, loop.prefetches, loop.stores, loop.other_sends) == (2, 2, 1, 0, 0)
    assert loop.other == 4  # mov, the exit jmpi, add, the back jmpi (sync marks are not instructions)
    assert loop.other_per_dpas == 2
    assert loop.messages == {"load d16 rd16": 1, "load d16v rd8": 1, "prefetch d16": 1}


SPILLS = """\
(W)     send.dc0 (8|M0)          null     r0      r36:1   0x0            0x020F10D0           {$2} // wr:1h+1, rd:0; hword scratch block write x2
(W)     send.dc0 (16|M0)         r20      r0      null:0  0x0            0x024C3106           {$3} // wr:1h+0, rd:4; hword scratch block read x8
"""
# xe2 and later spill through LSC messages on the scratch surface (bmg, ocloc 26.27); a bti load is no spill
XE2_SPILLS = """\
(W)     send.ugm (1|M0)          r33      r2  null:0  0x89000000:a0.2        0x4240F500           {F@1,$2} // wr:1+0, rd:4; load.ugm.d32x64t.a32.ss[a0.2][A-0xEE00]
(W)     send.ugm (1|M0)          null     r2  r33:4  0x89000000:a0.2        0x4200F504           {F@1,$3} // wr:1+4, rd:0; store.ugm.d32x64t.a32.ss[a0.2][A-0xEE00]
(W)     send.ugm (1|M0)          r5       r3  null:0  0x0            0x0218E500           {$4} // wr:1+0, rd:2; load.ugm.d32x32t.a32.ca.cc.bti[255]
"""


def test_summary_of_a_kernel_and_its_loops():
    stats = json.loads(summary(ISA + SPILLS, 128, 8896, {}, 4096))
    assert (stats["grf_count"], stats["spill_bytes"], stats["slm_bytes"]) == (128, 8896, 4096)
    kernel, (loop,) = stats["kernel"], stats["loops"]
    assert (kernel["dpas"], kernel["loads"], kernel["stores"], kernel["other_sends"], kernel["scratch"]) == (2, 2, 1, 2, 2)
    assert loop["scratch"] == 0 and loop["dpas"] == 2
    table = format_summary(summary(ISA + SPILLS, 128, None, {}, 0)).splitlines()
    assert table[0] == "GRFs per thread: 128; spilled: unknown; SLM per workgroup: 0 B"
    assert table[2].split()[:8] == ["kernel", "2", "2", "1", "1", "2", "2", "5"]


def test_xe2_scratch_surface_messages_are_spills():
    stats = json.loads(summary(XE2_SPILLS, 128, 5632, {}, 0))
    assert (stats["kernel"]["other_sends"], stats["kernel"]["scratch"]) == (3, 2)
    assert (spills(XE2_SPILLS), spills(SPILLS), spills(ISA)) == (2, 2, 0)


@pytest.mark.skipif(not ocloc.available(get_target("xe2")), reason="the current ocloc is not installed")
def test_a_gemm_that_spills_on_xe2_counts_its_spills():
    """The tutorial GEMM with sg_data [64, 64] (a subgroup's f32 accumulator alone is 256 of bmg's 64-byte GRFs)
    spills in 256 GRFs: zeInfo's 7680 bytes a thread, and its spill and fill messages (0 when only the 2022 stack's
    "scratch" messages were recognized)."""
    a, b, c = np.zeros((512, 64), np.float16), np.zeros((64, 512), np.float16), np.zeros((512, 512), np.float32)
    kernel = tutorial("03-matrix-multiplication").matmul_kernel.warmup(
        a, b, c, 512, 512, 64, BM=256, BN=256, BK=32, sg_layout=[4, 4], sg_data=[64, 64], target="xe2")
    stats = json.loads(kernel.asm["isa_stats"])
    assert (stats["grf_count"], stats["spill_bytes"]) == (256, 7680)
    assert stats["kernel"]["scratch"] > 100 and stats["loops"][0]["scratch"] > 0


def test_one_line_for_the_tutorials():
    line = one_line(summary(ISA + SPILLS, 256, 0, {"b": "the pitch between memory rows is a multiple of 16 bytes"}, 0))
    assert line == ("kernel 2 dpas, 2 2D loads, 1 prefetches, 1 2D stores, 2 other sends, 5 other; main loop 2 dpas, "
                    "2 2D loads, 1 prefetches, 0 2D stores, 0 other sends, 4 other; 256 GRFs, spilled 0 B; element "
                    "loads for b")
    assert one_line(summary(SPILLS, 128, None, {}, 0)) == ("kernel 0 dpas, 0 2D loads, 0 prefetches, 0 2D stores, "
                                                       "2 other sends, 0 other; 128 GRFs, spilled unknown")
