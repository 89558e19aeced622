// Chapter 12 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh (v0-v2, v4-v7), more_kernels.cuh (v3) and README.md;
// host.cuh holds the tensor maps, the Problem and the variant table.
#include "kernels.cuh"  // first, and by its short name: an exercise copy finds its own
#include "chapters/12_tma_tensor_maps/more_kernels.cuh"
#include "chapters/12_tma_tensor_maps/host.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch12::Problem> ch;
  ch.id = "ch12_tma_tensor_maps";
  ch.title = "Chapter 12: TMA tensor maps (cp.async.bulk.tensor.2d, swizzle, TMA store)";
  ch.min_cc_major = 9;  // TMA: sm_90
  ch.min_cc_minor = 0;
  ch.size_help =
      "the matrix side N (not bytes): an N x N float matrix, N a multiple of 4 (TMA's 16-byte "
      "row-pitch rule); default 16384 = 1 GiB per matrix";
  ch.size_multiple = 4;
  ch.max_size = 32768;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{16384}; };
  ch.check_sizes = ch12::kCheckSizes;  // why these: host.cuh
  ch.device_bytes = [](std::uint64_t n) { return 4 * 4 * n * n + (std::size_t{64} << 20); };
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM for the *_low variants")};
  ch.variants = ch12::variants();
  // The lesson: the TMA-fed transpose with tall boxes against the cp.async-fed one, both at
  // full occupancy (the regime the chapter's table compares).
  ch.tour_lesson = "v6_tma_tall256_full";
  ch.tour_baseline = "v0_cpasync_full";
  return tut::run_chapter(argc, argv, ch);
}
