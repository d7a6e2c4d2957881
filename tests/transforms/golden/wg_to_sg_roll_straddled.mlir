// RUN: wg-to-sg
// A rotation by 4 within runs of 8 over 24 rows in two subgroups of 12, whose pieces straddle the runs: position p
// takes p - 4's element, or p + 4's in the first 4 positions of its run. So the whole axis goes through SLM twice,
// rotated by 4 and by 20 (4 - 8 mod 24), and each subgroup selects between the two by its rows' positions (a
// vector.iota from its offset, mod 8, below 4), all in the roll's layout.
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
  %15 = memref.reinterpret_cast %7 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xf32, slm> to memref<48x16xf32, slm>
  %16 = arith.constant 4 : index
  %17 = arith.addi %5, %16 : index
  %18 = arith.constant 0 : index
  %19 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %20 = xegpu.load_nd %19 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %21 = xegpu.create_nd_tdesc %10[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %20, %21 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %22 = xegpu.create_nd_tdesc %10[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %20, %22 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %23 = xegpu.create_nd_tdesc %10[%14, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %24 = xegpu.load_nd %23 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  gpu.barrier
  %25 = xegpu.create_nd_tdesc %15[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %20, %25 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %26 = xegpu.create_nd_tdesc %15[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %20, %26 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %27 = xegpu.create_nd_tdesc %15[%17, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %28 = xegpu.load_nd %27 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  gpu.barrier
  %29 = vector.iota %5 [0] {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %30 = arith.constant dense<8> {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %31 = arith.constant dense<4> {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %32 = arith.remsi %29, %30 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %33 = arith.cmpi slt, %32, %31 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi32>
  %34 = arith.select %33, %28, %24 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<12x16xi1>, vector<12x16xf32>
  %35 = xegpu.create_nd_tdesc %y[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %34, %35 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
