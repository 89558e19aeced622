/// @file gemm_args.cuh
/// @brief The arguments of one GEMM call as the kernels of chapters 15 (fp32) and 16 (bf16)
///        take them: device pointers, the shape, the row pitches and the error word.
#pragma once

namespace tut {

/// @brief C[M x N] = A * B: all three row-major, with pitches (in elements) lda, ldb, ldc that
///        are multiples of 16 bytes (what 16-byte copies and TMA global strides need). B's
///        shape is the chapter's: K x N in chapter 15, N x K ("K-major") in chapter 16.
template <class T>
struct GemmArgs {
  const T* A;
  const T* B;
  T* C;
  int M, N, K;
  int lda, ldb, ldc;
  unsigned* error;  ///< tut::ErrorWord: a bounded mbarrier wait that gave up ORs into it
};

}  // namespace tut
