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

/// Grouped raster: walk @p kGroupM pair-rows down one tile column before moving right, so the
/// A rows of a group and the B columns in use stay in L2 while the whole GPU works on them.
template <int kGroupM = GROUP_M>
__device__ __forceinline__ TileCoord grouped_pair_tile(int pair, int pairs_m, int tiles_n,
                                                       unsigned rank) {
  const int per_group = kGroupM * tiles_n;
  const int first = (pair / per_group) * kGroupM;
  const int rows = min(kGroupM, pairs_m - first);
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

/// The ring's barriers, initialised as in step 4: full[s] takes the producer's one arming
/// arrival, empty[s] @p empty_arrivals releases (from both blocks); then
/// fence.mbarrier_init.release.cluster makes the inits visible to the peer, and the cluster
/// barrier keeps either block from touching its peer's barriers before they exist.
template <int STAGES>
__device__ __forceinline__ void init_ring_barriers(std::uint64_t* full, std::uint64_t* empty,
                                                   int empty_arrivals) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], empty_arrivals);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // visible to the peer
  }
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
}

/// The producer warpgroup: one elected lane of warp 0 fills the ring as in step 4 (own A
/// rows, its half of B multicast into both blocks), over the tile pairs in the grouped order
/// of @p C (C::STAGES slots, C::GROUP_M pair-rows per group).
template <class C>
__device__ __forceinline__ void produce(unsigned char* ring, std::uint64_t* full,
                                        std::uint64_t* empty, const CUtensorMap& map_a,
                                        const CUtensorMap& map_b_half, const GemmArgs& g) {
  tut::setmaxnreg_dec<PRODUCER_REGS>();
  if (threadIdx.x >= 32 || !tut::elect_one_lane()) return;
  const unsigned rank = ptx::get_sreg_cluster_ctarank();
  const int pairs_m = ceil_div(ceil_div(g.M, BM), CLUSTER), tiles_n = ceil_div(g.N, BN);
  const int num_pairs = pairs_m * tiles_n, ktiles = ceil_div(g.K, BK);
  const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
  tut::RingPosition<C::STAGES> pos;
  bool ok = true;
  for (int pair = cluster_id; pair < num_pairs && ok; pair += clusters) {
    const TileCoord tc = grouped_pair_tile<C::GROUP_M>(pair, pairs_m, tiles_n, rank);
    for (int kt = 0; kt < ktiles; ++kt, pos.advance()) {
      ok = wait_slot_empty(empty, pos.slot, pos.phase, kt, g.error);
      if (!ok) break;
      tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
      unsigned char* a = ring + pos.slot * STAGE_BYTES;
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[pos.slot], STAGE_BYTES);
      if constexpr (C::A_EVICT_LAST)  // A's rows, re-read by every tile column of the group
        tut::tma_load_2d_l2_hint(a, &map_a, &full[pos.slot], kt * BK, tc.m0, tut::l2_policy_evict_last());
      else
        tma_load_2d(a, &map_a, &full[pos.slot], kt * BK, tc.m0);
      tma_load_2d_multicast(a + A_BYTES + rank * B_HALF_BYTES, &map_b_half, &full[pos.slot],
                            kt * BK, tc.n0 + static_cast<int>(rank) * (BN / CLUSTER), 0b11);
    }
  }
  if constexpr (C::EXIT_ON_DRAIN) {
    // Step 6k: instead of the cluster barrier at exit, this thread keeps the block alive until
    // every slot's last use has been released by all four warpgroups of the cluster. The
    // peer's releases are its last accesses to this block's shared memory (its multicast
    // copies into my ring landed before my consumers' full waits passed), so once each
    // empty[s] has completed that phase nothing of the peer's is still on its way here.
    for (int s = 0; s < C::STAGES && ok; ++s, pos.advance()) {
      const auto site = tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, pos.slot);
      ok = tut::wait_or_report(&empty[pos.slot], pos.phase ^ 1, g.error, site);
    }
  }
}

/// One consumer warpgroup's main loop over k-tiles [@p kt_begin, @p kt_end) of one tile: wait
/// for a slot, issue its four wgmma, and once the previous k-tile's MMAs are done reading their
/// slot, hand that slot back through @p release (called with the slot index; it decides which
/// threads arrive where). Ends with every MMA done and the last slot released. The first k-tile
/// of the range overwrites the accumulators, the others add to them. @p under_mmas(i) runs
/// while the range's i-th k-tile's MMAs are in flight (after their commit, before the wait):
/// the place where an epilogue can hide the previous tile's stores (step 6h); it must not touch
/// @p d. Step 5 and most step-6 rows pass a no-op. Steps 5-7 run whole tiles (consume_tile);
/// step 8 also runs parts of one.
template <int STAGES, class Release, class UnderMmas>
__device__ __forceinline__ void consume_k_range(float (&d)[128], const unsigned char* ring,
                                                std::uint64_t* full, tut::RingPosition<STAGES>& pos,
                                                int kt_begin, int kt_end, int warpgroup,
                                                bool& timed_out, unsigned* error, Release release,
                                                UnderMmas under_mmas) {
  const int row0 = (warpgroup - 1) * 64;
  int previous_slot = -1;
  for (int kt = kt_begin; kt < kt_end; ++kt, pos.advance()) {
    if (!timed_out && !wait_slot_full(full, pos, warpgroup, kt, STAGE_BYTES, error)) timed_out = true;
    mma_k_tile(d, ring + pos.slot * STAGE_BYTES, row0, A_BYTES, kt > kt_begin);  // fence, 4 wgmma, commit
    under_mmas(kt - kt_begin);
    // EXERCISE-BEGIN: the previous k-tile's MMAs must be done reading its slot before it is released in both blocks; this k-tile's keep running
    tut::wgmma_wait_group<1>();
    // EXERCISE-END
    tut::perturb(tut::Perturb::kBeforeRelease, kt);
    if (previous_slot >= 0 && !timed_out) release(previous_slot);  // here AND in the peer
    previous_slot = pos.slot;
  }
  tut::wgmma_wait_group<0>();
  if (!timed_out) release(previous_slot);
  tut::fence_accumulators(d);
}

/// The main loop over all @p ktiles k-tiles of one tile (consume_k_range from k-tile 0).
template <int STAGES, class Release, class UnderMmas>
__device__ __forceinline__ void consume_tile(float (&d)[128], const unsigned char* ring,
                                             std::uint64_t* full, tut::RingPosition<STAGES>& pos,
                                             int ktiles, int warpgroup, bool& timed_out,
                                             unsigned* error, Release release,
                                             UnderMmas under_mmas) {
  consume_k_range(d, ring, full, pos, 0, ktiles, warpgroup, timed_out, error, release, under_mmas);
}

/// Step 5's epilogue: 1. the previous tile's stores have read the staging tile; 2. everyone
/// knows; 3. write it; 4. make the writes visible to the async proxy; 5. everyone has; 6. one
/// thread stores the four boxes and commits them as one bulk group.
__device__ __forceinline__ void store_tile(unsigned char* staging, const float (&d)[128],
                                           const CUtensorMap& map_c, TileCoord tc, int warpgroup) {
  const bool stores = threadIdx.x % 128 == 0;  // the thread that issues this warpgroup's TMA stores
  if (stores) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  tut::named_barrier_sync(warpgroup, 128);
  stage_accumulators(staging, d);
  ptx::fence_proxy_async(ptx::space_shared);  // my staging writes, before the TMA store reads them
  tut::named_barrier_sync(warpgroup, 128);
  if (stores) {
    for (int b = 0; b < 4; ++b)
      tma_store_2d(&map_c, staging + b * 8192, tc.n0 + 64 * b, tc.m0 + (warpgroup - 1) * 64);
    ptx::cp_async_bulk_commit_group();
  }
}

/// What step 5 fixes and step 6 varies (step6_levers.cuh): the ring's depth, the staging
/// tile's size, how the consumers hand a slot back, how and when the epilogue leaves, the raster's
/// group height, whether the kernel prefetches its tensor maps and whether A's loads ask L2 to
/// keep their lines.
struct Config {
  static constexpr int STAGES = step5::STAGES;
  static constexpr int STAGING_BYTES = step5::STAGING_BYTES;  // per consumer warpgroup
  static constexpr int SMEM_BYTES = step5::SMEM_BYTES;
  static constexpr int EMPTY_ARRIVALS = CLUSTER * CONSUMER_WARPS;  // every consumer warp, both blocks
  static constexpr int GROUP_M = step5::GROUP_M;  // pair-rows per group of the raster
  static constexpr bool PREFETCH_MAPS = false;    // prefetch.tensormap at kernel start
  static constexpr bool A_EVICT_LAST = false;     // A's loads with an L2 evict_last policy
  static constexpr bool EXIT_WAITS_READ_ONLY = false;  // the exit waits for the last stores' reads only
  static constexpr bool EXIT_ON_DRAIN = false;  // the producer drains the ring instead of the exit's cluster barrier
  static constexpr bool PROGRAMMATIC_LAUNCH = false;  // launched with programmatic dependent launch
  /// Slot @p slot is free: lane 0 of every consumer warp arrives on empty[slot] in both blocks.
  __device__ static void release(std::uint64_t* empty, int slot) {
    if (threadIdx.x % 32 == 0) step4::release_in_both_blocks(&empty[slot]);
  }
  /// The epilogue, in the two moments persistent_gemm gives it: under the next tile's MMAs
  /// (nothing here) and after a tile's main loop (stage and store it; `last`: this block has
  /// no further tile, so whatever the epilogue still holds must leave now).
  struct Epilogue {
    __device__ void under_mmas(int /*kt*/, unsigned char* /*staging*/, const CUtensorMap& /*map_c*/,
                               int /*warpgroup*/) {}
    __device__ void after_tile(unsigned char* staging, const float (&d)[128],
                               const CUtensorMap& map_c, TileCoord tc, int warpgroup,
                               bool /*last*/) {
      store_tile(staging, d, map_c, tc, warpgroup);
    }
  };
};

/// The persistent kernel's body for a configuration @p C (step 5's Config, or a step-6 one):
/// the producer warpgroup fills the ring, the two consumer warpgroups walk the same tile pairs,
/// each tile a main loop (consume_tile) and an epilogue (C::Epilogue: after each tile's main
/// loop, and, for step 6h, under the next tile's MMAs).
template <class C>
__device__ __forceinline__ void persistent_gemm(const CUtensorMap& map_a,
                                                const CUtensorMap& map_b_half,
                                                const CUtensorMap& map_c, const GemmArgs& g) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  __shared__ std::uint64_t full[C::STAGES], empty[C::STAGES];
  if constexpr (C::PREFETCH_MAPS) {
    // Thread 32 (warp 1 of the producer warpgroup: it has no part in the barrier init) asks
    // the TMA unit for the three descriptors now, so their fetch overlaps the init and the
    // cluster barrier instead of delaying the first load and the first store. Each block
    // prefetches: each SM's TMA unit keeps its own descriptor cache.
    if (threadIdx.x == 32) {
      tut::prefetch_tensormap(&map_a);
      tut::prefetch_tensormap(&map_b_half);
      tut::prefetch_tensormap(&map_c);
    }
  }
  init_ring_barriers<C::STAGES>(full, empty, C::EMPTY_ARRIVALS);
  if constexpr (C::PROGRAMMATIC_LAUNCH) {
    // Step 6l: let the next kernel of the stream launch now (its blocks get SMs as this
    // grid's blocks exit), then wait until the previous kernel's grid has completed and its
    // writes are visible: every thread, before its first load of A or B and its first store
    // of C or the error word. The init above touched only shared memory and the cluster
    // barrier.
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize();
  }
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {  // ---- producer: as step 4, in the grouped order ----
    produce<C>(ring, full, empty, map_a, map_b_half, g);
  } else {  // ---- consumers ----
    tut::setmaxnreg_inc<CONSUMER_REGS>();
    const unsigned rank = ptx::get_sreg_cluster_ctarank();
    const int pairs_m = ceil_div(ceil_div(g.M, BM), CLUSTER), tiles_n = ceil_div(g.N, BN);
    const int num_pairs = pairs_m * tiles_n, ktiles = ceil_div(g.K, BK);
    const int cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const auto release = [&](int slot) { C::release(empty, slot); };
    bool timed_out = false;  // a timed-out consumer never leaves early (gemm_common.cuh)
    unsigned char* staging = ring + C::STAGES * STAGE_BYTES + (warpgroup - 1) * C::STAGING_BYTES;
    tut::RingPosition<C::STAGES> pos;
    float d[128];
    typename C::Epilogue epilogue;
    const auto under_mmas = [&](int kt) { epilogue.under_mmas(kt, staging, map_c, warpgroup); };
    for (int pair = cluster_id; pair < num_pairs; pair += clusters) {
      const TileCoord tc = grouped_pair_tile<C::GROUP_M>(pair, pairs_m, tiles_n, rank);
      consume_tile(d, ring, full, pos, ktiles, warpgroup, timed_out, g.error, release, under_mmas);
      const bool last = pair + clusters >= num_pairs;  // no next main loop to hide stores under
      epilogue.after_tile(staging, d, map_c, tc, warpgroup, last);
    }
    if (threadIdx.x % 128 == 0) {
      if constexpr (C::EXIT_WAITS_READ_ONLY)  // step 6i: only the reads of shared memory must be done
        ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
      else  // the last stores complete, their writes to C performed
        ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
    }
  }
  // Neither block may exit while its peer can still multicast into it or arrive on it: the
  // cluster barrier, or (step 6k) the producer's drain of the ring at the end of produce().
  if constexpr (!C::EXIT_ON_DRAIN) {
    ptx::barrier_cluster_arrive(ptx::sem_release);
    ptx::barrier_cluster_wait(ptx::sem_acquire);
  }
}

__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1)
    gemm_step5_persistent_kernel(const __grid_constant__ CUtensorMap map_a,
                                 const __grid_constant__ CUtensorMap map_b_half,
                                 const __grid_constant__ CUtensorMap map_c, GemmArgs g) {
  persistent_gemm<Config>(map_a, map_b_half, map_c, g);
}

/// Persistent: as many clusters as can be resident at once, never more than the tile pairs.
template <class Kernel>
void launch_kernel(Kernel kernel, const CUtensorMap& a128, const CUtensorMap& b128,
                   const CUtensorMap& c64, const GemmArgs& g, int sm_count, cudaStream_t s,
                   int smem_bytes = SMEM_BYTES, bool programmatic = false) {
  const int pairs = ceil_div(ceil_div(g.M, BM), CLUSTER) * ceil_div(g.N, BN);
  const int resident =
      std::max(1, std::min(tut::max_active_clusters(kernel, CLUSTER, THREADS, smem_bytes),
                           sm_count / CLUSTER));
  const int blocks = std::min(resident, pairs) * CLUSTER;
  const unsigned grid = tile_grid(blocks, 1, CLUSTER);
  if (programmatic)  // step 6l: the kernel waits for the previous one itself
    tut::launch_programmatic(kernel, grid, THREADS, smem_bytes, s, a128, b128, c64, g);
  else
    kernel<<<grid, THREADS, smem_bytes, s>>>(a128, b128, c64, g);
}

inline void launch(const CUtensorMap& a128, const CUtensorMap& b128, const CUtensorMap& c64,
                   const GemmArgs& g, int sm_count, cudaStream_t s) {
  launch_kernel(gemm_step5_persistent_kernel, a128, b128, c64, g, sm_count, s);
}

}  // namespace ch16::step5
