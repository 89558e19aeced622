/// @file step5_persistent.cuh
/// @brief Chapter 16, step 5: step 4 made persistent, in an L2-friendly tile order, with an
///        epilogue that leaves through TMA.
///
/// As many clusters as can be resident walk the tile pairs in groups of GROUP_M pair-rows.
/// Each consumer warpgroup rounds its 64 x 256 accumulators to bf16 into a 128-byte swizzled
/// staging tile (bank-conflict free), makes those ordinary shared-memory writes visible to the
/// async proxy (fence.proxy.async), and one thread stores the tile with four TMA stores. While
/// they drain, the warpgroup already waits for its next tile's operands.
#pragma once

#include <algorithm>

#include "common/ring.cuh"
#include "gemm_common.cuh"
#include "step4_cluster.cuh"

namespace ch16::step5 {

using step4::A_BYTES, step4::B_HALF_BYTES, step4::BK, step4::BM, step4::BN, step4::CLUSTER,
    step4::CONSUMER_WARPS, step4::STAGE_BYTES, step4::THREADS;
constexpr int STAGES = 3;    // 3 x 48 KiB ring + 64 KiB staging: the most that fits
constexpr int GROUP_M = 8;   // pairs of tile rows per group of the raster
constexpr int STAGING_BYTES = 64 * BN * 2;  // per consumer warpgroup: 32 KiB
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 2 * STAGING_BYTES + 1024;
// The register budget, as steps 3 and 4: 128 x 40 + 256 x 232 <= 384 x 168. Here the inc
// matters: ptxas allocates the consumer path up to the 232 it was promised (it uses R226-R229
// right after the USETMAXREG.TRY_ALLOC), and without setmaxnreg this kernel spills ten times
// more around its epilogue.
constexpr int LAUNCH_REGS = 65536 / THREADS / 8 * 8;  // 168
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
static_assert(tut::RegisterBudget<128, PRODUCER_REGS, 256, CONSUMER_REGS, LAUNCH_REGS>::ok,
              "step 5's setmaxnreg budget");

/// Grouped raster: walk GROUP_M pair-rows down one tile column before moving right, so the
/// A rows of a group and the B columns in use stay in L2 while the whole GPU works on them.
__device__ __forceinline__ TileCoord grouped_pair_tile(int pair, int pairs_m, int tiles_n,
                                                       unsigned rank) {
  const int per_group = GROUP_M * tiles_n;
  const int first = (pair / per_group) * GROUP_M;
  const int rows = min(GROUP_M, pairs_m - first);
  const int q = pair % per_group;
  return step4::pair_tile((first + q % rows) + (q / rows) * pairs_m, pairs_m, rank);
}

/// Round the accumulators to bf16 into the staging tile: 4 boxes of [64 rows][64 columns],
/// each 128-byte row's 16-byte chunks placed at chunk ^ (row % 8), the layout the C tensor
/// map's 128-byte swizzle expects. Eight lanes that write one column pair hit eight rows,
/// hence eight different chunks: no bank conflict.
__device__ __forceinline__ void stage_accumulators(unsigned char* staging, const float (&d)[128]) {
  const int tid = threadIdx.x % 128;
  const int row = 16 * (tid / 32) + (tid % 32) / 4;
#pragma unroll
  for (int j = 0; j < 128; j += 2) {
    const int r = row + 8 * ((j / 2) % 2), col = 8 * (j / 4) + 2 * (tid % 4);
    const int byte = (col % 64) * 2;
    unsigned char* p = staging + (col / 64) * 8192 + r * 128 + (((byte / 16) ^ (r % 8)) * 16) + byte % 16;
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(d[j], d[j + 1]);
  }
}

/// Cluster barriers, initialised as in step 4 (fence.mbarrier_init.release.cluster, then the
/// cluster barrier).
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
    gemm_step5_persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                                 const __grid_constant__ CUtensorMap map_b_half,
                                 const __grid_constant__ CUtensorMap map_c, GemmArgs g) {
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
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
  const int pairs_m = ceil_div(ceil_div(g.M, BM), CLUSTER), tiles_n = ceil_div(g.N, BN);
  const int num_pairs = pairs_m * tiles_n, ktiles = ceil_div(g.K, BK);
  const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const int warpgroup = threadIdx.x / 128;
  tut::RingPosition<STAGES> pos;

  if (warpgroup == 0) {  // ---- producer: as step 4, in the grouped order ----
    tut::setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x < 32 && tut::elect_one_lane()) {
      bool ok = true;
      for (int pair = cluster_id; pair < num_pairs && ok; pair += clusters) {
        const TileCoord tc = grouped_pair_tile(pair, pairs_m, tiles_n, rank);
        for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
          const auto site =
              tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, pos.slot).at_k_tile(kt);
          ok = tut::wait_or_report(&empty[pos.slot], pos.phase ^ 1, g.error, site);
          if (!ok) break;
          tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
          unsigned char* a = ring + pos.slot * STAGE_BYTES;
          ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[pos.slot], STAGE_BYTES);
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
    const bool stores = threadIdx.x % 128 == 0;  // the thread that issues this warpgroup's TMA stores
    unsigned char* staging = ring + STAGES * STAGE_BYTES + (warpgroup - 1) * STAGING_BYTES;
    float d[128];
    for (int pair = cluster_id; pair < num_pairs; pair += clusters) {
      const TileCoord tc = grouped_pair_tile(pair, pairs_m, tiles_n, rank);
      int previous_slot = -1;
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
        // EXERCISE-BEGIN: the previous k-tile's MMAs must be done reading its slot before it is released in both blocks; this k-tile's keep running
        tut::wgmma_wait_group<1>();
        // EXERCISE-END
        tut::perturb(tut::Perturb::kBeforeRelease, kt);
        if (previous_slot >= 0 && arrives && !timed_out)  // here AND in the peer
          step4::release_in_both_blocks(&empty[previous_slot]);
        previous_slot = pos.slot;
      }
      tut::wgmma_wait_group<0>();
      if (arrives && !timed_out) step4::release_in_both_blocks(&empty[previous_slot]);
      tut::fence_accumulators(d);
      // Epilogue: 1. the previous tile's stores have read the staging tile; 2. everyone knows;
      // 3. write it; 4. make the writes visible to the async proxy; 5. everyone has; 6. store.
      if (stores) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
      tut::named_barrier_sync(warpgroup, 128);
      stage_accumulators(staging, d);
      ptx::fence_proxy_async(ptx::space_shared);  // my staging writes, before the TMA store reads them
      tut::named_barrier_sync(warpgroup, 128);
      if (stores) {
        for (int b = 0; b < 4; ++b)
          tma_store_2d(&map_c, staging + b * 8192, tc.n0 + 64 * b, tc.m0 + row0);
        ptx::cp_async_bulk_commit_group();
      }
    }
    if (stores) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});  // smem outlives the last store
  }
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
}

/// Persistent: as many clusters as can be resident at once, never more than the tile pairs.
template <class Kernel>
void launch_kernel(Kernel kernel, const CUtensorMap& a128, const CUtensorMap& b128,
                   const CUtensorMap& c64, const GemmArgs& g, int sm_count, cudaStream_t s) {
  const int pairs = ceil_div(ceil_div(g.M, BM), CLUSTER) * ceil_div(g.N, BN);
  const int resident =
      std::max(1, std::min(tut::max_active_clusters(kernel, CLUSTER, THREADS, SMEM_BYTES),
                           sm_count / CLUSTER));
  const int blocks = std::min(resident, pairs) * CLUSTER;
  kernel<<<tile_grid(blocks, 1, CLUSTER), THREADS, SMEM_BYTES, s>>>(a128, b128, c64, g);
}

inline void launch(const CUtensorMap& a128, const CUtensorMap& b128, const CUtensorMap& c64,
                   const GemmArgs& g, int sm_count, cudaStream_t s) {
  launch_kernel(gemm_step5_persistent_kernel, a128, b128, c64, g, sm_count, s);
}

}  // namespace ch16::step5
