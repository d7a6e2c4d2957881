// RUN: as-rank2
// A row of x times the 1-D w plus the row's sum: every 1-D tile and vector becomes a one-row 2-D one ([16] ->
// [1, 16]: a row of x and y, the 1-D array w as its one row; the offsets stay), the reduction over dim 0 reduces
// dim 1 of the row ([1] -> [1, 1]) and the broadcast of the sum goes along dim 1.
func.func @scale_row(%x: memref<?x?xf32, strided<[?, 1]>>, %w: memref<?xf32, strided<[1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {BLOCK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.index_cast %0 : i32 to index
  %2 = arith.constant 0 : index
  %3 = xetile.init_tile %x[%1, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<16xf32>
  %4 = xetile.load_tile %3 : !xetile.tile<16xf32> -> vector<16xf32>
  %5 = xetile.tile_reduce <add> %4 [0] : vector<16xf32> into vector<1xf32>
  %6 = xetile.tile_broadcast %5 [0] : vector<1xf32> into vector<16xf32>
  %7 = arith.index_cast %0 : i32 to index
  %8 = xetile.init_tile %y[%7, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<16xf32>
  %9 = xetile.init_tile %w[%2] : memref<?xf32, strided<[1]>> -> !xetile.tile<16xf32>
  %10 = xetile.load_tile %9 : !xetile.tile<16xf32> -> vector<16xf32>
  %11 = arith.mulf %4, %10 : vector<16xf32>
  %12 = arith.addf %11, %6 : vector<16xf32>
  xetile.store_tile %12, %8 : vector<16xf32>, !xetile.tile<16xf32>
  func.return
}
// -----
func.func @scale_row(%x: memref<?x?xf32, strided<[?, 1]>>, %w: memref<?xf32, strided<[1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {BLOCK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.index_cast %0 : i32 to index
  %2 = arith.constant 0 : index
  %3 = xetile.init_tile %x[%1, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x16xf32>
  %4 = xetile.load_tile %3 : !xetile.tile<1x16xf32> -> vector<1x16xf32>
  %5 = xetile.tile_reduce <add> %4 [1] : vector<1x16xf32> into vector<1x1xf32>
  %6 = xetile.tile_broadcast %5 [1] : vector<1x1xf32> into vector<1x16xf32>
  %7 = arith.index_cast %0 : i32 to index
  %8 = xetile.init_tile %y[%7, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x16xf32>
  %9 = xetile.init_tile %w[%2] : memref<?xf32, strided<[1]>> -> !xetile.tile<1x16xf32>
  %10 = xetile.load_tile %9 : !xetile.tile<1x16xf32> -> vector<1x16xf32>
  %11 = arith.mulf %4, %10 : vector<1x16xf32>
  %12 = arith.addf %11, %6 : vector<1x16xf32>
  xetile.store_tile %12, %8 : vector<1x16xf32>, !xetile.tile<1x16xf32>
  func.return
}
