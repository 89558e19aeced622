// Chapter 16 driver: the GEMM ladder at --size (default 4096) with cuBLAS in the same run,
// then (unless --sweep=0) a size sweep 1024..8192 written beside --json. The lesson is in
// kernels.cuh, the step headers and README.md; the host side in host.cuh.
#include <cstdio>

#include "common/shared_scrub.cuh"
#include "common/timeline.cuh"
#include "host.cuh"

namespace {

// Every non-negative variant at 1024, 2048, 4096 and 8192, each checked against cuBLAS (its
// result computed once per size), then timed. Same JSON as chapter 15's sweep, so both
// ladders plot side by side. Returns false if any check failed.
bool size_sweep(const tut::RunConfig& base, cudaStream_t stream, const std::string& json_path) {
  if (base.extra("sweep") == 0) return true;
  const auto all = ch16::variants();
  std::printf("\nSize sweep (M = N = K; TFLOP/s = 2*M*N*K / time; checked against cuBLAS):\n");
  std::printf("%6s | %-40s | %10s | %9s | %9s | %s\n", "size", "variant", "median ms", "TFLOP/s",
              "% cuBLAS", "check");
  std::string json = "{\"chapter\": \"ch16_tensor_core_gemm\", \"sweep\": [";
  bool ok = true, first_row = true;
  for (int n : {1024, 2048, 4096, 8192}) {
    tut::RunConfig cfg = base;
    cfg.size = static_cast<std::uint64_t>(n);
    ch16::Problem p(cfg);
    const int repeats = n >= 8192 ? 5 : 10;
    double cublas_rate = 0.0;
    for (const auto& v : all) {  // cuBLAS first, for the % column
      if (!v.is_ceiling) continue;
      const tut::Timing t = tut::time_variant(p, v, stream, 2, repeats);
      cublas_rate = tut::rate_per_second_1e9(p.work(), t.median_ms);
    }
    for (const auto& v : all) {
      if (v.negative) continue;
      const bool passed = tut::run_and_verify(p, v, stream).ok();
      ok = ok && passed;
      const tut::Timing t = tut::time_variant(p, v, stream, 2, repeats);
      const double rate = tut::rate_per_second_1e9(p.work(), t.median_ms);
      std::printf("%6d | %-40s | %10.3f | %9.1f | %8.1f%% | %s\n", n, v.name.c_str(), t.median_ms,
                  rate / 1000.0, 100.0 * rate / cublas_rate, passed ? "PASS" : "FAIL");
      json += std::string(first_row ? "" : ",") + "\n  {\"size\": " + std::to_string(n) +
              ", \"variant\": \"" + v.key + "\", \"median_ms\": " + std::to_string(t.median_ms) +
              ", \"gflops\": " + std::to_string(rate) + ", \"pct_of_cublas\": " +
              std::to_string(100.0 * rate / cublas_rate) + ", \"passed\": " +
              (passed ? "true" : "false") + "}";
      first_row = false;
    }
  }
  json += "\n]}\n";
  return tut::write_sweep_json(json_path, json) && ok;
}

// --timeline: step 3 traced on a 2048^3 problem (128 output tiles of 128 x 256: one wave, one
// block per SM, each block 32 stages of K, 8 laps of the 4-slot ring), blocks 0 and 1 wherever
// they run. The traced run is checked against cuBLAS like any other run.
bool record_timeline(const tut::RunConfig& base, cudaStream_t stream, const std::string& path) {
  constexpr int kN = 2048;
  ch16::Problem p(ch16::Shape{kN, kN, kN}, base.seed, base.device.sm_count);
  tut::TraceRecorder rec({2, 3, 256}, 0);  // blocks 0 and 1, 3 lanes, 256 events per lane
  auto launch = [&](cudaStream_t s, auto trace) {
    ch16::launch_step3_kernel(ch16::gemm_step3_warp_specialized_kernel<decltype(trace)>,
                              p.map_a128, p.map_b256, p.args(), s, trace);
  };
  rec.clear(stream);
  p.poison(stream);
  tut::scrub_shared_memory(stream);
  launch(stream, rec.arg());
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const tut::VerifyResult r = p.verify(stream, 0);
  if (!r.ok()) {
    std::printf("[step3_warp_specialized] traced run: %s\n%s", r.summary().c_str(),
                r.details().c_str());
    return false;
  }
  tut::KernelTrace kt{"step3_warp_specialized", "3 warp-specialized, 2 consumer WGs",
                      {"producer (elected lane)", "consumer warpgroup 1", "consumer warpgroup 2"},
                      rec.download(stream)};
  tut::measure_trace_overhead(  // the same launch untraced and traced, median of 20 each
      kt, stream, 3, 20, [&](cudaStream_t s) { launch(s, tut::TraceOff{}); },
      [&](cudaStream_t s) { launch(s, rec.arg()); });
  const std::string command = "ch16_tensor_core_gemm --timeline=" + path;
  return tut::write_timeline(path, {kt}, {"ch16_tensor_core_gemm", base.device.name, command});
}

}  // namespace

int main(int argc, char** argv) {
  tut::Chapter<ch16::Problem> ch;
  ch.id = "ch16_tensor_core_gemm";
  ch.title =
      "Chapter 16: BF16 GEMM on Hopper tensor cores, mma.sync -> wgmma+TMA -> warp "
      "specialization -> cluster multicast -> persistent, vs cuBLAS";
  ch.min_cc_major = 9;  // and exactly 9.0: Problem exits 77 on anything but sm_90a
  ch.min_cc_minor = 0;
  ch.size_help = "matrix dimension N for square M = N = K (default 4096)";
  ch.max_size = 16384;  // keeps every element index below 2^31 (int arithmetic in the kernels)
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{4096}; };
  // One element; ragged below one tile; exact multiples of every tile; ragged, several tiles
  // per block. At 517 (K-loop of 9 stages of 64, 17 of 32), the lap check's two blocks each
  // walk >= 7 tiles: the 3- and 4-slot rings wrap around more than 15 times.
  ch.check_sizes = {1, 77, 256, 517};
  ch.device_bytes = [](std::uint64_t n) {
    const std::uint64_t elems = n * static_cast<std::uint64_t>(ch16::pitch_of(static_cast<int>(n)));
    return 4 * elems * 2 + (std::uint64_t{512} << 20);  // A, B, C, cuBLAS's C + workspace margin
  };
  ch.metric = "GFLOP/s";
  ch.memcpy_ceiling = false;  // the ceiling is the cuBLAS row (is_ceiling)
  ch.extra_options = {{"sweep", "1: run the 1024..8192 size sweep after the table, 0: skip it", 1, 0, 1}};
  ch.variants = ch16::variants();
  ch.tour_lesson = "step5_persistent_tma_store";
  ch.tour_baseline = "step1_mma_sync";
  ch.after_table = size_sweep;
  ch.timeline = record_timeline;  // --timeline: step 3 traced at 2048^3
  return tut::run_chapter(argc, argv, ch);
}
