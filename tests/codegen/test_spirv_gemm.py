"""GEMM through SPIR-V on opencl:cpu: f16, bf16 and f32 inputs, unaligned M/N/K,
order=[0, 1], tile_transpose, element-wise pre/post ops, tile_reduce + tile_broadcast, atomic_rmw_tile,
workgroup tiles sg_layout [8, 4] / sg_data [32, 64] and [2, 2] / [64, 64]; random shapes and layouts through
every IR level and SPIR-V; the compile caches; USM arrays used in place."""
import os
import re
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from conftest import AVX2, assert_close, dtype_id, rand
from spirv_tools import cpu_queue
from conftest import built_for_cpu, tutorial
from device_cover import covering
from test_passes import run_func
from test_spirv_path import loop_bodies
from usm_arrays import UsmArray
from xetile_jit.codegen.xe.dpas_emulation import CARRIED_SUMS, carried_sums
from xetile_jit.codegen.llvm import lane_slots
from xetile_jit.codegen.xe.llvm_helpers import BROADCAST, SHUFFLE
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir.numeric import tf32
from xetile_jit.runtime.cache import decode
from xetile_jit.target.cpu_features import CpuFeatures

DEVICE = "opencl:cpu"
SLOT_CALL = f'@"{lane_slots.SLOT}"('  # a store to or a load from a lane's slot (codegen/llvm/lane_slots.py)


@xetile.kernel
def gemm(a, b, bias, c, rowsum, M, N, K, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr,
         B_COLUMN_MAJOR: xetile.constexpr, SCALE_A: xetile.constexpr, REDUCE: xetile.constexpr = True):
    """C = relu(scale * A @ B + bias) with B read row-major, through order=[0, 1] or as transpose(B^T);
    with REDUCE, C's row max is subtracted and rowsum[m] += sum of C's row (atomically, over the column
    blocks)."""
    m = xetile.program_id(0) * BM
    n = xetile.program_id(1) * BN
    ta = xetile.init_tile(a, [m, 0], [BM, BK])
    if B_COLUMN_MAJOR == "order":
        tb = xetile.init_tile(b, [0, n], [BK, BN], order=[0, 1])
    elif B_COLUMN_MAJOR == "transpose":
        tb = xetile.init_tile(b, [n, 0], [BN, BK])
    else:
        tb = xetile.init_tile(b, [0, n], [BK, BN])
    acc = xetile.zeros([BM, BN], xetile.float32)
    for k in range(0, K, BK):
        va = xetile.load_tile(ta)
        if SCALE_A:
            va = va * 2
        vb = xetile.load_tile(tb)
        if B_COLUMN_MAJOR == "transpose":
            vb = xetile.tile_transpose(vb, [1, 0])
            tb = xetile.update_tile_offset(tb, [0, BK])
        else:
            tb = xetile.update_tile_offset(tb, [BK, 0])
        acc = xetile.tile_mma(va, vb, acc)
        ta = xetile.update_tile_offset(ta, [0, BK])
    out = xetile.maximum(acc + xetile.load_tile(xetile.init_tile(bias, [0, n], [1, BN])), 0.0)
    if REDUCE:
        out = out - xetile.tile_broadcast(xetile.tile_reduce("max", out, [1]), [1], [BM, BN])
        xetile.atomic_rmw_tile("add", xetile.tile_reduce("add", out, [1]), xetile.init_tile(rowsum, [m, 0], [BM, 1]))
    xetile.store_tile(xetile.init_tile(c, [m, n], [BM, BN]), out)


def make_args(rng, m, n, k, dtype, b_kind):
    a = rand(rng, (m, k), dtype, -2, 2)
    b_logical = rand(rng, (k, n), dtype, -2, 2)
    b = {"order": np.ascontiguousarray(b_logical.T).T, "transpose": np.ascontiguousarray(b_logical.T),
         "rows": b_logical}[b_kind]
    return (a, b, rand(rng, (1, n), np.float32), np.zeros((m, n), np.float32), np.zeros((m, 1), np.float32),
            m, n, k), b_logical


def reference(a, b_logical, bias, scale, reduce, width):
    """C, and the row sums over whole tiles of `width` columns: past N the tile reads zeros (padding)."""
    padded = np.zeros((b_logical.shape[0], width))
    padded[:, :b_logical.shape[1]] = b_logical
    bias_padded = np.zeros((1, width))
    bias_padded[:, :bias.shape[1]] = bias
    c = np.maximum(scale * a.astype(np.float64) @ padded + bias_padded, 0)
    if reduce:
        c = c - c.max(1, keepdims=True)
    return c[:, :b_logical.shape[1]], c.sum(1, keepdims=True)


def check_gemm(rng, dtype, b_kind, sg_layout, sg_data, reduce):
    bm, bn = sg_layout[0] * sg_data[0], sg_layout[1] * sg_data[1]
    m, n, k = bm + 37, bn - 29, 80  # unaligned in every dimension
    args, b_logical = make_args(rng, m, n, k, dtype, b_kind)
    grid = (xetile.cdiv(m, bm), xetile.cdiv(n, bn))
    kwargs = dict(BM=bm, BN=bn, BK=32, B_COLUMN_MAJOR=b_kind, SCALE_A=dtype != np.float32, REDUCE=reduce,
                  sg_layout=sg_layout, sg_data=sg_data)
    gemm[grid](*args, device=DEVICE, **kwargs)
    a, _, bias, c, rowsum, *_ = args
    expected, sums = reference(a, b_logical, bias, 2 if kwargs["SCALE_A"] else 1, reduce, grid[1] * bn)
    assert_close(c, expected, np.float32, scale=k)
    if reduce:
        assert_close(rowsum, sums, np.float32, scale=k * n)


def test_gemm_with_64x64_subgroup_tiles(rng):
    """sg_layout [2, 2] / sg_data [64, 64]: each subgroup holds a 64x64 C piece (16 DPAS blocks per K step). The
    driver's build follows the code of one subgroup's piece, whatever the number of subgroups, and each dtype and
    each B layout with 64 columns a subgroup (the messages of a B piece) are the 8x4 tile's cases of
    test_gemm_with_row_reductions_and_atomics, so one case here: f16, B through tile_transpose (1.7 s of driver build
    on the Zen 4 of docs/performance.md, 2.9 s with AVX2 code; B row-major as long), without the epilogue's
    reductions."""
    check_gemm(rng, np.float16, "transpose", [2, 2], [64, 64], reduce=False)


SUBGROUP_TILES = {"2x2": ([2, 2], [16, 32]), "8x4": ([8, 4], [32, 64])}
DTYPE_NAMES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
# The dtype decides the conversions and DPAS, the B layout with the dtype's bits the messages (f16 and bf16 take the
# same), the tile the distribution: each dtype and each B layout on each tile, each B layout with 16-bit and with
# 32-bit elements. The 8x4 tile is the tutorial's 256x256 one (1.5-1.8 s of driver build on the Zen 4, 2.5-3.0 s with
# AVX2 code; its f16 case with B row-major is the tutorial's GEMM with an epilogue, so no case of its own without one)
REDUCTION_CASES = [pytest.param(DTYPE_NAMES[name], b_kind, tile, id=f"{tile}-{b_kind}-{name}")
                   for tile, b_kind, name in [("8x4", "rows", "f16"), ("8x4", "order", "bf16"),
                                              ("8x4", "transpose", "f32"), ("2x2", "order", "f16"),
                                              ("2x2", "transpose", "bf16"), ("2x2", "rows", "f32"),
                                              ("2x2", "order", "f32")]]


@pytest.mark.parametrize("dtype, b_kind, tile", REDUCTION_CASES)
def test_gemm_with_row_reductions_and_atomics(rng, dtype, b_kind, tile):
    """The rows are split between subgroups: each reduces its part, and only the partial results go through
    SLM (a whole 256x256 f32 tile would need 256 KiB of it)."""
    check_gemm(rng, dtype, b_kind, *SUBGROUP_TILES[tile], reduce=True)


def test_reduction_epilogue_broadcasts_its_rows_and_waits_twice(rng, monkeypatch):
    """The 8x4 tile's epilogue on `cpu` for AVX-512 on 512-bit units, which waits at barriers, so its lanes exchange
    values by sub-group built-ins (lane_slots.lockstep_kernel): the row maxima come back to the C layout as
    OpGroupBroadcast from one lane a row (the DPAS emulation's 64 and 32 of them: k_loops reads A so on that CPU);
    each of the 8 reductions across the lanes (4 maxima and 4 sums of 8 rows) is a reduce-scatter of 4 + 2 + 1
    shuffles, a last one where 16 lanes outnumber its rows, and 8 broadcasts (lowering.py scattered_reduction); and
    one barrier a reduction, between its partial sums' store and load (its SLM buffer is its own and nothing
    rewrites it). The numbers are test_gemm_with_row_reductions_and_atomics's."""
    built_for_cpu(monkeypatch, gemm, AVX512)
    sg_layout, sg_data = SUBGROUP_TILES["8x4"]
    args, _ = make_args(rng, 293, 227, 80, np.float16, "rows")
    llir = gemm.warmup(*args, BM=256, BN=256, BK=32, B_COLUMN_MAJOR="rows", SCALE_A=True, sg_layout=sg_layout,
                       sg_data=sg_data, target="cpu").asm["llir"]
    calls = {name: len(re.findall(f'call [^@]*@"{name}"\\(', llir)) for name in (BROADCAST, SHUFFLE,
                                                                               "__spirv_ControlBarrier")}
    assert calls == {BROADCAST: 96 + 8 * 8, SHUFFLE: 8 * 8, "__spirv_ControlBarrier": 2}


@xetile.kernel
def relayout(x, y):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [256, 256], layout=xetile.Layout([8, 4], [32, 64])))
    xetile.store_tile(xetile.init_tile(y, [0, 0], [256, 256], layout=xetile.Layout([4, 8], [64, 32])), v)


def test_a_conversion_too_big_for_slm_is_a_clear_error():
    x = np.zeros((256, 256), np.float32)
    with pytest.raises(xetile.CompilationError, match=r"needs 262144 bytes of shared local memory \(0 in alloc_slm "
                                                      r"buffers, 262144 for layout conversions\); target cpu has 131072"):
        relayout.warmup(x, x.copy(), target="cpu")


def random_case(seed: int):
    """The GEMM of seed `seed`: (args, grid, kwargs) of a random layout, tile, shape, dtype and B layout."""
    rng = np.random.default_rng(seed)
    sg_layout = [[1, 1], [2, 2], [4, 1], [1, 4], [2, 4]][rng.integers(5)]
    sg_data = [int(rng.choice([8, 16, 32])), int(rng.choice([16, 32]))]
    bm, bn = sg_layout[0] * sg_data[0], sg_layout[1] * sg_data[1]
    m, n, k = (int(v) for v in rng.integers(5, 3 * 64, size=3))
    dtype = [np.float16, ml_dtypes.bfloat16, np.float32][rng.integers(3)]
    b_kind = ["rows", "order", "transpose"][rng.integers(3)]
    args, _ = make_args(rng, m, n, k, dtype, b_kind)
    kwargs = dict(BM=bm, BN=bn, BK=16, B_COLUMN_MAJOR=b_kind, SCALE_A=bool(rng.integers(2)), sg_layout=sg_layout,
                  sg_data=sg_data)
    return args, (xetile.cdiv(m, bm), xetile.cdiv(n, bn)), kwargs


def drawn(seed: int) -> dict:
    """What the seed's case drew that decides the lowering's paths: the layout of the subgroups, the dtype (its
    conversions and DPAS) and the B layout (its messages)."""
    args, _, kwargs = random_case(seed)
    return dict(sg_layout=str(kwargs["sg_layout"]), dtype=args[0].dtype.name, b_kind=kwargs["B_COLUMN_MAJOR"])


SEEDS = range(6)
# opencl:cpu runs the seeds that together drew every value drawn (tests/device_cover.py; 0.5-0.7 s of driver build
# each on the Zen 4)
ON_DEVICE = [SEEDS[i] for i in covering([drawn(seed) for seed in SEEDS], strength=1)]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_shapes_and_layouts_at_every_level(seed):
    """The numpy interpreter on the XeTile IR is the reference for every lower level and, for the ON_DEVICE seeds,
    for SPIR-V."""
    args, grid, kwargs = random_case(seed)
    k, n = args[-1], args[-2]
    func = gemm.warmup(*args, **kwargs, device="numpy").func
    reference_arrays = run_func(func, grid, args)
    for stage, lowered in lower(func).items():
        for got, want in zip(run_func(lowered, grid, args), reference_arrays):
            assert_close(got, want, np.float32, scale=k)
    if seed not in ON_DEVICE:
        return
    copies = [np.copy(a, order="K") if isinstance(a, np.ndarray) else a for a in args]
    gemm[grid](*copies, device=DEVICE, **kwargs)
    for got, want in zip([a for a in copies if isinstance(a, np.ndarray)], reference_arrays):
        assert_close(got, want, np.float32, scale=k * n)


def tf32_case(rng):
    """The tutorial GEMM with f32 inputs, input_precision "tf32": partial tiles in M, N and K (80 x 88 x 40 on
    32x32 workgroup tiles, K step 16; 16x16 a subgroup, two tf32 DPAS blocks), row pitches 2D block messages take;
    its launch and the tf32 operands."""
    mm = tutorial("03-matrix-multiplication")
    m, n, k = 80, 88, 40
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    args = (a, b, np.zeros((m, n), np.float32), m, n, k)
    kwargs = dict(BM=32, BN=32, BK=16, INPUT_PRECISION="tf32", sg_layout=[2, 2], sg_data=[16, 16])
    return mm.matmul_kernel, args, kwargs, (3, 3), [tf32(x) for x in (a, b)]


def sequential_tf32(ta, tb) -> np.ndarray:
    """c = sum over k, in order, of tf32(a[:, k]) * tf32(b[k]) (exact products), rounded after each addition: the
    DPAS emulation's order (codegen/xe/dpas_emulation.py)."""
    c = np.zeros((ta.shape[0], tb.shape[1]), np.float32)
    for k in range(ta.shape[1]):
        c = c + np.outer(ta[:, k], tb[k])
    return c


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
def test_tf32_gemm_on_both_cpu_targets_is_the_tf32_reference_bit_for_bit(rng, target):
    kern, args, kwargs, grid, (ta, tb) = tf32_case(rng)
    kern[grid](*args, device=DEVICE, target=target, **kwargs)
    expected = sequential_tf32(ta, tb)
    np.testing.assert_array_equal(args[2].view(np.uint32), expected.view(np.uint32))
    assert np.abs(args[2] - args[0] @ args[1]).max() > 1e-3  # the operands were truncated


def test_tf32_gemm_at_every_ir_level_within_one_rounding_per_add(rng):
    """The numpy interpreter (numpy's own summation order) at every IR level: the tf32 reference within one f32
    rounding per addition, and far from exact f32 (truncation is in every level's rule)."""
    kern, args, kwargs, grid, (ta, tb) = tf32_case(rng)
    func = kern.warmup(*args, **kwargs, device="numpy").func
    expected = sequential_tf32(ta, tb)
    bound = ta.shape[1] * np.finfo(np.float32).eps * (np.abs(ta) @ np.abs(tb))
    for stage, lowered in {"xetile": func, **lower(func)}.items():
        c = run_func(lowered, grid, args)[2]
        assert (np.abs(c - expected) <= bound).all(), stage
        assert np.abs(c - args[0] @ args[1]).max() > 1e-3, stage


SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np, xetile_jit as xetile
    from xetile_jit.compiler import driver as compiler
    trace = compiler.trace
    compiler.trace = lambda kernel, *args: print("traced", kernel.__name__, file=sys.stderr) or trace(kernel, *args)
    @xetile.kernel
    def double(x, y):
        t = xetile.init_tile(x, [0, 0], [8, 16])
        xetile.store_tile(xetile.init_tile(y, [0, 0], [8, 16]), xetile.load_tile(t) * 2)
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    y = np.zeros_like(x)
    double[(1,)](x, y, device="opencl:cpu")
    assert (y == 2 * x).all()
""")


def test_a_fresh_process_reuses_the_disk_cache_and_recompiles_a_corrupt_entry(tmp_path):
    script = tmp_path / "kernel.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, XETILE_CACHE_DIR=str(tmp_path / "cache"))

    def run() -> str:
        done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stderr  # "traced double" when the kernel was traced and compiled

    assert "traced double" in run()
    assert "traced" not in run()  # the second process found the compiled kernel on disk
    (entry,) = [path for path in (tmp_path / "cache").rglob("*.*") if "spirv" in decode(path.read_bytes())]
    entry.write_bytes(entry.read_bytes()[:50])  # truncated: the checksum no longer holds
    assert "traced double" in run()


@xetile.kernel
def axpy(x, y, alpha):
    t = xetile.init_tile(y, [0, 0], [8, 16])
    xetile.store_tile(t, xetile.load_tile(xetile.init_tile(x, [0, 0], [8, 16])) * alpha + xetile.load_tile(t))


def test_usm_arrays_are_used_in_place_on_their_queue(rng):
    queue = cpu_queue()
    x, y = rand(rng, (8, 16), np.float32), rand(rng, (8, 16), np.float32)
    ux, uy = UsmArray(queue, x, (8, 16), None), UsmArray(queue, y, (8, 16), None)
    axpy[(1,)](ux, uy, 3.0)  # no device=: the arrays' queue; asynchronous
    xetile.synchronize()  # uy.view() copies with dpctl.memory, which joins no order
    np.testing.assert_allclose(uy.view(), x * 3 + y, rtol=1e-6)


AVX512 = CpuFeatures("xeon", frozenset({"avx512f", "avx2", "fma"}), "GenuineIntel", "6")
ZEN4 = CpuFeatures("zen4", frozenset({"avx512f", "avx2", "fma"}), "AuthenticAMD", "25")


@pytest.mark.parametrize("dtype,cpu", [(np.float16, AVX2), (np.float16, AVX512), (np.float16, ZEN4),
                                       (np.float32, AVX2), (np.float32, AVX512), (np.float32, ZEN4)],
                         ids=["f16-dpas-avx2", "f16-dpas-avx512", "f16-dpas-zen4", "f32-fma-avx2", "f32-fma-avx512",
                              "f32-fma-zen4"])
def test_dpas_ops_sharing_a_run_in_row_group_loops_on_the_cpu_target(dtype, cpu, monkeypatch):
    """On the `cpu` target the DPAS ops of a K step that share A are lowered four at a time, as loops over k over
    groups of C's rows (to_llvm_dpas.dpas_batches, dpas_emulation.row_loops: each A element moved from its lane
    once for four FMAs, through the lanes' slots or, on AMD's AVX-512, a shuffle: dpas_emulation.k_loops), and each B
    is widened into a private column once for every DPAS that takes it: the tutorial GEMM in 16x64 subgroup tiles,
    2x4 DPAS blocks by 2 K blocks, is 4 groups of DPAS ops, 8 B columns (2 K blocks x 4). A loop carries as many row
    sums as half the target CPU's vector registers hold (Target.cpu, dpas_emulation.carried_sums), f16's DPAS
    emulation as f32's multiply-adds: 16 with AVX-512, so 4 rows of the 4 ops (8 loops of 16 over k, each moving 4 A
    rows). With
    AVX2 no A moves at all: its loops read A in its memory, a border block's too (the tests below). Its numbers: the
    tests above and tests/test_tutorials.py."""
    t = tutorial("03-matrix-multiplication")
    built_for_cpu(monkeypatch, t.matmul_kernel, cpu)
    a, c = np.ones((512, 512), dtype), np.zeros((512, 512), np.float32)
    split = dict(sg_layout=[16, 4], sg_data=[16, 64])
    llir = t.matmul_kernel.warmup(a, a, c, 512, 512, 512, BM=256, BN=256, BK=32, **split, target="cpu").asm["llir"]
    kernel = llir.split("define internal")[0]
    rows, read = max(1, carried_sums(cpu, 16) // 4), f'@"{SHUFFLE}"(' if cpu.shuffles_lanes else SLOT_CALL
    in_place = cpu is AVX2  # B's columns a chain's one array (test below)
    if in_place:
        assert read not in kernel
    else:
        loops = [body for body in loop_bodies(kernel, 16) if read in body]
        assert len(loops) == 4 * (8 // rows)
        assert all(body.count("phi  float") == 4 * rows and body.count(read) == rows for body in loops)
    assert kernel.count("alloca [32 x float]" if in_place else "alloca [16 x float]") == (4 if in_place else 8)


def in_place_loops(kernel: str, k: int, element: str = "float", space: int = 1) -> list[str]:
    """The loops over `k` k that read A in its memory (in_place_a.py) as `element`: loads from global memory (or
    address space `space`), no lane move, sums carried besides the loop's index."""
    return [body for body in loop_bodies(kernel, k) if global_loads(body, element, space) and SLOT_CALL not in body
            and body.count(" = phi ") > 1]


def column_loops(kernel: str, k: int, element: str, space: int = 1) -> list[str]:
    """The loops over a DPAS op's `k` rows of B that fill its widened column from B's memory (in_place_b.py): one
    load of `element` a step from global memory (or address space `space`), no sum carried."""
    return [body for body in loop_bodies(kernel, k) if global_loads(body, element, space) == 1
            and body.count(" = phi ") == 1]


def global_loads(body: str, element: str, space: int = 1) -> int:
    return body.count(f"load {element}, {element} addrspace({space})*")


@pytest.mark.parametrize("cpu", [AVX2, AVX512, ZEN4], ids=["avx2", "avx512", "zen4"])
def test_f32_multiply_adds_read_a_in_its_memory_where_a_lane_spans_several_registers(rng, cpu, monkeypatch):
    """With AVX2 a lane's f32 across the sub-group is two ymm registers, and the loops over k read A[r][k] in A's
    memory (dpas_emulation.a_in_place), a loop over the K step's 32 k for each chain of two DPAS ops (one a K block
    of 16): the tutorial GEMM in 16x64 subgroup tiles is 2 blocks of 8 rows by 4 chains, the 16 rows of each chain's
    B column in groups of 6, 6 and 4 (the 6 sums AVX2 carries there: dpas_emulation.in_memory_sums, row_groups): 12
    loops, a load of A's row for each of their sums. With AVX-512 A
    stays in its lanes. The loops that move A from its lanes remain for A's blocks at the array's border; both ways
    give the sums in order of k, bit for bit (small integers: exact), with blocks inside and across the border (300 x
    260, K 100)."""
    t = tutorial("03-matrix-multiplication")
    built_for_cpu(monkeypatch, t.matmul_kernel, cpu)
    a, b = (rng.integers(-8, 8, shape).astype(np.float32) for shape in ((300, 100), (100, 260)))
    c = np.zeros((300, 260), np.float32)
    split = dict(BM=256, BN=256, BK=32, sg_layout=[16, 4], sg_data=[16, 64], target="cpu")
    t.matmul_kernel[(2, 2)](a, b, c, 300, 260, 100, **split, device=DEVICE)
    np.testing.assert_array_equal(c, a @ b)
    kernel = t.matmul_kernel.warmup(a, b, c, 300, 260, 100, **split).asm["llir"].split("define internal")[0]
    loops = in_place_loops(kernel, 32)
    if cpu is AVX2:
        assert sorted(body.count("phi  float") for body in loops) == [4] * 4 + [6] * 8
        assert all(body.count("phi  float") == global_loads(body, "float") for body in loops)
    else:
        assert loops == []


def test_a_tile_in_shared_local_memory_is_read_in_its_memory_with_no_lane_builtin(rng, monkeypatch):
    """Tutorial 8 copies each K slice of A into shared local memory and multiplies the tiles it reads back: with AVX2
    the loops over k read A[r][k] in that memory (in_place_a.py), as they do in a global array, so the kernel, which
    waits at barriers, calls no sub-group builtin (no broadcast of A, its ids the local ids) and the driver builds no
    masked copy of it. 4 loops of 16 k (the K slice) of 4 row sums, a load of A's element from SLM for each row, B's
    column widened from SLM (in_place_b.py); the products exact (small integers), at a size whose last blocks cross
    the arrays' borders."""
    t = tutorial("08-slm-cooperative-gemm")
    built_for_cpu(monkeypatch, t.slm_gemm_kernel, AVX2)
    a, b = (rng.integers(-4, 4, shape).astype(np.float16) for shape in ((100, 50), (50, 70)))
    np.testing.assert_array_equal(t.slm_gemm(a, b, device=DEVICE), a.astype(np.float32) @ b.astype(np.float32))
    c = np.zeros((100, 70), np.float32)
    kernel = t.slm_gemm_kernel.warmup(a, b, c, 100, 70, 50, **t.options(32, 32, 16),
                                      target="cpu").asm["llir"].split("define internal")[0]
    loops = in_place_loops(kernel, 16, "i16", space=3)
    # then, for a block at its array's border (chosen at run time), 2 loops of 8 sums, 8 loads, each element tested
    assert [(body.count("phi  float"), global_loads(body, "i16", 3)) for body in loops] == [(4, 4)] * 4 + [(8, 8)] * 2
    # a subgroup's B block widened from SLM too (in_place_b.py): a loop inside the array, one testing each element
    assert len(column_loops(kernel, 16, "i16", space=3)) == 2
    assert not re.findall(r'@"__spirv_(GroupBroadcast|SubgroupShuffleINTEL|BuiltInSubgroup\w*)"', kernel)


@xetile.kernel
def mma_after_a_store(a, b, c, x):
    """A @ B with A loaded before a store into A's array: the product takes A as loaded."""
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [32, 32]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [32, 64]))
    xetile.store_tile(xetile.init_tile(a, [0, 0], [32, 32]), xetile.load_tile(xetile.init_tile(x, [0, 0], [32, 32])))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [32, 64]), xetile.tile_mma(va, vb))


def test_a_written_between_its_load_and_the_product_is_read_in_its_lanes(rng, monkeypatch):
    """A store into A's array between A's load and the tile_mma: read in A's memory, the product would take the
    stored values, so the loops read A's lanes (in_place_a.source_load), with AVX2 too."""
    built_for_cpu(monkeypatch, mma_after_a_store, AVX2)
    a, b, x = (rng.integers(-8, 8, shape).astype(np.float32) for shape in ((32, 32), (32, 64), (32, 32)))
    c = np.zeros((32, 64), np.float32)
    expected = a @ b
    mma_after_a_store[(1,)](a, b, c, x, device=DEVICE, target="cpu")
    np.testing.assert_array_equal(c, expected)
    np.testing.assert_array_equal(a, x)
    kernel = mma_after_a_store.warmup(a, b, c, x, target="cpu").asm["llir"].split("define internal")[0]
    assert in_place_loops(kernel, 16) + in_place_loops(kernel, 32) == []


@xetile.kernel
def padded_product(a, b, c, K, PADDING: xetile.constexpr):
    """A @ B over K in steps of 32, A's elements outside its array read as PADDING."""
    ta = xetile.init_tile(a, [0, 0], [32, 32])
    tb = xetile.init_tile(b, [0, 0], [32, 32])
    acc = xetile.zeros([32, 32], xetile.float32)
    for k in range(0, K, 32):
        acc = xetile.tile_mma(xetile.load_tile(ta, padding=PADDING), xetile.load_tile(tb), acc)
        ta = xetile.update_tile_offset(ta, [0, 32])
        tb = xetile.update_tile_offset(tb, [32, 0])
    xetile.store_tile(xetile.init_tile(c, [0, 0], [32, 32]), acc)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=dtype_id)
def test_a_padded_with_other_than_zero_is_read_in_its_lanes(rng, dtype, monkeypatch):
    """A read with padding 1 outside its 30 x 40 array, B inside its 64 rows: the loops that read A in its memory
    read 0 outside (in_place_a.Bounds), so they take only A padded with 0 (in_place_a.source_load), and these A
    are read in their lanes, with AVX2 too (the products read 1 where they read 0: off by up to 18)."""
    built_for_cpu(monkeypatch, padded_product, AVX2)
    a, b = rng.integers(-8, 8, (30, 40)).astype(dtype), rng.integers(-8, 8, (64, 32)).astype(dtype)
    c = np.zeros((32, 32), np.float32)
    padded_product[(1,)](a, b, c, 40, PADDING=1.0, device=DEVICE, target="cpu")
    padded = np.ones((32, 64), np.float32)
    padded[:30, :40] = a
    np.testing.assert_array_equal(c, padded @ b.astype(np.float32))
    element = "float" if dtype == np.float32 else "i16"
    kernel = padded_product.warmup(a, b, c, 40, PADDING=1.0, target="cpu").asm["llir"].split("define internal")[0]
    assert in_place_loops(kernel, 32, element) == []
    zero = padded_product.warmup(a, b, c, 40, PADDING=0.0, target="cpu").asm["llir"].split("define internal")[0]
    assert in_place_loops(zero, 32, element)


@xetile.kernel
def product_from_zero(a, b, c, BM: xetile.constexpr, BN: xetile.constexpr, BK: xetile.constexpr,
                      LAYOUT: xetile.constexpr, PRECISION: xetile.constexpr = "ieee"):
    """C = A @ B of one tile, tile_mma with no accumulator: a chain of BK / K DPAS ops a block of C."""
    va = xetile.load_tile(xetile.init_tile(a, [0, 0], [BM, BK]))
    vb = xetile.load_tile(xetile.init_tile(b, [0, 0], [BK, BN]))
    xetile.store_tile(xetile.init_tile(c, [0, 0], [BM, BN]),
                      xetile.tile_mma(va, vb, layout=LAYOUT, input_precision=PRECISION))


def sequential(a, b) -> np.ndarray:
    """c = sum over k, in order, of a[:, k] * b[k] (exact products of f16), rounded after each addition."""
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(a.shape[1]):
        c = c + np.outer(a[:, k].astype(np.float32), b[k].astype(np.float32))
    return c


def test_chains_of_dpas_ops_from_zero_are_one_loop_over_all_their_k_on_the_cpu_target(rng, monkeypatch):
    """A tile_mma with no accumulator over K = 64 is, for each 16-column block of C, a chain of 4 DPAS ops, each
    taking the one before as C (a flash attention's Q K^T over its head dim and P V over its key block). On the
    `cpu` target the chains of a subgroup sharing A op by op are one loop over all 64 k (VectorDpas.lower_run,
    dpas_emulation.chained_results): here one subgroup's 8 rows of 2 blocks, 16 row sums, A's words read from a
    private array by the k's op, each B widened once into one column of 64; the sums in the order of the chain,
    bit for bit. (With AVX2 the loops read A in its memory: the test below.)"""
    built_for_cpu(monkeypatch, product_from_zero, AVX512)
    a, b = (rand(rng, shape, np.float16, -2, 2) for shape in ((32, 64), (64, 32)))
    c = np.zeros((32, 32), np.float32)
    args = dict(BM=32, BN=32, BK=64, LAYOUT=xetile.Layout([4, 1], [8, 32]))
    product_from_zero[(1,)](a, b, c, **args, device=DEVICE, target="cpu")
    np.testing.assert_array_equal(c.view(np.uint32), sequential(a, b).view(np.uint32))
    llir = product_from_zero.warmup(a, b, c, **args, target="cpu").asm["llir"]
    kernel = llir.split("define internal")[0]
    read = SLOT_CALL
    loops = [body for body in loop_bodies(kernel, 64) if read in body]
    assert len(loops) == 1
    assert loops[0].count("phi  float") == 16 and loops[0].count(read) == 8
    assert kernel.count("alloca [64 x float]") == 2


@pytest.mark.parametrize("dtype, precision, bits", [(np.float16, "ieee", "i16"), (ml_dtypes.bfloat16, "ieee", "i16"),
                                                    (np.int8, "ieee", "i8"), (np.float32, "tf32", "i32")],
                         ids=["f16", "bf16", "i8", "tf32"])
def test_the_dpas_emulation_reads_a_in_its_memory_where_a_lane_spans_several_registers(rng, dtype, precision, bits,
                                                                                        monkeypatch):
    """With AVX2 the DPAS emulation's loops read A[r][k] as its bits from A's memory and widen it there
    (dpas_emulation.a_in_place, VectorDpas.in_memory_loop; tf32: the f32 word truncated), one read for both chains of
    a subgroup's two 16-column blocks of C (EmulatedProducts.chains_a_loop): 8 rows in 4 loops over all 64 k of 2
    rows x 2 chains, 2 loads of A's element a step. The 30 rows of A end inside the last subgroup's block, whose loops
    read A in its memory too, each element tested against the array (in_place_a.Bounds: rows 30 and 31 read 0, as the
    block load's padding): a loop for each op of the chains, all 8 rows of both, 8 loads a step; no A moves between
    lanes. Every sum is in the order of the chain, bit for bit."""
    built_for_cpu(monkeypatch, product_from_zero, AVX2)
    a, b = (rand(rng, shape, dtype, -2, 2) for shape in ((30, 64), (64, 32)))
    integer = dtype == np.int8
    c = np.zeros((30, 32), np.int32 if integer else np.float32)
    args = dict(BM=32, BN=32, BK=64, LAYOUT=xetile.Layout([4, 1], [8, 32]), PRECISION=precision)
    product_from_zero[(1,)](a, b, c, **args, device=DEVICE, target="cpu")
    expected = (a.astype(np.int32) @ b.astype(np.int32) if integer else
                sequential_tf32(tf32(a), tf32(b)) if precision == "tf32" else sequential(a, b))
    np.testing.assert_array_equal(c.view(np.uint32), expected.view(np.uint32))
    kernel = product_from_zero.warmup(a, b, c, **args, target="cpu").asm["llir"].split("define internal")[0]
    loops = in_place_loops(kernel, 64, bits)
    assert len(loops) == 4
    sums = "phi  i32" if integer else "phi  float"  # an i32 more: the loop's index
    assert all(body.count(sums) == 4 + integer and global_loads(body, bits) == 2 for body in loops)
    op_k = 32 if integer else 8 if precision == "tf32" else 16
    tested = in_place_loops(kernel, op_k, bits)
    assert len(tested) == 64 // op_k
    assert all(body.count(sums) == 16 + integer and global_loads(body, bits) == 8 for body in tested)
    assert SLOT_CALL not in kernel
    # B's columns from its memory (in_place_b.py): a loop a DPAS op of each chain, inside the array and tested
    assert len(column_loops(kernel, op_k, bits)) == (0 if precision == "tf32" else 2 * 2 * 64 // op_k)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
def test_a_border_block_of_a_read_in_its_memory_reads_zeros_past_the_array(rng, dtype, monkeypatch):
    """With AVX2 a border block of A is read in its memory too, each element tested against the array
    (in_place_a.Bounds): past A's 30 rows and 56 columns the loops read 0, as the block load's padding, so B's rows
    56-63, which B has, add nothing. Every block of this tile lies across the border; the sums are in the order of the
    chain over all 64 k, bit for bit, as on `xe-emulated`, which reads A's lanes."""
    built_for_cpu(monkeypatch, product_from_zero, AVX2)
    a, b = rand(rng, (30, 56), dtype, -2, 2), rand(rng, (64, 32), dtype, -2, 2)
    padded = np.zeros((30, 64), dtype)
    padded[:, :56] = a
    expected = sequential(padded, b)
    for target in ("cpu", "xe-emulated"):
        c = np.zeros((30, 32), np.float32)
        product_from_zero[(1,)](a, b, c, BM=32, BN=32, BK=64, LAYOUT=xetile.Layout([4, 1], [8, 32]), device=DEVICE,
                                target=target)
        np.testing.assert_array_equal(c.view(np.uint32), expected.view(np.uint32), err_msg=target)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.int8], ids=["f16", "bf16", "i8"])
def test_a_border_block_of_b_read_in_its_memory_reads_zeros_past_the_array(rng, dtype, monkeypatch):
    """With AVX2 B's columns are read in B's memory (in_place_b.py), a border block's each element tested against
    the array: past B's 50 rows and 20 columns they read 0, as the block load's padding, so A's columns 50-63, which
    A has, add nothing, and C's columns 20-31 are 0; bit for bit as on `xe-emulated`, which reads B's lanes."""
    built_for_cpu(monkeypatch, product_from_zero, AVX2)
    integer = dtype == np.int8
    a, b = rand(rng, (32, 64), dtype, -2, 2), rand(rng, (50, 20), dtype, -2, 2)
    padded = np.zeros((64, 32), dtype)
    padded[:50, :20] = b
    expected = a.astype(np.int32) @ padded.astype(np.int32) if integer else sequential(a, padded)
    for target in ("cpu", "xe-emulated"):
        c = np.zeros((32, 32), np.int32 if integer else np.float32)
        product_from_zero[(1,)](a, b, c, BM=32, BN=32, BK=64, LAYOUT=xetile.Layout([4, 1], [8, 32]), device=DEVICE,
                                target=target)
        np.testing.assert_array_equal(c.view(np.uint32), expected.view(np.uint32), err_msg=target)


def test_the_row_sums_a_loop_carries_fill_half_the_vector_registers():
    """16 sub-group lanes of f32: one zmm a sum with AVX-512 (16 of 32 registers), two ymm with AVX2 (4 sums in 8 of
    16); an unknown ISA keeps AVX-512's 16."""
    assert carried_sums(CpuFeatures("zen4", frozenset({"avx512f", "avx2"})), 16) == 16
    assert carried_sums(AVX2, 16) == 4
    assert carried_sums(AVX2, 8) == 8
    assert carried_sums(CpuFeatures("aarch64", frozenset()), 16) == CARRIED_SUMS == 16


# a lane's f32 value splatted to an 8-component vector: the chain's first two insertelements
SPLAT = re.compile(r'insertelement <8 x float> <float undef[^>]*>, float (%"[^"]+"), i32 0\n'
                   r'\s+%"[^"]+" = insertelement <8 x float> %"[^"]+", float \1, i32 1')


def test_the_bias_broadcast_is_built_once_a_column_of_blocks_on_the_cpu_target(rng):
    """Blocking writes the bias row's broadcast once a block of C (a subgroup's 32x64 piece: 4x4 blocks of 8x16);
    block_loops takes the repeats as the first of each column's (repeat_key), so the kernel splats each of the 4
    bias blocks once."""
    args, _ = make_args(rng, 256, 256, 64, np.float16, "rows")
    sg_layout, sg_data = SUBGROUP_TILES["8x4"]
    compiled = gemm.warmup(*args, grid=(1, 1), target="cpu", BM=256, BN=256, BK=32, B_COLUMN_MAJOR="rows",
                           SCALE_A=False, REDUCE=False, sg_layout=sg_layout, sg_data=sg_data)
    splats = SPLAT.findall(compiled.asm["llir"].split("define internal")[0])
    assert len(splats) == len(set(splats)) == 4


# The messages follow the elements' bits alone (codegen/llvm/transposed.py), the same for f16 and bf16; the dtype
# decides the DPAS: each dtype once, on each target once
@pytest.mark.parametrize("dtype, target", [(np.float16, "cpu"), (ml_dtypes.bfloat16, "xe-emulated")],
                         ids=["f16-cpu", "bf16-xe-emulated"])
def test_a_column_major_a_is_read_by_d32_transposed_messages(dtype, target):
    """A column-major 16-bit A (X^T @ dY): each 8x16 DPAS A block is a d32 transposed message of 16 memory rows by 4
    dwords (to_llvm_transposed.dword_transpose) on both CPU targets where Xe's rules hold (256 rows); the `cpu`
    target's builtins take A's other pitches too, and where its columns are not whole dwords apart (333 rows: a
    666-byte pitch) the kernel tests it and reads element by element. The products of small integers are exact, so
    every shape must equal numpy's. The messages are the DPAS blocks', whatever the tile: a 32x32 one (16x16 subgroup
    pieces, A's 16x32 of them four 8x16 blocks) builds in a fifth of the tutorial's 256x256's time."""
    t = tutorial("03-matrix-multiplication")
    rng = np.random.default_rng(0)
    for m, n, k in ((256, 256, 64), (100, 70, 45), (333, 129, 77)):
        a = np.asfortranarray(rng.integers(-3, 4, (m, k)).astype(dtype))
        b, c = rng.integers(-3, 4, (k, n)).astype(dtype), np.zeros((m, n), np.float32)
        options = dict(BM=32, BN=32, BK=32, sg_layout=[2, 2], sg_data=[16, 16], target=target)
        kernel = t.matmul_kernel.warmup(a, b, c, m, n, k, **options).asm["llir"].split("define internal")[0]
        assert ("xe_block2d_load_d32_1x4x16tn" in kernel) == (target == "cpu" or m == 256)
        t.matmul_kernel[(xetile.cdiv(m, 32), xetile.cdiv(n, 32))](a, b, c, m, n, k, **options)
        np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
