// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.
// Chapter 03 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch03::Problem> ch;
  ch.id = "ch03_collective_copies";
  ch.title =
      "Chapter 03: collective block copies (cg::memcpy_async, cuda::memcpy_async(block, ...))";
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // Tiny (one float4, then 3 float4: shorter than the halo span), one short of a tile, tiles
  // plus a ragged tail, just over 1 MiB, and 8 MiB (the persistent grid loops many times).
  ch.check_sizes = {16, 48, 1008, 4096 - 16, 3 * 4096 + 80, (1u << 20) + 16 * 7, 8u << 20};
  // input + output, plus the same again for the memcpy ceiling measured beside them
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (size_t{64} << 20); };
  ch.extra_options = {{"blocks-per-sm", "blocks per SM for the *_low variants", 1, 1, 32}};
  ch.variants = ch03::variants();
  return tut::run_chapter(argc, argv, ch);
}
