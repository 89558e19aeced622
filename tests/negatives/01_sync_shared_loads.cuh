// Chapter 01's negatives: copies of stream_v1_sync_kernel (chapters/01_sync_shared_loads/
// kernels.cuh, without its timeline calls), one without the write-after-read barrier (v8) and
// one that drops the partial last tile (v9), each changed line marked // BUG:. Each must FAIL
// under --check-only. The chapter's host.cuh includes this file after kernels.cuh (which
// brings in the workload's Problem) and calls add_negatives() at the end of variants().
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/bounded_wait.cuh"  // tut::globaltimer_ns (v8's late warp)
#include "common/harness.cuh"
#include "common/workload_stencil_stream_kernels.cuh"

namespace ch01 {

// ---------------------------------------------------------------------------------------------
// v8 (negative): v1 without the write-after-read barrier, and one warp that runs late
// ---------------------------------------------------------------------------------------------
// Without the trailing __syncthreads(), warp 0 finishes tile k and stores tile k+1's first 32
// float4 into s_tile[0..31] while the last warp may still have to read them (it reads
// s_tile[count-1-t] for t = 224..255). Whether that happens depends on the scheduler: usually
// the last warp reads within a few cycles of the barrier, long before warp 0's next load is
// back from memory, and the bug hides. Here the last warp waits 20 us after the barrier, as a
// warp the scheduler parks for a while would; warp 0's next tile lands first, every time.
// The first tile of a block is read correctly only if the block has no second tile: the bug
// shows from the second lap of the (one-slot) ring on, and the lap check always has them.
__global__ void stream_v8_no_trailing_sync_kernel(const float4* __restrict__ d_in,
                                                  float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ float4 s_tile[kStreamTileVecs];
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    if (t < count) s_tile[t] = d_in[base + t];
    __syncthreads();
    if (t >= kThreads - 32) {  // the late warp (a stand-in for the scheduler's bad luck)
      const unsigned long long start = tut::globaltimer_ns();
      while (tut::globaltimer_ns() - start < 20'000) {
      }
    }
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
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
  const int t = threadIdx.x;
  const std::size_t num_tiles = n_vecs / kStreamTileVecs;  // BUG: drops the remainder
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    s_tile[t] = d_in[base + t];
    __syncthreads();
    d_out[base + t] = s_tile[kStreamTileVecs - 1 - t];
    __syncthreads();
  }
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  add_stream(v, "v8_no_trailing_sync", "v8 BROKEN: no barrier before refill",
             "negative: v1 without the write-after-read barrier, one warp late; FAILs "
             "from a block's second tile on",
             stream_v8_no_trailing_sync_kernel, Occupancy::kFull)
      .negative = true;
  add_stream(v, "v9_no_tail", "v9 BROKEN: drops partial tile",
             "negative: rounds the tile count down; FAILs at sizes that are not whole tiles",
             stream_v9_no_tail_kernel, Occupancy::kFull)
      .negative = true;
}

}  // namespace ch01
