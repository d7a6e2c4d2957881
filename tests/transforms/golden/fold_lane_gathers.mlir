// RUN: fold-lane-gathers
// A 1x20 f32 row flipped along its columns in one subgroup (blocks of 1x16, lane distribution's output): each
// block's lanes reversed (%24, %25), then the flipped row realigned by 4 columns through gathers of those into
// replicated components (%27, %29, %31, %34) and inserts of these into the result blocks (%28, %30, %32, %35).
// Each insert reads the lanes of the load itself: one shuffle where the chain took a reversal, a regroup and a
// select; the gathers left unread go.
func.func @flip_2d(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {M = 1, N = 20, AXIS = 1, LAYOUT = None, num_subgroups = 1, lanes = 16} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 0 : index
  %5 = memref.alloc() {layout_conversion} : memref<1x20xf32, slm>
  %6 = arith.constant 20 : index
  %7 = memref.reinterpret_cast %5 to sizes: [%1, %6], strides: [%6, %1] : memref<1x20xf32, slm> to memref<1x20xf32, slm>
  %8 = arith.subi %4, %4 : index
  %9 = arith.constant 0 : index
  %10 = arith.constant 0 : index
  %11 = arith.constant 0 : index
  %12 = arith.constant 0 : index
  %13 = arith.constant 16 : index
  %14 = xegpu.create_nd_tdesc %x[%10, %11] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32>
  %15 = xegpu.create_nd_tdesc %x[%12, %13] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32>
  %16 = xegpu.load_nd %14 {layout_result_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x16xf32> -> f32
  %17 = xegpu.load_nd %15 {layout_result_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x16xf32> -> f32
  %18 = arith.constant 0 : index
  %19 = arith.constant 0 : index
  %20 = arith.constant 0 : index
  %21 = arith.constant 16 : index
  %22 = xegpu.create_nd_tdesc %y[%18, %19] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32>
  %23 = xegpu.create_nd_tdesc %y[%20, %21] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32>
  %24 = xegpu.lane_gather %16 {source_lanes = [[15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]], components = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32 -> f32
  %25 = xegpu.lane_gather %17 {source_lanes = [[15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]], components = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32 -> f32
  %26 = arith.constant 0.000000e+00 : f32
  %27 = xegpu.lane_gather %24 {source_lanes = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3], [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5], [6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6], [7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]], components = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32 -> vector<8xf32>
  %28 = xegpu.lane_gather %26, %27 {source_lanes = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]], components = [[0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0]]} : f32, vector<8xf32> -> f32
  %29 = xegpu.lane_gather %24 {source_lanes = [[8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8], [9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9], [10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10], [11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11]], components = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32 -> vector<4xf32>
  %30 = xegpu.lane_gather %28, %29 {source_lanes = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]], components = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]]} : f32, vector<4xf32> -> f32
  %31 = xegpu.lane_gather %25 {source_lanes = [[12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12], [13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13], [14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14], [15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15]], components = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32 -> vector<4xf32>
  %32 = xegpu.lane_gather %30, %31 {source_lanes = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]], components = [[1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32, vector<4xf32> -> f32
  %33 = arith.constant 0.000000e+00 : f32
  %34 = xegpu.lane_gather %24 {source_lanes = [[12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12], [13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13], [14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14], [15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15]], components = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32 -> vector<4xf32>
  %35 = xegpu.lane_gather %33, %34 {source_lanes = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]], components = [[1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32, vector<4xf32> -> f32
  %36 = arith.constant 0 : index
  %37 = arith.constant 0 : index
  %38 = arith.constant 0 : index
  %39 = arith.constant 16 : index
  %40 = xegpu.create_nd_tdesc %7[%36, %8] : memref<1x20xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  %41 = arith.addi %8, %39 : index
  %42 = xegpu.create_nd_tdesc %7[%38, %41] : memref<1x20xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  xegpu.store_nd %32, %40 {layout_operand_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : f32, !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  xegpu.store_nd %35, %42 {valid = [1, 4], layout_operand_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : f32, !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  gpu.barrier
  %43 = arith.constant 0 : index
  %44 = arith.constant 0 : index
  %45 = arith.constant 0 : index
  %46 = arith.constant 16 : index
  %47 = xegpu.create_nd_tdesc %7[%43, %44] : memref<1x20xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  %48 = xegpu.create_nd_tdesc %7[%45, %46] : memref<1x20xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  %49 = xegpu.load_nd %47 {layout_result_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>> -> f32
  %50 = xegpu.load_nd %48 {layout_result_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>> -> f32
  gpu.barrier
  %51 = arith.constant 1.000000e+00 : f32
  %52 = arith.constant 1.000000e+00 : f32
  %53 = arith.addf %49, %51 : f32
  %54 = arith.addf %50, %52 : f32
  xegpu.store_nd %53, %22 {layout_operand_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : f32, !xegpu.tensor_desc<1x16xf32>
  xegpu.store_nd %54, %23 {valid = [1, 4], layout_operand_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : f32, !xegpu.tensor_desc<1x16xf32>
  func.return
}
// -----
func.func @flip_2d(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {M = 1, N = 20, AXIS = 1, LAYOUT = None, num_subgroups = 1, lanes = 16} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 0 : index
  %5 = memref.alloc() {layout_conversion} : memref<1x20xf32, slm>
  %6 = arith.constant 20 : index
  %7 = memref.reinterpret_cast %5 to sizes: [%1, %6], strides: [%6, %1] : memref<1x20xf32, slm> to memref<1x20xf32, slm>
  %8 = arith.subi %4, %4 : index
  %9 = arith.constant 0 : index
  %10 = arith.constant 0 : index
  %11 = arith.constant 0 : index
  %12 = arith.constant 0 : index
  %13 = arith.constant 16 : index
  %14 = xegpu.create_nd_tdesc %x[%10, %11] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32>
  %15 = xegpu.create_nd_tdesc %x[%12, %13] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32>
  %16 = xegpu.load_nd %14 {layout_result_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x16xf32> -> f32
  %17 = xegpu.load_nd %15 {layout_result_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x16xf32> -> f32
  %18 = arith.constant 0 : index
  %19 = arith.constant 0 : index
  %20 = arith.constant 0 : index
  %21 = arith.constant 16 : index
  %22 = xegpu.create_nd_tdesc %y[%18, %19] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32>
  %23 = xegpu.create_nd_tdesc %y[%20, %21] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<1x16xf32>
  %24 = arith.constant 0.000000e+00 : f32
  %25 = xegpu.lane_gather %16, %17 {source_lanes = [[3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4]], components = [[1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32, f32 -> f32
  %26 = arith.constant 0.000000e+00 : f32
  %27 = xegpu.lane_gather %26, %16 {source_lanes = [[3, 2, 1, 0, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]], components = [[1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]} : f32, f32 -> f32
  %28 = arith.constant 0 : index
  %29 = arith.constant 0 : index
  %30 = arith.constant 0 : index
  %31 = arith.constant 16 : index
  %32 = xegpu.create_nd_tdesc %7[%28, %8] : memref<1x20xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  %33 = arith.addi %8, %31 : index
  %34 = xegpu.create_nd_tdesc %7[%30, %33] : memref<1x20xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  xegpu.store_nd %25, %32 {layout_operand_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : f32, !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  xegpu.store_nd %27, %34 {valid = [1, 4], layout_operand_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : f32, !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  gpu.barrier
  %35 = arith.constant 0 : index
  %36 = arith.constant 0 : index
  %37 = arith.constant 0 : index
  %38 = arith.constant 16 : index
  %39 = xegpu.create_nd_tdesc %7[%35, %36] : memref<1x20xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  %40 = xegpu.create_nd_tdesc %7[%37, %38] : memref<1x20xf32, slm> -> !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>>
  %41 = xegpu.load_nd %39 {layout_result_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>> -> f32
  %42 = xegpu.load_nd %40 {layout_result_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<1x16xf32, #xegpu.block_tdesc_attr<memory_space = slm>> -> f32
  gpu.barrier
  %43 = arith.constant 1.000000e+00 : f32
  %44 = arith.constant 1.000000e+00 : f32
  %45 = arith.addf %41, %43 : f32
  %46 = arith.addf %42, %44 : f32
  xegpu.store_nd %45, %22 {layout_operand_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : f32, !xegpu.tensor_desc<1x16xf32>
  xegpu.store_nd %46, %23 {valid = [1, 4], layout_operand_0 = #xegpu.layout<inst_data = [1, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : f32, !xegpu.tensor_desc<1x16xf32>
  func.return
}
