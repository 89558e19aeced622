/// @file workload_stencil_stream_baselines.cuh
/// @brief The baselines that chapters 02 and 03 compare their copies with, on the stencil/stream
///        workload (workload_stencil_stream.cuh); workload_stencil_stream_kernels.cuh runs them.
///
/// Each kernel here is taught, with its comments and exercise, in an earlier chapter's
/// kernels.cuh; a later chapter runs this copy as its baseline row, so that editing a lesson
/// never changes another chapter's numbers:
///   stencil_sync_kernel   chapter 01's v0: halo loads LDG -> STS, BAR.SYNC
///   stream_sync_kernel    chapter 01's v1 (without its timeline calls): LDG -> STS, BAR.SYNC
///   stencil_async_kernel  chapter 02's v1: per-thread cuda::memcpy_async<4> + one barrier
///   stream_async_kernel   chapter 02's v4: per-thread cuda::memcpy_async<16> + one barrier
/// All of them run kThreads (256) threads on a persistent grid: block b walks tiles b,
/// b + gridDim.x, ...
#pragma once

#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_runtime.h>
#include <nv/target>

#include <cstddef>

#include "block_barrier.cuh"
#include "workload_stencil_stream.cuh"
#include "workload_stencil_stream_kernels.cuh"

namespace tut::stencil_stream {

/// @brief Chapter 01's v0: the stencil tile and its halos staged synchronously.
__global__ void stencil_sync_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                    std::size_t n) {
  __shared__ float s_tile[kRadius + kStencilTileElems + kRadius];
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n + kStencilTileElems - 1) / kStencilTileElems;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStencilTileElems;
    const std::size_t i = base + t;
    s_tile[kRadius + t] = i < n ? d_in[i] : 0.0f;
    if (t < kRadius) {
      const std::size_t left = base + t;  // element base - kRadius + t, without underflow
      s_tile[t] = left >= kRadius && left - kRadius < n ? d_in[left - kRadius] : 0.0f;
    }
    if (t >= kStencilTileElems - kRadius) {
      const std::size_t right = i + kRadius;
      s_tile[kRadius + t + kRadius] = right < n ? d_in[right] : 0.0f;
    }
    __syncthreads();  // read after write
    if (i < n) d_out[i] = stencil_sum(s_tile, t);
    __syncthreads();  // write after read
  }
}

/// @brief Chapter 01's v1: each 4 KiB stream tile staged synchronously and written reversed.
__global__ void stream_sync_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                   std::size_t n_vecs) {
  __shared__ float4 s_tile[kStreamTileVecs];
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    if (t < count) s_tile[t] = d_in[base + t];
    __syncthreads();  // read after write
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    __syncthreads();  // write after read
  }
}

/// @brief Chapter 02's v1: every stencil element copied by cuda::memcpy_async (4-byte cp.async),
///        one block-scope barrier completing the tile.
__global__ void stencil_async_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                     std::size_t n) {
  __shared__ alignas(16) float s_tile[kRadius + kStencilTileElems + kRadius];
  __shared__ alignas(BlockBarrier) unsigned char s_bar_bytes[sizeof(BlockBarrier)];
  BlockBarrier& bar = init_block_barrier(s_bar_bytes);
  const int t = threadIdx.x;
  const auto four_bytes = cuda::aligned_size_t<4>(sizeof(float));
  const std::size_t num_tiles = (n + kStencilTileElems - 1) / kStencilTileElems;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStencilTileElems;
    const std::size_t i = base + t;
    if (i < n) cuda::memcpy_async(&s_tile[kRadius + t], &d_in[i], four_bytes, bar);
    else s_tile[kRadius + t] = 0.0f;
    if (t < kRadius) {
      const std::size_t left = base + t;  // element base - kRadius + t
      if (left >= kRadius && left - kRadius < n)
        cuda::memcpy_async(&s_tile[t], &d_in[left - kRadius], four_bytes, bar);
      else
        s_tile[t] = 0.0f;
    }
    if (t >= kStencilTileElems - kRadius) {
      const std::size_t right = i + kRadius;
      if (right < n) cuda::memcpy_async(&s_tile[kRadius + t + kRadius], &d_in[right], four_bytes, bar);
      else s_tile[kRadius + t + kRadius] = 0.0f;
    }
    bar.arrive_and_wait();  // every thread arrived and every copy landed
    if (i < n) d_out[i] = stencil_sum(s_tile, t);
    __syncthreads();  // write after read
  }
}

/// @brief Chapter 02's v4: one 16-byte cuda::memcpy_async per thread and stream tile, completed
///        by a block-scope barrier (sm_80: cp.async.cg; sm_90: a 16-byte TMA bulk copy, so the
///        tile's reads are fenced into the async proxy before the barrier that lets it refill).
__global__ void stream_async_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                    std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[kStreamTileVecs];
  __shared__ alignas(BlockBarrier) unsigned char s_bar_bytes[sizeof(BlockBarrier)];
  BlockBarrier& bar = init_block_barrier(s_bar_bytes);
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    if (t < count)
      cuda::memcpy_async(&s_tile[t], &d_in[base + t], cuda::aligned_size_t<16>(sizeof(float4)), bar);
    bar.arrive_and_wait();
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    NV_IF_TARGET(NV_PROVIDES_SM_90, (cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);));
    __syncthreads();
  }
}

}  // namespace tut::stencil_stream
