// Chapter 16's negatives: copies of gemm_step2_wgmma_kernel (chapters/16_tensor_core_gemm/
// step2_wgmma_tma.cuh) and gemm_step3_warp_specialized_kernel (kernels.cuh there), each with one
// change marked BUG. Each must FAIL under --check-only. The chapter's host.cuh includes this
// file after its Problem; the launchers are the steps' own (launchers.cuh).
//   wrong swizzle        step 2 with descriptors that do not say "128-byte swizzle"
//   missing wait         step 3 releasing each slot without wgmma.wait_group (a missing wait
//                        before the epilogue would not do: ptxas sees the accumulator
//                        registers in use and inserts that wait itself, C7517)
//   parity from lap 2    step 3 whose consumers wait on a fixed parity
// A missing fence.proxy.async before step 5's TMA store is not among them: on the H200 that
// race never showed in --check-only (the chapter README, "When it does not help"); a SASS rule pins
// the fence instead.
#pragma once

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/harness.cuh"
#include "common/ring.cuh"

namespace ch16 {

__global__ void __launch_bounds__(step2::THREADS)
    gemm_neg_wrong_swizzle_kernel(const __grid_constant__ CUtensorMap map_a,
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
      // BUG: descriptors say "no swizzle" (mode 0), but TMA wrote 128-byte swizzled rows
      const std::uint64_t da = smem_desc_sw128(a) & ~(std::uint64_t{3} << 62);
      const std::uint64_t db = smem_desc_sw128(a + A_BYTES) & ~(std::uint64_t{3} << 62);
      for (int k = 0; k < 4; ++k) wgmma_m64n256k16(d, da + 2 * k, db + 2 * k, kt > 0 || k > 0);
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

__global__ void __launch_bounds__(ws::THREADS, 1)
    gemm_neg_missing_wait_kernel(const __grid_constant__ CUtensorMap map_a,
                                       const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  using namespace ws;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[STAGES], empty[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], CONSUMER_WARPS);
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the last block-wide barrier: from here on the roles never meet
  const int tiles_m = ceil_div(g.M, BM), num_tiles = tiles_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK);
  const int warpgroup = threadIdx.x / 128;
  tut::RingPosition<STAGES> pos;  // each role walks the same ring, in the same order

  if (warpgroup == 0) {  // ---- producer ----
    setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x >= 32 || !elect_one_lane()) return;  // one lane of warp 0 issues
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
      const TileCoord tc = tile_coord(t, tiles_m, BM, BN);
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        if (!tut::wait_parity_bounded(&empty[pos.slot], pos.phase ^ 1)) return report_timeout(g);
        mbarrier_arrive_expect_tx(&full[pos.slot], STAGE_BYTES);
        unsigned char* a = ring + pos.slot * STAGE_BYTES;
        tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
        tma_load_2d(a + A_BYTES, &map_b, &full[pos.slot], kt * BK, tc.n0);
      }
    }
  } else {  // ---- consumers: warpgroup 1 rows 0..63, warpgroup 2 rows 64..127 ----
    setmaxnreg_inc<CONSUMER_REGS>();
    const int row0 = (warpgroup - 1) * 64;
    const bool arrives = threadIdx.x % 32 == 0;  // one arrival per warp
    bool timed_out = false;  // see consumers_never_leave_early (gemm_common.cuh)
    float d[128];
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
      const TileCoord tc = tile_coord(t, tiles_m, BM, BN);
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        if (!timed_out && !tut::wait_parity_bounded(&full[pos.slot], pos.phase)) timed_out = true;
        wgmma_fence();
        const unsigned char* a = ring + pos.slot * STAGE_BYTES;
        mma_stage(d, a + row0 * 128, a + A_BYTES, kt > 0);
        wgmma_commit_group();
        // BUG: no wgmma.wait_group before the release - the MMAs may not have read the slot yet
        if (arrives && !timed_out) mbarrier_arrive(&empty[pos.slot]);
      }
      wgmma_wait_group<0>();
      fence_accumulators(d);
      store_accumulators(g, d, tc.m0 + row0, tc.n0);
    }
    if (timed_out) report_timeout(g);
  }
}

__global__ void __launch_bounds__(ws::THREADS, 1)
    gemm_neg_parity_kernel(const __grid_constant__ CUtensorMap map_a,
                                       const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  using namespace ws;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[STAGES], empty[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], CONSUMER_WARPS);
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the last block-wide barrier: from here on the roles never meet
  const int tiles_m = ceil_div(g.M, BM), num_tiles = tiles_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK);
  const int warpgroup = threadIdx.x / 128;
  tut::RingPosition<STAGES> pos;  // each role walks the same ring, in the same order

  if (warpgroup == 0) {  // ---- producer ----
    setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x >= 32 || !elect_one_lane()) return;  // one lane of warp 0 issues
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
      const TileCoord tc = tile_coord(t, tiles_m, BM, BN);
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        if (!tut::wait_parity_bounded(&empty[pos.slot], pos.phase ^ 1)) return report_timeout(g);
        mbarrier_arrive_expect_tx(&full[pos.slot], STAGE_BYTES);
        unsigned char* a = ring + pos.slot * STAGE_BYTES;
        tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
        tma_load_2d(a + A_BYTES, &map_b, &full[pos.slot], kt * BK, tc.n0);
      }
    }
  } else {  // ---- consumers: warpgroup 1 rows 0..63, warpgroup 2 rows 64..127 ----
    setmaxnreg_inc<CONSUMER_REGS>();
    const int row0 = (warpgroup - 1) * 64;
    const bool arrives = threadIdx.x % 32 == 0;  // one arrival per warp
    bool timed_out = false;  // see consumers_never_leave_early (gemm_common.cuh)
    float d[128];
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
      const TileCoord tc = tile_coord(t, tiles_m, BM, BN);
      int previous_slot = -1;
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        // BUG: parity fixed at 0 - right on the first lap, wrong from the second: the wait
        // either passes before the k-tile has landed or waits for a phase that cannot come
        if (!timed_out && !tut::wait_parity_bounded(&full[pos.slot], 0)) timed_out = true;
        wgmma_fence();
        const unsigned char* a = ring + pos.slot * STAGE_BYTES;
        mma_stage(d, a + row0 * 128, a + A_BYTES, kt > 0);
        wgmma_commit_group();
        wgmma_wait_group<1>();
        if (previous_slot >= 0 && arrives && !timed_out) mbarrier_arrive(&empty[previous_slot]);
        previous_slot = pos.slot;
      }
      wgmma_wait_group<0>();
      if (arrives && !timed_out) mbarrier_arrive(&empty[previous_slot]);
      fence_accumulators(d);
      store_accumulators(g, d, tc.m0 + row0, tc.n0);
    }
    if (timed_out) report_timeout(g);
  }
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  v.add("neg_wrong_swizzle", "BUG: descriptor without swizzle",
        "step 2 whose wgmma descriptors say no swizzle over 128-byte swizzled tiles; must FAIL",
        [](Problem& p, cudaStream_t s) {
          launch_step2_kernel(gemm_neg_wrong_swizzle_kernel, p.map_a64, p.map_b256, p.args(), s);
        })
      .negative = true;
  v.add("neg_missing_wait", "BUG: slot released before wgmma.wait_group",
        "step 3 handing each slot back right after issuing its MMAs, before they read it; "
        "must FAIL",
        [](Problem& p, cudaStream_t s) {
          launch_step3_kernel(gemm_neg_missing_wait_kernel, p.map_a128, p.map_b256, p.args(), s);
        })
      .negative = true;
  v.add("neg_parity_lap2", "BUG: full-barrier parity fixed at 0",
        "step 3 whose consumers wait on parity 0 every lap: wrong from the second lap; "
        "must FAIL",
        [](Problem& p, cudaStream_t s) {
          launch_step3_kernel(gemm_neg_parity_kernel, p.map_a128, p.map_b256, p.args(), s);
        })
      .negative = true;
}

}  // namespace ch16
