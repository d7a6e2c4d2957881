// RUN: distribute-lanes
// The row gather's blocks per lane of a 16-lane subgroup: the 8x16 offsets, mask and gathered values are one column
// per lane (8 elements each); the [8, 1] row offsets and their mask are held whole by every lane (lane_layout
// [1, 1]), which is what each lane's column of their broadcast is, so the broadcasts vanish.
func.func @gather_rows(%table: memref<?x?xf32, strided<[?, 1]>>, %idx: memref<?x?xi32, strided<[?, 1]>> {xegpu.block_io = false}, %out: memref<?x?xf32, strided<[?, 1]>>) attributes {N = 8, D = 16, num_subgroups = 1} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 8 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.muli %3, %1 : index
  %7 = arith.constant 16 : index
  %8 = arith.muli %3, %7 : index
  %9 = arith.constant 0 : index
  %10 = arith.constant 0 : index
  %11 = arith.constant 0 : index
  %12 = xegpu.create_nd_tdesc %idx[%5, %6] : memref<?x?xi32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x1xi32>
  %13 = xegpu.load_nd %12 {layout = #xegpu.layout<lane_layout = [1, 1], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x1xi32> -> vector<8x1xi32>
  %14 = arith.constant dense<16> {layout = #xegpu.layout<lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %15 = arith.muli %13, %14 {layout = #xegpu.layout<lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %16 = vector.broadcast %15 [1] {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x1xi32> into vector<8x16xi32>
  %17 = arith.constant 0 : index
  %18 = arith.constant 0 : index
  %19 = arith.constant 0 : index
  %20 = vector.iota %8 [1] {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xi32>
  %21 = arith.addi %16, %20 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xi32>
  %22 = xegpu.create_tdesc %table, %21 : memref<?x?xf32, strided<[?, 1]>>, vector<8x16xi32> -> !xegpu.tensor_desc<8x16xf32, #xegpu.scatter_tdesc_attr<>>
  %23 = arith.constant 0 : index
  %24 = arith.constant 0 : index
  %25 = xegpu.create_nd_tdesc %out[%5, %8] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32>
  %26 = arith.constant dense<0> {layout = #xegpu.layout<lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %27 = arith.cmpi sge, %13, %26 {layout = #xegpu.layout<lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %28 = vector.broadcast %27 [1] {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x1xi1> into vector<8x16xi1>
  %29 = xegpu.load %22, %28 {layout = #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf32, #xegpu.scatter_tdesc_attr<>>, vector<8x16xi1> -> vector<8x16xf32>
  xegpu.store_nd %29, %25 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf32>
  func.return
}
// -----
func.func @gather_rows(%table: memref<?x?xf32, strided<[?, 1]>>, %idx: memref<?x?xi32, strided<[?, 1]>> {xegpu.block_io = false}, %out: memref<?x?xf32, strided<[?, 1]>>) attributes {N = 8, D = 16, num_subgroups = 1, lanes = 16} {
  %0 = gpu.subgroup_id : index
  %1 = arith.constant 1 : index
  %2 = arith.divsi %0, %1 : index
  %3 = arith.remsi %0, %1 : index
  %4 = arith.constant 8 : index
  %5 = arith.muli %2, %4 : index
  %6 = arith.muli %3, %1 : index
  %7 = arith.constant 16 : index
  %8 = arith.muli %3, %7 : index
  %9 = arith.constant 0 : index
  %10 = arith.constant 0 : index
  %11 = arith.constant 0 : index
  %12 = xegpu.create_nd_tdesc %idx[%5, %6] : memref<?x?xi32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x1xi32>
  %13 = xegpu.load_nd %12 {layout_result_0 = #xegpu.layout<inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x1xi32> -> vector<8xi32>
  %14 = arith.constant dense<16> : vector<8xi32>
  %15 = arith.muli %13, %14 : vector<8xi32>
  %16 = arith.constant 0 : index
  %17 = arith.constant 0 : index
  %18 = arith.constant 0 : index
  %19 = vector.iota %8 [1] {layout_result_0 = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8xi32>
  %20 = arith.addi %15, %19 : vector<8xi32>
  %21 = xegpu.create_tdesc %table, %20 {layout_operand_1 = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : memref<?x?xf32, strided<[?, 1]>>, vector<8xi32> -> !xegpu.tensor_desc<8x16xf32, #xegpu.scatter_tdesc_attr<>, #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>>
  %22 = arith.constant 0 : index
  %23 = arith.constant 0 : index
  %24 = xegpu.create_nd_tdesc %out[%5, %8] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32>
  %25 = arith.constant dense<0> : vector<8xi32>
  %26 = arith.cmpi sge, %13, %25 : vector<8xi32>
  %27 = xegpu.load %21, %26 {layout_result_0 = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf32, #xegpu.scatter_tdesc_attr<>, #xegpu.layout<lane_layout = [1, 16], lane_data = [1, 1]>>, vector<8xi1> -> vector<8xf32>
  xegpu.store_nd %27, %24 {layout_operand_0 = #xegpu.layout<inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8xf32>, !xegpu.tensor_desc<8x16xf32>
  func.return
}
