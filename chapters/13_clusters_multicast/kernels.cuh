/// @file kernels.cuh
/// @brief Chapter 13's lesson kernels in variant order: v0 (no cluster), v1 (DSMEM pull),
///        v2 (st.async push), v3 (one multicast per table tile, raw PTX), v4 (v3 through
///        cuda::ptx), v5 (DSMEM store push), each with its whole protocol in its own body, and
///        the launchers.
//
// Chapter 13: thread-block clusters, distributed shared memory (DSMEM) and TMA multicast
//
// On Hopper, up to 8 blocks (16 with an opt-in) can be launched as a *cluster*: co-scheduled
// on the SMs of one GPC, they can read and write each other's shared memory (DSMEM), arrive on
// each other's mbarriers, and receive one TMA load together (multicast). When every block needs
// the same data, a cluster can fetch it from L2 ONCE and deliver it to all its blocks.
//
// Workload: a broadcast add. Row r of `in` (64 KiB) plus a shared table (64 KiB) gives row r
// of `out`: out[r][i] = in[r][i] + table[i] (uint32, wrapping: exact). Every block needs the
// whole table, streamed in 8 KiB tiles next to its own row through a 4-slot ring. Rows go to
// clusters in groups of CLUSTER (group g = rows g*C .. g*C+C-1, rank k takes row g*C + k);
// cluster c walks groups c, c + clusters, ... so the kernels are correct for any grid.
//
// The cluster ring (v1-v5; v0 is chapter 11's ring without a cluster). Slot s of a block is
// [row tile | table tile] in its dynamic shared memory, and full[s] counts the bytes that land
// in it; the row part is always the block's own bulk load, the variants differ in how the table
// part gets there. Each kernel spells out the same four steps:
// 1. Thread 0 of every block initialises its full[s] (count 1) and publishes it cluster-wide
//    (fence.mbarrier_init.release.cluster, then step 2's cluster barrier): peers' copies will
//    complete_tx on it (chapter 11, "The init fence": the cluster form).
// 2. Each block's thread 0 posts arrive.expect_tx on ITS OWN full[s]; a cluster barrier; then
//    it loads its row tile and the variant's table copy is issued. No copy can reach a phase
//    whose expectation is not posted.
// 3. Wait on full[s], bring the table tile to the add, add, fence the slot reads for the async
//    proxy (the next write into the slot is a TMA or st.async write).
// 4. Step 2 for tile + STAGES: its cluster barrier frees slot s in every block, and is also the
//    exit rule: no block exits while a peer may still write its shared memory.
// A block whose wait gives up stops producing and consuming but keeps taking every cluster
// barrier, so its peers are never left waiting; they time out too if they needed its tiles.
// Every wait names itself when it gives up (tut::wait_or_report / wait_or_report_cluster).
// The host side (reference, Problem, registry) is main.cu; the negative v9 is broken.cuh.
//
// Needs compute capability 9.0 and CUDA 12.8 or newer. Built for sm_90a: ptxas accepts
// .multicast::cluster for sm_90 only with an advisory warning, and CCCL declares it for sm_90a,
// sm_100a and sm_101a (this chapter builds sm_90a), so the multicast code is compiled under
// __CUDA_ARCH_FEAT_SM90_ALL (the sm_90a pass);
// the compute_90 PTX listing the CI checks has a trap in its place and is never run.
// Run:    build/bin/ch13_clusters_multicast [--size=1G] [--list]
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "common/bounded_wait.cuh"
#include "common/cuda_check.cuh"
#include "common/cp_async.cuh"  // tut::smem_addr
#include "common/launch.cuh"
#include "common/perturb.cuh"
#include "common/ring.cuh"

namespace ch13 {

namespace cg = cooperative_groups;
namespace ptx = cuda::ptx;

constexpr int THREADS = 256;
constexpr int CLUSTER = 4;                 // blocks per cluster (portable limit: 8)
constexpr int ROW_WORDS = 16384;           // 64 KiB per row, and the table
constexpr int TILE_WORDS = 2048;           // 8 KiB tiles
constexpr int TILE_VECS = TILE_WORDS / 4;  // 512 x 16 B
constexpr int TILE_BYTES = TILE_WORDS * 4;
constexpr int TILES_PER_ROW = ROW_WORDS / TILE_WORDS;  // 8
constexpr int STAGES = 4;                              // slots: [row tile | table tile] x 4
constexpr int VECS_PER_THREAD = TILE_VECS / THREADS;   // 2
constexpr std::size_t SMEM_BYTES = std::size_t{STAGES} * 2 * TILE_BYTES;  // 64 KiB
static_assert(ROW_WORDS % TILE_WORDS == 0 && TILE_VECS % THREADS == 0, "whole tiles");
// Table tile k is owned by rank k % CLUSTER and ring tile `tile` uses slot tile % STAGES, with
// k = tile % TILES_PER_ROW. These make every slot's owner fixed, so a peer's slot is only ever
// written by one path (never by both a TMA and DSMEM stores).
static_assert(STAGES % CLUSTER == 0 && TILES_PER_ROW % STAGES == 0, "one owner per slot");

// One bulk load delivered to every block whose bit is set in `cta_mask`, at the same offsets
// (`dst`, `bar`) in each block's shared memory; each block's mbarrier gets complete_tx(bytes).
__device__ inline void ptx_bulk_load_multicast(void* dst, const void* src, std::uint32_t bytes,
                                               std::uint64_t* bar, std::uint16_t cta_mask) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1], %2, [%3], %4;"
      ::"r"(tut::smem_addr(dst)), "l"(src), "r"(bytes), "r"(tut::smem_addr(bar)), "h"(cta_mask)
      : "memory");
#else
  (void)dst, (void)src, (void)bytes, (void)bar, (void)cta_mask;
  __trap();  // only in the compute_90 listing: the chapter's binary is sm_90a code
#endif
}

// Which row tile and table tile a block's ring tile `tile` (0, 1, ... in this block) is. C: cluster size (1: no cluster).
// Every block of a cluster walks the same number of tiles, in lockstep.
template <int C>
struct RowWalk {
  std::size_t n_words, first_group, tiles;
  unsigned rank, group_stride;
  __device__ explicit RowWalk(std::size_t n_words_) : n_words(n_words_) {
    rank = blockIdx.x % C;  // the cluster's blocks are consecutive in a 1D grid
    first_group = blockIdx.x / C;
    group_stride = gridDim.x / C;
    const std::size_t rows = (n_words + ROW_WORDS - 1) / ROW_WORDS;
    const std::size_t groups = (rows + C - 1) / C;
    tiles = first_group < groups ? ((groups - 1 - first_group) / group_stride + 1) * TILES_PER_ROW
                                 : 0;
  }
  __device__ int table_tile(std::size_t tile) const { return static_cast<int>(tile % TILES_PER_ROW); }
  __device__ std::uint32_t owner(std::size_t tile) const { return table_tile(tile) % C; }
  // first word of row tile `tile` (possibly past the end of `in`)
  __device__ std::size_t word(std::size_t tile) const {
    const std::size_t row = (first_group + tile / TILES_PER_ROW * group_stride) * C + rank;
    return row * ROW_WORDS + static_cast<std::size_t>(table_tile(tile)) * TILE_WORDS;
  }
  __device__ std::uint32_t row_bytes(std::size_t tile) const {  // fewer at the end, 0 past it
    const std::size_t w = word(tile);
    if (w >= n_words) return 0;
    return 4u * static_cast<std::uint32_t>(n_words - w < TILE_WORDS ? n_words - w : TILE_WORDS);
  }
};

// Every kernel's one parameter: the buffers and the error word its bounded waits report to.
struct BroadcastArgs {
  const std::uint32_t* in;     // n_words: rows of ROW_WORDS, the last one ragged
  const std::uint32_t* table;  // ROW_WORDS
  std::uint32_t* out;          // n_words
  std::size_t n_words;
  unsigned* error;
};

// The consumer step: out = row tile + table tile, 16 bytes at a time (`tab` may point into a
// peer's shared memory: v1).
__device__ inline void add_tile(std::uint32_t* __restrict__ d_out, const uint4* row,
                                const uint4* tab, std::uint32_t bytes) {
#pragma unroll
  for (int q = 0; q < VECS_PER_THREAD; ++q) {
    const int v = q * THREADS + static_cast<int>(threadIdx.x);
    if (static_cast<std::uint32_t>(v) * 16 < bytes) {
      const uint4 a = row[v], b = tab[v];
      reinterpret_cast<uint4*>(d_out)[v] = make_uint4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
  }
}


// mapa: the shared::cluster address of the same variable in block `rank` of the cluster.
__device__ inline std::uint32_t ptx_mapa(std::uint32_t local_smem, std::uint32_t rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local_smem), "r"(rank));
  return remote;
}

// st.async (SASS STAS): a 16-byte register store into ANOTHER block's shared memory; when it
// lands, the hardware performs complete_tx(16) on the mbarrier at `remote_bar` in that block.
__device__ inline void ptx_st_async_v4(std::uint32_t remote_addr, uint4 v,
                                       std::uint32_t remote_bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, "
      "[%5];" ::"r"(remote_addr),
      "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(remote_bar)
      : "memory");
}

// The ring's shared memory: STAGES row tiles, then STAGES table tiles (SMEM_BYTES, dynamic).
__device__ inline uint4* ring_slots() {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  return reinterpret_cast<uint4*>(smem_raw);
}

// ---------------------------------------------------------------------------------------------
// v0: no cluster - every block bulk-loads its row tile AND the table tile itself (chapter 11)
// ---------------------------------------------------------------------------------------------
// full[s] (count 1 + bytes): phase n <=> ring tile s + n*STAGES (row part and table part) has
// landed. Slots are released by a __syncthreads, after a proxy fence: the reads are generic,
// the refill is a TMA write (async proxy). The barriers stay inside the block: the init fence
// is fence.proxy.async.
__global__ void __launch_bounds__(THREADS) broadcast_v0_bulk_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  uint4* const row_slots = ring_slots();                      // [STAGES][TILE_VECS]
  uint4* const tab_slots = row_slots + STAGES * TILE_VECS;    // [STAGES][TILE_VECS]
  const RowWalk<1> walk(a.n_words);
  const int tid = threadIdx.x, warp = tid / 32;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_proxy_async(ptx::space_shared);  // init fence (v0): the barriers stay in this block
  }
  __syncthreads();
  auto produce = [&](std::size_t tile) {  // thread 0: expect the row and table bytes, copy both
    const int s = static_cast<int>(tile % STAGES);
    const std::uint32_t row_bytes = walk.row_bytes(tile);
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[s], row_bytes + TILE_BYTES);
    if (row_bytes != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, row_slots + s * TILE_VECS,
                         a.in + walk.word(tile), row_bytes, &full[s]);
    ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, tab_slots + s * TILE_VECS,
                       a.table + walk.table_tile(tile) * TILE_WORDS, TILE_BYTES, &full[s]);
  };
  if (tid == 0)
    for (std::size_t tile = 0; tile < walk.tiles && tile < STAGES; ++tile) produce(tile);
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < walk.tiles; ++tile, ring.advance()) {
    const int s = ring.slot;
    const bool landed = tut::wait_or_report(
        &full[s], ring.phase, a.error,
        tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s).at_tile(tile)
            .expecting(walk.row_bytes(tile) + TILE_BYTES));
    if (__syncthreads_or(!landed)) return;  // a timeout anywhere: the whole block stops
    add_tile(a.out + walk.word(tile), row_slots + s * TILE_VECS, tab_slots + s * TILE_VECS,
             walk.row_bytes(tile));
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the TMA refill
    __syncthreads();
    if (tid == 0 && tile + STAGES < walk.tiles) produce(tile + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v1: DSMEM pull - the owner loads table tile k into its own slot; the peers READ it there
// ---------------------------------------------------------------------------------------------
// Only the owner's full[s] counts the table bytes. A cluster barrier after the owner's wait
// makes its slot visible to the peers (release/acquire at cluster scope); they read it
// through map_shared_rank pointers (generic loads of peer shared memory, LD.E.128). Their
// reads come before the owner's next TMA write into that slot, so they fence with
// .shared::cluster (the peer's window) before the end-of-tile barrier. Every copy into a
// block's full[s] is its own (no peer completes it), so the wait is at CTA scope.
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    broadcast_v1_dsmem_pull_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  uint4* const row_slots = ring_slots();
  uint4* const tab_slots = row_slots + STAGES * TILE_VECS;
  const RowWalk<CLUSTER> walk(a.n_words);
  const cg::cluster_group cluster = cg::this_cluster();
  const int tid = threadIdx.x, warp = tid / 32;
  auto owns = [&](std::size_t tile) { return walk.owner(tile) == walk.rank; };
  auto expected = [&](std::size_t tile) {  // my row bytes, plus the table bytes if I load it
    return walk.row_bytes(tile) + (owns(tile) ? TILE_BYTES : 0u);
  };
  auto expect = [&](std::size_t tile) {  // thread 0: full[s]'s one arrival for this tile
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[tile % STAGES], expected(tile));
  };
  auto issue = [&](std::size_t tile) {  // thread 0: my row tile; the owner: the table tile
    const int s = static_cast<int>(tile % STAGES);
    if (walk.row_bytes(tile) != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, row_slots + s * TILE_VECS,
                         a.in + walk.word(tile), walk.row_bytes(tile), &full[s]);
    if (owns(tile))
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, tab_slots + s * TILE_VECS,
                         a.table + walk.table_tile(tile) * TILE_WORDS, TILE_BYTES, &full[s]);
  };
  if (tid == 0) {  // step 1
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // init fence (v1): cluster form
  }
  const std::size_t prologue = STAGES < walk.tiles ? STAGES : walk.tiles;  // step 2, first laps
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) expect(tile);
  cluster.sync();  // every block's barriers are initialised and its expectations posted
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) issue(tile);
  bool failed = false;  // block-uniform
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < walk.tiles; ++tile, ring.advance()) {
    const int s = ring.slot;
    if (!failed)  // step 3
      failed = __syncthreads_or(!tut::wait_or_report(
                   &full[s], ring.phase, a.error,
                   tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s).at_tile(tile)
                       .expecting(expected(tile)))) != 0;
    cluster.sync();  // the owner's slot s is complete and visible to its peers
    const uint4* tab = cluster.map_shared_rank(tab_slots + s * TILE_VECS, walk.owner(tile));
    if (!failed) add_tile(a.out + walk.word(tile), row_slots + s * TILE_VECS, tab,
                          walk.row_bytes(tile));
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    ptx::fence_proxy_async(ptx::space_cluster);  // my (remote) slot reads -> before the refill
    const std::size_t next = tile + STAGES;  // step 4 = step 2 for the tile that reuses slot s
    const bool leader = tid == 0 && !failed && next < walk.tiles;
    if (leader) expect(next);
    cluster.sync();  // every block has read slot s and posted its next expectation
    if (leader) issue(next);
  }
}

// ---------------------------------------------------------------------------------------------
// v2: st.async push - the owner stores its tile into each peer's slot, counted on its full[s]
// ---------------------------------------------------------------------------------------------
// Every block expects the full table tile: the owner from its own bulk load, the peers from
// the owner's st.async. They posted that expectation before the cluster barrier that preceded
// the owner's load, and cannot reuse slot s before the next one. The completion comes from
// another block, so the wait acquires at cluster scope.
__global__ void __launch_bounds__(THREADS) broadcast_v2_st_async_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  uint4* const row_slots = ring_slots();
  uint4* const tab_slots = row_slots + STAGES * TILE_VECS;
  const RowWalk<CLUSTER> walk(a.n_words);
  const int tid = threadIdx.x, warp = tid / 32;
  auto owns = [&](std::size_t tile) { return walk.owner(tile) == walk.rank; };
  auto expect = [&](std::size_t tile) {  // thread 0: my row bytes and the whole table tile
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[tile % STAGES], walk.row_bytes(tile) + TILE_BYTES);
  };
  auto issue = [&](std::size_t tile) {  // thread 0: my row tile; the owner: the table tile
    const int s = static_cast<int>(tile % STAGES);
    if (walk.row_bytes(tile) != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, row_slots + s * TILE_VECS,
                         a.in + walk.word(tile), walk.row_bytes(tile), &full[s]);
    if (owns(tile))
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, tab_slots + s * TILE_VECS,
                         a.table + walk.table_tile(tile) * TILE_WORDS, TILE_BYTES, &full[s]);
  };
  if (tid == 0) {  // step 1
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // init fence (v2): cluster form
  }
  const std::size_t prologue = STAGES < walk.tiles ? STAGES : walk.tiles;
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) expect(tile);
  cg::this_cluster().sync();  // every peer has posted its expectations
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) issue(tile);
  bool failed = false;  // block-uniform
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < walk.tiles; ++tile, ring.advance()) {
    const int s = ring.slot;
    uint4* my_tab = tab_slots + s * TILE_VECS;
    if (!failed)  // step 3: the owner's copy, or its st.async into my slot, completes full[s]
      failed = __syncthreads_or(!tut::wait_or_report_cluster(
                   &full[s], ring.phase, a.error,
                   tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s).at_tile(tile)
                       .expecting(walk.row_bytes(tile) + TILE_BYTES))) != 0;
    if (!failed && owns(tile))  // the push: 16 B per store, counted on the peer's full[s]
      for (int q = 0; q < VECS_PER_THREAD; ++q) {
        const int v = q * THREADS + tid;
        const uint4 val = my_tab[v];
        for (std::uint32_t peer = 0; peer < CLUSTER; ++peer)
          if (peer != walk.rank)
            ptx_st_async_v4(ptx_mapa(tut::smem_addr(&my_tab[v]), peer), val,
                            ptx_mapa(tut::smem_addr(&full[s]), peer));
      }
    if (!failed) add_tile(a.out + walk.word(tile), row_slots + s * TILE_VECS, my_tab,
                          walk.row_bytes(tile));
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the next async write
    const std::size_t next = tile + STAGES;  // step 4
    const bool leader = tid == 0 && !failed && next < walk.tiles;
    if (leader) expect(next);
    cg::this_cluster().sync();  // slot s is free in every block; expectations posted
    if (leader) issue(next);
  }
}

// ---------------------------------------------------------------------------------------------
// v3: one multicast bulk load per table tile, for the whole cluster (raw PTX)
// ---------------------------------------------------------------------------------------------
// Every block expects the whole table tile on its own full[s]; its owner (rank k % 4) issues
// ONE multicast to all four blocks, so each waits at cluster scope (a peer's copy completes it).
__global__ void __launch_bounds__(THREADS) broadcast_v3_multicast_ptx_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  uint4* const row_slots = ring_slots();
  uint4* const tab_slots = row_slots + STAGES * TILE_VECS;
  const RowWalk<CLUSTER> walk(a.n_words);
  const int tid = threadIdx.x, warp = tid / 32;
  auto owns = [&](std::size_t tile) { return walk.owner(tile) == walk.rank; };
  auto expect = [&](std::size_t tile) {  // thread 0: my row bytes and the whole table tile
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[tile % STAGES], walk.row_bytes(tile) + TILE_BYTES);
  };
  auto issue = [&](std::size_t tile) {  // thread 0: my row tile; the owner: the multicast
    const int s = static_cast<int>(tile % STAGES);
    if (walk.row_bytes(tile) != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, row_slots + s * TILE_VECS,
                         a.in + walk.word(tile), walk.row_bytes(tile), &full[s]);
    // EXERCISE-BEGIN: the table tile: its owner alone issues ONE copy that lands in slot s of every block of the cluster (a mask bit per rank), completing on each block's own full[s]
    if (owns(tile))
      ptx_bulk_load_multicast(tab_slots + s * TILE_VECS,
                              a.table + walk.table_tile(tile) * TILE_WORDS, TILE_BYTES, &full[s],
                              (1u << CLUSTER) - 1);
    // EXERCISE-STUB: (void)owns, (void)tab_slots;
    // EXERCISE-END
  };
  if (tid == 0) {  // step 1
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // init fence (v3): cluster form
  }
  const std::size_t prologue = STAGES < walk.tiles ? STAGES : walk.tiles;
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) expect(tile);
  cg::this_cluster().sync();  // every peer has posted its expectations
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) issue(tile);
  bool failed = false;  // block-uniform
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < walk.tiles; ++tile, ring.advance()) {
    const int s = ring.slot;
    if (!failed)  // step 3: a peer's multicast may complete my full[s]: cluster scope
      failed = __syncthreads_or(!tut::wait_or_report_cluster(
                   &full[s], ring.phase, a.error,
                   tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s).at_tile(tile)
                       .expecting(walk.row_bytes(tile) + TILE_BYTES))) != 0;
    if (!failed) add_tile(a.out + walk.word(tile), row_slots + s * TILE_VECS,
                          tab_slots + s * TILE_VECS, walk.row_bytes(tile));
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    // EXERCISE-BEGIN: order this thread's slot reads before the next asynchronous (TMA) write into the slot
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the next TMA write
    // EXERCISE-END
    const std::size_t next = tile + STAGES;  // step 4 = step 2 for the tile that reuses slot s
    const bool leader = tid == 0 && !failed && next < walk.tiles;
    // EXERCISE-BEGIN: step 2 for tile `next`: the leader's expectation and copies, and the cluster barrier that every thread takes, in the one safe order
    if (leader) expect(next);  // my next expectation, before the cluster barrier
    cg::this_cluster().sync();  // every peer has read slot s and posted its next expectation
    if (leader) issue(next);
    // EXERCISE-STUB: (void)leader, (void)expect, (void)issue;
    // EXERCISE-STUB: cg::this_cluster().sync();  // keep: every block takes every cluster barrier
    // EXERCISE-END
  }
}

// ---------------------------------------------------------------------------------------------
// v4: v3's multicast through cuda::ptx, launched with __cluster_dims__
// ---------------------------------------------------------------------------------------------
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    broadcast_v4_multicast_cccl_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  uint4* const row_slots = ring_slots();
  uint4* const tab_slots = row_slots + STAGES * TILE_VECS;
  const RowWalk<CLUSTER> walk(a.n_words);
  const int tid = threadIdx.x, warp = tid / 32;
  auto owns = [&](std::size_t tile) { return walk.owner(tile) == walk.rank; };
  auto expect = [&](std::size_t tile) {
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[tile % STAGES], walk.row_bytes(tile) + TILE_BYTES);
  };
  auto issue = [&](std::size_t tile) {
    const int s = static_cast<int>(tile % STAGES);
    if (walk.row_bytes(tile) != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, row_slots + s * TILE_VECS,
                         a.in + walk.word(tile), walk.row_bytes(tile), &full[s]);
    // EXERCISE-BEGIN: v3's table multicast through cuda::ptx::cp_async_bulk (space_cluster destination, a ctaMask argument)
    if (owns(tile))
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // the multicast overload: the sm_90a pass of this build
      ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, tab_slots + s * TILE_VECS,
                         a.table + walk.table_tile(tile) * TILE_WORDS, TILE_BYTES, &full[s],
                         static_cast<std::uint16_t>((1u << CLUSTER) - 1));
#else
      __trap();  // only in the compute_90 listing: the chapter's binary is sm_90a code
#endif
    // EXERCISE-STUB: (void)owns, (void)tab_slots;
    // EXERCISE-END
  };
  if (tid == 0) {  // step 1
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // init fence (v4): cluster form
  }
  const std::size_t prologue = STAGES < walk.tiles ? STAGES : walk.tiles;
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) expect(tile);
  cg::this_cluster().sync();
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) issue(tile);
  bool failed = false;  // block-uniform
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < walk.tiles; ++tile, ring.advance()) {
    const int s = ring.slot;
    if (!failed)
      failed = __syncthreads_or(!tut::wait_or_report_cluster(
                   &full[s], ring.phase, a.error,
                   tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s).at_tile(tile)
                       .expecting(walk.row_bytes(tile) + TILE_BYTES))) != 0;
    if (!failed) add_tile(a.out + walk.word(tile), row_slots + s * TILE_VECS,
                          tab_slots + s * TILE_VECS, walk.row_bytes(tile));
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the next multicast into it
    const std::size_t next = tile + STAGES;
    const bool leader = tid == 0 && !failed && next < walk.tiles;
    // EXERCISE-BEGIN: v3's step 2 for tile `next`, here too
    if (leader) expect(next);
    cg::this_cluster().sync();
    if (leader) issue(next);
    // EXERCISE-STUB: (void)leader, (void)expect, (void)issue;
    // EXERCISE-STUB: cg::this_cluster().sync();  // keep: every block takes every cluster barrier
    // EXERCISE-END
  }
}

// ---------------------------------------------------------------------------------------------
// v5: DSMEM store push - the owner writes its tile into the peers' slots with ordinary stores
// ---------------------------------------------------------------------------------------------
// Stores through map_shared_rank pointers (ST.E.128). Nothing counts them, so peers expect only
// their row bytes, and a cluster barrier (release/acquire) makes the stores visible. Every copy
// into a block's full[s] is its own: the wait is at CTA scope.
__global__ void __launch_bounds__(THREADS) broadcast_v5_dsmem_push_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  uint4* const row_slots = ring_slots();
  uint4* const tab_slots = row_slots + STAGES * TILE_VECS;
  const RowWalk<CLUSTER> walk(a.n_words);
  const cg::cluster_group cluster = cg::this_cluster();
  const int tid = threadIdx.x, warp = tid / 32;
  auto owns = [&](std::size_t tile) { return walk.owner(tile) == walk.rank; };
  auto expected = [&](std::size_t tile) {  // my row bytes, plus the table bytes if I load it
    return walk.row_bytes(tile) + (owns(tile) ? TILE_BYTES : 0u);
  };
  auto expect = [&](std::size_t tile) {
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[tile % STAGES], expected(tile));
  };
  auto issue = [&](std::size_t tile) {  // thread 0: my row tile; the owner: the table tile
    const int s = static_cast<int>(tile % STAGES);
    if (walk.row_bytes(tile) != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, row_slots + s * TILE_VECS,
                         a.in + walk.word(tile), walk.row_bytes(tile), &full[s]);
    if (owns(tile))
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, tab_slots + s * TILE_VECS,
                         a.table + walk.table_tile(tile) * TILE_WORDS, TILE_BYTES, &full[s]);
  };
  if (tid == 0) {  // step 1
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);  // init fence (v5): cluster form
  }
  const std::size_t prologue = STAGES < walk.tiles ? STAGES : walk.tiles;
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) expect(tile);
  cg::this_cluster().sync();
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) issue(tile);
  bool failed = false;  // block-uniform
  tut::RingPosition<STAGES> ring;
  for (std::size_t tile = 0; tile < walk.tiles; ++tile, ring.advance()) {
    const int s = ring.slot;
    uint4* my_tab = tab_slots + s * TILE_VECS;
    if (!failed)
      failed = __syncthreads_or(!tut::wait_or_report(
                   &full[s], ring.phase, a.error,
                   tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s).at_tile(tile)
                       .expecting(expected(tile)))) != 0;
    if (!failed && owns(tile))  // the push: ordinary 16-byte stores into each peer's slot s
      for (int q = 0; q < VECS_PER_THREAD; ++q) {
        const int v = q * THREADS + tid;
        for (std::uint32_t peer = 0; peer < CLUSTER; ++peer)
          if (peer != walk.rank) cluster.map_shared_rank(my_tab, peer)[v] = my_tab[v];
      }
    cluster.sync();  // the owner's stores are visible in every peer's slot s
    if (!failed) add_tile(a.out + walk.word(tile), row_slots + s * TILE_VECS, my_tab,
                          walk.row_bytes(tile));
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before this block's TMA refill
    const std::size_t next = tile + STAGES;
    const bool leader = tid == 0 && !failed && next < walk.tiles;
    if (leader) expect(next);
    cg::this_cluster().sync();
    if (leader) issue(next);
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers. One cluster per row group (blocks past the last row still take part in the table
// loads and the cluster barriers); the harness's lap check caps the grid at whole clusters,
// and the kernels then walk several groups each.
// ---------------------------------------------------------------------------------------------
using BroadcastKernel = void (*)(BroadcastArgs);

// Blocks that cover every row in whole clusters of `cluster` (uncapped).
inline unsigned cluster_grid(std::size_t n_words, int cluster = CLUSTER) {
  const std::size_t rows = (n_words + ROW_WORDS - 1) / ROW_WORDS;
  return static_cast<unsigned>((rows + cluster - 1) / cluster * cluster);
}

// Resident blocks per SM of `kernel` at SMEM_BYTES (64 KiB: tut::resident_occupancy opts in
// first), for the table's blocks/SM column; queried once per kernel and remembered there, so
// the timed launches make no host queries.
inline int resident_blocks_per_sm(BroadcastKernel kernel) {
  return tut::resident_occupancy(kernel, THREADS, SMEM_BYTES);
}

// <<<>>> launch; the cluster shape is the kernel's __cluster_dims__ (`cluster`), or none (1).
inline void launch_plain(BroadcastKernel kernel, int cluster, const BroadcastArgs& a,
                         cudaStream_t s) {
  const int per_sm = resident_blocks_per_sm(kernel);
  const unsigned grid = tut::apply_grid_cap(cluster_grid(a.n_words, cluster), cluster);
  tut::record_grid(grid, per_sm);
  kernel<<<grid, THREADS, SMEM_BYTES, s>>>(a);
}

// cudaLaunchKernelEx with a cluster-dimension attribute: the run-time way to ask for clusters.
inline void launch_clustered(BroadcastKernel kernel, const BroadcastArgs& a, cudaStream_t s) {
  const int per_sm = resident_blocks_per_sm(kernel);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(tut::apply_grid_cap(cluster_grid(a.n_words), CLUSTER));  // whole clusters
  config.blockDim = dim3(THREADS);
  config.dynamicSmemBytes = SMEM_BYTES;
  config.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CLUSTER;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  tut::record_grid(config.gridDim.x, per_sm);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, a));
}

}  // namespace ch13
