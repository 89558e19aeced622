/// @file broken.cuh
/// @brief Chapter 12's deliberately broken variant v9: a copy of transpose_v2_tma_swizzle_kernel
///        (kernels.cuh) with its one changed line marked BUG, and add_negatives(), which
///        registers it.
//
// v9 is a wrong-result negative, not a hang: every box lands (the byte count is right), but in
// the wrong place, so --check-only reports mismatches.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/perturb.cuh"
#include "common/ring.cuh"
#include "kernels.cuh"

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
  const int tid = threadIdx.x, warp = tid / 32;
  init_full_barriers(full);
  auto produce = [&](std::size_t tile) {  // v2's load_tile, written out
    const std::size_t matrix_tile = tut::block_tile(tile);
    const int s = static_cast<int>(tile % STAGES);
    load_box(s_ring + s * TILE * TILE, &map_in_sw128,
             g.row0(matrix_tile), g.col0(matrix_tile),  // BUG: {row, column}; TMA wants {column, row}
             &full[s], TILE_BYTES);
  };
  if (tid == 0)
    for (std::size_t tile = 0; tile < my_tiles && tile < STAGES; ++tile) produce(tile);
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < my_tiles; ++tile, ring.advance()) {
    const bool landed = tut::wait_or_report(
        &full[ring.slot], ring.phase, d_error,
        tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, ring.slot).at_tile(tile)
            .expecting(TILE_BYTES));
    if (__syncthreads_or(!landed)) return;
    const std::size_t matrix_tile = tut::block_tile(tile);
    const float* box = s_ring + ring.slot * TILE * TILE;
    store_transposed(d_out, n, g.row0(matrix_tile), g.col0(matrix_tile),
                     [&](int r, int c) { return box[swizzled_128b(r, c)]; });
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (tid == 0 && tile + STAGES < my_tiles) produce(tile + STAGES);
  }
}

// Registers the negative on a VariantList of the chapter's Problem (main.cu's: map_in_sw128,
// out(), n, err(), sms()).
template <class Problem>
void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_swapped_coords", "v9 BROKEN: coords {y, x}",
        "negative: tensor coordinates given row first; TMA wants innermost (column) first",
        [](Problem& p, cudaStream_t s) {
          launch_transpose_ring(transpose_v9_swapped_coords_kernel, p.map_in_sw128, p.out(),
                                p.n, p.err(), p.sms(), 0, s);
        }).negative = true;
}

}  // namespace ch12
