// EXERCISE for chapter 13_clusters_multicast, generated from ../kernels.cuh by tools/make_exercise.py.
// Fill in every TODO(exercise) until `chNN_topic_exercise` reports PASS.
// Chapter 13: thread-block clusters, distributed shared memory (DSMEM) and TMA multicast
//
// What it adds over chapters 11-12: on Hopper, up to 8 blocks (16 with an opt-in) can be
// launched as a *cluster*: they are co-scheduled on the SMs of one GPC, can read and write
// each other's shared memory (DSMEM), can arrive on each other's mbarriers, and can receive
// one TMA load together (multicast). When every block needs the same data, a cluster can
// fetch it from L2 ONCE and deliver it to all its blocks, instead of once per block.
//
// Workload: a broadcast add. Row b of `in` (64 KiB) plus a shared table (64 KiB) gives row b
// of `out`: out[b][i] = in[b][i] + table[i] (uint32, wrapping - exact). Every block needs the
// whole table, streamed in 8 KiB tiles next to its own row. Six ways to deliver the table:
//   v0  every block bulk-loads every table tile itself (chapter 11; no cluster)
//   v1  cluster, __cluster_dims__: tile j is loaded by block rank j % 4 only; the others READ
//       it from that block's shared memory (cluster.map_shared_rank, DSMEM loads)
//   v2  cluster, cudaLaunchKernelEx: the loading block PUSHES the tile into its peers' shared
//       memory with st.async (STAS), each store counted on the peer's mbarrier (raw PTX)
//   v5  cluster, cudaLaunchKernelEx: the same push with ordinary stores through
//       map_shared_rank pointers, made visible by a cluster barrier instead of an mbarrier
//   v3  cluster, cudaLaunchKernelEx: rank j % 4 issues ONE multicast bulk load that lands in
//       all four blocks and completes on each block's mbarrier (raw PTX)
//   v4  the same multicast through cuda::ptx, launched with __cluster_dims__
//   v9  negative: the multicast CTA mask leaves out rank 3, whose tile never arrives
//
// Minimum compute capability: 9.0. Built for sm_90a: ptxas accepts .multicast::cluster for
// sm_90 only with an advisory warning, and CCCL exposes it only for sm_90a. The multicast
// code is therefore compiled under __CUDA_ARCH_FEAT_SM90_ALL (defined in the sm_90a pass);
// the compute_90 PTX listing the CI checks has a trap in its place.
// Run:    build/bin/ch13_clusters_multicast [--size=1G] [--list]
// Output: the harness table, and the largest cluster size the GPU allows for this kernel.
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "chapters/11_tma_bulk_copies/ring_helpers.cuh"  // from the root: the exercise finds it
#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch13 {

namespace cg = cooperative_groups;

// From chapter 11 (ring_helpers.cuh): shared-window addresses, ring phases, the bounded wait,
// and the host-side error word, check and registry.
using ch11::compare_words_and_error;
using ch11::describe_timeout;
using ch11::ErrorWord;
using ch11::ring_parity;
using ch11::smem_addr;
using ch11::VariantList;
using ch11::wait_parity_bounded;

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;
constexpr int CLUSTER = 4;                            // blocks per cluster (portable limit: 8)
constexpr int ROW_WORDS = 16384;                      // 64 KiB per row, and the table
constexpr int TILE_WORDS = 2048;                      // 8 KiB tiles
constexpr int TILE_VECS = TILE_WORDS / 4;             // 512 x 16 B
constexpr int TILE_BYTES = TILE_WORDS * 4;
constexpr int TILES_PER_ROW = ROW_WORDS / TILE_WORDS;  // 8
constexpr int STAGES = 4;                             // slots: [row tile | table tile] x 4
constexpr int VECS_PER_THREAD = TILE_VECS / THREADS;  // 2
constexpr std::size_t SMEM_BYTES = std::size_t{STAGES} * 2 * TILE_BYTES;  // 64 KiB
constexpr unsigned kErrTimeout = 1u;  // a bounded wait (chapter 11) gave up
static_assert(ROW_WORDS % TILE_WORDS == 0 && TILE_VECS % THREADS == 0, "whole tiles");

enum class Share {
  kNone, kDsmemPull, kDsmemPush, kStAsync, kMulticastPtx, kMulticastCccl, kBadMask
};
// Tile j's owner is rank j % CLUSTER and it lands in slot j % STAGES: with STAGES a multiple
// of CLUSTER every slot has one fixed owner, so a peer's slot is only ever written by the
// peer-to-peer path (never by both the TMA and ordinary DSMEM stores).
static_assert(STAGES % CLUSTER == 0, "one owner per slot");

// ---------------------------------------------------------------------------------------------
// Device helpers
// ---------------------------------------------------------------------------------------------
// mapa: the shared::cluster address of the same variable in block `rank` of the cluster.
__device__ inline std::uint32_t ptx_mapa(std::uint32_t local_smem, std::uint32_t rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local_smem), "r"(rank));
  return remote;
}

// st.async: a 16-byte register store into ANOTHER block's shared memory; when it lands, the
// hardware performs complete_tx(16) on the mbarrier at `remote_bar` (in that same block).
__device__ inline void ptx_st_async_v4(std::uint32_t remote_addr, uint4 v,
                                       std::uint32_t remote_bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];"
      ::"r"(remote_addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(remote_bar)
      : "memory");
}

// One bulk load delivered to every block whose bit is set in `cta_mask`, at the same offsets
// (`dst`, `bar`) in each block's shared memory; each block's mbarrier gets complete_tx(bytes).
// Compiled only in the sm_90a pass (see the file header); the binary holds no other code.
__device__ inline void ptx_bulk_load_multicast(void* dst, const void* src, std::uint32_t bytes,
                                               std::uint64_t* bar, std::uint16_t cta_mask) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1], %2, [%3], %4;"
      ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
#else
  (void)dst, (void)src, (void)bytes, (void)bar, (void)cta_mask;
  __trap();  // a plain sm_90 / compute_90 build of this chapter: multicast needs sm_90a
#endif
}

// ---------------------------------------------------------------------------------------------
// The kernel body shared by every variant (each __global__ below is a thin, named wrapper)
// ---------------------------------------------------------------------------------------------
// Shared memory: STAGES slots, each [row tile 8 KiB | table tile 8 KiB], and full[s].
// full[s], phase n <=> tile j = s + n*STAGES of this block's row AND of the table are in
// slot s. Its expected bytes: the row part (fewer at the ragged end, 0 past it) plus the table
// tile - whoever delivers it (this block's own load, a peer's st.async, a multicast) - except
// in v1, where only the tile's owner holds a copy.
// All blocks of a cluster walk the same 8 tiles in lockstep; a cluster barrier at the end of
// each tile says "every block has finished with slot s", after which slot s may be refilled,
// locally or remotely. That barrier also satisfies the exit rule: a block must not exit while
// a peer may still read or write its shared memory.
// Timeouts: a block whose wait gives up stops producing and consuming but keeps taking part
// in every cluster barrier, so its peers are never left waiting for it (they time out too if
// they needed its tiles). Its output stays poisoned; the error flag says why.
template <Share SH, int C>
__device__ __forceinline__ void broadcast_body(const std::uint32_t* __restrict__ d_in,
                                               const std::uint32_t* __restrict__ d_table,
                                               std::uint32_t* __restrict__ d_out,
                                               std::size_t n_words, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  uint4* s_row = reinterpret_cast<uint4*>(smem_raw);  // [STAGES][TILE_VECS]
  uint4* s_tab = s_row + STAGES * TILE_VECS;          // [STAGES][TILE_VECS]
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const int t = threadIdx.x;
  const std::uint32_t rank = C > 1 ? cg::this_cluster().block_rank() : 0;
  const std::size_t row_base = static_cast<std::size_t>(blockIdx.x) * ROW_WORDS;

  auto cluster_or_block_sync = [] {
    if constexpr (C > 1) cg::this_cluster().sync();  // barrier.cluster.arrive + wait
    else __syncthreads();
  };
  if (t == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    // Peers' multicasts and st.async will complete_tx on these barriers: the initialisation
    // must be visible cluster-wide (and to the async proxy) before anyone issues.
    if constexpr (C > 1) ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    else ptx::fence_proxy_async(ptx::space_shared);
  }

  auto row_bytes = [&](int j) -> std::uint32_t {  // this block's part of row tile j
    const std::size_t start = row_base + static_cast<std::size_t>(j) * TILE_WORDS;
    if (start >= n_words) return 0;
    const std::size_t left = n_words - start;
    return 4u * static_cast<std::uint32_t>(left < TILE_WORDS ? left : TILE_WORDS);
  };
  auto owner = [](int j) { return static_cast<std::uint32_t>(j % C); };

  // Producing tile j is split in two, both by thread 0:
  //   expect(j): arrive.expect_tx on this block's own full[s] - "wait for these bytes";
  //   issue(j):  start the copies (this block's row tile; the table tile as the variant says).
  // Every block posts expect(j) BEFORE a cluster barrier and issues only AFTER it, so no
  // peer's multicast or st.async can complete_tx on a phase whose expect_tx is not yet
  // posted: the transaction count never has to go below zero.
  auto expect = [&](int j) {
    const int s = j % STAGES;
    const bool owns = owner(j) == rank;
    const bool peer_to_peer = SH == Share::kDsmemPull || SH == Share::kDsmemPush;
    const std::uint32_t tab = peer_to_peer && !owns ? 0u : TILE_BYTES;
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[s], row_bytes(j) + tab);
  };
  auto issue = [&](int j) {
    const int s = j % STAGES;
    const std::uint32_t rb = row_bytes(j);
    const bool owns = owner(j) == rank;
    if (rb != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_row + s * TILE_VECS,
                         d_in + row_base + static_cast<std::size_t>(j) * TILE_WORDS, rb,
                         &full[s]);
    const std::uint32_t* src = d_table + static_cast<std::size_t>(j) * TILE_WORDS;
    void* dst = s_tab + s * TILE_VECS;
    if constexpr (SH == Share::kNone) {
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, dst, src, TILE_BYTES, &full[s]);
    } else if constexpr (SH == Share::kDsmemPull || SH == Share::kDsmemPush ||
                         SH == Share::kStAsync) {
      if (owns)
        ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, dst, src, TILE_BYTES, &full[s]);
    } else if constexpr (SH == Share::kMulticastPtx || SH == Share::kBadMask) {
      // BUG kBadMask: the mask leaves out the last rank, so its table tile never arrives.
      // TODO(exercise): build the CTA mask (one bit per rank of the C-block cluster), and let only the tile's owner issue ONE multicast bulk load of the table tile into dst of every block, completing on each block's full[s]
    } else {  // kMulticastCccl (CCCL declares it for sm_90a only)
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
      if (owns)
        ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst, src, TILE_BYTES, &full[s],
                           static_cast<std::uint16_t>((1u << C) - 1));
#else
      if (owns) __trap();
#endif
    }
  };

  // prologue: expect the first STAGES tiles, publish barriers and expectations cluster-wide,
  // then issue them
  if (t == 0)
    for (int j = 0; j < STAGES && j < TILES_PER_ROW; ++j) expect(j);
  cluster_or_block_sync();
  if (t == 0)
    for (int j = 0; j < STAGES && j < TILES_PER_ROW; ++j) issue(j);

  bool failed = false;  // block-uniform
  for (int j = 0; j < TILES_PER_ROW; ++j) {  // steady state, in lockstep across the cluster
    const int s = j % STAGES;
    if (!failed) {
      const bool ok = wait_parity_bounded(&full[s], ring_parity<STAGES>(j));
      failed = __syncthreads_or(!ok);
      if (failed && t == 0) atomicOr(d_error, kErrTimeout);
    }
    // Slot s now holds row tile j and (unless v1 and not the owner) table tile j.
    uint4* my_tab = s_tab + s * TILE_VECS;
    if constexpr (SH == Share::kStAsync) {
      // The owner forwards its table tile to each peer: 16 B per st.async, counted on the
      // peer's full[s]. The peer posted expect_tx for this tile before the cluster barrier we
      // both passed, and it cannot reuse slot s before the next one.
      if (!failed && owner(j) == rank)
        for (int q = 0; q < VECS_PER_THREAD; ++q) {
          const int v = q * THREADS + t;
          const uint4 val = my_tab[v];
          for (std::uint32_t peer = 0; peer < C; ++peer)
            if (peer != rank)
              ptx_st_async_v4(ptx_mapa(smem_addr(&my_tab[v]), peer), val,
                              ptx_mapa(smem_addr(&full[s]), peer));
        }
    }
    if constexpr (SH == Share::kDsmemPush) {
      // The owner writes its tile straight into each peer's slot: ordinary stores to DSMEM
      // (ST.E through a generic pointer from map_shared_rank). Nothing counts them, so the
      // cluster barrier that follows (release/acquire) is what makes them visible.
      if (!failed && owner(j) == rank)
        for (int q = 0; q < VECS_PER_THREAD; ++q) {
          const int v = q * THREADS + t;
          for (std::uint32_t peer = 0; peer < C; ++peer)
            if (peer != rank) cg::this_cluster().map_shared_rank(my_tab, peer)[v] = my_tab[v];
        }
      cluster_or_block_sync();
    }
    const uint4* tab = my_tab;
    if constexpr (SH == Share::kDsmemPull) {
      // The owner's wait completed before it arrived here; after this cluster barrier its
      // slot is visible to all peers (release/acquire at cluster scope).
      cluster_or_block_sync();
      tab = cg::this_cluster().map_shared_rank(my_tab, owner(j));  // generic ptr into peer smem
    }
    if (!failed) {
      const std::size_t words = row_bytes(j) / 4;
      const std::size_t out_base = row_base + static_cast<std::size_t>(j) * TILE_WORDS;
      const uint4* row = s_row + s * TILE_VECS;
#pragma unroll
      for (int q = 0; q < VECS_PER_THREAD; ++q) {
        const int v = q * THREADS + t;
        if (static_cast<std::size_t>(v) * 4 < words) {
          const uint4 a = row[v], b = tab[v];  // b: a DSMEM load in v1
          reinterpret_cast<uint4*>(d_out + out_base)[v] =
              make_uint4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
        }
      }
    }
    // full[s] has moved past tile j's phase (we waited on it), so tile j + STAGES's
    // expectation can be posted now; the copies wait for the barrier.
    const bool refill = t == 0 && !failed && j + STAGES < TILES_PER_ROW;
    if (refill) expect(j + STAGES);
    cluster_or_block_sync();  // every block is done with slot s (local and remote reads)
    if (refill) issue(j + STAGES);
  }
  // The loop's last cluster barrier is the "before exit" barrier: after it no peer touches
  // this block's shared memory, so the block may retire.
}

// ---------------------------------------------------------------------------------------------
// The kernels (names per variant, so PTX/SASS assertions can find each one)
// ---------------------------------------------------------------------------------------------
#define CH13_PARAMS                                                                   \
  const std::uint32_t *__restrict__ d_in, const std::uint32_t *__restrict__ d_table, \
      std::uint32_t *__restrict__ d_out, std::size_t n_words, unsigned *d_error
#define CH13_ARGS d_in, d_table, d_out, n_words, d_error

__global__ void __launch_bounds__(THREADS) broadcast_v0_bulk_kernel(CH13_PARAMS) {
  broadcast_body<Share::kNone, 1>(CH13_ARGS);
}
// Cluster shape fixed at compile time: a plain <<<grid, block>>> launch makes clusters of 4.
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    broadcast_v1_dsmem_pull_kernel(CH13_PARAMS) {
  broadcast_body<Share::kDsmemPull, CLUSTER>(CH13_ARGS);
}
// No __cluster_dims__: the cluster shape comes from cudaLaunchKernelEx's attribute.
__global__ void __launch_bounds__(THREADS) broadcast_v2_st_async_kernel(CH13_PARAMS) {
  broadcast_body<Share::kStAsync, CLUSTER>(CH13_ARGS);
}
__global__ void __launch_bounds__(THREADS) broadcast_v3_multicast_ptx_kernel(CH13_PARAMS) {
  broadcast_body<Share::kMulticastPtx, CLUSTER>(CH13_ARGS);
}
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    broadcast_v4_multicast_cccl_kernel(CH13_PARAMS) {
  broadcast_body<Share::kMulticastCccl, CLUSTER>(CH13_ARGS);
}
__global__ void __launch_bounds__(THREADS) broadcast_v5_dsmem_push_kernel(CH13_PARAMS) {
  broadcast_body<Share::kDsmemPush, CLUSTER>(CH13_ARGS);
}
__global__ void __launch_bounds__(THREADS) broadcast_v9_bad_mask_kernel(CH13_PARAMS) {
  broadcast_body<Share::kBadMask, CLUSTER>(CH13_ARGS);
}

// ---------------------------------------------------------------------------------------------
// Launchers. One block per row; the grid is rounded up to whole clusters (extra blocks have
// no row: they still take part in the table loads and the cluster barriers).
// ---------------------------------------------------------------------------------------------
using KernelFn = void (*)(const std::uint32_t*, const std::uint32_t*, std::uint32_t*, std::size_t,
                          unsigned*);

inline unsigned cluster_grid(std::size_t n_words) {
  const std::size_t rows = (n_words + ROW_WORDS - 1) / ROW_WORDS;
  return static_cast<unsigned>((rows + CLUSTER - 1) / CLUSTER * CLUSTER);
}

inline void allow_smem(KernelFn kernel) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(SMEM_BYTES)));
}

/// The largest cluster the GPU can co-schedule for `kernel` with this block size and shared
/// memory (it depends on both, and on the GPU's GPC layout: not always 16, not always 8).
inline int max_cluster_size(KernelFn kernel, bool allow_non_portable) {
  allow_smem(kernel);
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

// <<<>>> launch; the cluster shape is the kernel's __cluster_dims__ (or none, for v0).
inline void launch_plain(KernelFn kernel, const std::uint32_t* d_in, const std::uint32_t* d_table,
                         std::uint32_t* d_out, std::size_t n_words, unsigned* d_error,
                         cudaStream_t s) {
  allow_smem(kernel);
  kernel<<<cluster_grid(n_words), THREADS, SMEM_BYTES, s>>>(d_in, d_table, d_out, n_words,
                                                            d_error);
}

// cudaLaunchKernelEx with a cluster-dimension attribute: the run-time way to ask for clusters.
inline void launch_clustered(KernelFn kernel, const std::uint32_t* d_in,
                             const std::uint32_t* d_table, std::uint32_t* d_out,
                             std::size_t n_words, unsigned* d_error, cudaStream_t s) {
  allow_smem(kernel);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(cluster_grid(n_words));  // must be a multiple of the cluster size
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
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, d_in, d_table, d_out, n_words, d_error));
}

// ---------------------------------------------------------------------------------------------
// CPU reference and the problem
// ---------------------------------------------------------------------------------------------
inline std::vector<std::uint32_t> reference_broadcast_add(const std::vector<std::uint32_t>& in,
                                                          const std::vector<std::uint32_t>& table) {
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = in[i] + table[i % ROW_WORDS];
  return out;
}

// --size: bytes of `in` (and of `out`), a multiple of 16; rows of 64 KiB, the last one ragged.
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words), d_table(ROW_WORDS) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    d_in.upload(h_in);
    h_table.resize(ROW_WORDS);
    tut::fill_unique_words(h_table.data(), ROW_WORDS, cfg.seed ^ 0x7ab1e);
    d_table.upload(h_table);
  }
  void poison(cudaStream_t s) {
    d_out.poison(s);
    d_error.clear(s);
  }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    if (want.empty()) want = reference_broadcast_add(h_in, h_table);
    return compare_words_and_error(s, d_out, want, d_error, describe_timeout);
  }
  // Bytes of in + out; the table's traffic (per block, or per cluster) is what ncu shows.
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const {
    return tut::format_bytes(double(cfg.size)) + " per buffer, " +
           std::to_string(cluster_grid(n_words)) + " blocks";
  }
  template <class F>
  void run(F launch, KernelFn kernel, cudaStream_t s) {
    launch(kernel, d_in.data(), d_table.data(), d_out.data(), n_words, d_error.data(), s);
  }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out, d_table;
  ErrorWord d_error;
  std::vector<std::uint32_t> h_in, h_table, want;
};

inline std::vector<tut::Variant<Problem>> variants() {
  VariantList<Problem> add;
  add("v0_bulk", "v0 bulk, no cluster",
      "chapter 11: each block bulk-loads its row tile and every table tile itself",
      [](Problem& p, cudaStream_t s) { p.run(launch_plain, broadcast_v0_bulk_kernel, s); });
  add("v1_dsmem_pull", "v1 cluster4 DSMEM pull",
      "__cluster_dims__(4): rank j%4 loads table tile j; peers read it via map_shared_rank",
      [](Problem& p, cudaStream_t s) { p.run(launch_plain, broadcast_v1_dsmem_pull_kernel, s); });
  add("v2_st_async", "v2 cluster4 st.async push",
      "cudaLaunchKernelEx: the loading block pushes the tile to peers with st.async (PTX)",
      [](Problem& p, cudaStream_t s) {
        p.run(launch_clustered, broadcast_v2_st_async_kernel, s);
      });
  add("v3_multicast_ptx", "v3 cluster4 multicast PTX",
      "cudaLaunchKernelEx: one cp.async.bulk .multicast::cluster per tile, mask 0b1111",
      [](Problem& p, cudaStream_t s) {
        p.run(launch_clustered, broadcast_v3_multicast_ptx_kernel, s);
      });
  add("v4_multicast_cccl", "v4 cluster4 multicast ptx::",
      "__cluster_dims__(4): the same multicast through cuda::ptx::cp_async_bulk(..., mask)",
      [](Problem& p, cudaStream_t s) {
        p.run(launch_plain, broadcast_v4_multicast_cccl_kernel, s);
      });
  add("v5_dsmem_push", "v5 cluster4 DSMEM push",
      "cudaLaunchKernelEx: the loading block stores the tile into peers via map_shared_rank",
      [](Problem& p, cudaStream_t s) {
        p.run(launch_clustered, broadcast_v5_dsmem_push_kernel, s);
      });
  add("v9_bad_mask", "v9 BROKEN: mask omits rank 3",
      "negative: multicast mask 0b0111; rank 3's tiles never arrive; bounded waits give up",
      [](Problem& p, cudaStream_t s) {
        p.run(launch_clustered, broadcast_v9_bad_mask_kernel, s);
      },
      true);
  return std::move(add.list);
}

}  // namespace ch13
