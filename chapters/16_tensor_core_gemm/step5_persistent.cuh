// Chapter 16, step 5: step 4 made persistent - one cluster per two SMs walks the tile pairs
// in an L2-friendly order - with an epilogue that leaves through TMA. Each consumer
// warpgroup rounds its 64 x 256 accumulators to bf16 into a 128-byte swizzled staging tile
// (bank-conflict free), makes those ordinary shared-memory writes visible to the async proxy
// (fence.proxy.async), and one thread stores the tile with four TMA stores. While they drain,
// the warpgroup already waits for its next tile's operands.
#pragma once

#include "common/ring.cuh"
#include "gemm_common.cuh"
#include "step4_cluster.cuh"

namespace ch16 {
namespace ps {
constexpr int STAGES = 3;  // 3 x 48 KiB ring + 64 KiB staging: the most that fits
constexpr int GROUP_M = 8;  // pairs of tile rows per group of the raster
constexpr int STAGING_BYTES = 64 * cl::BN * 2;  // per consumer warpgroup: 32 KiB
constexpr int SMEM_BYTES = STAGES * cl::STAGE_BYTES + 2 * STAGING_BYTES + 1024;
}  // namespace ps

/// Grouped raster: walk GROUP_M pair-rows down one tile column before moving right, so the
/// A rows of a group and the B columns in use stay in L2 while the whole GPU works on them.
__device__ __forceinline__ TileCoord grouped_pair_tile(int p, int pairs_m, int tiles_n,
                                                       unsigned rank) {
  const int per_group = ps::GROUP_M * tiles_n;
  const int first = (p / per_group) * ps::GROUP_M;
  const int rows = min(ps::GROUP_M, pairs_m - first);
  const int q = p % per_group;
  return pair_tile((first + q % rows) + (q / rows) * pairs_m, pairs_m, rank);
}

/// Round the accumulators to bf16 into the staging tile: 4 boxes of [64 rows][64 columns],
/// each 128-byte row's 16-byte chunks placed at chunk ^ (row % 8), the layout the C tensor
/// map's 128-byte swizzle expects. Eight lanes that write one column pair hit eight rows,
/// hence eight different chunks: no bank conflict.
__device__ __forceinline__ void stage_accumulators(unsigned char* staging, const float (&d)[128]) {
  const int t = threadIdx.x % 128;
  const int row = 16 * (t / 32) + (t % 32) / 4;
#pragma unroll
  for (int j = 0; j < 128; j += 2) {
    const int r = row + 8 * ((j / 2) % 2), col = 8 * (j / 4) + 2 * (t % 4);
    const int byte = (col % 64) * 2;
    unsigned char* p = staging + (col / 64) * 8192 + r * 128 + (((byte / 16) ^ (r % 8)) * 16) + byte % 16;
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(d[j], d[j + 1]);
  }
}

__global__ void __cluster_dims__(cl::CLUSTER, 1, 1) __launch_bounds__(cl::THREADS, 1)
    gemm_step5_persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                                 const __grid_constant__ CUtensorMap map_b_half,
                                 const __grid_constant__ CUtensorMap map_c, GemmArgs g) {
  using namespace cl;
  constexpr int NS = ps::STAGES;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[NS], empty[NS];
  const unsigned rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < NS; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], CLUSTER * CONSUMER_WARPS);
    }
    fence_mbarrier_init();
  }
  cluster_sync();
  const int pairs_m = ceil_div(ceil_div(g.M, BM), CLUSTER), tiles_n = ceil_div(g.N, BN);
  const int num_pairs = pairs_m * tiles_n, ktiles = ceil_div(g.K, BK);
  const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  const int warpgroup = threadIdx.x / 128;
  tut::RingPosition<NS> pos;

  if (warpgroup == 0) {  // ---- producer: as step 4, in the grouped order ----
    setmaxnreg_dec<PRODUCER_REGS>();
    if (threadIdx.x < 32 && elect_one_lane()) {
      bool ok = true;
      for (int p = cluster_id; p < num_pairs && ok; p += clusters) {
        const TileCoord tc = grouped_pair_tile(p, pairs_m, tiles_n, rank);
        for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
          ok = tut::wait_parity_bounded(&empty[pos.slot], pos.phase ^ 1);
          if (!ok) break;
          unsigned char* a = ring + pos.slot * STAGE_BYTES;
          mbarrier_arrive_expect_tx(&full[pos.slot], STAGE_BYTES);
          tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
          tma_load_2d_multicast(a + A_BYTES + rank * B_HALF_BYTES, &map_b_half, &full[pos.slot],
                                kt * BK, tc.n0 + static_cast<int>(rank) * (BN / CLUSTER), 0b11);
        }
      }
      if (!ok) report_timeout(g);
    }
  } else {  // ---- consumers ----
    setmaxnreg_inc<CONSUMER_REGS>();
    const int row0 = (warpgroup - 1) * 64;
    const bool arrives = threadIdx.x % 32 == 0;
    bool timed_out = false;  // see consumers_never_leave_early (gemm_common.cuh)
    const bool stores = threadIdx.x % 128 == 0;  // the thread that issues this warpgroup's TMA stores
    unsigned char* staging = ring + NS * STAGE_BYTES + (warpgroup - 1) * ps::STAGING_BYTES;
    float d[128];
    for (int p = cluster_id; p < num_pairs; p += clusters) {
      const TileCoord tc = grouped_pair_tile(p, pairs_m, tiles_n, rank);
      int previous_slot = -1;
      for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
        if (!timed_out && !tut::wait_parity_bounded(&full[pos.slot], pos.phase)) timed_out = true;
        wgmma_fence();
        const unsigned char* a = ring + pos.slot * STAGE_BYTES;
        mma_stage(d, a + row0 * 128, a + A_BYTES, kt > 0);
        wgmma_commit_group();
        wgmma_wait_group<1>();
        if (previous_slot >= 0 && arrives && !timed_out)
          for (unsigned r = 0; r < CLUSTER; ++r) mbarrier_arrive_cluster(&empty[previous_slot], r);
        previous_slot = pos.slot;
      }
      wgmma_wait_group<0>();
      if (arrives && !timed_out)
        for (unsigned r = 0; r < CLUSTER; ++r) mbarrier_arrive_cluster(&empty[previous_slot], r);
      fence_accumulators(d);
      // Epilogue: 1. the previous tile's stores have read the staging tile; 2. everyone knows;
      // 3. write it; 4. make the writes visible to the async proxy; 5. everyone has; 6. store.
      if (stores) tma_store_wait_read_all();
      named_barrier_sync(warpgroup, 128);
      stage_accumulators(staging, d);
      fence_proxy_async_shared();
      named_barrier_sync(warpgroup, 128);
      if (stores) {
        for (int b = 0; b < 4; ++b)
          tma_store_2d(&map_c, staging + b * 8192, tc.n0 + 64 * b, tc.m0 + row0);
        tma_store_commit_group();
      }
    }
    if (stores) tma_store_wait_all();  // the block's shared memory outlives its last store
    if (timed_out) report_timeout(g);
  }
  cluster_sync();
}

}  // namespace ch16
