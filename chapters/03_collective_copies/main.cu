// Chapter 03 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch03::Problem> ch;
  ch.id = "ch03_collective_copies";
  ch.title =
      "Chapter 03: collective block copies (cg::memcpy_async, cuda::memcpy_async(block, ...))";
  ch01::set_workload_sizes(ch);  // sizes, --blocks-per-sm, GPU memory: workload.cuh
  ch.variants = ch03::variants();
  return tut::run_chapter(argc, argv, ch);
}
