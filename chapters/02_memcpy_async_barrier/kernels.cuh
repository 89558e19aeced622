/// @file kernels.cuh
/// @brief Chapter 02's lesson kernels: cuda::memcpy_async completed by a block-scope
///        cuda::barrier in shared memory, on the stencil (4-byte copies, and the void* fallback)
///        and on the stream (16-byte copies, which sm_90 turns into TMA bulk copies).
///
/// What it adds over chapter 01: the loads stop travelling through registers. Each thread asks
/// for its elements with cuda::memcpy_async(dst, src, size, bar) (CCCL: the CUDA C++ Core
/// Libraries, libcu++ and friends, shipped with nvcc). The hardware copies global -> shared on
/// its own, and the block-scope barrier (an mbarrier object in shared memory) completes its
/// phase only when every thread has arrived AND every copy bound to it has landed.
///
/// The same call compiles to different things, decided by what CCCL can prove:
///   float* + aligned_size_t<4>            cp.async.ca 4 B + cp.async.mbarrier.arrive (LDGSTS)
///   void* + a plain size_t                byte loads and stores, done synchronously
///   aligned_size_t<16>, barrier in shared memory, sm_90
///                                         cp.async.bulk (the TMA unit) + mbarrier.expect_tx
/// Reading order: v1/v2 (the stencil's copies asynchronous / through void*), v4 (the stream
/// with 16-byte copies). The baselines v0 and v3 are chapter 01's stencil and stream, run from
/// common/workload_stencil_stream_baselines.cuh; every kernel runs through the workload's
/// launchers (common/workload_stencil_stream_kernels.cuh). The registry is in main.cu; the
/// negative v9 is in broken.cuh.
#pragma once

#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_runtime.h>
#include <nv/target>

#include <cstdint>

#include "common/block_barrier.cuh"
#include "common/perturb.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_kernels.cuh"

namespace ch02 {

// The workload's shapes and helpers (common/workload_stencil_stream.cuh and
// common/workload_stencil_stream_kernels.cuh): kRadius (3), kStencilTileElems (256 floats),
// kStreamTileVecs (256 float4), kThreads (256 per block, every kernel here),
// stream_tile_count() and stencil_sum().
using namespace tut::stencil_stream;
using tut::BlockBarrier;

// ---------------------------------------------------------------------------------------------
// v1: chapter 01's stencil, every load a cuda::memcpy_async(..., aligned_size_t<4>, bar)
// ---------------------------------------------------------------------------------------------
// The barrier: raw shared bytes given meaning by tut::init_block_barrier (common/
// block_barrier.cuh): thread 0 runs init(bar, blockDim.x), on sm_90 a proxy fence, then one
// __syncthreads() so nobody arrives before the init. Per copy, on sm_80 and sm_90 alike:
//   cp.async.ca.shared.global [s], [g], 4, 4;   LDGSTS.E: the load/store unit fetches g and
//                                               writes s itself, no register in between
//   cp.async.mbarrier.arrive.shared.b64 [bar];  the current phase now needs one more arrival,
//                                               made by the hardware once all of this thread's
//                                               earlier cp.async have landed
// Then, once per tile, bar.arrive_and_wait(): this thread's own arrival + a wait on the phase.
// The phase completes after blockDim.x thread arrivals plus one deferred arrival per copy, so
// the one wait covers "everyone got here" and "every copy bound to the barrier has landed".
__global__ void stencil_v1_async_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                        std::size_t n) {
  __shared__ alignas(16) float s_tile[kRadius + kStencilTileElems + kRadius];  // [3|256|3] floats
  __shared__ alignas(BlockBarrier) unsigned char s_bar_bytes[sizeof(BlockBarrier)];
  BlockBarrier& bar = tut::init_block_barrier(s_bar_bytes);
  const int tid = threadIdx.x;
  const auto four_bytes = cuda::aligned_size_t<4>(sizeof(float));  // size and both addresses
  const std::size_t num_tiles = (n + kStencilTileElems - 1) / kStencilTileElems;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStencilTileElems;
    const std::size_t i = base + tid;
    // LESSON: the copies do not block the thread: a halo thread issues its centre and its halo
    // copy back to back, both in flight together. Out-of-range elements are plain shared
    // stores of zero, ordered for the other threads by the same arrive_and_wait.
    // EXERCISE-BEGIN: stage this thread's centre element and, for the first and last kRadius threads, one halo element each, asynchronously and bound to the block's barrier so that its wait covers them (an element outside the array is a zero)
    if (i < n) cuda::memcpy_async(&s_tile[kRadius + tid], &d_in[i], four_bytes, bar);
    else s_tile[kRadius + tid] = 0.0f;
    if (tid < kRadius) {
      const std::size_t left = base + tid;  // element base - kRadius + tid
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
    // EXERCISE-END
    // EXERCISE-BEGIN: before anyone reads a neighbour: every thread of the block has issued its copies and every copy has landed (one call does both)
    bar.arrive_and_wait();  // one wait: every thread arrived, every copy landed
    // EXERCISE-END
    if (i < n) d_out[i] = stencil_sum(s_tile, tid);
    tut::perturb(tut::Perturb::kBeforeRelease, static_cast<std::uint32_t>(tile));
    __syncthreads();  // write after read: the next tile's copies overwrite s_tile
  }
}

// ---------------------------------------------------------------------------------------------
// v2: the same call through void* with a plain size: the silent fallback
// ---------------------------------------------------------------------------------------------
// A generic "copy these bytes" helper would pass void* and sizeof(float). CCCL then takes the
// alignment as 1, cannot use cp.async (it needs 4), and copies with a loop of byte loads and
// stores run by the calling thread, synchronously. Still correct (the wait still orders it),
// and nothing warns you: read the PTX.
__global__ void stencil_v2_bytes_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                        std::size_t n) {
  __shared__ alignas(16) float s_tile[kRadius + kStencilTileElems + kRadius];
  __shared__ alignas(BlockBarrier) unsigned char s_bar_bytes[sizeof(BlockBarrier)];
  BlockBarrier& bar = tut::init_block_barrier(s_bar_bytes);
  const int tid = threadIdx.x;
  const std::size_t four_bytes = sizeof(float);  // v1's size, without its alignment promise
  const std::size_t num_tiles = (n + kStencilTileElems - 1) / kStencilTileElems;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStencilTileElems;
    const std::size_t i = base + tid;
    if (i < n)
      cuda::memcpy_async(static_cast<void*>(&s_tile[kRadius + tid]), static_cast<const void*>(&d_in[i]),
                         four_bytes, bar);
    else
      s_tile[kRadius + tid] = 0.0f;
    if (tid < kRadius) {
      const std::size_t left = base + tid;
      if (left >= kRadius && left - kRadius < n)
        cuda::memcpy_async(static_cast<void*>(&s_tile[tid]),
                           static_cast<const void*>(&d_in[left - kRadius]), four_bytes, bar);
      else
        s_tile[tid] = 0.0f;
    }
    if (tid >= kStencilTileElems - kRadius) {
      const std::size_t right = i + kRadius;
      if (right < n)
        cuda::memcpy_async(static_cast<void*>(&s_tile[kRadius + tid + kRadius]),
                           static_cast<const void*>(&d_in[right]), four_bytes, bar);
      else
        s_tile[kRadius + tid + kRadius] = 0.0f;
    }
    bar.arrive_and_wait();
    if (i < n) d_out[i] = stencil_sum(s_tile, tid);
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v4: the stream with one 16-byte memcpy_async per thread, aligned_size_t<16>, barrier
// ---------------------------------------------------------------------------------------------
// LESSON: here the architecture changes the instruction. With a 16-byte guarantee and a
// block-scope barrier in shared memory, CCCL picks:
//   sm_80: cp.async.cg.shared.global [s], [g], 16, 16 (LDGSTS.E.BYPASS.128: skips L1)
//          + cp.async.mbarrier.arrive (a deferred arrival, as in v1)
//   sm_90: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], 16, [bar]
//          (UBLKCP: a 16-byte request to the TMA unit, the Tensor Memory Accelerator) and an
//          mbarrier.expect_tx of 16 bytes by the same thread.
// The TMA unit writes shared memory through the async proxy, while this kernel's reads of the
// tile are ordinary (generic-proxy) loads. Before a slot that was read is refilled by the TMA,
// the reads must be ordered for the async proxy as well: each thread fences after its last
// read, before the barrier that releases the slot. sm_80's cp.async needs no such fence.
__global__ void stream_v4_async_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                       std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[kStreamTileVecs];  // [256] float4 = 4 KiB
  __shared__ alignas(BlockBarrier) unsigned char s_bar_bytes[sizeof(BlockBarrier)];
  BlockBarrier& bar = tut::init_block_barrier(s_bar_bytes);
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    if (tid < count)
      cuda::memcpy_async(&s_tile[tid], &d_in[base + tid], cuda::aligned_size_t<16>(sizeof(float4)), bar);
    bar.arrive_and_wait();  // every thread arrived and every copy landed
    if (tid < count) d_out[base + tid] = s_tile[count - 1 - tid];
    // sm_90: my reads of s_tile -> before the TMA's refill of it (async proxy)
    NV_IF_TARGET(NV_PROVIDES_SM_90, (cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);));
    tut::perturb(tut::Perturb::kBeforeRelease, static_cast<std::uint32_t>(tile));
    __syncthreads();        // write after read: consumed before the next copies overwrite it
  }
}

}  // namespace ch02
