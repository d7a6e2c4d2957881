"""What the OpenCL CPU compiler makes of the `cpu` target's kernels, read from its own assembly
(`CL_CONFIG_DUMP_ASM`): counts, as tests/test_gpu_code.py has for the GPU compilers' ISA."""
from __future__ import annotations

import os
import subprocess
import sys

from spirv_tools import cpu_queue

# One subgroup's [8, 16] x K32 f32 GEMM over K = 1024, with its K loop alone and inside another loop; the kernels are
# built in that order, so the driver writes their assembly as d_1_*.s and d_2_*.s.
KERNELS = """
import numpy as np
import xetile_jit as xetile


@xetile.kernel
def one_loop(a, b, c, K, BK: xetile.constexpr):
    ta = xetile.init_tile(a, [0, 0], [8, BK])
    tb = xetile.init_tile(b, [0, 0], [BK, 16])
    acc = xetile.zeros([8, 16], xetile.float32)
    for k in range(0, K, BK):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
    xetile.store_tile(xetile.init_tile(c, [0, 0], [8, 16]), acc)


@xetile.kernel
def nested_loops(a, b, c, K, BK: xetile.constexpr):
    ta = xetile.init_tile(a, [0, 0], [8, BK])
    tb = xetile.init_tile(b, [0, 0], [BK, 16])
    acc = xetile.zeros([8, 16], xetile.float32)
    for chunk in range(0, K, 4 * BK):
        for k in range(0, 4 * BK, BK):
            acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc)
            ta = xetile.update_tile_offset(ta, [0, BK])
            tb = xetile.update_tile_offset(tb, [BK, 0])
    xetile.store_tile(xetile.init_tile(c, [0, 0], [8, 16]), acc)


rng = np.random.default_rng(0)
a, b = rng.standard_normal((8, 1024)).astype(np.float32), rng.standard_normal((1024, 16)).astype(np.float32)
for kernel in (one_loop, nested_loops):
    c = np.zeros((8, 16), np.float32)
    kernel[(1,)](a, b, c, 1024, BK=32, target="cpu", device="opencl:cpu")
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
"""


def gathers_and_scatters(path) -> int:
    return sum(line.split()[0].startswith(("vgather", "vpgather", "vscatter", "vpscatter"))
               for line in path.read_text().splitlines() if line.strip() and not line.lstrip().startswith((".", "#")))


def test_a_tile_mma_in_nested_loops_reads_its_blocks_as_in_one_loop(tmp_path):
    """The block loads and stores are inlined (FunctionControl Inline): left as calls in the nested loops, the driver
    built their vector variant, with the coordinates per lane, and every block became gathers and scatters (36
    against 135 GFLOP/s for a 2048^3 GEMM; docs/performance.md "CPU notes"). One 8x16 C block shows it as an 8x64
    one does, in a third of its build time: with the blocks left as calls, the nested loops had 576 gathers and
    scatters against the one loop's 376."""
    cpu_queue()
    script = tmp_path / "kernels.py"
    script.write_text(KERNELS)
    env = os.environ | {"CL_CONFIG_DUMP_ASM": "1", "CL_CONFIG_DUMP_FILE_NAME_PREFIX": str(tmp_path / "d"),
                        "XETILE_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (one_loop,), (nested,) = (sorted(tmp_path.glob(f"d_{n}_*.s")) for n in (1, 2))
    assert gathers_and_scatters(nested) == gathers_and_scatters(one_loop)
