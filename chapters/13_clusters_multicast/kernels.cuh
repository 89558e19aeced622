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
// This file: the helpers, v0 (every block loads every table tile itself: chapter 11), v3 (one
// multicast per table tile, raw PTX) and v4 (the same through cuda::ptx). more_kernels.cuh:
// the peer-to-peer alternatives v1 (DSMEM pull), v2 (st.async push), v5 (DSMEM store push)
// and the negative v9. host.cuh: the reference, the Problem, the variant list.
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

constexpr int THREADS = 256;
constexpr int CLUSTER = 4;                             // blocks per cluster (portable limit: 8)
constexpr int ROW_WORDS = 16384;                       // 64 KiB per row, and the table
constexpr int TILE_WORDS = 2048;                       // 8 KiB tiles
constexpr int TILE_VECS = TILE_WORDS / 4;              // 512 x 16 B
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

// mapa: the shared::cluster address of the same variable in block `rank` of the cluster.
__device__ inline std::uint32_t ptx_mapa(std::uint32_t local_smem, std::uint32_t rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local_smem), "r"(rank));
  return remote;
}

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

// ---------------------------------------------------------------------------------------------
// v0: no cluster - every block bulk-loads its row tile AND the table tile itself (chapter 11)
// ---------------------------------------------------------------------------------------------
// full[s] (count 1 + bytes): phase n <=> ring tile s + n*STAGES (row part and table part) has
// landed. Slots are released by a __syncthreads, after a proxy fence: the reads are generic,
// the refill is a TMA write (async proxy).
__global__ void __launch_bounds__(THREADS)
    broadcast_v0_bulk_kernel(const std::uint32_t* __restrict__ d_in,
                             const std::uint32_t* __restrict__ d_table,
                             std::uint32_t* __restrict__ d_out, std::size_t n_words,
                             unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  uint4* s_row = reinterpret_cast<uint4*>(smem_raw);  // [STAGES][TILE_VECS]
  uint4* s_tab = s_row + STAGES * TILE_VECS;          // [STAGES][TILE_VECS]
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const RowWalk<1> walk(n_words);
  const int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  auto produce = [&](std::size_t j) {
    const int s = static_cast<int>(j % STAGES);
    const std::uint32_t rb = walk.row_bytes(j);
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[s], rb + TILE_BYTES);
    if (rb != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_row + s * TILE_VECS,
                         d_in + walk.word(j), rb, &full[s]);
    ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_tab + s * TILE_VECS,
                       d_table + walk.table_tile(j) * TILE_WORDS, TILE_BYTES, &full[s]);
  };
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) produce(j);
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < walk.tiles; ++j, ring.advance()) {
    const bool landed = tut::wait_parity_bounded(&full[ring.slot], ring.phase);
    if (__syncthreads_or(!landed)) {  // block-uniform: nobody is left at a later barrier
      if (t == 0) atomicOr(d_error, tut::kErrorWaitTimedOut);
      return;
    }
    add_tile(d_out + walk.word(j), s_row + ring.slot * TILE_VECS, s_tab + ring.slot * TILE_VECS,
             walk.row_bytes(j));
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the TMA refill
    __syncthreads();
    if (t == 0 && j + STAGES < walk.tiles) produce(j + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v3: one multicast bulk load per table tile, for the whole cluster (raw PTX)
// ---------------------------------------------------------------------------------------------
// 1. Thread 0 of every block initialises its full[s] (count 1) and publishes the
//    initialisation cluster-wide (fence.mbarrier_init.release.cluster + the cluster barrier):
//    peers' multicasts will complete_tx on it.
// 2. expect: each block posts arrive.expect_tx(row bytes + table tile) on ITS OWN full[s],
//    whoever delivers the table bytes; then a cluster barrier; then issue: each block loads its
//    row tile, and the tile's owner (rank t % 4) issues ONE multicast of the table tile to all
//    four blocks. Expect-before-barrier-before-issue means no multicast can reach a phase whose
//    expectation is not posted: the transaction count never goes below zero.
// 3. Every block waits on full[s] at cluster scope (peers' copies complete it), adds, fences its
//    reads for the async proxy, and meets the cluster at the end of the tile: slot s is free in
//    every block, so the next multicast into it may start. That barrier is also the exit rule:
//    no block exits while a peer may still write its shared memory.
// A block whose wait gives up stops producing and consuming but keeps taking every cluster
// barrier, so its peers are never left waiting; they time out too if they needed its tiles.
__global__ void __launch_bounds__(THREADS)
    broadcast_v3_multicast_ptx_kernel(const std::uint32_t* __restrict__ d_in,
                                      const std::uint32_t* __restrict__ d_table,
                                      std::uint32_t* __restrict__ d_out, std::size_t n_words,
                                      unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  uint4* s_row = reinterpret_cast<uint4*>(smem_raw);
  uint4* s_tab = s_row + STAGES * TILE_VECS;
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const RowWalk<CLUSTER> walk(n_words);
  const int t = threadIdx.x;
  if (t == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  auto expect = [&](std::size_t j) {
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[j % STAGES], walk.row_bytes(j) + TILE_BYTES);
  };
  auto issue = [&](std::size_t j) {
    const int s = static_cast<int>(j % STAGES);
    if (walk.row_bytes(j) != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_row + s * TILE_VECS,
                         d_in + walk.word(j), walk.row_bytes(j), &full[s]);
    // EXERCISE-BEGIN: the table tile: its owner alone asks the TMA unit for ONE copy that lands in slot s of every block of the cluster (one mask bit per rank) and completes on each block's own full[s]
    if (walk.owner(j) == walk.rank)
      ptx_bulk_load_multicast(s_tab + s * TILE_VECS, d_table + walk.table_tile(j) * TILE_WORDS,
                              TILE_BYTES, &full[s], (1u << CLUSTER) - 1);
    // EXERCISE-END
  };
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) expect(j);
  cg::this_cluster().sync();  // barriers and expectations visible cluster-wide
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) issue(j);
  bool failed = false;  // block-uniform
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < walk.tiles; ++j, ring.advance()) {
    if (!failed) {
      failed = __syncthreads_or(!tut::wait_parity_bounded_cluster(&full[ring.slot], ring.phase));
      if (failed && t == 0) atomicOr(d_error, tut::kErrorWaitTimedOut);
    }
    if (!failed)
      add_tile(d_out + walk.word(j), s_row + ring.slot * TILE_VECS,
               s_tab + ring.slot * TILE_VECS, walk.row_bytes(j));
    // EXERCISE-BEGIN: release slot s cluster-wide and refill it: order this thread's slot reads before the next asynchronous write into the slot, post tile j + STAGES's expectation before every block of the cluster is known to be done with the slot, and issue its copies only after that
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the next TMA write
    const bool refill = t == 0 && !failed && j + STAGES < walk.tiles;
    if (refill) expect(j + STAGES);
    cg::this_cluster().sync();  // every block is done with slot s
    if (refill) issue(j + STAGES);
    // EXERCISE-STUB: cg::this_cluster().sync();  // keep: every block takes every cluster barrier
    // EXERCISE-END
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers. One cluster per row group (blocks past the last row still take part in the table
// loads and the cluster barriers); the harness's lap check caps the grid at whole clusters,
// and the kernels then walk several groups each.
// ---------------------------------------------------------------------------------------------
using BroadcastKernel = void (*)(const std::uint32_t*, const std::uint32_t*, std::uint32_t*,
                                 std::size_t, unsigned*);

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
inline void launch_plain(BroadcastKernel kernel, int cluster, const std::uint32_t* d_in,
                         const std::uint32_t* d_table, std::uint32_t* d_out, std::size_t n_words,
                         unsigned* d_error, cudaStream_t s) {
  const int per_sm = prepare(kernel);
  const unsigned grid = tut::apply_grid_cap(cluster_grid(n_words, cluster), cluster);
  tut::record_grid(grid, per_sm);
  kernel<<<grid, THREADS, SMEM_BYTES, s>>>(d_in, d_table, d_out, n_words, d_error);
}

// cudaLaunchKernelEx with a cluster-dimension attribute: the run-time way to ask for clusters.
inline void launch_clustered(BroadcastKernel kernel, const std::uint32_t* d_in,
                             const std::uint32_t* d_table, std::uint32_t* d_out,
                             std::size_t n_words, unsigned* d_error, cudaStream_t s) {
  const int per_sm = prepare(kernel);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(tut::apply_grid_cap(cluster_grid(n_words), CLUSTER));  // whole clusters
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
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, d_in, d_table, d_out, n_words, d_error));
}

/// The largest cluster the GPU can co-schedule for `kernel` with this block size and shared
/// memory (it depends on both, and on the GPU's GPC layout: not always 16, not always 8).
inline int max_cluster_size(BroadcastKernel kernel, bool allow_non_portable) {
  prepare(kernel);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed,
                                  allow_non_portable ? 1 : 0));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(16 * CLUSTER);
  config.blockDim = dim3(THREADS);
  config.dynamicSmemBytes = SMEM_BYTES;
  int size = 0;
  CUDA_CHECK(cudaOccupancyMaxPotentialClusterSize(&size, kernel, &config));
  return size;
}

}  // namespace ch13
