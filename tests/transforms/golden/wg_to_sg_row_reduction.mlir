// RUN: wg-to-sg
// A row sum over 4 subgroups along the rows: each subgroup folds its 16x16 piece's rows, stores the 16 partial
// sums to SLM, and after a barrier reads back its rows' 4 partials a row a lane (inst_data [16, 4], lane_data [1, 4])
// and adds them in the lane, into the result's layout of a row a lane. No barrier after those loads: nothing writes
// the buffer again (wg_to_sg_row_reduction_in_loop.mlir: in a loop the next iteration does).
func.func @row_sums(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) {
  %0 = arith.constant 0 : index
  %1 = xegpu.create_nd_tdesc %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<32x64xf32, #xegpu.layout<sg_layout = [2, 4], sg_data = [16, 16], inst_data = [8, 16]>>
  %2 = xegpu.load_nd %1 {layout = #xegpu.layout<sg_layout = [2, 4], sg_data = [16, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<32x64xf32, #xegpu.layout<sg_layout = [2, 4], sg_data = [16, 16], inst_data = [8, 16]>> -> vector<32x64xf32>
  %3 = vector.multi_reduction <add> %2 [1] {layout = #xegpu.layout<sg_layout = [2, 4], sg_data = [16, 1], inst_data = [16, 1], lane_layout = [16, 1], lane_data = [1, 1]>} : vector<32x64xf32> into vector<32x1xf32>
  %4 = vector.broadcast %3 [1] {layout = #xegpu.layout<sg_layout = [2, 4], sg_data = [16, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<32x1xf32> into vector<32x64xf32>
  %5 = xegpu.create_nd_tdesc %y[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<32x64xf32, #xegpu.layout<sg_layout = [2, 4], sg_data = [16, 16], inst_data = [8, 16]>>
  %6 = arith.subf %2, %4 {layout = #xegpu.layout<sg_layout = [2, 4], sg_data = [16, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<32x64xf32>
  xegpu.store_nd %6, %5 : vector<32x64xf32>, !xegpu.tensor_desc<32x64xf32, #xegpu.layout<sg_layout = [2, 4], sg_data = [16, 16], inst_data = [8, 16]>>
  func.return
}
// -----
func.func @row_sums(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {num_subgroups = 8} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 4 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 16 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.muli %3, %4 : index
  %7 = memref.alloc() {layout_conversion} : memref<32x4xf32, slm>
  %8 = arith.constant 1 : index
  %9 = arith.muli %3, %8 : index
  %10 = arith.constant 0 : index
  %11 = arith.constant 0 : index
  %12 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf32, #xegpu.layout<inst_data = [8, 16]>>
  %13 = xegpu.load_nd %12 {layout = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<16x16xf32, #xegpu.layout<inst_data = [8, 16]>> -> vector<16x16xf32>
  %14 = vector.multi_reduction <add> %13 [1] {layout = #xegpu.layout<inst_data = [16, 1], lane_layout = [16, 1], lane_data = [1, 1]>} : vector<16x16xf32> into vector<16x1xf32>
  %15 = xegpu.create_nd_tdesc %7[%5, %3] : memref<32x4xf32, slm> -> !xegpu.tensor_desc<16x1xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [16, 1], lane_layout = [16, 1], lane_data = [1, 1]>>
  xegpu.store_nd %14, %15 : vector<16x1xf32>, !xegpu.tensor_desc<16x1xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [16, 1], lane_layout = [16, 1], lane_data = [1, 1]>>
  gpu.barrier
  %16 = xegpu.create_nd_tdesc %7[%5, %10] : memref<32x4xf32, slm> -> !xegpu.tensor_desc<16x4xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [16, 4], lane_layout = [16, 1], lane_data = [1, 4]>>
  %17 = xegpu.load_nd %16 {layout = #xegpu.layout<inst_data = [16, 4], lane_layout = [16, 1], lane_data = [1, 4]>} : !xegpu.tensor_desc<16x4xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [16, 4], lane_layout = [16, 1], lane_data = [1, 4]>> -> vector<16x4xf32>
  %18 = vector.multi_reduction <add> %17 [1] {layout = #xegpu.layout<inst_data = [16, 1], lane_layout = [16, 1], lane_data = [1, 1]>} : vector<16x4xf32> into vector<16x1xf32>
  %19 = vector.broadcast %18 [1] {layout = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<16x1xf32> into vector<16x16xf32>
  %20 = xegpu.create_nd_tdesc %y[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf32, #xegpu.layout<inst_data = [8, 16]>>
  %21 = arith.subf %13, %19 {layout = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<16x16xf32>
  xegpu.store_nd %21, %20 : vector<16x16xf32>, !xegpu.tensor_desc<16x16xf32, #xegpu.layout<inst_data = [8, 16]>>
  func.return
}
