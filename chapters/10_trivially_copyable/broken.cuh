/// @file broken.cuh
/// @brief Chapter 10's broken variant: v9 is kernels.cuh's AoSCtorUnchecked with the copy done
///        the way ParticleWithCtor's author meant it, through the copy constructor, run in the
///        same advance_slices() protocol, its one wrong line marked // BUG:.
///
/// It is registered as a negative (add_negatives(), which main.cu's variants() calls last), so
/// `--check-only` and the `_negatives` test require it to FAIL: the check must be able to see
/// this mistake.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <new>

#include "common/harness.cuh"
#include "kernels.cuh"
#include "particle.cuh"

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

/// Registers v9 as a negative; ChapterProblem is main.cu's Problem (defined after this header).
template <class ChapterProblem>
void add_negatives(tut::VariantList<ChapterProblem>& v) {
  auto& v9 = v.add("v9_ctor_constructed", "v9 BROKEN: staged by copy ctor",
                   "negative: ParticleWithCtor staged through its copy constructor, which drops "
                   "the velocity; must FAIL",
                   [](ChapterProblem& p, cudaStream_t s) {
                     launch_advance(advance_v9_ctor_constructed_kernel, p.d_in.data(),
                                    p.d_out.data(), p.n, p.sms(), s);
                   });
  v9.reference = kAoS;
  v9.negative = true;
}

}  // namespace ch10
