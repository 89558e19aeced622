// Compile-fail test (CTest ch10_trivially_copyable_compile_fail_barrier): cuda::memcpy_async
// with a cuda::barrier must REJECT a type with a user-defined copy constructor. The test
// passes only when nvcc fails with CCCL's "requires a trivially copyable type" diagnostic.
// With -DCONTROL the same code uses the plain type and must compile (so the failure is due to
// the type alone).
#include <cuda/barrier>

#include "particle.cuh"

#ifdef CONTROL
using T = ch10::Particle;
#else
using T = ch10::ParticleWithCtor;
#endif

__global__ void copy_with_barrier(const T* g) {
  __shared__ T s[32];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  cuda::memcpy_async(s, g, sizeof(T) * 32, bar);
  bar.arrive_and_wait();
}
