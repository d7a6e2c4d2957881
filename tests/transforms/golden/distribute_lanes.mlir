// RUN: distribute-lanes
// The GEMM tile's blocks per lane of a 16-lane subgroup: A (8x16) and C (8x16) hold a column per lane, 8 elements
// each; B (16x16) a column of 16; loads, stores and DPAS take their SIMT form with these lane layouts.
func.func @gemm_tile(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %K: i32) attributes {BM = 8, BN = 16, BK = 16, num_subgroups = 1} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 8 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 16 : index
  %7 = arith.muli %3, %6 : index
  %8 = arith.muli %2, %6 : index
  %9 = gpu.block_id x : i32
  %10 = arith.constant 8 : i32
  %11 = arith.muli %9, %10 : i32
  %12 = gpu.block_id y : i32
  %13 = arith.constant 16 : i32
  %14 = arith.muli %12, %13 : i32
  %15 = arith.index_cast %11 : i32 to index
  %16 = arith.constant 0 : index
  %17 = arith.addi %15, %5 : index
  %18 = arith.constant 0 : index
  %19 = arith.constant 0 : index
  %20 = xegpu.create_nd_tdesc %a[%17, %7] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf16>
  %21 = arith.index_cast %14 : i32 to index
  %22 = arith.addi %21, %7 : index
  %23 = arith.constant 0 : index
  %24 = arith.constant 0 : index
  %25 = xegpu.create_nd_tdesc %b[%8, %22] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf16>
  %26 = arith.constant dense<0.000000e+00> {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  %27 = arith.constant 0 : i32
  %28:3 = scf.for %k = %27 to %K step %13 iter_args(%acc = %26, %ta = %20, %tb = %25) -> (vector<8x16xf32>, !xegpu.tensor_desc<8x16xf16>, !xegpu.tensor_desc<16x16xf16>) : i32 {
    %29 = xegpu.load_nd %ta {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf16> -> vector<8x16xf16>
    %30 = xegpu.load_nd %tb {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [2, 1]>} : !xegpu.tensor_desc<16x16xf16> -> vector<16x16xf16>
    %31 = xegpu.dpas %29, %30, %acc {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf16>, vector<16x16xf16>, vector<8x16xf32> into vector<8x16xf32>
    %32 = arith.constant 0 : index
    %33 = arith.constant 16 : index
    %34 = xegpu.update_nd_offset %ta, [%32, %33] : !xegpu.tensor_desc<8x16xf16>
    %35 = xegpu.update_nd_offset %tb, [%33, %32] : !xegpu.tensor_desc<16x16xf16>
    scf.yield %31, %34, %35 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf16>, !xegpu.tensor_desc<16x16xf16>
  } {layout_result_0 = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>}
  %36 = arith.index_cast %11 : i32 to index
  %37 = arith.index_cast %14 : i32 to index
  %38 = arith.addi %36, %5 : index
  %39 = arith.addi %37, %7 : index
  %40 = arith.constant 0 : index
  %41 = arith.constant 0 : index
  %42 = xegpu.create_nd_tdesc %c[%38, %39] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32>
  xegpu.store_nd %28#0, %42 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf32>
  func.return
}
// -----
func.func @gemm_tile(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %K: i32) attributes {BM = 8, BN = 16, BK = 16, num_subgroups = 1, lanes = 16} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 8 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.constant 16 : index
  %7 = arith.muli %3, %6 : index
  %8 = arith.muli %2, %6 : index
  %9 = gpu.block_id x : i32
  %10 = arith.constant 8 : i32
  %11 = arith.muli %9, %10 : i32
  %12 = gpu.block_id y : i32
  %13 = arith.constant 16 : i32
  %14 = arith.muli %12, %13 : i32
  %15 = arith.index_cast %11 : i32 to index
  %16 = arith.constant 0 : index
  %17 = arith.addi %15, %5 : index
  %18 = arith.constant 0 : index
  %19 = arith.constant 0 : index
  %20 = xegpu.create_nd_tdesc %a[%17, %7] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf16>
  %21 = arith.index_cast %14 : i32 to index
  %22 = arith.addi %21, %7 : index
  %23 = arith.constant 0 : index
  %24 = arith.constant 0 : index
  %25 = xegpu.create_nd_tdesc %b[%8, %22] : memref<?x?xf16, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf16>
  %26 = arith.constant dense<0.000000e+00> : vector<8xf32>
  %27 = arith.constant 0 : i32
  %28:3 = scf.for %k = %27 to %K step %13 iter_args(%acc = %26, %ta = %20, %tb = %25) -> (vector<8xf32>, !xegpu.tensor_desc<8x16xf16>, !xegpu.tensor_desc<16x16xf16>) : i32 {
    %29 = xegpu.load_nd %ta {layout_result_0 = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf16> -> vector<8xf16>
    %30 = xegpu.load_nd %tb {layout_result_0 = #xegpu.layout<inst_data = [16, 16], lane_layout = [1, 16], lane_data = [2, 1]>} : !xegpu.tensor_desc<16x16xf16> -> vector<16xf16>
    %31 = xegpu.dpas %29, %30, %acc {layout_operand_0 = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>, layout_operand_1 = #xegpu.layout<inst_data = [16, 16], lane_layout = [1, 16], lane_data = [2, 1]>, layout_result_0 = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8xf16>, vector<16xf16>, vector<8xf32> -> vector<8xf32>
    %32 = arith.constant 0 : index
    %33 = arith.constant 16 : index
    %34 = xegpu.update_nd_offset %ta, [%32, %33] : !xegpu.tensor_desc<8x16xf16>
    %35 = xegpu.update_nd_offset %tb, [%33, %32] : !xegpu.tensor_desc<16x16xf16>
    scf.yield %31, %34, %35 : vector<8xf32>, !xegpu.tensor_desc<8x16xf16>, !xegpu.tensor_desc<16x16xf16>
  }
  %36 = arith.index_cast %11 : i32 to index
  %37 = arith.index_cast %14 : i32 to index
  %38 = arith.addi %36, %5 : index
  %39 = arith.addi %37, %7 : index
  %40 = arith.constant 0 : index
  %41 = arith.constant 0 : index
  %42 = xegpu.create_nd_tdesc %c[%38, %39] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32>
  xegpu.store_nd %28#0, %42 {layout_operand_0 = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8xf32>, !xegpu.tensor_desc<8x16xf32>
  func.return
}
