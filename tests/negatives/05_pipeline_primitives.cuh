// Chapter 05's negative: a copy of chapters/05_pipeline_primitives/kernels.cuh's
// stream_v1_primitives_kernel (3 slots, 16 B, copy inline), its one changed line marked // BUG:.
// It must FAIL under --check-only. host.cuh includes this file after the Problem (the
// workload's, tut::reversed_tiles::Problem) and calls add_negatives() at the end of variants().
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/workload_reversed_tiles.cuh"

namespace ch05 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): the 4th argument of __pipeline_memcpy_async taken for PTX's src-size
// ---------------------------------------------------------------------------------------------
// A copy of v1 (3 slots, 16 B) with the copy written inline and one changed line. The PTX
// operand is "bytes to read"; the primitive's is "bytes to zero". Passing the number of valid
// bytes zero-fills every full vector (zfill = 16) and reads too much of the ragged one: every
// output word of a full vector becomes 0, so the check fails at every size of 3 words or more.
// At 1 and 2 words it passes: the ragged vector then reads 12 or 8 bytes and zeroes 4 or 8,
// and the words it zeroes by mistake are exactly the ones the reversal writes first, which the
// reference expects to be the padding zeros. Every check size but the first (one word) fails.
__global__ void __launch_bounds__(THREADS)
    stream_v9_zfill_swapped_kernel(const std::uint32_t* __restrict__ d_in,
                                   std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  constexpr int STAGES = 3;
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  const std::size_t my_tiles = tiles_for_block(n_words);
  auto issue = [&](std::size_t k) {
    if (k < my_tiles) {
      const std::size_t base = tile_base(k);
      const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;
      const int valid = tile_count(n_words, base) - w;
      if (valid > 0)  // BUG: valid bytes passed where the primitive wants bytes to zero
        __pipeline_memcpy_async(&s_tiles[k % STAGES][w], d_in + base + w, 16,
                                (valid < VEC_WORDS ? valid : VEC_WORDS) * 4);
    }
    __pipeline_commit();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t k = 0; k < my_tiles; ++k) {
    __pipeline_wait_prior(STAGES - 2);
    __syncthreads();
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
  }
}

inline void launch_stream_v9(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                             int sm_count, int blocks_per_sm, cudaStream_t s) {
  tut::launch_persistent(stream_v9_zfill_swapped_kernel, THREADS, 0, sm_count, blocks_per_sm, s,
                         d_in, d_out, n_words);
}

inline void add_negatives(tut::VariantList<tut::reversed_tiles::Problem>& v) {
  v.add("v9_zfill_swapped", "v9 BROKEN: zfill given as src-size",
        "negative: passes the valid byte count as the zero-fill count; must FAIL",
        [](tut::reversed_tiles::Problem& p, cudaStream_t s) {
          launch_stream_v9(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), p.blocks_per_sm(), s);
        })
      .negative = true;
}

}  // namespace ch05
