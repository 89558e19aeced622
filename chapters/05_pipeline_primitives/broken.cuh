/// @file broken.cuh
/// @brief Chapter 05's broken variant: a copy of kernels.cuh's stream_v1_primitives_kernel
///        (3 slots, 16 B, the copy written inline) with its one changed line marked // BUG:.
///
/// It is registered as a negative (add_negatives(), which main.cu's variants() calls last), so
/// `--check-only` and the `_negatives` test require it to FAIL: the check must be able to see
/// this mistake.
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/ring.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "kernels.cuh"

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
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  auto issue = [&](std::size_t tile) {
    if (tile < my_tiles) {
      const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
      const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;
      const int valid = tile_count(n_words, base) - w;
      if (valid > 0)  // BUG: valid bytes passed where the primitive wants bytes to zero
        __pipeline_memcpy_async(&s_tiles[tile % STAGES][w], d_in + base + w, 16,
                                (valid < VEC_WORDS ? valid : VEC_WORDS) * 4);
    }
    __pipeline_commit();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    __pipeline_wait_prior(STAGES - 2);
    __syncthreads();
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
  }
}

inline void launch_stream_v9(Problem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v9_zfill_swapped_kernel, THREADS, 0, p.sms(), p.blocks_per_sm(), s,
                         p.d_in.data(), p.d_out.data(), p.n_words);
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_zfill_swapped", "v9 BROKEN: zfill given as src-size",
        "negative: passes the valid byte count as the zero-fill count; must FAIL", launch_stream_v9)
      .negative = true;
}

}  // namespace ch05
