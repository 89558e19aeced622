// Chapter 02's negative: v9, a copy of stencil_v1_async_kernel (chapters/02_memcpy_async_barrier/
// kernels.cuh) with its one changed line marked // BUG:. It must FAIL under --check-only. The
// chapter's host.cuh includes this file after kernels.cuh (which brings in the workload's
// Problem) and calls add_negatives() at the end of variants().
#pragma once

#include <cuda/barrier>
#include <cuda_runtime.h>

#include <cstddef>

#include "common/block_barrier.cuh"
#include "common/harness.cuh"
#include "common/workload_stencil_stream_kernels.cuh"

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
  const int t = threadIdx.x;
  const float nan = __int_as_float(0x7fffffff);
  const auto four_bytes = cuda::aligned_size_t<4>(sizeof(float));
  const std::size_t num_tiles = (n + kStencilTileElems - 1) / kStencilTileElems;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStencilTileElems;
    const std::size_t i = base + t;
    s_tile[kRadius + t] = nan;
    if (t < 2 * kRadius) s_tile[t < kRadius ? t : kStencilTileElems + t] = nan;  // both halos
    __syncthreads();
    if (i < n) cuda::memcpy_async(&s_tile[kRadius + t], &d_in[i], four_bytes, bar);
    else s_tile[kRadius + t] = 0.0f;
    if (t < kRadius) {
      const std::size_t left = base + t;
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
    const float sum = stencil_sum(s_tile, t);  // BUG: read before bar.arrive_and_wait()
    bar.arrive_and_wait();
    if (i < n) d_out[i] = sum;
    __syncthreads();
  }
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  add_stencil(v, "v9_early_read", "v9 BROKEN: reads before the wait",
              "negative: sums the tile between issuing the copies and arrive_and_wait; "
              "must FAIL",
              stencil_v9_early_read_kernel)
      .negative = true;
}

}  // namespace ch02
