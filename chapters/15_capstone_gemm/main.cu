// Chapter 15 driver: the GEMM table at --size (default 4096), then a size sweep 1024..8192
// that reports GFLOP/s, % of cuBLAS and the speed-up of each step over the previous one.
// The lesson is in kernels.cuh and README.md.
// Run:    build/bin/ch15_capstone_gemm [--size=4096] [--variant=v4_cp_async,cublas] [--list]
// Output: the harness table in GFLOP/s with % of cuBLAS, then the size sweep 1024..8192
//         (written beside --json as <json>.sweep.json), each configuration checked first.
#include <cstdio>

#include "host.cuh"

namespace {

// Every non-negative variant at 1024, 2048, 4096 and 8192, each checked against cuBLAS (its
// result computed once per size), then timed. Returns false if any check failed.
bool size_sweep(const tut::RunConfig& base, cudaStream_t stream, const std::string& json_path) {
  const auto all = ch15::variants();
  std::printf("\nSize sweep (M = N = K; GFLOP/s = 2*M*N*K / time; checked against cuBLAS):\n");
  std::printf("%6s | %-32s | %10s | %10s | %9s | %8s | %s\n", "size", "variant", "median ms",
              "GFLOP/s", "% cuBLAS", "vs prev", "check");
  std::string json = "{\"chapter\": \"ch15_capstone_gemm\", \"sweep\": [";
  bool ok = true, first_row = true;
  for (int n : {1024, 2048, 4096, 8192}) {
    tut::RunConfig cfg = base;
    cfg.size = static_cast<std::uint64_t>(n);
    ch15::Problem p(cfg);
    const int repeats = n >= 8192 ? 5 : 10;
    std::vector<double> rates(all.size(), 0.0);
    double cublas_rate = 0.0;
    for (std::size_t i = 0; i < all.size(); ++i) {  // cuBLAS first, for the % column
      if (!all[i].is_ceiling) continue;
      const tut::Timing t = tut::time_variant(p, all[i], stream, 2, repeats);
      cublas_rate = tut::rate_per_second_1e9(p.work(), t.median_ms);
    }
    double prev_rate = 0.0;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const auto& v = all[i];
      if (v.negative || v.min_cc > base.device.cc_major * 10 + base.device.cc_minor) continue;
      const bool passed = tut::run_and_verify(p, v, stream).ok();
      ok = ok && passed;
      const tut::Timing t = tut::time_variant(p, v, stream, 2, repeats);
      const double rate = tut::rate_per_second_1e9(p.work(), t.median_ms);
      const double vs_prev = prev_rate > 0 && !v.is_ceiling ? rate / prev_rate : 0.0;
      std::printf("%6d | %-32s | %10.3f | %10.1f | %8.1f%% | %7.2fx | %s\n", n, v.name.c_str(),
                  t.median_ms, rate, 100.0 * rate / cublas_rate, vs_prev, passed ? "PASS" : "FAIL");
      json += std::string(first_row ? "" : ",") + "\n  {\"size\": " + std::to_string(n) +
              ", \"variant\": \"" + v.key + "\", \"median_ms\": " + std::to_string(t.median_ms) +
              ", \"gflops\": " + std::to_string(rate) + ", \"pct_of_cublas\": " +
              std::to_string(100.0 * rate / cublas_rate) + ", \"passed\": " +
              (passed ? "true" : "false") + "}";
      first_row = false;
      if (!v.is_ceiling) prev_rate = rate;
    }
  }
  json += "\n]}\n";
  ok = tut::write_sweep_json(json_path, json) && ok;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  tut::Chapter<ch15::Problem> ch;
  ch.id = "ch15_capstone_gemm";
  ch.title = "Chapter 15: capstone SGEMM, naive -> tiles -> registers -> cp.async -> TMA, vs cuBLAS";
  ch.size_help = "matrix dimension N for square M = N = K (default 4096)";
  ch.size_multiple = 1;
  ch.max_size = 16384;  // keeps every index below 2^31 (int arithmetic in the kernels)
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{4096}; };
  // Why these sizes, and how the largest makes every ring wrap: ch15::check_sizes(), host.cuh.
  ch.check_sizes = ch15::check_sizes();
  ch.device_bytes = [](std::uint64_t n) {
    const std::uint64_t pitched = n * static_cast<std::uint64_t>(ch15::pitch_of(static_cast<int>(n)));
    return 3 * pitched * 4 + (std::uint64_t{512} << 20);  // A, B, C + cuBLAS workspace margin
  };
  ch.metric = "GFLOP/s";
  ch.memcpy_ceiling = false;  // the ceiling is the cuBLAS row (is_ceiling)
  ch.variants = ch15::variants();
  ch.after_table = size_sweep;
  // The point: the same register-blocked kernel fed by TMA against it fed synchronously.
  ch.tour_lesson = "v5_tma";
  ch.tour_baseline = "v3_register";
  return tut::run_chapter(argc, argv, ch);
}
