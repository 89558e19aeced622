/// @file step7_small_tiles.cuh
/// @brief Chapter 16, step 7: a schedule for the small problems, where steps 3-5's 128 x 256
///        tiles leave most of the GPU idle - smaller tiles, then split-K across the two blocks
///        of a cluster with the partial sums added through distributed shared memory.
///
/// At 1024^3 a 128 x 256 tile grid has 8 x 4 = 32 tiles for 132 SMs, and each tile's K loop is
/// only 16 k-tiles of 64: the ring's fill and the epilogue are a large part of every block's
/// life, and 100 SMs do nothing. Two levers, each its own row (then 7d-7k, each a row on top of
/// 7b: the hand-off through the async proxy, a TMA-store epilogue, and 7e's per-block fixed
/// costs at 1024^3, where a block's whole K loop is 8 k-tiles):
///
///   gemm_step7_small_tiles_kernel   128 x 128 tiles (two consumer warpgroups of 64 x 128,
///                                   wgmma m64n128k16): twice the tiles of step 3, 64 at 1024^3,
///                                   and a block small enough (97 KiB, 112 registers) that two
///                                   fit on an SM, so one block's fill and epilogue overlap the
///                                   other's MMAs once there are more tiles than SMs.
///   gemm_step7_split_k_kernel       the same tile, computed by a 2-block cluster: block rank r
///                                   takes half r of the K loop (split-K), so 1024^3 has
///                                   64 x 2 = 128 blocks, and every block's K loop is half as
///                                   long. The two fp32 partial tiles are then added through
///                                   distributed shared memory (DSMEM), half of the tile in each
///                                   block, so both blocks share the epilogue too.
///
/// Block = 9 warps: warps 0-7 are the two consumer warpgroups (wgmma needs whole, aligned
/// warpgroups), warp 8 the producer, one elected lane of which issues the TMA loads. With 64
/// accumulators per thread the consumers need no more than the launch allocation, so unlike
/// steps 3-5 there is no setmaxnreg and the producer is one warp, not a warpgroup. The ring is
/// step 3's: full[s] (one arrival + the TMA's bytes), empty[s] (one arrival per consumer warp
/// once its MMAs have read the slot).
///
/// The split-K hand-off, per tile (one partial buffer, 64 x 128 fp32 = 32 KiB, per block):
///   rank 0: warpgroup 0 REDUCES rows 0..63,  warpgroup 1 EXPORTS rows 64..127
///   rank 1: warpgroup 0 EXPORTS rows 0..63,  warpgroup 1 REDUCES rows 64..127
///   exporter: wait taken (the peer has read my previous partial: its loads are over); write
///             my accumulators into my partial buffer; each thread arrives on the PEER's
///             ready (release at cluster scope: my stores before the arrival).
///   reducer:  wait ready (acquire at cluster scope: the peer's stores are visible); add the
///             peer's partial (ld.shared::cluster) to my accumulators; each thread arrives on
///             the peer's taken (release: my loads before its next stores); store the rows.
/// The sum of two fp32 partial sums of exact bf16 products is itself an fp32 summation of
/// those products (in another order), so main.cu's error bound covers it unchanged.
#pragma once

#include "common/ring.cuh"
#include "gemm_common.cuh"
#include "step6_levers.cuh"  // the large-tile schedule of the size dispatch

namespace ch16::step7 {

constexpr int BM = 128, BN = 128, BK = 64;
constexpr int CONSUMER_WARPS = 8, PRODUCER_WARP = 8, THREADS = 9 * 32;
constexpr int A_BYTES = BM * BK * 2;  // 16 KiB
constexpr int B_BYTES = BN * BK * 2;  // 16 KiB
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int PARTIAL_BYTES = 64 * BN * 4;  // one warpgroup's fp32 partial tile: 32 KiB

/// What differs between the two rows. SPLIT = 1: 3 slots, 97 KiB, two blocks per SM (the
/// launch bound caps registers at 65536 / (2 x 288) = 113, rounded down to 112); SPLIT = 2: 4
/// slots plus the partial buffer, 161 KiB, one block per SM (each block's half of K is short:
/// 8 k-tiles at 1024^3).
/// BULK_HANDOFF (7d, SPLIT = 2 only): two partial buffers, an outbox the exporter writes and
/// an inbox the peer's bulk copy fills: 193 KiB.
/// TMA_STORE (7e, on top of 7d): a 16 KiB staging tile for the reducing warpgroup's 64 x 128
/// bf16 result (two 64 x 64 boxes of C): 209 KiB.
/// ST_ASYNC (7i, on top of 7e): no outbox; the exporter's registers go straight into the
/// peer's inbox by st.async: 7e less 32 KiB, 177 KiB. EXTRA_STAGES (7j): a 5th ring slot in
/// that room, 209 KiB.
template <int SPLIT, bool BULK_HANDOFF = false, bool TMA_STORE = false, bool ST_ASYNC = false,
          int EXTRA_STAGES = 0>
struct Config {
  static_assert(SPLIT == 1 || SPLIT == 2, "split-K over the two blocks of a cluster, or none");
  static_assert(!BULK_HANDOFF || SPLIT == 2, "the bulk hand-off is a split-K hand-off");
  static_assert(!ST_ASYNC || (BULK_HANDOFF && TMA_STORE), "7i is a lever on top of 7e");
  static constexpr int STAGES = (SPLIT == 1 ? 3 : 4) + EXTRA_STAGES;
  static constexpr int BLOCKS_PER_SM = SPLIT == 1 ? 2 : 1;
  static constexpr int PARTIAL_BUFFERS = SPLIT == 1 ? 0 : (BULK_HANDOFF && !ST_ASYNC) ? 2 : 1;
  static constexpr int STAGING_BYTES = TMA_STORE ? 2 * step6::BOX_BYTES : 0;
  static constexpr int SMEM_BYTES =
      STAGES * STAGE_BYTES + PARTIAL_BUFFERS * PARTIAL_BYTES + STAGING_BYTES + 1024;
};
static_assert(Config<1>::BLOCKS_PER_SM * (Config<1>::SMEM_BYTES + 1024) <= 228 * 1024,
              "two blocks of the 128 x 128 step fit in an SM's 228 KiB (1 KiB reserved per block)");
static_assert(Config<2>::SMEM_BYTES <= 227 * 1024, "the split-K block fits in 227 KiB");
static_assert(Config<2, true>::SMEM_BYTES <= 227 * 1024, "the bulk hand-off's block fits in 227 KiB");
static_assert(Config<2, true, true>::SMEM_BYTES <= 227 * 1024, "7e's block (7d + staging) fits in 227 KiB");
static_assert(Config<2, true, true, true, 1>::SMEM_BYTES <= 227 * 1024, "7j's 5-slot block fits in 227 KiB");

/// 7e's epilogue: the reducing warpgroup's 64 x 128 result rounded to bf16 into the staging
/// tile as two 128-byte swizzled 64 x 64 boxes (step 6's stage_box), then two TMA stores by one
/// thread. step6::stage_box reads d[32 box .. 32 box + 31]: boxes 0 and 1 are columns 0..127,
/// and the m64n128 fragment is the m64n256 one's first 64 registers (the same row and column
/// for each d[j]).
__device__ __forceinline__ void store_tile_n128(unsigned char* staging, const float (&d)[64],
                                                const CUtensorMap& map_c, int m0, int n0,
                                                int group_barrier) {
  const bool stores = threadIdx.x % 128 == 0;  // the thread that issues this warpgroup's TMA stores
  // The previous tile's stores are done reading the staging tile (first tile: none pending).
  if (stores) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  tut::named_barrier_sync(group_barrier, 128);  // no thread rewrites the staging before that
  const std::uint32_t staging_addr = tut::smem_addr(staging);
  step6::stage_box(staging_addr, d, 0);
  step6::stage_box(staging_addr + step6::BOX_BYTES, d, 1);
  ptx::fence_proxy_async(ptx::space_shared);  // my staged C, before the TMA stores read it
  tut::named_barrier_sync(group_barrier, 128);  // every thread has staged and fenced
  if (stores) {
    tma_store_2d(&map_c, staging, n0, m0);
    tma_store_2d(&map_c, staging + step6::BOX_BYTES, n0 + 64, m0);
    ptx::cp_async_bulk_commit_group();
  }
}

/// The four K16 slices of one stage for a 64 x 128 accumulator: as gemm_common's mma_stage,
/// with B 128 rows wide.
__device__ __forceinline__ void mma_stage_n128(float (&d)[64], const unsigned char* a,
                                               const unsigned char* b, bool accumulate) {
  const std::uint64_t da = tut::smem_desc_sw128(a), db = tut::smem_desc_sw128(b);
#pragma unroll
  for (int k = 0; k < 4; ++k) tut::wgmma_m64n128k16(d, da + 2 * k, db + 2 * k, accumulate || k > 0);
}

/// The producer's part of k-tile @p kt once the slot is free: arm full[slot] with the stage's
/// bytes (its one arrival), then the two TMA boxes, A (128 rows of the tile) and B (128 rows).
__device__ __forceinline__ void load_stage(unsigned char* slot, std::uint64_t* full_slot,
                                           const CUtensorMap& map_a, const CUtensorMap& map_b,
                                           int kt, TileCoord tc) {
  tut::perturb(tut::Perturb::kBeforeTmaIssue, kt);
  ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, full_slot, STAGE_BYTES);
  tma_load_2d(slot, &map_a, full_slot, kt * BK, tc.m0);
  tma_load_2d(slot + A_BYTES, &map_b, full_slot, kt * BK, tc.n0);
}

/// One arrival on the mbarrier at the same offset in the cluster peer's shared memory, with
/// release semantics at cluster scope: this thread's earlier memory accesses (the partial's
/// stores, or the loads of the peer's partial) happen before the peer's acquire of that phase.
/// tut::mbarrier_arrive_remote's default semantics (release at CTA scope) would not order them
/// for a thread of ANOTHER block.
__device__ __forceinline__ void arrive_on_peer(std::uint64_t* bar, unsigned peer) {
  ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cluster, ptx::space_cluster,
                       static_cast<std::uint64_t*>(__cluster_map_shared_rank(bar, peer)));
}

/// 16 bytes to / from this block's shared memory at a 32-bit shared-window address: 7d's outbox
/// writes and inbox reads compile to STS.128 / LDS.128, where the generic pointers that nvcc
/// cannot prove to be shared give ST.E.128 / LD.E.128 with 64-bit addresses.
__device__ __forceinline__ void st_shared_v4(std::uint32_t addr, float4 v) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(v.x), "f"(v.y), "f"(v.z),
               "f"(v.w) : "memory");
}
__device__ __forceinline__ float4 ld_shared_v4(std::uint32_t addr) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr) : "memory");
  return v;
}

/// 7i's push, per thread: the 16 bytes at @p local's offset in the PEER's shared memory
/// (mapa: the shared::cluster address of the same offset in block @p peer), written by
/// st.async straight from registers; when they land, the hardware performs complete_tx(16) on
/// the mbarrier at @p ready's offset in the peer. 128 threads x 16 stores = PARTIAL_BYTES.
__device__ __forceinline__ std::uint32_t peer_address(const void* local, unsigned peer) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(tut::smem_addr(local)), "r"(peer));
  return remote;
}
__device__ __forceinline__ void st_async_v4(std::uint32_t remote, float4 v, std::uint32_t remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n"
               ::"r"(remote), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(remote_bar) : "memory");
}
/// bar.red.or over the @p threads threads of named barrier @p id: true in every thread when
/// any passed true (7i: the leader's timeout, told to the warpgroup that pushes with it).
__device__ __forceinline__ bool named_barrier_or(int id, int threads, bool pred) {
  std::uint32_t any;
  asm volatile("{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, %2, %3, p;\nselp.u32 %0, 1, 0, q;\n}\n"
               : "=r"(any) : "r"(static_cast<std::uint32_t>(pred)), "r"(id), "r"(threads) : "memory");
  return any != 0;
}

/// 7d's push: ONE bulk copy (the async proxy, a TMA unit) of my 32 KiB outbox into the inbox at
/// the same offset in the peer's shared memory, completing its bytes as a transaction on the
/// peer's ready (which the peer armed with expect_tx of PARTIAL_BYTES). When ready's phase
/// completes, all the bytes are in the peer's inbox and visible to the threads that waited on
/// it: no per-thread release at cluster scope, no remote loads.
__device__ __forceinline__ void push_partial(float4* inbox, const float4* outbox,
                                             std::uint64_t* ready, unsigned peer) {
  ptx::cp_async_bulk(ptx::space_cluster, ptx::space_shared, __cluster_map_shared_rank(inbox, peer),
                     outbox, PARTIAL_BYTES,
                     static_cast<std::uint64_t*>(__cluster_map_shared_rank(ready, peer)));
}

/// 7f-7k: the per-block fixed costs of 7e at 1024^3 (a block there runs only 8 k-tiles), one
/// switch per row, each on top of the one before (flags of small_tile_gemm's PROLOGUE):
///   kPrefetchMaps      7f: the producer warp's elected lane issues prefetch.tensormap for the
///                      three maps at kernel start, while thread 0 initialises the barriers, so
///                      the first TMA load (and the first store) finds its descriptor in the
///                      SM's TMA descriptor cache instead of fetching it from memory then.
///   kDeferClusterWait  7g: the start's cluster barrier split in two: every thread ARRIVES
///                      (relaxed) once the barriers are initialised, and waits only where it
///                      first needs the peer: the consumers before their first hand-off, the
///                      producer after its last load. The block's own ring needs only
///                      __syncthreads (plus fence.proxy.async for the TMA), so the main loop no
///                      longer waits for the peer block to be launched and initialised.
///   kExitOnTaken       7h: no cluster barrier at exit. What a block must outlive is its peer's
///                      use of its shared memory: its bulk copy into my inbox (complete
///                      before my reducer passes ready), my push's reads of my outbox, and its
///                      reducer's arrival on my taken, which comes after that push has landed
///                      (7d's reducers read only their own inbox). So my exporting
///                      warpgroup's leader waits for the last tile's taken, and nothing else
///                      waits at exit. (After a timeout the exit no longer waits for the peer:
///                      the error word already fails the run.)
///   kStAsyncHandoff    7i: no outbox. The exporter's 128 threads write their accumulators
///                      straight into the peer's inbox with st.async (16 bytes each, complete_tx
///                      on the peer's ready), instead of STS into the outbox, the proxy fence, a
///                      named barrier and one bulk copy. The reducer's side is 7d's unchanged.
///   kFiveStages        7j: the outbox's 32 KiB as a 5th ring slot: the producer's first fill
///                      issues 5 of a block's 8 k-tiles (at 1024^3) before its first wait.
///   kProgrammaticLaunch 7k: launched with programmatic dependent launch (tut::
///                      launch_programmatic). Every block triggers its dependents as it
///                      starts, so the next kernel in the stream is launched while this one
///                      runs, and its blocks take the SMs this grid leaves free or frees; each
///                      thread runs the prologue (barrier init, tensor-map prefetch, the
///                      cluster arrive), which touches nothing the previous kernel writes (the
///                      maps are kernel parameters), and then waits for the previous grid
///                      (cudaGridDependencySynchronize) before its first load or store. What it can save is the gap between two kernels of a stream:
///                      the grid launch and the block placement of the next GEMM.
constexpr int kPrefetchMaps = 1, kDeferClusterWait = 2, kExitOnTaken = 4, kStAsyncHandoff = 8,
              kFiveStages = 16, kProgrammaticLaunch = 32;
/// 7j's whole set (7f-7i's levers plus the 5th slot), spelled once: the step7j_five_stages row
/// launches it, and 7k is it plus the launch.
constexpr int kStep7jLevers = kPrefetchMaps | kDeferClusterWait | kExitOnTaken | kStAsyncHandoff | kFiveStages;
/// 7k: 7j launched with programmatic dependent launch; the size dispatch's split-K schedule.
constexpr int kStep7kLevers = kStep7jLevers | kProgrammaticLaunch;

/// The three rows' body. SPLIT = 1: a plain grid of blocks, one tile each (grid-stride when the
/// grid is capped). SPLIT = 2: a grid of 2-block clusters, one tile per cluster, block rank r
/// taking k-tiles [r * half, (r + 1) * half), half = ceil(k-tiles / 2); a block whose half is
/// empty (K <= 64) contributes zeros. Barrier initialisation follows the init fence rule:
/// used only inside the block (SPLIT = 1), fence.proxy.async.shared::cta + __syncthreads;
/// arrived on by the peer (SPLIT = 2: ready, taken), fence.mbarrier_init.release.cluster + the
/// cluster barrier. BULK_HANDOFF picks 7d's hand-off (below) instead of 7b's; TMA_STORE 7e's
/// epilogue (store_tile_n128, through @p map_c) instead of stores from registers.
template <int SPLIT, bool BULK_HANDOFF = false, bool TMA_STORE = false, int PROLOGUE = 0>
__device__ __forceinline__ void small_tile_gemm(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                                const GemmArgs& g, const CUtensorMap* map_c = nullptr) {
  constexpr bool ST_ASYNC = (PROLOGUE & kStAsyncHandoff) != 0;
  using Cfg = Config<SPLIT, BULK_HANDOFF, TMA_STORE, ST_ASYNC, (PROLOGUE & kFiveStages) != 0 ? 1 : 0>;
  constexpr int STAGES = Cfg::STAGES;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* ring = align_1024(smem_raw);
  float4* partial = reinterpret_cast<float4*>(ring + STAGES * STAGE_BYTES);  // SPLIT = 2 only
  // BULK_HANDOFF only (partial is then the outbox); 7i has no outbox, only the inbox.
  float4* inbox = ST_ASYNC ? partial : partial + PARTIAL_BYTES / 16;
  unsigned char* staging = ring + STAGES * STAGE_BYTES + Cfg::PARTIAL_BUFFERS * PARTIAL_BYTES;  // TMA_STORE
  __shared__ std::uint64_t full[STAGES], empty[STAGES];
  __shared__ std::uint64_t ready, taken;  // the split-K hand-off (SPLIT = 2 only)
  const unsigned rank = SPLIT > 1 ? ptx::get_sreg_cluster_ctarank() : 0;
  const unsigned peer = rank ^ 1u;
  constexpr bool DEFER_WAIT = (PROLOGUE & kDeferClusterWait) != 0;
  constexpr bool EXIT_ON_TAKEN = (PROLOGUE & kExitOnTaken) != 0;
  static_assert(PROLOGUE == 0 || (BULK_HANDOFF && TMA_STORE), "7f-7j are levers on top of 7e");
  static_assert((PROLOGUE & kFiveStages) == 0 || ST_ASYNC, "7j's 5th slot is 7i's freed outbox");
  if constexpr ((PROLOGUE & kPrefetchMaps) != 0) {
    // Warp 8 (the producer warp: no part in the barrier init, which is thread 0's) asks the
    // TMA unit for the three descriptors now; their fetch overlaps the init and the cluster
    // barrier instead of delaying the first load. Each block prefetches: each SM's TMA unit
    // keeps its own descriptor cache.
    if (threadIdx.x == PRODUCER_WARP * 32) {
      tut::prefetch_tensormap(&map_a);
      tut::prefetch_tensormap(&map_b);
      tut::prefetch_tensormap(map_c);
    }
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMER_WARPS);
    }
    if constexpr (SPLIT > 1) {
      // 7b: every thread of the peer's exporting (ready) / reducing (taken) warpgroup.
      // 7d: ready, my reducer's one arming arrival (plus the bulk copy's bytes); taken, one
      // arrival of the peer's reducing warpgroup.
      ptx::mbarrier_init(&ready, BULK_HANDOFF ? 1 : 128);
      ptx::mbarrier_init(&taken, BULK_HANDOFF ? 1 : 128);
      ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // visible to the peer
      // 7g: my own TMA loads see the ring's barriers after __syncthreads, not the cluster
      // barrier's acquire: order the inits before the async proxy's use as 7a does.
      if constexpr (DEFER_WAIT) ptx::fence_proxy_async(ptx::space_shared);
    } else {
      ptx::fence_proxy_async(ptx::space_shared);  // the TMA (async proxy) sees initialised barriers
    }
  }
  if constexpr (DEFER_WAIT) {
    __syncthreads();  // my ring's barriers are initialised, for my own roles
    // Relaxed: the release of the inits is thread 0's fence.mbarrier_init.release.cluster
    // (the fence's own pattern: init, that fence, a relaxed arrive, an acquiring wait), and no
    // other thread has anything to publish. 7e's arrive.release costs every thread a
    // MEMBAR.ALL.GPU. The wait is deferred to each role's first use of the peer (below).
    ptx::barrier_cluster_arrive(ptx::sem_relaxed);
  } else if constexpr (SPLIT > 1) {  // no block arrives on its peer's barriers before they exist
    ptx::barrier_cluster_arrive(ptx::sem_release);
    ptx::barrier_cluster_wait(ptx::sem_acquire);
  } else {
    __syncthreads();  // the last block-wide barrier: from here on the roles never meet
  }
  if constexpr ((PROLOGUE & kProgrammaticLaunch) != 0) {
    // 7k: let the next kernel of the stream launch now (its blocks still need this grid's SMs
    // to be freed, and wait as this one does below), then wait for the previous kernel: its
    // grid complete and its writes (C, the error word) visible before this thread reads A or
    // B, or writes C or the error word. Everything above touched only this block's shared
    // memory and its peer's cluster barrier.
    cudaTriggerProgrammaticLaunchCompletion();
    cudaGridDependencySynchronize();
  }
  const int tiles_m = ceil_div(g.M, BM), num_tiles = tiles_m * ceil_div(g.N, BN);
  const int ktiles = ceil_div(g.K, BK), half = ceil_div(ktiles, SPLIT);
  const int k_begin = min(ktiles, static_cast<int>(rank) * half);
  const int k_end = min(ktiles, k_begin + half);
  const int first_tile = blockIdx.x / SPLIT, tile_stride = gridDim.x / SPLIT;
  const int warp = threadIdx.x / 32;
  tut::RingPosition<STAGES> pos;  // each role walks the same ring, in the same order

  if (warp == PRODUCER_WARP) {  // ---- producer: one elected lane ----
    if (tut::elect_one_lane()) {
      bool ok = true;
      for (int tile = first_tile; tile < num_tiles && ok; tile += tile_stride) {
        const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
        for (int kt = k_begin; kt < k_end; ++kt, pos.advance()) {
          // The consumers have released this slot (first lap: the phase before the current
          // one, which counts as complete, so the wait returns at once).
          ok = tut::wait_or_report(&empty[pos.slot], pos.phase ^ 1, g.error,
                                   tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, pos.slot).at_k_tile(kt));
          if (!ok) break;
          load_stage(ring + pos.slot * STAGE_BYTES, &full[pos.slot], map_a, map_b, kt, tc);
        }
      }
    }
    // 7g: the producer never touches the peer; it completes its half of the start's barrier
    // here (each arrival is paired with a wait before the next arrival, or the exit).
    if constexpr (DEFER_WAIT) ptx::barrier_cluster_wait(ptx::sem_acquire);
  } else {  // ---- consumers: warpgroup 0 rows 0..63, warpgroup 1 rows 64..127 ----
    const int warpgroup = warp / 4, row0 = warpgroup * 64, tid = threadIdx.x % 128;
    const bool arrives = threadIdx.x % 32 == 0;  // one "slot free" arrival per warp
    const bool reduces = SPLIT == 1 || warpgroup == static_cast<int>(rank);  // stores C rows
    bool timed_out = false;  // a timed-out consumer never leaves early (gemm_common.cuh)
    std::uint32_t handoff_phase = 0;  // ready and taken complete one phase per tile
    bool peer_ready = !DEFER_WAIT;  // 7g: the peer's barriers are known to be initialised
    float d[64];
    for (int tile = first_tile; tile < num_tiles; tile += tile_stride) {
      const TileCoord tc = tile_coord(tile, tiles_m, BM, BN);
      int previous_slot = -1;
      for (int kt = k_begin; kt < k_end; ++kt, pos.advance()) {
        const unsigned char* stage = ring + pos.slot * STAGE_BYTES;
        const auto site = tut::WaitSite::consumer_warpgroup(warpgroup).on(tut::Barrier::kFull, pos.slot).at_k_tile(kt).expecting(STAGE_BYTES);
        timed_out = timed_out || !tut::wait_or_report(&full[pos.slot], pos.phase, g.error, site);
        tut::wgmma_fence();
        mma_stage_n128(d, stage + row0 * 128, stage + A_BYTES, kt > k_begin);
        tut::wgmma_commit_group();
        tut::wgmma_wait_group<1>();  // the previous k-tile's MMAs have read their slot
        tut::perturb(tut::Perturb::kBeforeRelease, kt);
        const int released = previous_slot;  // the slot the previous k-tile's MMAs read
        previous_slot = pos.slot;
        if (released >= 0 && arrives && !timed_out) ptx::mbarrier_arrive(&empty[released]);  // the producer may refill it
      }
      tut::wgmma_wait_group<0>();
      if (previous_slot >= 0 && arrives && !timed_out) ptx::mbarrier_arrive(&empty[previous_slot]);
      if (k_begin == k_end)  // an empty half of K (K <= 64 and rank 1): a zero partial
        for (int j = 0; j < 64; ++j) d[j] = 0.0f;
      tut::fence_accumulators(d);
      if constexpr (DEFER_WAIT) {
        // 7g: the first hand-off is this thread's first use of the peer (its inbox, its ready,
        // its taken): the peer's inits, released by its arrival, before it.
        if (!peer_ready) ptx::barrier_cluster_wait(ptx::sem_acquire);  // once, before the first hand-off
        peer_ready = true;
      }
      if constexpr (BULK_HANDOFF) {
        // ---- 7d: the hand-off through the async proxy, one elected thread per warpgroup ----
        const bool leader = tid == 0;  // waits, copies and arrives for its warpgroup
        const int group_barrier = 1 + warpgroup;  // this warpgroup's named barrier (0: __syncthreads)
        if (!reduces) {  // ---- export: my partial into my outbox, then one bulk copy ----
          const auto site = tut::WaitSite::consumer_warpgroup(warpgroup).on(tut::Barrier::kConsumed).at_tile(tile);
          // taken: the peer's reducer has read my previous partial out of its inbox (acquire
          // at cluster scope: its loads before my copy's next writes). That copy had landed
          // all its bytes before the peer's ready completed, so it is done reading my outbox.
          if (leader && !timed_out && !tut::wait_or_report_cluster(&taken, handoff_phase ^ 1, g.error, site))
            timed_out = true;
          if constexpr (ST_ASYNC) {
            // 7i: every thread pushes, so every thread learns whether the leader gave up
            // (and, through the barrier, is ordered after its acquire of taken).
            timed_out = named_barrier_or(group_barrier, 128, timed_out);
            tut::perturb(tut::Perturb::kBeforeTmaIssue, tile);
            if (!timed_out) {
              const std::uint32_t remote_inbox = peer_address(inbox, peer);
              const std::uint32_t remote_ready = peer_address(&ready, peer);
#pragma unroll
              for (int j = 0; j < 64; j += 4)  // 7d's [j / 4][tid] layout, in the peer's inbox
                st_async_v4(remote_inbox + 16 * ((j / 4) * 128 + tid), make_float4(d[j], d[j + 1], d[j + 2], d[j + 3]), remote_ready);
            }
          } else {  // 7d, 7e: my outbox, then one bulk copy
            tut::named_barrier_sync(group_barrier, 128);  // no thread rewrites the outbox before that
#pragma unroll
            for (int j = 0; j < 64; j += 4)  // the same [j / 4][tid] layout as 7b, in my own memory
              st_shared_v4(tut::smem_addr(partial + (j / 4) * 128 + tid), make_float4(d[j], d[j + 1], d[j + 2], d[j + 3]));
            ptx::fence_proxy_async(ptx::space_shared);  // my outbox writes, before the bulk copy reads them
            tut::named_barrier_sync(group_barrier, 128);  // every thread has written and fenced
            if (leader) {
              tut::perturb(tut::Perturb::kBeforeTmaIssue, tile);
              if (!timed_out) push_partial(inbox, partial, &ready, peer);  // into the peer's inbox
            }
          }
        } else {  // ---- reduce: arm ready, wait for the bytes, add my local copy ----
          if (leader) {
            tut::perturb(tut::Perturb::kBeforeArrive, tile);
            // This tile's phase: my one arrival plus the partial's bytes (the previous phase is
            // complete: this warpgroup waited on it). The peer's bytes may land before this
            // arrival; the phase cannot complete until both are in.
            if (!timed_out)
              ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &ready, PARTIAL_BYTES);
          }
          const auto site = tut::WaitSite::consumer_warpgroup(warpgroup).on(tut::Barrier::kReady).at_tile(tile).expecting(PARTIAL_BYTES);
          // My own barrier, CTA scope: the complete_tx makes the copied bytes visible to the
          // threads that observe the phase complete.
          if (!timed_out && !tut::wait_or_report(&ready, handoff_phase, g.error, site)) timed_out = true;
#pragma unroll
          for (int j = 0; j < 64; j += 4) {
            const float4 v = ld_shared_v4(tut::smem_addr(inbox + (j / 4) * 128 + tid));  // local now
            d[j] += v.x, d[j + 1] += v.y, d[j + 2] += v.z, d[j + 3] += v.w;
          }
          tut::named_barrier_sync(group_barrier, 128);  // all my warpgroup's inbox reads are over
          if (leader) {
            tut::perturb(tut::Perturb::kBeforeArrive, tile);
            if (!timed_out) arrive_on_peer(&taken, peer);  // one release at cluster scope, not 128
          }
        }
        handoff_phase ^= 1u;
      } else if constexpr (SPLIT > 1) {
        if (!reduces) {  // ---- export: my partial, for the peer's reducing warpgroup ----
          const auto site = tut::WaitSite::consumer_warpgroup(warpgroup).on(tut::Barrier::kConsumed).at_tile(tile);
          // The peer's reads of my previous partial are over (first tile: returns at once).
          if (!timed_out && !tut::wait_or_report_cluster(&taken, handoff_phase ^ 1, g.error, site))
            timed_out = true;
#pragma unroll
          for (int j = 0; j < 64; j += 4)  // [j / 4][tid]: 16 bytes per thread, conflict-free
            partial[(j / 4) * 128 + tid] = make_float4(d[j], d[j + 1], d[j + 2], d[j + 3]);
          tut::perturb(tut::Perturb::kBeforeArrive, tile);
          if (!timed_out) arrive_on_peer(&ready, peer);  // my partial's stores, then the peer's ready
        } else {  // ---- reduce: add the peer's partial of the same rows ----
          const auto site = tut::WaitSite::consumer_warpgroup(warpgroup).on(tut::Barrier::kReady).at_tile(tile);
          if (!timed_out && !tut::wait_or_report_cluster(&ready, handoff_phase, g.error, site))
            timed_out = true;
          const float4* remote = static_cast<const float4*>(__cluster_map_shared_rank(partial, peer));
#pragma unroll
          for (int j = 0; j < 64; j += 4) {
            const float4 v = tut::ld_shared_cluster_v4(remote + (j / 4) * 128 + tid);
            d[j] += v.x, d[j + 1] += v.y, d[j + 2] += v.z, d[j + 3] += v.w;
          }
          tut::perturb(tut::Perturb::kBeforeRelease, tile);
          if (!timed_out) arrive_on_peer(&taken, peer);  // my loads of its partial, then its taken
        }
        handoff_phase ^= 1u;
      }
      if constexpr (TMA_STORE) {
        if (reduces) store_tile_n128(staging, d, *map_c, tc.m0 + row0, tc.n0, 1 + warpgroup);
      } else {
        if (reduces) store_accumulators(g, d, tc.m0 + row0, tc.n0);
      }
    }
    if constexpr (TMA_STORE)  // the staging tile outlives the last store's reads
      if (reduces && tid == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
    if constexpr (DEFER_WAIT)  // no tile (a grid-capped block past the last one): no hand-off
      if (!peer_ready) ptx::barrier_cluster_wait(ptx::sem_acquire);
    if constexpr (EXIT_ON_TAKEN) {
      // 7h: the last tile's taken. The peer's reducer arrives on it once its loads of my
      // partial are over, and my push into its inbox had landed all its bytes before its
      // ready completed: after this, the peer has nothing more to do with my shared memory.
      // Its own arrival on my taken is the last thing it does here, so this block may exit.
      if (!reduces && tid == 0 && !timed_out && first_tile < num_tiles) {
        const auto site = tut::WaitSite::consumer_warpgroup(warpgroup).on(tut::Barrier::kConsumed).at_tile(num_tiles);
        tut::wait_or_report_cluster(&taken, handoff_phase ^ 1, g.error, site);
      }
    }
  }
  if constexpr (SPLIT > 1 && !EXIT_ON_TAKEN) {  // neither block exits while its peer may still read its partial
    ptx::barrier_cluster_arrive(ptx::sem_release);  // or arrive on its barriers
    ptx::barrier_cluster_wait(ptx::sem_acquire);
  }
}

/// 128 x 128 tiles, no split: one block per tile, two per SM.
__global__ void __launch_bounds__(THREADS, Config<1>::BLOCKS_PER_SM)
    gemm_step7_small_tiles_kernel(const __grid_constant__ CUtensorMap map_a,
                                  const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  small_tile_gemm<1>(map_a, map_b, g);
}

/// 128 x 128 tiles, K split over the two blocks of a cluster, reduced through DSMEM.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(THREADS, Config<2>::BLOCKS_PER_SM)
    gemm_step7_split_k_kernel(const __grid_constant__ CUtensorMap map_a,
                              const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  small_tile_gemm<2>(map_a, map_b, g);
}

/// Output tiles of the 128 x 128 grid.
inline int small_tiles(const GemmArgs& g) { return ceil_div(g.M, BM) * ceil_div(g.N, BN); }

/// One block per tile (capped for the lap check; the kernel walks grid-stride).
inline void launch_small_tiles(const CUtensorMap& a128, const CUtensorMap& b128,
                               const GemmArgs& g, cudaStream_t s) {
  constexpr int smem = Config<1>::SMEM_BYTES;
  const int fit = tut::resident_occupancy(gemm_step7_small_tiles_kernel, THREADS, smem);
  gemm_step7_small_tiles_kernel<<<tile_grid(small_tiles(g), fit), THREADS, smem, s>>>(a128, b128, g);
}

/// 7b's reduction, with 7d's asynchronous hand-off: one bulk DSMEM copy per tile and warpgroup.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(THREADS, Config<2, true>::BLOCKS_PER_SM)
    gemm_step7_bulk_handoff_kernel(const __grid_constant__ CUtensorMap map_a,
                                   const __grid_constant__ CUtensorMap map_b, GemmArgs g) {
  small_tile_gemm<2, true>(map_a, map_b, g);
}

/// 7d with 7e's TMA-store epilogue.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(THREADS, 1)
    gemm_step7_bulk_tma_store_kernel(const __grid_constant__ CUtensorMap map_a,
                                     const __grid_constant__ CUtensorMap map_b,
                                     const __grid_constant__ CUtensorMap map_c, GemmArgs g) {
  small_tile_gemm<2, true, true>(map_a, map_b, g, &map_c);
}

/// 7f-7k: 7e with the fixed-cost levers PROLOGUE (kPrefetchMaps, kDeferClusterWait,
/// kExitOnTaken, kStAsyncHandoff, kFiveStages, kProgrammaticLaunch above); 7e's tile, roles and reduction otherwise.
template <int PROLOGUE>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(THREADS, 1)
    gemm_step7_fixed_cost_kernel(const __grid_constant__ CUtensorMap map_a,
                                 const __grid_constant__ CUtensorMap map_b,
                                 const __grid_constant__ CUtensorMap map_c, GemmArgs g) {
  small_tile_gemm<2, true, true, PROLOGUE>(map_a, map_b, g, &map_c);
}

/// One 2-block cluster per tile; 161 KiB of shared memory per block: one block per SM.
inline void launch_split_k(const CUtensorMap& a128, const CUtensorMap& b128, const GemmArgs& g,
                           cudaStream_t s) {
  constexpr int smem = Config<2>::SMEM_BYTES;
  tut::opt_in_dynamic_smem(gemm_step7_split_k_kernel, smem);
  gemm_step7_split_k_kernel<<<tile_grid(small_tiles(g) * 2, 1, 2), THREADS, smem, s>>>(a128, b128, g);
}

/// 7d: as launch_split_k, 193 KiB per block (outbox + inbox).
inline void launch_bulk_handoff(const CUtensorMap& a128, const CUtensorMap& b128,
                                const GemmArgs& g, cudaStream_t s) {
  constexpr int smem = Config<2, true>::SMEM_BYTES;
  tut::opt_in_dynamic_smem(gemm_step7_bulk_handoff_kernel, smem);
  gemm_step7_bulk_handoff_kernel<<<tile_grid(small_tiles(g) * 2, 1, 2), THREADS, smem, s>>>(a128, b128, g);
}

/// 7e: as launch_bulk_handoff, 209 KiB per block (+ the staging tile), C through map @p c64.
inline void launch_bulk_tma_store(const CUtensorMap& a128, const CUtensorMap& b128,
                                  const CUtensorMap& c64, const GemmArgs& g, cudaStream_t s) {
  constexpr int smem = Config<2, true, true>::SMEM_BYTES;
  tut::opt_in_dynamic_smem(gemm_step7_bulk_tma_store_kernel, smem);
  gemm_step7_bulk_tma_store_kernel<<<tile_grid(small_tiles(g) * 2, 1, 2), THREADS, smem, s>>>(a128, b128, c64, g);
}

/// 7f (kPrefetchMaps), 7g (+ kDeferClusterWait), 7h (+ kExitOnTaken), 7i (+ kStAsyncHandoff:
/// 177 KiB), 7j (+ kFiveStages: 209 KiB): as launch_bulk_tma_store; 7k (+ kProgrammaticLaunch)
/// through tut::launch_programmatic.
template <int PROLOGUE>
inline void launch_fixed_cost(const CUtensorMap& a128, const CUtensorMap& b128,
                              const CUtensorMap& c64, const GemmArgs& g, cudaStream_t s) {
  constexpr int smem = Config<2, true, true, (PROLOGUE & kStAsyncHandoff) != 0,
                              (PROLOGUE & kFiveStages) != 0 ? 1 : 0>::SMEM_BYTES;
  tut::opt_in_dynamic_smem(gemm_step7_fixed_cost_kernel<PROLOGUE>, smem);
  const unsigned grid = tile_grid(small_tiles(g) * 2, 1, 2);
  if constexpr ((PROLOGUE & kProgrammaticLaunch) != 0)
    tut::launch_programmatic(gemm_step7_fixed_cost_kernel<PROLOGUE>, grid, THREADS, smem, s, a128, b128, c64, g);
  else
    gemm_step7_fixed_cost_kernel<PROLOGUE><<<grid, THREADS, smem, s>>>(a128, b128, c64, g);
}

// ---------------------------------------------------------------------------------------------
// The size dispatch: which schedule a problem gets (host code, what a library's heuristic does)
// ---------------------------------------------------------------------------------------------
enum class Schedule { kLargeTiles, kSmallTiles, kSplitK };

/// The rule, on tile counts against the SM count:
///  1. the large-tile schedule (step 6l: step 6's levers, the epilogue under the next tile's
///     MMAs, the exit's read-only wait, the drain in place of the exit's cluster barrier and
///     programmatic dependent launch; 128 x 256 tiles, persistent) when its tiles fill at
///     least 7/8 of the SMs: there is a near-full wave of big tiles, and big tiles read the
///     least from L2 per MAC;
///  2. otherwise split-K (7k: 7e's hand-off and TMA-store epilogue with 7f-7k's lower fixed
///     costs) when two blocks per 128 x 128 tile still fit in one wave
///     (2 x tiles <= SMs) and each half of K keeps at least 4 k-tiles (K >= 512);
///  3. otherwise 128 x 128 tiles without a split.
/// On 132 SMs: 1024^3 has 32 large tiles and 64 small ones -> split-K (128 blocks);
/// 2048^3 has 128 large tiles (>= 115.5) -> step 6l.
// Rules 1 and 2 name the rows launched with programmatic dependent launch (6l, 7k) because in
// the timing loop, back-to-back GEMMs in one stream, they are the fastest rows of their
// schedule; the README's "The size rule" prints the rows' figures from the reference run.
inline Schedule choose_schedule(int M, int N, int K, int sm_count) {
  const int large_tiles = ceil_div(M, 128) * ceil_div(N, 256);
  if (8 * large_tiles >= 7 * sm_count) return Schedule::kLargeTiles;
  const int tiles = ceil_div(M, BM) * ceil_div(N, BN);
  if (2 * tiles <= sm_count && ceil_div(K, BK) >= 8) return Schedule::kSplitK;
  return Schedule::kSmallTiles;
}

/// The dispatched launch: the schedule choose_schedule names, with the tensor maps it needs
/// (A and B in boxes of 128 rows for all three; C in boxes of 64 rows for the TMA stores of
/// steps 6k and 7j).
inline void launch_dispatched(const CUtensorMap& a128, const CUtensorMap& b128,
                              const CUtensorMap& c64, const GemmArgs& g, int sm_count,
                              cudaStream_t s) {
  switch (choose_schedule(g.M, g.N, g.K, sm_count)) {
    case Schedule::kLargeTiles: step6::launch<step6::ProgrammaticLaunch>(a128, b128, c64, g, sm_count, s); break;
    case Schedule::kSplitK: launch_fixed_cost<kStep7kLevers>(a128, b128, c64, g, s); break;
    case Schedule::kSmallTiles: launch_small_tiles(a128, b128, g, s); break;
  }
}

}  // namespace ch16::step7
