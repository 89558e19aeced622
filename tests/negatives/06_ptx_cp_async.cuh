// Chapter 06's negatives: copies of chapters/06_ptx_cp_async/kernels.cuh's
// stream_v1_cp_async_kernel (v8: 8 slots; v9: 4 slots, copy inline; commit and wait through
// common/cp_async.cuh), one changed line each marked // BUG:. Each must FAIL under --check-only.
// host.cuh includes this file after its Problem and calls add_negatives() at the end of variants().
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/cp_async.cuh"
#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/workload_reversed_tiles.cuh"

namespace ch06 {

// ---------------------------------------------------------------------------------------------
// v8 (negative): a one-based wrap of the ring - right on the first lap only
// ---------------------------------------------------------------------------------------------
// A copy of v1 (8 slots, .cg 16 B) with one changed line: the slot a tile is copied into. Tiles
// 0 .. STAGES-1 go to the right slots; after that the refills cycle through slots 1 ..
// STAGES-1, so slot 0 keeps tile 0 and the consumer reads it again as tile STAGES. A block with
// more than STAGES tiles always fails, one with at most STAGES tiles never does: the harness's
// lap check (two blocks, many laps each) exposes it at a small size.
__global__ void __launch_bounds__(THREADS)
    stream_v8_wrap_bug_kernel(const std::uint32_t* __restrict__ d_in,
                              std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  constexpr int STAGES = 8;
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  const std::size_t my_tiles = tiles_for_block(n_words);
  auto issue = [&](std::size_t k) {
    const std::size_t slot = k < STAGES ? k : 1 + (k - 1) % (STAGES - 1);  // BUG: one-based wrap
    if (k < my_tiles)
      issue_tile<16, true>(s_tiles[slot], d_in, tile_base(k), tile_count(n_words, tile_base(k)));
    tut::cp_async_commit_group();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t k = 0; k < my_tiles; ++k) {
    tut::cp_async_wait_group<STAGES - 2>();
    __syncthreads();
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
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
  const std::size_t my_tiles = tiles_for_block(n_words);
  const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;
  auto issue = [&](std::size_t k) {
    const int left = k < my_tiles ? tile_count(n_words, tile_base(k)) - w : 0;
    if (left > 0)
      cp_async_cg16(smem_u32(&s_tiles[k % STAGES][w]), d_in + tile_base(k) + w,
                    static_cast<std::uint32_t>(left < VEC_WORDS ? left : VEC_WORDS));  // BUG: words
    tut::cp_async_commit_group();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t k = 0; k < my_tiles; ++k) {
    tut::cp_async_wait_group<STAGES - 2>();
    __syncthreads();
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
  }
  tut::cp_async_wait_all();
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  using Kernel = void (*)(const std::uint32_t*, std::uint32_t*, std::size_t);
  auto add = [&v](const char* key, const char* name, const char* description, Kernel kernel) {
    tut::Variant<Problem>& added = v.add(key, name, description, [kernel](Problem& p, cudaStream_t s) {
      tut::launch_persistent(kernel, THREADS, 0, p.sms(), p.blocks_per_sm(), s, p.d_in.data(),
                             p.d_out.data(), p.n_words);
    });
    added.reference = kReverse;
    added.negative = true;
  };
  add("v8_wrap_bug", "v8 BROKEN: ring wraps to slot 1",
      "negative: 8-slot ring whose refills skip slot 0 after the first lap; must FAIL",
      stream_v8_wrap_bug_kernel);
  add("v9_srcsize_words", "v9 BROKEN: src-size in words",
      "negative: src-size operand given in words, not bytes; must FAIL",
      stream_v9_srcsize_words_kernel);
}

}  // namespace ch06
