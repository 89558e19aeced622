// Chapter 02: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "host.cuh"  // the variants, the Problem, the sizes; it includes kernels.cuh

int main(int argc, char** argv) {
  tut::Chapter<ch02::Problem> ch;
  ch.id = "ch02_memcpy_async_barrier";
  ch.title = "Chapter 02: cuda::memcpy_async completed by a cuda::barrier (LDGSTS + mbarrier)";
  tut::stencil_stream::set_sizes(ch);  // sizes, --blocks-per-sm, GPU memory
  ch.variants = ch02::variants();
  // The point: the stencil's loads made asynchronous and completed by one barrier, against
  // chapter 01's synchronous stencil, both at full occupancy.
  ch.tour_lesson = "v1_stencil_async";
  ch.tour_baseline = "v0_stencil";
  return tut::run_chapter(argc, argv, ch);
}
