"""Layout completion: inst_data and the lane fields decide blocking and lane distribution. A user's inst_data is
honoured (the load messages follow it, a convert_layout regroups in registers for DPAS) or rejected naming the rule."""
import re

import numpy as np
import pytest
from conftest import rand
from spirv_tools import cpu_queue
from test_passes import gemm

import xetile_jit as xetile
from xetile_jit.backend import ocloc
from xetile_jit.backend.pipeline import lower
from xetile_jit.ir.core import walk
from xetile_jit.ir.printer import print_func
from xetile_jit.ir.xetile_ops import ConvertLayoutOp


SMALL = dict(BM=64, BN=64, BK=32, sg_layout=[2, 2], sg_data=[32, 32])


def small_args(rng, k=64):
    a, b = rand(rng, (128, k), np.float16), rand(rng, (k, 128), np.float16)
    return a, b, np.zeros((128, 128), np.float32), k


def layouts(inst_a=None, inst_b=None, **lanes):
    return dict(LA=xetile.Layout([2, 2], [32, 32], inst_data=inst_a, **lanes),
                LB=xetile.Layout([2, 2], [32, 32], inst_data=inst_b))


def block_loads(llir: str) -> list[str]:
    """The 2D block load messages the kernel calls, by vISA shape, once per call site."""
    return re.findall(r"call [^@]*@\"?xe_block2d_load_(d\w+)\"?\(", llir)


def test_default_completion_loads_dpas_blocks(rng):
    a, b, c, k = small_args(rng)
    compiled = gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(), target="cpu")
    loads = block_loads(compiled.asm["llir"])
    # per subgroup and K step: A 32x32 in 8x16 blocks (8), B 32x32 in 16x16 DPAS B blocks (4)
    assert sorted(set(loads)) == ["d16_1x16x16nn", "d16_1x16x8nn"]
    assert loads.count("d16_1x16x8nn") == 8 and loads.count("d16_1x16x16nn") == 4


def test_user_inst_data_is_honoured_and_converted_in_registers(rng):
    """inst_data [16, 16] on A: the loads read 16x16 blocks (half the messages of 8x16), a tile_conv_layout to
    DPAS's [8, 16] follows in the XeTile IR and costs no shared local memory; the numbers do not change."""
    a, b, c, k = small_args(rng)
    kwargs = dict(**SMALL, **layouts(inst_a=[16, 16], inst_b=[16, 16]))
    compiled = gemm.warmup(a, b, c, 128, 128, k, **kwargs, target="cpu")
    assert block_loads(compiled.asm["llir"]).count("d16_1x16x16nn") == 4 + 4
    assert "xe_block2d_load_d16_1x16x8nn" not in compiled.asm["llir"]
    assert "memref.alloc" not in compiled.asm["xegpu-sg"] and "gpu.barrier" not in compiled.asm["xegpu-sg"]
    traced = gemm.warmup(a, b, c, 128, 128, k, **kwargs, target="numpy").func
    func = lower(traced, "xetile-layouts")["xetile-layouts"]
    (convert,) = [op for op in walk(func.body) if isinstance(op, ConvertLayoutOp)]
    assert convert.operands[0].layout.inst_data == (16, 16) and convert.result.layout.inst_data == (8, 16)
    assert "inst_data = [16, 16]" in print_func(func)
    gemm[(2, 2)](a, b, c, 128, 128, k, **kwargs, device=cpu_queue())
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("inst, detail", [
    ([64, 16], "inst_data [64, 16] on target cpu: a 2D block load is at most 32 rows high, not 64"),
    ([32, 16], "inst_data [32, 16] on target cpu: a lane holds 32 elements of a 32x16 block on sub-group 16; "
               "SPIR-V vectors have at most 16"),
    ([16, 64], "inst_data [16, 64] on target cpu: a 2D block is 4 to 64 bytes wide (array length included), not 128"),
])
def test_illegal_inst_data_names_the_rule(rng, inst, detail):
    a, b = rand(rng, (128, 64), np.float16), rand(rng, (64, 128), np.float16)
    la = xetile.Layout([2, 1], [64, 64], inst_data=inst)
    with pytest.raises(xetile.CompilationError, match=re.escape(f"{detail} [inst_data fits the target's "
                                                                "instruction blocks]")) as info:
        gemm.warmup(a, b, np.zeros((128, 128), np.float32), 128, 128, 64, BM=128, BN=64, BK=64, LA=la, LB=None,
                    sg_layout=[2, 1], sg_data=[64, 64], target="cpu")
    assert "ta = xetile.init_tile(a, [m, 0], [BM, BK], layout=LA)" in str(info.value)  # test_passes.gemm


def test_lane_fields_other_than_the_targets_are_rejected(rng):
    a, b, c, k = small_args(rng)
    with pytest.raises(xetile.CompilationError, match=re.escape(
            "lane_layout [4, 4] with lane_data [1, 4] is not how target cpu distributes a 8x16 block (lane_layout "
            "[1, 16], lane_data [1, 1]) [lane_layout and lane_data are the target's distribution of inst_data]")):
        gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(lane_layout=[4, 4], lane_data=[1, 4]), target="cpu")
    compiled = gemm.warmup(a, b, c, 128, 128, k, **SMALL, **layouts(lane_layout=[1, 16], lane_data=[1, 1]),
                           target="cpu")
    assert "inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]" in compiled.asm["xegpu"]


@pytest.mark.skipif(not ocloc.available(), reason="ocloc / iga64 are not installed")
def test_pvc_isa_follows_inst_data():
    """The tutorial GEMM for xe-hpc (256x256 tile, sg_layout [8, 4]): with A in 16x16 blocks the main loop sends
    half the A load messages of the default 8x16 blocks; B is read in 16x16 DPAS B blocks either way."""
    a, b, c = (np.zeros((512, 512), t) for t in (np.float16, np.float16, np.float32))
    base = dict(BM=256, BN=256, BK=32, sg_layout=[8, 4], sg_data=[32, 64], target="xe-hpc")
    lb = xetile.Layout([8, 4], [32, 64], inst_data=[16, 16])
    counts = {}
    for inst in ([8, 16], [16, 16]):
        la = xetile.Layout([8, 4], [32, 32], inst_data=inst)
        isa = gemm.warmup(a, b, c, 512, 512, 512, LA=la, LB=lb, **base).asm["isa"]
        loads = [line for line in isa.splitlines() if "load_block2d" in line]
        counts[tuple(inst)] = len(loads)
        assert isa.count("dpas.8x8 (16|M0)") == 32 and "calla" not in isa and "scratch" not in isa
    # B: 32x64 per subgroup in 16x16 blocks = 8; A: 32x32 in 8x16 = 8, in 16x16 = 4
    assert counts == {(8, 16): 8 + 8, (16, 16): 4 + 8}
