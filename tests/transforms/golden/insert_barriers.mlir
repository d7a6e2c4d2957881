// RUN: insert-barriers
// A tile stored back through the descriptor it was loaded from, with both subgroups holding all 8 rows (sg_layout
// [2, 1] of 8-row pieces wraps): one subgroup's store may overwrite what the other has yet to load, so a barrier goes
// between the load and the store.
func.func @add_one_in_place(%x: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [8, 16]>} {
  %0 = arith.constant 0 : index
  %1 = xegpu.create_nd_tdesc %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  %2 = xegpu.load_nd %1 {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16]>> -> vector<8x16xf32>
  %3 = arith.constant dense<1.000000e+00> {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  %4 = arith.addf %2, %3 {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  xegpu.store_nd %4, %1 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  func.return
}
// -----
func.func @add_one_in_place(%x: memref<?x?xf32, strided<[?, 1]>>) attributes {LAYOUT = #xetile.wg_map<sg_layout = [2, 1], sg_data = [8, 16]>} {
  %0 = arith.constant 0 : index
  %1 = xegpu.create_nd_tdesc %x[%0, %0] : memref<?x?xf32, strided<[?, 1]>> -> !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  %2 = xegpu.load_nd %1 {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16]>> -> vector<8x16xf32>
  %3 = arith.constant dense<1.000000e+00> {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  %4 = arith.addf %2, %3 {layout = #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16], lane_layout = [1, 16], lane_data = [1, 1]>} : vector<8x16xf32>
  gpu.barrier
  xegpu.store_nd %4, %1 : vector<8x16xf32>, !xegpu.tensor_desc<8x16xf32, #xegpu.layout<sg_layout = [2, 1], sg_data = [8, 16], inst_data = [8, 16]>>
  func.return
}
