"""Hand-written OpenCL C softmax and layer norm, built by the OpenCL CPU runtime's own compiler: what the device
reaches on the rows without our compiler, beside our kernels in `bench_cpu.py` (target "opencl-c"); and the
device's f32 multiply-add peak (`fma_peak`), beside the GEMMs of `bench_gemm.py`.

The same work as the bench's xetile kernels: its rows a workgroup (`launcher`), a row a subgroup of 16 lanes (lane l
holds columns l, l + 16, ...), the row kept in a private array between its passes, computed in f32 (an f16 row
widened on load, rounded to nearest even on store; `vload_half`/`vstore_half_rte` ran 4x slower than `cl_khr_fp16`
conversions), `max` folded with `fmax` (NaN ignored, as `tile_reduce("max")`), the OpenCL `exp`, `rsqrt` and IEEE
division. Two partial results a fold, as the driver's vectorizer keeps one chain of `fmax` waiting on the one
before. The lane index is a `size_t`: with an `int` one the driver saw per-lane addresses and gathered and scattered
every block (3-4x slower). The rows must be multiples of 32 columns (every width the bench runs)."""
import numpy as np

from xetile_jit.runtime.kernel_bundles import kernel_bundle_api
from xetile_jit.runtime.sycl import kernel_arg

LANES = 16

SOURCE = r"""
#ifdef HALF
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half T;
#define LOAD(p, i) convert_float((p)[i])
#define STORE(p, i, v) ((p)[i] = convert_half_rte(v))
#else
typedef float T;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#endif
#define BLOCKS (W / 16)

__attribute__((intel_reqd_sub_group_size(16)))
__kernel void softmax(__global const T* x, __global T* y) {
    size_t row = get_global_id(1);
    size_t lane = get_local_id(0);
    __global const T* xr = x + row * W + lane;
    __global T* yr = y + row * W + lane;
    float v[BLOCKS];
    float m0 = -INFINITY, m1 = -INFINITY;
    for (int j = 0; j < BLOCKS; j += 2) {
        v[j] = LOAD(xr, j * 16);
        v[j + 1] = LOAD(xr, j * 16 + 16);
        m0 = fmax(m0, v[j]);
        m1 = fmax(m1, v[j + 1]);
    }
    float m = sub_group_reduce_max(fmax(m0, m1));
    float s0 = 0.0f, s1 = 0.0f;
    for (int j = 0; j < BLOCKS; j += 2) {
        v[j] = exp(v[j] - m);
        v[j + 1] = exp(v[j + 1] - m);
        s0 += v[j];
        s1 += v[j + 1];
    }
    float s = sub_group_reduce_add(s0 + s1);
    for (int j = 0; j < BLOCKS; j++)
        STORE(yr, j * 16, v[j] / s);
}

__attribute__((intel_reqd_sub_group_size(16)))
__kernel void layernorm(__global const T* x, __global const float* w, __global const float* b, __global T* y) {
    size_t row = get_global_id(1);
    size_t lane = get_local_id(0);
    __global const T* xr = x + row * W + lane;
    __global T* yr = y + row * W + lane;
    float v[BLOCKS];
    float s0 = 0.0f, s1 = 0.0f, q0 = 0.0f, q1 = 0.0f;
    for (int j = 0; j < BLOCKS; j += 2) {
        v[j] = LOAD(xr, j * 16);
        v[j + 1] = LOAD(xr, j * 16 + 16);
        s0 += v[j];
        s1 += v[j + 1];
        q0 += v[j] * v[j];
        q1 += v[j + 1] * v[j + 1];
    }
    float mean = sub_group_reduce_add(s0 + s1) / W;
    float var = sub_group_reduce_add(q0 + q1) / W - mean * mean;
    float rstd = rsqrt(var + 1e-5f);
    for (int j = 0; j < BLOCKS; j++)
        STORE(yr, j * 16, (v[j] - mean) * rstd * w[j * 16 + lane] + b[j * 16 + lane]);
}
"""

_PROGRAMS: dict = {}


def program(queue, width: int, half: bool, fast_math: bool = False, fp_fusion: bool = False):
    """The program for rows of `width` elements (f16 where `half`), built once per queue, for the float math of our
    launch options of the same names: `fast_math` builds it with `-cl-fast-relaxed-math` (approximate functions and
    division, contraction), `fp_fusion` as OpenCL C compiles by default (a multiply and an add into one FMA), and
    neither with `FP_CONTRACT OFF` first: each rounded, as our kernels and the interpreter do (layer norm's sum of
    squares and its scale-and-shift are where it shows)."""
    key = (queue, width, half, fast_math, fp_fusion)
    if key not in _PROGRAMS:
        options = f"-DW={width}" + (" -DHALF" if half else "") + (" -cl-fast-relaxed-math" if fast_math else "")
        source = SOURCE if fast_math or fp_fusion else "#pragma OPENCL FP_CONTRACT OFF\n" + SOURCE
        _PROGRAMS[key] = kernel_bundle_api().from_source(queue, source, options)
    return _PROGRAMS[key]


def launcher(name: str, arrays: list, half: bool, rows_per_workgroup: int, fast_math: bool = False,
             fp_fusion: bool = False):
    """A function that runs kernel `name` ("softmax" or "layernorm") on `arrays` (dpnp arrays: the input first,
    the output last), `rows_per_workgroup` rows a workgroup, and waits for it; `fast_math`, `fp_fusion`: see
    `program`."""
    x = arrays[0]
    rows, width = x.shape
    if width % (2 * LANES) or rows % rows_per_workgroup:
        raise ValueError(f"the OpenCL C reference takes rows of a multiple of {2 * LANES} columns, "
                         f"{rows_per_workgroup} rows at a time, not {rows}x{width}")
    queue = x.sycl_queue
    kernel = program(queue, width, half, fast_math, fp_fusion).get_sycl_kernel(name)
    args = [kernel_arg(a) for a in arrays]
    return lambda: queue.submit(kernel, args, [rows, LANES], [rows_per_workgroup, LANES]).wait()


# The device's f32 multiply-add peak, the ceiling of a GEMM's multiply-adds (ours widen f16 and bf16 to f32 first):
# PEAK_CHAINS independent FMA chains a work-item, enough to keep two FMA units of 4 cycles' latency busy, no memory
# access in the loop; the driver picks the vector width (with 16 chains AVX2's 16 ymm registers spilled: 170-176 GFLOP/s
# against 274 with 12 on the Zen 5 with AVX2 code).
PEAK_CHAINS = 12
PEAK_STEPS = 20000
PEAK_WORKGROUPS, PEAK_WORKGROUP_SIZE = 64, 16
PEAK_SOURCE = r"""
__kernel void fma_peak(__global float* out, float x, float y, int steps) {
    float a[CHAINS];
    for (int c = 0; c < CHAINS; c++)
        a[c] = get_global_id(0) + c;
    for (int i = 0; i < steps; i++)
        for (int c = 0; c < CHAINS; c++)
            a[c] = fma(a[c], x, y);
    float total = 0.0f;
    for (int c = 0; c < CHAINS; c++)
        total += a[c];
    out[get_global_id(0)] = total;
}
"""


def fma_peak(out) -> tuple:
    """A function that runs the multiply-add peak kernel on `out`'s queue and waits for it, and the flops of one
    run: `out` a dpnp f32 array of PEAK_WORKGROUPS * PEAK_WORKGROUP_SIZE elements, which it overwrites."""
    queue = out.sycl_queue
    if (queue, "fma_peak") not in _PROGRAMS:  # built once per queue, as `program`'s, not once a GEMM of the bench
        _PROGRAMS[queue, "fma_peak"] = kernel_bundle_api().from_source(queue, PEAK_SOURCE, f"-DCHAINS={PEAK_CHAINS}")
    kernel = _PROGRAMS[queue, "fma_peak"].get_sycl_kernel("fma_peak")
    items = PEAK_WORKGROUPS * PEAK_WORKGROUP_SIZE
    args = [kernel_arg(out), *(kernel_arg(np.float32(v)) for v in (0.999, 0.001)), kernel_arg(np.int32(PEAK_STEPS))]

    def run():
        queue.submit(kernel, args, [items], [PEAK_WORKGROUP_SIZE]).wait()
    return run, 2 * PEAK_CHAINS * PEAK_STEPS * items
