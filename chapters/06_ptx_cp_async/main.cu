// Chapter 06 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch06::Problem> ch;
  ch.id = "ch06_ptx_cp_async";
  ch.title = "Chapter 06: raw PTX cp.async (.ca/.cg, src-size, commit_group, wait_group)";
  reversed_tiles::set_sizes(ch);  // --size and the check sizes (reversed_tiles.cuh)
  ch.extra_options = {{"blocks-per-sm", "blocks per SM (every variant but *_full)", 1, 1, 32}};
  ch.variants = ch06::variants();
  return tut::run_chapter(argc, argv, ch);
}
