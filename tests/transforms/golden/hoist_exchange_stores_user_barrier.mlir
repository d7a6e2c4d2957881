// RUN: hoist-exchange-stores
// hoist_exchange_stores.mlir's two rolls with x's barrier the kernel's own (`barrier()`): the kernel's barriers stay
// where it wrote them, and nothing crosses them, so z's stores move only above the barrier after x's loads.
func.func @two_rolls(%x: memref<?x?xf32, strided<[?, 1]>>, %z: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>, %w: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [12, 16]>, num_subgroups = 2} {
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
  %15 = memref.alloc() {layout_conversion} : memref<1x768xf32, slm>
  %16 = memref.reinterpret_cast %15 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xf32, slm> to memref<48x16xf32, slm>
  %17 = arith.constant 0 : index
  %18 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %19 = xegpu.load_nd %18 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %20 = xegpu.create_nd_tdesc %z[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %21 = xegpu.load_nd %20 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %22 = xegpu.create_nd_tdesc %10[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %22 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %23 = xegpu.create_nd_tdesc %10[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %23 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier {by_user}
  %24 = xegpu.create_nd_tdesc %10[%14, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %25 = xegpu.load_nd %24 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  gpu.barrier
  %26 = xegpu.create_nd_tdesc %16[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %26 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %27 = xegpu.create_nd_tdesc %16[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %27 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %28 = xegpu.create_nd_tdesc %16[%14, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %29 = xegpu.load_nd %28 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  gpu.barrier
  %30 = xegpu.create_nd_tdesc %y[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %25, %30 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %31 = xegpu.create_nd_tdesc %w[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %29, %31 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
// -----
func.func @two_rolls(%x: memref<?x?xf32, strided<[?, 1]>>, %z: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>, %w: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [12, 16]>, num_subgroups = 2} {
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
  %15 = memref.alloc() {layout_conversion} : memref<1x768xf32, slm>
  %16 = memref.reinterpret_cast %15 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xf32, slm> to memref<48x16xf32, slm>
  %17 = arith.constant 0 : index
  %18 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %19 = xegpu.load_nd %18 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %20 = xegpu.create_nd_tdesc %z[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %21 = xegpu.load_nd %20 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %22 = xegpu.create_nd_tdesc %10[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %22 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %23 = xegpu.create_nd_tdesc %10[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %19, %23 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier {by_user}
  %24 = xegpu.create_nd_tdesc %10[%14, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %25 = xegpu.load_nd %24 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  %26 = xegpu.create_nd_tdesc %16[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %26 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %27 = xegpu.create_nd_tdesc %16[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %21, %27 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  gpu.barrier
  %28 = xegpu.create_nd_tdesc %16[%14, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %29 = xegpu.load_nd %28 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  gpu.barrier
  %30 = xegpu.create_nd_tdesc %y[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %25, %30 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %31 = xegpu.create_nd_tdesc %w[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %29, %31 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
