/// @file step3_warp_specialized.cuh
/// @brief Chapter 16, step 3: warp specialization - a producer warp, two consumer warpgroups,
///        full/empty mbarriers per ring slot, setmaxnreg.
///
/// Block = 3 warpgroups. Warpgroup 0 is the producer: it gives most of its registers back
/// (setmaxnreg.dec) and one elected lane of its first warp issues every TMA. Warpgroups 1 and
/// 2 are consumers: each computes 64 rows of the 128 x 256 tile, and they claim the producer's
/// registers (setmaxnreg.inc). In this step the claim changes no code: the 128 fp32
/// accumulators plus addresses fit in the 168 registers the launch bound allows (ptxas never
/// uses a register above R151 here); step 5, whose epilogue needs more, is where it pays. Per
/// ring slot:
///   full[s]   count 1 + bytes: the producer's arrive.expect_tx, completed by the TMA's bytes
///   empty[s]  count 8: one arrival per consumer warp once its MMAs have READ the slot
/// A slot is refilled only after both warpgroups' wgmma have finished with it: wgmma reads
/// shared memory asynchronously, long after the instruction was issued, so "issued" is not
/// "done" - wgmma.wait_group is what tells a consumer its reads are over.
#pragma once

#include "common/ring.cuh"
#include "common/timeline.cuh"
#include "gemm_common.cuh"

namespace ch16::step3 {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int THREADS = 384, CONSUMER_WARPS = 8;
constexpr int A_BYTES = BM * BK * 2;  // 16 KiB
constexpr int B_BYTES = BN * BK * 2;  // 32 KiB
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // 193 KiB: one block per SM

// The register budget. __launch_bounds__(THREADS, 1) lets ptxas give each thread at most
// 65536 / 384 = 170, rounded down to the allocation unit of 8: 168 registers, and with
// setmaxnreg in the kernel ptxas allocates exactly that (`-Xptxas -v`: "Used 168 registers").
// The block's register pool is then 384 x 168 = 64,512 registers, and setmaxnreg only moves
// registers inside it (tut::RegisterBudget): 128 producer threads x 40 + 256 consumer threads
// x 232 = 64,512 <= 384 x 168. The dec frees 128 x 128 registers, the inc takes 256 x 64:
// exactly balanced. A consumer count above what the dec frees would make setmaxnreg.inc wait
// forever, so a wrong pair fails to compile here.
constexpr int LAUNCH_REGS = 65536 / THREADS / 8 * 8;  // 168
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
static_assert(tut::RegisterBudget<128, PRODUCER_REGS, 256, CONSUMER_REGS, LAUNCH_REGS>::ok,
              "step 3's setmaxnreg budget");

// Timeline (tut::TraceOn only; TraceOff compiles to nothing): lane 0 is the issuing producer
// lane, lanes 1 and 2 the first warp of each consumer warpgroup; j counts the block's stages.
// The barriers are used only inside this block (no cluster): after mbarrier.init,
// fence.proxy.async.shared::cta makes them visible to the async proxy, __syncthreads to the
// other threads.
template <class Tracing = tut::TraceOff>
__global__ void __launch_bounds__(THREADS, 1)
    gemm_step3_warp_specialized_kernel(const __grid_constant__ CUtensorMap map_a,
                                       const __grid_constant__ CUtensorMap map_b, GemmArgs g,
                                       Tracing trace = {}) {
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
  std::uint32_t j = 0;            // stages so far (the timeline's tile number)

  if (warpgroup == 0) {  // ---- producer ----
    tut::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x >= 32 || !tut::elect_one_lane()) return;  // one lane of warp 0 issues
    auto lane = trace.lane(0, true);
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
      for (int kt = 0; kt < ktiles; ++kt, pos.advance(), ++j) {
        // The consumers have released this slot. On the first lap every slot is free: waiting
        // on the parity of the phase BEFORE the current one returns at once.
        lane.wait_begun(j, pos.slot);
        const auto site = tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, pos.slot).at_k_tile(kt);
        if (!tut::wait_or_report(&empty[pos.slot], pos.phase ^ 1, g.error, site)) return;
        lane.wait_done(j, pos.slot);
        tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
        // EXERCISE-BEGIN: arm full[slot] for this stage: the producer's one arrival, plus the number of bytes the two copies below will deliver (the consumers' wait ends only when both are in)
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[pos.slot], STAGE_BYTES);
        // EXERCISE-END
        unsigned char* a = ring + pos.slot * STAGE_BYTES;
        tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
        tma_load_2d(a + A_BYTES, &map_b, &full[pos.slot], kt * BK, tc.n0);
        lane.copy_issued(j, pos.slot);
      }
    }
    lane.close();
  } else {  // ---- consumers: warpgroup 1 rows 0..63, warpgroup 2 rows 64..127 ----
    tut::setmaxnreg_inc<CONSUMER_REGS>();
    const int row0 = (warpgroup - 1) * 64;
    const bool arrives = threadIdx.x % 32 == 0;  // one arrival per warp
    auto lane = trace.lane(warpgroup, threadIdx.x % 128 == 0);
    bool timed_out = false;  // a timed-out consumer never leaves early (gemm_common.cuh)
    float d[128];
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
      int previous_slot = -1;
      for (int kt = 0; kt < ktiles; ++kt, pos.advance(), ++j) {
        lane.wait_begun(j, pos.slot);
        const auto site = tut::WaitSite::consumer_warpgroup(warpgroup)
                              .on(tut::Barrier::kFull, pos.slot)
                              .at_k_tile(kt)
                              .expecting(STAGE_BYTES);
        if (!timed_out && !tut::wait_or_report(&full[pos.slot], pos.phase, g.error, site))
          timed_out = true;
        lane.wait_done(j, pos.slot);
        lane.compute_begun(j, pos.slot);  // ends when the previous stage's MMAs are done
        tut::wgmma_fence();
        const unsigned char* a = ring + pos.slot * STAGE_BYTES;
        mma_stage(d, a + row0 * 128, a + A_BYTES, kt > 0);
        tut::wgmma_commit_group();
        // EXERCISE-BEGIN: keep this batch running, but make sure the previous one has finished reading its slot; then give that slot back to the producer (one arrival per warp)
        tut::wgmma_wait_group<1>();
        tut::perturb(tut::Perturb::kBeforeRelease, kt);
        if (previous_slot >= 0 && arrives && !timed_out) ptx::mbarrier_arrive(&empty[previous_slot]);
        // EXERCISE-END
        lane.compute_ended(j, pos.slot);
        if (previous_slot >= 0) lane.slot_released(j - 1, previous_slot);
        previous_slot = pos.slot;
      }
      tut::wgmma_wait_group<0>();
      if (arrives && !timed_out) ptx::mbarrier_arrive(&empty[previous_slot]);
      lane.slot_released(j - 1, previous_slot);
      tut::fence_accumulators(d);
      store_accumulators(g, d, tc.m0 + row0, tc.n0);
    }
    lane.close();
  }
}

/// Step 3 and its negatives (broken.cuh); `trace...` is the timeline argument of step 3's
/// kernel (tut::TraceOff for the timed runs, tut::TraceOn for --timeline), empty for the
/// negatives.
template <class Kernel, class... Trace>
void launch_kernel(Kernel kernel, const CUtensorMap& a128, const CUtensorMap& b256,
                   const GemmArgs& g, cudaStream_t s, Trace... trace) {
  const int fit = tut::resident_occupancy(kernel, THREADS, SMEM_BYTES);
  const int tiles = ceil_div(g.M, BM) * ceil_div(g.N, BN);
  kernel<<<tile_grid(tiles, fit), THREADS, SMEM_BYTES, s>>>(a128, b256, g, trace...);
}

inline void launch(const CUtensorMap& a128, const CUtensorMap& b256, const GemmArgs& g,
                   cudaStream_t s) {
  launch_kernel(gemm_step3_warp_specialized_kernel<tut::TraceOff>, a128, b256, g, s,
                tut::TraceOff{});
}

}  // namespace ch16::step3
