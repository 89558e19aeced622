// Chapter 07's negative: v9 hands tiles over through a THREAD-scope pipeline. It is the split of
// stencil_v1_split_kernel (chapters/07_producer_consumer/kernels.cuh) rebuilt on the __pipeline_*
// primitives, and it must FAIL under --check-only. The chapter's host.cuh includes this file
// after its Problem (kernels.cuh is already included there).
#pragma once

#include <cuda_pipeline.h>

#include "common/harness.cuh"

namespace ch07 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): the hand-over through a THREAD-scope pipeline
// ---------------------------------------------------------------------------------------------
// A common producer/consumer example uses the __pipeline_* primitives: the producers copy with
// __pipeline_memcpy_async + __pipeline_commit, and the consumers call
// __pipeline_wait_prior(0). But commit groups belong to the thread that commits them:
// cp.async.wait_group in a consumer waits for the CONSUMER's groups - it has none - and
// returns at once. Nothing orders the consumer's reads after the producer's copies.
// A plain data race fails only some of the time; to fail on every run, this variant executes
// the buggy code under the worst schedule it allows: the producers issue tile k only after
// the consumers have read the slot (a __syncthreads between the two sides; the bug itself
// provides no ordering that would forbid it). The slot starts as NaN, so every block's first
// tile is NaN and later tiles are computed from the previous tile's data. Nothing waits on
// anything unbounded: it cannot hang.
template <int PRODUCERS>
__global__ void __launch_bounds__(THREADS)
    stencil_v9_thread_scope_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                   std::size_t n) {
  constexpr int CONSUMERS = THREADS - PRODUCERS;
  __shared__ alignas(16) float s_slot[SLOT_FLOATS];
  const int t = threadIdx.x;
  for (int i = t; i < SLOT_FLOATS; i += THREADS) s_slot[i] = __int_as_float(0x7fc00000);  // NaN
  __syncthreads();
  const std::size_t my_tiles = tiles_for_block(n);
  for (std::size_t k = 0; k < my_tiles; ++k) {
    const std::size_t base = tile_base(k);
    if (t >= PRODUCERS) {
      __pipeline_wait_prior(0);  // BUG: this thread committed nothing; returns immediately
      stencil_slot(s_slot, d_out, base, tile_count(n, base), t - PRODUCERS, CONSUMERS);
    }
    __syncthreads();  // the adversarial schedule: consumers read before producers issue
    if (t < PRODUCERS) {
      for (int v = t; v < SLOT_VECS; v += PRODUCERS) {
        const long long first = static_cast<long long>(base) - HALO + 4 * v;
        if (first >= 0 && first < static_cast<long long>(n))
          __pipeline_memcpy_async(s_slot + 4 * v, d_in + first, 16);
        else
          *reinterpret_cast<float4*>(s_slot + 4 * v) = make_float4(0.f, 0.f, 0.f, 0.f);
      }
      __pipeline_commit();
      __pipeline_wait_prior(0);  // the producer's own copies: this wait does work
    }
    __syncthreads();
  }
}

inline void launch_stencil_v9(const float* d_in, float* d_out, std::size_t n, int sms, int bps,
                              cudaStream_t s) {
  tut::launch_persistent(stencil_v9_thread_scope_kernel<64>, THREADS, 0, sms, bps, s, d_in, d_out,
                         n);
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_thread_scope", "v9 BROKEN: thread-scope hand-over",
        "negative: consumers wait on their own (empty) commit groups; must FAIL",
        [](Problem& p, cudaStream_t s) {
          launch_stencil_v9(p.d_in.data(), p.d_out.data(), p.n, p.sms(), tut::blocks_per_sm(p.cfg),
                            s);
        })
      .negative = true;
}

}  // namespace ch07
