/// @file main.cu
/// @brief Chapter 02's program: the stencil and the stream of chapter 01 with every load made a
///        cuda::memcpy_async completed by a cuda::barrier; each variant checked against its CPU
///        reference, then timed.
///
/// Reading order: the variant registry (the Problem, its CPU references and the size settings
/// are the workload's, common/workload_stencil_stream.cuh; the chapter 01 baselines v0 and v3
/// are in common/workload_stencil_stream_baselines.cuh), then main(). The kernels are in
/// kernels.cuh, the negative in broken.cuh. The chapter's GoogleTest includes this file with
/// TUTORIAL_CHAPTER_TEST defined, which leaves main() out.
#include <cuda_runtime.h>

#include <vector>

#include "common/harness.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_baselines.cuh"
#include "common/workload_stencil_stream_kernels.cuh"
#include "kernels.cuh"  // by its short name: an exercise copy finds its own
#include "broken.cuh"

namespace ch02 {

// ---------------------------------------------------------------------------------------------
// The variant registry. The table's "vs v0" column compares every row with v0, chapter 01's
// stencil. The stream rows' baseline is v3 (chapter 01's stream at --blocks-per-sm), which the
// README compares them with. "_low" rows run at --blocks-per-sm (default 1), "_full" rows
// with as many blocks per SM as fit.
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_stencil", "v0 stencil sync (ch01)",
        "chapter 01's stencil: halos loaded LDG->STS by the conditional pattern, BAR.SYNC",
        [](Problem& p, cudaStream_t s) {
          launch_stencil(tut::stencil_stream::stencil_sync_kernel, p, s);
        })
      .reference = kStencil;
  v.add("v1_stencil_async", "v1 stencil memcpy_async<4>",
        "per-thread cuda::memcpy_async, aligned_size_t<4>, one cuda::barrier: LDGSTS",
        [](Problem& p, cudaStream_t s) { launch_stencil(stencil_v1_async_kernel, p, s); })
      .reference = kStencil;
  v.add("v2_stencil_bytes", "v2 stencil memcpy_async void*",
        "the same call through void* + size_t: silent fallback to byte loads/stores",
        [](Problem& p, cudaStream_t s) { launch_stencil(stencil_v2_bytes_kernel, p, s); })
      .reference = kStencil;
  v.add("v3_stream_sync_low", "v3 stream sync (ch01), low occ",
        "chapter 01's 4 KiB tile reversal at --blocks-per-sm (default 1): the stream baseline",
        [](Problem& p, cudaStream_t s) {
          launch_stream(tut::stencil_stream::stream_sync_kernel, p, p.blocks_per_sm(), s);
        })
      .reference = kReverseTiles;
  v.add("v4_stream_async_low", "v4 stream memcpy_async<16>, low occ",
        "one 16 B memcpy_async per thread + barrier (sm_90: cp.async.bulk) (--blocks-per-sm)",
        [](Problem& p, cudaStream_t s) {
          launch_stream(stream_v4_async_kernel, p, p.blocks_per_sm(), s);
        })
      .reference = kReverseTiles;
  v.add("v4_stream_async_full", "v4 stream memcpy_async<16>, full occ",
        "one 16 B memcpy_async per thread + barrier (sm_90: cp.async.bulk) (full occupancy)",
        [](Problem& p, cudaStream_t s) { launch_stream(stream_v4_async_kernel, p, 0, s); })
      .reference = kReverseTiles;
  add_negatives(v);  // broken.cuh
  return v.list;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The point (the tour's pair): the stencil's loads made asynchronous and completed by one
// barrier, against chapter 01's synchronous stencil, both at full occupancy.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch02_memcpy_async_barrier", variants(),
      "v1_stencil_async", "v0_stencil",
      "Chapter 02: cuda::memcpy_async completed by a cuda::barrier (LDGSTS + mbarrier)");
  tut::stencil_stream::set_sizes(ch);  // --size, the check sizes, --blocks-per-sm
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch02::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
