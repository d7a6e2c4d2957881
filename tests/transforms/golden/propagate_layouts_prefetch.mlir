// RUN: propagate-layouts target=xe-hpc
// The tutorial GEMM's 256x256 workgroup tile after insert-prefetch (distance 1), C split [8, 4] over 32 subgroups
// (the launch's sg_layout/sg_data on tile_mma). The loads keep tile_mma's pieces: 4 subgroups share each 32x32 piece
// of A, 8 each 32x64 piece of B. The prefetch tiles (%15, %19 and what moves and carries them) are only prefetched:
// they take the cooperative layout, all 32 subgroups on different pieces, each a single 8x32 f16 2D prefetch
// message (64 bytes wide, a whole cache line a row): A [32, 1], B [4, 8] (RFC Appendix 2.1's #mp_a_pfh, #mp_b_pfh).
// A subgroup prefetches 2 x 512 bytes a K step, the workgroup each of A's and B's 16 KiB once.
func.func @gemm(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %M: i32, %N: i32, %K: i32) attributes {BM = 256, BN = 256, BK = 32, B_ORDER = None, LA = None, LB = None, ACC = f32, PRECISION = "ieee"} {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 256 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = gpu.block_id y : i32
  %4 = arith.muli %3, %1 : i32
  %5 = arith.index_cast %2 : i32 to index
  %6 = arith.constant 0 : index
  %7 = xetile.init_tile %a[%5, %6] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<256x32xf16>
  %8 = arith.index_cast %4 : i32 to index
  %9 = xetile.init_tile %b[%6, %8] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<32x256xf16>
  %10 = arith.constant dense<0.000000e+00> : vector<256x256xf32>
  %11 = arith.constant 0 : i32
  %12 = arith.constant 32 : i32
  %13 = arith.constant 0 : index
  %14 = arith.constant 32 : index
  %15 = xetile.init_tile %a[%5, %6] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<256x32xf16>
  xetile.prefetch_tile %15 locality<3> : !xetile.tile<256x32xf16>
  %16 = xetile.update_tile_offset %15, [%13, %14] : !xetile.tile<256x32xf16>
  %17 = arith.constant 32 : index
  %18 = arith.constant 0 : index
  %19 = xetile.init_tile %b[%6, %8] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<32x256xf16>
  xetile.prefetch_tile %19 locality<3> : !xetile.tile<32x256xf16>
  %20 = xetile.update_tile_offset %19, [%17, %18] : !xetile.tile<32x256xf16>
  %21:5 = scf.for %k = %11 to %K step %12 iter_args(%acc = %10, %ta = %7, %tb = %9, %prefetch = %16, %prefetch_1 = %20) -> (vector<256x256xf32>, !xetile.tile<256x32xf16>, !xetile.tile<32x256xf16>, !xetile.tile<256x32xf16>, !xetile.tile<32x256xf16>) : i32 {
    xetile.prefetch_tile %prefetch_1 locality<3> : !xetile.tile<32x256xf16>
    xetile.prefetch_tile %prefetch locality<3> : !xetile.tile<256x32xf16>
    %22 = xetile.load_tile %ta : !xetile.tile<256x32xf16> -> vector<256x32xf16>
    %23 = xetile.load_tile %tb : !xetile.tile<32x256xf16> -> vector<32x256xf16>
    %24 = xetile.tile_mma %22, %23, %acc {wg_map = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64]>} : vector<256x32xf16>, vector<32x256xf16>, vector<256x256xf32> into vector<256x256xf32>
    %25 = arith.constant 0 : index
    %26 = arith.constant 32 : index
    %27 = xetile.update_tile_offset %ta, [%25, %26] : !xetile.tile<256x32xf16>
    %28 = xetile.update_tile_offset %tb, [%26, %25] : !xetile.tile<32x256xf16>
    %29 = xetile.update_tile_offset %prefetch, [%13, %14] : !xetile.tile<256x32xf16>
    %30 = xetile.update_tile_offset %prefetch_1, [%17, %18] : !xetile.tile<32x256xf16>
    scf.yield %24, %27, %28, %29, %30 : vector<256x256xf32>, !xetile.tile<256x32xf16>, !xetile.tile<32x256xf16>, !xetile.tile<256x32xf16>, !xetile.tile<32x256xf16>
  }
  %31 = arith.index_cast %2 : i32 to index
  %32 = arith.index_cast %4 : i32 to index
  %33 = xetile.init_tile %c[%31, %32] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<256x256xf32>
  xetile.store_tile %21#0, %33 : vector<256x256xf32>, !xetile.tile<256x256xf32>
  func.return
}
// -----
func.func @gemm(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %M: i32, %N: i32, %K: i32) attributes {BM = 256, BN = 256, BK = 32, B_ORDER = None, LA = None, LB = None, ACC = f32, PRECISION = "ieee"} {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 256 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = gpu.block_id y : i32
  %4 = arith.muli %3, %1 : i32
  %5 = arith.index_cast %2 : i32 to index
  %6 = arith.constant 0 : index
  %7 = xetile.init_tile %a[%5, %6] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 32], inst_data = [32, 32]>>>
  %8 = arith.index_cast %4 : i32 to index
  %9 = xetile.init_tile %b[%6, %8] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [32, 32]>>>
  %10 = arith.constant dense<0.000000e+00> {wg_map = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<256x256xf32>
  %11 = arith.constant 0 : i32
  %12 = arith.constant 32 : i32
  %13 = arith.constant 0 : index
  %14 = arith.constant 32 : index
  %15 = xetile.init_tile %a[%5, %6] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [32, 1], sg_data = [8, 32], inst_data = [8, 32]>>>
  xetile.prefetch_tile %15 locality<3> : !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [32, 1], sg_data = [8, 32], inst_data = [8, 32]>>>
  %16 = xetile.update_tile_offset %15, [%13, %14] : !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [32, 1], sg_data = [8, 32], inst_data = [8, 32]>>>
  %17 = arith.constant 32 : index
  %18 = arith.constant 0 : index
  %19 = xetile.init_tile %b[%6, %8] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [4, 8], sg_data = [8, 32], inst_data = [8, 32]>>>
  xetile.prefetch_tile %19 locality<3> : !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [4, 8], sg_data = [8, 32], inst_data = [8, 32]>>>
  %20 = xetile.update_tile_offset %19, [%17, %18] : !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [4, 8], sg_data = [8, 32], inst_data = [8, 32]>>>
  %21:5 = scf.for %k = %11 to %K step %12 iter_args(%acc = %10, %ta = %7, %tb = %9, %prefetch = %16, %prefetch_1 = %20) -> (vector<256x256xf32>, !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 32], inst_data = [32, 32]>>>, !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [32, 32]>>>, !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [32, 1], sg_data = [8, 32], inst_data = [8, 32]>>>, !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [4, 8], sg_data = [8, 32], inst_data = [8, 32]>>>) : i32 {
    xetile.prefetch_tile %prefetch_1 locality<3> : !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [4, 8], sg_data = [8, 32], inst_data = [8, 32]>>>
    xetile.prefetch_tile %prefetch locality<3> : !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [32, 1], sg_data = [8, 32], inst_data = [8, 32]>>>
    %22 = xetile.load_tile %ta {wg_map = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 32], inst_data = [32, 32], lane_layout = [1, 16], lane_data = [1, 1]>} : !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 32], inst_data = [32, 32]>>> -> vector<256x32xf16>
    %23 = xetile.load_tile %tb {wg_map = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [32, 32], lane_layout = [1, 16], lane_data = [2, 1]>} : !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [32, 32]>>> -> vector<32x256xf16>
    %24 = xetile.tile_conv_layout %22 {src_wg_map = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 32], inst_data = [32, 32], lane_layout = [1, 16], lane_data = [1, 1]>, wg_map = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 32], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<256x32xf16> into vector<256x32xf16>
    %25 = xetile.tile_conv_layout %23 {src_wg_map = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [32, 32], lane_layout = [1, 16], lane_data = [2, 1]>, wg_map = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [16, 16], lane_layout = [1, 16], lane_data = [2, 1]>} : vector<32x256xf16> into vector<32x256xf16>
    %26 = xetile.tile_mma %24, %25, %acc {wg_map = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<256x32xf16>, vector<32x256xf16>, vector<256x256xf32> into vector<256x256xf32>
    %27 = arith.constant 0 : index
    %28 = arith.constant 32 : index
    %29 = xetile.update_tile_offset %ta, [%27, %28] : !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 32], inst_data = [32, 32]>>>
    %30 = xetile.update_tile_offset %tb, [%28, %27] : !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [32, 32]>>>
    %31 = xetile.update_tile_offset %prefetch, [%13, %14] : !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [32, 1], sg_data = [8, 32], inst_data = [8, 32]>>>
    %32 = xetile.update_tile_offset %prefetch_1, [%17, %18] : !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [4, 8], sg_data = [8, 32], inst_data = [8, 32]>>>
    scf.yield %26, %29, %30, %31, %32 : vector<256x256xf32>, !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 32], inst_data = [32, 32]>>>, !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [32, 32]>>>, !xetile.tile<256x32xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [32, 1], sg_data = [8, 32], inst_data = [8, 32]>>>, !xetile.tile<32x256xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [4, 8], sg_data = [8, 32], inst_data = [8, 32]>>>
  } {layout_result_0 = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>}
  %33 = arith.index_cast %2 : i32 to index
  %34 = arith.index_cast %4 : i32 to index
  %35 = xetile.init_tile %c[%33, %34] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<256x256xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [8, 16]>>>
  xetile.store_tile %21#0, %35 : vector<256x256xf32>, !xetile.tile<256x256xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [8, 4], sg_data = [32, 64], inst_data = [8, 16]>>>
  func.return
}
