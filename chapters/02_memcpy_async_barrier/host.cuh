// Chapter 02, host side: the variant registry. The Problem, the CPU references, the size
// settings, the launchers and the chapter 01 baselines (v0, v3) are the workload's, in
// common/workload_stencil_stream.cuh, ..._kernels.cuh and ..._baselines.cuh; kernels.cuh
// brings them into namespace ch02.
// main.cu and the chapter's tests include this file; it includes the kernels beside it.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "common/harness.cuh"
#include "common/workload_stencil_stream_baselines.cuh"
#include "kernels.cuh"
// The negative (v9) and add_negatives(), which variants() calls last.
#include "tests/negatives/02_memcpy_async_barrier.cuh"

namespace ch02 {

// The table's "vs v0" column compares every row with v0, chapter 01's stencil. The stream rows'
// baseline is v3 (chapter 01's stream at --blocks-per-sm), which the README compares them with.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  add_stencil(v, "v0_stencil", "v0 stencil sync (ch01)",
              "chapter 01's stencil: halos loaded LDG->STS by the conditional pattern, BAR.SYNC",
              tut::stencil_stream::stencil_sync_kernel);
  add_stencil(v, "v1_stencil_async", "v1 stencil memcpy_async<4>",
              "per-thread cuda::memcpy_async, aligned_size_t<4>, one cuda::barrier: LDGSTS",
              stencil_v1_async_kernel);
  add_stencil(v, "v2_stencil_bytes", "v2 stencil memcpy_async void*",
              "the same call through void* + size_t: silent fallback to byte loads/stores",
              stencil_v2_bytes_kernel);
  add_stream(v, "v3_stream_sync_low", "v3 stream sync (ch01), low occ",
             "chapter 01's 4 KiB tile reversal at --blocks-per-sm (default 1): the stream baseline",
             tut::stencil_stream::stream_sync_kernel, Occupancy::kLow);
  add_low_and_full(v, "v4_stream_async", "v4 stream memcpy_async<16>",
                   "one 16 B memcpy_async per thread + barrier (sm_90: cp.async.bulk)",
                   stream_v4_async_kernel);
  add_low_and_full(v, "v5_stream_pipe", "v5 stream memcpy_async<16> pipeline",
                   "v4's per-thread copy completed by a thread-scope cuda::pipeline: LDGSTS.128 "
                   "on sm_90 too",
                   stream_v5_pipeline_kernel);
  add_negatives(v);
  return v.list;
}

}  // namespace ch02
