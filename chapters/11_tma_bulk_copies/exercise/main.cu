// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.
// Chapter 11 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch11::Problem> ch;
  ch.id = "ch11_tma_bulk_copies";
  ch.title = "Chapter 11: TMA bulk copies (cp.async.bulk + mbarrier transaction counts)";
  ch.min_cc_major = 9;  // cp.async.bulk, mbarrier expect_tx: sm_90
  ch.min_cc_minor = 0;
  ch.size_help = "bytes per buffer, a multiple of 16 (the bulk-copy size rule; default 1G)";
  ch.size_multiple = 16;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return std::uint64_t{1} << 30; };
  // Tiny; one vector; short of a 4 KiB sub-tile; short of a 16 KiB TMA tile; tiles plus a
  // ragged tail; more tiles than one wave of blocks; a few MiB.
  ch.check_sizes = {16, 48, 4096 - 16, 16384 - 16, 3 * 16384 + 4096 + 80,
                    (1u << 20) + 16 * 7, 8u << 20};
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.extra_options = {{"blocks-per-sm", "blocks per SM for the *_low variants", 1, 1, 32}};
  ch.variants = ch11::variants();
  return tut::run_chapter(argc, argv, ch);
}
