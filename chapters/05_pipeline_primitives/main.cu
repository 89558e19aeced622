// Chapter 05 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md; the variant registry in host.cuh.
#include "host.cuh"  // includes kernels.cuh from this folder (an exercise copy: its own)

int main(int argc, char** argv) {
  tut::Chapter<ch05::Problem> ch;
  ch.id = "ch05_pipeline_primitives";
  ch.title = "Chapter 05: the __pipeline_* primitives (cp.async, commit/wait groups, arrive_on)";
  tut::reversed_tiles::set_sizes(ch);  // --size and the check sizes (the workload's header)
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM for every variant")};
  ch.variants = ch05::variants();
  // The lesson: the primitives against chapter 04's API, same loop, same depth, 1 block/SM.
  ch.tour_lesson = "v1_prim16_s4";
  ch.tour_baseline = "v0_pipeline_s4";
  return tut::run_chapter(argc, argv, ch);
}
