// RUN: hoist-loop-invariants
// The K loop's row mask (rows < M, broadcast) and its pointer offsets before k is added move before the loop; the
// column mask (it reads k), the load, the multiply under the if, the division feeding it (under the if) and the
// device_assert (pure, yet seen when it runs: its condition, pure, moves) stay.
func.func @masked_sums(%x: memref<?x?xf32, strided<[?, 1]>>, %out: memref<?x?xf32, strided<[?, 1]>>, %M: i32, %K: i32) attributes {BM = 8, BK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 8 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = arith.constant 0 : index
  %4 = vector.iota %3 [1] : vector<1x8xi32>
  %5 = vector.broadcast %2 : i32 to vector<1x8xi32>
  %6 = arith.addi %5, %4 : vector<1x8xi32>
  %7 = vector.iota %3 [1] : vector<1x16xi32>
  %8 = arith.constant dense<0.000000e+00> : vector<8x16xf32>
  %9 = arith.constant 0 : i32
  %10 = arith.constant 16 : i32
  %acc = scf.for %k = %9 to %K step %10 iter_args(%acc_1 = %8) -> (vector<8x16xf32>) : i32 {
    %11 = xetile.tile_transpose %6 [1, 0] : vector<1x8xi32> into vector<8x1xi32>
    %12 = vector.broadcast %M : i32 to vector<8x1xi32>
    %13 = arith.cmpi slt, %11, %12 : vector<8x1xi32>
    %14 = arith.subi %K, %k : i32
    %15 = vector.broadcast %14 : i32 to vector<1x16xi32>
    %16 = arith.cmpi slt, %7, %15 : vector<1x16xi32>
    %17 = xetile.tile_broadcast %13 [1] : vector<8x1xi1> into vector<8x16xi1>
    %18 = xetile.tile_broadcast %16 [0] : vector<1x16xi1> into vector<8x16xi1>
    %19 = arith.andi %17, %18 : vector<8x16xi1>
    %20 = xetile.tile_transpose %6 [1, 0] : vector<1x8xi32> into vector<8x1xi32>
    %21 = vector.broadcast %K : i32 to vector<8x1xi32>
    %22 = arith.muli %20, %21 : vector<8x1xi32>
    %23 = xetile.tile_broadcast %22 [1] : vector<8x1xi32> into vector<8x16xi32>
    %24 = xetile.tile_broadcast %7 [0] : vector<1x16xi32> into vector<8x16xi32>
    %25 = arith.addi %23, %24 : vector<8x16xi32>
    %26 = vector.broadcast %k : i32 to vector<8x16xi32>
    %27 = arith.addi %25, %26 : vector<8x16xi32>
    %28 = xetile.init_tile %x, %27 : memref<?x?xf32, strided<[?, 1]>>, vector<8x16xi32> into !xetile.tile<8x16xf32, #scatter>
    %29 = xetile.load_gather %28, %19 : !xetile.tile<8x16xf32, #scatter>, vector<8x16xi1> into vector<8x16xf32>
    %30 = arith.constant 0 : i32
    %31 = arith.cmpi sgt, %k, %30 : i32
    %v = scf.if %31 -> (vector<8x16xf32>) {
      %32 = arith.divsi %M, %K : i32
      %33 = arith.sitofp %32 : i32 to f32
      %34 = vector.broadcast %33 : f32 to vector<8x16xf32>
      %35 = arith.mulf %29, %34 : vector<8x16xf32>
      scf.yield %35 : vector<8x16xf32>
    } else {
      scf.yield %29 : vector<8x16xf32>
    }
    %36 = arith.cmpi sgt, %M, %30 : i32
    cf.assert %36, "rows" : i1
    %37 = arith.addf %acc_1, %v : vector<8x16xf32>
    scf.yield %37 : vector<8x16xf32>
  }
  %38 = xetile.tile_transpose %6 [1, 0] : vector<1x8xi32> into vector<8x1xi32>
  %39 = arith.constant dense<16> : vector<8x1xi32>
  %40 = arith.muli %38, %39 : vector<8x1xi32>
  %41 = xetile.tile_broadcast %40 [1] : vector<8x1xi32> into vector<8x16xi32>
  %42 = xetile.tile_broadcast %7 [0] : vector<1x16xi32> into vector<8x16xi32>
  %43 = arith.addi %41, %42 : vector<8x16xi32>
  %44 = xetile.tile_transpose %6 [1, 0] : vector<1x8xi32> into vector<8x1xi32>
  %45 = vector.broadcast %M : i32 to vector<8x1xi32>
  %46 = arith.cmpi slt, %44, %45 : vector<8x1xi32>
  %47 = xetile.init_tile %out, %43 : memref<?x?xf32, strided<[?, 1]>>, vector<8x16xi32> into !xetile.tile<8x16xf32, #scatter>
  %48 = xetile.tile_broadcast %46 [1] : vector<8x1xi1> into vector<8x16xi1>
  xetile.store_scatter %acc, %48, %47 : vector<8x16xf32>, vector<8x16xi1> into !xetile.tile<8x16xf32, #scatter>
  func.return
}
// -----
func.func @masked_sums(%x: memref<?x?xf32, strided<[?, 1]>>, %out: memref<?x?xf32, strided<[?, 1]>>, %M: i32, %K: i32) attributes {BM = 8, BK = 16} {
  %0 = gpu.block_id x : i32
  %1 = arith.constant 8 : i32
  %2 = arith.muli %0, %1 : i32
  %3 = arith.constant 0 : index
  %4 = vector.iota %3 [1] : vector<1x8xi32>
  %5 = vector.broadcast %2 : i32 to vector<1x8xi32>
  %6 = arith.addi %5, %4 : vector<1x8xi32>
  %7 = vector.iota %3 [1] : vector<1x16xi32>
  %8 = arith.constant dense<0.000000e+00> : vector<8x16xf32>
  %9 = arith.constant 0 : i32
  %10 = arith.constant 16 : i32
  %11 = xetile.tile_transpose %6 [1, 0] : vector<1x8xi32> into vector<8x1xi32>
  %12 = vector.broadcast %M : i32 to vector<8x1xi32>
  %13 = arith.cmpi slt, %11, %12 : vector<8x1xi32>
  %14 = xetile.tile_broadcast %13 [1] : vector<8x1xi1> into vector<8x16xi1>
  %15 = xetile.tile_transpose %6 [1, 0] : vector<1x8xi32> into vector<8x1xi32>
  %16 = vector.broadcast %K : i32 to vector<8x1xi32>
  %17 = arith.muli %15, %16 : vector<8x1xi32>
  %18 = xetile.tile_broadcast %17 [1] : vector<8x1xi32> into vector<8x16xi32>
  %19 = xetile.tile_broadcast %7 [0] : vector<1x16xi32> into vector<8x16xi32>
  %20 = arith.addi %18, %19 : vector<8x16xi32>
  %21 = arith.constant 0 : i32
  %22 = arith.cmpi sgt, %M, %21 : i32
  %acc = scf.for %k = %9 to %K step %10 iter_args(%acc_1 = %8) -> (vector<8x16xf32>) : i32 {
    %23 = arith.subi %K, %k : i32
    %24 = vector.broadcast %23 : i32 to vector<1x16xi32>
    %25 = arith.cmpi slt, %7, %24 : vector<1x16xi32>
    %26 = xetile.tile_broadcast %25 [0] : vector<1x16xi1> into vector<8x16xi1>
    %27 = arith.andi %14, %26 : vector<8x16xi1>
    %28 = vector.broadcast %k : i32 to vector<8x16xi32>
    %29 = arith.addi %20, %28 : vector<8x16xi32>
    %30 = xetile.init_tile %x, %29 : memref<?x?xf32, strided<[?, 1]>>, vector<8x16xi32> into !xetile.tile<8x16xf32, #scatter>
    %31 = xetile.load_gather %30, %27 : !xetile.tile<8x16xf32, #scatter>, vector<8x16xi1> into vector<8x16xf32>
    %32 = arith.cmpi sgt, %k, %21 : i32
    %v = scf.if %32 -> (vector<8x16xf32>) {
      %33 = arith.divsi %M, %K : i32
      %34 = arith.sitofp %33 : i32 to f32
      %35 = vector.broadcast %34 : f32 to vector<8x16xf32>
      %36 = arith.mulf %31, %35 : vector<8x16xf32>
      scf.yield %36 : vector<8x16xf32>
    } else {
      scf.yield %31 : vector<8x16xf32>
    }
    cf.assert %22, "rows" : i1
    %37 = arith.addf %acc_1, %v : vector<8x16xf32>
    scf.yield %37 : vector<8x16xf32>
  }
  %38 = xetile.tile_transpose %6 [1, 0] : vector<1x8xi32> into vector<8x1xi32>
  %39 = arith.constant dense<16> : vector<8x1xi32>
  %40 = arith.muli %38, %39 : vector<8x1xi32>
  %41 = xetile.tile_broadcast %40 [1] : vector<8x1xi32> into vector<8x16xi32>
  %42 = xetile.tile_broadcast %7 [0] : vector<1x16xi32> into vector<8x16xi32>
  %43 = arith.addi %41, %42 : vector<8x16xi32>
  %44 = xetile.tile_transpose %6 [1, 0] : vector<1x8xi32> into vector<8x1xi32>
  %45 = vector.broadcast %M : i32 to vector<8x1xi32>
  %46 = arith.cmpi slt, %44, %45 : vector<8x1xi32>
  %47 = xetile.init_tile %out, %43 : memref<?x?xf32, strided<[?, 1]>>, vector<8x16xi32> into !xetile.tile<8x16xf32, #scatter>
  %48 = xetile.tile_broadcast %46 [1] : vector<8x1xi1> into vector<8x16xi1>
  xetile.store_scatter %acc, %48, %47 : vector<8x16xf32>, vector<8x16xi1> into !xetile.tile<8x16xf32, #scatter>
  func.return
}
