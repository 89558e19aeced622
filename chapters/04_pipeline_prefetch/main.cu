// Chapter 04 driver: builds the chapter description and hands it to the harness. The lesson is
// in kernels.cuh and README.md; the host side in host.cuh; the sweeps after the table in sweep.cuh.
#include "host.cuh"   // includes kernels.cuh from this folder (an exercise copy: its own)
#include "sweep.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch04::Problem> ch;
  ch.id = "ch04_pipeline_prefetch";
  ch.title = "Chapter 04: multi-stage prefetch with cuda::pipeline (cp.async commit/wait groups)";
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  ch.check_sizes = ch04::check_sizes();  // host.cuh says why the largest gives every ring laps
  // input + output, plus the same again for the memcpy ceiling; the sweep's problem (input,
  // output and the expected output on the GPU) fits in the same room after the table
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.extra_options = {
      {"blocks-per-sm", "blocks per SM for the *_low variants and sweep 2", 1, 1, 32},
      {"rounds", "integer multiply-adds per 32-bit word in the compute step", 0, 0, 4096}};
  ch.variants = ch04::variants();
  // The lesson: the 8-stage ring at one block per SM against chapter 01's kernel there.
  ch.tour_lesson = "v2_pipe_s8_low";
  ch.tour_baseline = "v1_sync_low";
  ch.after_table = ch04::run_sweeps;
  ch.timeline = ch04::record_timeline;  // --timeline: v1 and the 1-, 2-, 8-slot rings (host.cuh)
  return tut::run_chapter(argc, argv, ch);
}
