// Chapter 03, host side: the variant registry. The Problem, the CPU references and the size
// settings are the workload's (common/workload_stencil_stream.cuh), shared with chapters 01-03.
// main.cu and the chapter's tests include this file; it includes the kernels beside it.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "common/harness.cuh"
#include "kernels.cuh"
#include "common/workload_stencil_stream.cuh"

namespace ch03 {

using Problem = tut::stencil_stream::Problem;
using tut::stencil_stream::kReverseTiles;
using tut::stencil_stream::kStencil;

// The table's "vs v0" column compares every row with v0_perthread_low, chapter 02's per-thread
// kernel at --blocks-per-sm: the stream rows' baseline. The stencil rows (v5) compare with v4.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  // One stream kernel at --blocks-per-sm (the "_low" row) and at full occupancy ("_full").
  auto add_stream = [&v](const std::string& key, const std::string& name,
                         const std::string& description, StreamKernel kernel) {
    v.add(key + "_low", name + ", low occ", description + " (--blocks-per-sm)",
          [kernel](Problem& p, cudaStream_t s) {
            launch_stream(kernel, p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(),
                          p.low_blocks_per_sm(), s);
          })
        .reference = kReverseTiles;
    v.add(key + "_full", name + ", full occ", description + " (full occupancy)",
          [kernel](Problem& p, cudaStream_t s) {
            launch_stream(kernel, p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
          })
        .reference = kReverseTiles;
  };
  auto stencil = [](StencilKernel kernel) {
    return [kernel](Problem& p, cudaStream_t s) {
      launch_stencil(kernel, p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
    };
  };
  add_stream("v0_perthread", "v0 per-thread memcpy_async (ch02)",
             "chapter 02: each thread copies its own 16 B, cuda::barrier",
             stream_v0_perthread_kernel);
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
        stencil(stencil_v4_perthread_kernel))
      .reference = kStencil;
  v.add("v5_stencil_block", "v5 stencil one collective copy",
        "centre + halos as one cuda::memcpy_async(block, ..., aligned_size_t<4>)",
        stencil(stencil_v5_block_kernel))
      .reference = kStencil;
  auto& v9 = v.add("v9_one_warp", "v9 BROKEN: one warp calls",
                   "negative: only warp 0 makes the collective call; must FAIL",
                   [](Problem& p, cudaStream_t s) {
                     launch_stream(stream_v9_one_warp_kernel, p.in_vecs(), p.out_vecs(),
                                   p.n_vecs(), p.sms(), 0, s);
                   });
  v9.reference = kReverseTiles;
  v9.negative = true;
  return v.list;
}

}  // namespace ch03
