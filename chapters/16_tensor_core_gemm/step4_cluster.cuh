// Chapter 16, step 4: two blocks of a cluster compute vertically adjacent 128 x 256 tiles, so
// they need the same 256 rows of B. Each block loads half of them (128 rows) with one TMA
// multicast into BOTH blocks' ring slot: B is read from L2 once per pair instead of twice.
// Consequence for the ring: block r's producer writes into its peer's slot s too, so it may
// refill s only when the consumers of BOTH blocks are done with it. Each consumer warp
// therefore arrives on empty[s] of both blocks (the remote one through its shared::cluster
// address), and empty[s] counts 16 arrivals. No cluster-wide barrier per tile is needed.
#pragma once

#include "common/ring.cuh"
#include "gemm_common.cuh"

namespace ch16 {
namespace cl {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, CLUSTER = 2;
constexpr int THREADS = 384, CONSUMER_WARPS = 8;
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2;
constexpr int B_HALF_BYTES = B_BYTES / CLUSTER;  // what each block's multicast brings
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;   // what arrives in each block per slot
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
}  // namespace cl

/// Pair `p` of a cluster's walk: tile rows 2 * (p % pairs_m) + rank, tile column p / pairs_m.
/// The two blocks walk the same pairs, so their rings stay in step.
__device__ __forceinline__ TileCoord pair_tile(int p, int pairs_m, unsigned rank) {
  return TileCoord{(2 * (p % pairs_m) + static_cast<int>(rank)) * cl::BM, (p / pairs_m) * cl::BN};
}

__global__ void __cluster_dims__(cl::CLUSTER, 1, 1) __launch_bounds__(cl::THREADS, 1)
    gemm_step4_cluster_kernel(const __grid_constant__ CUtensorMap map_a,
                              const __grid_constant__ CUtensorMap map_b_half, GemmArgs g) {
  using namespace cl;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[STAGES], empty[STAGES];
  const unsigned rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], CLUSTER * CONSUMER_WARPS);
    }
    fence_mbarrier_init();  // release.cluster: visible to the peer before it multicasts here
  }
  cluster_sync();  // no block may multicast or arrive remotely before both are initialised
  const int pairs_m = ceil_div(ceil_div(g.M, BM), CLUSTER);
  const int num_pairs = pairs_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK);
  const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const int warpgroup = threadIdx.x / 128;
  tut::RingPosition<STAGES> pos;

  if (warpgroup == 0) {  // ---- producer ----
    setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x < 32 && elect_one_lane()) {
      for (int p = cluster_id; p < num_pairs; p += clusters) {
        const TileCoord tc = pair_tile(p, pairs_m, rank);
        bool ok = true;
        for (int kt = 0; kt < ktiles && ok; ++kt, pos.advance()) {
          // Both blocks' consumers have released slot s. A CTA-scope wait is enough: the
          // producer only issues TMA after it, it reads nothing the consumers wrote.
          ok = tut::wait_parity_bounded(&empty[pos.slot], pos.phase ^ 1);
          if (!ok) break;
          unsigned char* a = ring + pos.slot * STAGE_BYTES;
          mbarrier_arrive_expect_tx(&full[pos.slot], STAGE_BYTES);  // own A + both B halves
          tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
          tma_load_2d_multicast(a + A_BYTES + rank * B_HALF_BYTES, &map_b_half, &full[pos.slot],
                                kt * BK, tc.n0 + static_cast<int>(rank) * (BN / CLUSTER), 0b11);
        }
        if (!ok) {
          report_timeout(g);
          break;
        }
      }
    }
  } else {  // ---- consumers ----
    setmaxnreg_inc<CONSUMER_REGS>();
    const int row0 = (warpgroup - 1) * 64;
    const bool arrives = threadIdx.x % 32 == 0;
    bool timed_out = false;  // see consumers_never_leave_early (gemm_common.cuh)
    float d[128];
    for (int p = cluster_id; p < num_pairs; p += clusters) {
      const TileCoord tc = pair_tile(p, pairs_m, rank);
      int previous_slot = -1;
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        if (!timed_out && !tut::wait_parity_bounded(&full[pos.slot], pos.phase)) timed_out = true;
        wgmma_fence();
        const unsigned char* a = ring + pos.slot * STAGE_BYTES;
        mma_stage(d, a + row0 * 128, a + A_BYTES, kt > 0);
        wgmma_commit_group();
        wgmma_wait_group<1>();
        if (previous_slot >= 0 && arrives && !timed_out)  // slot free here AND in the peer
          for (unsigned r = 0; r < CLUSTER; ++r) mbarrier_arrive_cluster(&empty[previous_slot], r);
        previous_slot = pos.slot;
      }
      wgmma_wait_group<0>();
      if (arrives && !timed_out)
        for (unsigned r = 0; r < CLUSTER; ++r) mbarrier_arrive_cluster(&empty[previous_slot], r);
      fence_accumulators(d);
      store_accumulators(g, d, tc.m0 + row0, tc.n0);
    }
    if (timed_out) report_timeout(g);
  }
  // Neither block may exit while its peer can still multicast into it or arrive on it.
  cluster_sync();
}

}  // namespace ch16
