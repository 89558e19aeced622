// Chapter 04 driver: builds the chapter description and hands it to the harness; the sweeps
// after the table are in sweep.cuh. The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"  // the exercise copy of main.cu picks up exercise/kernels.cuh here
#include "chapters/04_pipeline_prefetch/sweep.cuh"  // from the project root: shared by both

int main(int argc, char** argv) {
  tut::Chapter<ch04::Problem> ch;
  ch.id = "ch04_pipeline_prefetch";
  ch.title = "Chapter 04: multi-stage prefetch with cuda::pipeline (cp.async commit/wait groups)";
  ch.size_help = "bytes per buffer, a multiple of 16 (default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // Tiny (one uint4), 3 uint4, one short of a tile, tiles plus a ragged tail, just over 1 MiB,
  // and 8 MiB: 2048 tiles, so at 1 block per SM each block runs ~16 tiles through the ring
  // (more than 16 stages: prologue, steady state and drain all execute).
  ch.check_sizes = {16, 48, 4096 - 16, 3 * 4096 + 80, (1u << 20) + 16 * 7, 8u << 20};
  // input + output, plus the same again for the memcpy ceiling (the sweep reuses that room)
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (size_t{64} << 20); };
  ch.extra_options = {
      {"blocks-per-sm", "blocks per SM for the *_low variants and sweep 2", 1, 1, 32},
      {"rounds", "integer multiply-adds per 32-bit word in the compute step", 0, 0, 4096}};
  ch.variants = ch04::variants();
  ch.after_table = ch04::run_sweeps;
  return tut::run_chapter(argc, argv, ch);
}
