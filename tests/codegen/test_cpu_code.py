"""What the OpenCL CPU compiler makes of the `cpu` target's kernels, read from its own assembly
(`CL_CONFIG_DUMP_ASM`): counts, as tests/test_gpu_code.py has for the GPU compilers' ISA."""
from __future__ import annotations

import os
import re
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


# Two workgroups of 16 f32 rows of 256, each row loaded, scaled and stored by one subgroup in a loop over its blocks.
ROWS = """
import numpy as np
import xetile_jit as xetile


@xetile.kernel
def scale_rows(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), rows * 2.0)


x = np.random.default_rng(0).standard_normal((32, 256)).astype(np.float32)
y = np.zeros_like(x)
scale_rows[(2,)](x, y, BM=16, BN=256, target="cpu", device="opencl:cpu")
np.testing.assert_array_equal(y, 2 * x)
"""

# A row's scale from its statistics, which are one value a sub-group: 16 rows of 256 f32 a workgroup, two workgroups.
ROW_SCALE = """
import numpy as np
import xetile_jit as xetile


@xetile.kernel
def scale_by_rsqrt(x, y, BM: xetile.constexpr, BN: xetile.constexpr):
    m = xetile.program_id(0) * BM
    rows = xetile.load_tile(xetile.init_tile(x, [m, 0], [BM, BN]))
    scale = xetile.rsqrt(xetile.tile_reduce("add", rows * rows, [1]) + 1.0)
    xetile.store_tile(xetile.init_tile(y, [m, 0], [BM, BN]), rows * scale)


x = np.random.default_rng(0).standard_normal((32, 256)).astype(np.float32)
y = np.zeros_like(x)
scale_by_rsqrt[(2,)](x, y, BM=16, BN=256, target="cpu", device="opencl:cpu")
np.testing.assert_allclose(y, x / np.sqrt((x * x).sum(1, keepdims=True) + 1), rtol=1e-5)
"""

# Row sums and maxima of one subgroup's [R, 64] f32 tile, each lane holding 4 columns of every row, in a kernel that
# waits at a barrier, so that its lanes exchange values by sub-group built-ins (lane_slots.lockstep_kernel).
ROW_REDUCTIONS = """
import numpy as np
import xetile_jit as xetile


@xetile.kernel
def row_sums_and_maxima(x, sums, maxima, R: xetile.constexpr):
    rows = xetile.load_tile(xetile.init_tile(x, [0, 0], [R, 64], layout=xetile.Layout([1, 1], [R, 64])))
    xetile.barrier()
    xetile.store_tile(xetile.init_tile(sums, [0, 0], [R, 1]), xetile.tile_reduce("add", rows, [1]))
    xetile.store_tile(xetile.init_tile(maxima, [0, 0], [R, 1]), xetile.tile_reduce("max", rows, [1]))


for r in (32, 6):
    x = np.random.default_rng(r).standard_normal((r, 64)).astype(np.float32)
    x[r // 2, 5] = np.nan
    sums, maxima = np.zeros((r, 1), np.float32), np.zeros((r, 1), np.float32)
    row_sums_and_maxima[(1,)](x, sums, maxima, R=r, target="cpu", device="opencl:cpu")
    np.testing.assert_allclose(sums, x.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(maxima, np.nanmax(x, 1, keepdims=True))  # a NaN loses, as in Triton's max
"""


def code_lines(path, function: str | None = None) -> list[str]:
    """The instructions and labels (ending in ':') in the driver's assembly at `path`, or in `function`'s code alone
    (from its label on: the driver writes the kernel after the functions it calls)."""
    lines = [line.strip() for line in path.read_text().splitlines()]
    if function is not None:
        lines = lines[lines.index(f"{function}:"):]
    return [line for line in lines if line and not line.startswith((".", "#")) or line.endswith(":")]


def instructions(path, function: str) -> list[str]:
    """The mnemonics of `function`'s code in the driver's assembly at `path`, from its label on."""
    return [line.split()[0] for line in code_lines(path, function) if not line.endswith(":")]


def gathers_and_scatters(path, function: str | None = None) -> int:
    """The gathers and scatters in the driver's assembly at `path`, or in `function`'s code alone."""
    return sum(is_gather_or_scatter(line) for line in code_lines(path, function))


def is_gather_or_scatter(line: str) -> bool:
    return line.split()[0].startswith(("vgather", "vpgather", "vscatter", "vpscatter"))


# a vector load or store of a whole register through a general register other than the stack pointer
WHOLE_VECTOR = re.compile(r"^v(movups|movaps|movdqu\w*|movdqa\w*)\s+"
                          r"(\S*\(%r(?!sp)\w+.*,\s*%[xyz]mm\d+|%[xyz]mm\d+,\s*\S*\(%r(?!sp).*)$")


def loops(path, function: str | None = None) -> list[list[str]]:
    """The instructions of each loop (a label and a later jump back to it) in the assembly at `path`."""
    code = code_lines(path, function)
    labels = {line[:-1]: i for i, line in enumerate(code) if line.endswith(":")}
    found = []
    for i, line in enumerate(code):
        target = line.split()[-1]
        if line.startswith("j") and labels.get(target, i + 1) <= i:
            found.append([x for x in code[labels[target]:i + 1] if not x.endswith(":")])
    return found


def driver_assembly(tmp_path, source: str, **variables: str) -> list:
    """The assembly files the driver writes while `source` (a script) runs in a fresh process with the environment
    `variables` besides this one's, in build order."""
    cpu_queue()
    script = tmp_path / "kernels.py"
    script.write_text(source)
    env = os.environ | variables | {"CL_CONFIG_DUMP_ASM": "1", "CL_CONFIG_DUMP_FILE_NAME_PREFIX": str(tmp_path / "d"),
                                    "XETILE_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return sorted(tmp_path.glob("d_*.s"), key=lambda path: int(path.name.split("_")[1]))


def test_a_tile_mma_in_nested_loops_reads_its_blocks_as_in_one_loop(tmp_path):
    """The block loads and stores are inlined (FunctionControl Inline): left as calls in the nested loops, the driver
    built their vector variant, with the coordinates per lane, and every block became gathers and scatters (36
    against 135 GFLOP/s for a 2048^3 GEMM; docs/performance.md "CPU notes"). One 8x16 C block shows it as an 8x64
    one does, in a third of its build time: with the blocks left as calls, the nested loops had 576 gathers and
    scatters against the one loop's 376."""
    one_loop, nested = driver_assembly(tmp_path, KERNELS)
    assert gathers_and_scatters(nested) == gathers_and_scatters(one_loop)


def element_moves(lines: list[str]) -> int:
    """The instructions of `lines` that insert an element into a vector register or extract one: a load gathered
    element by element, without a gather instruction."""
    return sum(line.startswith(("vpinsr", "vpextr", "vinsertps", "vextractps")) for line in lines)


def test_a_tile_mma_with_avx2_reads_b_as_whole_vectors(tmp_path):
    """A DPAS kernel with AVX2 code reads its lane id as the local x (codegen/llvm/work_item_ids.py), and reads B's
    columns in B's memory (codegen/cpu/in_place_b.py), stepping from lane to lane by the lane's index as i64
    (work_item_ids.LANE_INDEX): a loop a B block fills its column with two whole-vector loads a row (16 lanes' f32),
    and the loops over k move no element either. From the lane id truncated to i32 and extended again, the driver
    took every address as any lane's and loaded B's blocks element by element (707 element inserts and extracts in
    this kernel, a fifth of the tutorial f32 GEMM's time on the AVX2 EPYC). Only the border path, each element
    tested, gathers."""
    one_loop, _ = driver_assembly(tmp_path, KERNELS, CL_CONFIG_CPU_TARGET_ARCH="core-avx2")
    small = [body for body in loops(one_loop, "one_loop") if len(body) < 32]  # innermost
    columns = [body for body in small if sum(bool(WHOLE_VECTOR.match(line)) for line in body) == 2
               and not any(line.startswith("vfmadd") for line in body)]
    products = [body for body in small if any(line.startswith("vfmadd231ps") and "ymm" in line for line in body)]
    assert columns and products
    assert [element_moves(body) for body in columns + products] == [0] * len(columns + products)
    assert gathers_and_scatters(one_loop, "one_loop") == 0


def test_a_row_kernel_reads_and_writes_whole_vectors(tmp_path):
    """The block coordinates are clamped with compares and selects: OpenCL's s_clamp, which the driver's vectorizer
    took as varying across the sub-group, made every address of the row per lane, and the kernel read its blocks
    with 72 gathers (4096x512 f16 rows loaded, scaled and stored: 1.7 ms, 0.3 with the selects; docs/performance.md
    "CPU notes"). So the loop that reads and writes a row inside the array takes its 16 blocks as whole vectors, with
    no gather or scatter; the border path, element by element as the emulation is, gathers and scatters."""
    (rows,) = driver_assembly(tmp_path, ROWS)
    blocks = 256 // 16  # a row's blocks of one sub-group's lanes
    fast = [body for body in loops(rows, "scale_rows") if not any(map(is_gather_or_scatter, body))
            and sum(bool(WHOLE_VECTOR.match(line)) for line in body) >= 2 * blocks]
    assert fast
    assert gathers_and_scatters(rows, "scale_rows") > 0


def test_a_rows_rsqrt_of_its_statistics_is_one_scalar_square_root_and_division(tmp_path):
    """rsqrt is 1 / sqrt(x) on the CPU targets (CpuLowering.rule_opencl): the driver keeps a call of the OpenCL
    rsqrt a call of its 16-wide SVML function even on a sub-group-uniform value, with every vector register saved
    around it (layer norm's scale of a row; docs/performance.md "On the Xeon AVX-512")."""
    (rows,) = driver_assembly(tmp_path, ROW_SCALE)
    code = instructions(rows, "scale_by_rsqrt")
    assert "vsqrtss" in code and "vdivss" in code
    assert "svml" not in rows.read_text().split("scale_by_rsqrt:")[1]


def test_a_reduction_across_the_lanes_of_several_rows_is_vector_code_with_avx2(tmp_path):
    """A whole sub-group's reduction of a lane's rows is a reduce-scatter and a broadcast a row
    (codegen/llvm/lowering.py scattered_reduction): the driver's own reduction of each row, with AVX2 code, is a
    scalar add a lane (this 32-row sum and maximum: 1,024 `vaddss` in the kernel and its masked copy; Zen 4,
    2026-12-03). 32 rows and 6 (whose halves run odd after one halving) are right, a NaN in a row its sum and not its
    maximum, and no row is summed lane by lane."""
    kernels = driver_assembly(tmp_path, ROW_REDUCTIONS, CL_CONFIG_CPU_TARGET_ARCH="core-avx2")
    assert len(kernels) == 2
    for path in kernels:
        code = instructions(path, "row_sums_and_maxima")
        assert code.count("vaddss") == 0 and code.count("vaddps") > 0
