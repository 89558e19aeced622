/// @file main.cu
/// @brief Chapter 01's program: stage 4 KiB tiles (and a stencil's tiles with halos) through
///        shared memory the synchronous way (LDG, STS, BAR.SYNC), check every variant against
///        its CPU reference, time them, and with --timeline trace v1.
///
/// Reading order: the variant registry (the Problem, its CPU references and the size settings
/// are the workload's, common/workload_stencil_stream.cuh), the --timeline run, main(). The
/// kernels are in kernels.cuh, the negatives in broken.cuh. The chapter's GoogleTest includes
/// this file with TUTORIAL_CHAPTER_TEST defined, which leaves main() out.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/harness.cuh"
#include "common/timeline.cuh"
#include "common/timeline_run.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_kernels.cuh"
#include "kernels.cuh"  // by its short name: an exercise copy finds its own
#include "broken.cuh"

namespace ch01 {

// ---------------------------------------------------------------------------------------------
// The variant registry. "_low" rows run at --blocks-per-sm (default 1), "_full" rows with as
// many blocks per SM as fit. The stencil rows are checked against the stencil reference, the
// stream rows against the tile reversal.
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_stencil", "v0 stencil sync, full occ",
        "1D radius-3 stencil, halos loaded LDG->STS by the conditional pattern",
        [](Problem& p, cudaStream_t s) { launch_stencil(stencil_v0_sync_kernel, p, s); })
      .reference = kStencil;
  v.add("v1_stream_full", "v1 stream sync, full occ",
        "4 KiB tiles LDG->STS, BAR, LDS->STG; as many blocks per SM as fit",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
        })
      .reference = kReverseTiles;
  v.add("v1_stream_low", "v1 stream sync, low occ",
        "the same kernel at --blocks-per-sm blocks per SM (default 1)",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.blocks_per_sm(), s);
        })
      .reference = kReverseTiles;
  v.add("v2_direct_full", "v2 direct LDG->STG, full occ",
        "no shared memory: the same reversal straight from global",
        [](Problem& p, cudaStream_t s) { launch_stream(stream_v2_direct_kernel, p, 0, s); })
      .reference = kReverseTiles;
  v.add("v2_direct_low", "v2 direct LDG->STG, low occ",
        "no shared memory, at --blocks-per-sm blocks per SM",
        [](Problem& p, cudaStream_t s) {
          launch_stream(stream_v2_direct_kernel, p, p.blocks_per_sm(), s);
        })
      .reference = kReverseTiles;
  add_negatives(v);  // broken.cuh
  return v.list;
}

// ---------------------------------------------------------------------------------------------
// --timeline: v1 at --blocks-per-sm (default 1), traced on a small problem (at most
// kTimelineBytes: 16 MiB is 31 tiles per block at 1 block per SM) for the blocks on SMs 0 and
// 1. The traced run is checked like any other run.
// ---------------------------------------------------------------------------------------------
constexpr std::uint64_t kTimelineBytes = 16u << 20;

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  const tut::RunConfig cfg = tut::timeline_config(run, kTimelineBytes);
  Problem p(cfg);
  const int bps = p.blocks_per_sm();
  tut::TraceRecorder rec({stream_v1_grid<tut::TraceOn>(p.sms(), bps), 1, 256});
  std::vector<tut::KernelTrace> traces;
  const bool ok = tut::trace_checked_run(
      p, kReverseTiles, s, rec,
      tut::KernelTrace{"v1_stream_low", "v1 stream sync, low occ", {"block (thread 0)"}, {}},
      traces, [&](cudaStream_t st, auto trace) {
        launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), bps, st, trace);
      });
  return ok && tut::write_chapter_timeline(path, traces, cfg, "ch01_sync_shared_loads",
                                           " --blocks-per-sm=" + std::to_string(bps));
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The point (the tour's pair), at one block per SM (where only the loads in flight hide
// latency): staging through shared memory synchronously, against the same reversal with no
// staging at all.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch01_sync_shared_loads", variants(), "v1_stream_low", "v2_direct_low",
      "Chapter 01: synchronous global->shared loads (LDG + STS + BAR.SYNC)");
  tut::stencil_stream::set_sizes(ch);  // --size, the check sizes, --blocks-per-sm
  ch.timeline = record_timeline;  // --timeline: v1 traced
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch01::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
