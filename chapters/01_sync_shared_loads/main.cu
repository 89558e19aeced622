// Chapter 01: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "host.cuh"  // the variants, the Problem, the sizes; it includes kernels.cuh

int main(int argc, char** argv) {
  tut::Chapter<ch01::Problem> ch;
  ch.id = "ch01_sync_shared_loads";
  ch.title = "Chapter 01: synchronous global->shared loads (LDG + STS + BAR.SYNC)";
  tut::stencil_stream::set_sizes(ch);  // sizes, --blocks-per-sm, GPU memory
  ch.variants = ch01::variants();
  // The point, at one block per SM (where only the loads in flight hide latency): staging
  // through shared memory synchronously, against the same reversal with no staging at all.
  ch.tour_lesson = "v1_stream_low";
  ch.tour_baseline = "v2_direct_low";
  ch.timeline = ch01::record_timeline;  // --timeline: v1 traced (host.cuh)
  return tut::run_chapter(argc, argv, ch);
}
