// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.
// Chapter 09 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch09::Problem> ch;
  ch.id = "ch09_alignment";
  ch.title = "Chapter 09: alignment - cp.async 16/8/4 B or the synchronous fallback";
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // One chunk, a partial slice, a tile short of a chunk, tiles plus a ragged slice, a few MiB.
  ch.check_sizes = {16, 48, 1008, 4096 - 16, 5 * 4096 + 16 * 45, (1u << 20) + 16 * 7, 8u << 20};
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.variants = ch09::variants();
  return tut::run_chapter(argc, argv, ch);
}
