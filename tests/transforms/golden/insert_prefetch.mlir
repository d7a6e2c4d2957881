// RUN: insert-prefetch target=xe-hpc distance=1
// The GEMM tile's K loop: A and B walk along K; each gets a prefetch tile of its own, a copy of its init_tile
// without a layout (layout propagation gives a tile only prefetched the cooperative layout), prefetched before the
// loop at the first load's position (distance 1), then carried by the loop one step ahead of the load, prefetched at
// the start of the body and moved by the walk's offsets.
func.func @gemm_tile(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %K: i32) attributes {BM = 8, BN = 16, BK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 8 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = gpu.block_id y : i32
  %4 = arith.constant 16 : i32
  %5 = arith.muli %3, %4 : i32
  %6 = arith.index_cast %2 : i32 to index
  %7 = arith.constant 0 : index
  %8 = xetile.init_tile %a[%6, %7] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<8x16xf16>
  %9 = arith.index_cast %5 : i32 to index
  %10 = xetile.init_tile %b[%7, %9] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<16x16xf16>
  %11 = arith.constant dense<0.000000e+00> : vector<8x16xf32>
  %12 = arith.constant 0 : i32
  %13:3 = scf.for %k = %12 to %K step %4 iter_args(%acc = %11, %ta = %8, %tb = %10) -> (vector<8x16xf32>, !xetile.tile<8x16xf16>, !xetile.tile<16x16xf16>) : i32 {
    %14 = xetile.load_tile %ta : !xetile.tile<8x16xf16> -> vector<8x16xf16>
    %15 = xetile.load_tile %tb : !xetile.tile<16x16xf16> -> vector<16x16xf16>
    %16 = xetile.tile_mma %14, %15, %acc : vector<8x16xf16>, vector<16x16xf16>, vector<8x16xf32> into vector<8x16xf32>
    %17 = arith.constant 0 : index
    %18 = arith.constant 16 : index
    %19 = xetile.update_tile_offset %ta, [%17, %18] : !xetile.tile<8x16xf16>
    %20 = xetile.update_tile_offset %tb, [%18, %17] : !xetile.tile<16x16xf16>
    scf.yield %16, %19, %20 : vector<8x16xf32>, !xetile.tile<8x16xf16>, !xetile.tile<16x16xf16>
  }
  %21 = arith.index_cast %2 : i32 to index
  %22 = arith.index_cast %5 : i32 to index
  %23 = xetile.init_tile %c[%21, %22] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x16xf32>
  xetile.store_tile %13#0, %23 : vector<8x16xf32>, !xetile.tile<8x16xf32>
  func.return
}
// -----
func.func @gemm_tile(%a: memref<?x?xf16, strided<[?, 1]>>, %b: memref<?x?xf16, strided<[?, 1]>>, %c: memref<?x?xf32, strided<[?, 1]>>, %K: i32) attributes {BM = 8, BN = 16, BK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 8 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = gpu.block_id y : i32
  %4 = arith.constant 16 : i32
  %5 = arith.muli %3, %4 : i32
  %6 = arith.index_cast %2 : i32 to index
  %7 = arith.constant 0 : index
  %8 = xetile.init_tile %a[%6, %7] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<8x16xf16>
  %9 = arith.index_cast %5 : i32 to index
  %10 = xetile.init_tile %b[%7, %9] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<16x16xf16>
  %11 = arith.constant dense<0.000000e+00> : vector<8x16xf32>
  %12 = arith.constant 0 : i32
  %13 = arith.constant 0 : index
  %14 = arith.constant 16 : index
  %15 = xetile.init_tile %a[%6, %7] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<8x16xf16>
  xetile.prefetch_tile %15 locality<3> : !xetile.tile<8x16xf16>
  %16 = xetile.update_tile_offset %15, [%13, %14] : !xetile.tile<8x16xf16>
  %17 = arith.constant 16 : index
  %18 = arith.constant 0 : index
  %19 = xetile.init_tile %b[%7, %9] : memref<?x?xf16, strided<[?, 1]>> -> !xetile.tile<16x16xf16>
  xetile.prefetch_tile %19 locality<3> : !xetile.tile<16x16xf16>
  %20 = xetile.update_tile_offset %19, [%17, %18] : !xetile.tile<16x16xf16>
  %21:5 = scf.for %k = %12 to %K step %4 iter_args(%acc = %11, %ta = %8, %tb = %10, %prefetch = %16, %prefetch_1 = %20) -> (vector<8x16xf32>, !xetile.tile<8x16xf16>, !xetile.tile<16x16xf16>, !xetile.tile<8x16xf16>, !xetile.tile<16x16xf16>) : i32 {
    xetile.prefetch_tile %prefetch_1 locality<3> : !xetile.tile<16x16xf16>
    xetile.prefetch_tile %prefetch locality<3> : !xetile.tile<8x16xf16>
    %22 = xetile.load_tile %ta : !xetile.tile<8x16xf16> -> vector<8x16xf16>
    %23 = xetile.load_tile %tb : !xetile.tile<16x16xf16> -> vector<16x16xf16>
    %24 = xetile.tile_mma %22, %23, %acc : vector<8x16xf16>, vector<16x16xf16>, vector<8x16xf32> into vector<8x16xf32>
    %25 = arith.constant 0 : index
    %26 = arith.constant 16 : index
    %27 = xetile.update_tile_offset %ta, [%25, %26] : !xetile.tile<8x16xf16>
    %28 = xetile.update_tile_offset %tb, [%26, %25] : !xetile.tile<16x16xf16>
    %29 = xetile.update_tile_offset %prefetch, [%13, %14] : !xetile.tile<8x16xf16>
    %30 = xetile.update_tile_offset %prefetch_1, [%17, %18] : !xetile.tile<16x16xf16>
    scf.yield %24, %27, %28, %29, %30 : vector<8x16xf32>, !xetile.tile<8x16xf16>, !xetile.tile<16x16xf16>, !xetile.tile<8x16xf16>, !xetile.tile<16x16xf16>
  }
  %31 = arith.index_cast %2 : i32 to index
  %32 = arith.index_cast %5 : i32 to index
  %33 = xetile.init_tile %c[%31, %32] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x16xf32>
  xetile.store_tile %21#0, %33 : vector<8x16xf32>, !xetile.tile<8x16xf32>
  func.return
}
