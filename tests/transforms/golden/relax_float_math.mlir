// RUN: relax-float-math
// fast_math: exp and sqrt take the approximate form (fastmath<afn>), the division its reciprocal (fastmath<arcp>);
// the products and their adds are contract-float-math's.
func.func @row(%x: memref<?x?xf32, strided<[?, 1]>>, %w: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {BLOCK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.index_cast %0 : i32 to index
  %2 = arith.constant 0 : index
  %3 = xetile.init_tile %x[%1, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x16xf32>
  %4 = xetile.load_tile %3 : !xetile.tile<1x16xf32> -> vector<1x16xf32>
  %5 = arith.index_cast %0 : i32 to index
  %6 = xetile.init_tile %w[%5, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x16xf32>
  %7 = xetile.load_tile %6 : !xetile.tile<1x16xf32> -> vector<1x16xf32>
  %8 = arith.constant dense<1.000000e+00> : vector<1x16xf32>
  %9 = arith.subf %4, %8 : vector<1x16xf32>
  %10 = math.exp %9 : vector<1x16xf32>
  %11 = arith.mulf %10, %7 : vector<1x16xf32>
  %12 = arith.addf %11, %4 : vector<1x16xf32>
  %13 = arith.mulf %4, %7 : vector<1x16xf32>
  %14 = arith.subf %13, %10 : vector<1x16xf32>
  %15 = math.sqrt %12 : vector<1x16xf32>
  %16 = arith.divf %10, %15 : vector<1x16xf32>
  %17 = arith.index_cast %0 : i32 to index
  %18 = xetile.init_tile %y[%17, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x16xf32>
  %19 = arith.addf %16, %14 : vector<1x16xf32>
  xetile.store_tile %19, %18 : vector<1x16xf32>, !xetile.tile<1x16xf32>
  func.return
}
// -----
func.func @row(%x: memref<?x?xf32, strided<[?, 1]>>, %w: memref<?x?xf32, strided<[?, 1]>>, %y: memref<?x?xf32, strided<[?, 1]>>) attributes {BLOCK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.index_cast %0 : i32 to index
  %2 = arith.constant 0 : index
  %3 = xetile.init_tile %x[%1, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x16xf32>
  %4 = xetile.load_tile %3 : !xetile.tile<1x16xf32> -> vector<1x16xf32>
  %5 = arith.index_cast %0 : i32 to index
  %6 = xetile.init_tile %w[%5, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x16xf32>
  %7 = xetile.load_tile %6 : !xetile.tile<1x16xf32> -> vector<1x16xf32>
  %8 = arith.constant dense<1.000000e+00> : vector<1x16xf32>
  %9 = arith.subf %4, %8 : vector<1x16xf32>
  %10 = math.exp %9 {fastmath = #arith.fastmath<afn>} : vector<1x16xf32>
  %11 = arith.mulf %10, %7 : vector<1x16xf32>
  %12 = arith.addf %11, %4 : vector<1x16xf32>
  %13 = arith.mulf %4, %7 : vector<1x16xf32>
  %14 = arith.subf %13, %10 : vector<1x16xf32>
  %15 = math.sqrt %12 {fastmath = #arith.fastmath<afn>} : vector<1x16xf32>
  %16 = arith.divf %10, %15 {fastmath = #arith.fastmath<arcp>} : vector<1x16xf32>
  %17 = arith.index_cast %0 : i32 to index
  %18 = xetile.init_tile %y[%17, %2] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<1x16xf32>
  %19 = arith.addf %16, %14 : vector<1x16xf32>
  xetile.store_tile %19, %18 : vector<1x16xf32>, !xetile.tile<1x16xf32>
  func.return
}
