// RUN: share-exchange-buffers
// The three rolls of drop_needless_barriers_buffer_per_exchange.mlir, one barrier each: the first roll's buffer %7
// is stored in window 0 and loaded in 1, the second's %15 in 1 and 2, the third's %18 in 2 and 3. %15 shares a window
// with each of the others; %7 and %18 do not (the barrier between windows 1 and 2 orders the first roll's loads before
// the third roll's stores), so the third roll's views read %7, and the kernel takes two 3 KiB buffers, not three.
func.func @three_rolls(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [12, 16]>, num_subgroups = 2} {
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
  %17 = arith.addi %5, %9 : index
  %18 = memref.alloc() {layout_conversion} : memref<1x768xf32, slm>
  %19 = memref.reinterpret_cast %18 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xf32, slm> to memref<48x16xf32, slm>
  %20 = arith.addi %5, %4 : index
  %21 = arith.constant 0 : index
  %22 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %23 = xegpu.load_nd %22 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %24 = xegpu.create_nd_tdesc %10[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %23, %24 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %25 = xegpu.create_nd_tdesc %10[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %23, %25 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %26 = xegpu.create_nd_tdesc %10[%14, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %27 = xegpu.load_nd %26 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  %28 = xegpu.create_nd_tdesc %16[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %27, %28 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %29 = xegpu.create_nd_tdesc %16[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %27, %29 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %30 = xegpu.create_nd_tdesc %16[%17, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %31 = xegpu.load_nd %30 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  %32 = xegpu.create_nd_tdesc %19[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %31, %32 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %33 = xegpu.create_nd_tdesc %19[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %31, %33 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %34 = xegpu.create_nd_tdesc %19[%20, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %35 = xegpu.load_nd %34 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  %36 = xegpu.create_nd_tdesc %y[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %35, %36 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
// -----
func.func @three_rolls(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [12, 16]>, num_subgroups = 2} {
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
  %17 = arith.addi %5, %9 : index
  %18 = memref.reinterpret_cast %7 to sizes: [%8, %9], strides: [%9, %1] : memref<1x768xf32, slm> to memref<48x16xf32, slm>
  %19 = arith.addi %5, %4 : index
  %20 = arith.constant 0 : index
  %21 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %22 = xegpu.load_nd %21 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<12x16xf32>
  %23 = xegpu.create_nd_tdesc %10[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %22, %23 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %24 = xegpu.create_nd_tdesc %10[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %22, %24 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %25 = xegpu.create_nd_tdesc %10[%14, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %26 = xegpu.load_nd %25 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  %27 = xegpu.create_nd_tdesc %16[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %26, %27 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %28 = xegpu.create_nd_tdesc %16[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %26, %28 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %29 = xegpu.create_nd_tdesc %16[%17, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %30 = xegpu.load_nd %29 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  %31 = xegpu.create_nd_tdesc %18[%5, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %30, %31 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %32 = xegpu.create_nd_tdesc %18[%12, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  xegpu.store_nd %30, %32 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  gpu.barrier
  %33 = xegpu.create_nd_tdesc %18[%19, %6] : memref<48x16xf32, slm> -> !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>>
  %34 = xegpu.load_nd %33 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<12x16xf32, #xegpu.block_tdesc_attr<memory_space = slm, boundary_check = false>, #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>> -> vector<12x16xf32>
  %35 = xegpu.create_nd_tdesc %y[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %34, %35 : vector<12x16xf32>, !xegpu.tensor_desc<12x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
