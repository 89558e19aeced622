// Chapter 03: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "host.cuh"  // the variants; it includes kernels.cuh and the workload's Problem

int main(int argc, char** argv) {
  // The point (the tour's pair): the tile as one collective call (on sm_90 one bulk copy)
  // against chapter 02's per-thread copies, the same tiles and bytes, both at full occupancy.
  return tut::run_chapter(argc, argv, tut::stencil_stream::chapter(
      "ch03_collective_copies",
      "Chapter 03: collective block copies (cg::memcpy_async, cuda::memcpy_async(block, ...))",
      ch03::variants(), "v2_cuda_block_full", "v0_perthread_full"));
}
