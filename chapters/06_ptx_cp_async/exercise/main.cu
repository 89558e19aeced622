// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.
// Chapter 06 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch06::Problem> ch;
  ch.id = "ch06_ptx_cp_async";
  ch.title = "Chapter 06: raw PTX cp.async (.ca/.cg, src-size, commit_group, wait_group)";
  ch.size_help = "bytes per buffer, a multiple of 4 (default 1G)";
  ch.size_multiple = 4;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // One word; 3 words (ragged, 3 of 4 in the vector); a tile less one word; tiles plus a
  // 2-word tail; tiles plus a 1-word tail; 1 MiB plus 7 words; 8 MiB (15+ tiles per block,
  // so every ring slot is reused many times).
  ch.check_sizes = {4, 12, 4096 - 4, 3 * 4096 + 8, 5 * 4096 + 4, (1u << 20) + 4 * 7, 8u << 20};
  ch.device_bytes = [](std::uint64_t size) { return 2 * size + (std::size_t{64} << 20); };
  ch.extra_options = {{"blocks-per-sm", "blocks per SM (every variant but *_full)", 1, 1, 32}};
  ch.variants = ch06::variants();
  return tut::run_chapter(argc, argv, ch);
}
