// Chapter 16: what every GEMM step shares - the arguments, the tile walk, and the two ways
// an accumulator fragment reaches C in global memory.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/gemm_args.cuh"
#include "sm90.cuh"

namespace ch16 {

/// C[M x N] = A[M x K] * B[N x K]^T. All three row-major with pitches (elements) lda, ldb,
/// ldc, each a multiple of 8 (16 bytes: TMA's rule for global strides). So A and B are both
/// "K-major": a row of A and a row of B run along K, which is what wgmma reads without a
/// transpose and what cuBLAS calls "TN". A bounded mbarrier wait that gave up ORs into error.
using GemmArgs = tut::GemmArgs<bf16>;

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// Output tile `t` of a grid-stride walk: column-major over tiles, so neighbouring blocks
/// share the same B rows (the same N block) and read consecutive A blocks.
struct TileCoord {
  int m0, n0;
};
__device__ __forceinline__ TileCoord tile_coord(int t, int tiles_m, int bm, int bn) {
  return TileCoord{(t % tiles_m) * bm, (t / tiles_m) * bn};
}

/// Two adjacent fp32 results rounded to bf16 and stored as one 4-byte pair (ldc and col are
/// even), masked at the ragged right and bottom edges.
__device__ __forceinline__ void store_pair(const GemmArgs& g, int row, int col, float v0,
                                           float v1) {
  if (row >= g.M || col >= g.N) return;
  bf16* p = g.C + static_cast<std::size_t>(row) * g.ldc + col;
  if (col + 1 < g.N)
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
  else
    *p = __float2bfloat16_rn(v0);
}

/// The 64 x 256 accumulator of one warpgroup (wgmma's fragment layout, see sm90.cuh) stored
/// straight from registers at rows m0.., columns n0.. of C.
__device__ __forceinline__ void store_accumulators(const GemmArgs& g, const float (&d)[128],
                                                   int m0, int n0) {
  const int t = threadIdx.x % 128;
  const int row = m0 + 16 * (t / 32) + (t % 32) / 4;
  const int col = n0 + 2 * (t % 4);
#pragma unroll
  for (int j = 0; j < 128; j += 4) {
    store_pair(g, row, col + 8 * (j / 4), d[j], d[j + 1]);
    store_pair(g, row + 8, col + 8 * (j / 4), d[j + 2], d[j + 3]);
  }
}

/// Shared memory for the ring, moved up to the 1024-byte boundary that 128-byte swizzled
/// tiles need (the launchers add 1024 bytes of slack).
__device__ __forceinline__ unsigned char* align_1024(unsigned char* p) {
  const std::uint32_t off = tut::smem_addr(p) & 1023u;
  return off ? p + (1024 - off) : p;
}

/// A bounded wait that failed: say so in the error word (verify() reports it).
/// consumers_never_leave_early: a producer thread that times out simply returns, but a
/// consumer must not. wgmma is warpgroup-collective (.sync.aligned): if one warp left while
/// the other three (whose wait may have succeeded a moment later) went on, their next wgmma
/// would be an illegal instruction. So after a timeout a consumer stops waiting AND stops
/// releasing slots (the producer then times out too, instead of re-arming a barrier whose
/// phase is still open), runs its loops to the end on whatever the slots hold, and reports.
__device__ __forceinline__ void report_timeout(const GemmArgs& g) {
  atomicOr(g.error, tut::kErrorWaitTimedOut);
}

}  // namespace ch16
