/// @file block_barrier.cuh
/// @brief A block-scope cuda::barrier in shared memory, set up the way chapter 02 teaches:
///        raw shared bytes, init() by one thread, a proxy fence on sm_90, one __syncthreads().
#pragma once

#include <cuda/barrier>
#include <cuda/ptx>
#include <nv/target>

namespace tut {

/// @brief The barrier of chapters 02-03: block scope, default completion. CCCL implements it
///        as an mbarrier (a 64-bit object in shared memory) when it lives in shared memory.
using BlockBarrier = cuda::barrier<cuda::thread_scope_block>;

/// @brief Initialise the barrier in @p s_bar_bytes for blockDim.x arrivals per phase and
///        return it. Every thread of the block must call it, before the barrier is used.
/// @details A kernel declares the storage as raw bytes,
///          `__shared__ alignas(tut::BlockBarrier) unsigned char s_bar_bytes[sizeof(tut::BlockBarrier)];`
///          because a `__shared__ cuda::barrier` is never constructed (its constructor would
///          not run; nvcc warns #20054). init() (PTX mbarrier.init) is what gives the bytes
///          their meaning. The steps, in order:
///          1. thread 0 runs init(): expected arrivals per phase = the whole block;
///          2. sm_90 only: thread 0 runs fence.proxy.async.shared::cta. There, CCCL may hand a
///             copy to the TMA unit (cp.async.bulk), which signals the barrier from the async
///             proxy; the fence orders the (generic-proxy) init before those accesses;
///          3. __syncthreads(): no thread arrives on the barrier, or binds a copy to it, before
///             it is initialised. The barrier cannot order its own initialisation.
__device__ inline BlockBarrier& init_block_barrier(unsigned char* s_bar_bytes) {
  BlockBarrier* bar = reinterpret_cast<BlockBarrier*>(s_bar_bytes);
  if (threadIdx.x == 0) {
    init(bar, blockDim.x);
    NV_IF_TARGET(NV_PROVIDES_SM_90, (cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);));
  }
  __syncthreads();
  return *bar;
}

}  // namespace tut
