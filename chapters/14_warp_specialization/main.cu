// Chapter 14 driver: the table at --intensity, then an intensity sweep that moves the kernel
// from copy-bound to compute-bound, for v0 and the 2- and 4-stage warp-specialized rings.
// The lesson is in kernels.cuh and README.md.
// Run:    build/bin/ch14_warp_specialization [--intensity=32] [--blocks-per-sm=1] [--size=1G]
// Output: the harness table (GB/s of words read + written), then the intensity sweep, each
//         configuration checked before it is timed.
#include <cstdio>

#include "host.cuh"

namespace {

bool intensity_sweep(const tut::RunConfig& base, cudaStream_t stream,
                     const std::string& json_path) {
  const auto all = ch14::variants();
  std::printf("\nIntensity sweep (LCG steps per word; GB/s = bytes read + written per second):\n");
  std::printf("%9s | %-28s | %10s | %10s | %s\n", "intensity", "variant", "median ms", "GB/s",
              "check");
  tut::SweepJson json("ch14_warp_specialization");
  json.array("sweep");
  bool ok = true;
  for (int intensity : {0, 8, 32, 128, 512}) {
    tut::RunConfig cfg = base;
    cfg.extras["intensity"] = intensity;
    ch14::Problem p(cfg);
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

}  // namespace

int main(int argc, char** argv) {
  tut::Chapter<ch14::Problem> ch;
  ch.id = "ch14_warp_specialization";
  ch.title =
      "Chapter 14: warp specialization (TMA producer warp, consumer warps, full/empty mbarriers)";
  ch.min_cc_major = 9;
  ch.min_cc_minor = 0;
  tut::set_buffer_sizes(ch);  // bytes per buffer, a multiple of 16, default 1 GiB
  // Why these sizes (and how the largest gives the lap check 42 laps of the deepest ring):
  // the comment on ch14::check_sizes() in host.cuh.
  ch.check_sizes = ch14::check_sizes();
  ch.extra_options = {
      {"intensity",
       "LCG steps per word in the consumers (0 = pure copy; nvcc fuses two into one IMAD)", 32, 0,
       4096},
      tut::blocks_per_sm_option("resident blocks per SM (each: 1 producer + 4 consumer warps)", 8)};
  ch.variants = ch14::variants();
  ch.after_table = intensity_sweep;
  // The point: the warp-specialized TMA ring against the Ampere-style roles, both at the
  // default 1 block/SM, where only the copies in flight can hide the latency.
  ch.tour_lesson = "v1_ws_s4";
  ch.tour_baseline = "v0_pipeline";
  ch.timeline = ch14::record_timeline;  // --timeline: v1 at 2 and 4 slots traced (host.cuh)
  return tut::run_chapter(argc, argv, ch);
}
