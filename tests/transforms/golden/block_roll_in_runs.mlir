// RUN: block
// Rotations within runs along the 16 rows of a subgroup's piece, cut in 4-row blocks (its inst_data): within runs
// of 2 (shift 1) each block rotates in place; within runs of 8 by 4 (a reduction tree's partner at stride 4) each
// result block is the other block of its run, no data moved; within runs of 8 by 2 each block rotates by 2 and
// each result block selects its first 2 rows from the rotated block before it in its run (the run's last for its
// first block) and the rest from its own.
func.func @partners(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {num_subgroups = 1} {
  %0 = arith.constant 0 : index
  %1 = xegpu.create_nd_tdesc %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  %2 = xegpu.load_nd %1 {layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<16x16xf32, #xegpu.layout<inst_data = [4, 16]>> -> vector<16x16xf32>
  %3 = xetile.roll %2 {shift = 1, axis = 0, span = 2, layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<16x16xf32> to vector<16x16xf32>
  %4 = xetile.roll %3 {shift = 4, axis = 0, span = 8, layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<16x16xf32> to vector<16x16xf32>
  %5 = xetile.roll %4 {shift = 2, axis = 0, span = 8, layout = #xegpu.layout<inst_data = [4, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<16x16xf32> to vector<16x16xf32>
  %6 = xegpu.create_nd_tdesc %y[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<16x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  xegpu.store_nd %5, %6 : vector<16x16xf32>, !xegpu.tensor_desc<16x16xf32, #xegpu.layout<inst_data = [4, 16]>>
  func.return
}
// -----
func.func @partners(%x: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {num_subgroups = 1} {
  %0 = arith.constant 0 : index
  %1 = arith.constant 0 : index
  %2 = arith.constant 0 : index
  %3 = arith.constant 4 : index
  %4 = arith.constant 0 : index
  %5 = arith.constant 8 : index
  %6 = arith.constant 0 : index
  %7 = arith.constant 12 : index
  %8 = arith.constant 0 : index
  %9 = xegpu.create_nd_tdesc %x[%1, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32>
  %10 = xegpu.create_nd_tdesc %x[%3, %4] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32>
  %11 = xegpu.create_nd_tdesc %x[%5, %6] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32>
  %12 = xegpu.create_nd_tdesc %x[%7, %8] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32>
  %13 = xegpu.load_nd %9 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<4x16xf32> -> vector<4x16xf32>
  %14 = xegpu.load_nd %10 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<4x16xf32> -> vector<4x16xf32>
  %15 = xegpu.load_nd %11 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<4x16xf32> -> vector<4x16xf32>
  %16 = xegpu.load_nd %12 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<4x16xf32> -> vector<4x16xf32>
  %17 = xetile.roll %13 {shift = 1, axis = 0, span = 2, layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %18 = xetile.roll %14 {shift = 1, axis = 0, span = 2, layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %19 = xetile.roll %15 {shift = 1, axis = 0, span = 2, layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %20 = xetile.roll %16 {shift = 1, axis = 0, span = 2, layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %21 = xetile.roll %18 {shift = 2, axis = 0, layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %22 = xetile.roll %17 {shift = 2, axis = 0, layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %23 = xetile.roll %20 {shift = 2, axis = 0, layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %24 = xetile.roll %19 {shift = 2, axis = 0, layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xf32> to vector<4x16xf32>
  %25 = vector.constant_mask [2, 16] {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xi1>
  %26 = arith.select %25, %22, %21 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xi1>, vector<4x16xf32>
  %27 = arith.select %25, %21, %22 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xi1>, vector<4x16xf32>
  %28 = arith.select %25, %24, %23 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xi1>, vector<4x16xf32>
  %29 = arith.select %25, %23, %24 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<4x16xi1>, vector<4x16xf32>
  %30 = arith.constant 0 : index
  %31 = arith.constant 0 : index
  %32 = arith.constant 4 : index
  %33 = arith.constant 0 : index
  %34 = arith.constant 8 : index
  %35 = arith.constant 0 : index
  %36 = arith.constant 12 : index
  %37 = arith.constant 0 : index
  %38 = xegpu.create_nd_tdesc %y[%30, %31] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32>
  %39 = xegpu.create_nd_tdesc %y[%32, %33] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32>
  %40 = xegpu.create_nd_tdesc %y[%34, %35] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32>
  %41 = xegpu.create_nd_tdesc %y[%36, %37] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<4x16xf32>
  xegpu.store_nd %26, %38 : vector<4x16xf32>, !xegpu.tensor_desc<4x16xf32>
  xegpu.store_nd %27, %39 : vector<4x16xf32>, !xegpu.tensor_desc<4x16xf32>
  xegpu.store_nd %28, %40 : vector<4x16xf32>, !xegpu.tensor_desc<4x16xf32>
  xegpu.store_nd %29, %41 : vector<4x16xf32>, !xegpu.tensor_desc<4x16xf32>
  func.return
}
