// Chapter 03, host side: the variant registry. The Problem, the CPU references, the size
// settings, the launchers and the chapter 02 baselines (v0, v4) are the workload's, in
// common/workload_stencil_stream.cuh and common/workload_stencil_stream_baselines.cuh.
// main.cu and the chapter's tests include this file; it includes the kernels beside it.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "common/harness.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_baselines.cuh"
#include "kernels.cuh"

namespace ch03 {
using Problem = tut::stencil_stream::Problem;
}  // namespace ch03

// The negative (v9) and add_negatives(), which variants() calls last.
#include "tests/negatives/03_collective_copies.cuh"

namespace ch03 {

// The table's "vs v0" column compares every row with v0_perthread_low, chapter 02's per-thread
// kernel at --blocks-per-sm: the stream rows' baseline. The stencil rows (v5) compare with v4.
inline std::vector<tut::Variant<Problem>> variants() {
  namespace ss = tut::stencil_stream;
  tut::VariantList<Problem> v;
  // Each stream kernel twice: at --blocks-per-sm (the "_low" row) and at full occupancy.
  auto add_stream = [&v](const std::string& key, const std::string& name,
                         const std::string& description, ss::StreamKernel kernel) {
    v.add(key + "_low", name + ", low occ", description + " (--blocks-per-sm)",
          ss::stream_variant(kernel, ss::Occupancy::kLow))
        .reference = ss::kReverseTiles;
    v.add(key + "_full", name + ", full occ", description + " (full occupancy)",
          ss::stream_variant(kernel, ss::Occupancy::kFull))
        .reference = ss::kReverseTiles;
  };
  add_stream("v0_perthread", "v0 per-thread memcpy_async (ch02)",
             "chapter 02: each thread copies its own 16 B, cuda::barrier",
             ss::stream_async_kernel);
  add_stream("v1_cg", "v1 cg::memcpy_async + wait",
             "one collective cg::memcpy_async per tile, cg::wait(block)", stream_v1_cg_kernel);
  add_stream("v2_cuda_block", "v2 cuda::memcpy_async(block)",
             "one collective cuda::memcpy_async per tile, aligned_size_t<16>, barrier",
             stream_v2_cuda_block_kernel);
  add_stream("v3_cg_double", "v3 cg 2 buffers + wait_prior<1>",
             "collective copies into two buffers, the next tile in flight during the use",
             stream_v3_cg_double_kernel);
  v.add("v4_stencil_perthread", "v4 stencil per-thread (ch02)",
        "chapter 02's stencil: centre and halos copied by the conditional pattern",
        ss::stencil_variant(ss::stencil_async_kernel))
      .reference = ss::kStencil;
  v.add("v5_stencil_block", "v5 stencil one collective copy",
        "centre + halos as one cuda::memcpy_async(block, ..., aligned_size_t<4>)",
        ss::stencil_variant(stencil_v5_block_kernel))
      .reference = ss::kStencil;
  add_negatives(v);
  return v.list;
}

}  // namespace ch03
