/// @file workload_reversed_tiles.cuh
/// @brief The tile-reversal workload of chapters 05 and 06: tile geometry, the consumer every
///        kernel shares, the CPU reference, the Problem the harness drives, and the sizes.
///
/// 4 KiB tiles of 1024 32-bit words; the last tile may be ragged (any number of words). Each
/// tile is zero-padded to whole 16-byte vectors, reversed word by word, and its first `count`
/// words are written: out[j] = pad[P-1-j]. For a ragged tile the first 1-3 output words are
/// therefore zeros that the copy itself must write (cp.async's zero-fill), so the check sees
/// whether the zero-fill happened. Chapter 05 streams it with the __pipeline_* primitives,
/// chapter 06 with raw PTX (chapter 04 reuses the Problem); each keeps its kernels in its own
/// folder, and this header holds what does not depend on how the bytes are copied.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bounded_wait.cuh"
#include "device_buffer.cuh"
#include "harness.cuh"
#include "ring.cuh"

namespace tut::reversed_tiles {

// ---------------------------------------------------------------------------------------------
// Constants and tile geometry
// ---------------------------------------------------------------------------------------------
inline constexpr int THREADS = 256;      ///< threads per block, every kernel of chapters 05 and 06
inline constexpr int TILE_WORDS = 1024;  ///< [1024] uint32 = 4 KiB per tile
inline constexpr int VEC_WORDS = 4;      ///< one 16-byte vector = 4 words
/// The deepest ring (slots) of any kernel on this workload; the largest check size is chosen so
/// that two blocks each walk at least 3 laps of it (the harness's lap check).
inline constexpr int MAX_STAGES = 8;
static_assert(THREADS * VEC_WORDS == TILE_WORDS, "the consumer: one 16-byte vector per thread");

/// Words in the tile that starts at word `base`: TILE_WORDS, or fewer for the last tile.
__host__ __device__ inline int tile_count(std::size_t n_words, std::size_t base) {
  const std::size_t left = n_words - base;
  return static_cast<int>(left < TILE_WORDS ? left : TILE_WORDS);
}
/// The count rounded up to whole 16-byte vectors: the padded tile that is reversed.
__host__ __device__ inline int padded_count(int count) {
  return (count + VEC_WORDS - 1) / VEC_WORDS * VEC_WORDS;
}
/// Tiles in an array of @p n_words words (the last one may be ragged). A persistent block walks
/// its share with tut::tiles_of_this_block(num_tiles(n)) and tut::block_tile(j) (common/ring.cuh).
__host__ __device__ inline std::size_t num_tiles(std::size_t n_words) {
  return (n_words + TILE_WORDS - 1) / TILE_WORDS;
}
// ---------------------------------------------------------------------------------------------
// The consumer, identical in every variant of both chapters
// ---------------------------------------------------------------------------------------------
/// Thread t writes output words 4t..4t+3 of the tile with one 16-byte store, read as one 16-byte
/// vector from the mirrored end of the padded tile - a vector that another warp copied in. That
/// cross-warp read is why every kernel needs a block-wide guarantee (a barrier) that all copies
/// of the tile landed.
__device__ inline void consume_reverse(const std::uint32_t* s_slot,
                                       std::uint32_t* __restrict__ d_out, std::size_t base,
                                       int count) {
  const int padded = padded_count(count);
  const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;  // first output word of this thread
  if (w >= count) return;
  // Output words [w, w+4) are pad[P-1-w] .. pad[P-4-w]: the 16-byte vector at pad[P-4-w]
  // (aligned, since P is a multiple of 4) with its words in reverse order.
  const uint4 v = *reinterpret_cast<const uint4*>(s_slot + padded - VEC_WORDS - w);  // LDS.128
  const uint4 r = make_uint4(v.w, v.z, v.y, v.x);
  if (w + VEC_WORDS <= count) {
    *reinterpret_cast<uint4*>(d_out + base + w) = r;  // STG.128
  } else {                                            // the array's ragged last vector: 1-3 words
    d_out[base + w] = r.x;
    if (w + 1 < count) d_out[base + w + 1] = r.y;
    if (w + 2 < count) d_out[base + w + 2] = r.z;
  }
}

// ---------------------------------------------------------------------------------------------
// CPU reference: each tile zero-padded to whole 16-byte vectors, reversed, truncated.
// ---------------------------------------------------------------------------------------------
inline std::vector<std::uint32_t> reference_reverse_padded(const std::vector<std::uint32_t>& in) {
  const std::size_t n = in.size();
  std::vector<std::uint32_t> out(n);
  for (std::size_t base = 0; base < n; base += TILE_WORDS) {
    const int count = tile_count(n, base);
    const int padded = padded_count(count);
    for (int j = 0; j < count; ++j) {
      const int src = padded - 1 - j;
      out[base + j] = src < count ? in[base + src] : 0u;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: one input and one output buffer of `size` bytes (32-bit words).
// ---------------------------------------------------------------------------------------------
/// The input is allocated padded to a whole 16-byte vector and the padding holds PAD_WORD (not
/// zero, so a copy that reads past the end instead of zero-filling still fails the check). The
/// kernels never need those words: the ragged vector's copy reads only its valid bytes
/// (src-size). The padding is there for compute-sanitizer memcheck, which reports the zero-fill
/// LDGSTS of __pipeline_memcpy_async as a full 16-byte read (chapter 05's README, "memcheck
/// and the ragged vector", shows the SASS).
inline constexpr std::uint32_t PAD_WORD = 0xBADF111Du;
inline std::size_t padded_words(std::size_t n_words) {
  return (n_words + VEC_WORDS - 1) / VEC_WORDS * VEC_WORDS;
}

struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(padded_words(n_words)), d_out(n_words) {
    h_in.reserve(d_in.size());
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    h_in.resize(d_in.size(), PAD_WORD);  // upload the padding too (initialised for initcheck)
    d_in.upload(h_in);
    h_in.resize(n_words);  // the references see the n_words of the problem only
  }
  /// Poisons the output and clears the error word (kernels with bounded waits write into it).
  void poison(cudaStream_t s) {
    d_out.poison(s);
    error.clear(s);
  }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    return verify_against(s, want, reference_reverse_padded);
  }
  // Prints what a timed-out wait reported (tut::ErrorWord::report), downloads the output and
  // compares it with reference(h_in), computed on first use into `cache`; a timeout counts as
  // a failure even where every word matches. A chapter with a second workload keeps a second
  // cache (chapter 06's window).
  tut::VerifyResult verify_against(
      cudaStream_t s, std::vector<std::uint32_t>& cache,
      std::vector<std::uint32_t> (*reference)(const std::vector<std::uint32_t>&)) {
    const unsigned err = error.report(s);
    const std::vector<std::uint32_t> got = d_out.download(s);
    if (cache.empty()) cache = reference(h_in);
    tut::VerifyResult r = tut::compare_exact_words(got.data(), cache.data(), n_words);
    if (err != 0 && r.mismatches == 0) r.mismatches = 1;
    return r;
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }

  int sms() const { return cfg.device.sm_count; }
  int blocks_per_sm() const { return tut::blocks_per_sm(cfg); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  std::vector<std::uint32_t> h_in, want;
  /// The kernels' `unsigned* error` (error.data()): 0 unless a bounded mbarrier wait gave up,
  /// and then the log of who waited on what (chapter 05 v3, chapter 06 v4).
  tut::ErrorWord error;
};

// ---------------------------------------------------------------------------------------------
// The sizes (each chapter's main.cu): --size in bytes, and the check sizes
// ---------------------------------------------------------------------------------------------
/// @brief The check sizes in bytes: one word; 3 words (ragged, 3 of 4 in the vector); a tile
///        less one word; tiles plus a 2-word tail; tiles plus a 1-word tail; 1 MiB plus 7 words;
///        and 8 MiB for the rings. 8 MiB is 2048 tiles: in the harness's lap check (two blocks)
///        each block walks 1024 tiles, 128 laps of the deepest ring (MAX_STAGES = 8 slots), far
///        more than the 3 laps (2 x 3 x 8 = 48 tiles in all) asked for; at one block per SM on
///        132 SMs each block still walks 15-16 tiles, so the 8-slot rings wrap there too.
inline const std::vector<std::uint64_t>& check_sizes() {
  static const std::vector<std::uint64_t> sizes = {
      4, 12, 4096 - 4, 3 * 4096 + 8, 5 * 4096 + 4, (1u << 20) + 4 * 7, 8u << 20};
  return sizes;
}

/// @brief Sets --size (bytes, a multiple of 4, default 1 GiB), the check sizes and the device
///        memory a run needs, for a chapter on this workload.
template <class P>
void set_sizes(tut::Chapter<P>& ch) {
  tut::set_buffer_sizes(ch, 4);  // bytes, multiples of one word, default 1 GiB
  ch.check_sizes = check_sizes();
}

}  // namespace tut::reversed_tiles
