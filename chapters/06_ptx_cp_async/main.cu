// Chapter 06 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh, kernels_mbarrier.cuh and README.md; the registry in host.cuh.
#include "host.cuh"  // includes kernels.cuh from this folder (an exercise copy: its own)

int main(int argc, char** argv) {
  tut::Chapter<ch06::Problem> ch;
  ch.id = "ch06_ptx_cp_async";
  ch.title = "Chapter 06: raw PTX cp.async (.ca/.cg, src-size, commit_group, wait_group)";
  tut::reversed_tiles::set_sizes(ch);  // --size and the check sizes (the workload's header)
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM (every variant but *_full)")};
  ch.variants = ch06::variants();
  // The lesson: raw PTX with 7 tiles in flight against chapter 05's kernel with 3, 1 block/SM.
  ch.tour_lesson = "v1_cg16_s8";
  ch.tour_baseline = "v0_prim16_s4";
  return tut::run_chapter(argc, argv, ch);
}
