// Chapter 01 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch01::Problem> ch;
  ch.id = "ch01_sync_shared_loads";
  ch.title = "Chapter 01: synchronous global->shared loads (LDG + STS + BAR.SYNC)";
  ch01::set_workload_sizes(ch);  // sizes, --blocks-per-sm, GPU memory: workload.cuh
  ch.variants = ch01::variants();
  return tut::run_chapter(argc, argv, ch);
}
