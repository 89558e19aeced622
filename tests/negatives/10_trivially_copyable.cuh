// Chapter 10's negative: v9 is AoSCtorUnchecked (chapters/10_trivially_copyable/kernels.cuh)
// with the copy done the way ParticleWithCtor's author meant it, through the copy constructor,
// run in the same advance_slices() protocol. It must FAIL under --check-only. The chapter's
// host.cuh includes this file after its Problem (kernels.cuh is already included there).
#pragma once

#include <new>

#include "common/harness.cuh"

namespace ch10 {

// v9 (negative): the same type, staged the way its author meant copies to happen - through
// its copy constructor. The constructor keeps the position and zeroes the velocity, so every
// particle comes out unmoved and with no velocity. Synchronous; the pipeline is not used.
struct AoSCtorConstructed : AoS {
  __device__ static void issue(const Warp& warp, float* s, const float* d_in, std::size_t,
                               std::size_t base, int m, Pipe&) {
    auto* dst = reinterpret_cast<ParticleWithCtor*>(s);
    const auto* src = reinterpret_cast<const ParticleWithCtor*>(d_in + base * FIELDS);
    for (int i = static_cast<int>(warp.thread_rank()); i < m; i += WARP)
      new (dst + i) ParticleWithCtor(src[i]);  // BUG: the constructor does not copy the velocity
  }
};
__global__ void advance_v9_ctor_constructed_kernel(const float* in, float* out, std::size_t n) {
  advance_slices<AoSCtorConstructed>(in, out, n);
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  add_advance(v, "v9_ctor_constructed", "v9 BROKEN: staged by copy ctor",
              "negative: ParticleWithCtor staged through its copy constructor, which drops the "
              "velocity; must FAIL",
              advance_v9_ctor_constructed_kernel, kAoS)
      .negative = true;
}

}  // namespace ch10
