// The stencil + tile-reversal workload of chapters 01-03: CPU references and the Problem.
//
// Chapters 01, 02 and 03 run the same two workloads over the same buffers, so that their rows
// compare like with like: a 1D box stencil of radius RADIUS, and a stream that writes every
// tile of STREAM_TILE_VECS float4 out in reverse order. What does not change between them lives
// here: the CPU references, the Problem the harness drives (buffers, fill, poison, verify) and
// the --size rules and check sizes. The kernels stay in each chapter's kernels.cuh, which
// includes this header by its root-relative path (so the exercise copies find it too) and
// instantiates the Problem at its own RADIUS and STREAM_TILE_VECS:
//   using Problem = ch01::StencilStreamProblem<RADIUS, STREAM_TILE_VECS>;
// Host code only: nothing here reaches the PTX.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch01 {

// ---------------------------------------------------------------------------------------------
// CPU references
// ---------------------------------------------------------------------------------------------
/// out[i] = sum of in[i-radius .. i+radius]; elements outside the array count as zero.
inline std::vector<float> reference_stencil(const std::vector<float>& in, int radius) {
  const std::size_t n = in.size();
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    float sum = 0.0f;  // inputs are multiples of 2^-10 below 512: every partial sum is exact
    for (int k = -radius; k <= radius; ++k) {
      const long long j = static_cast<long long>(i) + k;
      if (j >= 0 && j < static_cast<long long>(n)) sum += in[static_cast<std::size_t>(j)];
    }
    out[i] = sum;
  }
  return out;
}

/// Reverse each `tile_vecs`-float4 tile (the last, partial tile within itself), as 32-bit words.
inline std::vector<std::uint32_t> reference_reverse_tiles(const std::vector<std::uint32_t>& in,
                                                          std::size_t tile_vecs) {
  const std::size_t n_vecs = in.size() / 4;
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t base = 0; base < n_vecs; base += tile_vecs) {
    const std::size_t count = std::min<std::size_t>(tile_vecs, n_vecs - base);
    for (std::size_t t = 0; t < count; ++t)
      for (int w = 0; w < 4; ++w) out[(base + t) * 4 + w] = in[(base + count - 1 - t) * 4 + w];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: one input and one output buffer of `size` bytes, seen as floats (stencil) or
// float4 (stream). Bytes moved = size read + size written.
// ---------------------------------------------------------------------------------------------
enum Reference : int { kStencil = 0, kReverseTiles = 1 };

template <int RADIUS, int STREAM_TILE_VECS>
struct StencilStreamProblem {
  explicit StencilStreamProblem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words) {
    // Stencil and stream share the input. Its words are exact, unique-per-2^20 floats (so the
    // stencil sums are exact) - also unique bit patterns within each 4 MiB, enough for the copy.
    h_in.resize(n_words);
    tut::fill_unique_exact_floats(h_in.data(), n_words, cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    const std::vector<float> got = d_out.download(s);
    if (reference == kStencil) {
      if (want_stencil.empty()) want_stencil = reference_stencil(h_in, RADIUS);
      return tut::compare_exact_floats(got.data(), want_stencil.data(), n_words);
    }
    if (want_reversed.empty()) {
      std::vector<std::uint32_t> in_words(n_words);
      std::memcpy(in_words.data(), h_in.data(), cfg.size);
      want_reversed = reference_reverse_tiles(in_words, STREAM_TILE_VECS);
    }
    return tut::compare_exact_words(reinterpret_cast<const std::uint32_t*>(got.data()),
                                    want_reversed.data(), n_words);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }

  const float4* in_vecs() const { return reinterpret_cast<const float4*>(d_in.data()); }
  float4* out_vecs() { return reinterpret_cast<float4*>(d_out.data()); }
  std::size_t n_vecs() const { return n_words / 4; }
  int sms() const { return cfg.device.sm_count; }
  int low_blocks_per_sm() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<float> d_in, d_out;
  std::vector<float> h_in, want_stencil;
  std::vector<std::uint32_t> want_reversed;
};

/// @brief The workload's part of a chapter description: --size rules, check sizes, the
///        --blocks-per-sm option that StencilStreamProblem::low_blocks_per_sm() reads, and the
///        GPU memory a run needs.
template <class Problem>
void set_workload_sizes(tut::Chapter<Problem>& ch) {
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // Tiny (one float4, then 3 float4: shorter than the halo span), one short of a tile, tiles
  // plus a ragged tail, just over 1 MiB, and 8 MiB (the persistent grid loops many times).
  ch.check_sizes = {16, 48, 1008, 4096 - 16, 3 * 4096 + 80, (1u << 20) + 16 * 7, 8u << 20};
  ch.extra_options = {{"blocks-per-sm", "blocks per SM for the *_low variants", 1, 1, 32}};
  // input + output, plus the same again for the memcpy ceiling measured beside them
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
}

}  // namespace ch01
