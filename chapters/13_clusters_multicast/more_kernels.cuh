// Chapter 13, second part: the peer-to-peer alternatives to multicast (v1 DSMEM pull, v2
// st.async push, v5 DSMEM store push), v4 (v3's multicast through cuda::ptx) and the negative
// v9. Each is v3's protocol (kernels.cuh) with its table step changed. main.cu includes
// kernels.cuh before this file.
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

namespace ch13 {

// ---------------------------------------------------------------------------------------------
// v1: DSMEM pull - the owner loads table tile j into its own slot; the peers READ it there
// ---------------------------------------------------------------------------------------------
// Only the owner's full[s] counts the table bytes. A cluster barrier after the owner's wait
// makes its slot visible to the peers (release/acquire at cluster scope); they read it
// through map_shared_rank pointers (generic loads of peer shared memory, LD.E.128). Their
// reads come before the owner's next TMA write into that slot, so they fence with
// .shared::cluster (the peer's window) before the end-of-tile barrier.
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    broadcast_v1_dsmem_pull_kernel(const std::uint32_t* __restrict__ d_in,
        const std::uint32_t* __restrict__ d_table, std::uint32_t* __restrict__ d_out,
        std::size_t n_words, unsigned* d_error) {
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
  auto expect = [&](std::size_t j) {  // only the owner holds a counted copy of the table tile
    const std::uint32_t tab = walk.owner(j) == walk.rank ? TILE_BYTES : 0u;
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[j % STAGES], walk.row_bytes(j) + tab);
  };
  auto issue = [&](std::size_t j) {
    const int s = static_cast<int>(j % STAGES);
    if (walk.row_bytes(j) != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_row + s * TILE_VECS,
                         d_in + walk.word(j), walk.row_bytes(j), &full[s]);
    if (walk.owner(j) == walk.rank)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_tab + s * TILE_VECS,
                         d_table + walk.table_tile(j) * TILE_WORDS, TILE_BYTES, &full[s]);
  };
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) expect(j);
  cg::this_cluster().sync();
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) issue(j);
  bool failed = false;
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < walk.tiles; ++j, ring.advance()) {
    uint4* my_tab = s_tab + ring.slot * TILE_VECS;
    if (!failed) {
      failed = __syncthreads_or(!tut::wait_parity_bounded(&full[ring.slot], ring.phase));
      if (failed && t == 0) atomicOr(d_error, tut::kErrorWaitTimedOut);
    }
    cg::this_cluster().sync();  // the owner's slot s is complete and visible to its peers
    const uint4* tab = cg::this_cluster().map_shared_rank(my_tab, walk.owner(j));
    if (!failed)
      add_tile(d_out + walk.word(j), s_row + ring.slot * TILE_VECS, tab, walk.row_bytes(j));
    ptx::fence_proxy_async(ptx::space_cluster);  // my (remote) slot reads -> before the refill
    const bool refill = t == 0 && !failed && j + STAGES < walk.tiles;
    if (refill) expect(j + STAGES);
    cg::this_cluster().sync();  // every block is done with slot s
    if (refill) issue(j + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v2: st.async push - the owner stores its tile into each peer's slot, counted on its full[s]
// ---------------------------------------------------------------------------------------------
// st.async (SASS STAS): a 16-byte register store into ANOTHER block's shared memory; when it
// lands, the hardware performs complete_tx(16) on the mbarrier at `remote_bar` in that block.
// Every block expects the full table tile: the owner from its own bulk load, the peers from
// the owner's st.async. They posted that expectation before the cluster barrier that preceded
// the owner's load, and cannot reuse slot s before the next one. The completion comes from
// another block, so the wait acquires at cluster scope.
__device__ inline void ptx_st_async_v4(std::uint32_t remote_addr, uint4 v,
                                       std::uint32_t remote_bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];"
      ::"r"(remote_addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(remote_bar)
      : "memory");
}

__global__ void __launch_bounds__(THREADS)
    broadcast_v2_st_async_kernel(const std::uint32_t* __restrict__ d_in,
        const std::uint32_t* __restrict__ d_table, std::uint32_t* __restrict__ d_out,
        std::size_t n_words, unsigned* d_error) {
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
    if (walk.owner(j) == walk.rank)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_tab + s * TILE_VECS,
                         d_table + walk.table_tile(j) * TILE_WORDS, TILE_BYTES, &full[s]);
  };
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) expect(j);
  cg::this_cluster().sync();
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) issue(j);
  bool failed = false;
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < walk.tiles; ++j, ring.advance()) {
    uint4* my_tab = s_tab + ring.slot * TILE_VECS;
    if (!failed) {
      failed = __syncthreads_or(!tut::wait_parity_bounded_cluster(&full[ring.slot], ring.phase));
      if (failed && t == 0) atomicOr(d_error, tut::kErrorWaitTimedOut);
    }
    if (!failed && walk.owner(j) == walk.rank)
      for (int q = 0; q < VECS_PER_THREAD; ++q) {
        const int v = q * THREADS + t;
        const uint4 val = my_tab[v];
        for (std::uint32_t peer = 0; peer < CLUSTER; ++peer)
          if (peer != walk.rank)
            ptx_st_async_v4(ptx_mapa(tut::smem_addr(&my_tab[v]), peer), val,
                            ptx_mapa(tut::smem_addr(&full[ring.slot]), peer));
      }
    if (!failed)
      add_tile(d_out + walk.word(j), s_row + ring.slot * TILE_VECS, my_tab, walk.row_bytes(j));
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the next async write
    const bool refill = t == 0 && !failed && j + STAGES < walk.tiles;
    if (refill) expect(j + STAGES);
    cg::this_cluster().sync();  // every block is done with slot s
    if (refill) issue(j + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v5: DSMEM store push - the owner writes its tile into the peers' slots with ordinary stores
// ---------------------------------------------------------------------------------------------
// Stores through map_shared_rank pointers (ST.E.128). Nothing counts them, so peers expect only
// their row bytes, and a cluster barrier (release/acquire) makes the stores visible.
__global__ void __launch_bounds__(THREADS)
    broadcast_v5_dsmem_push_kernel(const std::uint32_t* __restrict__ d_in,
        const std::uint32_t* __restrict__ d_table, std::uint32_t* __restrict__ d_out,
        std::size_t n_words, unsigned* d_error) {
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
  auto expect = [&](std::size_t j) {  // only the owner holds a counted copy of the table tile
    const std::uint32_t tab = walk.owner(j) == walk.rank ? TILE_BYTES : 0u;
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[j % STAGES], walk.row_bytes(j) + tab);
  };
  auto issue = [&](std::size_t j) {
    const int s = static_cast<int>(j % STAGES);
    if (walk.row_bytes(j) != 0)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_row + s * TILE_VECS,
                         d_in + walk.word(j), walk.row_bytes(j), &full[s]);
    if (walk.owner(j) == walk.rank)
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_tab + s * TILE_VECS,
                         d_table + walk.table_tile(j) * TILE_WORDS, TILE_BYTES, &full[s]);
  };
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) expect(j);
  cg::this_cluster().sync();
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) issue(j);
  bool failed = false;
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < walk.tiles; ++j, ring.advance()) {
    uint4* my_tab = s_tab + ring.slot * TILE_VECS;
    if (!failed) {
      failed = __syncthreads_or(!tut::wait_parity_bounded(&full[ring.slot], ring.phase));
      if (failed && t == 0) atomicOr(d_error, tut::kErrorWaitTimedOut);
    }
    if (!failed && walk.owner(j) == walk.rank)
      for (int q = 0; q < VECS_PER_THREAD; ++q) {
        const int v = q * THREADS + t;
        for (std::uint32_t peer = 0; peer < CLUSTER; ++peer)
          if (peer != walk.rank) cg::this_cluster().map_shared_rank(my_tab, peer)[v] = my_tab[v];
      }
    cg::this_cluster().sync();  // the owner's stores are visible in every peer's slot s
    if (!failed)
      add_tile(d_out + walk.word(j), s_row + ring.slot * TILE_VECS, my_tab, walk.row_bytes(j));
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the TMA refill
    const bool refill = t == 0 && !failed && j + STAGES < walk.tiles;
    if (refill) expect(j + STAGES);
    cg::this_cluster().sync();  // every block is done with slot s
    if (refill) issue(j + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v4: v3's multicast through cuda::ptx, launched with __cluster_dims__
// ---------------------------------------------------------------------------------------------
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    broadcast_v4_multicast_cccl_kernel(const std::uint32_t* __restrict__ d_in,
        const std::uint32_t* __restrict__ d_table, std::uint32_t* __restrict__ d_out,
        std::size_t n_words, unsigned* d_error) {
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
    if (walk.owner(j) == walk.rank)
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // CCCL declares the multicast overload for sm_90a only
      ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, s_tab + s * TILE_VECS,
                         d_table + walk.table_tile(j) * TILE_WORDS, TILE_BYTES, &full[s],
                         static_cast<std::uint16_t>((1u << CLUSTER) - 1));
#else
      __trap();  // only in the compute_90 listing: the chapter's binary is sm_90a code
#endif
  };
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) expect(j);
  cg::this_cluster().sync();
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) issue(j);
  bool failed = false;
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < walk.tiles; ++j, ring.advance()) {
    uint4* my_tab = s_tab + ring.slot * TILE_VECS;
    if (!failed) {
      failed = __syncthreads_or(!tut::wait_parity_bounded_cluster(&full[ring.slot], ring.phase));
      if (failed && t == 0) atomicOr(d_error, tut::kErrorWaitTimedOut);
    }
    if (!failed)
      add_tile(d_out + walk.word(j), s_row + ring.slot * TILE_VECS, my_tab, walk.row_bytes(j));
    ptx::fence_proxy_async(ptx::space_shared);
    const bool refill = t == 0 && !failed && j + STAGES < walk.tiles;
    if (refill) expect(j + STAGES);
    cg::this_cluster().sync();  // every block is done with slot s
    if (refill) issue(j + STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): v3 with a multicast mask that leaves out rank 3
// ---------------------------------------------------------------------------------------------
// Rank 3 never receives a table tile: its bounded wait gives up and sets the error word. It
// keeps taking every cluster barrier, so its peers are never left waiting; the tiles rank 3
// should have multicast never reach them either, so they time out too. Deterministic at every
// size. (A mask bit for a CTA outside the cluster, or a block exiting before the last cluster
// barrier, would be undefined behaviour, not a guaranteed failure: not usable as negatives.)
__global__ void __launch_bounds__(THREADS)
    broadcast_v9_bad_mask_kernel(const std::uint32_t* __restrict__ d_in,
        const std::uint32_t* __restrict__ d_table, std::uint32_t* __restrict__ d_out,
        std::size_t n_words, unsigned* d_error) {
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
    if (walk.owner(j) == walk.rank)
      ptx_bulk_load_multicast(s_tab + s * TILE_VECS, d_table + walk.table_tile(j) * TILE_WORDS,
                              TILE_BYTES, &full[s], (1u << (CLUSTER - 1)) - 1);  // BUG: no rank 3
  };
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) expect(j);
  cg::this_cluster().sync();
  if (t == 0)
    for (std::size_t j = 0; j < walk.tiles && j < STAGES; ++j) issue(j);
  bool failed = false;
  tut::RingPosition<STAGES> ring;
  for (std::size_t j = 0; j < walk.tiles; ++j, ring.advance()) {
    uint4* my_tab = s_tab + ring.slot * TILE_VECS;
    if (!failed) {
      failed = __syncthreads_or(!tut::wait_parity_bounded_cluster(&full[ring.slot], ring.phase));
      if (failed && t == 0) atomicOr(d_error, tut::kErrorWaitTimedOut);
    }
    if (!failed)
      add_tile(d_out + walk.word(j), s_row + ring.slot * TILE_VECS, my_tab, walk.row_bytes(j));
    ptx::fence_proxy_async(ptx::space_shared);
    const bool refill = t == 0 && !failed && j + STAGES < walk.tiles;
    if (refill) expect(j + STAGES);
    cg::this_cluster().sync();  // every block is done with slot s
    if (refill) issue(j + STAGES);
  }
}

}  // namespace ch13
