// Chapter 05 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch05::Problem> ch;
  ch.id = "ch05_pipeline_primitives";
  ch.title = "Chapter 05: the __pipeline_* primitives (cp.async, commit/wait groups, arrive_on)";
  reversed_tiles::set_sizes(ch);  // --size and the check sizes (reversed_tiles.cuh)
  ch.extra_options = {{"blocks-per-sm", "blocks per SM for every variant", 1, 1, 32}};
  ch.variants = ch05::variants();
  return tut::run_chapter(argc, argv, ch);
}
