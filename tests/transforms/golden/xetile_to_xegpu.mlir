// RUN: xetile-to-xegpu
// The GEMM tile with layouts: tiles become tensor descriptors carrying their layouts, loads and stores load_nd and
// store_nd, tile_mma xegpu.dpas, the K walk update_nd_offset; the loop carries descriptors.
func.func @gemm_tile(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %K: i32) attributes {BM = 8, BN = 16, BK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 8 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = gpu.block_id y : i32
  %4 = arith.constant 16 : i32
  %5 = arith.muli %3, %4 : i32
  %6 = arith.index_cast %2 : i32 to index
  %7 = arith.constant 0 : index
  %8 = xetile.init_tile %a[%6, %7] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<8x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>
  %9 = arith.index_cast %5 : i32 to index
  %10 = xetile.init_tile %b[%7, %9] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<16x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>>>
  %11 = arith.constant dense<0.000000e+00> {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  %12 = arith.constant 0 : i32
  %13:3 = scf.for %k = %12 to %K step %4 iter_args(%acc = %11, %ta = %8, %tb = %10) -> (vector<8x16xf32>, !xetile.tile<8x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>, !xetile.tile<16x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>>>) : i32 {
    %14 = xetile.load_tile %ta {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xetile.tile<8x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>> -> vector<8x16xf16>
    %15 = xetile.load_tile %tb {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16], lane_layout = [1, 16], lane_data = [2, 1]>} : !xetile.tile<16x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>>> -> vector<16x16xf16>
    %16 = xetile.tile_mma %14, %15, %acc {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf16>, vector<16x16xf16>, vector<8x16xf32> into vector<8x16xf32>
    %17 = arith.constant 0 : index
    %18 = arith.constant 16 : index
    %19 = xetile.update_tile_offset %ta, [%17, %18] : !xetile.tile<8x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>
    %20 = xetile.update_tile_offset %tb, [%18, %17] : !xetile.tile<16x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>>>
    scf.yield %16, %19, %20 : vector<8x16xf32>, !xetile.tile<8x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>, !xetile.tile<16x16xf16, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>>>
  } {layout_result_0 = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>}
  %21 = arith.index_cast %2 : i32 to index
  %22 = arith.index_cast %5 : i32 to index
  %23 = xetile.init_tile %c[%21, %22] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x16xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>
  xetile.store_tile %13#0, %23 : vector<8x16xf32>, !xetile.tile<8x16xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>
  func.return
}
// -----
func.func @gemm_tile(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %K: i32) attributes {BM = 8, BN = 16, BK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 8 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = gpu.block_id y : i32
  %4 = arith.constant 16 : i32
  %5 = arith.muli %3, %4 : i32
  %6 = arith.index_cast %2 : i32 to index
  %7 = arith.constant 0 : index
  %8 = xegpu.create_nd_tdesc %a[%6, %7] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  %9 = arith.index_cast %5 : i32 to index
  %10 = xegpu.create_nd_tdesc %b[%7, %9] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>>
  %11 = arith.constant dense<0.000000e+00> {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  %12 = arith.constant 0 : i32
  %13:3 = scf.for %k = %12 to %K step %4 iter_args(%acc = %11, %ta = %8, %tb = %10) -> (vector<8x16xf32>, !xegpu.tensor_desc<8x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>, !xegpu.tensor_desc<16x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>>) : i32 {
    %14 = xegpu.load_nd %ta {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>> -> vector<8x16xf16>
    %15 = xegpu.load_nd %tb {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16], lane_layout = [1, 16], lane_data = [2, 1]>} : !xegpu.tensor_desc<16x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>> -> vector<16x16xf16>
    %16 = xegpu.dpas %14, %15, %acc {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf16>, vector<16x16xf16>, vector<8x16xf32> into vector<8x16xf32>
    %17 = arith.constant 0 : index
    %18 = arith.constant 16 : index
    %19 = xegpu.update_nd_offset %ta, [%17, %18] : !xegpu.tensor_desc<8x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>
    %20 = xegpu.update_nd_offset %tb, [%18, %17] : !xegpu.tensor_desc<16x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>>
    scf.yield %16, %19, %20 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>, !xegpu.tensor_desc<16x16xf16, #xegpu.layout<sg_layout = [1, 1], sg_data = [16, 16], inst_data = [16, 16]>>
  } {layout_result_0 = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>}
  %21 = arith.index_cast %2 : i32 to index
  %22 = arith.index_cast %5 : i32 to index
  %23 = xegpu.create_nd_tdesc %c[%21, %22] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  xegpu.store_nd %13#0, %23 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  func.return
}
