// Chapter 07 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch07::Problem> ch;
  ch.id = "ch07_producer_consumer";
  ch.title = "Chapter 07: producer/consumer warps through a block-scope cuda::pipeline";
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // 4 floats (smaller than the stencil); 12 floats; a tile less 4 floats; tiles plus a ragged
  // tail; 1 MiB plus 28 floats; 8 MiB (many tiles per block: every stage reused many times).
  ch.check_sizes = {16, 48, 4096 - 16, 3 * 4096 + 80, (1u << 20) + 112, 8u << 20};
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.extra_options = {{"blocks-per-sm", "blocks per SM for every variant", 1, 1, 32}};
  ch.variants = ch07::variants();
  return tut::run_chapter(argc, argv, ch);
}
