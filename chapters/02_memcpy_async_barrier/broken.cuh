/// @file broken.cuh
/// @brief Chapter 02's deliberately broken variant: v9, a copy of stencil_v1_async_kernel
///        (kernels.cuh) with its one changed line marked // BUG:. It must FAIL under
///        --check-only. main.cu calls add_negatives() at the end of its registry.
#pragma once

#include <cuda/barrier>
#include <cuda_runtime.h>

#include <cstddef>

#include "common/block_barrier.cuh"
#include "common/harness.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_kernels.cuh"
#include "kernels.cuh"

namespace ch02 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): v1 reading the tile before the barrier phase completes
// ---------------------------------------------------------------------------------------------
// The copies are asynchronous, so the shared memory being summed still holds what was there
// before. The tile is first filled with a NaN (a __syncthreads() orders that before the copies);
// no copy comes back from L2 or DRAM in the few cycles between its issue and the thread's own
// read, so the sums contain NaN, every time. The wait still follows, so no copy is in flight
// when the tile is reused or the block exits.
__global__ void stencil_v9_early_read_kernel(const float* __restrict__ d_in,
                                             float* __restrict__ d_out, std::size_t n) {
  __shared__ alignas(16) float s_tile[kRadius + kStencilTileElems + kRadius];
  __shared__ alignas(BlockBarrier) unsigned char s_bar_bytes[sizeof(BlockBarrier)];
  BlockBarrier& bar = tut::init_block_barrier(s_bar_bytes);
  const int tid = threadIdx.x;
  const float nan = __int_as_float(0x7fffffff);
  const auto four_bytes = cuda::aligned_size_t<4>(sizeof(float));
  const std::size_t num_tiles = (n + kStencilTileElems - 1) / kStencilTileElems;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStencilTileElems;
    const std::size_t i = base + tid;
    s_tile[kRadius + tid] = nan;
    if (tid < 2 * kRadius) s_tile[tid < kRadius ? tid : kStencilTileElems + tid] = nan;  // both halos
    __syncthreads();
    if (i < n) cuda::memcpy_async(&s_tile[kRadius + tid], &d_in[i], four_bytes, bar);
    else s_tile[kRadius + tid] = 0.0f;
    if (tid < kRadius) {
      const std::size_t left = base + tid;
      if (left >= kRadius && left - kRadius < n)
        cuda::memcpy_async(&s_tile[tid], &d_in[left - kRadius], four_bytes, bar);
      else
        s_tile[tid] = 0.0f;
    }
    if (tid >= kStencilTileElems - kRadius) {
      const std::size_t right = i + kRadius;
      if (right < n) cuda::memcpy_async(&s_tile[kRadius + tid + kRadius], &d_in[right], four_bytes, bar);
      else s_tile[kRadius + tid + kRadius] = 0.0f;
    }
    const float sum = stencil_sum(s_tile, tid);  // BUG: read before bar.arrive_and_wait()
    bar.arrive_and_wait();
    if (i < n) d_out[i] = sum;
    __syncthreads();
  }
}

/// @brief Registers v9 (negative) in the chapter's variant list.
inline void add_negatives(tut::VariantList<Problem>& v) {
  tut::Variant<Problem>& v9 = v.add(
      "v9_early_read", "v9 BROKEN: reads before the wait",
      "negative: sums the tile between issuing the copies and arrive_and_wait; must FAIL",
      [](Problem& p, cudaStream_t s) { launch_stencil(stencil_v9_early_read_kernel, p, s); });
  v9.reference = kStencil;
  v9.negative = true;
}

}  // namespace ch02
