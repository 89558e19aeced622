/// @file compile_fail.cu
/// @brief Chapter 10's compile-fail tests: a type with a user-defined copy constructor
///        (ch10::ParticleWithCtor, particle.cuh) must be rejected at compile time by both
///        asynchronous copy paths, because an async copy moves bytes and never runs the
///        constructor.
///
/// Each case is one translation unit, chosen by a macro:
/// - `-DCASE_BARRIER`: cuda::memcpy_async with a cuda::barrier, rejected by CCCL's own
///   static_assert (CTest ch10_trivially_copyable_compile_fail_barrier);
/// - `-DCASE_GUARD`: checked_memcpy_async (particle.cuh) around the pipeline overload, which
///   itself accepts the type and copies its bytes without calling the constructor (CTest
///   ch10_trivially_copyable_compile_fail_guard).
///
/// A test passes only when nvcc fails with the expected diagnostic. With `-DCONTROL` the same
/// code uses the plain type and must compile (so the failure is due to the type alone).
#include <cooperative_groups.h>
#include <cuda/barrier>

#include "particle.cuh"

#ifdef CONTROL
using T = ch10::Particle;
#else
using T = ch10::ParticleWithCtor;
#endif

#if defined(CASE_BARRIER)
__global__ void copy_with_barrier(const T* g) {
  __shared__ T s[32];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  cuda::memcpy_async(s, g, sizeof(T) * 32, bar);
  bar.arrive_and_wait();
}
#elif defined(CASE_GUARD)
__global__ void copy_with_pipeline(const T* g) {
  __shared__ T s[32];
  auto pipe = cuda::make_pipeline();
  auto warp = cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block());
  ch10::checked_memcpy_async(warp, s, g, sizeof(T) * 32, pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
}
#else
#error "compile with -DCASE_BARRIER or -DCASE_GUARD"
#endif
