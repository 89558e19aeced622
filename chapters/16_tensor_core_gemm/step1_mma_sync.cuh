/// @file step1_mma_sync.cuh
/// @brief Chapter 16, step 1: the Ampere way. Tensor cores through mma.sync (m16n8k16, one
///        warp per instruction), fed by a 4-stage cp.async ring.
///
/// Every operand byte makes two trips through the threads: cp.async (global -> shared, no
/// registers) and ldmatrix (shared -> registers) before the MMA can use it, and the 256
/// threads that issue the MMAs also issue every copy.
#pragma once

#include "common/cp_async.cuh"
#include "common/ring.cuh"
#include "gemm_common.cuh"

namespace ch16::step1 {

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 4, THREADS = 256;
constexpr int LDS = BK + 8;  // a shared row is 80 bytes: 8 ldmatrix rows hit 8 distinct 16-B bank groups
constexpr int SLOT_ELEMS = (BM + BN) * LDS;
constexpr int SMEM_BYTES = STAGES * SLOT_ELEMS * 2;  // 80 KiB

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const bf16* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(tut::smem_addr(p)));
}
__device__ __forceinline__ void mma_m16n8k16(float (&c)[4], const std::uint32_t (&a)[4],
                                             std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7},"
      " {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// One k-tile (BK columns of K) of the A and B blocks into a ring slot: 16-byte cp.async
/// chunks, zero-filled past M, N or K (src_bytes < 16), so edges need no other masking.
__device__ __forceinline__ void load_slot(bf16* slot, const GemmArgs& g, int m0, int n0, int k0) {
  constexpr int CHUNKS = BK / 8;  // 16-byte chunks per row
  for (int c = threadIdx.x; c < (BM + BN) * CHUNKS; c += THREADS) {
    const int r = c / CHUNKS, k = k0 + (c % CHUNKS) * 8;
    const bool is_a = r < BM;
    const int grow = is_a ? m0 + r : n0 + (r - BM);
    const int rows = is_a ? g.M : g.N;
    const int valid = grow < rows ? max(0, min(8, g.K - k)) : 0;
    const bf16* base = is_a ? g.A : g.B;
    const bf16* src = valid > 0 ? base + static_cast<std::size_t>(grow) * (is_a ? g.lda : g.ldb) + k : base;
    tut::cp_async_cg16(slot + r * LDS + (c % CHUNKS) * 8, src, valid * 2);
  }
}

/// 8 warps as 2 x 4, each computing 64 x 32 of the 128 x 128 tile: per K16 step 4 A
/// fragments and 4 B fragments by ldmatrix, then 16 mma.sync.
__global__ void __launch_bounds__(THREADS)
    gemm_step1_mma_sync_kernel(GemmArgs g) {
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* ring = reinterpret_cast<bf16*>(smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
  const int tiles_m = ceil_div(g.M, BM), num_tiles = tiles_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK);
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
    float acc[4][4][4] = {};
    // Prologue: k-tiles 0 .. STAGES-2 in flight, one commit group each (an empty group past
    // the end keeps "the N newest groups" counting k-tiles).
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < ktiles) load_slot(ring + s * SLOT_ELEMS, g, tc.m0, tc.n0, s * BK);
      tut::cp_async_commit_group();
    }
    tut::RingPosition<STAGES> read, write;  // slot computed now, slot refilled now
    write.slot = STAGES - 1;
    for (int kt = 0; kt < ktiles; ++kt) {
      tut::cp_async_wait_group<STAGES - 2>();  // my copies of k-tile kt have landed...
      __syncthreads();  // ...and everyone's; and everyone is done computing k-tile kt-1,
                        // whose slot is the one refilled next
      if (kt + STAGES - 1 < ktiles)
        load_slot(ring + write.slot * SLOT_ELEMS, g, tc.m0, tc.n0, (kt + STAGES - 1) * BK);
      tut::cp_async_commit_group();
      write.advance();
      const bf16* sa = ring + read.slot * SLOT_ELEMS;
      const bf16* sb = sa + BM * LDS;
#pragma unroll
      for (int kk = 0; kk < BK; kk += 16) {
        std::uint32_t a[4][4], b[2][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
          ldmatrix_x4(a[i], sa + (wm + i * 16 + lane % 16) * LDS + kk + (lane / 16) * 8);
#pragma unroll
        for (int j = 0; j < 2; ++j)
          ldmatrix_x4(b[j], sb + (wn + j * 16 + lane % 8 + (lane / 16) * 8) * LDS + kk +
                                ((lane / 8) % 2) * 8);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int n = 0; n < 4; ++n)
            mma_m16n8k16(acc[i][n], a[i], b[n / 2][(n % 2) * 2], b[n / 2][(n % 2) * 2 + 1]);
      }
      read.advance();
    }
    __syncthreads();  // all warps are done with the ring before the next tile's prologue
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        const int row = tc.m0 + wm + i * 16 + lane / 4, col = tc.n0 + wn + n * 8 + (lane % 4) * 2;
        store_pair(g, row, col, acc[i][n][0], acc[i][n][1]);
        store_pair(g, row + 8, col, acc[i][n][2], acc[i][n][3]);
      }
  }
}

/// One block per 128 x 128 tile; two fit on an SM (80 KiB of shared memory and 128
/// registers x 256 threads each), which the table's blocks/SM column reports.
inline void launch(const GemmArgs& g, cudaStream_t s) {
  const int fit = tut::resident_occupancy(gemm_step1_mma_sync_kernel, THREADS, SMEM_BYTES);
  const int tiles = ceil_div(g.M, BM) * ceil_div(g.N, BN);
  gemm_step1_mma_sync_kernel<<<tile_grid(tiles, fit), THREADS, SMEM_BYTES, s>>>(g);
}

}  // namespace ch16::step1
