/// @file step4_cluster.cuh
/// @brief Chapter 16, step 4: two blocks of a cluster compute vertically adjacent 128 x 256
///        tiles and share B through TMA multicast.
///
/// Both blocks need the same 256 rows of B. Each loads half of them (128 rows) with one TMA
/// multicast into BOTH blocks' ring slot: B is read from L2 once per pair instead of twice.
/// Consequence for the ring: block r's producer writes into its peer's slot s too, so it may
/// refill s only when the consumers of BOTH blocks are done with it. Each consumer warp
/// therefore arrives on empty[s] of both blocks (the remote one through its shared::cluster
/// address), and empty[s] counts 16 arrivals. No cluster-wide barrier per tile is needed.
#pragma once

#include "common/ring.cuh"
#include "gemm_common.cuh"

namespace ch16::step4 {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, CLUSTER = 2;
constexpr int THREADS = 384, CONSUMER_WARPS = 8;
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2;
constexpr int B_HALF_BYTES = B_BYTES / CLUSTER;  // what each block's multicast brings
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;   // what arrives in each block per slot
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024;
// The register budget: as step 3 (384 threads, 168 registers each at launch; 40 / 232).
constexpr int LAUNCH_REGS = 65536 / THREADS / 8 * 8;  // 168
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
static_assert(tut::RegisterBudget<128, PRODUCER_REGS, 256, CONSUMER_REGS, LAUNCH_REGS>::ok,
              "step 4's setmaxnreg budget");

/// Pair `pair` of a cluster's walk: tile rows 2 * (pair % pairs_m) + rank, tile column
/// pair / pairs_m. The two blocks walk the same pairs, so their rings stay in step.
__device__ __forceinline__ TileCoord pair_tile(int pair, int pairs_m, unsigned rank) {
  return TileCoord{(2 * (pair % pairs_m) + static_cast<int>(rank)) * BM, (pair / pairs_m) * BN};
}

/// "Our MMAs have read slot s": one arrival on empty[s] in EACH block of the cluster (the
/// peer's through its shared::cluster address), since both producers write into s.
__device__ __forceinline__ void release_in_both_blocks(std::uint64_t* empty_slot) {
  for (unsigned r = 0; r < CLUSTER; ++r) tut::mbarrier_arrive_remote(empty_slot, r);
}

/// Cluster barriers: other blocks multicast into this block's full[s] and arrive on its
/// empty[s], so after mbarrier.init fence.mbarrier_init.release.cluster makes the
/// initialisations visible at cluster scope, and the cluster barrier (arrive.release /
/// wait.acquire) keeps either block from touching its peer's barriers before they exist.
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
    gemm_step4_cluster_kernel(const __grid_constant__ CUtensorMap map_a,
                              const __grid_constant__ CUtensorMap map_b_half, GemmArgs g) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[STAGES], empty[STAGES];
  const unsigned rank = ptx::get_sreg_cluster_ctarank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CLUSTER * CONSUMER_WARPS);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // visible to the peer
  }
  // No block may multicast or arrive remotely before both are initialised.
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
  const int pairs_m = ceil_div(ceil_div(g.M, BM), CLUSTER);
  const int num_pairs = pairs_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK);
  const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const int warpgroup = threadIdx.x / 128;
  tut::RingPosition<STAGES> pos;

  if (warpgroup == 0) {  // ---- producer ----
    tut::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x < 32 && tut::elect_one_lane()) {
      bool ok = true;
      for (int pair = cluster_id; pair < num_pairs && ok; pair += clusters) {
        const TileCoord tc = pair_tile(pair, pairs_m, rank);
        for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
          // Both blocks' consumers have released slot s. A CTA-scope wait is enough: the
          // producer only issues TMA after it, it reads nothing the consumers wrote.
          ok = wait_slot_empty(empty, pos.slot, pos.phase, kt, g.error);
          if (!ok) break;
          tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
          unsigned char* a = ring + pos.slot * STAGE_BYTES;
          ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[pos.slot], STAGE_BYTES);  // own A + both B halves
          tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
          tma_load_2d_multicast(a + A_BYTES + rank * B_HALF_BYTES, &map_b_half, &full[pos.slot],
                                kt * BK, tc.n0 + static_cast<int>(rank) * (BN / CLUSTER), 0b11);
        }
      }
    }
  } else {  // ---- consumers ----
    tut::setmaxnreg_inc<CONSUMER_REGS>();
    const int row0 = (warpgroup - 1) * 64;
    const bool arrives = threadIdx.x % 32 == 0;
    bool timed_out = false;  // a timed-out consumer never leaves early (gemm_common.cuh)
    float d[128];
    for (int pair = cluster_id; pair < num_pairs; pair += clusters) {
      int previous_slot = -1;  // none yet: this pair's first k-tile releases nothing
      const TileCoord tc = pair_tile(pair, pairs_m, rank);
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        if (!timed_out && !wait_slot_full(full, pos, warpgroup, kt, STAGE_BYTES, g.error)) timed_out = true;
        mma_k_tile(d, ring + pos.slot * STAGE_BYTES, row0, A_BYTES, kt > 0);  // fence, 4 wgmma, commit
        // EXERCISE-BEGIN: the previous k-tile's MMAs must be done reading its slot before it is released in both blocks; this k-tile's keep running
        tut::wgmma_wait_group<1>();
        // EXERCISE-END
        tut::perturb(tut::Perturb::kBeforeRelease, kt);
        if (previous_slot >= 0 && arrives && !timed_out) release_in_both_blocks(&empty[previous_slot]);
        previous_slot = pos.slot;
      }
      tut::wgmma_wait_group<0>();
      if (arrives && !timed_out) release_in_both_blocks(&empty[previous_slot]);
      tut::fence_accumulators(d);
      store_accumulators(g, d, tc.m0 + row0, tc.n0);
    }
  }
  // Neither block may exit while its peer can still multicast into it or arrive on it.
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
}

/// One cluster per pair of vertically adjacent tiles; 193 KiB of shared memory per block:
/// one block per SM.
inline void launch(const CUtensorMap& a128, const CUtensorMap& b128, const GemmArgs& g,
                   cudaStream_t s) {
  tut::opt_in_dynamic_smem(gemm_step4_cluster_kernel, SMEM_BYTES);
  const int pairs = ceil_div(ceil_div(g.M, BM), CLUSTER) * ceil_div(g.N, BN);
  gemm_step4_cluster_kernel<<<tile_grid(pairs * CLUSTER, 1, CLUSTER), THREADS, SMEM_BYTES, s>>>(
      a128, b128, g);
}

}  // namespace ch16::step4
