/// @file broken.cuh
/// @brief Chapter 07's broken variant: v9 hands tiles over through a THREAD-scope pipeline, the
///        split of kernels.cuh's stencil_v1_split_kernel rebuilt on the __pipeline_* primitives,
///        its one wrong line marked // BUG:.
///
/// It is registered as a negative (add_negatives(), which main.cu's variants() calls last), so
/// `--check-only` and the `_negatives` test require it to FAIL. It is a demonstration of what
/// the mistake means, run under the worst schedule the mistake allows (see the kernel's
/// comment), not evidence that the check would catch the race on a lucky schedule.
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/ring.cuh"
#include "kernels.cuh"

namespace ch07 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): the hand-over through a THREAD-scope pipeline
// ---------------------------------------------------------------------------------------------
// A natural first attempt (the tutorial's example of the mistake) uses the __pipeline_*
// primitives: the producers copy with
// __pipeline_memcpy_async + __pipeline_commit, and the consumers call
// __pipeline_wait_prior(0). But commit groups belong to the thread that commits them:
// cp.async.wait_group in a consumer waits for the CONSUMER's groups - it has none - and
// returns at once. Nothing orders the consumer's reads after the producer's copies.
// A plain data race fails only some of the time; to fail on every run, this variant executes
// the buggy code under the worst schedule it allows: the producers issue tile only after
// the consumers have read the slot (a __syncthreads between the two sides; the bug itself
// provides no ordering that would forbid it). The slot starts as NaN, so every block's first
// tile is NaN and later tiles are computed from the previous tile's data. Under this schedule
// the output is wrong whatever the consumers' wait does (deleting it changes nothing), so the
// FAIL demonstrates the mistake; compute-sanitizer's racecheck is the tool that sees the race
// itself (README, exercise 3). Nothing waits on anything unbounded: it cannot hang.
template <int PRODUCERS>
__global__ void __launch_bounds__(THREADS)
    stencil_v9_thread_scope_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                   std::size_t n) {
  constexpr int CONSUMERS = THREADS - PRODUCERS;
  __shared__ alignas(16) float s_slot[SLOT_FLOATS];
  const int tid = threadIdx.x;
  for (int i = tid; i < SLOT_FLOATS; i += THREADS) s_slot[i] = __int_as_float(0x7fc00000);  // NaN
  __syncthreads();
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n));
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    const std::size_t base = tut::block_tile(tile) * TILE;
    if (tid >= PRODUCERS) {
      __pipeline_wait_prior(0);  // BUG: this thread committed nothing; returns immediately
      stencil_slot(s_slot, d_out, base, tile_count(n, base), tid - PRODUCERS, CONSUMERS);
    }
    __syncthreads();  // the adversarial schedule: consumers read before producers issue
    if (tid < PRODUCERS) {
      for (int v = tid; v < SLOT_VECS; v += PRODUCERS) {
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

/// Registers v9 (ChapterProblem: main.cu's Problem, with d_in, d_out, n, sms() and cfg).
template <class ChapterProblem>
void add_negatives(tut::VariantList<ChapterProblem>& v) {
  v.add("v9_thread_scope", "v9 BROKEN: thread-scope hand-over",
        "negative: consumers wait on their own (empty) commit groups; must FAIL",
        [](ChapterProblem& p, cudaStream_t s) {
          launch_stencil_v9(p.d_in.data(), p.d_out.data(), p.n, p.sms(), tut::blocks_per_sm(p.cfg),
                            s);
        })
      .negative = true;
}

}  // namespace ch07
