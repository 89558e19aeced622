/// @file main.cu
/// @brief Chapter 03's program: the stream and the stencil copied by one collective call per
///        tile (cooperative_groups::memcpy_async, cuda::memcpy_async(block, ...)) next to
///        chapter 02's per-thread copies; each variant checked against its CPU reference, then
///        timed.
///
/// Reading order: the variant registry (the Problem, its CPU references and the size settings
/// are the workload's, common/workload_stencil_stream.cuh; the chapter 02 baselines v0 and v4
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

namespace ch03 {

// ---------------------------------------------------------------------------------------------
// The variant registry. The table's "vs v0" column compares every row with v0_perthread_low,
// chapter 02's per-thread kernel at --blocks-per-sm: the stream rows' baseline. The stencil
// rows (v5) compare with v4. Each stream kernel runs at --blocks-per-sm (the "_low" row) and at
// full occupancy ("_full").
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_perthread_low", "v0 per-thread memcpy_async (ch02), low occ", "chapter 02: each thread copies its own 16 B, cuda::barrier (--blocks-per-sm)",
        [](Problem& p, cudaStream_t s) { launch_stream(tut::stencil_stream::stream_async_kernel, p, p.blocks_per_sm(), s); })
      .reference = kReverseTiles;
  v.add("v0_perthread_full", "v0 per-thread memcpy_async (ch02), full occ", "chapter 02: each thread copies its own 16 B, cuda::barrier (full occupancy)",
        [](Problem& p, cudaStream_t s) { launch_stream(tut::stencil_stream::stream_async_kernel, p, 0, s); })
      .reference = kReverseTiles;
  v.add("v1_cg_low", "v1 cg::memcpy_async + wait, low occ", "one collective cg::memcpy_async per tile, cg::wait(block) (--blocks-per-sm)",
        [](Problem& p, cudaStream_t s) { launch_stream(stream_v1_cg_kernel, p, p.blocks_per_sm(), s); })
      .reference = kReverseTiles;
  v.add("v1_cg_full", "v1 cg::memcpy_async + wait, full occ", "one collective cg::memcpy_async per tile, cg::wait(block) (full occupancy)",
        [](Problem& p, cudaStream_t s) { launch_stream(stream_v1_cg_kernel, p, 0, s); })
      .reference = kReverseTiles;
  v.add("v2_cuda_block_low", "v2 cuda::memcpy_async(block), low occ", "one collective cuda::memcpy_async per tile, aligned_size_t<16>, barrier (--blocks-per-sm)",
        [](Problem& p, cudaStream_t s) { launch_stream(stream_v2_cuda_block_kernel, p, p.blocks_per_sm(), s); })
      .reference = kReverseTiles;
  v.add("v2_cuda_block_full", "v2 cuda::memcpy_async(block), full occ", "one collective cuda::memcpy_async per tile, aligned_size_t<16>, barrier (full occupancy)",
        [](Problem& p, cudaStream_t s) { launch_stream(stream_v2_cuda_block_kernel, p, 0, s); })
      .reference = kReverseTiles;
  v.add("v3_cg_double_low", "v3 cg 2 buffers + wait_prior<1>, low occ", "collective copies into two buffers, the next tile in flight during the use (--blocks-per-sm)",
        [](Problem& p, cudaStream_t s) { launch_stream(stream_v3_cg_double_kernel, p, p.blocks_per_sm(), s); })
      .reference = kReverseTiles;
  v.add("v3_cg_double_full", "v3 cg 2 buffers + wait_prior<1>, full occ", "collective copies into two buffers, the next tile in flight during the use (full occupancy)",
        [](Problem& p, cudaStream_t s) { launch_stream(stream_v3_cg_double_kernel, p, 0, s); })
      .reference = kReverseTiles;
  v.add("v4_stencil_perthread", "v4 stencil per-thread (ch02)",
        "chapter 02's stencil: centre and halos copied by the conditional pattern",
        [](Problem& p, cudaStream_t s) {
          launch_stencil(tut::stencil_stream::stencil_async_kernel, p, s);
        })
      .reference = kStencil;
  v.add("v5_stencil_block", "v5 stencil one collective copy",
        "centre + halos as one cuda::memcpy_async(block, ..., aligned_size_t<4>)",
        [](Problem& p, cudaStream_t s) { launch_stencil(stencil_v5_block_kernel, p, s); })
      .reference = kStencil;
  add_negatives(v);  // broken.cuh
  return v.list;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The point (the tour's pair): the tile as one collective call (on sm_90 one bulk copy)
// against chapter 02's per-thread copies, the same tiles and bytes, both at full occupancy.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch03_collective_copies", variants(),
      "v2_cuda_block_full", "v0_perthread_full",
      "Chapter 03: collective block copies (cg::memcpy_async, cuda::memcpy_async(block, ...))");
  tut::stencil_stream::set_sizes(ch);  // --size, the check sizes, --blocks-per-sm
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch03::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
