"""The GPU code path, checked by the Intel GPU compiler offline (ocloc for PVC): the tutorial kernels
compiled for xe-hpc hold the DPAS and 2D block instructions they were lowered to, and no unresolved call."""
import importlib.util
import pathlib

import numpy as np
import pytest

from xetile_jit.backend import ocloc

pytestmark = pytest.mark.skipif(not ocloc.available(), reason="ocloc / iga64 are not installed")
ROOT = pathlib.Path(__file__).resolve().parents[1]


def tutorial(name: str):
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), ROOT / "tutorials" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_gemm_for_pvc_uses_dpas_and_block_io(dtype):
    import ml_dtypes
    dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    mm = tutorial("03-matrix-multiplication")
    a, b, c = np.zeros((512, 512), dtype), np.zeros((512, 512), dtype), np.zeros((512, 512), np.float32)
    compiled = mm.matmul_kernel.warmup(a, b, c, 512, 512, 512, BM=256, BN=256, BK=32, target="xe-hpc",
                                       sg_layout=[8, 4], sg_data=[32, 64])
    isa = compiled.asm["isa"]
    sends = [line for line in isa.splitlines() if "send" in line]
    # per subgroup: a 32x64 C tile of 8x16 blocks (4x4 of them), K = 32 in steps of 16
    assert isa.count("dpas.8x8 (16|M0)") == 4 * 4 * 2
    assert any("load_block2d" in s for s in sends) and any("store_block2d" in s for s in sends)
    assert "calla" not in isa
    assert compiled.build_options == "-ze-opt-large-register-file" and "scratch" not in isa  # no spills
