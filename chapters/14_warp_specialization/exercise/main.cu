// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.
// Chapter 14 driver: the table at --intensity, then an intensity sweep that moves the kernel
// from copy-bound to compute-bound, for v0 and the 2- and 4-stage warp-specialized rings.
// The lesson is in kernels.cuh and README.md.
#include <cstdio>

#include "kernels.cuh"

namespace {

bool intensity_sweep(const tut::RunConfig& base, cudaStream_t stream,
                     const std::string& json_path) {
  const auto all = ch14::variants();
  std::printf("\nIntensity sweep (IMADs per word; GB/s = bytes read + written per second):\n");
  std::printf("%9s | %-28s | %10s | %10s | %s\n", "intensity", "variant", "median ms", "GB/s",
              "check");
  std::string json = "{\"chapter\": \"ch14_warp_specialization\", \"sweep\": [";
  bool ok = true, first_row = true;
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
      json += std::string(first_row ? "" : ",") + "\n  {\"intensity\": " +
              std::to_string(intensity) + ", \"variant\": \"" + v.key +
              "\", \"median_ms\": " + std::to_string(t.median_ms) + ", \"gbs\": " +
              std::to_string(rate) + ", \"passed\": " + (passed ? "true" : "false") + "}";
      first_row = false;
    }
  }
  json += "\n]}\n";
  ok = tut::write_sweep_json(json_path, json) && ok;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  tut::Chapter<ch14::Problem> ch;
  ch.id = "ch14_warp_specialization";
  ch.title = "Chapter 14: warp specialization (TMA producer warp, consumer warps, full/empty mbarriers)";
  ch.min_cc_major = 9;
  ch.min_cc_minor = 0;
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // One vector; a few; one short of a 16 KiB tile; tiles + ragged tail; > 1 MiB with a tail
  // (65 tiles: the one-block negative reuses every slot); 8 MiB (512 tiles, slots wrap often).
  ch.check_sizes = {16, 48, 16384 - 16, 3 * 16384 + 80, (1u << 20) + 16 * 7, 8u << 20};
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.extra_options = {
      {"intensity", "IMADs per word in the consumers (0 = pure copy)", 32, 0, 4096},
      {"blocks-per-sm", "resident blocks per SM (each: 1 producer + 4 consumer warps)", 1, 1, 8}};
  ch.variants = ch14::variants();
  ch.after_table = intensity_sweep;
  return tut::run_chapter(argc, argv, ch);
}
