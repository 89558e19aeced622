// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.
// Chapter 02 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch02::Problem> ch;
  ch.id = "ch02_memcpy_async_barrier";
  ch.title = "Chapter 02: cuda::memcpy_async completed by a cuda::barrier (LDGSTS + mbarrier)";
  ch01::set_workload_sizes(ch);  // sizes, --blocks-per-sm, GPU memory: workload.cuh
  ch.variants = ch02::variants();
  return tut::run_chapter(argc, argv, ch);
}
