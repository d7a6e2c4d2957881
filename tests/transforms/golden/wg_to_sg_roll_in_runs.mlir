// RUN: wg-to-sg
// Rotations within runs of a span over 16 rows in four subgroups of 4 rows, as a reduction tree's strides take
// their partners: within runs of 2 (shift 1) and of 4 (shift 2) each subgroup rotates its own piece; within runs
// of 8 (shift 4) the pieces go through SLM, each run held twice in a row of 16 (subgroup s stores its rows at 4s
// plus the 8 rows of each run before its own, 4s - 4s mod 8, and again 8 further) and each subgroup loads its rows
// from 4 before its place in the second copy.
func.func @partners(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [4, 1], sg_data = [4, 16]>} {
  %0 = arith.constant 0 : index
  %1 = xegpu.create_nd_tdesc %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf32, #xegpu.layout<sg_layout = [4, 1], sg_data = [4, 16], inst_data = [4, 16]>>
  %2 = xegpu.load_nd %1 {layout = #xegpu.layout<sg_layout = [4, 1], sg_data = [4, 16], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<16x16xf32, #xegpu.layout<sg_layout = [4, 1], sg_data = [4, 16], inst_data = [4, 16]>> -> vector<16x16xf32>
  %3 = xetile.roll %2 {shift = 1, axis = 0, span = 2, layout = #xegpu.layout<sg_layout = [4, 1], sg_data = [4, 16], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<16x16xf32> to vector<16x16xf32>
  %4 = xetile.roll %3 {shift = 2, axis = 0, span = 4, layout = #xegpu.layout<sg_layout = [4, 1], sg_data = [4, 16], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<16x16xf32> to vector<16x16xf32>
  %5 = xetile.roll %4 {shift = 4, axis = 0, span = 8, layout = #xegpu.layout<sg_layout = [4, 1], sg_data = [4, 16], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<16x16xf32> to vector<16x16xf32>
  %6 = xegpu.create_nd_tdesc %y[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf32, #xegpu.layout<sg_layout = [4, 1], sg_data = [4, 16], inst_data = [4, 16]>>
  xegpu.store_nd %5, %6 : vector<16x16xf32>, !xegpu.tensor_desc<16x16xf32, #xegpu.layout<sg_layout = [4, 1], sg_data = [4, 16], inst_data = [4, 16]>>
  func.return
}
// -----
func.func @partners(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [4, 1], sg_data = [4, 16]>, num_subgroups = 4} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 4 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 0 : index
  %7 = memref.alloc() {layout_conversion} : memref<1x512xf32, slm>
  %8 = arith.constant 32 : index
  %9 = arith.constant 16 : index
  %10 = memref.reinterpret_cast %7 to sizes: [%8, %9], strides: [%9, %1] : memref<1x512xf32, slm> to memref<32x16xf32, slm>
  %11 = arith.constant 8 : index
  %12 = arith.remsi %5, %11 : index
  %13 = arith.subi %5, %12 : index
  %14 = arith.addi %5, %13 : index
  %15 = arith.addi %14, %11 : index
  %16 = arith.addi %14, %4 : index
  %17 = arith.constant 0 : index
  %18 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %19 = xegpu.load_nd %18 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<4x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<4x16xf32>
  %20 = xetile.roll %19 {shift = 1, axis = 0, span = 2, layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %21 = xetile.roll %20 {shift = 2, axis = 0, layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %22 = xegpu.create_nd_tdesc %10[%14, %6] : memref<32x16xf32, slm> -> !xegpu.tensor_desc<4x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %22 : vector<4x16xf32>, !xegpu.tensor_desc<4x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %23 = xegpu.create_nd_tdesc %10[%15, %6] : memref<32x16xf32, slm> -> !xegpu.tensor_desc<4x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %23 : vector<4x16xf32>, !xegpu.tensor_desc<4x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %24 = xegpu.create_nd_tdesc %10[%16, %6] : memref<32x16xf32, slm> -> !xegpu.tensor_desc<4x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %25 = xegpu.load_nd %24 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<4x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<4x16xf32>
  gpu.barrier
  %26 = xegpu.create_nd_tdesc %y[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %25, %26 : vector<4x16xf32>, !xegpu.tensor_desc<4x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
