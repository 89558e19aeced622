/// @file broken.cuh
/// @brief Chapter 16's negatives: copies of step 2's and step 3's kernels, each with one
///        line marked `// BUG:`, and their registration. Each must FAIL under --check-only.
///
///     neg_wrong_swizzle   step 2 with descriptors that do not say "128-byte swizzle":
///                         deterministic, every element is wrong
///     neg_parity_lap2     step 3 whose consumers wait on a fixed parity: deterministic once a
///                         block walks a second lap of the ring (the harness's lap check)
///     neg_missing_wait    step 3 releasing each slot without wgmma.wait_group. A RACE: it
///                         fails only when the TMA refill lands before the queued MMAs have
///                         read the slot. Nothing forces that order; it is what happened in the
///                         runs of the GPU job (a missing wait before the epilogue would not do
///                         at all: ptxas sees the accumulators in use and inserts that wait
///                         itself, C7517). The rule that the empty arrive follows
///                         `wgmma.wait_group 1` (asm_expect.txt) catches it without a GPU.
/// A `wgmma.wait_group 2` where step 3 has 1 (the release then comes while the previous k-tile's
/// MMAs may still run) is not among them. It was registered as a perturbation negative and
/// PASSED on the H200 even in the TUTORIAL_PERTURB build (seed 7, the first the perturb test
/// tries, in the GPU job of 2026-12-02; docs/results/h200/notes/ch16.md).
/// A hypothesis, from the sizes, not measured: at the release the unfinished group is at the head
/// of the warpgroup's queue and needs about a quarter of a microsecond more (64x256x64 MACs at
/// the SM's tensor rate), while the refill cannot land before the producer wakes and a TMA
/// round trip to L2 completes (around half a microsecond or more); a sleep in a thread only
/// lengthens the refill's side or comes before the MMAs are issued, so no delay the
/// perturbation build can place reorders the two. The asm_expect rule on the wait's operand
/// (`WARPGROUP.DEPBAR.LE gsb0, 0x1` before the empty arrival) is what catches it.
/// A missing fence.proxy.async before step 5's TMA store is not among them: on the H200 that
/// race never showed in --check-only (README, "When it helps"); the order-aware SASS rule
/// (STS ... FENCE.VIEW.ASYNC.S ... UTMASTG) pins the fence instead.
#pragma once

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/harness.cuh"
#include "common/perturb.cuh"
#include "common/ring.cuh"
#include "kernels.cuh"

namespace ch16 {

__global__ void __launch_bounds__(step2::THREADS)
    gemm_neg_wrong_swizzle_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  using namespace step2;
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
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                   &full[slot], STAGE_BYTES);
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
      // BUG: descriptors say "no swizzle" (mode 0), but TMA wrote 128-byte swizzled rows
      const std::uint64_t da = tut::smem_desc_sw128(a) & ~(std::uint64_t{3} << 62);
      const std::uint64_t db = tut::smem_desc_sw128(a + A_BYTES) & ~(std::uint64_t{3} << 62);
      for (int k = 0; k < 4; ++k) tut::wgmma_m64n256k16(d, da + 2 * k, db + 2 * k, kt > 0 || k > 0);
      tut::wgmma_commit_group();
      tut::wgmma_wait_group<1>();  // the previous k-tile's MMAs have read their slot
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

__global__ void __launch_bounds__(step3::THREADS, 1)
    gemm_neg_missing_wait_kernel(const __grid_constant__ CUtensorMap map_a,
                                       const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  using namespace step3;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[STAGES], empty[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMER_WARPS);
    }
    ptx::fence_proxy_async(ptx::space_shared);  // the TMA (async proxy) sees initialised barriers
  }
  __syncthreads();  // the last block-wide barrier: from here on the roles never meet
  const int tiles_m = ceil_div(g.M, BM), num_tiles = tiles_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK);
  const int warpgroup = threadIdx.x / 128;
  tut::RingPosition<STAGES> pos;  // each role walks the same ring, in the same order

  if (warpgroup == 0) {  // ---- producer ----
    tut::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x >= 32 || !tut::elect_one_lane()) return;  // one lane of warp 0 issues
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        // The consumers have released this slot. On the first lap every slot is free: waiting
        // on the parity of the phase BEFORE the current one returns at once.
        const auto site = tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, pos.slot).at_k_tile(kt);
        if (!tut::wait_or_report(&empty[pos.slot], pos.phase ^ 1, g.error, site)) return;
        tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                       &full[pos.slot], STAGE_BYTES);
        unsigned char* a = ring + pos.slot * STAGE_BYTES;
        tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
        tma_load_2d(a + A_BYTES, &map_b, &full[pos.slot], kt * BK, tc.n0);
      }
    }
  } else {  // ---- consumers: warpgroup 1 rows 0..63, warpgroup 2 rows 64..127 ----
    tut::setmaxnreg_inc<CONSUMER_REGS>();
    const int row0 = (warpgroup - 1) * 64;
    const bool arrives = threadIdx.x % 32 == 0;  // one arrival per warp
    bool timed_out = false;  // a timed-out consumer never leaves early (gemm_common.cuh)
    float d[128];
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        const auto site = tut::WaitSite::consumer_warpgroup(warpgroup)
                              .on(tut::Barrier::kFull, pos.slot)
                              .at_k_tile(kt)
                              .expecting(STAGE_BYTES);
        if (!timed_out && !tut::wait_or_report(&full[pos.slot], pos.phase, g.error, site))
          timed_out = true;
        tut::wgmma_fence();
        const unsigned char* a = ring + pos.slot * STAGE_BYTES;
        mma_stage(d, a + row0 * 128, a + A_BYTES, kt > 0);
        tut::wgmma_commit_group();
        // BUG: no wgmma.wait_group before the release - the MMAs may not have read the slot yet
        if (arrives && !timed_out) ptx::mbarrier_arrive(&empty[pos.slot]);
      }
      tut::wgmma_wait_group<0>();
      tut::fence_accumulators(d);
      store_accumulators(g, d, tc.m0 + row0, tc.n0);
    }
  }
}

__global__ void __launch_bounds__(step3::THREADS, 1)
    gemm_neg_parity_kernel(const __grid_constant__ CUtensorMap map_a,
                                       const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  using namespace step3;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[STAGES], empty[STAGES];
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMER_WARPS);
    }
    ptx::fence_proxy_async(ptx::space_shared);  // the TMA (async proxy) sees initialised barriers
  }
  __syncthreads();  // the last block-wide barrier: from here on the roles never meet
  const int tiles_m = ceil_div(g.M, BM), num_tiles = tiles_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK);
  const int warpgroup = threadIdx.x / 128;
  tut::RingPosition<STAGES> pos;  // each role walks the same ring, in the same order

  if (warpgroup == 0) {  // ---- producer ----
    tut::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x >= 32 || !tut::elect_one_lane()) return;  // one lane of warp 0 issues
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        // The consumers have released this slot. On the first lap every slot is free: waiting
        // on the parity of the phase BEFORE the current one returns at once.
        const auto site = tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, pos.slot).at_k_tile(kt);
        if (!tut::wait_or_report(&empty[pos.slot], pos.phase ^ 1, g.error, site)) return;
        tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                       &full[pos.slot], STAGE_BYTES);
        unsigned char* a = ring + pos.slot * STAGE_BYTES;
        tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
        tma_load_2d(a + A_BYTES, &map_b, &full[pos.slot], kt * BK, tc.n0);
      }
    }
  } else {  // ---- consumers: warpgroup 1 rows 0..63, warpgroup 2 rows 64..127 ----
    tut::setmaxnreg_inc<CONSUMER_REGS>();
    const int row0 = (warpgroup - 1) * 64;
    const bool arrives = threadIdx.x % 32 == 0;  // one arrival per warp
    bool timed_out = false;  // a timed-out consumer never leaves early (gemm_common.cuh)
    float d[128];
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
      int previous_slot = -1;
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        const auto site = tut::WaitSite::consumer_warpgroup(warpgroup)
                              .on(tut::Barrier::kFull, pos.slot)
                              .at_k_tile(kt)
                              .expecting(STAGE_BYTES);
        // BUG: parity fixed at 0 - right on the first lap, wrong from the second: the wait
        // either passes before the k-tile has landed or waits for a phase that cannot come
        if (!timed_out && !tut::wait_or_report(&full[pos.slot], 0, g.error, site))
          timed_out = true;
        tut::wgmma_fence();
        const unsigned char* a = ring + pos.slot * STAGE_BYTES;
        mma_stage(d, a + row0 * 128, a + A_BYTES, kt > 0);
        tut::wgmma_commit_group();
        tut::wgmma_wait_group<1>();
        tut::perturb(tut::Perturb::kBeforeRelease, kt);
        if (previous_slot >= 0 && arrives && !timed_out) ptx::mbarrier_arrive(&empty[previous_slot]);
        previous_slot = pos.slot;
      }
      tut::wgmma_wait_group<0>();
      if (arrives && !timed_out) ptx::mbarrier_arrive(&empty[previous_slot]);
      tut::fence_accumulators(d);
      store_accumulators(g, d, tc.m0 + row0, tc.n0);
    }
  }
}

/// Registers the negatives on the chapter's variant list (@p Problem: main.cu's, with its
/// tensor maps).
template <class Problem>
void add_negatives(tut::VariantList<Problem>& v) {
  v.add("neg_wrong_swizzle", "BUG: descriptor without swizzle",
        "step 2 whose wgmma descriptors say no swizzle over 128-byte swizzled tiles; must FAIL",
        [](Problem& p, cudaStream_t s) {
          step2::launch_kernel(gemm_neg_wrong_swizzle_kernel, p.map_a64, p.map_b256, p.args(), s);
        })
      .negative = true;
  v.add("neg_missing_wait", "BUG: slot released before wgmma.wait_group",
        "step 3 handing each slot back right after issuing its MMAs, before they read it; a race "
        "that must FAIL (the refill overwrites operands the MMAs have not read)",
        [](Problem& p, cudaStream_t s) {
          step3::launch_kernel(gemm_neg_missing_wait_kernel, p.map_a128, p.map_b256, p.args(), s);
        })
      .negative = true;
  v.add("neg_parity_lap2", "BUG: full-barrier parity fixed at 0",
        "step 3 whose consumers wait on parity 0 every lap: wrong from the second lap; "
        "must FAIL",
        [](Problem& p, cudaStream_t s) {
          step3::launch_kernel(gemm_neg_parity_kernel, p.map_a128, p.map_b256, p.args(), s);
        })
      .negative = true;
}

}  // namespace ch16
