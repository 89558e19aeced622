// Chapter 01, host side: the variant registry and the --timeline run. The Problem, the CPU
// references, the size settings and the launchers of v0 and v2 are the workload's
// (common/workload_stencil_stream.cuh, common/workload_stencil_stream_kernels.cuh), which
// kernels.cuh brings into namespace ch01.
// main.cu and the chapter's tests include this file; it includes the kernels beside it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/harness.cuh"
#include "common/timeline.cuh"
#include "common/timeline_run.cuh"
#include "kernels.cuh"
// The negatives (v8, v9) and add_negatives(), which variants() calls last.
#include "tests/negatives/01_sync_shared_loads.cuh"

namespace ch01 {

// v1 through its own launcher (the timeline traces it), at --blocks-per-sm or full occupancy.
inline void launch_v1(Problem& p, Occupancy occupancy, cudaStream_t s) {
  const int bps = occupancy == Occupancy::kLow ? p.low_blocks_per_sm() : 0;
  launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), bps, s);
}

inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  add_stencil(v, "v0_stencil", "v0 stencil sync, full occ",
              "1D radius-3 stencil, halos loaded LDG->STS by the conditional pattern",
              stencil_v0_sync_kernel);
  v.add("v1_stream_full", "v1 stream sync, full occ",
        "4 KiB tiles LDG->STS, BAR, LDS->STG; as many blocks per SM as fit",
        [](Problem& p, cudaStream_t s) { launch_v1(p, Occupancy::kFull, s); })
      .reference = kReverseTiles;
  v.add("v1_stream_low", "v1 stream sync, low occ",
        "the same kernel at --blocks-per-sm blocks per SM (default 1)",
        [](Problem& p, cudaStream_t s) { launch_v1(p, Occupancy::kLow, s); })
      .reference = kReverseTiles;
  add_stream(v, "v2_direct_full", "v2 direct LDG->STG, full occ",
             "no shared memory: the same reversal straight from global", stream_v2_direct_kernel,
             Occupancy::kFull);
  add_stream(v, "v2_direct_low", "v2 direct LDG->STG, low occ",
             "no shared memory, at --blocks-per-sm blocks per SM", stream_v2_direct_kernel,
             Occupancy::kLow);
  add_negatives(v);
  return v.list;
}

// --timeline: v1 at --blocks-per-sm (default 1), traced on a small problem (at most
// kTimelineBytes: 16 MiB is 31 tiles per block at 1 block per SM) for the blocks on SMs 0 and
// 1. The traced run is checked like any other run.
constexpr std::uint64_t kTimelineBytes = 16u << 20;

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  const tut::RunConfig cfg = tut::timeline_config(run, kTimelineBytes);
  Problem p(cfg);
  const int bps = p.low_blocks_per_sm();
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

}  // namespace ch01
