/// @file broken.cuh
/// @brief Chapter 06's broken variants: copies of kernels.cuh's stream_v1_cp_async_kernel
///        (v8: 8 slots; v9: 4 slots, the copy written inline; commit and wait through
///        common/cp_async.cuh), one changed line each, marked // BUG:.
///
/// They are registered as negatives (add_negatives(), which main.cu's variants() calls last),
/// so `--check-only` and the `_negatives` test require each to FAIL.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/cp_async.cuh"
#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/ring.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "kernels.cuh"

namespace ch06 {

// ---------------------------------------------------------------------------------------------
// v8 (negative): a one-based wrap of the ring
// ---------------------------------------------------------------------------------------------
// A copy of v1 (8 slots, .cg 16 B) with one changed line: the slot a tile is copied into. Tiles
// 0 .. STAGES-1 go to the right slots; after that the refills cycle through slots 1 ..
// STAGES-1. So the refill issued at iteration `tile` (tile + STAGES - 1, for tile >= 1) lands in
// slot 1 + (tile - 1) % 7: at iteration 1 that is slot 1, the very slot being consumed, so
// tiles 1, 2, ... race with their own refill; and slot 0 keeps tile 0, which the consumer reads
// again as tile STAGES. The second is what fails deterministically: a block with more than
// STAGES tiles always fails, one with at most STAGES tiles never does, and the harness's lap
// check (two blocks, many laps each) exposes it at a small size.
__global__ void __launch_bounds__(THREADS)
    stream_v8_wrap_bug_kernel(const std::uint32_t* __restrict__ d_in,
                              std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  constexpr int STAGES = 8;
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  auto issue = [&](std::size_t tile) {
    const std::size_t slot = tile < STAGES ? tile : 1 + (tile - 1) % (STAGES - 1);  // BUG: one-based wrap
    if (tile < my_tiles) {
      const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
      issue_tile<16, true>(s_tiles[slot], d_in, base, tile_count(n_words, base));
    }
    tut::cp_async_commit_group();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    tut::cp_async_wait_group<STAGES - 2>();  // v8: my group of tile landed
    __syncthreads();
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
  }
  tut::cp_async_wait_all();
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): src-size given in words instead of bytes
// ---------------------------------------------------------------------------------------------
// A copy of v1 (4 slots, .cg 16 B) with the copy written inline and its src-size in words: a
// unit bug in the one operand the hardware cannot check. A full vector is copied with src-size
// 4, so 4 bytes are read and 12 zero-filled: three words of every vector come out as zero, and
// every size of 3 words or more fails. At 1 and 2 words it passes: src-size 1 or 2 reads part
// of the first word, and the words that come out are the padding zeros the reference expects
// there (the reversal writes the padded vector's last words first). Every check size but the
// first (one word) fails.
__global__ void __launch_bounds__(THREADS)
    stream_v9_srcsize_words_kernel(const std::uint32_t* __restrict__ d_in,
                                   std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  constexpr int STAGES = 4;
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;
  auto issue = [&](std::size_t tile) {
    const int left = tile < my_tiles ? tile_count(n_words, tut::block_tile(tile) * TILE_WORDS) - w : 0;
    if (left > 0)
      cp_async_cg16(smem_u32(&s_tiles[tile % STAGES][w]), d_in + tut::block_tile(tile) * TILE_WORDS + w,
                    static_cast<std::uint32_t>(left < VEC_WORDS ? left : VEC_WORDS));  // BUG: words
    tut::cp_async_commit_group();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    tut::cp_async_wait_group<STAGES - 2>();  // v9: my group of tile landed
    __syncthreads();
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
  }
  tut::cp_async_wait_all();
}

inline void launch_stream_v8(StreamProblem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v8_wrap_bug_kernel, THREADS, 0, p.sms(), p.blocks_per_sm(), s,
                         p.d_in.data(), p.d_out.data(), p.n_words);
}
inline void launch_stream_v9(StreamProblem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v9_srcsize_words_kernel, THREADS, 0, p.sms(), p.blocks_per_sm(),
                         s, p.d_in.data(), p.d_out.data(), p.n_words);
}

/// Registers the broken variants (checked against the stream's reference, kReverse).
template <class ChapterProblem>
void add_negatives(tut::VariantList<ChapterProblem>& v) {
  auto& v8 = v.add("v8_wrap_bug", "v8 BROKEN: ring wraps to slot 1",
                   "negative: 8-slot ring whose refills skip slot 0 after the first lap; must FAIL",
                   launch_stream_v8);
  v8.reference = kReverse;
  v8.negative = true;
  auto& v9 = v.add("v9_srcsize_words", "v9 BROKEN: src-size in words",
                   "negative: src-size operand given in words, not bytes; must FAIL",
                   launch_stream_v9);
  v9.reference = kReverse;
  v9.negative = true;
}

}  // namespace ch06
