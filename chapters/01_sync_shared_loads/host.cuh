// Chapter 01, host side: the variant registry. The Problem, the CPU references and the size
// settings are the workload's (common/workload_stencil_stream.cuh), shared with chapters 02-03.
// main.cu and the chapter's tests include this file; it includes the kernels beside it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/harness.cuh"
#include "common/shared_scrub.cuh"
#include "common/timeline.cuh"
#include "kernels.cuh"
#include "common/workload_stencil_stream.cuh"

namespace ch01 {

using Problem = tut::stencil_stream::Problem;
using tut::stencil_stream::kReverseTiles;
using tut::stencil_stream::kStencil;

inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_stencil", "v0 stencil sync, full occ",
        "1D radius-3 stencil, halos loaded LDG->STS by the conditional pattern",
        [](Problem& p, cudaStream_t s) {
          launch_stencil_v0(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
        })
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
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(),
                           s);
        })
      .reference = kReverseTiles;
  v.add("v2_direct_full", "v2 direct LDG->STG, full occ",
        "no shared memory: the same reversal straight from global",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
        })
      .reference = kReverseTiles;
  v.add("v2_direct_low", "v2 direct LDG->STG, low occ",
        "no shared memory, at --blocks-per-sm blocks per SM",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(),
                           s);
        })
      .reference = kReverseTiles;
  auto& v8 = v.add("v8_no_trailing_sync", "v8 BROKEN: no barrier before refill",
                   "negative: v1 without the write-after-read barrier, one warp late; FAILs "
                   "from a block's second tile on",
                   [](Problem& p, cudaStream_t s) {
                     launch_stream_v8(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), s);
                   });
  v8.reference = kReverseTiles;
  v8.negative = true;
  auto& v9 = v.add("v9_no_tail", "v9 BROKEN: drops partial tile",
                   "negative: rounds the tile count down; FAILs at sizes that are not whole tiles",
                   [](Problem& p, cudaStream_t s) {
                     launch_stream_v9(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), s);
                   });
  v9.reference = kReverseTiles;
  v9.negative = true;
  return v.list;
}

// --timeline: v1 at --blocks-per-sm (default 1), traced on a small problem (at most
// kTimelineBytes: 16 MiB is 31 tiles per block at 1 block per SM) for the blocks on SMs 0 and
// 1. The traced run is checked like any other run.
constexpr std::uint64_t kTimelineBytes = 16u << 20;

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  tut::RunConfig cfg = run;
  cfg.size = std::min<std::uint64_t>(run.size, kTimelineBytes);
  Problem p(cfg);
  const int bps = p.low_blocks_per_sm();
  const unsigned grid = stream_v1_grid<tut::TraceOn>(p.sms(), bps);
  tut::TraceRecorder rec({grid, 1, 256});
  rec.clear(s);
  p.poison(s);
  tut::scrub_shared_memory(s);
  launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), bps, s, rec.arg());
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(s));
  const tut::VerifyResult r = p.verify(s, kReverseTiles);
  if (!r.ok()) {
    std::printf("[v1_stream_low] traced run: %s\n%s", r.summary().c_str(), r.details().c_str());
    return false;
  }
  tut::KernelTrace kt{"v1_stream_low", "v1 stream sync, low occ", {"block (thread 0)"},
                      rec.download(s)};
  tut::measure_trace_overhead(  // the same launch untraced and traced, median of 20 each
      kt, s, 3, 20,
      [&](cudaStream_t st) {
        launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), bps, st);
      },
      [&](cudaStream_t st) {
        launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), bps, st, rec.arg());
      });
  const std::string command = "ch01_sync_shared_loads --timeline=" + path + " --size=" +
                              std::to_string(cfg.size) + " --blocks-per-sm=" + std::to_string(bps);
  return tut::write_timeline(path, {kt}, {"ch01_sync_shared_loads", cfg.device.name, command});
}

}  // namespace ch01
