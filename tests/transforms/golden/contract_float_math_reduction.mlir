// RUN: contract-float-math
// Contraction on reductions: a product whose one use is an add tile_reduce gets fastmath<contract> (the adds that
// reduce it may fuse it); one that is also stored (%10) stays as it is.
func.func @row(%x: memref<?x?xf32, strided<[?, 1]>>, %w: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>, %s: memref<?x?xf32, strided<[?, 1]>>) {
  %0 = gpu.block_id x : i32
  %1 = arith.index_cast %0 : i32 to index
  %2 = arith.constant 0 : index
  %3 = xetile.init_tile %x[%1, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x32xf32>
  %4 = xetile.load_tile %3 : !xetile.tile<1x32xf32> -> vector<1x32xf32>
  %5 = arith.index_cast %0 : i32 to index
  %6 = xetile.init_tile %w[%5, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x32xf32>
  %7 = xetile.load_tile %6 : !xetile.tile<1x32xf32> -> vector<1x32xf32>
  %8 = arith.mulf %4, %4 : vector<1x32xf32>
  %9 = xetile.tile_reduce <add> %8 [1] : vector<1x32xf32> into vector<1x1xf32>
  %10 = arith.mulf %4, %7 : vector<1x32xf32>
  %11 = xetile.tile_reduce <add> %10 [1] : vector<1x32xf32> into vector<1x1xf32>
  %12 = arith.index_cast %0 : i32 to index
  %13 = xetile.init_tile %y[%12, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x32xf32>
  xetile.store_tile %10, %13 : vector<1x32xf32>, !xetile.tile<1x32xf32>
  %14 = arith.index_cast %0 : i32 to index
  %15 = xetile.init_tile %s[%14, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x1xf32>
  %16 = arith.addf %9, %11 : vector<1x1xf32>
  xetile.store_tile %16, %15 : vector<1x1xf32>, !xetile.tile<1x1xf32>
  func.return
}
// -----
func.func @row(%x: memref<?x?xf32, strided<[?, 1]>>, %w: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>, %s: memref<?x?xf32, strided<[?, 1]>>) {
  %0 = gpu.block_id x : i32
  %1 = arith.index_cast %0 : i32 to index
  %2 = arith.constant 0 : index
  %3 = xetile.init_tile %x[%1, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x32xf32>
  %4 = xetile.load_tile %3 : !xetile.tile<1x32xf32> -> vector<1x32xf32>
  %5 = arith.index_cast %0 : i32 to index
  %6 = xetile.init_tile %w[%5, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x32xf32>
  %7 = xetile.load_tile %6 : !xetile.tile<1x32xf32> -> vector<1x32xf32>
  %8 = arith.mulf %4, %4 {fastmath = #arith.fastmath<contract>} : vector<1x32xf32>
  %9 = xetile.tile_reduce <add> %8 [1] : vector<1x32xf32> into vector<1x1xf32>
  %10 = arith.mulf %4, %7 : vector<1x32xf32>
  %11 = xetile.tile_reduce <add> %10 [1] : vector<1x32xf32> into vector<1x1xf32>
  %12 = arith.index_cast %0 : i32 to index
  %13 = xetile.init_tile %y[%12, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x32xf32>
  xetile.store_tile %10, %13 : vector<1x32xf32>, !xetile.tile<1x32xf32>
  %14 = arith.index_cast %0 : i32 to index
  %15 = xetile.init_tile %s[%14, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x1xf32>
  %16 = arith.addf %9, %11 : vector<1x1xf32>
  xetile.store_tile %16, %15 : vector<1x1xf32>, !xetile.tile<1x1xf32>
  func.return
}
