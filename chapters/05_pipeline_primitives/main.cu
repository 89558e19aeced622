/// @file main.cu
/// @brief Chapter 05's program: what it runs, the variant registry, and main().
///
/// The program streams a buffer of 32-bit words through shared memory in 4 KiB tiles, reverses
/// each tile (zero-padded to whole 16-byte vectors) and checks every word against a CPU
/// reference; then it times every variant and prints the table of the README. The workload's
/// Problem (buffers, CPU reference, check) and its sizes are shared with chapters 04 and 06 and
/// live in common/workload_reversed_tiles.cuh; the kernels and their launchers are kernels.cuh;
/// the broken variant is broken.cuh.
///
/// Every variant runs at --blocks-per-sm blocks per SM (default 1): the regime where the number
/// of tiles in flight decides the bandwidth. Names give the ring in slots and the depth in tiles
/// in flight at each wait (slots - 1 in this chapter's wait-first loop).
///
/// Tests include this file with TUTORIAL_CHAPTER_TEST defined, for variants().
#include <string>
#include <vector>

#include "common/harness.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "kernels.cuh"
#include "broken.cuh"

namespace ch05 {

inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_pipeline_s4", "v0 cuda::pipeline 4 slots (3 in flight)",
        "chapter 04's cuda::pipeline and memcpy_async 16 B in this chapter's wait-first loop",
        launch_stream_v0<4>);
  // v1 at 16 B in rings of 2, 3 and 4 slots (1, 2 and 3 tiles in flight at each wait)
  v.add("v1_prim16_s2", "v1 primitives 16 B 2 slots (1 in flight)",
        "__pipeline_memcpy_async 16 B (cp.async.cg), double buffering", launch_stream_v1<2, 16>);
  v.add("v1_prim16_s3", "v1 primitives 16 B 3 slots (2 in flight)",
        "__pipeline_memcpy_async 16 B (cp.async.cg), triple buffering", launch_stream_v1<3, 16>);
  v.add("v1_prim16_s4", "v1 primitives 16 B 4 slots (3 in flight)",
        "__pipeline_memcpy_async 16 B: v0 written with primitives", launch_stream_v1<4, 16>);
  v.add("v1_prim8_s3", "v1 primitives 8 B 3 slots (2 in flight)",
        "__pipeline_memcpy_async 8 B (cp.async.ca), two copies per thread per tile",
        launch_stream_v1<3, 8>);
  v.add("v1_prim4_s3", "v1 primitives 4 B 3 slots (2 in flight)",
        "__pipeline_memcpy_async 4 B (cp.async.ca), four copies per thread per tile",
        launch_stream_v1<3, 4>);
  v.add("v2_mbarrier_s3", "v2 arrive_on mbarrier, token, 3 slots",
        "16 B copies completed on an mbarrier per slot via __pipeline_arrive_on; per-slot tokens",
        launch_stream_v2<3>);
  v.add("v3_mbarrier_parity_s3", "v3 arrive_on mbarrier, parity, 3 slots",
        "as v2, waiting on the phase parity (mbarrier.test_wait.parity): no token array",
        launch_stream_v3<3>);
  add_negatives(v);
  return v.list;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The lesson (the tour's pair): the primitives against chapter 04's API, same loop, same
// depth, 1 block/SM.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch05_pipeline_primitives", variants(), "v1_prim16_s4", "v0_pipeline_s4",
      "Chapter 05: the __pipeline_* primitives (cp.async, commit/wait groups, arrive_on)");
  tut::reversed_tiles::set_sizes(ch);  // --size and the check sizes (the workload's header)
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM for every variant")};
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch05::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
