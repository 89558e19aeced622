// Compile-fail test (CTest ch10_trivially_copyable_compile_fail_guard): the pipeline overloads
// of cuda::memcpy_async accept a type with a user-defined copy constructor (and copy its bytes
// without calling it), so the chapter wraps them in checked_memcpy_async, whose static_assert
// must reject it. With -DCONTROL the plain type is used and it must compile.
#include <cooperative_groups.h>

#include "particle.cuh"

#ifdef CONTROL
using T = ch10::Particle;
#else
using T = ch10::ParticleWithCtor;
#endif

__global__ void copy_with_pipeline(const T* g) {
  __shared__ T s[32];
  auto pipe = cuda::make_pipeline();
  auto warp = cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block());
  ch10::checked_memcpy_async(warp, s, g, sizeof(T) * 32, pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
}
