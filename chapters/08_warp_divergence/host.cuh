// Chapter 08, host side: the Problem (buffers, CPU reference, check), the variant registry and
// the chapter's size settings. The lesson's device code is in kernels.cuh.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "kernels.cuh"

namespace ch08 {

/// Reverse every 32-chunk (512 B) slice; the last, partial slice within itself.
inline std::vector<std::uint32_t> reference_reverse_slices(const std::vector<std::uint32_t>& in) {
  const std::size_t n_chunks = in.size() / 4;
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t base = 0; base < n_chunks; base += SLICE_CHUNKS) {
    const int m = slice_count(n_chunks, base);
    for (int l = 0; l < m; ++l)
      for (int w = 0; w < 4; ++w) out[(base + l) * 4 + w] = in[(base + m - 1 - l) * 4 + w];
  }
  return out;
}

/// One input and one output buffer of `size` bytes (16-byte chunks).
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(cfg.size / 16), d_out(cfg.size / 16) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    std::vector<Chunk> chunks(n_words / 4);
    std::memcpy(chunks.data(), h_in.data(), cfg.size);
    d_in.upload(chunks);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int) {
    const std::vector<Chunk> got = d_out.download(s);
    if (want.empty()) want = reference_reverse_slices(h_in);
    return tut::compare_exact_words(reinterpret_cast<const std::uint32_t*>(got.data()),
                                    want.data(), n_words);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }
  std::size_t n_chunks() const { return n_words / 4; }
  int sms() const { return cfg.device.sm_count; }
  int low_blocks_per_sm() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<Chunk> d_in, d_out;
  std::vector<std::uint32_t> h_in, want;
};

using Launcher = void (*)(const Chunk*, Chunk*, std::size_t, int, int, cudaStream_t);

inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  // Full occupancy, or --blocks-per-sm blocks per SM for the *_low rows.
  auto launcher = [](Launcher launch, bool low_occupancy) {
    return [launch, low_occupancy](Problem& p, cudaStream_t s) {
      launch(p.d_in.data(), p.d_out.data(), p.n_chunks(), p.sms(),
             low_occupancy ? p.low_blocks_per_sm() : 0, s);
    };
  };
  v.add("v0_converged", "v0 converged, full occ",
        "every lane copies its own 16 B chunk: 1 LDGSTS x 32 lanes per slice",
        launcher(launch_slice_v0, false));
  v.add("v0_converged_low", "v0 converged, low occ",
        "the same at --blocks-per-sm blocks per SM (default 1)", launcher(launch_slice_v0, true));
  v.add("v1_divergent", "v1 divergent, full occ",
        "lane%16<8 copy two chunks each, all lanes commit: 2 LDGSTS x 16 lanes",
        launcher(launch_slice_v1, false));
  v.add("v1_divergent_low", "v1 divergent, low occ", "the same at --blocks-per-sm blocks per SM",
        launcher(launch_slice_v1, true));
  v.add("v2_syncwarp", "v2 divergent + __syncwarp",
        "v1 with __syncwarp(0x00FF00FF) before and after the copies",
        launcher(launch_slice_v2, false));
  v.add("v3_sized", "v3 sized, no branch", "every lane calls memcpy_async; idle lanes ask for 0 bytes",
        launcher(launch_slice_v3, false));
  v.add("v4_zfill", "v4 converged zero-fill",
        "every lane issues cp.async; tail lanes use src-size 0 (zero fill)",
        launcher(launch_slice_v4, false));
  v.add("v4_zfill_low", "v4 converged zero-fill, low occ",
        "the same at --blocks-per-sm blocks per SM", launcher(launch_slice_v4, true));
  v.add("v9_half_only", "v9 BROKEN: half the lanes copy",
        "negative: only lanes with lane%16<8 copy, each its own chunk; half of each slice is "
        "never staged",
        launcher(launch_slice_v9, false))
      .negative = true;
  return v.list;
}

// Check sizes: one chunk, 3 chunks, a slice short of 2 (63 chunks), a tile short of one chunk,
// tiles plus a ragged slice, a few MiB. The lap check runs the largest, 8 MiB = 2048 tiles of
// 4 KiB, on 2 blocks: 1024 tiles each, 256 laps of the 4-slot ring (the full-occupancy rows
// never refill a slot at the other check sizes).
inline const std::vector<std::uint64_t> kCheckSizes = {
    16, 48, 1008, 4096 - 16, 5 * 4096 + 16 * 45, (1u << 20) + 16 * 7, 8u << 20};

inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch;
  ch.id = "ch08_warp_divergence";
  ch.title = "Chapter 08: warp divergence around memcpy_async (per-thread commit groups)";
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  ch.check_sizes = kCheckSizes;
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.extra_options = {{"blocks-per-sm", "blocks per SM for the *_low variants", 1, 1, 32}};
  ch.variants = variants();
  // The regime where the extra LDGSTS of divergent issue could show: one block per SM.
  ch.tour_lesson = "v1_divergent_low";
  ch.tour_baseline = "v0_converged_low";
  return ch;
}

}  // namespace ch08
