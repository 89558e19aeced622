// Chapter 11 driver: builds the chapter description and hands it to the harness.
// The lesson is in kernels.cuh (v0-v2, v5-v7), more_kernels.cuh (v3, v4) and README.md;
// host.cuh holds the Problem and the variant table.
#include "kernels.cuh"  // first, and by its short name: an exercise copy finds its own
#include "chapters/11_tma_bulk_copies/more_kernels.cuh"
#include "chapters/11_tma_bulk_copies/host.cuh"

int main(int argc, char** argv) {
  tut::Chapter<ch11::Problem> ch;
  ch.id = "ch11_tma_bulk_copies";
  ch.title = "Chapter 11: TMA bulk copies (cp.async.bulk + mbarrier transaction counts)";
  ch.min_cc_major = 9;  // cp.async.bulk, mbarrier expect_tx: sm_90
  ch.min_cc_minor = 0;
  tut::set_buffer_sizes(ch, 16, ", the bulk-copy size rule");
  ch.check_sizes = ch11::kCheckSizes;  // why these: host.cuh
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM for the *_low variants")};
  ch.variants = ch11::variants();
  // The lesson: one issuing thread per block at 1 block/SM against 256 cp.async threads.
  ch.tour_lesson = "v1_bulk_ptx_low";
  ch.tour_baseline = "v0_cpasync_low";
  ch.timeline = ch11::record_timeline;  // --timeline: v1's ring traced (host.cuh)
  return tut::run_chapter(argc, argv, ch);
}
