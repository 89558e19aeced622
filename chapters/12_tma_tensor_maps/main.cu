// Chapter 12 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch12::Problem> ch;
  ch.id = "ch12_tma_tensor_maps";
  ch.title = "Chapter 12: TMA tensor maps (cp.async.bulk.tensor.2d, swizzle, TMA store)";
  ch.min_cc_major = 9;  // TMA: sm_90
  ch.min_cc_minor = 0;
  ch.size_help =
      "side N of the square float matrix, a multiple of 4 (TMA's 16-byte row-pitch rule); "
      "default 16384 = 1 GiB per matrix";
  ch.size_multiple = 4;
  ch.max_size = 32768;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{16384}; };
  // One partial box; one box minus a column chunk; a box plus 4 (edges on both sides);
  // boxes plus ragged edges; several waves of blocks.
  ch.check_sizes = {4, 28, 36, 100, 260, 1028, 2052};
  ch.device_bytes = [](std::uint64_t n) { return 4 * 4 * n * n + (std::size_t{64} << 20); };
  ch.extra_options = {{"blocks-per-sm", "blocks per SM for the *_low variants", 1, 1, 32}};
  ch.variants = ch12::variants();
  return tut::run_chapter(argc, argv, ch);
}
