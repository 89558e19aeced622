/// @file block_tile.cuh
/// @brief Chapter 15: the register-blocked core that v3 to v7 share (kernels.cuh): the
///        tiling constants, the 128x128xKDEPTH block-tile FMA loop (KDEPTH = BK = 16, v7: 32),
///        the store of C, and which 16-byte chunks of a stage each thread copies (v3, v4). The
///        kernels differ only in how a stage reaches shared memory, and v7 in its depth.
#pragma once

#include <cuda_runtime.h>

#include "common/gemm_args.cuh"

namespace ch15 {

// v3..v5: the register-blocked kernels. 256 threads in a 16x16 grid, each owning 8x8 outputs.
constexpr int BM = 128, BN = 128, BK = 16;  // block tile of C, and the K-depth of one stage
constexpr int TM = 8, TN = 8;               // per-thread sub-tile of C (64 accumulators)
constexpr int THREADS = (BM / TM) * (BN / TN);                 // 256
constexpr int STAGES = 4;                                      // ring depth for v4 and v5

/// Floats and bytes of one ring stage of k-depth `bk`: [A 128 x bk | B bk x 128]. v3..v6 use
/// BK = 16 (16 KiB); v7 instantiates v5 with 32-deep k-tiles (32 KiB).
__host__ __device__ constexpr int stage_floats(int bk) { return BM * bk + bk * BN; }
__host__ __device__ constexpr int stage_bytes(int bk) { return 4 * stage_floats(bk); }
constexpr int STAGE_FLOATS = stage_floats(BK);                 // [A 128x16 | B 16x128]
constexpr int STAGE_BYTES = stage_bytes(BK);                   // 16 KiB per stage
constexpr int A_CHUNKS = BM * BK / 4 / THREADS;                // 16-byte copies per thread: 2
constexpr int B_CHUNKS = BK * BN / 4 / THREADS;                // 2
static_assert(THREADS == 256 && A_CHUNKS == 2 && B_CHUNKS == 2, "tiling assumptions");

/// Row pitch in floats: the column count rounded up to 16 bytes.
__host__ __device__ constexpr int pitch_of(int cols) { return (cols + 3) / 4 * 4; }

/// One GEMM call: C[M x N] = A[M x K] * B[K x N], row-major with pitches lda, ldb, ldc, and
/// the error word v5's bounded waits report into.
using GemmArgs = tut::GemmArgs<float>;

// Thread t = 16*ty + tx owns rows ty*8 .. ty*8+7 of the block tile and two groups of four
// columns, tx*4 .. tx*4+3 and 64 + tx*4 .. 64 + tx*4+3 (split, so a warp's float4 reads of a
// B row are 16 consecutive 16-byte words: conflict-free). Shared layout of one stage:
//   s_a [BM][BK]  row-major, k contiguous  (A rows as they sit in global memory)
//   s_b [BK][BN]  row-major, n contiguous
// Per pair of k: 8 LDS.64 of A (lanes 0-15 share ty, so each is a broadcast), 4 LDS.128 of B,
// then 128 FFMA - the FFMA:LDS ratio that lets the FMA pipes, not shared memory, set the pace.
// KDEPTH is the stage's k-depth (the row pitch of s_a): BK for v3..v6, 32 for v7; each
// accumulator still sums its products in k order, one FFMA after the other, at any depth.
template <int KDEPTH>
__device__ __forceinline__ void mma_block_tile(const float* s_a, const float* s_b,
                                               float (&acc)[TM][TN], int ty, int tx) {
  static_assert(KDEPTH % 2 == 0, "A is read in pairs of k (LDS.64)");
#pragma unroll
  for (int kk = 0; kk < KDEPTH; kk += 2) {
    float2 a[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
      a[i] = *reinterpret_cast<const float2*>(s_a + (ty * TM + i) * KDEPTH + kk);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float4 b0 = *reinterpret_cast<const float4*>(s_b + (kk + h) * BN + tx * 4);
      const float4 b1 = *reinterpret_cast<const float4*>(s_b + (kk + h) * BN + BN / 2 + tx * 4);
      const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const float av = h == 0 ? a[i].x : a[i].y;
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av, b[j], acc[i][j]);
      }
    }
  }
}

/// Write the thread's 8x8 sub-tile: float4 stores where four columns are inside C (the pitch
/// keeps them 16-byte aligned), scalar stores on the ragged right edge.
__device__ __forceinline__ void store_block_tile(const GemmArgs& g, const float (&acc)[TM][TN],
                                                 int m0, int n0, int ty, int tx) {
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int row = m0 + ty * TM + i;
    if (row >= g.M) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int col = n0 + half * (BN / 2) + tx * 4;
      float* dst = g.C + row * g.ldc + col;
      const float* v = &acc[i][half * 4];
      if (col + 4 <= g.N) {
        *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < g.N) dst[j] = v[j];
      }
    }
  }
}

/// Which 16-byte chunks of a stage this thread copies, worked out once per block.
/// A tile [128 x 16]: 512 chunks, 4 per row; thread t takes chunk t (row t/4, k 4*(t%4)) and
/// chunk t + 256 (64 rows further down). B tile [16 x 128]: 512 chunks, 32 per row; thread t
/// takes row t/32, columns 4*(t%32) .. +3, and the same columns 8 rows further down. A warp
/// thus reads 8 A rows x 64 B or one 512-byte B row: whole 32-byte sectors. In both tiles the
/// thread's first chunk lands at float offset 4t and its second at 4t + 1024.
/// Per stage only the k offset moves, so the per-stage cost is a few adds and compares.
struct TileLoader {
  int a_index;       // floats from A to the first chunk at k0 = 0
  int a_k;           // the chunk's k within the tile: 0, 4, 8 or 12
  bool a_row_ok[2];  // the chunk's row is inside M (first and second chunk)
  int b_index;       // floats from B to the first chunk at k0 = 0
  int b_row;         // the first chunk's k row within the tile: 0..7
  int b_cols;        // floats of the chunk inside N (0..4): the same at every k

  __device__ __forceinline__ TileLoader(const GemmArgs& g, int tid, int m0, int n0) {
    const int a_r = tid / (BK / 4);
    a_k = (tid % (BK / 4)) * 4;
    a_index = (m0 + a_r) * g.lda + a_k;
    a_row_ok[0] = m0 + a_r < g.M;
    a_row_ok[1] = m0 + a_r + BM / 2 < g.M;
    b_row = tid / (BN / 4);
    const int b_n = (tid % (BN / 4)) * 4;
    b_index = b_row * g.ldb + n0 + b_n;
    b_cols = clamp_valid(g.N - (n0 + b_n));
  }
  static __device__ __forceinline__ int clamp_valid(int left) {
    return left < 0 ? 0 : (left > 4 ? 4 : left);
  }
  /// Floats inside the matrix for chunk p (0 or 1) of A / of B at tile depth k0.
  __device__ __forceinline__ int a_valid(const GemmArgs& g, int p, int k0) const {
    return a_row_ok[p] ? clamp_valid(g.K - (k0 + a_k)) : 0;
  }
  __device__ __forceinline__ int b_valid(const GemmArgs& g, int p, int k0) const {
    return k0 + b_row + p * (BK / 2) < g.K ? b_cols : 0;
  }
  __device__ __forceinline__ int a_offset(const GemmArgs& g, int p, int k0) const {
    return a_index + p * (BM / 2) * g.lda + k0;
  }
  __device__ __forceinline__ int b_offset(const GemmArgs& g, int p, int k0) const {
    return b_index + (k0 + p * (BK / 2)) * g.ldb;
  }
};
static_assert(A_CHUNKS == 2 && B_CHUNKS == 2 && BM * BK / 4 == 2 * THREADS, "TileLoader layout");

/// Synchronous guarded 16-byte load (v3): a float4 LDG when the chunk is whole, else scalars
/// and zeros - never a read past the edge into the (NaN) padding.
__device__ __forceinline__ float4 load_chunk(const float* src, int valid) {
  if (valid == 4) return *reinterpret_cast<const float4*>(src);
  float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int j = 0; j < valid; ++j) v[j] = src[j];
  return make_float4(v[0], v[1], v[2], v[3]);
}

}  // namespace ch15
