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
// This file: the helpers, v0 (every block loads every table tile itself: chapter 11), the
// cluster ring and v3 (one multicast per table tile, raw PTX). more_kernels.cuh: v4 (v3 through
// cuda::ptx) and the peer-to-peer alternatives v1 (DSMEM pull), v2 (st.async push), v5 (DSMEM
// store push). host.cuh: the reference, the Problem, the variant list. The negative v9 is in
// tests/negatives/13_clusters_multicast.cuh.
//
// Needs compute capability 9.0 and CUDA 12.8 or newer. Built for sm_90a: ptxas accepts
// .multicast::cluster for sm_90 only with an advisory warning, and CCCL exposes it only for
// sm_90a, so the multicast code is compiled under __CUDA_ARCH_FEAT_SM90_ALL (the sm_90a pass);
// the compute_90 PTX listing the CI checks has a trap in its place and is never run.
// Run:    build/bin/ch13_clusters_multicast [--size=1G] [--list]
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>

#include "common/bounded_wait.cuh"
#include "common/cuda_check.cuh"
#include "common/cp_async.cuh"  // tut::smem_addr
#include "common/launch.cuh"
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
// Table tile t is owned by rank t % CLUSTER and ring tile j uses slot j % STAGES, with
// t = j % TILES_PER_ROW. These make every slot's owner fixed, so a peer's slot is only ever
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

// Which row tile and table tile a block's ring tile j is. C: cluster size (1: no cluster).
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
  __device__ int table_tile(std::size_t j) const { return static_cast<int>(j % TILES_PER_ROW); }
  __device__ std::uint32_t owner(std::size_t j) const { return table_tile(j) % C; }
  // first word of row tile j (possibly past the end of `in`)
  __device__ std::size_t word(std::size_t j) const {
    const std::size_t row = (first_group + j / TILES_PER_ROW * group_stride) * C + rank;
    return row * ROW_WORDS + static_cast<std::size_t>(table_tile(j)) * TILE_WORDS;
  }
  __device__ std::uint32_t row_bytes(std::size_t j) const {  // fewer at the end, 0 past it
    const std::size_t w = word(j);
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

// Whose full[s] counts the table tile's bytes: every block's (it lands in each by a counted
// copy: bulk load, multicast, st.async), or only its owner's (peers use uncounted DSMEM ld/st).
enum class TableCount { every_block, owner_only };

// One block's ring, the part every variant shares: slot s is [row tile | table tile] in the
// dynamic shared memory, and full[s] (the kernel's) counts the bytes that land in it. The row
// part is always this block's own bulk load; the variants differ in how the table part gets
// there.
template <int C>
struct BlockRing {
  BroadcastArgs a;
  RowWalk<C> walk;
  std::uint64_t* full;  // [STAGES]
  TableCount count;
  uint4* slots;  // [STAGES row tiles][STAGES table tiles]
  __device__ BlockRing(const BroadcastArgs& args, std::uint64_t* full_,
                       TableCount count_ = TableCount::every_block)
      : a(args), walk(args.n_words), full(full_), count(count_) {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    slots = reinterpret_cast<uint4*>(smem_raw);
  }
  __device__ uint4* row_slot(std::size_t s) const { return slots + s * TILE_VECS; }
  __device__ uint4* tab_slot(std::size_t s) const { return slots + (STAGES + s) * TILE_VECS; }
  __device__ bool owns(std::size_t j) const { return walk.owner(j) == walk.rank; }
  __device__ const std::uint32_t* table_tile(std::size_t j) const {
    return a.table + walk.table_tile(j) * TILE_WORDS;
  }
  // Thread 0: full[s]'s one arrival for ring tile j, owing the row bytes and the table bytes
  // this block counts.
  __device__ void expect(std::size_t j) const {
    const bool counted = count == TableCount::every_block || owns(j);
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[j % STAGES],
                                         walk.row_bytes(j) + (counted ? TILE_BYTES : 0u));
  }
  // Thread 0: this block's row tile j into slot j % STAGES (nothing past the end of `in`).
  __device__ void load_row(std::size_t j) const {
    if (walk.row_bytes(j) != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, row_slot(j % STAGES),
                         a.in + walk.word(j), walk.row_bytes(j), &full[j % STAGES]);
  }
  // Thread 0: table tile j into this block's own slot, counted on its own full[s].
  __device__ void load_table(std::size_t j) const {
    ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, tab_slot(j % STAGES), table_tile(j),
                       TILE_BYTES, &full[j % STAGES]);
  }
  // Every thread: its share of out tile j = row slot + `tab` (this block's slot or a peer's).
  __device__ void add(std::size_t j, const uint4* tab) const {
    add_tile(a.out + walk.word(j), row_slot(j % STAGES), tab, walk.row_bytes(j));
  }
};

// A bounded wait's verdict made block-uniform (a block takes every later barrier together);
// thread 0 records a give-up in the error word.
__device__ inline bool block_gave_up(bool landed, unsigned* error) {
  const bool failed = __syncthreads_or(!landed) != 0;
  if (failed && threadIdx.x == 0) atomicOr(error, tut::kErrorWaitTimedOut);
  return failed;
}

// ---------------------------------------------------------------------------------------------
// v0: no cluster - every block bulk-loads its row tile AND the table tile itself (chapter 11)
// ---------------------------------------------------------------------------------------------
// full[s] (count 1 + bytes): phase n <=> ring tile s + n*STAGES (row part and table part) has
// landed. Slots are released by a __syncthreads, after a proxy fence: the reads are generic,
// the refill is a TMA write (async proxy).
__global__ void __launch_bounds__(THREADS) broadcast_v0_bulk_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const BlockRing<1> my(a, full);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  auto produce = [&](std::size_t j) {
    my.expect(j);
    my.load_row(j);
    my.load_table(j);
  };
  if (threadIdx.x == 0)
    for (std::size_t j = 0; j < my.walk.tiles && j < STAGES; ++j) produce(j);
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < my.walk.tiles; ++j, ring.advance()) {
    if (block_gave_up(tut::wait_parity_bounded(&full[ring.slot], ring.phase), a.error)) return;
    my.add(j, my.tab_slot(ring.slot));
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the TMA refill
    __syncthreads();
    if (threadIdx.x == 0 && j + STAGES < my.walk.tiles) produce(j + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// The cluster ring: v3's protocol, which every cluster variant runs
// ---------------------------------------------------------------------------------------------
// 1. Thread 0 of every block initialises its full[s] (count 1) and publishes it cluster-wide
//    (fence.mbarrier_init.release.cluster, then step 2's cluster barrier): peers' copies will
//    complete_tx on it.
// 2. expect_sync_issue: each block posts arrive.expect_tx on ITS OWN full[s]; a cluster
//    barrier; then each block loads its row tile and the variant's `issue_table` sends the
//    table tile. No copy can reach a phase whose expectation is not posted.
// 3. consume(j, s, phase, failed), the variant's: wait on full[s], bring the table tile to the
//    add, add, fence the slot reads for the async proxy (the next write is a TMA write).
// 4. Step 2 for tile j + STAGES: its cluster barrier frees slot s in every block, and is also
//    the exit rule: no block exits while a peer may still write its shared memory.
// A block whose wait gives up stops producing and consuming but keeps taking every cluster
// barrier, so its peers are never left waiting; they time out too if they needed its tiles.
template <class IssueTable>
__device__ void expect_sync_issue(const BlockRing<CLUSTER>& my, std::size_t first,
                                  std::size_t count, bool leader, IssueTable issue_table) {
  const std::size_t last = first + count < my.walk.tiles ? first + count : my.walk.tiles;
  // EXERCISE-BEGIN: step 2 for tiles first .. last - 1: the leader posts their expectations, the whole cluster meets (every thread of every block, leader or not), and only then does the leader issue their copies (the row tile, then issue_table)
  if (leader)
    for (std::size_t j = first; j < last; ++j) my.expect(j);
  cg::this_cluster().sync();  // every peer has posted its expectations and left those slots
  if (leader)
    for (std::size_t j = first; j < last; ++j) {
      my.load_row(j);
      issue_table(j);
    }
  // EXERCISE-STUB: (void)last, (void)leader, (void)issue_table;
  // EXERCISE-STUB: cg::this_cluster().sync();  // keep: every block takes every cluster barrier
  // EXERCISE-END
}

template <class IssueTable, class Consume>
__device__ void cluster_ring(const BlockRing<CLUSTER>& my, IssueTable issue_table,
                             Consume consume) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&my.full[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  expect_sync_issue(my, 0, STAGES, threadIdx.x == 0, issue_table);
  bool failed = false;  // block-uniform
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < my.walk.tiles; ++j, ring.advance()) {
    failed = consume(j, ring.slot, ring.phase, failed);
    expect_sync_issue(my, j + STAGES, 1, threadIdx.x == 0 && !failed, issue_table);
  }
}

// ---------------------------------------------------------------------------------------------
// v3: one multicast bulk load per table tile, for the whole cluster (raw PTX)
// ---------------------------------------------------------------------------------------------
// Every block expects the whole table tile on its own full[s]; its owner (rank j % 4) issues
// ONE multicast to all four blocks, so each waits at cluster scope (a peer's copy completes it).
__global__ void __launch_bounds__(THREADS) broadcast_v3_multicast_ptx_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const BlockRing<CLUSTER> my(a, full);
  auto issue_table = [&](std::size_t j) {
    // EXERCISE-BEGIN: the table tile: its owner alone asks the TMA unit for ONE copy that lands in slot j % STAGES of every block of the cluster (one mask bit per rank) and completes on each block's own full barrier of that slot
    if (my.owns(j))
      ptx_bulk_load_multicast(my.tab_slot(j % STAGES), my.table_tile(j), TILE_BYTES,
                              &full[j % STAGES], (1u << CLUSTER) - 1);
    // EXERCISE-STUB: (void)j;
    // EXERCISE-END
  };
  auto consume = [&](std::size_t j, int s, std::uint32_t phase, bool failed) {
    if (!failed) failed = block_gave_up(tut::wait_parity_bounded_cluster(&full[s], phase), a.error);
    if (!failed) my.add(j, my.tab_slot(s));
    // EXERCISE-BEGIN: order this thread's slot reads before the next asynchronous (TMA) write into the slot
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the next TMA write
    // EXERCISE-END
    return failed;
  };
  cluster_ring(my, issue_table, consume);
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

// 64 KiB of dynamic shared memory needs an opt-in; done once per kernel, with the occupancy
// query for the table's blocks/SM column (no host queries on the timed launches).
inline int prepare(BroadcastKernel kernel) {
  static std::map<BroadcastKernel, int> fit;
  auto it = fit.find(kernel);
  if (it == fit.end()) {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(SMEM_BYTES)));
    it = fit.emplace(kernel, tut::max_blocks_per_sm(kernel, THREADS, SMEM_BYTES)).first;
  }
  return it->second;
}

// <<<>>> launch; the cluster shape is the kernel's __cluster_dims__ (`cluster`), or none (1).
inline void launch_plain(BroadcastKernel kernel, int cluster, const BroadcastArgs& a,
                         cudaStream_t s) {
  const int per_sm = prepare(kernel);
  const unsigned grid = tut::apply_grid_cap(cluster_grid(a.n_words, cluster), cluster);
  tut::record_grid(grid, per_sm);
  kernel<<<grid, THREADS, SMEM_BYTES, s>>>(a);
}

// cudaLaunchKernelEx with a cluster-dimension attribute: the run-time way to ask for clusters.
inline void launch_clustered(BroadcastKernel kernel, const BroadcastArgs& a, cudaStream_t s) {
  const int per_sm = prepare(kernel);
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
