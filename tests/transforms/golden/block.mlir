// RUN: block
// Row sums of a subgroup's 8x32 piece: the load takes two 8x16 blocks (its inst_data); the reduction adds them
// element-wise and reduces the sum's rows once, into the one [8, 1] block that is stored.
func.func @row_sums(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>> {xegpu.block_io = false}) attributes {num_subgroups = 1} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 8 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 32 : index
  %7 = arith.muli %3, %6 : index
  %8 = arith.muli %3, %1 : index
  %9 = gpu.block_id x : i32
  %10 = arith.constant 8 : i32
  %11 = arith.muli %9, %10 : i32
  %12 = arith.index_cast %11 : i32 to index
  %13 = arith.constant 0 : index
  %14 = arith.addi %12, %5 : index
  %15 = xegpu.create_nd_tdesc %x[%14, %7] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x32xf32, #xegpu.layout<inst_data = [8, 16]>>
  %16 = xegpu.load_nd %15 {layout = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x32xf32, #xegpu.layout<inst_data = [8, 16]>> -> vector<8x32xf32>
  %17 = gpu.block_id x : i32
  %18 = arith.muli %17, %10 : i32
  %19 = arith.index_cast %18 : i32 to index
  %20 = arith.addi %19, %5 : index
  %21 = xegpu.create_nd_tdesc %y[%20, %8] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x1xf32, #xegpu.layout<inst_data = [8, 1]>>
  %22 = vector.multi_reduction <add> %16 [1] {layout = #xegpu.layout<inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x32xf32> into vector<8x1xf32>
  xegpu.store_nd %22, %21 : vector<8x1xf32>, !xegpu.tensor_desc<8x1xf32, #xegpu.layout<inst_data = [8, 1]>>
  func.return
}
// -----
func.func @row_sums(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>> {xegpu.block_io = false}) attributes {num_subgroups = 1} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 8 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 32 : index
  %7 = arith.muli %3, %6 : index
  %8 = arith.muli %3, %1 : index
  %9 = gpu.block_id x : i32
  %10 = arith.constant 8 : i32
  %11 = arith.muli %9, %10 : i32
  %12 = arith.index_cast %11 : i32 to index
  %13 = arith.constant 0 : index
  %14 = arith.addi %12, %5 : index
  %15 = arith.constant 0 : index
  %16 = arith.constant 0 : index
  %17 = arith.constant 0 : index
  %18 = arith.constant 16 : index
  %19 = xegpu.create_nd_tdesc %x[%14, %7] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32>
  %20 = arith.addi %7, %18 : index
  %21 = xegpu.create_nd_tdesc %x[%14, %20] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32>
  %22 = xegpu.load_nd %19 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf32> -> vector<8x16xf32>
  %23 = xegpu.load_nd %21 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf32> -> vector<8x16xf32>
  %24 = gpu.block_id x : i32
  %25 = arith.muli %24, %10 : i32
  %26 = arith.index_cast %25 : i32 to index
  %27 = arith.addi %26, %5 : index
  %28 = arith.constant 0 : index
  %29 = arith.constant 0 : index
  %30 = xegpu.create_nd_tdesc %y[%27, %8] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x1xf32>
  %31 = arith.addf %22, %23 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  %32 = vector.multi_reduction <add> %31 [1] {layout = #xegpu.layout<lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x16xf32> into vector<8x1xf32>
  xegpu.store_nd %32, %30 : vector<8x1xf32>, !xegpu.tensor_desc<8x1xf32>
  func.return
}
