"""compiler/mlir_export.py: the tutorial kernels at the workgroup XeGPU level in upstream MLIR 23's syntax, parsed and
verified by its mlir-opt (installed by `install-gpu-compiler --with-mlir`); the GEMM also through upstream's own
XeGPU pipeline and Intel's ocloc. The mlir-opt checks skip when it is not installed."""
import re
import subprocess
import sys

import numpy as np
import pytest

import xetile_jit as xetile
from conftest import ROOT, subprocess_env, tutorial
from xetile_jit.compiler.mlir_export import export_mlir
from xetile_jit.ir.parser import parse_func
from xetile_jit.target.targets import LARGE_GRF, get_target
from xetile_jit.toolchain import isa_stats, ocloc, upstream_mlir

needs_mlir_opt = pytest.mark.skipif(upstream_mlir.mlir_opt() is None,
                                    reason="mlir-opt 23 is not installed (install-gpu-compiler --with-mlir)")
# tutorial 7's `res` and the row sums' `sums` are (M, 1) arrays, which 2D block messages cannot address, as intended
pytestmark = pytest.mark.filterwarnings("ignore::xetile_jit.BlockIOFallbackWarning")
GEMM_SIZES = dict(BM=256, BN=256, BK=32, sg_layout=[8, 4], sg_data=[32, 64])


def gemm(target="xe-hpc", dtype=np.float16, **options):
    a, b = np.zeros((1024, 512), dtype), np.zeros((512, 768), dtype)
    c = np.zeros((1024, 768), np.float32)
    return tutorial("03-matrix-multiplication").matmul_kernel.warmup(a, b, c, 1024, 768, 512, **GEMM_SIZES, **options,
                                                                     target=target)


def tf32_gemm():
    return gemm(dtype=np.float32, INPUT_PRECISION="tf32")


def int8_gemm(dtype=np.int8):
    """xetile.ops.matmul's kernel (tutorial 3's accumulates in f32) in its 256x256 config of K tile 64."""
    from xetile_jit.ops.matmul import configs, matmul_kernel
    config = next(c for c in configs() if (c.kwargs["BM"], c.kwargs["BN"], c.kwargs["BK"], c.sg_data) == (
        256, 256, 64, [32, 64]))
    a, b, c = np.zeros((1024, 512), dtype), np.zeros((512, 768), dtype), np.zeros((1024, 768), np.int32)
    return matmul_kernel.kernel.warmup(a, b, c, c, 1024, 768, 512, 0, 512, HAS_BIAS=False, ACTIVATION="",
                                       ACC=xetile.int32, INPUT_PRECISION="ieee", target="xe-hpc",
                                       **config.all_kwargs())


def softmax(n: int = 500):
    x = np.zeros((1000, n), np.float32)
    return tutorial("02-fused-softmax").softmax_kernel.warmup(x, np.zeros_like(x), 1000, BM=16, BN=512,
                                                              target="xe-hpc")


def layer_norm():
    x, w = np.zeros((64, 1000), np.float32), np.zeros(1000, np.float32)
    return tutorial("05-layer-norm").layer_norm_kernel.warmup(x, w, w, np.zeros_like(x), 1000, 1e-5, BLOCK=1024,
                                                              target="xe-hpc")


def attention():
    module = tutorial("06-fused-attention")
    q = np.zeros((1, 2, 128, 64), np.float16)
    args, options = module.launch_arguments(q, q, q, np.zeros(q.shape, np.float32), False, 32, 32)
    return module.attention_kernel.warmup(*args, **options, target="xe-hpc")


def column_sum():
    terms = np.zeros((64, 256), np.float32)
    pytest.importorskip("torch")  # tutorial 12 imports it
    return tutorial("12-torch-layer-norm").column_sum_kernel.warmup(terms, np.zeros((1, 256), np.float32), 64, BM=16,
                                                                    BN=256, target="xe-hpc")


def bias_reduce():
    module = tutorial("07-gemm-bias-reduce")
    a, bt = np.zeros((256, 64), np.float16), np.zeros((256, 64), np.float16)
    bias, res = np.zeros((1, 256), np.float32), np.zeros((256, 1), np.float32)
    return module.gemm_bias_reduce.warmup(a, bt, bias, res, 64, BM=128, BN=128, BK=32, L=module.layouts(128, 128, 32),
                                          target="xe-hpc")


def slm_gemm():
    module = tutorial("08-slm-cooperative-gemm")
    a, b, c = np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float32)
    return module.slm_gemm_kernel.warmup(a, b, c, 64, 64, 64, **module.options(32, 32, 16), target="xe-hpc")


def vector_add():
    x = np.zeros(4096, np.float32)
    return tutorial("01-vector-add").add.warmup(x, x, np.zeros_like(x), BLOCK=1024, target="xe-hpc")


def batched_gemm():
    a, b, c = np.zeros((2, 128, 64), np.float16), np.zeros((2, 64, 128), np.float16), np.zeros((2, 128, 128), np.float32)
    return tutorial("09-batched-gemm").bmm_kernel.warmup(a, b, c, 64, BM=128, BN=128, BK=32, sg_layout=[4, 4],
                                                         sg_data=[32, 32], target="xe-hpc")


@xetile.kernel
def accumulate(x, y):
    xetile.atomic_rmw_tile("add", xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 32])),
                           xetile.init_tile(y, [0, 0], [16, 32]))


def atomic():
    x = np.zeros((16, 32), np.float32)
    return accumulate.warmup(x, np.zeros_like(x), target="xe-hpc")


@xetile.kernel
def swap(x, y):
    t = xetile.init_tile(y, [0, 0], [16, 32])
    xetile.atomic_cas(t, xetile.load_tile(t), xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 32])))


def compare_and_swap():
    x = np.zeros((16, 32), np.int32)
    return swap.warmup(x, np.zeros_like(x), target="xe-hpc")


@xetile.kernel
def row_sums(x, sums):
    v = xetile.load_tile(xetile.init_tile(x, [0, 0], [16, 48]))
    xetile.store_tile(xetile.init_tile(sums, [0, 0], [16, 1]), xetile.tile_reduce("add", v, [1]))


def stored_column():
    return row_sums.warmup(np.zeros((16, 48), np.float32), np.zeros((16, 1), np.float32), target="xe-hpc")


EXPORTED = {"vector-add": vector_add, "softmax": softmax, "gemm": gemm, "layer-norm": layer_norm,
            "attention": attention, "batched-gemm": batched_gemm, "column-sum": column_sum,
            "slm-cooperative-gemm": slm_gemm, "gemm-bias-reduce": bias_reduce, "atomic": atomic,
            "int8-gemm": int8_gemm, "uint8-gemm": lambda: int8_gemm(np.uint8), "tf32-gemm": tf32_gemm}
REFUSED = {  # kernel -> the construct its NotImplementedError names
    "atomic-cas": (compare_and_swap, "an atomic compare-and-swap"),
    "stored-column": (stored_column, "xegpu.store_nd of array sums, which 2D block messages cannot address"),
}
UPSTREAM_OPS = ("xegpu.load_nd", "xegpu.store_nd", "xegpu.load_matrix", "xegpu.dpas", "xegpu.atomic_rmw")


def test_gemm_text():
    """Offsets travel as index iter_args, the layouts sit on the anchor ops, the memrefs have the launch's shapes."""
    text = gemm().asm["mlir"]
    assert text.startswith("gpu.module @matmul_kernel_module {\n  gpu.func @matmul_kernel(%a: memref<1024x512xf16, "
                           "strided<[512, 1]>>, %b: memref<512x768xf16, strided<[768, 1]>>, %c: memref<1024x768xf32, "
                           "strided<[768, 1]>>, %M: i32, %N: i32, %K: i32) kernel attributes "
                           "{known_block_size = array<i32: 512, 1, 1>} {\n")
    assert "update_nd_offset" not in text and "lane_layout" not in text
    # the accumulator's start, the one op outside the anchors with a layout, gives it for upstream's propagation
    assert [line.split(" = ")[1] for line in text.splitlines() if "layout_result" in line] == ["arith.constant {"
                                                                                            "layout_result_0"]
    assert "-> (vector<256x256xf32>, index, index, index, index) : i32 {" in text
    assert text.count("xegpu.load_nd") == 2 and text.count("xegpu.store_nd") == 1
    assert ("{layout_a = #xegpu.layout<sg_layout = [8, 4], sg_data = [32, 32], inst_data = [8, 16]>, "
            "layout_b = #xegpu.layout<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [16, 16]>, "
            "layout_cd = #xegpu.layout<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [8, 16]>}") in text


def test_padding_is_a_select():
    """Upstream pads with 0: softmax's -inf outside the 1000 x 500 array is selected by row and column."""
    text = softmax().asm["mlir"]
    assert "arith.constant dense<1000> : vector<16xindex>" in text
    assert "arith.constant dense<500> : vector<512xindex>" in text
    assert "arith.constant dense<0xFF800000> : vector<16x512xf32>" in text
    assert text.count("arith.select") == 1 and text.count("vector.multi_reduction") == 2


def test_slm_buffers_are_mem_descs_read_by_load_matrix():
    """Tutorial 8's two buffers: workgroup memory of their bytes as mem_descs; the copies into them store_matrix,
    the tile_mma operands load_matrix, at the offsets the loop computes; its barriers stay."""
    text = slm_gemm().asm["mlir"]
    assert text.count("memref.alloca() : memref<2048xi8, 3>") == 2
    assert text.count("xegpu.create_mem_desc") == 2 and text.count("-> !xegpu.mem_desc<32x32xf16>") == 2
    assert [line.split("{")[0].strip() for line in text.splitlines() if "load_matrix" in line] == [
        "%23 = xegpu.load_matrix %5[%18, %22]", "%25 = xegpu.load_matrix %6[%24, %18]"]
    assert text.count("xegpu.store_matrix") == 4 and text.count("gpu.barrier") == 2


@needs_mlir_opt
@pytest.mark.parametrize("name", EXPORTED)
def test_upstream_parses_and_verifies(name):
    text = EXPORTED[name]().asm["mlir"]
    printed = upstream_mlir.run_mlir_opt(text)
    counts = [text.count(op) for op in UPSTREAM_OPS]
    assert [printed.count(op) for op in UPSTREAM_OPS] == counts and counts[0] > 0


@pytest.mark.parametrize("name", REFUSED)
def test_unsupported_constructs_name_themselves(name):
    """Reading "mlir" names the construct; the asm then has no "mlir" key, so it iterates (`dict(asm)`)."""
    make, construct = REFUSED[name]
    asm = make().asm
    with pytest.raises(NotImplementedError, match=f"upstream MLIR export: .*{construct}"):
        asm["mlir"]
    assert "mlir" not in asm and "xegpu" in dict(asm) and "mlir" not in dict(asm) and len(asm) == len(dict(asm))


def test_views_of_batched_and_one_dimensional_arrays():
    batched = batched_gemm().asm["mlir"]
    assert ("memref.subview %a[%6, 0, 0] [1, 128, 64] [1, 1, 1] : memref<2x128x64xf16, strided<[8192, 64, 1]>> to "
            "memref<128x64xf16, strided<[64, 1], offset: ?>>") in batched
    assert ("memref.expand_shape %x [[0, 1]] output_shape [1, 4096] : memref<4096xf32, strided<[1]>> into "
            "memref<1x4096xf32>") in vector_add().asm["mlir"]


def test_numpy_target_has_no_export():
    x = np.zeros((16, 512), np.float32)
    compiled = tutorial("02-fused-softmax").softmax_kernel.warmup(x, x, 16, BM=16, BN=512, target="numpy")
    assert "mlir" not in compiled.asm and len(compiled.asm) == len(list(compiled.asm))


@needs_mlir_opt
@pytest.mark.skipif(not ocloc.available(get_target("xe-hpc")), reason="the current ocloc is not installed")
@pytest.mark.parametrize("options, prefetches", [({}, 0), ({"ACTIVATION": "relu"}, 0), ({"prefetch_distance": 2}, 2)])
def test_gemm_through_upstream_pipeline(options, prefetches):
    """Upstream lowers our exported GEMM to SPIR-V that ocloc builds for PVC: 32 dpas and the prefetches per K step
    (prefetch_distance's tiles in their cooperative layout, which the export carries: 2 of 8x32), no spill. The relu after the loop needs its layout printed (upstream's propagation finds none from the anchors
    there)."""
    target = get_target("xe-hpc")
    spirv = upstream_mlir.lower_to_spirv(gemm(**options).asm["mlir"], "pvc")
    assert spirv[:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic number, little-endian
    build = ocloc.gpu_build(spirv, target, target.dpas_build_options)
    loop = isa_stats.innermost_loops(build.isa)[0]
    assert (loop.dpas, loop.prefetches, build.spill_bytes) == (32, prefetches, 0)


@needs_mlir_opt
@pytest.mark.skipif(not ocloc.available(get_target("xe2")), reason="the current ocloc is not installed")
def test_gemm_zebin_through_upstream_pipeline_keeps_the_grf_mode():
    """upstream_mlir.gpu_build: the pipeline's own ocloc build for bmg takes our driver options: 256 GRFs and no
    spill with the large register file, IGC's default 128 GRFs spilling otherwise (its spill and fill messages
    counted); ptl is a chip upstream's pipeline does not lay out for, its first error the reason. Two driver options
    are refused (the pipeline quotes them to ocloc, and IGC then missed the large register file)."""
    text = gemm(target="xe2").asm["mlir"]
    large = upstream_mlir.gpu_build(text, get_target("xe2"), LARGE_GRF).build
    loop = isa_stats.innermost_loops(large.isa)[0]
    assert (large.grf_count, large.spill_bytes, loop.dpas, loop.loads) == (256, 0, 32, 3)
    small = upstream_mlir.gpu_build(text, get_target("xe2")).build
    assert small.grf_count == 128 and small.spill_bytes > 4096
    assert isa_stats.counts(small.isa.splitlines()).scratch > 0
    with pytest.raises(upstream_mlir.MlirError) as refused:
        upstream_mlir.gpu_build(text, get_target("xe3"), LARGE_GRF)
    assert refused.value.reason == "Failed to update operation with the layout."
    with pytest.raises(NotImplementedError, match="more than one driver option"):
        upstream_mlir.gpu_build(text, get_target("xe2"), f"{LARGE_GRF} -cl-fast-relaxed-math")


PIPELINED = {"vector-add": vector_add, "batched-gemm": batched_gemm, "column-sum": column_sum,
             "slm-cooperative-gemm": slm_gemm}


@needs_mlir_opt
@pytest.mark.skipif(not ocloc.available(get_target("xe-hpc")), reason="the current ocloc is not installed")
@pytest.mark.parametrize("name", PIPELINED)
def test_more_kernels_through_upstream_pipeline(name):
    """Kernels without a reduction across subgroups (which upstream's pipeline refuses: softmax, layer norm, attention)
    lower to SPIR-V that ocloc builds; the GEMMs (batched, and through SLM) keep their 2D block loads and DPAS."""
    target = get_target("xe-hpc")
    build = ocloc.gpu_build(upstream_mlir.lower_to_spirv(PIPELINED[name]().asm["mlir"], "pvc"), target,
                            target.dpas_build_options)
    assert isa_stats.block_messages(build.isa) and build.spill_bytes == 0
    assert (isa_stats.dpas_count(build.isa) > 0) == name.endswith("gemm")


def test_mlir_string_unescape():
    assert upstream_mlir.unescape(r'\03\02#\07a\\b\"') == b'\x03\x02#\x07a\\b"'


def test_cli_emit_mlir():
    call = ("softmax_kernel(f32[64,256], f32[64,256], 64, BM=16, BN=256)")
    run = subprocess.run([sys.executable, "-m", "xetile_jit", "compile", str(ROOT / "tutorials/02-fused-softmax.py"),
                          "--call", call, "--emit", "mlir"], capture_output=True, text=True, env=subprocess_env(),
                         check=True)
    assert run.stdout.startswith("gpu.module @softmax_kernel_module {\n  gpu.func @softmax_kernel(%x: "
                                 "memref<64x256xf32, strided<[256, 1]>>")



def test_atomic_is_on_a_subview_masked_to_the_array():
    """Tutorial 7's row sums: the (256, 1) array `res`, which 2D block messages cannot address, is only updated by
    atomics, on a descriptor of the 128x1 block's subview at row %i, masked to the array's 256 rows and 1 column."""
    text = bias_reduce().asm["mlir"]
    view = re.search(r"(%\w+) = memref.subview %res\[(%\w+), %\w+\] \[128, 1\] \[1, 1\] : memref<256x1xf32, "
                     r"strided<\[1, 1\]>> to (memref<128x1xf32, strided<\[1, 1\], offset: \?>>)", text)
    assert view is not None and f"xegpu.create_nd_tdesc {view[1]} : {view[3]}" in text
    assert "xegpu.create_nd_tdesc %res" not in text
    assert [line.split(" : ")[1] for line in text.splitlines() if "arith.constant dense<" in line and "index>" in line
            ] == ["vector<128xindex>", "vector<1xindex>"]
    assert "dense<256> : vector<128xindex>" in text and "dense<1> : vector<1xindex>" in text
    assert re.search(r"xegpu.atomic_rmw addf %desc, %inside, %\d+ \{layout = #xegpu.layout<sg_layout = \[32, 1\], "
                     r"sg_data = \[4, 1\], inst_data = \[4, 1\]>\} : !xegpu.tensor_desc<128x1xf32>, "
                     r"vector<128x1xi1>, vector<128x1xf32> -> vector<128x1xf32>", text)


def test_dpas_operand_types():
    """int8: A and B as the loaded 8-bit matrices (upstream packs B itself); tf32: the f32 loads truncated to tf32
    toward zero, as the hardware reads them (the exact f32 dpas keeps its f32 operands)."""
    int8 = int8_gemm().asm["mlir"]
    assert re.findall(r"xegpu.dpas .* : (.*)", int8) == [
        "vector<256x64xi8>, vector<64x256xi8>, vector<256x256xi32> -> vector<256x256xi32>"]
    tf32 = tf32_gemm().asm["mlir"]
    assert re.findall(r"arith.truncf %\d+ toward_zero : (.*)", tf32) == [
        "vector<256x32xf32> to vector<256x32xtf32>", "vector<32x256xf32> to vector<32x256xtf32>"]
    assert re.findall(r"xegpu.dpas .* : (.*)", tf32) == [
        "vector<256x32xtf32>, vector<32x256xtf32>, vector<256x256xf32> -> vector<256x256xf32>"]
    assert "truncf" not in gemm(dtype=np.float32).asm["mlir"]


def test_vnni_packed_b_is_refused():
    """Blocking packs 8-bit B into words below the workgroup level; a workgroup-level dpas given them is refused."""
    func = parse_func("func.func @packed(%a: vector<8x32xi8>, %b: vector<8x16xi32>) {\n"
                      "  %0 = xegpu.dpas %a, %b {vnni_b = i8} : vector<8x32xi8>, vector<8x16xi32> into "
                      "vector<8x16xi32>\n  func.return\n}")
    with pytest.raises(NotImplementedError, match=r"upstream MLIR export: dpas on B packed into VNNI words"):
        export_mlir(func, {}, 16)
