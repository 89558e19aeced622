// Chapter 00's negative: v9, copy_v2_vec4_kernel (chapters/00_gpu_ceiling/kernels.cuh) without
// its tail, marked // BUG:. It must FAIL under --check-only (at every check size that is not a
// multiple of 16 bytes). The chapter's host.cuh includes this file after its Problem and calls
// add_negatives() at the end of variants().
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/harness.cuh"
#include "common/launch.cuh"

namespace ch00 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): forgets the tail words - right for multiples of 16 bytes only.
// ---------------------------------------------------------------------------------------------
__global__ void copy_v9_no_tail_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                                       std::size_t n_words) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  // BUG: n_words / 4 whole vectors, and no tail loop for the last n_words % 4 words
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n_words / 4; i += stride)
    d_out[i] = d_in[i];
}

inline void launch_copy_v9(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n_words,
                           int sms, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(copy_v9_no_tail_kernel, THREADS, sms);
  copy_v9_no_tail_kernel<<<grid, THREADS, 0, s>>>(reinterpret_cast<const uint4*>(d_in),
                                                  reinterpret_cast<uint4*>(d_out), n_words);
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_no_tail", "v9 BROKEN: drops tail words",
        "negative: ignores the last size % 16 bytes; must FAIL", [](Problem& p, cudaStream_t s) {
          launch_copy_v9(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
        })
      .negative = true;
}

}  // namespace ch00
