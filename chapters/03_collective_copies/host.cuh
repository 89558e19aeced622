// Chapter 03, host side: the variant registry. The Problem, the CPU references, the size
// settings, the launchers and the chapter 02 baselines (v0, v4) are the workload's, in
// common/workload_stencil_stream.cuh, ..._kernels.cuh and ..._baselines.cuh; kernels.cuh
// brings them into namespace ch03.
// main.cu and the chapter's tests include this file; it includes the kernels beside it.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "common/harness.cuh"
#include "common/workload_stencil_stream_baselines.cuh"
#include "kernels.cuh"
// The negative (v9) and add_negatives(), which variants() calls last.
#include "tests/negatives/03_collective_copies.cuh"

namespace ch03 {

// The table's "vs v0" column compares every row with v0_perthread_low, chapter 02's per-thread
// kernel at --blocks-per-sm: the stream rows' baseline. The stencil rows (v5) compare with v4.
// Each stream kernel runs at --blocks-per-sm (the "_low" row) and at full occupancy ("_full").
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  add_low_and_full(v, "v0_perthread", "v0 per-thread memcpy_async (ch02)",
                   "chapter 02: each thread copies its own 16 B, cuda::barrier",
                   tut::stencil_stream::stream_async_kernel);
  add_low_and_full(v, "v1_cg", "v1 cg::memcpy_async + wait",
                   "one collective cg::memcpy_async per tile, cg::wait(block)",
                   stream_v1_cg_kernel);
  add_low_and_full(v, "v2_cuda_block", "v2 cuda::memcpy_async(block)",
                   "one collective cuda::memcpy_async per tile, aligned_size_t<16>, barrier",
                   stream_v2_cuda_block_kernel);
  add_low_and_full(v, "v3_cg_double", "v3 cg 2 buffers + wait_prior<1>",
                   "collective copies into two buffers, the next tile in flight during the use",
                   stream_v3_cg_double_kernel);
  add_stencil(v, "v4_stencil_perthread", "v4 stencil per-thread (ch02)",
              "chapter 02's stencil: centre and halos copied by the conditional pattern",
              tut::stencil_stream::stencil_async_kernel);
  add_stencil(v, "v5_stencil_block", "v5 stencil one collective copy",
              "centre + halos as one cuda::memcpy_async(block, ..., aligned_size_t<4>)",
              stencil_v5_block_kernel);
  add_negatives(v);
  return v.list;
}

}  // namespace ch03
