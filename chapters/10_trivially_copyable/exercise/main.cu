// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.
// Chapter 10 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh, particle.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch10::Problem> ch;
  ch.id = "ch10_trivially_copyable";
  ch.title = "Chapter 10: trivially copyable element types, AoS vs SoA in memcpy_async";
  ch.size_help = "bytes per buffer, a multiple of 96 (4 particles of 24 B; default ~1G)";
  ch.size_multiple = 96;
  ch.max_size = 16ull << 30;
  ch.default_size = [](const tut::DeviceSummary&) { return (std::uint64_t{1} << 30) / 96 * 96; };
  // 4 particles, 8, a slice short of 4 (28), a tile short of 4 (252), tiles plus a ragged
  // slice (5 tiles + 36), and ~8 MiB.
  ch.check_sizes = {96, 192, 24 * 28, 24 * 252, 24 * (5 * 256 + 36), 96 * 87382};
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.variants = ch10::variants();
  return tut::run_chapter(argc, argv, ch);
}
