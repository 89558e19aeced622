/// @file broken.cuh
/// @brief Chapter 09's broken variant: v9 is kernels.cuh's IssueAligned<16> with the source
///        address rounded down to keep its 16-byte promise, run in the same stage_slices()
///        protocol, its one wrong line marked // BUG:.
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

namespace ch09 {

// The negative: the source is 4 bytes past a 16-byte boundary, and the copy "makes" its
// 16-byte promise true by rounding the address down. Every copy is legal and in bounds (the
// buffer starts 256-byte aligned), but it copies the 4 bytes before the data and drops the
// last 4 of each chunk: the same check as every other row catches it.
struct IssueRoundedDown {
  __device__ void operator()(const Warp& warp, unsigned char* s, const unsigned char* g, int bytes,
                             Pipe& pipe) const {
    const auto* g16 = reinterpret_cast<const unsigned char*>(
        reinterpret_cast<std::uintptr_t>(g) & ~std::uintptr_t{15});  // BUG: moves the data
    IssueAligned<16>{}(warp, s, g16, bytes, pipe);  // the lesson's 16-byte copy, on the moved address
  }
};

// v9 (negative): the source 4 bytes off, "fixed" by rounding the address down
__global__ void copy_v9_rounded_down_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueRoundedDown{});
}

/// Registers v9 as a negative; ChapterProblem is main.cu's Problem (defined after this header).
template <class ChapterProblem>
void add_negatives(tut::VariantList<ChapterProblem>& v) {
  auto& v9 = v.add("v9_rounded_down_src_off4", "v9 BROKEN: <16> on src +4, rounded down",
                   "negative: a source 4 bytes off, its address rounded down to keep the 16-byte "
                   "promise; copies the wrong bytes, must FAIL",
                   [](ChapterProblem& p, cudaStream_t s) {
                     // The kernel makes its own addresses 16-byte aligned, so the launch check
                     // (the real source alignment, 4) passes and the broken kernel runs.
                     launch_copy(copy_v9_rounded_down_kernel, 4, "rounded-down aligned_size_t<16>",
                                 p.src(4), p.d_out.data(), p.cfg.size, 0, p.sms(), s);
                   });
  v9.reference = 4;
  v9.negative = true;
}

}  // namespace ch09
