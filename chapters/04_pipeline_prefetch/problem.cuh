/// @file problem.cuh
/// @brief Chapter 04's Problem (one input and one output buffer of uint4, the common
///        reversed-tiles buffers), its CPU reference (each tile reversed, then `rounds` rounds
///        of work_word on every word) and the check sizes. main.cu, sweep.cuh, broken.cuh and
///        the chapter's tests include it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/harness.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "kernels.cuh"

namespace ch04 {

// ---------------------------------------------------------------------------------------------
// CPU reference: each 256-uint4 tile reversed (the last, partial tile within itself), then
// `rounds` of work_word on every word.
// ---------------------------------------------------------------------------------------------
// `rounds` steps of x -> a*x + c (mod 2^32) are one affine map x -> A*x + C, so the reference
// composes them once and applies one multiply-add per word, at any --rounds. (The compiler composes
// four rounds at a time into one IMAD in the kernel: see the README's SASS section.)
struct Affine {
  std::uint32_t a = 1, c = 0;
};
inline Affine compose_rounds(int rounds) {
  Affine m;
  for (int r = 0; r < rounds; ++r) m = Affine{m.a * 1664525u, m.c * 1664525u + 1013904223u};
  return m;
}

inline std::vector<std::uint32_t> reference_reverse_tiles(const std::vector<std::uint32_t>& in,
                                                          int rounds) {
  const Affine m = compose_rounds(rounds);
  const std::size_t n_vecs = in.size() / 4;
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t base = 0; base < n_vecs; base += TILE_VECS) {
    const std::size_t count = std::min<std::size_t>(TILE_VECS, n_vecs - base);
    for (std::size_t t = 0; t < count; ++t)
      for (int w = 0; w < 4; ++w)
        out[(base + t) * 4 + w] = m.a * in[(base + count - 1 - t) * 4 + w] + m.c;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: one input and one output buffer of `size` bytes, read as uint4. The buffers and
// their unique words are the common Problem's (common/workload_reversed_tiles.cuh); the check
// is this chapter's reference.
// ---------------------------------------------------------------------------------------------
enum Reference : int { kCopy = 0, kWork = 1 };  // plain reversal; reversal + `rounds` of work

struct Problem : tut::reversed_tiles::Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : tut::reversed_tiles::Problem(cfg), rounds(static_cast<int>(cfg.extra("rounds"))) {}
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    const std::vector<std::uint32_t> got = d_out.download(s);
    const int r = reference == kCopy ? 0 : rounds;
    if (want.empty() || want_rounds != r) {  // one reference at a time (the sweep varies rounds)
      want = reference_reverse_tiles(h_in, r);
      want_rounds = r;
    }
    return tut::compare_exact_words(got.data(), want.data(), n_words);
  }
  const uint4* in_vecs() const { return reinterpret_cast<const uint4*>(d_in.data()); }
  uint4* out_vecs() { return reinterpret_cast<uint4*>(d_out.data()); }
  std::size_t n_vecs() const { return n_words / 4; }

  int rounds;  // the compute step's rounds for kWork variants (--rounds; the sweep sets it)
  int want_rounds = -1;
};

// ---------------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------------
// Tiny (one uint4), 3 uint4, one short of a tile, tiles plus a ragged tail, just over 1 MiB,
// and 8 MiB. The largest is for the rings: 8 MiB = 2048 tiles of 4 KiB; in the harness's lap
// check (2 blocks) each block walks 1024 tiles, 64 laps of the deepest (16-slot) ring and far
// more than the 3 laps (2 x 3 x 16 = 96 tiles in all) the lap check asks for; at 1 block per SM
// on 132 SMs each block still walks 15-16 tiles, so the 4-slot rings wrap there too.
inline const std::vector<std::uint64_t>& check_sizes() {
  static const std::vector<std::uint64_t> sizes = {16, 48, 4096 - 16, 3 * 4096 + 80,
                                                   (1u << 20) + 16 * 7, 8u << 20};
  return sizes;
}

}  // namespace ch04
