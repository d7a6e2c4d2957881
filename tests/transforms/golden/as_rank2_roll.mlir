// RUN: as-rank2
// A 1-D rotation (the partners of a sort's compare-exchange steps) becomes one along dim 1 of the one-row form,
// by the same shift.
func.func @rotate(%x: memref<?xf32, strided<[1]>>, %y: memref<?xf32, strided<[1]>>) attributes {N = 16} {
  %0 = arith.constant 0 : index
  %1 = xetile.init_tile %x[%0] : memref<?xf32, strided<[1]>> -> !xetile.tile<16xf32>
  %2 = xetile.load_tile %1 : !xetile.tile<16xf32> -> vector<16xf32>
  %3 = xetile.roll %2 {shift = 4, axis = 0} : vector<16xf32> to vector<16xf32>
  %4 = xetile.init_tile %y[%0] : memref<?xf32, strided<[1]>> -> !xetile.tile<16xf32>
  xetile.store_tile %3, %4 : vector<16xf32>, !xetile.tile<16xf32>
  func.return
}
// -----
func.func @rotate(%x: memref<?xf32, strided<[1]>>, %y: memref<?xf32, strided<[1]>>) attributes {N = 16} {
  %0 = arith.constant 0 : index
  %1 = xetile.init_tile %x[%0] : memref<?xf32, strided<[1]>> -> !xetile.tile<1x16xf32>
  %2 = xetile.load_tile %1 : !xetile.tile<1x16xf32> -> vector<1x16xf32>
  %3 = xetile.roll %2 {shift = 4, axis = 1} : vector<1x16xf32> to vector<1x16xf32>
  %4 = xetile.init_tile %y[%0] : memref<?xf32, strided<[1]>> -> !xetile.tile<1x16xf32>
  xetile.store_tile %3, %4 : vector<1x16xf32>, !xetile.tile<1x16xf32>
  func.return
}
