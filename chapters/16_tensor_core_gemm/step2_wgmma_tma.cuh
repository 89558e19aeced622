// Chapter 16, step 2: wgmma reads both operands straight from shared memory, where TMA put
// them. One warpgroup (128 threads) both issues the copies (thread 0) and the MMAs; no
// operand passes through a register on its way to the tensor cores.
#pragma once

#include "common/ring.cuh"
#include "gemm_common.cuh"

namespace ch16 {
namespace step2 {
constexpr int BM = 64, BN = 256, BK = 64, STAGES = 4, THREADS = 128;
constexpr int A_BYTES = BM * BK * 2;  //  8 KiB: 64 rows of 128 swizzled bytes
constexpr int B_BYTES = BN * BK * 2;  // 32 KiB: 256 rows
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;
}  // namespace step2

/// The four K16 slices of one stage: D += A[64 x 64] * B[256 x 64]^T as four wgmma, each
/// reading its slice 32 bytes further into the swizzled rows (descriptor + 2 = + 32 B / 16).
__device__ __forceinline__ void mma_stage(float (&d)[128], const unsigned char* a,
                                          const unsigned char* b, bool accumulate) {
  const std::uint64_t da = smem_desc_sw128(a), db = smem_desc_sw128(b);
#pragma unroll
  for (int k = 0; k < 4; ++k) wgmma_m64n256k16(d, da + 2 * k, db + 2 * k, accumulate || k > 0);
}

/// Protocol per k-tile (one mbarrier per slot, `full`: one arrival + the TMA's bytes):
///   1. all 128 threads wait for full[slot] (the TMA's bytes have landed);
///   2. wgmma.fence; four wgmma.mma_async; commit_group - the MMAs run in the background;
///   3. wgmma.wait_group 1: the PREVIOUS k-tile's batch is finished, so its slot is free...
///   4. ...for all four warps (__syncthreads), and thread 0 refills it STAGES-1 k-tiles ahead.
__global__ void __launch_bounds__(step2::THREADS)
    gemm_step2_wgmma_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  using namespace step2;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) mbarrier_init(&full[s], 1);
    fence_mbarrier_init();  // the TMA (async proxy) must see initialised barriers
  }
  __syncthreads();
  const int tiles_m = ceil_div(g.M, BM), num_tiles = tiles_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK);
  auto issue = [&](int slot, int kt, TileCoord tc) {  // thread 0 only
    unsigned char* a = ring + slot * STAGE_BYTES;
    mbarrier_arrive_expect_tx(&full[slot], STAGE_BYTES);
    tma_load_2d(a, &map_a, &full[slot], kt * BK, tc.m0);
    tma_load_2d(a + A_BYTES, &map_b, &full[slot], kt * BK, tc.n0);
  };
  tut::RingPosition<STAGES> load, use;  // continue across tiles: phases never restart
  float d[128];
  bool timed_out = false;  // see consumers_never_leave_early (gemm_common.cuh)
  for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
    const TileCoord tc = tile_coord(t, tiles_m, BM, BN);
    if (threadIdx.x == 0)
      for (int kt = 0; kt < STAGES - 1 && kt < ktiles; ++kt, load.advance()) issue(load.slot, kt, tc);
    for (int kt = 0; kt < ktiles; ++kt) {
      if (!timed_out && !tut::wait_parity_bounded(&full[use.slot], use.phase)) timed_out = true;
      wgmma_fence();
      const unsigned char* a = ring + use.slot * STAGE_BYTES;
      mma_stage(d, a, a + A_BYTES, kt > 0);
      wgmma_commit_group();
      wgmma_wait_group<1>();
      __syncthreads();
      if (threadIdx.x == 0 && kt + STAGES - 1 < ktiles) {
        issue(load.slot, kt + STAGES - 1, tc);
        load.advance();
      }
      use.advance();
    }
    wgmma_wait_group<0>();  // the last batch: accumulators complete, every slot free
    fence_accumulators(d);
    __syncthreads();
    store_accumulators(g, d, tc.m0, tc.n0);
  }
  if (timed_out) report_timeout(g);
}

}  // namespace ch16
