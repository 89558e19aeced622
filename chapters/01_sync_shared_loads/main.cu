// Chapter 01: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "host.cuh"  // the variants and the timeline; it includes kernels.cuh and the Problem

int main(int argc, char** argv) {
  // The point (the tour's pair), at one block per SM (where only the loads in flight hide
  // latency): staging through shared memory synchronously, against the same reversal with no
  // staging at all.
  tut::Chapter<ch01::Problem> ch = tut::stencil_stream::chapter(
      "ch01_sync_shared_loads",
      "Chapter 01: synchronous global->shared loads (LDG + STS + BAR.SYNC)", ch01::variants(),
      "v1_stream_low", "v2_direct_low");
  ch.timeline = ch01::record_timeline;  // --timeline: v1 traced (host.cuh)
  return tut::run_chapter(argc, argv, ch);
}
