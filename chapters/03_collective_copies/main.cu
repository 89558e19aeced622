// Chapter 03: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "host.cuh"  // the variants, the Problem, the sizes; it includes kernels.cuh

int main(int argc, char** argv) {
  tut::Chapter<ch03::Problem> ch;
  ch.id = "ch03_collective_copies";
  ch.title =
      "Chapter 03: collective block copies (cg::memcpy_async, cuda::memcpy_async(block, ...))";
  tut::stencil_stream::set_sizes(ch);  // sizes, --blocks-per-sm, GPU memory
  ch.variants = ch03::variants();
  // The point: the tile as one collective call (on sm_90 one bulk copy) against chapter 02's
  // per-thread copies, the same tiles and bytes, both at full occupancy.
  ch.tour_lesson = "v2_cuda_block_full";
  ch.tour_baseline = "v0_perthread_full";
  return tut::run_chapter(argc, argv, ch);
}
