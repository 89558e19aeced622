// Chapter 12's negative v9: a copy of transpose_v2_tma_swizzle_kernel (chapters/
// 12_tma_tensor_maps/kernels.cuh), its producer step written out with the one changed line
// marked BUG. It must FAIL under --check-only: only the diagonal tiles come out right. The
// chapter's host.cuh includes this file after its Problem.
#pragma once

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/ring.cuh"

namespace ch12 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): v2 with the box coordinates given row first
// ---------------------------------------------------------------------------------------------
// TMA coordinates go innermost first, {column, row}. Given {row, column}, every tile loads its
// mirror image across the diagonal: only diagonal tiles come out right.
__global__ void __launch_bounds__(THREADS)
    transpose_v9_swapped_coords_kernel(const __grid_constant__ CUtensorMap map_in_sw128,
                                       float* __restrict__ d_out, int n, unsigned* d_error) {
  float* s_ring = reinterpret_cast<float*>(aligned_dynamic_smem());
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const TileGrid<> g(n);
  const std::size_t my_tiles = tut::tiles_of_this_block(g.num_tiles);
  const int t = threadIdx.x;
  init_full_barriers(full);
  auto produce = [&](std::size_t j) {  // v2's load_tile, written out
    const std::size_t tile = tut::block_tile(j);
    const int s = static_cast<int>(j % STAGES);
    load_box(s_ring + s * TILE * TILE, &map_in_sw128,
             g.row0(tile), g.col0(tile),  // BUG: {row, column}; TMA wants {column, row}
             &full[s], TILE_BYTES);
  };
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < STAGES; ++j) produce(j);
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < my_tiles; ++j, ring.advance()) {
    if (!block_wait_parity_bounded(&full[ring.slot], ring.phase, d_error)) return;
    const std::size_t tile = tut::block_tile(j);
    const float* box = s_ring + ring.slot * TILE * TILE;
    store_transposed(d_out, n, g.row0(tile), g.col0(tile),
                     [&](int r, int c) { return box[swizzled_128b(r, c)]; });
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (t == 0 && j + STAGES < my_tiles) produce(j + STAGES);
  }
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_swapped_coords", "v9 BROKEN: coords {y, x}",
        "negative: tensor coordinates given row first; TMA wants innermost (column) first",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_ring(transpose_v9_swapped_coords_kernel, p.map_in_sw128, p.out(),
                                p.n, p.err(), p.sms(), 0, s);
        }).negative = true;
}

}  // namespace ch12
