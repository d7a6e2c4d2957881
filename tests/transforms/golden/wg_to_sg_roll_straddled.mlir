// RUN: wg-to-sg
// A rotation by 4 within runs of 8 over 24 rows in two subgroups of 12, whose pieces straddle the runs: position p
// takes p - 4's element, or p + 4's in the first 4 positions of its run. So the whole axis goes through SLM once,
// held twice over, and is loaded rotated by 4 and by 20 (4 - 8 mod 24), and each subgroup selects between the two
// by its rows' positions (a vector.iota from its offset, mod 8, below 4), all in the roll's layout. The pieces lie
// inside the buffer: its descriptors test no bounds (boundary_check = false).
func.func @straddled(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [12, 16]>} {
  %0 = arith.constant 0 : index
  %1 = xegpu.create_nd_tdesc %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<24x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [12, 16], inst_data = [4, 16]>>
  %2 = xegpu.load_nd %1 {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [12, 16], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<24x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [12, 16], inst_data = [4, 16]>> -> vector<24x16xf32>
  %3 = xetile.roll %2 {shift = 4, axis = 0, span = 8, layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [12, 16], inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<24x16xf32> to vector<24x16xf32>
  %4 = xegpu.create_nd_tdesc %y[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<24x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [12, 16], inst_data = [4, 16]>>
  xegpu.store_nd %3, %4 : vector<24x16xf32>, !xegpu.tensor_desc<24x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [12, 16], inst_data = [4, 16]>>
  func.return
}
// -----
func.func @straddled(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [12, 16]>, num_subgroups = 2} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 12 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 0 : index
  %7 = memref.alloc() {layout_conversion} : memref<1x768xf32, slm>
  %8 = arith.constant 48 : index
  %9 = arith.constant 16 : index
  %10 = memref.reinterpret_cast %7 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xf32, slm> to memref<48x16xf32, slm>
  %11 = arith.constant 24 : index
  %12 = arith.addi %5, %11 : index
  %13 = arith.constant 20 : index
  %14 = arith.addi %5, %13 : index
  %15 = arith.constant 4 : index
  %16 = arith.addi %5, %15 : index
  %17 = arith.constant 0 : index
  %18 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %19 = xegpu.load_nd %18 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %20 = xegpu.create_nd_tdesc %10[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %20 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %21 = xegpu.create_nd_tdesc %10[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %21 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %22 = xegpu.create_nd_tdesc %10[%14, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %23 = xegpu.load_nd %22 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  %24 = xegpu.create_nd_tdesc %10[%16, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %25 = xegpu.load_nd %24 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  gpu.barrier
  %26 = vector.iota %5 [0] {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %27 = arith.constant dense<8> {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %28 = arith.constant dense<4> {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %29 = arith.remsi %26, %27 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %30 = arith.cmpi slt, %29, %28 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %31 = arith.select %30, %25, %23 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi1>, vector<12x16xf32>
  %32 = xegpu.create_nd_tdesc %y[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %31, %32 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
