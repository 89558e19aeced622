/// @file main.cu
/// @brief Chapter 14's program: warp specialization (a TMA producer warp, consumer warps,
///        full/empty mbarriers) against the Ampere-style roles with a cuda::pipeline.
///
/// What it does: streams a buffer of 32-bit words through the ring of each variant
/// (kernels.cuh), where consumer warps apply --intensity LCG steps to every word; checks every
/// word against the CPU reference; times each variant (the harness table, GB/s of words read +
/// written); then an intensity sweep moves the kernel from copy-bound to compute-bound for v0
/// and the 2- and 4-stage rings. Reading order: the CPU reference and the Problem, the variant
/// registry, the --timeline run, the sweep, main. The negatives are in broken.cuh.
/// Run:    build/bin/ch14_warp_specialization [--intensity=32] [--blocks-per-sm=1] [--size=1G]
/// Tests include this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "broken.cuh"
#include "common/bounded_wait.cuh"
#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/timeline.cuh"
#include "common/timeline_run.cuh"
#include "kernels.cuh"

namespace ch14 {

/// The deepest ring of any variant (v1 with 6 slots).
[[maybe_unused]] constexpr int DEEPEST_RING = 6;  // the tests check the lap check against it

/// The check sizes in bytes. One vector; a few; one short of a 16 KiB tile; tiles + a ragged
/// tail; 65 tiles (> 1 MiB with a tail: the one-block negative reuses every slot); 512 tiles.
/// The largest size is the one the harness's lap check runs with the grid capped at 2 blocks:
/// 256 tiles per block, 42 laps of the 6-slot ring (at least 3 are needed, 2 x 3 x 6 = 36
/// tiles in all), so a bug that shows only from the second lap on is caught by --check-only.
/// With a full grid on 132 SMs the same size gives a block at most 4 tiles: no lap at all.
inline std::vector<std::uint64_t> check_sizes() {
  return {16, 48, 16384 - 16, 3 * 16384 + 80, (1u << 20) + 16 * 7, 8u << 20};
}

/// n LCG steps compose to one affine map x -> a_n * x + c_n (mod 2^32).
inline std::vector<std::uint32_t> reference_lcg(const std::vector<std::uint32_t>& in,
                                                int intensity) {
  std::uint32_t a = 1u, c = 0u;          // the identity map
  for (int i = 0; i < intensity; ++i) {  // (x*a + c)*A + C = x*(a*A) + (c*A + C)
    a *= LCG_A;
    c = c * LCG_A + LCG_C;
  }
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) out[k] = in[k] * a + c;
  return out;
}

/// `size` bytes in, `size` bytes out, as 32-bit words. Bytes moved: 2 * size.
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg),
        n_words(cfg.size / 4),
        intensity(static_cast<int>(cfg.extra("intensity"))),
        d_in(n_words),
        d_out(n_words) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);  // an LCG step is a bijection:
    d_in.upload(h_in);                                       // unique in, unique out
  }
  void poison(cudaStream_t s) {
    d_out.poison(s);
    error.clear(s);
  }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    if (want.empty()) want = reference_lcg(h_in, intensity);
    return tut::compare_words_and_error(s, d_out, want, error);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const {
    return tut::format_bytes(double(cfg.size)) + " per buffer, intensity " +
           std::to_string(intensity) + " LCG steps per word";
  }

  WsArgs args() {
    return {reinterpret_cast<const uint4*>(d_in.data()), reinterpret_cast<uint4*>(d_out.data()),
            n_words / 4, intensity, error.data()};
  }
  int sms() const { return cfg.device.sm_count; }
  int blocks_per_sm() const { return tut::blocks_per_sm(cfg); }

  tut::RunConfig cfg;
  std::size_t n_words;
  int intensity;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  tut::ErrorWord error;
  std::vector<std::uint32_t> h_in, want;
};


template <int STAGES, int RING_OFFSET = 0>
void launch_v1(Problem& p, cudaStream_t s) {
  launch_ws_v1<STAGES, RING_OFFSET>(p.args(), p.sms(), p.blocks_per_sm(), s);
}

inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add(
      "v0_pipeline", "v0 cuda::pipeline 4-stage",
      "Ampere-style: producer warp's 32 lanes cp.async 16 B, block-scope pipeline",
      [](Problem& p, cudaStream_t s) { launch_ws_v0<4>(p.args(), p.sms(), p.blocks_per_sm(), s); });
  const std::string what = "1 producer warp (TMA 16 KiB bulk copies) + 4 consumer warps, ";
  v.add("v1_ws_s2", "v1 warp-spec TMA 2-stage", what + "2 slots", launch_v1<2>);
  v.add("v1_ws_s3", "v1 warp-spec TMA 3-stage", what + "3 slots", launch_v1<3>);
  v.add("v1_ws_s4", "v1 warp-spec TMA 4-stage", what + "4 slots", launch_v1<4>);
  v.add("v1_ws_s5", "v1 warp-spec TMA 5-stage", what + "5 slots", launch_v1<5>);
  v.add("v1_ws_s6", "v1 warp-spec TMA 6-stage", what + "6 slots", launch_v1<6>);
  v.add("v1_ws_s4_off16", "v1 TMA 4-stage, ring at +16 B",
        "v1 4-stage with the ring 16 bytes past a 128-byte boundary (alignment test)",
        launch_v1<4, 16>);
  add_negatives(v);
  return v.list;
}

// --timeline: v1 with 2 and with 4 slots, traced on a small problem (at most kTimelineBytes:
// 64 MiB is 31 tiles per block at 1 block per SM) for the blocks on SMs 0 and 1. Each traced
// run is checked like any other run.
constexpr std::uint64_t kTimelineBytes = 64u << 20;

// One traced run of v1 with STAGES slots, described by `kt` (its lanes: the producer warp,
// then the consumer warps).
template <int STAGES>
bool trace_v1(Problem& p, cudaStream_t s, tut::KernelTrace kt, std::vector<tut::KernelTrace>& out) {
  tut::TraceRecorder rec(
      {ws_v1_grid<STAGES, 0, tut::TraceOn>(p.sms(), p.blocks_per_sm()), 1 + CONSUMER_WARPS, 256});
  return tut::trace_checked_run(p, 0, s, rec, std::move(kt), out, [&](cudaStream_t st, auto trace) {
    launch_ws_v1<STAGES>(p.args(), p.sms(), p.blocks_per_sm(), st, trace);
  });
}

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  Problem p(tut::timeline_config(run, kTimelineBytes));
  std::vector<std::string> lanes = {"producer (warp 0)"};
  for (int w = 1; w <= CONSUMER_WARPS; ++w) lanes.push_back("consumer warp " + std::to_string(w));
  std::vector<tut::KernelTrace> traces;
  bool ok = trace_v1<2>(p, s, {"v1_ws_s2", "v1 warp-spec TMA 2-stage", lanes, {}}, traces);
  ok = trace_v1<4>(p, s, {"v1_ws_s4", "v1 warp-spec TMA 4-stage", lanes, {}}, traces) && ok;
  const std::string flags = " --intensity=" + std::to_string(p.intensity) +
                            " --blocks-per-sm=" + std::to_string(p.blocks_per_sm());
  return tut::write_chapter_timeline(path, traces, p.cfg, "ch14_warp_specialization", flags) && ok;
}

inline bool intensity_sweep(const tut::RunConfig& base, cudaStream_t stream,
                            const std::string& json_path) {
  const auto all = variants();
  std::printf("\nIntensity sweep (LCG steps per word; GB/s = bytes read + written per second):\n");
  std::printf("%9s | %-28s | %10s | %10s | %s\n", "intensity", "variant", "median ms", "GB/s",
              "check");
  tut::SweepJson json("ch14_warp_specialization");
  json.array("sweep");
  bool ok = true;
  for (int intensity : {0, 8, 32, 128, 512}) {
    tut::RunConfig cfg = base;
    cfg.extras["intensity"] = intensity;
    Problem p(cfg);
    for (const auto& v : all) {
      if (v.key != "v0_pipeline" && v.key != "v1_ws_s2" && v.key != "v1_ws_s4") continue;
      const bool passed = tut::run_and_verify(p, v, stream).ok();
      ok = ok && passed;
      const tut::Timing t = tut::time_variant(p, v, stream, 2, 10);
      const double rate = tut::rate_per_second_1e9(p.work(), t.median_ms);
      std::printf("%9d | %-28s | %10.3f | %10.1f | %s\n", intensity, v.name.c_str(), t.median_ms,
                  rate, passed ? "PASS" : "FAIL");
      json.add(tut::SweepRow()
                   .integer("intensity", intensity)
                   .text("variant", v.key)
                   .num("median_ms", t.median_ms)
                   .num("gbs", rate)
                   .passed(passed));
    }
  }
  return tut::write_sweep_json(json_path, json.str()) && ok;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The point (the tour's pair): the warp-specialized TMA ring against the Ampere-style roles,
// both at the default 1 block/SM, where only the copies in flight can hide the latency.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch14_warp_specialization", variants(), "v1_ws_s4", "v0_pipeline",
      "Chapter 14: warp specialization (TMA producer warp, consumer warps, full/empty mbarriers)");
  ch.min_cc_major = 9;
  tut::set_buffer_sizes(ch);  // bytes per buffer, a multiple of 16, default 1 GiB
  // Why these sizes (and how the largest gives the lap check 42 laps of the deepest ring):
  // the comment on check_sizes() above.
  ch.check_sizes = check_sizes();
  ch.extra_options = {
      {"intensity",
       "LCG steps per word in the consumers (0 = pure copy; nvcc fuses two into one IMAD)", 32, 0,
       4096},
      tut::blocks_per_sm_option("resident blocks per SM (each: 1 producer + 4 consumer warps)", 8)};
  ch.after_table = intensity_sweep;
  ch.timeline = record_timeline;  // --timeline: v1 at 2 and 4 slots traced (above)
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch14::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
