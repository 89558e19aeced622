// Chapter 02, host side: the variant registry. The Problem, the CPU references, the size
// settings, the launchers and the chapter 01 baselines (v0, v3) are the workload's, in
// common/workload_stencil_stream.cuh and common/workload_stencil_stream_baselines.cuh.
// main.cu and the chapter's tests include this file; it includes the kernels beside it.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "common/harness.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_baselines.cuh"
#include "kernels.cuh"

namespace ch02 {
using Problem = tut::stencil_stream::Problem;
}  // namespace ch02

// The negative (v9) and add_negatives(), which variants() calls last.
#include "tests/negatives/02_memcpy_async_barrier.cuh"

namespace ch02 {

// The table's "vs v0" column compares every row with v0, chapter 01's stencil. The stream rows'
// baseline is v3 (chapter 01's stream at --blocks-per-sm), which the README compares them with.
inline std::vector<tut::Variant<Problem>> variants() {
  namespace ss = tut::stencil_stream;
  using ss::Occupancy;
  tut::VariantList<Problem> v;
  v.add("v0_stencil", "v0 stencil sync (ch01)",
        "chapter 01's stencil: halos loaded LDG->STS by the conditional pattern, BAR.SYNC",
        ss::stencil_variant(ss::stencil_sync_kernel))
      .reference = ss::kStencil;
  v.add("v1_stencil_async", "v1 stencil memcpy_async<4>",
        "per-thread cuda::memcpy_async, aligned_size_t<4>, one cuda::barrier: LDGSTS",
        ss::stencil_variant(stencil_v1_async_kernel))
      .reference = ss::kStencil;
  v.add("v2_stencil_bytes", "v2 stencil memcpy_async void*",
        "the same call through void* + size_t: silent fallback to byte loads/stores",
        ss::stencil_variant(stencil_v2_bytes_kernel))
      .reference = ss::kStencil;
  // The stream rows: one kernel each at --blocks-per-sm (low) and, for v4 and v5, at full
  // occupancy too.
  const struct {
    const char* key;
    const char* name;
    const char* description;
    ss::StreamKernel kernel;
    Occupancy occupancy;
  } stream_rows[] = {
      {"v3_stream_sync_low", "v3 stream sync (ch01), low occ",
       "chapter 01's 4 KiB tile reversal at --blocks-per-sm (default 1): the stream baseline",
       ss::stream_sync_kernel, Occupancy::kLow},
      {"v4_stream_async_low", "v4 stream memcpy_async<16>, low occ",
       "one 16 B memcpy_async per thread + barrier (sm_90: cp.async.bulk), --blocks-per-sm",
       stream_v4_async_kernel, Occupancy::kLow},
      {"v4_stream_async_full", "v4 stream memcpy_async<16>, full occ",
       "the same kernel with as many blocks per SM as fit", stream_v4_async_kernel,
       Occupancy::kFull},
      {"v5_stream_pipe_low", "v5 stream memcpy_async<16> pipeline, low occ",
       "v4's per-thread copy completed by a thread-scope cuda::pipeline: LDGSTS.128 on sm_90 too",
       stream_v5_pipeline_kernel, Occupancy::kLow},
      {"v5_stream_pipe_full", "v5 stream memcpy_async<16> pipeline, full occ",
       "the same kernel with as many blocks per SM as fit", stream_v5_pipeline_kernel,
       Occupancy::kFull},
  };
  for (const auto& r : stream_rows)
    v.add(r.key, r.name, r.description, ss::stream_variant(r.kernel, r.occupancy)).reference =
        ss::kReverseTiles;
  add_negatives(v);
  return v.list;
}

}  // namespace ch02
