// Chapter 02, host side: the variant registry. The Problem, the CPU references and the size
// settings are the workload's (common/workload_stencil_stream.cuh), shared with chapters 01-03.
// main.cu and the chapter's tests include this file; it includes the kernels beside it.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "common/harness.cuh"
#include "kernels.cuh"
#include "common/workload_stencil_stream.cuh"

namespace ch02 {

using Problem = tut::stencil_stream::Problem;
using tut::stencil_stream::kReverseTiles;
using tut::stencil_stream::kStencil;

// The table's "vs v0" column compares every row with v0, chapter 01's stencil. The stream rows'
// baseline is v3 (chapter 01's stream at --blocks-per-sm), which the README compares them with.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  auto stencil = [](StencilKernel k) {
    return [k](Problem& p, cudaStream_t s) {
      launch_stencil(k, p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
    };
  };
  auto stream_low = [](StreamKernel k) {
    return [k](Problem& p, cudaStream_t s) {
      launch_stream(k, p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(), s);
    };
  };
  auto stream_full = [](StreamKernel k) {
    return [k](Problem& p, cudaStream_t s) {
      launch_stream(k, p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
    };
  };
  v.add("v0_stencil", "v0 stencil sync (ch01)",
        "chapter 01's stencil: halos loaded LDG->STS by the conditional pattern, BAR.SYNC",
        stencil(stencil_v0_sync_kernel))
      .reference = kStencil;
  v.add("v1_stencil_async", "v1 stencil memcpy_async<4>",
        "per-thread cuda::memcpy_async, aligned_size_t<4>, one cuda::barrier: LDGSTS",
        stencil(stencil_v1_async_kernel))
      .reference = kStencil;
  v.add("v2_stencil_bytes", "v2 stencil memcpy_async void*",
        "the same call through void* + size_t: silent fallback to byte loads/stores",
        stencil(stencil_v2_bytes_kernel))
      .reference = kStencil;
  v.add("v3_stream_sync_low", "v3 stream sync (ch01), low occ",
        "chapter 01's 4 KiB tile reversal at --blocks-per-sm (default 1): the stream baseline",
        stream_low(stream_v3_sync_kernel))
      .reference = kReverseTiles;
  v.add("v4_stream_async_low", "v4 stream memcpy_async<16>, low occ",
        "one 16 B memcpy_async per thread + barrier (sm_90: cp.async.bulk), --blocks-per-sm",
        stream_low(stream_v4_async_kernel))
      .reference = kReverseTiles;
  v.add("v4_stream_async_full", "v4 stream memcpy_async<16>, full occ",
        "the same kernel with as many blocks per SM as fit", stream_full(stream_v4_async_kernel))
      .reference = kReverseTiles;
  v.add("v5_stream_pipe_low", "v5 stream memcpy_async<16> pipeline, low occ",
        "v4's per-thread copy completed by a thread-scope cuda::pipeline: LDGSTS.128 on sm_90 too",
        stream_low(stream_v5_pipeline_kernel))
      .reference = kReverseTiles;
  v.add("v5_stream_pipe_full", "v5 stream memcpy_async<16> pipeline, full occ",
        "the same kernel with as many blocks per SM as fit", stream_full(stream_v5_pipeline_kernel))
      .reference = kReverseTiles;
  auto& v9 = v.add("v9_early_read", "v9 BROKEN: reads before the wait",
                   "negative: sums the tile between issuing the copies and arrive_and_wait; "
                   "must FAIL",
                   stencil(stencil_v9_early_read_kernel));
  v9.reference = kStencil;
  v9.negative = true;
  return v.list;
}

}  // namespace ch02
