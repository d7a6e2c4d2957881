"""xetile.ops.matmul: activation(A @ B + bias), autotuned, against numpy in float64, in the numpy
interpreter (each call tunes the template's configs there, so the shapes are small)."""
from __future__ import annotations

import importlib
import json

import ml_dtypes
import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit.toolchain import ocloc
from xetile_jit.target.targets import get_target
from xetile_jit.target.cpu_features import CpuFeatures
from xetile_jit.ops.matmul import (B_FROM_MEMORY, CHUNK_WORK, CHUNKED_FROM, COPY_FROM, CPU_TIMED, CPU_WITHIN,
                                   DOT_K_STEP, FEW_ROWS, FEW_ROWS_FROM_MEMORY, FEW_ROWS_FROM_MEMORY_16_REGISTERS,
                                   GATHERED_K_BELOW, GATHERED_ROWS_FROM,
                                   K_CHUNK, PANEL_COLUMNS, PANEL_ROWS_PADDED,
                                   PANEL_WORK, PANELS_FROM, PIECE_SPEED, PIECE_SPEED_16_REGISTERS, TIMED_FROM,
                                   b_panels, configs, configs_to_time, cpu_estimate, dtype_of, fastest_on_cpu,
                                   few_rows_kernel, few_rows_limit, gemv_dot_kernel, in_few_rows, in_panels,
                                   in_panels_on, k_chunks, matmul_kernel, new_array, outgrow_caches, piece_speeds,
                                   reads_b_by_gathers, reads_panels, row_major_operand, shape_of)

from usm_arrays import Interface, count_interface_reads, needs_dpnp

ops_matmul = importlib.import_module("xetile_jit.ops.matmul")  # the module; xetile_jit.ops.matmul is its function

M, N, K = 70, 45, 33


@pytest.fixture(autouse=True)
def numpy_device(monkeypatch):
    monkeypatch.setenv("XETILE_DEVICE", "numpy")


@pytest.fixture(autouse=True)
def one_timed_run_a_config(monkeypatch):
    """The tuner still builds, runs and times every config, each in one run after one warm-up (do_bench with no
    time budget), not the ~10 runs of its 25 + 100 ms: these tests check results and pruning, not timings (those
    are tests/jit/test_autotune.py's), and in the interpreter a run of a config costs ~25 ms."""
    monkeypatch.setattr(matmul_kernel, "warmup_ms", 0)
    monkeypatch.setattr(matmul_kernel, "rep_ms", 0)


def reference(a, b, bias, activation):
    r = a.astype(np.float64) @ b.astype(np.float64)
    if bias is not None:
        r = r + np.reshape(bias, (1, -1)).astype(np.float64)
    if activation == "relu":
        r = np.maximum(r, 0)
    if activation == "gelu":
        r = 0.5 * r * (1 + np.tanh(np.sqrt(2 / np.pi) * (r + 0.044715 * r ** 3)))
    if activation == "silu":
        r = r / (1 + np.exp(-r))
    return r


@pytest.mark.parametrize("dtype, activation, b_order, bias_shape", [
    (np.float16, None, "row", None),
    (ml_dtypes.bfloat16, "gelu", "col", (N,)),
    (np.float32, "silu", "row", (1, N)),
    (np.int8, "relu", "col", (N,)),
])
def test_matmul_matches_numpy(rng, dtype, activation, b_order, bias_shape):
    a = rng.uniform(-3, 3, (M, K)).astype(dtype)
    b = rng.uniform(-3, 3, (K, N)).astype(dtype) if b_order == "row" else rng.uniform(-3, 3, (N, K)).astype(dtype).T
    integer = np.dtype(dtype) == np.int8
    bias = None if bias_shape is None else rng.uniform(-3, 3, bias_shape).astype(np.int32 if integer else np.float32)
    c = xetile.ops.matmul(a, b, bias=bias, activation=activation)
    assert isinstance(c, np.ndarray) and c.dtype == (np.int32 if integer else np.float32)
    expected = reference(a, b, bias, activation)
    if integer:
        np.testing.assert_array_equal(c, expected.astype(np.int32))
    else:
        np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_matmul_into_c_with_an_out_dtype(rng):
    a, b = (rng.uniform(-1, 1, s).astype(np.float16) for s in ((M, K), (K, N)))
    out = xetile.ops.matmul(a, b, out_dtype=np.float16)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, reference(a, b, None, None), rtol=2e-3, atol=2e-3)
    c = np.zeros((M, N), np.float32)
    assert xetile.ops.matmul(a, b, c) is c
    np.testing.assert_allclose(c, reference(a, b, None, None), rtol=1e-5, atol=1e-5)


def test_matmul_rejects_what_it_cannot_do(rng):
    a, b = np.zeros((M, K), np.float16), np.zeros((K, N), np.float16)
    with pytest.raises(ValueError, match="the same K and dtype"):
        xetile.ops.matmul(a, b.astype(np.float32))
    with pytest.raises(ValueError, match="activation is one of"):
        xetile.ops.matmul(a, b, activation="tanh")
    with pytest.raises(ValueError, match="gelu needs a float accumulator"):
        xetile.ops.matmul(a.astype(np.int8), b.astype(np.int8), activation="gelu")
    with pytest.raises(ValueError, match=r"bias is a length-45 vector or a \(1, 45\) array"):
        xetile.ops.matmul(a, b, bias=np.zeros(K, np.float32))
    with pytest.raises(ValueError, match="'tf32' for float32 inputs, not 'tf32' for float16"):
        xetile.ops.matmul(a, b, input_precision="tf32")


def test_matmul_checks_the_shape_of_c():
    a, b, c = np.ones((16, 8), np.float32), np.ones((8, 16), np.float32), np.zeros((8, 8), np.float32)
    with pytest.raises(ValueError, match=r"matmul: c is 8x8, but a \(16x8\) @ b \(8x16\) is 16x16"):
        xetile.ops.matmul(a, b, c)
    np.testing.assert_array_equal(c, 0)


@pytest.mark.parametrize("m, n, k", [(0, 8, 8), (8, 0, 8), (8, 8, 0)], ids=str)
def test_an_empty_matmul_is_numpys_on_the_cpu_device(monkeypatch, m, n, k):
    """M = 0 or N = 0: nothing to do; K = 0: a @ b is zeros, so c = activation(bias). One kernel (bias and ReLU)
    serves both calls (the tuner keeps one config for K = 0), and the bias's negative half shows the product's zeros
    under the ReLU."""
    monkeypatch.setenv("XETILE_DEVICE", "opencl:cpu")
    a, b = np.ones((m, k), np.float32), np.ones((k, n), np.float32)
    bias = np.arange(n, dtype=np.float32) - 4
    c = xetile.ops.matmul(a, b, bias=bias, activation="relu")
    assert c.shape == (m, n)
    np.testing.assert_array_equal(c, reference(a, b, bias, "relu"))
    c = np.full((m, n), 7.0, np.float32)
    assert xetile.ops.matmul(a, b, c, bias=bias, activation="relu") is c
    np.testing.assert_array_equal(c, reference(a, b, bias, "relu"))


def test_matmul_in_tf32_multiplies_the_inputs_truncated_to_tf32(rng):
    a, b = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((M, K), (K, N)))
    truncated = [(x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32) for x in (a, b)]
    c = xetile.ops.matmul(a, b, input_precision="tf32")
    expected = reference(*truncated, None, None)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    assert np.abs(c - reference(a, b, None, None)).max() > 1e-4  # the exact product is further away


def test_the_shapes_dtypes_and_results_of_dpnp_arrays_are_read_without_waiting(monkeypatch):
    """ops.matmul reads a dpnp array's shape, dtype and queue by its attributes: its `__sycl_usm_array_interface__`
    waits for the kernels queued before (usm_arrays.count_interface_reads)."""
    dpnp = needs_dpnp()
    reads = count_interface_reads(monkeypatch, dpnp)
    a = dpnp.zeros((3, 5), dtype=np.float16, device="opencl:cpu")
    assert shape_of(a.T) == (5, 3) and dtype_of(a) == "float16" and shape_of(a[0]) == (5,)
    c = new_array(a, (3, 4), np.float32)
    assert isinstance(c, dpnp.ndarray) and c.sycl_queue == a.sycl_queue and reads == []


def plain_configs() -> list:
    """The configs that read B as it is (not in panels: in_panels)."""
    return [c for c in configs() if not in_panels(c)]


def test_the_search_space_is_generated_with_layouts():
    found = configs()
    assert len(found) == 32
    panels = [c for c in found if in_panels(c)]  # one subgroup across the tile: B's panels (b_panels)
    assert [(c.kwargs["BM"], c.sg_layout, c.sg_data, c.kwargs["BK"]) for c in panels] == [
        (256, [8, 1], [32, 64], 32), (128, [4, 1], [32, 64], 32), (256, [16, 1], [16, 64], 32),
        (128, [8, 1], [16, 64], 32), (256, [8, 1], [32, 64], 64), (256, [4, 1], [64, 64], 64),
        (256, [8, 1], [32, 32], 32), (128, [4, 1], [32, 32], 32), (256, [16, 1], [16, 16], 16),
        (128, [8, 1], [16, 16], 16)]

    assert sum(c.kwargs["A_LAYOUT"] is not None for c in found) == 4  # 16x16 A blocks on the 256x256 tile
    assert sum(c.kwargs["B_LAYOUT"] is not None for c in found) == 6  # 32x16 B blocks on the 256 and 128 tiles
    assert sum(c.kwargs["PREFETCH"] > 0 for c in found) == 6
    for config in found:
        assert (config.sg_layout, config.sg_data) in xetile.layouts([config.kwargs["BM"], config.kwargs["BN"]],
                                                                    num_subgroups=np.prod(config.sg_layout))
    tutorial = [c for c in found if (c.kwargs["BM"], c.kwargs["BN"], c.kwargs["BK"], c.sg_layout, c.kwargs["A_LAYOUT"],
                                     c.kwargs["B_LAYOUT"], c.kwargs["PREFETCH"]) == (256, 256, 32, [8, 4], None, None, 0)]
    assert len(tutorial) == 1 and tutorial[0].sg_data == [32, 64]
    cpu_tile = [c for c in found if (c.kwargs["BM"], c.kwargs["BN"], c.kwargs["BK"]) == (256, 256, 64)]
    assert sorted(c.sg_data for c in cpu_tile) == [[32, 64], [64, 64]]  # the cpu target's fastest at 2048-4096

@pytest.mark.parametrize("n, widths", [(100, {64}), (65, {64}), (64, {64}), (33, {64}), (32, {32, 64}),
                                       (20, {32, 64}), (16, {16, 32, 64}), (1, {16, 32, 64})])
def test_the_configs_of_b_in_panels_read_a_panel_a_tile_or_one_b_as_it_is(n, widths):
    """B copied into panels (N > PANEL_COLUMNS) is read a panel a tile; B as one panel by tiles as wide or wider."""
    assert {c.kwargs["BN"] for c in configs() if in_panels(c) and reads_panels(c, n)} == widths


@pytest.mark.parametrize("order", ["row", "col"])
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.int8])
def test_every_config_compiles_to_valid_spirv_for_the_cpu(dtype, order):
    """Each config of the search space, as the tuner launches it on the default CPU target, A and B row- or
    column-major: taller load blocks than DPAS takes (B's 32x16 VNNI is 32 f16 a lane) stay in private memory until
    regrouped, and so do the 32 elements a lane a column-major 16-bit B in 32x16 blocks or an 8-bit one reads by
    transposed messages (the SPIR-V emitter refuses 32-component vectors, so they go through private
    memory). Not the prefetch configs: the tuner prunes them on the CPU targets, where prefetch is a no-op
    (test_prefetch_configs_are_pruned_where_prefetch_is_dropped). The configs of B in panels read them as the tuner
    launches them (B_PANELS). Each module passes spirv-val (conftest's every_module_passes_spirv_val checks every
    module built)."""
    a, c = np.zeros((512, 512), dtype), np.zeros((512, 512), np.int32 if dtype == np.int8 else np.float32)
    operand = a if order == "row" else a.T
    panels = np.zeros((512 * 512 // PANEL_COLUMNS, PANEL_COLUMNS), dtype)
    for config in (cfg for cfg in configs() if cfg.kwargs["PREFETCH"] == 0):
        matmul_kernel.kernel.warmup(operand, panels if in_panels(config) else operand, c, c, 512, 512, 512, 0, 512,
                                    HAS_BIAS=False, ACC=xetile.int32 if dtype == np.int8 else xetile.float32,
                                    ACTIVATION="", INPUT_PRECISION="ieee", B_PANELS=in_panels(config), target="cpu",
                                    **config.all_kwargs())


@pytest.mark.parametrize("target", ["cpu", "xe-emulated"])
@pytest.mark.parametrize("dtype, b_block", [(np.float16, (32, 16)), (np.int8, None)])
def test_a_column_major_b_of_32_elements_a_lane_is_exact_on_the_cpu_targets(rng, target, dtype, b_block):
    """A column-major B whose lane holds 32 elements (f16 in 32x16 blocks, 8-bit in its default blocks): its d32
    transposed messages write their runs of the lane's words into private memory, in the order DPAS takes them.
    Exact against numpy on opencl:cpu, with partial tiles in every dimension."""
    from spirv_tools import cpu_queue
    m, n, k = 200, 136, 80  # rows of 16-byte units: block messages on xe-emulated too
    a, bt = (rng.integers(-4, 5, shape).astype(dtype) for shape in ((m, k), (n, k)))  # exact sums in f32
    integer = dtype == np.int8
    c = np.zeros((m, n), np.int32 if integer else np.float32)
    kwargs = next(cfg.all_kwargs() for cfg in configs() if cfg.kwargs["PREFETCH"] == 0 and b_block == b_inst_data(cfg)
                  and (cfg.kwargs["BM"], cfg.kwargs["BN"], cfg.sg_data) == (128, 128, [32, 32]))
    grid = (xetile.cdiv(m, kwargs["BM"]), xetile.cdiv(n, kwargs["BN"]))
    matmul_kernel.kernel[grid](a, bt.T, c, c, m, n, k, 0, k, ACC=xetile.int32 if integer else xetile.float32,
                               HAS_BIAS=False, ACTIVATION="", INPUT_PRECISION="ieee", target=target,
                               device=cpu_queue(), **kwargs)
    np.testing.assert_array_equal(c, (a.astype(np.int64) @ bt.T.astype(np.int64)).astype(c.dtype))


def b_inst_data(config) -> tuple | None:
    """The load blocks a config gives B (None: the compiler's default)."""
    return config.kwargs["B_LAYOUT"] and config.kwargs["B_LAYOUT"].inst_data


def test_a_column_major_operand_is_copied_to_row_major_on_the_cpu_targets(rng):
    """Where the target reads a column-major tile_mma operand by gathers (the CPU targets) and the GEMM reads it
    for COPY_FROM rows or columns of C or more, matmul copies it to row-major first (on the host for numpy arrays, by
    row_major_copy_kernel for dpnp ones); otherwise, and in the interpreter, it passes the operand as it is."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    x = rng.uniform(-3, 3, (45, 70)).astype(np.float32).T  # column-major 70 x 45
    copied = row_major_operand(x, COPY_FROM, queue)
    assert copied.flags.c_contiguous and np.array_equal(copied, x)
    assert row_major_operand(x, COPY_FROM - 1, queue) is x and row_major_operand(x, COPY_FROM, "numpy") is x
    row_major = np.ascontiguousarray(x)
    assert row_major_operand(row_major, COPY_FROM, queue) is row_major
    dpnp = needs_dpnp()
    for dtype in (np.float16, np.float32, np.int8):
        on_device = dpnp.asarray(x.T.astype(dtype), sycl_queue=queue).T
        copied = row_major_operand(on_device, COPY_FROM, queue)
        assert copied.flags.c_contiguous and np.array_equal(dpnp.asnumpy(copied), x.astype(dtype))


def numpy_panels(b: np.ndarray) -> np.ndarray:
    """b_panels' layout written with numpy: panel j is B's columns j * PANEL_COLUMNS on, its rows padded with zeros
    to a multiple of PANEL_ROWS_PADDED, its columns past N zeros."""
    k, n = b.shape
    padded = np.zeros((-(-k // PANEL_ROWS_PADDED) * PANEL_ROWS_PADDED, -(-n // PANEL_COLUMNS) * PANEL_COLUMNS),
                      b.dtype)
    padded[:k, :n] = b
    return np.concatenate(np.split(padded, padded.shape[1] // PANEL_COLUMNS, axis=1))


@pytest.mark.parametrize("dtype, order", [(np.float32, "row"), (np.float16, "col"), (ml_dtypes.bfloat16, "row"),
                                          (np.int8, "col")])
@pytest.mark.parametrize("kind", ["numpy", "interface"])
def test_b_panels_hold_b_one_panel_of_columns_after_another(rng, dtype, order, kind):
    """b_panels on opencl:cpu, B of either memory order (K and N not multiples of the panel's rows and columns): the
    panels bit for bit, zeros where the panels pass B's edges even where the reused buffer held other values (it
    holds the panels of a larger B of ones first)."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    usm = Interface(queue)
    put = (lambda x: x) if kind == "numpy" else (lambda x: usm.asarray(x, x.dtype))
    get = (lambda x: x) if kind == "numpy" else device_contents
    get(b_panels(put(np.ones((300, 200), dtype)), queue))
    b = rng.integers(-100, 100, (70, 100)).astype(dtype)
    operand = put(b) if order == "row" else (put(np.ascontiguousarray(b.T)).T if kind == "numpy" else
                                             transposed(usm.asarray(np.ascontiguousarray(b.T), dtype)))
    panels = get(b_panels(operand, queue))
    assert panels.shape == (2 * 128, PANEL_COLUMNS) and panels.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(panels, numpy_panels(b))


def device_contents(array) -> np.ndarray:
    """A DeviceArray's (runtime/scratch.py) elements, once the launches on its queue have run."""
    xetile.synchronize(array.memory.sycl_queue)
    host = np.empty(array.memory.nbytes, np.uint8)
    array.memory.copy_to_host(host)
    return host[:int(np.prod(array.shape)) * array.dtype.itemsize].view(array.dtype).reshape(array.shape)


def transposed(array):
    """A 2-D USM array of the interface's (UsmArray) as its transposed view."""
    usm = array.__sycl_usm_array_interface__
    rows, columns = usm["shape"]
    array.__sycl_usm_array_interface__ = dict(usm, shape=(columns, rows), strides=(1, columns))
    return array


def test_on_a_cpu_device_matmul_reads_b_in_panels_where_the_gemm_is_large(monkeypatch, rng):
    """On a CPU device, C of PANELS_FROM rows or more and PANEL_WORK multiply-adds or more: B in panels (b_panels),
    tuned over the configs that read them (in_panels), the results numpy's, with a bias and an activation; in the
    interpreter, with fewer rows or less work, B as it is."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    b = np.zeros((8, 8))
    n = k = 1024
    assert PANELS_FROM * n * k >= PANEL_WORK and in_panels_on(PANELS_FROM, n, k, b, queue)
    assert not in_panels_on(PANELS_FROM - 1, 4 * n, k, b, queue) and not in_panels_on(PANELS_FROM, n, k, b, "numpy")
    assert not in_panels_on(PANELS_FROM, n, PANEL_WORK // n // PANELS_FROM - 1, b, queue)
    assert in_panels_on(PANELS_FROM, PANEL_COLUMNS, 1, b, queue)  # B of one panel as it is: no copy to pay for
    monkeypatch.setattr(ops_matmul, "PANEL_WORK", 1)
    m, n, k = PANELS_FROM + 3, 70, 100
    a, b = rng.uniform(-1, 1, (m, k)).astype(np.float16), rng.uniform(-1, 1, (k, n)).astype(np.float16)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    c = xetile.ops.matmul(a, b, bias=bias, activation="silu", device=queue)
    tried = [t.config for t in matmul_kernel.trials if t.stage != "early_config_prune"]
    assert tried and all(in_panels(config) for config in tried)
    np.testing.assert_allclose(c, reference(a, b, bias, "silu"), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n, kind", [(70, "numpy"), (24, "numpy"), (70, "dpnp"), (24, "dpnp")],
                         ids=["panels", "one-panel", "panels-dpnp", "one-panel-dpnp"])
def test_an_f16_gemm_runs_as_f32_where_the_loops_over_all_of_k_take_f32_alone(monkeypatch, rng, n, kind):
    """On a CPU whose loops over all of K take f32 but not f16 (AVX2: dpas_emulation.whole_k_loops), an f16 GEMM in
    panels is the f32 GEMM of its operands widened (widens_f16): B's panels, or B of one panel, and A widened copies
    (a dpnp array's by a kernel into scratch memory), and the result the f16 GEMM's bit for bit; with AVX-512 the f16
    GEMM itself."""
    from conftest import AVX2, built_for_cpu
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    monkeypatch.setattr(ops_matmul, "PANEL_WORK", 1)
    m, k = PANELS_FROM + 3, 100
    a, b = rng.uniform(-1, 1, (m, k)).astype(np.float16), rng.uniform(-1, 1, (k, n)).astype(np.float16)
    built_for_cpu(monkeypatch, matmul_kernel.kernel, CpuFeatures("xeon", frozenset({"avx512f", "avx2", "fma"})))
    assert not ops_matmul.widens_f16("float16", b, queue)
    built_for_cpu(monkeypatch, matmul_kernel.kernel, AVX2)
    assert ops_matmul.widens_f16("float16", b, queue) and not ops_matmul.widens_f16("float32", b, queue)
    results, widen = [], ops_matmul.widened
    for wide in (True, False):
        built_for_cpu(monkeypatch, matmul_kernel.kernel, AVX2)
        monkeypatch.setattr(ops_matmul, "widens_f16", lambda dtype, b, device, wide=wide: wide)
        widened = []
        monkeypatch.setattr(ops_matmul, "widened",
                            lambda x, device, use: widened.append(use) or widen(x, device, use))
        if kind == "dpnp":
            dpnp = needs_dpnp()
            results.append(dpnp.asnumpy(xetile.ops.matmul(dpnp.asarray(a, sycl_queue=queue),
                                                          dpnp.asarray(b, sycl_queue=queue))))
        else:
            results.append(xetile.ops.matmul(a, b, device=queue))
        assert widened == (["a", "b"] if n <= PANEL_COLUMNS else ["a"]) * wide
    np.testing.assert_array_equal(results[0].view(np.uint32), results[1].view(np.uint32))
    np.testing.assert_allclose(results[0], reference(a, b, None, None), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("order", ["row", "col"])
def test_a_b_of_one_panel_is_read_as_it_is(monkeypatch, rng, order):
    """B of PANEL_COLUMNS columns or fewer is one panel already: the configs of B in panels whose tiles span it read
    it, no copy made, the results numpy's, B row- or column-major. The CPU queue's prune decides, though the
    default device is the interpreter: one config, untimed (a GEMM under TIMED_FROM)."""
    from spirv_tools import cpu_queue
    monkeypatch.setattr(ops_matmul, "b_panels", None)  # a copy would call it
    m, n, k = PANELS_FROM, 24, 70
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32) if order == "row" else \
        rng.uniform(-1, 1, (n, k)).astype(np.float32).T
    c = xetile.ops.matmul(a, b, device=cpu_queue())
    tried = [t.config for t in matmul_kernel.trials if t.stage != "early_config_prune"]
    assert len(tried) == 1 and in_panels(tried[0]) and tried[0].kwargs["BN"] >= n
    np.testing.assert_allclose(c, reference(a, b, None, None), rtol=1e-5, atol=1e-5)


def few_row_operands(rng, m: int, n: int, k: int, dtype, order: str):
    """A (m x k), B (k x n, `order`) and a bias of `dtype`'s accumulator, values exact in it."""
    a = rng.integers(-3, 4, (m, k)).astype(dtype)
    b = rng.integers(-3, 4, (k, n)).astype(dtype) if order == "row" else rng.integers(-3, 4, (n, k)).astype(dtype).T
    bias = rng.integers(-3, 4, n).astype(np.int32 if np.dtype(dtype) == np.int8 else np.float32)
    return a, b, bias


@pytest.mark.parametrize("m, order, dtype, from_memory, k", [
    (1, "row", np.float32, False, DOT_K_STEP + 77), (3, "row", np.float16, False, DOT_K_STEP + 77),
    ("limit", "row", ml_dtypes.bfloat16, False, DOT_K_STEP + 77), ("limit", "row", np.int8, True, DOT_K_STEP + 77),
    (1, "col", np.float16, False, DOT_K_STEP + 77), ("limit", "col", np.int8, True, DOT_K_STEP + 77),
    (GATHERED_ROWS_FROM - 1, "col", np.float32, False, 77), (GATHERED_ROWS_FROM, "col", np.float32, False, 80),
    (GATHERED_ROWS_FROM, "gathered", np.float32, False, 77), ("limit", "gathered", np.float16, False, 511),
])
def test_c_of_few_rows_skips_the_tuner_on_a_cpu_device(monkeypatch, rng, m, order, dtype, from_memory, k):
    """On a CPU device C of few_rows_limit rows or fewer takes few_rows_kernel (B row-major, or column-major where
    reads_b_by_gathers: "gathered") or gemv_dot_kernel (B column-major), neither the tuned tile kernel nor the other:
    with a bias and an activation, N and K no multiples of their tiles (K of two of gemv_dot_kernel's steps, the
    second partial), the results numpy's; `from_memory`: B taken to come from memory (B_FROM_MEMORY lowered), where
    row-major B's limit is higher."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    if from_memory:
        monkeypatch.setattr(ops_matmul, "B_FROM_MEMORY", 1)
    n = 150
    m = few_rows_limit(get_target("cpu").cpu, order != "row", 1 if from_memory else k * n) if m == "limit" else m
    assert reads_b_by_gathers(m, k) == (order == "gathered")
    monkeypatch.setattr(ops_matmul, "matmul_kernel", None)
    monkeypatch.setattr(ops_matmul, "few_rows_kernel" if order == "col" else "gemv_dot_kernel", None)
    order = "col" if order == "gathered" else order
    a, b, bias = few_row_operands(rng, m, n, k, dtype, order)
    c = xetile.ops.matmul(a, b, bias=bias, activation="relu", device=queue)
    np.testing.assert_array_equal(c, reference(a, b, bias, "relu"))


def test_the_few_row_kernels_take_what_they_are_fastest_for():
    """few_rows_limit: FEW_ROWS rows (where the tile kernel's 16 rows do twice the work or more); a row-major B of
    B_FROM_MEMORY bytes or more (from memory, not the last-level cache) up to FEW_ROWS_FROM_MEMORY rows with 32 vector
    registers (where the 8x128 tile of C fits them) and FEW_ROWS_FROM_MEMORY_16_REGISTERS with 16 (AVX2); only on a
    CPU device (in_few_rows). A column-major B is read by gathers from GATHERED_ROWS_FROM rows of C where its K is
    short and ragged (reads_b_by_gathers)."""
    from spirv_tools import cpu_queue
    avx2, avx512 = (CpuFeatures("x", frozenset(flags)) for flags in ({"avx2"}, {"avx512f", "avx2"}))
    assert B_FROM_MEMORY == 32 << 20
    for cpu, from_memory in ((avx512, FEW_ROWS_FROM_MEMORY), (avx2, FEW_ROWS_FROM_MEMORY_16_REGISTERS)):
        assert few_rows_limit(cpu, False, B_FROM_MEMORY) == from_memory
        assert few_rows_limit(cpu, False, B_FROM_MEMORY - 1) == few_rows_limit(cpu, True, B_FROM_MEMORY) == FEW_ROWS
    assert (FEW_ROWS, FEW_ROWS_FROM_MEMORY, FEW_ROWS_FROM_MEMORY_16_REGISTERS) == (8, 48, 16)
    assert (GATHERED_K_BELOW, GATHERED_ROWS_FROM) == (512, 4)
    assert reads_b_by_gathers(GATHERED_ROWS_FROM, GATHERED_K_BELOW - 1)
    assert not reads_b_by_gathers(GATHERED_ROWS_FROM, GATHERED_K_BELOW + 1)  # a long K: the dot kernel
    b, queue = np.zeros((8, 8), np.float32), cpu_queue()
    assert in_few_rows(FEW_ROWS, b, queue) and not in_few_rows(FEW_ROWS + 1, b, queue)
    assert in_few_rows(FEW_ROWS, b.T, queue) and not in_few_rows(FEW_ROWS + 1, b.T, queue)
    assert not in_few_rows(1, b, "numpy")


@pytest.mark.parametrize("a_order", ["row", "col"])
@pytest.mark.parametrize("kind", ["numpy", "interface"])
def test_c_of_few_columns_is_the_transposed_c_of_few_rows(monkeypatch, rng, a_order, kind):
    """C of few columns (A times a vector, y = A x) on a CPU device: C.T = B.T @ A.T, of few rows, by gemv_dot_kernel
    where A is row-major (A.T column-major) and few_rows_kernel where A is column-major, the bias one a row of C.T;
    the results numpy's, on host arrays and on USM arrays known by their interface alone (their transposes views)."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    monkeypatch.setattr(ops_matmul, "matmul_kernel", None)
    monkeypatch.setattr(ops_matmul, "gemv_dot_kernel" if a_order == "col" else "few_rows_kernel", None)
    m, n, k = 150, 3, DOT_K_STEP + 77
    a = rng.integers(-3, 4, (m, k) if a_order == "row" else (k, m)).astype(np.float32)
    a = a if a_order == "row" else a.T
    b, bias = rng.integers(-3, 4, (k, n)).astype(np.float32), rng.integers(-3, 4, n).astype(np.float32)
    expected = reference(a, b, bias, "relu")
    if kind == "numpy":
        c = xetile.ops.matmul(a, b, bias=bias, activation="relu", device=queue)
        np.testing.assert_array_equal(c, expected)
        return
    usm = Interface(queue)
    a_usm = usm.asarray(a) if a_order == "row" else transposed(usm.asarray(a.T))
    c = usm.asarray(np.full((m, n), np.nan))
    xetile.ops.matmul(a_usm, usm.asarray(b), c, bias=usm.asarray(bias.reshape(1, n)), activation="relu", device=queue)
    np.testing.assert_array_equal(usm.asnumpy(c), expected)


@pytest.mark.parametrize("m, mr, bn", [(3, 4, 128), (1, 1, 256)])
@pytest.mark.parametrize("along", ["columns", "rows"])
def test_few_rows_kernel_runs_alike_at_every_level(rng, m, mr, bn, along):
    """few_rows_kernel's rank-1 updates (A's column broadcast across the tile, B's row down it) and gemv_dot_kernel's
    row sums, the bias one a column of C or one a row: the interpreter at every IR level, both CPU targets' SPIR-V on
    opencl:cpu, the same bits, numpy's result (integer values: exact in f32)."""
    from every_level import run_everywhere
    n, k = 150, 40
    a, b, bias = few_row_operands(rng, m, n, k, np.float32, "row")
    bias = bias if along == "columns" else bias[:m]
    expected = np.maximum(a.astype(np.float64) @ b + (bias[None, :] if along == "columns" else bias[:, None]), 0)
    options = dict(ACC=xetile.float32, BIAS=along, ACTIVATION="relu")
    row, column = bias.reshape(1, -1), bias.reshape(-1, 1)
    arrays = {"a": a, "b": b, "c": np.zeros((m, n), np.float32), "bias": row if along == "columns" else column}
    out = run_everywhere(few_rows_kernel, arrays, (xetile.cdiv(n, bn), xetile.cdiv(m, mr)), k, MR=mr, BN=bn,
                         **options)
    np.testing.assert_array_equal(out["c"], expected)
    arrays = {"a": a, "w": np.ascontiguousarray(b.T), "ct": np.zeros((n, m), np.float32),
              "bias": column if along == "columns" else row}
    out = run_everywhere(gemv_dot_kernel, arrays, (xetile.cdiv(n, 16), m), k, BR=16, BK=32, **options)
    np.testing.assert_array_equal(out["ct"].T, expected)


def test_a_large_gemm_sums_in_chunks_on_a_cpu_device_with_its_arrays_in_device_memory():
    """k_chunks: K_CHUNK steps a launch where A and B hold CHUNKED_FROM bytes or more (or a subgroup's panels outgrow
    the device's core cache: outgrow_caches), every array is in device memory (a numpy array would be copied at each
    launch), C holds the accumulator's type (it carries the sum between launches) and the device is a SYCL CPU one
    (not the interpreter)."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    usm = Interface(queue)
    m, n, k = 8, 8, CHUNKED_FROM // 4 // 16 + 52  # (m + n) * k f32 just past CHUNKED_FROM
    a, b, c = usm.asarray(np.zeros((1, 1))), usm.asarray(np.zeros((1, 1))), usm.asarray(np.zeros((1, 1)))
    chunks = k_chunks(m, n, k, [a, b, c], xetile.float32, queue)
    assert chunks == [(k0, K_CHUNK) for k0 in range(0, k - 52, K_CHUNK)] + [(k - 52, 52)]
    assert k_chunks(m, n - 1, k, [a, b, c], xetile.float32, queue) == [(0, k)]
    half = usm.asarray(np.zeros((1, 1)), np.float16)
    assert k_chunks(m, n, k, [a, b, half], xetile.float32, queue) == [(0, k)]
    assert k_chunks(m, n, k, [a, b, np.zeros((1, 1), np.float32)], xetile.float32, queue) == [(0, k)]
    assert k_chunks(m, n, k, [a, b, c], xetile.float32, "numpy") == [(0, k)]  # the interpreter: one launch
    # a 2048^3 f32 GEMM's subgroup panels (768 KiB) against the device's core cache (its global memory cache)
    square = [(k0, K_CHUNK) for k0 in range(0, 2048, K_CHUNK)]
    one_launch_fits = 96 * 2048 * 4 <= queue.sycl_device.global_mem_cache_size
    assert k_chunks(2048, 2048, 2048, [a, b, c], xetile.float32, queue) == ([(0, 2048)] if one_launch_fits else square)


@pytest.mark.parametrize("m, n, k, itemsize, core_cache, chunked", [
    (2048, 2048, 2048, 4, 512 << 10, True),  # panels of 768 KiB past a 512 KiB L2 (the AVX2 EPYC)
    (2048, 2048, 2048, 4, 1 << 20, False),  # within a 1 MiB one (the Zen 4)
    (2048, 2048, 2048, 2, 512 << 10, False),  # f16: panels of 384 KiB
    (1024, 1024, 1024, 4, 512 << 10, False),
    (1024, 512, 4096, 4, 512 << 10, True),  # 1024 x 512 x 512 multiply-adds a launch: CHUNK_WORK
    (1024, 511, 4096, 4, 512 << 10, False),  # a launch's slice too small for its launch's cost
    (4096, 4096, 4096, 2, 2 << 20, True),  # 64 MiB of A and B: past the last-level cache whatever a core holds
])
def test_a_gemm_sums_in_chunks_where_its_panels_outgrow_a_core_s_cache(m, n, k, itemsize, core_cache, chunked):
    """outgrow_caches: a subgroup's panels of A and B over the whole K (96 rows and columns a K step) past a core's
    cache, with CHUNK_WORK multiply-adds a launch, or A and B past the last-level cache."""
    assert CHUNK_WORK == 1024 * 512 * K_CHUNK
    assert outgrow_caches(m, n, k, itemsize, core_cache) is chunked


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_a_sum_in_chunks_is_the_one_launch_sum_bit_for_bit(rng, dtype):
    """The kernel's chunks (CHUNKED: C carries the sum from one launch to the next, the bias and activation after the
    last) give the bits of one launch over all of K: the same multiply-adds in the same order. C starts as NaN, which
    the first chunk does not read; chunks of 512, 512 and 76 steps, K not a multiple of the K tile."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    usm = Interface(queue)
    m, n, k = 70, 45, 1100
    a, b = rng.uniform(-1, 1, (m, k)).astype(dtype), rng.uniform(-1, 1, (k, n)).astype(dtype)
    bias = rng.uniform(-1, 1, (1, n)).astype(np.float32)
    config = next(c.all_kwargs() for c in configs() if c.kwargs["PREFETCH"] == 0 and c.kwargs["BM"] == 64)
    grid = (xetile.cdiv(m, config["BM"]), xetile.cdiv(n, config["BN"]))
    args = dict(ACC=xetile.float32, HAS_BIAS=True, ACTIVATION="gelu", INPUT_PRECISION="ieee", target="cpu",
                device=queue, **config)
    da, db, dbias = usm.asarray(a, dtype), usm.asarray(b, dtype), usm.asarray(bias)
    whole, chunked = usm.asarray(np.zeros((m, n))), usm.asarray(np.full((m, n), np.nan))
    matmul_kernel.kernel[grid](da, db, whole, dbias, m, n, k, 0, k, **args)
    for k0, length in ((0, 512), (512, 512), (1024, 76)):
        matmul_kernel.kernel[grid](da, db, chunked, dbias, m, n, k, k0, length, CHUNKED=True, **args)
    one_launch = usm.asnumpy(whole)
    np.testing.assert_allclose(one_launch, reference(a, b, bias, "gelu"), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(usm.asnumpy(chunked), one_launch)


@pytest.mark.parametrize("panels_from", [PANELS_FROM, 1])
def test_matmul_on_device_arrays_sums_in_chunks(monkeypatch, rng, panels_from):
    """ops.matmul on a CPU device with USM arrays: launches of K_CHUNK steps (here 64, from 32 KiB of A and B on),
    the result numpy's; with B as it is and in panels (b_panels)."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    monkeypatch.setattr(ops_matmul, "K_CHUNK", 64)
    monkeypatch.setattr(ops_matmul, "CHUNKED_FROM", 32 << 10)
    monkeypatch.setattr(ops_matmul, "PANELS_FROM", panels_from)
    monkeypatch.setattr(ops_matmul, "PANEL_WORK", 1)
    launches = []
    launch = type(matmul_kernel).__getitem__
    monkeypatch.setattr(type(matmul_kernel), "__getitem__",
                        lambda tuner, grid: launches.append(grid) or launch(tuner, grid))
    usm = Interface(queue)
    m = FEW_ROWS_FROM_MEMORY + 12  # past the few-row kernels
    a, b = rng.uniform(-1, 1, (m, 150)).astype(np.float32), rng.uniform(-1, 1, (150, 24)).astype(np.float32)
    c = usm.asarray(np.full((m, 24), np.nan))
    xetile.ops.matmul(usm.asarray(a), usm.asarray(b), c, activation="relu", device=queue)
    assert len(launches) == 3
    np.testing.assert_allclose(usm.asnumpy(c), reference(a, b, None, "relu"), rtol=1e-5, atol=1e-5)


def test_prefetch_configs_are_pruned_where_prefetch_is_dropped(rng):
    """In the interpreter (and on the CPU targets) a prefetch config is the no-prefetch code: not timed (nor, with B
    as it is, the configs of B in panels)."""
    a, b = rng.uniform(-3, 3, (M, K)).astype(np.float16), rng.uniform(-3, 3, (K, N + 1)).astype(np.float16)
    xetile.ops.matmul(a, b)
    pruned = [t.config for t in matmul_kernel.trials if t.stage == "early_config_prune"]
    assert len(pruned) == 16 and sum(c.kwargs["PREFETCH"] > 0 for c in pruned) == 6
    assert sum(in_panels(c) for c in pruned) == 10


def piece(config) -> tuple:
    """A config's workgroup tile, subgroup piece and K tile."""
    return config.kwargs["BM"], config.kwargs["BN"], tuple(config.sg_data), config.kwargs["BK"]


@pytest.mark.parametrize("m, n, k, fastest, timed", [
    (1, 1, 1, (64, 64, (16, 16), 16), 1),           # the least padding; the next estimate is 1.5x: nothing timed
    (16, 4096, 1024, (16, 256, (16, 64), 32), 1),   # 16 rows: no padding (133-138 GFLOP/s against 33-34 in 64x128)
    (4096, 64, 1024, (64, 64, (16, 16), 16), 3),    # no padding, 64 workgroups for the 2 units
    (256, 256, 256, (128, 256, (32, 64), 32), 3),
    (2048, 2048, 2048, (256, 256, (64, 64), 64), 3),
])
def test_on_a_cpu_device_matmul_times_only_the_configs_it_estimates_fastest(m, n, k, fastest, timed):
    """On a CPU device (of 2 units, as the one measured) the tuner times at most CPU_TIMED configs: the best
    estimates of padded work per compute unit over the piece's speed, within CPU_WITHIN of the best. The expected
    winners are what timing every config chose on opencl:cpu."""
    kept = fastest_on_cpu(plain_configs(), m, n, k, 2, PIECE_SPEED)
    assert len(kept) == timed <= CPU_TIMED
    assert piece(kept[0]) == fastest
    estimates = [cpu_estimate(c, m, n, k, 2) for c in kept]
    assert estimates == sorted(estimates) and estimates[-1] < CPU_WITHIN * estimates[0]
    assert estimates[0] == min(cpu_estimate(c, m, n, k, 2) for c in plain_configs())


def test_with_16_vector_registers_the_estimate_prefers_pieces_of_32_k():
    """AVX2 (16 registers): the speeds measured there, where 64x64 pieces with K tile 64 ran at 0.6x the 16x64 ones
    with K tile 32 (the AVX-512 speeds rank them first). One config a piece is timed, so the tutorial's 32x64 pieces
    are timed beside the 16x64 ones the estimate ranks first."""
    avx2, zen4 = (CpuFeatures("x", frozenset(flags)) for flags in ({"avx2"}, {"avx512f", "avx2"}))
    assert piece_speeds(avx2) is PIECE_SPEED_16_REGISTERS and piece_speeds(zen4) is PIECE_SPEED
    assert set(PIECE_SPEED_16_REGISTERS) == set(PIECE_SPEED)
    kept = fastest_on_cpu(plain_configs(), 2048, 2048, 2048, 2, PIECE_SPEED_16_REGISTERS)
    assert [piece(c) for c in kept] == [(256, 256, (16, 64), 32), (256, 256, (32, 64), 32), (64, 64, (16, 16), 16)]


def test_the_configs_timed_on_a_cpu_are_one_a_piece():
    """Of the configs within CPU_WITHIN of the best estimate, each piece's best: at 2048^3 with the AVX-512 speeds,
    where 32x64/K32 pieces had two of the three best estimates (with and without prefetch), 64x64/K64, 32x64/K32
    and 32x64/K64 are timed."""
    kept = fastest_on_cpu(plain_configs(), 2048, 2048, 2048, 2, PIECE_SPEED)
    assert [(tuple(c.sg_data), c.kwargs["BK"]) for c in kept] == [((64, 64), 64), ((32, 64), 32), ((32, 64), 64)]


def test_an_empty_gemm_or_one_of_few_multiply_adds_keeps_one_config():
    """K = 0 estimates every config at 0: they all do nothing, so the tuner keeps one and times none; so too under
    TIMED_FROM multiply-adds, where timing would cost more than any config could gain (with AVX2's speeds a 1x1x1
    GEMM has a second config within CPU_WITHIN)."""
    assert len(fastest_on_cpu(plain_configs(), 8, 8, 0, 2, PIECE_SPEED)) == 1
    assert TIMED_FROM == 256 ** 3
    for speeds in (PIECE_SPEED, PIECE_SPEED_16_REGISTERS):
        assert len(fastest_on_cpu(plain_configs(), 1, 1, 1, 2, speeds)) == 1
        assert len(fastest_on_cpu(plain_configs(), 255, 256, 256, 2, speeds)) == 1
        assert len(fastest_on_cpu(plain_configs(), 256, 256, 256, 2, speeds)) == 3


def test_the_tuner_on_the_cpu_device_drops_prefetch_and_load_blocks_then_estimates():
    """No prefetch (a no-op there), no load blocks (the `cpu` target reads DPAS blocks, Target.largest_loads), then
    fastest_on_cpu for the device's compute units; every config's piece has a speed."""
    from spirv_tools import cpu_queue
    queue = cpu_queue()
    plain = [c for c in configs() if c.kwargs["PREFETCH"] == 0 and c.kwargs["A_LAYOUT"] is None
             and c.kwargs["B_LAYOUT"] is None]
    speeds, units = piece_speeds(get_target("cpu").cpu), queue.sycl_device.max_compute_units
    for panels in (False, True):  # a launch with B in panels tunes the configs that read them, the others the rest
        named = {"a": np.zeros((1, 1), np.float32), "M": 300, "N": 200, "K": 100, "B_PANELS": panels}
        assert configs_to_time(configs(), named, device=queue) == fastest_on_cpu(
            [c for c in plain if in_panels(c) == panels and (not panels or c.kwargs["BN"] == PANEL_COLUMNS)], 300,
            200, 100, units, speeds)
    assert {(c.sg_data[0], c.sg_data[1], c.kwargs["BK"]) for c in configs()} == {(*p, bk) for p, bk in PIECE_SPEED}


def test_cpu_estimate_counts_waves_of_workgroups_and_padding():
    config = next(c for c in configs() if piece(c) == (64, 64, (16, 16), 16))
    one_wave = 64 * 64 * 16 / PIECE_SPEED[((16, 16), 16)]
    assert cpu_estimate(config, 1, 1, 1, 2) == one_wave
    assert cpu_estimate(config, 128, 64, 16, 2) == one_wave  # two workgroups, one on each unit
    assert cpu_estimate(config, 192, 64, 16, 2) == 2 * one_wave  # the third waits
    assert cpu_estimate(config, 64, 64, 17, 2) == 2 * one_wave  # K padded to two K tiles


def test_prefetch_config_prefetches_on_pvc():
    """RFC Appendix 2.1's cooperative prefetch: each K step prefetches the A and B tiles 3 steps ahead."""
    if not ocloc.available(get_target("xe-hpc")):
        pytest.skip("the current GPU compiler is not installed")
    config = next(c for c in configs() if c.kwargs["PREFETCH"] == 3 and c.kwargs["A_LAYOUT"] is None
                  and c.kwargs["B_LAYOUT"] is None)
    a, b, c = np.zeros((512, 512), np.float16), np.zeros((512, 512), np.float16), np.zeros((512, 512), np.float32)
    compiled = matmul_kernel.kernel.warmup(a, b, c, c, 512, 512, 512, 0, 512, ACC=xetile.float32, HAS_BIAS=False,
                                           ACTIVATION="", INPUT_PRECISION="ieee", target="xe-hpc",
                                           **config.all_kwargs())
    (loop,) = json.loads(compiled.asm["isa_stats"])["loops"]
    assert loop["dpas"] == 32 and loop["prefetches"] >= 2 and loop["scratch"] == 0
