// Chapter 04 driver: builds the chapter description and hands it to the harness. The lesson is
// in kernels.cuh and README.md; the host side in host.cuh; the sweeps after the table in sweep.cuh.
#include "host.cuh"   // includes kernels.cuh from this folder (an exercise copy: its own)
#include "sweep.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch04::Problem> ch;
  ch.id = "ch04_pipeline_prefetch";
  ch.title = "Chapter 04: multi-stage prefetch with cuda::pipeline (cp.async commit/wait groups)";
  // --size: bytes, multiples of one uint4, default 1 GiB; room for input, output and the memcpy
  // ceiling's two buffers (the sweep's problem, with the expected output on the GPU, fits too)
  tut::set_buffer_sizes(ch);
  ch.check_sizes = ch04::check_sizes();  // host.cuh says why the largest gives every ring laps
  ch.extra_options = {
      tut::blocks_per_sm_option("blocks per SM for the *_low variants and sweep 2"),
      {"rounds", "integer multiply-adds per 32-bit word in the compute step", 0, 0, 4096}};
  ch.variants = ch04::variants();
  // The lesson: the 8-stage ring at one block per SM against chapter 01's kernel there.
  ch.tour_lesson = "v2_pipe_s8_low";
  ch.tour_baseline = "v1_sync_low";
  ch.after_table = ch04::run_sweeps;
  ch.timeline = ch04::record_timeline;  // --timeline: v1 and the 1-, 2-, 8-slot rings (host.cuh)
  return tut::run_chapter(argc, argv, ch);
}
