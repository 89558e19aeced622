// Chapter 16 driver: the GEMM ladder at --size (default 4096) with cuBLAS in the same run,
// then (unless --sweep=0) a size sweep 1024..8192 written beside --json (tut::gemm_size_sweep,
// common/gemm_host.cuh: chapter 15's sweep, so both ladders plot side by side). The lesson is
// in kernels.cuh, the step headers and README.md; the host side in host.cuh.
#include <string>
#include <vector>

#include "common/timeline_run.cuh"
#include "host.cuh"

namespace {

// --timeline: step 3 traced on a 2048^3 problem (--size caps it lower; 128 output tiles of
// 128 x 256: one wave, one block per SM, each block 32 stages of K, 8 laps of the 4-slot
// ring), blocks 0 and 1 wherever they run. The traced run is checked like any other run.
bool record_timeline(const tut::RunConfig& base, cudaStream_t stream, const std::string& path) {
  const tut::RunConfig cfg = tut::timeline_config(base, 2048);
  ch16::Problem p(cfg);
  tut::TraceRecorder rec({2, 3, 256}, 0);  // blocks 0 and 1, 3 lanes, 256 events per lane
  std::vector<tut::KernelTrace> traces;
  const bool ok = tut::trace_checked_run(
      p, 0, stream, rec,
      {"step3_warp_specialized", "3 warp-specialized, 2 consumer WGs",
       {"producer (elected lane)", "consumer warpgroup 1", "consumer warpgroup 2"}, {}},
      traces, [&](cudaStream_t s, auto trace) {
        ch16::launch_step3_kernel(ch16::gemm_step3_warp_specialized_kernel<decltype(trace)>,
                                  p.map_a128, p.map_b256, p.args(), s, trace);
      });
  return ok && tut::write_chapter_timeline(path, traces, cfg, "ch16_tensor_core_gemm");
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
  tut::set_square_gemm_sizes(ch, 4, 2);  // A, B, C and cuBLAS's C in bf16
  // One element; ragged below one tile; exact multiples of every tile; ragged, several tiles
  // per block. At 517 (K-loop of 9 stages of 64, 17 of 32), the lap check's two blocks each
  // walk >= 7 tiles: the 3- and 4-slot rings wrap around more than 15 times.
  ch.check_sizes = {1, 77, 256, 517};
  ch.extra_options = {{"sweep", "1: run the 1024..8192 size sweep after the table, 0: skip it", 1, 0, 1}};
  ch.variants = ch16::variants();
  ch.tour_lesson = "step5_persistent_tma_store";
  ch.tour_baseline = "step1_mma_sync";
  ch.after_table = [](const tut::RunConfig& base, cudaStream_t s, const std::string& json) {
    return base.extra("sweep") == 0 ||
           tut::gemm_size_sweep(base, s, json, "ch16_tensor_core_gemm", ch16::variants());
  };
  ch.timeline = record_timeline;  // --timeline: step 3 traced at 2048^3 (or --size, if less)
  return tut::run_chapter(argc, argv, ch);
}
