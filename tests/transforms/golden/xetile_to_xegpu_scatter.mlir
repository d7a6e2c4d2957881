// RUN: xetile-to-xegpu
// A row gather: the #scatter tile of one offset per row and chunk_size 16 becomes a scattered descriptor of one offset
// per element (each row's offset plus 0..15), its mask broadcast along the chunk.
func.func @gather_rows(%table: memref<?x?xf32, strided<[?, 1]>>, %idx: memref<?x?xi32, strided<[?, 1]>>, %out: memref<?x?xf32, strided<[?, 1]>>) attributes {N = 8, D = 16} {
  %0 = arith.constant 0 : index
  %1 = xetile.init_tile %idx[%0, %0] : memref<?x?xi32, strided<[?, 1]>> -> !xetile.tile<8x1xi32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1]>>>
  %2 = xetile.load_tile %1 {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : !xetile.tile<8x1xi32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1]>>> -> vector<8x1xi32>
  %3 = arith.constant dense<16> {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %4 = arith.muli %2, %3 {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %5 = xetile.init_tile %table, %4 : memref<?x?xf32, strided<[?, 1]>>, vector<8x1xi32> into !xetile.tile<8x16xf32, #scatter<chunk_size = 16>, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>
  %6 = xetile.init_tile %out[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xetile.tile<8x16xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>
  %7 = arith.constant dense<0> {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %8 = arith.cmpi sge, %2, %7 {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %9 = xetile.load_gather %5, %8 {wg_map = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xetile.tile<8x16xf32, #scatter<chunk_size = 16>, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>, vector<8x1xi1> into vector<8x16xf32>
  xetile.store_tile %9, %6 : vector<8x16xf32>, !xetile.tile<8x16xf32, #xetile.tile_attr<wg = #xetile.wg_map<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>>
  func.return
}
// -----
func.func @gather_rows(%table: memref<?x?xf32, strided<[?, 1]>>, %idx: memref<?x?xi32, strided<[?, 1]>>, %out: memref<?x?xf32, strided<[?, 1]>>) attributes {N = 8, D = 16} {
  %0 = arith.constant 0 : index
  %1 = xegpu.create_nd_tdesc %idx[%0, %0] : memref<?x?xi32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x1xi32, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1]>>
  %2 = xegpu.load_nd %1 {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x1xi32, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1]>> -> vector<8x1xi32>
  %3 = arith.constant dense<16> {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %4 = arith.muli %2, %3 {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %5 = vector.broadcast %4 [1] {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>} : vector<8x1xi32> into vector<8x16xi32>
  %6 = arith.constant 0 : index
  %7 = vector.iota %6 [1] {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>} : vector<8x16xi32>
  %8 = arith.addi %5, %7 {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>} : vector<8x16xi32>
  %9 = xegpu.create_tdesc %table, %8 : memref<?x?xf32, strided<[?, 1]>>, vector<8x16xi32> -> !xegpu.tensor_desc<8x16xf32, #xegpu.scatter_tdesc_attr<>, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  %10 = xegpu.create_nd_tdesc %out[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  %11 = arith.constant dense<0> {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %12 = arith.cmpi sge, %2, %11 {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 1], inst_data = [8, 1], lane_layout = [1, 1], lane_data = [1, 1]>} : vector<8x1xi32>
  %13 = vector.broadcast %12 [1] {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>} : vector<8x1xi1> into vector<8x16xi1>
  %14 = xegpu.load %9, %13 {layout = #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf32, #xegpu.scatter_tdesc_attr<>, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>, vector<8x16xi1> -> vector<8x16xf32>
  xegpu.store_nd %14, %10 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [1, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  func.return
}
