// RUN: block
// A subgroup's 8x32 C tile: A is one 8x16 block, B two 16x16 blocks, C two 8x16 blocks; each DPAS takes A and one
// block of B and C, in the loop that carries every block.
func.func @gemm_tile(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %K: i32) attributes {BM = 8, BN = 32, BK = 16, num_subgroups = 1} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 8 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 16 : index
  %7 = arith.muli %3, %6 : index
  %8 = arith.muli %2, %6 : index
  %9 = arith.constant 32 : index
  %10 = arith.muli %3, %9 : index
  %11 = gpu.block_id x : i32
  %12 = arith.constant 8 : i32
  %13 = arith.muli %11, %12 : i32
  %14 = gpu.block_id y : i32
  %15 = arith.constant 32 : i32
  %16 = arith.muli %14, %15 : i32
  %17 = arith.index_cast %13 : i32 to index
  %18 = arith.constant 0 : index
  %19 = arith.addi %17, %5 : index
  %20 = xegpu.create_nd_tdesc %a[%19, %7] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf16, #xegpu.layout<inst_data = [8, 16]>>
  %21 = arith.index_cast %16 : i32 to index
  %22 = arith.addi %21, %10 : index
  %23 = xegpu.create_nd_tdesc %b[%8, %22] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<16x32xf16, #xegpu.layout<inst_data = [16, 16]>>
  %24 = arith.constant dense<0.000000e+00> {layout = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x32xf32>
  %25 = arith.constant 0 : i32
  %26 = arith.constant 16 : i32
  %27:3 = scf.for %k = %25 to %K step %26 iter_args(%acc = %24, %ta = %20, %tb = %23) -> (vector<8x32xf32>, !xegpu.tensor_desc<8x16xf16, #xegpu.layout<inst_data = [8, 16]>>, !xegpu.tensor_desc<16x32xf16, #xegpu.layout<inst_data = [16, 16]>>) : i32 {
    %28 = xegpu.load_nd %ta {layout = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf16, #xegpu.layout<inst_data = [8, 16]>> -> vector<8x16xf16>
    %29 = xegpu.load_nd %tb {layout = #xegpu.layout<inst_data = [16, 16], lane_layout = [1, 16], lane_data = [2, 1]>} : !xegpu.tensor_desc<16x32xf16, #xegpu.layout<inst_data = [16, 16]>> -> vector<16x32xf16>
    %30 = xegpu.dpas %28, %29, %acc {layout = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf16>, vector<16x32xf16>, vector<8x32xf32> into vector<8x32xf32>
    %31 = arith.constant 0 : index
    %32 = arith.constant 16 : index
    %33 = xegpu.update_nd_offset %ta, [%31, %32] : !xegpu.tensor_desc<8x16xf16, #xegpu.layout<inst_data = [8, 16]>>
    %34 = xegpu.update_nd_offset %tb, [%32, %31] : !xegpu.tensor_desc<16x32xf16, #xegpu.layout<inst_data = [16, 16]>>
    scf.yield %30, %33, %34 : vector<8x32xf32>, !xegpu.tensor_desc<8x16xf16, #xegpu.layout<inst_data = [8, 16]>>, !xegpu.tensor_desc<16x32xf16, #xegpu.layout<inst_data = [16, 16]>>
  } {layout_result_0 = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>}
  %35 = arith.index_cast %13 : i32 to index
  %36 = arith.index_cast %16 : i32 to index
  %37 = arith.addi %35, %5 : index
  %38 = arith.addi %36, %10 : index
  %39 = xegpu.create_nd_tdesc %c[%37, %38] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x32xf32, #xegpu.layout<inst_data = [8, 16]>>
  xegpu.store_nd %27#0, %39 : vector<8x32xf32>, !xegpu.tensor_desc<8x32xf32, #xegpu.layout<inst_data = [8, 16]>>
  func.return
}
// -----
func.func @gemm_tile(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %K: i32) attributes {BM = 8, BN = 32, BK = 16, num_subgroups = 1} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 8 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 16 : index
  %7 = arith.muli %3, %6 : index
  %8 = arith.muli %2, %6 : index
  %9 = arith.constant 32 : index
  %10 = arith.muli %3, %9 : index
  %11 = gpu.block_id x : i32
  %12 = arith.constant 8 : i32
  %13 = arith.muli %11, %12 : i32
  %14 = gpu.block_id y : i32
  %15 = arith.constant 32 : i32
  %16 = arith.muli %14, %15 : i32
  %17 = arith.index_cast %13 : i32 to index
  %18 = arith.constant 0 : index
  %19 = arith.addi %17, %5 : index
  %20 = arith.constant 0 : index
  %21 = arith.constant 0 : index
  %22 = xegpu.create_nd_tdesc %a[%19, %7] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf16>
  %23 = arith.index_cast %16 : i32 to index
  %24 = arith.addi %23, %10 : index
  %25 = arith.constant 0 : index
  %26 = arith.constant 0 : index
  %27 = arith.constant 0 : index
  %28 = arith.constant 16 : index
  %29 = xegpu.create_nd_tdesc %b[%8, %24] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf16>
  %30 = arith.addi %24, %28 : index
  %31 = xegpu.create_nd_tdesc %b[%8, %30] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf16>
  %32 = arith.constant dense<0.000000e+00> {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  %33 = arith.constant dense<0.000000e+00> {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  %34 = arith.constant 0 : i32
  %35 = arith.constant 16 : i32
  %36:5 = scf.for %k = %34 to %K step %35 iter_args(%acc = %32, %acc_1 = %33, %ta = %22, %tb = %29, %tb_1 = %31) -> (vector<8x16xf32>, vector<8x16xf32>, !xegpu.tensor_desc<8x16xf16>, !xegpu.tensor_desc<16x16xf16>, !xegpu.tensor_desc<16x16xf16>) : i32 {
    %37 = xegpu.load_nd %ta {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf16> -> vector<8x16xf16>
    %38 = xegpu.load_nd %tb {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [2, 1]>} : !xegpu.tensor_desc<16x16xf16> -> vector<16x16xf16>
    %39 = xegpu.load_nd %tb_1 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [2, 1]>} : !xegpu.tensor_desc<16x16xf16> -> vector<16x16xf16>
    %40 = xegpu.dpas %37, %38, %acc {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf16>, vector<16x16xf16>, vector<8x16xf32> into vector<8x16xf32>
    %41 = xegpu.dpas %37, %39, %acc_1 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf16>, vector<16x16xf16>, vector<8x16xf32> into vector<8x16xf32>
    %42 = arith.constant 0 : index
    %43 = arith.constant 16 : index
    %44 = xegpu.update_nd_offset %ta, [%42, %43] : !xegpu.tensor_desc<8x16xf16>
    %45 = xegpu.update_nd_offset %tb, [%43, %42] : !xegpu.tensor_desc<16x16xf16>
    %46 = xegpu.update_nd_offset %tb_1, [%43, %42] : !xegpu.tensor_desc<16x16xf16>
    scf.yield %40, %41, %44, %45, %46 : vector<8x16xf32>, vector<8x16xf32>, !xegpu.tensor_desc<8x16xf16>, !xegpu.tensor_desc<16x16xf16>, !xegpu.tensor_desc<16x16xf16>
  } {layout_result_0 = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>, layout_result_1 = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>}
  %47 = arith.index_cast %13 : i32 to index
  %48 = arith.index_cast %16 : i32 to index
  %49 = arith.addi %47, %5 : index
  %50 = arith.addi %48, %10 : index
  %51 = arith.constant 0 : index
  %52 = arith.constant 0 : index
  %53 = arith.constant 0 : index
  %54 = arith.constant 16 : index
  %55 = xegpu.create_nd_tdesc %c[%49, %50] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32>
  %56 = arith.addi %50, %54 : index
  %57 = xegpu.create_nd_tdesc %c[%49, %56] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32>
  xegpu.store_nd %36#0, %55 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf32>
  xegpu.store_nd %36#1, %57 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf32>
  func.return
}
