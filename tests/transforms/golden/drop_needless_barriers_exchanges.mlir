// RUN: drop-needless-barriers
// Three rolls of the whole axis through SLM (wg-to-sg: stores, a barrier, loads, a barrier): x's rows, then z's, then
// x's rolled rows again (f32 and i32 take one scratch buffer each). Kept: the barrier between each roll's stores and
// its loads. Dropped: the one after x's first loads, which z's stores into the other buffer follow; the one after
// z's loads, since the barrier between z's stores and loads already orders x's first loads before the third roll
// rewrites x's buffer; and the last, before the stores into x and z, which the first already orders after every
// subgroup's reads of x and z.
func.func @two_rolls(%x: memref<?x?xf32, strided<[?, 1]>>, %z: memref<?x?xi32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [12, 16]>, num_subgroups = 2} {
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
  %13 = arith.addi %5, %4 : index
  %14 = memref.alloc() {layout_conversion} : memref<1x768xi32, slm>
  %15 = memref.reinterpret_cast %14 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xi32, slm> to memref<48x16xi32, slm>
  %16 = memref.reinterpret_cast %7 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xf32, slm> to memref<48x16xf32, slm>
  %17 = arith.constant 0 : index
  %18 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %19 = xegpu.load_nd %18 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %20 = xegpu.create_nd_tdesc %z[%5, %6] : memref<?x?xi32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xi32, #xegpu.layout<inst_data = [4, 16]>>
  %21 = xegpu.load_nd %20 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xi32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xi32>
  %22 = xegpu.create_nd_tdesc %10[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %22 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %23 = xegpu.create_nd_tdesc %10[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %23 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %24 = xegpu.create_nd_tdesc %10[%13, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %25 = xegpu.load_nd %24 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  gpu.barrier
  %26 = xegpu.create_nd_tdesc %15[%5, %6] : memref<48x16xi32, slm> -> !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %26 : vector<12x16xi32>, !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %27 = xegpu.create_nd_tdesc %15[%12, %6] : memref<48x16xi32, slm> -> !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %27 : vector<12x16xi32>, !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %28 = xegpu.create_nd_tdesc %15[%13, %6] : memref<48x16xi32, slm> -> !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %29 = xegpu.load_nd %28 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xi32>
  gpu.barrier
  %30 = xegpu.create_nd_tdesc %16[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %25, %30 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %31 = xegpu.create_nd_tdesc %16[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %25, %31 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %32 = xegpu.create_nd_tdesc %16[%13, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %33 = xegpu.load_nd %32 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  gpu.barrier
  xegpu.store_nd %33, %18 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %29, %20 : vector<12x16xi32>, !xegpu.tensor_desc<12x16xi32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
// -----
func.func @two_rolls(%x: memref<?x?xf32, strided<[?, 1]>>, %z: memref<?x?xi32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [12, 16]>, num_subgroups = 2} {
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
  %13 = arith.addi %5, %4 : index
  %14 = memref.alloc() {layout_conversion} : memref<1x768xi32, slm>
  %15 = memref.reinterpret_cast %14 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xi32, slm> to memref<48x16xi32, slm>
  %16 = memref.reinterpret_cast %7 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xf32, slm> to memref<48x16xf32, slm>
  %17 = arith.constant 0 : index
  %18 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %19 = xegpu.load_nd %18 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %20 = xegpu.create_nd_tdesc %z[%5, %6] : memref<?x?xi32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xi32, #xegpu.layout<inst_data = [4, 16]>>
  %21 = xegpu.load_nd %20 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xi32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xi32>
  %22 = xegpu.create_nd_tdesc %10[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %22 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %23 = xegpu.create_nd_tdesc %10[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %23 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %24 = xegpu.create_nd_tdesc %10[%13, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %25 = xegpu.load_nd %24 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  %26 = xegpu.create_nd_tdesc %15[%5, %6] : memref<48x16xi32, slm> -> !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %26 : vector<12x16xi32>, !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %27 = xegpu.create_nd_tdesc %15[%12, %6] : memref<48x16xi32, slm> -> !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %27 : vector<12x16xi32>, !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %28 = xegpu.create_nd_tdesc %15[%13, %6] : memref<48x16xi32, slm> -> !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %29 = xegpu.load_nd %28 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xi32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xi32>
  %30 = xegpu.create_nd_tdesc %16[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %25, %30 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %31 = xegpu.create_nd_tdesc %16[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %25, %31 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %32 = xegpu.create_nd_tdesc %16[%13, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %33 = xegpu.load_nd %32 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  xegpu.store_nd %33, %18 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %29, %20 : vector<12x16xi32>, !xegpu.tensor_desc<12x16xi32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
