/// @file broken.cuh
/// @brief Chapter 01's deliberately broken variants: copies of stream_v1_sync_kernel
///        (kernels.cuh, without its timeline calls), each changed line marked // BUG:.
///
///   v8   no write-after-read barrier, and one warp made late by a hand-written 20 us delay:
///        FAILs under --check-only in every build;
///   v9   drops the partial last tile: FAILs at every size that is not a whole number of tiles;
///   v10  no write-after-read barrier and nothing else changed: the lesson kernel's own
///        perturbation points are its only source of lateness. A perturbation negative: it must
///        FAIL in the TUTORIAL_PERTURB build (CTest ch01_sync_shared_loads_perturb_negatives);
///        in the normal build the H200's schedule usually hides the race, so it is left out of
///        `all` and `negative` there.
/// main.cu calls add_negatives() at the end of its registry.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/bounded_wait.cuh"  // tut::globaltimer_ns (v8's late warp)
#include "common/harness.cuh"
#include "common/perturb.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_kernels.cuh"
#include "kernels.cuh"

namespace ch01 {

// ---------------------------------------------------------------------------------------------
// v8 (negative): v1 without the write-after-read barrier, and one warp that runs late
// ---------------------------------------------------------------------------------------------
// Without the trailing __syncthreads(), warp 0 finishes tile k and stores tile k+1's first 32
// float4 into s_tile[0..31] while the last warp may still have to read them (it reads
// s_tile[count-1-tid] for tid = 224..255). Whether that happens depends on the scheduler:
// usually the last warp reads within a few cycles of the barrier, long before warp 0's next
// load is back from memory, and the bug hides. Here the last warp waits 20 us after the
// barrier, as a warp the scheduler parks for a while would; warp 0's next tile lands first,
// every time. The first tile of a block is read correctly only if the block has no second
// tile: the bug shows from the second lap of the (one-slot) ring on, and the lap check always
// has them.
__global__ void stream_v8_no_trailing_sync_kernel(const float4* __restrict__ d_in,
                                                  float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ float4 s_tile[kStreamTileVecs];
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    if (tid < count) s_tile[tid] = d_in[base + tid];
    __syncthreads();
    if (tid >= kThreads - 32) {  // the late warp (a stand-in for the scheduler's bad luck)
      const unsigned long long start = tut::globaltimer_ns();
      while (tut::globaltimer_ns() - start < 20'000) {
      }
    }
    if (tid < count) d_out[base + tid] = s_tile[count - 1 - tid];
    // BUG: no __syncthreads() here: the next tile's stores may overwrite unread float4
  }
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): forgets the partial last tile
// ---------------------------------------------------------------------------------------------
// A classic tiling bug: the tile count is rounded down. Right whenever the size is a multiple
// of 4 KiB, which is why the checks include ragged sizes.
__global__ void stream_v9_no_tail_kernel(const float4* __restrict__ d_in,
                                         float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ float4 s_tile[kStreamTileVecs];
  const int tid = threadIdx.x;
  const std::size_t num_tiles = n_vecs / kStreamTileVecs;  // BUG: drops the remainder
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    s_tile[tid] = d_in[base + tid];
    __syncthreads();
    d_out[base + tid] = s_tile[kStreamTileVecs - 1 - tid];
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v10 (perturbation negative): v1 without the write-after-read barrier
// ---------------------------------------------------------------------------------------------
// The lesson kernel line for line, its perturbation points included, with the trailing
// __syncthreads() deleted and no delay of its own. In the perturbation build, a warp that is
// late after the first barrier (kAfterWait) or before its release (kBeforeRelease) sleeps a
// few microseconds; meanwhile the warp that stores the float4 it still has to read loads the
// next tile and overwrites them. In the normal build the points are no-ops and the race
// usually hides: that is the point of the perturbation build.
__global__ void stream_v10_no_sync_perturbed_kernel(const float4* __restrict__ d_in,
                                                             float4* __restrict__ d_out,
                                                             std::size_t n_vecs) {
  __shared__ float4 s_tile[kStreamTileVecs];
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  std::uint32_t k = 0;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x, ++k) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    if (tid < count) s_tile[tid] = d_in[base + tid];
    __syncthreads();
    tut::perturb(tut::Perturb::kAfterWait, k);
    if (tid < count) d_out[base + tid] = s_tile[count - 1 - tid];
    tut::perturb(tut::Perturb::kBeforeRelease, k);
    // BUG: no __syncthreads() here: the next tile's stores may overwrite unread float4
  }
}

/// @brief Registers the negatives (v10 as a perturbation negative).
inline void add_negatives(tut::VariantList<Problem>& v) {
  tut::Variant<Problem>& v8 = v.add(
      "v8_no_trailing_sync", "v8 BROKEN: no barrier before refill",
      "negative: v1 without the write-after-read barrier, one warp late; FAILs from a block's "
      "second tile on",
      [](Problem& p, cudaStream_t s) { launch_stream(stream_v8_no_trailing_sync_kernel, p, 0, s); });
  v8.reference = kReverseTiles;
  v8.negative = true;
  tut::Variant<Problem>& v9 = v.add(
      "v9_no_tail", "v9 BROKEN: drops partial tile",
      "negative: rounds the tile count down; FAILs at sizes that are not whole tiles",
      [](Problem& p, cudaStream_t s) { launch_stream(stream_v9_no_tail_kernel, p, 0, s); });
  v9.reference = kReverseTiles;
  v9.negative = true;
  tut::Variant<Problem>& v10 = v.add(
      "v10_no_sync_perturbed", "v10 BROKEN: no barrier, perturbed",
      "negative (perturbation build): v1 without the write-after-read barrier, late only at "
      "v1's own perturbation points; must FAIL there",
      [](Problem& p, cudaStream_t s) {
        launch_stream(stream_v10_no_sync_perturbed_kernel, p, 0, s);
      });
  v10.reference = kReverseTiles;
  v10.perturb_negative = true;
}

}  // namespace ch01
