/// @file broken.cuh
/// @brief Chapter 15's negative: a copy of gemm_v2_smem_kernel (kernels.cuh) with the line that
///        places B's tile broken and marked BUG, its launcher and its registration. It must
///        FAIL under --check-only.
#pragma once

#include <cuda_runtime.h>

#include "common/harness.cuh"
#include "common/launch.cuh"
#include "kernels.cuh"

namespace ch15 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): v2 with B's tile loaded at A's block offset
// ---------------------------------------------------------------------------------------------
// On the diagonal blocks the two offsets agree, so a one-block matrix passes, and with
// constant inputs every block passes. With unique inputs every off-diagonal block is wrong.
__global__ void __launch_bounds__(T2* T2) gemm_v9_wrong_b_offset_kernel(GemmArgs g) {
  __shared__ float s_a[T2][T2];
  __shared__ float s_b[T2][T2];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * T2 + ty, col = blockIdx.x * T2 + tx;
  const int b_col = blockIdx.y * T2 + tx;  // BUG: should be blockIdx.x * T2 + tx (== col)
  float acc = 0.0f;
  for (int k0 = 0; k0 < g.K; k0 += T2) {
    s_a[ty][tx] = row < g.M && k0 + tx < g.K ? g.A[row * g.lda + k0 + tx] : 0.0f;
    s_b[ty][tx] = k0 + ty < g.K && b_col < g.N ? g.B[(k0 + ty) * g.ldb + b_col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T2; ++k) acc = fmaf(s_a[ty][k], s_b[k][tx], acc);
    __syncthreads();
  }
  if (row < g.M && col < g.N) g.C[row * g.ldc + col] = acc;
}

inline void launch_gemm_v9(const GemmArgs& g, cudaStream_t s) {
  static const int per_sm = tut::max_blocks_per_sm(gemm_v9_wrong_b_offset_kernel, T2 * T2);
  const dim3 grid = grid_over_c(g, T2, T2);
  record(grid, per_sm);
  gemm_v9_wrong_b_offset_kernel<<<grid, dim3(T2, T2), 0, s>>>(g);
}

/// Registers the negative on the chapter's variant list (@p Problem: main.cu's).
template <class Problem>
void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_wrong_b_offset", "v9 BROKEN: B tile at A's offset",
        "negative: v2 loading B's tile with the row-block offset; must FAIL",
        [](Problem& p, cudaStream_t s) { launch_gemm_v9(p.args(), s); })
      .negative = true;
}

}  // namespace ch15
