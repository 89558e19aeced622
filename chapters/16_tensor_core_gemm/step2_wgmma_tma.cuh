/// @file step2_wgmma_tma.cuh
/// @brief Chapter 16, step 2: wgmma reads both operands straight from shared memory, where TMA
///        put them. One warpgroup (128 threads) issues both the copies (thread 0) and the MMAs;
///        no operand passes through a register on its way to the tensor cores.
#pragma once

#include "common/ring.cuh"
#include "gemm_common.cuh"

namespace ch16::step2 {

constexpr int BM = 64, BN = 256, BK = 64, STAGES = 4, THREADS = 128;
constexpr int A_BYTES = BM * BK * 2;  //  8 KiB: 64 rows of 128 swizzled bytes
constexpr int B_BYTES = BN * BK * 2;  // 32 KiB: 256 rows
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;

/// Protocol per k-tile (one mbarrier per slot, `full`: one arrival + the TMA's bytes):
///   1. all 128 threads wait for full[slot] (the TMA's bytes have landed);
///   2. wgmma.fence; four wgmma.mma_async; commit_group - the MMAs run in the background;
///   3. wgmma.wait_group 1: the PREVIOUS k-tile's batch is finished, so its slot is free...
///   4. ...for all four warps (__syncthreads), and thread 0 refills it STAGES-1 k-tiles ahead.
/// The barriers are used only inside this block (no cluster): after mbarrier.init,
/// fence.proxy.async.shared::cta makes them visible to the async proxy (the TMA that completes
/// transactions on them), and __syncthreads to the other threads.
__global__ void __launch_bounds__(THREADS)
    gemm_step2_wgmma_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_proxy_async(ptx::space_shared);  // the TMA (async proxy) sees initialised barriers
  }
  __syncthreads();
  const int tiles_m = ceil_div(g.M, BM), num_tiles = tiles_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK);
  auto issue = [&](int slot, int kt, TileCoord tc) {  // thread 0 only
    unsigned char* a = ring + slot * STAGE_BYTES;
    tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
    // EXERCISE-BEGIN: arm full[slot] for this stage: the one arrival its phase needs, plus the bytes the two copies below will deliver
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[slot], STAGE_BYTES);
    // EXERCISE-END
    tma_load_2d(a, &map_a, &full[slot], kt * BK, tc.m0);
    tma_load_2d(a + A_BYTES, &map_b, &full[slot], kt * BK, tc.n0);
  };
  tut::RingPosition<STAGES> load, use;  // continue across tiles: phases never restart
  float d[128];
  bool timed_out = false;  // a timed-out consumer never leaves early (gemm_common.cuh)
  for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
    if (threadIdx.x == 0)
      for (int kt = 0; kt < STAGES - 1 && kt < ktiles; ++kt, load.advance()) issue(load.slot, kt, tc);
    for (int kt = 0; kt < ktiles; ++kt) {
      const auto site = tut::WaitSite::consumer_warpgroup(0)
                            .on(tut::Barrier::kFull, use.slot)
                            .at_k_tile(kt)
                            .expecting(STAGE_BYTES);
      if (!timed_out && !tut::wait_or_report(&full[use.slot], use.phase, g.error, site))
        timed_out = true;
      tut::wgmma_fence();
      const unsigned char* a = ring + use.slot * STAGE_BYTES;
      mma_stage(d, a, a + A_BYTES, kt > 0);
      tut::wgmma_commit_group();
      // EXERCISE-BEGIN: before the barrier after which thread 0 refills the previous k-tile's slot, make sure the MMAs that read it are done, while this k-tile's keep running
      tut::wgmma_wait_group<1>();  // the previous k-tile's MMAs have read their slot
      // EXERCISE-END
      tut::perturb(tut::Perturb::kBeforeRelease, kt);
      __syncthreads();             // ... in all four warps: thread 0 may refill it
      if (threadIdx.x == 0 && kt + STAGES - 1 < ktiles) {
        issue(load.slot, kt + STAGES - 1, tc);
        load.advance();
      }
      use.advance();
    }
    tut::wgmma_wait_group<0>();  // the last batch: accumulators complete, every slot free
    tut::fence_accumulators(d);
    __syncthreads();
    store_accumulators(g, d, tc.m0, tc.n0);
  }
}

/// One block per 64 x 256 tile; `kernel` is step 2's or a negative copy of it (broken.cuh).
template <class Kernel>
void launch_kernel(Kernel kernel, const CUtensorMap& a64, const CUtensorMap& b256,
                   const GemmArgs& g, cudaStream_t s) {
  const int fit = tut::resident_occupancy(kernel, THREADS, SMEM_BYTES);
  const int tiles = ceil_div(g.M, BM) * ceil_div(g.N, BN);
  kernel<<<tile_grid(tiles, fit), THREADS, SMEM_BYTES, s>>>(a64, b256, g);
}

inline void launch(const CUtensorMap& a64, const CUtensorMap& b256, const GemmArgs& g,
                   cudaStream_t s) {
  launch_kernel(gemm_step2_wgmma_kernel, a64, b256, g, s);
}

}  // namespace ch16::step2
