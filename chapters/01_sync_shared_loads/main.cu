// Chapter 01 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh and README.md.
#include "kernels.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch01::Problem> ch;
  ch.id = "ch01_sync_shared_loads";
  ch.title = "Chapter 01: synchronous global->shared loads (LDG + STS + BAR.SYNC)";
  ch01::set_workload_sizes(ch);  // --size rules, check sizes, --blocks-per-sm: workload.cuh
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::size_t{64} << 20); };
  ch.variants = ch01::variants();
  return tut::run_chapter(argc, argv, ch);
}
