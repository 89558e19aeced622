// Chapter 08 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch08::Problem> ch;
  ch.id = "ch08_warp_divergence";
  ch.title = "Chapter 08: warp divergence around memcpy_async (per-thread commit groups)";
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // One chunk, 3 chunks, a slice short of 2 (63 chunks), a tile short of one chunk, tiles plus
  // a ragged slice, and a few MiB.
  ch.check_sizes = {16, 48, 1008, 4096 - 16, 5 * 4096 + 16 * 45, (1u << 20) + 16 * 7, 8u << 20};
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.extra_options = {{"blocks-per-sm", "blocks per SM for the *_low variants", 1, 1, 32}};
  ch.variants = ch08::variants();
  return tut::run_chapter(argc, argv, ch);
}
