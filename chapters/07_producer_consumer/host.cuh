// Chapter 07, host side: the Problem (buffers, CPU reference, check), the variant registry and
// the chapter's size settings. The lesson's device code is in kernels.cuh.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/shared_scrub.cuh"
#include "common/timeline.cuh"
#include "kernels.cuh"

namespace ch07 {

inline std::vector<float> reference_stencil(const std::vector<float>& in) {
  const std::size_t n = in.size();
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    float sum = 0.0f;  // 15 terms on a 2^-10 grid below 512 in magnitude: exact in fp32
    for (int k = -RADIUS; k <= RADIUS; ++k) {
      const long long j = static_cast<long long>(i) + k;
      sum += j >= 0 && j < static_cast<long long>(n) ? in[static_cast<std::size_t>(j)] : 0.0f;
    }
    out[i] = sum;
  }
  return out;
}

/// One input and one output buffer of `size` bytes (floats).
struct Problem {
  explicit Problem(const tut::RunConfig& cfg) : cfg(cfg), n(cfg.size / 4), d_in(n), d_out(n) {
    h_in.resize(n);
    tut::fill_unique_exact_floats(h_in.data(), n, cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    const std::vector<float> got = d_out.download(s);
    if (want.empty()) want = reference_stencil(h_in);
    return tut::compare_exact_floats(got.data(), want.data(), n);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }
  int sms() const { return cfg.device.sm_count; }
  int blocks_per_sm() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }

  tut::RunConfig cfg;
  std::size_t n;
  tut::DeviceBuffer<float> d_in, d_out;
  std::vector<float> h_in, want;
};

/// The ratio sweep at 256 threads per block, --blocks-per-sm blocks per SM. "Slots" is the
/// ring size (STAGES); at the wait for a tile, v0 has STAGES-1 tiles in flight, v1 up to STAGES.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  auto launcher = [](Launch launch) {
    return [launch](Problem& p, cudaStream_t s) {
      launch(p.d_in.data(), p.d_out.data(), p.n, p.sms(), p.blocks_per_sm(), s);
    };
  };
  v.add("v0_unified_s4", "v0 unified 8 warps, 4 slots",
        "thread-scope cuda::pipeline, every thread copies and computes; 3 tiles in flight",
        launcher(launch_stencil_v0<4>));
  v.add("v0_unified_s8", "v0 unified 8 warps, 8 slots", "the same, 8 slots: 7 tiles in flight",
        launcher(launch_stencil_v0<8>));
  v.add("v1_split_p1c7_s4", "v1 split 1P:7C, 4 slots",
        "block-scope cuda::pipeline: 1 producer warp, 7 consumer warps; up to 4 tiles in flight",
        launcher(launch_stencil_v1<4, 32>));
  v.add("v1_split_p2c6_s4", "v1 split 2P:6C, 4 slots", "2 producer warps, 6 consumer warps",
        launcher(launch_stencil_v1<4, 64>));
  v.add("v1_split_p4c4_s4", "v1 split 4P:4C, 4 slots", "4 producer warps, 4 consumer warps",
        launcher(launch_stencil_v1<4, 128>));
  v.add("v1_split_p6c2_s4", "v1 split 6P:2C, 4 slots", "6 producer warps, 2 consumer warps",
        launcher(launch_stencil_v1<4, 192>));
  v.add("v1_split_p2c6_s8", "v1 split 2P:6C, 8 slots",
        "2 producer warps, 6 consumer warps, 8 slots: up to 8 tiles in flight",
        launcher(launch_stencil_v1<8, 64>));
  v.add("v9_thread_scope", "v9 BROKEN: thread-scope hand-over",
        "negative: consumers wait on their own (empty) commit groups; must FAIL",
        launcher(launch_stencil_v9))
      .negative = true;
  return v.list;
}

// Check sizes: 4 floats (smaller than the stencil); 12 floats; a tile less 4 floats; tiles plus
// a ragged tail; 1 MiB plus 28 floats; 8 MiB. The lap check runs the largest, 8 MiB = 2048
// tiles of 4 KiB, on 2 blocks: 1024 tiles each, 128 laps of the deepest (8-slot) ring.
inline const std::vector<std::uint64_t> kCheckSizes = {16, 48, 4096 - 16, 3 * 4096 + 80,
                                                        (1u << 20) + 112, 8u << 20};
constexpr int kDeepestRing = 8;  // slots of the deepest ring among the variants

// --timeline: the 2-producer-warp split with 4 and with 8 slots, traced on a small problem
// (at most kTimelineBytes; 32 MiB is 62 tiles per block at 1 block per SM): the blocks on SMs 0
// and 1, the first tiles of each. Each traced run is checked like any other run.
constexpr std::uint64_t kTimelineBytes = 32u << 20;
constexpr std::uint32_t kTimelineCapacity = 512;  // events per lane: ~100 tiles of a consumer

template <int STAGES, int PRODUCERS>
bool trace_split(Problem& p, cudaStream_t s, const char* key, const char* title,
                 std::vector<tut::KernelTrace>& out) {
  constexpr std::uint32_t lanes = 1 + (THREADS - PRODUCERS) / 32;
  const unsigned grid = grid_stencil_v1_traced<STAGES, PRODUCERS>(p.sms(), p.blocks_per_sm());
  tut::TraceRecorder rec({grid, lanes, kTimelineCapacity});
  rec.clear(s);
  p.poison(s);
  tut::scrub_shared_memory(s);
  launch_stencil_v1_traced<STAGES, PRODUCERS>(p.d_in.data(), p.d_out.data(), p.n, grid,
                                              rec.arg(), s);
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(s));
  const tut::VerifyResult r = p.verify(s, 0);
  if (!r.ok()) {
    std::printf("[%s] traced run: %s\n%s", key, r.summary().c_str(), r.details().c_str());
    return false;
  }
  tut::KernelTrace kt{key, title, {"producer warps (thread 0)"}, rec.download(s)};
  for (std::uint32_t w = 1; w < lanes; ++w)
    kt.lane_names.push_back("consumer warp " + std::to_string(w - 1));
  // What tracing costs: the same launch untraced and traced, median of 20 each.
  tut::measure_trace_overhead(
      kt, s, 3, 20,
      [&](cudaStream_t st) {
        launch_stencil_v1<STAGES, PRODUCERS>(p.d_in.data(), p.d_out.data(), p.n, p.sms(),
                                             p.blocks_per_sm(), st);
      },
      [&](cudaStream_t st) {
        launch_stencil_v1_traced<STAGES, PRODUCERS>(p.d_in.data(), p.d_out.data(), p.n, grid,
                                                    rec.arg(), st);
      });
  out.push_back(std::move(kt));
  return true;
}

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  tut::RunConfig cfg = run;
  cfg.size = std::min<std::uint64_t>(run.size, kTimelineBytes);
  Problem p(cfg);
  std::vector<tut::KernelTrace> kernels;
  bool ok = trace_split<4, 64>(p, s, "v1_split_p2c6_s4", "v1 split 2P:6C, 4 slots", kernels);
  ok = trace_split<8, 64>(p, s, "v1_split_p2c6_s8", "v1 split 2P:6C, 8 slots", kernels) && ok;
  const std::string command = "ch07_producer_consumer --timeline=" + path + " --size=" +
                              std::to_string(cfg.size) + " --blocks-per-sm=" +
                              std::to_string(p.blocks_per_sm());
  return tut::write_timeline(path, kernels, {"ch07_producer_consumer", cfg.device.name, command}) &&
         ok;
}

inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch;
  ch.id = "ch07_producer_consumer";
  ch.title = "Chapter 07: producer/consumer warps through a block-scope cuda::pipeline";
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  ch.check_sizes = kCheckSizes;
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.extra_options = {{"blocks-per-sm", "blocks per SM for every variant", 1, 1, 32}};
  ch.variants = variants();
  // The chapter's point at 1 block/SM: the split that wins (2 producer warps, 8 slots) against
  // the unified pipeline with the same ring.
  ch.tour_lesson = "v1_split_p2c6_s8";
  ch.tour_baseline = "v0_unified_s8";
  ch.timeline = record_timeline;
  return ch;
}

}  // namespace ch07
