/// @file broken.cuh
/// @brief Chapter 08's broken variant: v9 is kernels.cuh's IssueConverged with its copy
///        restricted to the issuing lanes of v1-v3, run in the same reverse_slices() protocol,
///        its one wrong line marked // BUG:.
///
/// It is registered as a negative (add_negatives(), which main.cu's variants() calls last), so
/// `--check-only` and the `_negatives` test require it to FAIL: the check must be able to see
/// this mistake.
#pragma once

#include <cuda/pipeline>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/harness.cuh"
#include "kernels.cuh"

namespace ch08 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): the common pattern taken literally - half the lanes copy their own chunk only
// ---------------------------------------------------------------------------------------------
// Lanes with lane % 16 >= 8 never copy, and nobody copies for them: chunks 8-15 and 24-31 of
// every slice are never staged, so their outputs come from whatever the slot held. Unique
// inputs make that fail at every check size with more than 8 chunks in a slice.
struct IssueHalfOnly {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe& pipe) const {
    if (is_issuer(lane) && lane < m)  // BUG: nobody covers the other half of the slice
      cuda::memcpy_async(s + lane, g + lane, cuda::aligned_size_t<16>(16), pipe);
  }
};
__global__ void slice_v9_half_only_kernel(const Chunk* d_in, Chunk* d_out, std::size_t n) {
  reverse_slices(d_in, d_out, n, IssueHalfOnly{});
}

/// Registers v9 as a negative; ChapterProblem is main.cu's Problem (defined after this header).
template <class ChapterProblem>
void add_negatives(tut::VariantList<ChapterProblem>& v) {
  v.add("v9_half_only", "v9 BROKEN: half the lanes copy",
        "negative: only lanes with lane%16<8 copy, each its own chunk; half of each slice is "
        "never staged",
        [](ChapterProblem& p, cudaStream_t s) {
          launch_slice(slice_v9_half_only_kernel, p.d_in.data(), p.d_out.data(), p.n_chunks(),
                       p.sms(), 0, s);
        })
      .negative = true;
}

}  // namespace ch08
