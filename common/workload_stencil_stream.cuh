/// @file workload_stencil_stream.cuh
/// @brief The two workloads of chapters 01-03: a radius-3 box stencil and a tile-reversal
///        stream. Their shapes, CPU references, the Problem the harness drives, and the size
///        rules (host side; the one device helper is stream_tile_count()). Later chapters reuse
///        pieces: the stencil reference (07), the tile-reversal reference (08) and the stream
///        Problem (11).
///
/// Chapters 01, 02 and 03 run the same two workloads over the same buffers, so that their rows
/// compare like with like:
///   - the stencil: out[i] = in[i-3] + ... + in[i+3], elements outside the array count as zero;
///     a block stages a tile of kStencilTileElems outputs plus kRadius halo elements each side;
///   - the stream: every tile of kStreamTileVecs float4 (4 KiB) is written out in reverse
///     16-byte order, the last partial tile within itself, so every byte crosses shared memory
///     and crosses from one warp to another.
/// Each chapter keeps its kernels in its own kernels.cuh; this header holds what does not
/// change between them.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "device_buffer.cuh"
#include "harness.cuh"

namespace tut::stencil_stream {

/// @brief Stencil radius: out[i] sums in[i - kRadius .. i + kRadius].
inline constexpr int kRadius = 3;
/// @brief Stencil outputs per tile (one per thread of a 256-thread block).
inline constexpr int kStencilTileElems = 256;
/// @brief float4 per stream tile (one per thread of a 256-thread block): 4 KiB.
inline constexpr int kStreamTileVecs = 256;

/// @brief float4 in the stream tile that starts at float4 @p base: kStreamTileVecs, or fewer
///        for the last tile of an array of @p n_vecs float4.
__host__ __device__ inline int stream_tile_count(std::size_t n_vecs, std::size_t base) {
  const std::size_t left = n_vecs - base;
  return static_cast<int>(left < kStreamTileVecs ? left : kStreamTileVecs);
}

/// @brief Stream tiles in a buffer of @p bytes (host arithmetic for the lap-count tests).
inline std::size_t stream_tiles(std::uint64_t bytes) {
  const std::size_t n_vecs = bytes / 16;
  return (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
}

/// @brief Stencil tiles in a buffer of @p bytes.
inline std::size_t stencil_tiles(std::uint64_t bytes) {
  const std::size_t n = bytes / 4;
  return (n + kStencilTileElems - 1) / kStencilTileElems;
}

/// @brief CPU reference of the stencil: out[i] = sum of in[i-radius .. i+radius], elements
///        outside the array counting as zero.
/// @note  The inputs come from tut::fill_unique_exact_floats, whose values are chosen so that
///        sums of up to 16 of them are exact in fp32 in any order: the GPU's sums (7 terms)
///        must match bit for bit.
inline std::vector<float> reference_stencil(const std::vector<float>& in, int radius) {
  const std::size_t n = in.size();
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    float sum = 0.0f;
    for (int k = -radius; k <= radius; ++k) {
      const long long j = static_cast<long long>(i) + k;
      if (j >= 0 && j < static_cast<long long>(n)) sum += in[static_cast<std::size_t>(j)];
    }
    out[i] = sum;
  }
  return out;
}

/// @brief CPU reference of the stream: each @p tile_vecs -float4 tile reversed in 16-byte
///        units (the last, partial tile within itself), on 32-bit words.
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

/// @brief Which CPU reference a variant's output must match (tut::Variant::reference).
enum Reference : int { kStencil = 0, kReverseTiles = 1 };

/// @brief One input and one output buffer of `size` bytes, seen as floats (stencil) or float4
///        (stream). Bytes moved = size read + size written.
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words) {
    // Exact floats (tut::fill_unique_exact_floats): the stencil's sums are exact in fp32. The
    // values are distinct within every aligned window of 2^20 elements (4 MiB), and each
    // window is a different permutation of the same 2^20 values (fill.hpp), so for any
    // distance only about one element in 2^20 equals the one that far away: a float4 that
    // lands in the wrong place fails the bit-exact check on nearly every element.
    h_in.resize(n_words);
    tut::fill_unique_exact_floats(h_in.data(), n_words, cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    const std::vector<float> got = d_out.download(s);
    if (reference == kStencil) {
      if (want_stencil.empty()) want_stencil = reference_stencil(h_in, kRadius);
      return tut::compare_exact_floats(got.data(), want_stencil.data(), n_words);
    }
    if (want_reversed.empty()) {
      std::vector<std::uint32_t> in_words(n_words);
      std::memcpy(in_words.data(), h_in.data(), cfg.size);
      want_reversed = reference_reverse_tiles(in_words, kStreamTileVecs);
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
  /// @brief Blocks per SM of the "_low" rows: the chapter option --blocks-per-sm.
  int blocks_per_sm() const { return tut::blocks_per_sm(cfg); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<float> d_in, d_out;
  std::vector<float> h_in, want_stencil;
  std::vector<std::uint32_t> want_reversed;
};

/// @brief The largest check size of chapters 01-03: 8 MiB per buffer.
/// @details 8 MiB is 2048 stream tiles and 8192 stencil tiles. In the harness's lap check
///          (the grid capped at 2 blocks) each block walks 1024 stream tiles: the deepest
///          tile ring of these chapters (2 buffers, chapter 03's v3) wraps around 512 times,
///          far more than the 3 laps a second-lap bug needs to show. With a full grid on 132
///          SMs (up to 8 blocks per SM) most blocks still get 2 stream tiles, so a buffer is
///          refilled at least once even outside the lap check.
inline constexpr std::uint64_t kLargestCheckSize = std::uint64_t{8} << 20;

/// @brief The workload's part of a chapter description: --size rules, check sizes, the
///        --blocks-per-sm option that Problem::blocks_per_sm() reads, and the GPU memory
///        a run needs.
template <class P>
void set_sizes(tut::Chapter<P>& ch) {
  tut::set_buffer_sizes(ch);  // bytes, multiples of 16 (one float4), default 1 GiB
  // One float4; 3 float4 (shorter than the 7-wide stencil window); one short of a tile;
  // 3 tiles and a ragged tail; just over 1 MiB; and kLargestCheckSize (see there: it gives
  // every block of the lap check hundreds of laps of every ring in these chapters).
  ch.check_sizes = {16, 48, 1008, 4096 - 16, 3 * 4096 + 80, (1u << 20) + 16 * 7,
                    kLargestCheckSize};
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM for the *_low variants")};
}

}  // namespace tut::stencil_stream
