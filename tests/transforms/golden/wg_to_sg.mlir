// RUN: wg-to-sg
// x plus a broadcast bias row over two subgroups of 4 rows each: every op takes the subgroup's piece, at offsets
// from gpu.subgroup_id (row id / 1 * 4 of x and y, column id mod 1 * 32); the bias row, one row under sg_layout
// [2, 1], wraps: each subgroup loads all of it (row (id / 1) mod 1 = 0) and broadcasts it to its 4x32 piece.
func.func @add_bias(%x: memref<?x?xf32, strided<[?, 1]>>, %bias: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 32]>} {
  %0 = arith.constant 0 : index
  %1 = xegpu.create_nd_tdesc %bias[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x32xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [1, 32], inst_data = [1, 16]>>
  %2 = xegpu.load_nd %1 {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [1, 32], inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x32xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [1, 32], inst_data = [1, 16]>> -> vector<1x32xf32>
  %3 = xegpu.create_nd_tdesc %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x32xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16]>>
  %4 = xegpu.load_nd %3 {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x32xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16]>> -> vector<8x32xf32>
  %5 = xegpu.create_nd_tdesc %y[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x32xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16]>>
  %6 = vector.broadcast %2 [0] {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<1x32xf32> into vector<8x32xf32>
  %7 = arith.addf %4, %6 {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x32xf32>
  xegpu.store_nd %7, %5 : vector<8x32xf32>, !xegpu.tensor_desc<8x32xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16]>>
  func.return
}
// -----
func.func @add_bias(%x: memref<?x?xf32, strided<[?, 1]>>, %bias: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 32]>, num_subgroups = 2} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.muli %2, %1 : index
  %5 = arith.constant 0 : index
  %6 = arith.constant 4 : index
  %7 = arith.muli %2, %6 : index
  %8 = arith.constant 0 : index
  %9 = xegpu.create_nd_tdesc %bias[%5, %5] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x32xf32, #xegpu.layout<inst_data = [1, 16]>>
  %10 = xegpu.load_nd %9 {layout = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x32xf32, #xegpu.layout<inst_data = [1, 16]>> -> vector<1x32xf32>
  %11 = xegpu.create_nd_tdesc %x[%7, %5] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x32xf32, #xegpu.layout<inst_data = [4, 16]>>
  %12 = xegpu.load_nd %11 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<4x32xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<4x32xf32>
  %13 = xegpu.create_nd_tdesc %y[%7, %5] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x32xf32, #xegpu.layout<inst_data = [4, 16]>>
  %14 = vector.broadcast %10 [0] {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<1x32xf32> into vector<4x32xf32>
  %15 = arith.addf %12, %14 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x32xf32>
  xegpu.store_nd %15, %13 : vector<4x32xf32>, !xegpu.tensor_desc<4x32xf32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
