// Chapter 02: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "host.cuh"  // the variants; it includes kernels.cuh and the workload's Problem

int main(int argc, char** argv) {
  // The point (the tour's pair): the stencil's loads made asynchronous and completed by one
  // barrier, against chapter 01's synchronous stencil, both at full occupancy.
  return tut::run_chapter(argc, argv, tut::stencil_stream::chapter(
      "ch02_memcpy_async_barrier",
      "Chapter 02: cuda::memcpy_async completed by a cuda::barrier (LDGSTS + mbarrier)",
      ch02::variants(), "v1_stencil_async", "v0_stencil"));
}
