/// @file broken.cuh
/// @brief Chapter 00's deliberately broken variant: v9, a copy of copy_v2_vec4_kernel
///        (kernels.cuh) without its tail, the changed line marked // BUG:. It must FAIL under
///        --check-only at every check size that is not a multiple of 16 bytes.
///
/// main.cu calls add_negatives() at the end of its registry; add_negatives() is a template on
/// the chapter's Problem (defined in main.cu) so that this header compiles on its own.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/harness.cuh"
#include "common/launch.cuh"
#include "kernels.cuh"

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
  tut::launch_persistent(copy_v9_no_tail_kernel, THREADS, 0, sms, 0, s,
                         reinterpret_cast<const uint4*>(d_in), reinterpret_cast<uint4*>(d_out),
                         n_words);
}

/// @brief Registers v9 (negative) in the chapter's variant list.
template <class Problem>
void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_no_tail", "v9 BROKEN: drops tail words",
        "negative: ignores the last size % 16 bytes; must FAIL", [](Problem& p, cudaStream_t s) {
          launch_copy_v9(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
        })
      .negative = true;
}

}  // namespace ch00
