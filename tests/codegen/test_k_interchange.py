"""codegen/cpu/k_interchange.py: a GEMM's K loop on the `cpu` target as a loop over all of K for each group of C's
rows and B column, where its loops read A in its memory (AVX2); the loop as written where a block crosses its
array's border, and for a loop whose descriptors are read after it."""
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import AVX2, built_for_cpu, tutorial
from test_spirv_gemm import AVX512, global_loads
from test_spirv_path import ranged_loop_bodies
from xetile_jit.codegen.cpu.k_interchange import InterchangedK

DEVICE = "opencl:cpu"
SPLIT = dict(BM=256, BN=256, BK=32, sg_layout=[16, 4], sg_data=[16, 64], target="cpu")


def kernel_ir(kernel, *args, **options) -> str:
    return kernel.warmup(*args, **options).asm["llir"].split("define internal")[0]


def interchanged_loops(kernel: str, element: str = "float") -> list[str]:
    """The loops over all of K: a range known at run time, f32 sums carried, A's rows and B's row loaded (as
    `element`)."""
    return [body for body in ranged_loop_bodies(kernel) if "phi  float" in body and global_loads(body, element)]


@pytest.mark.parametrize("cpu", [AVX2, AVX512], ids=["avx2", "avx512"])
@pytest.mark.parametrize("m, n, k", [(512, 128, 128), (300, 260, 100)], ids=["inside", "border"])
def test_the_tutorial_gemm_sums_each_row_group_over_all_of_k(rng, monkeypatch, cpu, m, n, k):
    """The tutorial GEMM in 16x64 subgroup pieces (16 rows, 4 B columns of 16): with AVX2 for each B column the 16
    rows in groups of 6, 6 and 4 sums, 12 loops over all of K; with AVX-512 4 loops of 4 rows by the 4 columns
    (dpas_emulation.whole_k_loops). Each loads A's row for each of its rows and B's row for each column; the products
    exact (small integers): with B's rows 512 bytes apart the subgroups whose blocks lie inside the arrays take the
    loops over all of K, the others (C's columns 128-255) the K loop as written; with blocks across the arrays'
    borders and B's rows 1040 bytes apart every subgroup takes the K loop as written (k_interchange.B_ROW_BYTES)."""
    t = tutorial("03-matrix-multiplication")
    built_for_cpu(monkeypatch, t.matmul_kernel, cpu)
    a, b = (rng.integers(-8, 8, shape).astype(np.float32) for shape in ((m, k), (k, n)))
    c = np.zeros((m, n), np.float32)
    t.matmul_kernel[(xetile.cdiv(m, 256), xetile.cdiv(n, 256))](a, b, c, m, n, k, **SPLIT, device=DEVICE)
    np.testing.assert_array_equal(c, a @ b)
    loops = interchanged_loops(kernel_ir(t.matmul_kernel, a, b, c, m, n, k, **SPLIT))
    shapes = [(6, 1)] * 8 + [(4, 1)] * 4 if cpu is AVX2 else [(4, 4)] * 4  # (rows, B columns) of each loop
    assert sorted((body.count("phi  float"), global_loads(body, "float")) for body in loops) == \
        sorted((rows * columns, rows + columns) for rows, columns in shapes)


def test_the_sums_are_those_of_the_loop_as_written_bit_for_bit(rng, monkeypatch):
    """Each sum is the same fused multiply-adds in the same order of k either way: random f32 operands give the
    same bits with the interchange and without it."""
    t = tutorial("03-matrix-multiplication")
    a, b = (rng.standard_normal(shape).astype(np.float32) for shape in ((256, 160), (160, 128)))
    results = []
    for plan in (InterchangedK.plan, lambda self, loop: None):
        monkeypatch.setattr(InterchangedK, "plan", plan)
        built_for_cpu(monkeypatch, t.matmul_kernel, AVX2)
        c = np.zeros((256, 128), np.float32)
        t.matmul_kernel[(1, 1)](a, b, c, 256, 128, 160, **SPLIT, device=DEVICE)
        results.append(c)
    np.testing.assert_array_equal(results[0].view(np.uint32), results[1].view(np.uint32))
    assert np.abs(results[0] - a.astype(np.float64) @ b).max() < 1e-3


@xetile.kernel
def gemm_then_next_tile(a, b, c, d, K, BK: xetile.constexpr):
    """C = A @ B over K, then D = the A tile after the loop's last step (its descriptor read after the loop)."""
    ta = xetile.init_tile(a, [0, 0], [32, BK])
    tb = xetile.init_tile(b, [0, 0], [BK, 64])
    acc = xetile.zeros([32, 64], xetile.float32)
    for k in range(0, K, BK):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
        tb = xetile.update_tile_offset(tb, [BK, 0])
    xetile.store_tile(xetile.init_tile(c, [0, 0], [32, 64]), acc)
    xetile.store_tile(xetile.init_tile(d, [0, 0], [32, BK]), xetile.load_tile(ta))


def test_a_descriptor_read_after_the_loop_keeps_the_loop_as_written(rng, monkeypatch):
    """The interchange leaves no descriptor moved to the loop's end, so a loop whose descriptor is read after it
    stays as written: no loop over all of K, and the right numbers."""
    built_for_cpu(monkeypatch, gemm_then_next_tile, AVX2)
    a, b = (rng.integers(-8, 8, shape).astype(np.float32) for shape in ((32, 96), (64, 64)))
    c, d = np.zeros((32, 64), np.float32), np.full((32, 32), 7, np.float32)
    gemm_then_next_tile[(1,)](a, b, c, d, 64, BK=32, device=DEVICE)
    np.testing.assert_array_equal(c, a[:, :64] @ b)
    np.testing.assert_array_equal(d, a[:, 64:96])
    assert interchanged_loops(kernel_ir(gemm_then_next_tile, a, b, c, d, 64, BK=32, target="cpu")) == []


@xetile.kernel
def gemm_by_steps(a, b, c, K, STEP):
    """C = A @ B over K in K steps of 32, the loop's step a kernel argument."""
    ta, tb = xetile.init_tile(a, [0, 0], [32, 32]), xetile.init_tile(b, [0, 0], [32, 64])
    acc = xetile.zeros([32, 64], xetile.float32)
    for k in range(0, K, STEP):
        acc = xetile.tile_mma(xetile.load_tile(ta), xetile.load_tile(tb), acc)
        ta, tb = xetile.update_tile_offset(ta, [0, 32]), xetile.update_tile_offset(tb, [32, 0])
    xetile.store_tile(xetile.init_tile(c, [0, 0], [32, 64]), acc)


def test_a_loop_whose_step_is_known_at_run_time_only_stays_as_written(rng, monkeypatch):
    """The loops over all of K count the K loop's iterations from its constant step: a loop whose step is a kernel
    argument has none and stays as written, with the right numbers."""
    built_for_cpu(monkeypatch, gemm_by_steps, AVX2)
    a, b = (rng.integers(-8, 8, shape).astype(np.float32) for shape in ((32, 96), (96, 64)))
    c = np.zeros((32, 64), np.float32)
    gemm_by_steps[(1,)](a, b, c, 96, 32, device=DEVICE)
    np.testing.assert_array_equal(c, a @ b)
    assert interchanged_loops(kernel_ir(gemm_by_steps, a, b, c, 96, 32, target="cpu")) == []


@pytest.mark.parametrize("cpu", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_f16_sums_over_all_of_k_where_a_sum_takes_one_register(rng, monkeypatch, cpu):
    """The DPAS emulation's f16 products (A and B widened as they are read) in loops over all of K with AVX-512, 4
    rows by 4 B columns; with AVX2, where each loop would widen A's and B's elements for two registers a sum, the K
    loop stays as written (dpas_emulation.whole_k_loops). Exact either way (small integers)."""
    t = tutorial("03-matrix-multiplication")
    built_for_cpu(monkeypatch, t.matmul_kernel, cpu)
    a, b = (rng.integers(-8, 8, shape).astype(np.float16) for shape in ((512, 128), (128, 64)))
    c = np.zeros((512, 64), np.float32)
    t.matmul_kernel[(2, 1)](a, b, c, 512, 64, 128, **SPLIT, device=DEVICE)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
    loops = interchanged_loops(kernel_ir(t.matmul_kernel, a, b, c, 512, 64, 128, **SPLIT), "i16")
    assert [(body.count("phi  float"), global_loads(body, "i16")) for body in loops] == \
        ([] if cpu is AVX2 else [(16, 8)] * 4)
