// RUN: drop-needless-barriers
// Column sums over two bands of rows go through SLM between two barriers; the barrier the workgroup level put before
// the store of row 0 follows the second with no memory access between, and the second orders the SLM loads before
// it against that store, which touches other memory: the first barrier, between the SLM store and its loads and after
// every load of x, is the one kept.
func.func @column_sums_into_row_0(%x: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 16]>, num_subgroups = 2} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 4 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 16 : index
  %7 = arith.muli %3, %6 : index
  %8 = arith.muli %2, %1 : index
  %9 = arith.remsi %8, %1 : index
  %10 = memref.alloc() {layout_conversion} : memref<2x16xf32, slm>
  %11 = arith.constant 0 : index
  %12 = arith.constant 0 : index
  %13 = xegpu.create_nd_tdesc %x[%5, %7] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %14 = xegpu.load_nd %13 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<4x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<4x16xf32>
  %15 = xegpu.create_nd_tdesc %x[%9, %7] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32, #xegpu.layout<inst_data = [1, 16]>>
  %16 = vector.multi_reduction <add> %14 [0] {layout = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> into vector<1x16xf32>
  %17 = xegpu.create_nd_tdesc %10[%2, %7] : memref<2x16xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %16, %17 : vector<1x16xf32>, !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %18 = xegpu.create_nd_tdesc %10[%11, %7] : memref<2x16xf32, slm> -> !xegpu.tensor_desc<2x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [2, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %19 = xegpu.load_nd %18 {layout = #xegpu.layout<inst_data = [2, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<2x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [2, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<2x16xf32>
  %20 = vector.multi_reduction <add> %19 [0] {layout = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<2x16xf32> into vector<1x16xf32>
  gpu.barrier
  gpu.barrier
  xegpu.store_nd %20, %15 : vector<1x16xf32>, !xegpu.tensor_desc<1x16xf32, #xegpu.layout<inst_data = [1, 16]>>
  func.return
}
// -----
func.func @column_sums_into_row_0(%x: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [4, 16]>, num_subgroups = 2} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 4 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 16 : index
  %7 = arith.muli %3, %6 : index
  %8 = arith.muli %2, %1 : index
  %9 = arith.remsi %8, %1 : index
  %10 = memref.alloc() {layout_conversion} : memref<2x16xf32, slm>
  %11 = arith.constant 0 : index
  %12 = arith.constant 0 : index
  %13 = xegpu.create_nd_tdesc %x[%5, %7] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %14 = xegpu.load_nd %13 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<4x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<4x16xf32>
  %15 = xegpu.create_nd_tdesc %x[%9, %7] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32, #xegpu.layout<inst_data = [1, 16]>>
  %16 = vector.multi_reduction <add> %14 [0] {layout = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> into vector<1x16xf32>
  %17 = xegpu.create_nd_tdesc %10[%2, %7] : memref<2x16xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %16, %17 : vector<1x16xf32>, !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %18 = xegpu.create_nd_tdesc %10[%11, %7] : memref<2x16xf32, slm> -> !xegpu.tensor_desc<2x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [2, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %19 = xegpu.load_nd %18 {layout = #xegpu.layout<inst_data = [2, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<2x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [2, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<2x16xf32>
  %20 = vector.multi_reduction <add> %19 [0] {layout = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<2x16xf32> into vector<1x16xf32>
  xegpu.store_nd %20, %15 : vector<1x16xf32>, !xegpu.tensor_desc<1x16xf32, #xegpu.layout<inst_data = [1, 16]>>
  func.return
}
