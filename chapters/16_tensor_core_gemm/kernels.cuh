// Chapter 16: Hopper tensor cores fed by TMA - a BF16 GEMM (fp32 accumulation, bf16 output)
// where every asynchronous technique of the tutorial pays, one idea per step, against cuBLAS.
//
//   C[M x N] = A[M x K] * B[N x K]^T   (row-major A, B stored N x K: both operands K-major,
//                                        cuBLAS "TN", the layout wgmma reads untransposed)
//   step 1  mma.sync fed by a 4-stage cp.async ring                   (step1_mma_sync.cuh)
//   step 2  wgmma from shared memory, TMA with 128-byte swizzle, one warpgroup
//                                                                     (step2_wgmma_tma.cuh)
//   step 3  warp specialization: a producer warp, two consumer warpgroups, full/empty
//           mbarriers, setmaxnreg                                     (this file)
//   step 4  2-block cluster: B multicast, remote "slot free" arrivals  (step4_cluster.cuh)
//   step 5  persistent, L2-grouped tile order, TMA-store epilogue     (step5_persistent.cuh)
//   negatives (each must FAIL): wrong swizzle, a slot released before wgmma.wait_group,
//   parity wrong from the second lap         (tests/negatives/16_tensor_core_gemm.cuh)
// Launch functions: launchers.cuh. Host side (problem, references, cuBLAS, variants): host.cuh.
// Minimum: sm_90a (compute capability 9.0 exactly: wgmma and setmaxnreg are not in sm_100).
#pragma once

#include "common/timeline.cuh"
#include "gemm_common.cuh"
#include "sm90.cuh"
#include "step1_mma_sync.cuh"
#include "step2_wgmma_tma.cuh"

namespace ch16 {

// ---------------------------------------------------------------------------------------------
// Step 3: warp specialization
// ---------------------------------------------------------------------------------------------
// Block = 3 warpgroups. Warpgroup 0 is the producer: it gives most of its registers back
// (setmaxnreg.dec) and one elected lane of its first warp issues every TMA. Warpgroups 1 and
// 2 are consumers: they claim those registers (setmaxnreg.inc: 128 fp32 accumulators each
// plus addresses) and each computes 64 rows of the 128 x 256 tile. Per ring slot:
//   full[s]   count 1 + bytes: the producer's arrive.expect_tx, completed by the TMA's bytes
//   empty[s]  count 8: one arrival per consumer warp once its MMAs have READ the slot
// A slot is refilled only after both warpgroups' wgmma have finished with it: wgmma reads
// shared memory asynchronously, long after the instruction was issued, so "issued" is not
// "done" - wgmma.wait_group is what tells a consumer its reads are over.
namespace ws {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int THREADS = 384, CONSUMER_WARPS = 8;
constexpr int A_BYTES = BM * BK * 2;  // 16 KiB
constexpr int B_BYTES = BN * BK * 2;  // 32 KiB
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;  // 193 KiB: one block per SM
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;  // 128 x 40 + 256 x 232 <= 64 K
}  // namespace ws

// Timeline (tut::TraceOn only; TraceOff compiles to nothing): lane 0 is the issuing producer
// lane, lanes 1 and 2 the first warp of each consumer warpgroup; j counts the block's stages.
template <class Tracing = tut::TraceOff>
__global__ void __launch_bounds__(ws::THREADS, 1)
    gemm_step3_warp_specialized_kernel(const __grid_constant__ CUtensorMap map_a,
                                       const __grid_constant__ CUtensorMap map_b, GemmArgs g,
                                       Tracing trace = {}) {
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
  std::uint32_t j = 0;            // stages so far (the timeline's tile number)

  if (warpgroup == 0) {  // ---- producer ----
    setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x >= 32 || !elect_one_lane()) return;  // one lane of warp 0 issues
    auto lane = trace.lane(0, true);
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
      const TileCoord tc = tile_coord(t, tiles_m, BM, BN);
      for (int kt = 0; kt < ktiles; ++kt, pos.advance(), ++j) {
        // The consumers have released this slot. On the first lap every slot is free: waiting
        // on the parity of the phase BEFORE the current one returns at once.
        lane.wait_begun(j, pos.slot);
        if (!tut::wait_parity_bounded(&empty[pos.slot], pos.phase ^ 1)) return report_timeout(g);
        lane.wait_done(j, pos.slot);
        // EXERCISE-BEGIN: arm full[slot] for this stage: the producer's one arrival, plus the number of bytes the two copies below will deliver (the consumers' wait ends only when both are in)
        mbarrier_arrive_expect_tx(&full[pos.slot], STAGE_BYTES);
        // EXERCISE-END
        unsigned char* a = ring + pos.slot * STAGE_BYTES;
        tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
        tma_load_2d(a + A_BYTES, &map_b, &full[pos.slot], kt * BK, tc.n0);
        lane.copy_issued(j, pos.slot);
      }
    }
    lane.close();
  } else {  // ---- consumers: warpgroup 1 rows 0..63, warpgroup 2 rows 64..127 ----
    setmaxnreg_inc<CONSUMER_REGS>();
    const int row0 = (warpgroup - 1) * 64;
    const bool arrives = threadIdx.x % 32 == 0;  // one arrival per warp
    auto lane = trace.lane(warpgroup, threadIdx.x % 128 == 0);
    bool timed_out = false;  // see consumers_never_leave_early (gemm_common.cuh)
    float d[128];
    for (int t = blockIdx.x; t < num_tiles; t += gridDim.x) {
      const TileCoord tc = tile_coord(t, tiles_m, BM, BN);
      int previous_slot = -1;
      for (int kt = 0; kt < ktiles; ++kt, pos.advance(), ++j) {
        lane.wait_begun(j, pos.slot);
        if (!timed_out && !tut::wait_parity_bounded(&full[pos.slot], pos.phase)) timed_out = true;
        lane.wait_done(j, pos.slot);
        lane.compute_begun(j, pos.slot);  // ends when the previous stage's MMAs are done
        wgmma_fence();
        const unsigned char* a = ring + pos.slot * STAGE_BYTES;
        mma_stage(d, a + row0 * 128, a + A_BYTES, kt > 0);
        wgmma_commit_group();
        // EXERCISE-BEGIN: keep this batch running, but make sure the previous one has finished reading its slot; then give that slot back to the producer (one arrival per warp)
        wgmma_wait_group<1>();
        if (previous_slot >= 0 && arrives && !timed_out) mbarrier_arrive(&empty[previous_slot]);
        // EXERCISE-END
        lane.compute_ended(j, pos.slot);
        if (previous_slot >= 0) lane.slot_released(j - 1, previous_slot);
        previous_slot = pos.slot;
      }
      wgmma_wait_group<0>();
      if (arrives && !timed_out) mbarrier_arrive(&empty[previous_slot]);
      lane.slot_released(j - 1, previous_slot);
      fence_accumulators(d);
      store_accumulators(g, d, tc.m0 + row0, tc.n0);
    }
    lane.close();
    if (timed_out) report_timeout(g);
  }
}

}  // namespace ch16

#include "step4_cluster.cuh"
#include "step5_persistent.cuh"
#include "launchers.cuh"
