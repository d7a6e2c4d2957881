// RUN: propagate-layouts num_subgroups=2
// Row sums with no anchor over two subgroups: the rows split between them (sg_layout [2, 1]) so that the reduced
// dim 1 stays inside each subgroup, and the [8, 1] result keeps that split.
func.func @row_sums(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 8 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = arith.index_cast %2 : i32 to index
  %4 = arith.constant 0 : index
  %5 = xetile.init_tile %x[%3, %4] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x32xf32>
  %6 = xetile.load_tile %5 : !xetile.tile<8x32xf32> -> vector<8x32xf32>
  %7 = gpu.block_id x : i32
  %8 = arith.muli %7, %1 : i32
  %9 = arith.index_cast %8 : i32 to index
  %10 = xetile.init_tile %y[%9, %4] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x1xf32>
  %11 = xetile.tile_reduce <add> %6 [1] : vector<8x32xf32> into vector<8x1xf32>
  xetile.store_tile %11, %10 : vector<8x1xf32>, !xetile.tile<8x1xf32>
  func.return
}
// -----
func.func @row_sums(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 8 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = arith.index_cast %2 : i32 to index
  %4 = arith.constant 0 : index
  %5 = xetile.init_tile %x[%3, %4] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x32xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16]>>>
  %6 = xetile.load_tile %5 {wg_map = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xetile.tile<8x32xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 32], inst_data = [4, 16]>>> -> vector<8x32xf32>
  %7 = gpu.block_id x : i32
  %8 = arith.muli %7, %1 : i32
  %9 = arith.index_cast %8 : i32 to index
  %10 = xetile.init_tile %y[%9, %4] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x1xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 1], inst_data = [4, 1]>>>
  %11 = xetile.tile_reduce <add> %6 [1] {wg_map = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 1], inst_data = [4, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x32xf32> into vector<8x1xf32>
  xetile.store_tile %11, %10 : vector<8x1xf32>, !xetile.tile<8x1xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 1], inst_data = [4, 1]>>>
  func.return
}
