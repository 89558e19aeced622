// Chapter 13, second part: v4 (v3's multicast through cuda::ptx) and the peer-to-peer
// alternatives to multicast (v1 DSMEM pull, v2 st.async push, v5 DSMEM store push). Each runs
// v3's cluster ring (kernels.cuh) with its table step changed; in v1, v2 and v5 the tile's
// owner bulk-loads it into its own slot (LoadOwnTable) and the peers get it from there.
// main.cu includes kernels.cuh before this file.
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

namespace ch13 {

// ---------------------------------------------------------------------------------------------
// v4: v3's multicast through cuda::ptx, launched with __cluster_dims__
// ---------------------------------------------------------------------------------------------
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    broadcast_v4_multicast_cccl_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const BlockRing<CLUSTER> my(a, full);
  auto issue_table = [&](std::size_t j) {
    if (my.owns(j))
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // CCCL declares the multicast overload for sm_90a only
      ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, my.tab_slot(j % STAGES),
                         my.table_tile(j), TILE_BYTES, &full[j % STAGES],
                         static_cast<std::uint16_t>((1u << CLUSTER) - 1));
#else
      __trap();  // only in the compute_90 listing: the chapter's binary is sm_90a code
#endif
  };
  auto consume = [&](std::size_t j, int s, std::uint32_t phase, bool failed) {
    if (!failed) failed = block_gave_up(tut::wait_parity_bounded_cluster(&full[s], phase), a.error);
    if (!failed) my.add(j, my.tab_slot(s));
    ptx::fence_proxy_async(ptx::space_shared);
    return failed;
  };
  cluster_ring(my, issue_table, consume);
}

// The table copy of v1, v2 and v5: the tile's owner bulk-loads it into its own slot only.
struct LoadOwnTable {
  const BlockRing<CLUSTER>& my;
  __device__ void operator()(std::size_t j) const {
    if (my.owns(j)) my.load_table(j);
  }
};

// ---------------------------------------------------------------------------------------------
// v1: DSMEM pull - the owner loads table tile j into its own slot; the peers READ it there
// ---------------------------------------------------------------------------------------------
// Only the owner's full[s] counts the table bytes. A cluster barrier after the owner's wait
// makes its slot visible to the peers (release/acquire at cluster scope); they read it
// through map_shared_rank pointers (generic loads of peer shared memory, LD.E.128). Their
// reads come before the owner's next TMA write into that slot, so they fence with
// .shared::cluster (the peer's window) before the end-of-tile barrier.
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
    broadcast_v1_dsmem_pull_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const BlockRing<CLUSTER> my(a, full, TableCount::owner_only);
  auto consume = [&](std::size_t j, int s, std::uint32_t phase, bool failed) {
    const cg::cluster_group cluster = cg::this_cluster();
    if (!failed) failed = block_gave_up(tut::wait_parity_bounded(&full[s], phase), a.error);
    cluster.sync();  // the owner's slot s is complete and visible to its peers
    const uint4* tab = cluster.map_shared_rank(my.tab_slot(s), my.walk.owner(j));
    if (!failed) my.add(j, tab);
    ptx::fence_proxy_async(ptx::space_cluster);  // my (remote) slot reads -> before the refill
    return failed;
  };
  cluster_ring(my, LoadOwnTable{my}, consume);
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
// mapa: the shared::cluster address of the same variable in block `rank` of the cluster.
__device__ inline std::uint32_t ptx_mapa(std::uint32_t local_smem, std::uint32_t rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local_smem), "r"(rank));
  return remote;
}

__device__ inline void ptx_st_async_v4(std::uint32_t remote_addr, uint4 v,
                                       std::uint32_t remote_bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, "
      "[%5];" ::"r"(remote_addr),
      "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(remote_bar)
      : "memory");
}

__global__ void __launch_bounds__(THREADS) broadcast_v2_st_async_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const BlockRing<CLUSTER> my(a, full);
  auto consume = [&](std::size_t j, int s, std::uint32_t phase, bool failed) {
    uint4* my_tab = my.tab_slot(s);
    if (!failed) failed = block_gave_up(tut::wait_parity_bounded_cluster(&full[s], phase), a.error);
    if (!failed && my.owns(j))
      for (int q = 0; q < VECS_PER_THREAD; ++q) {
        const int v = q * THREADS + static_cast<int>(threadIdx.x);
        const uint4 val = my_tab[v];
        for (std::uint32_t peer = 0; peer < CLUSTER; ++peer)
          if (peer != my.walk.rank)
            ptx_st_async_v4(ptx_mapa(tut::smem_addr(&my_tab[v]), peer), val,
                            ptx_mapa(tut::smem_addr(&full[s]), peer));
      }
    if (!failed) my.add(j, my_tab);
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the next async write
    return failed;
  };
  cluster_ring(my, LoadOwnTable{my}, consume);
}

// ---------------------------------------------------------------------------------------------
// v5: DSMEM store push - the owner writes its tile into the peers' slots with ordinary stores
// ---------------------------------------------------------------------------------------------
// Stores through map_shared_rank pointers (ST.E.128). Nothing counts them, so peers expect only
// their row bytes, and a cluster barrier (release/acquire) makes the stores visible.
__global__ void __launch_bounds__(THREADS) broadcast_v5_dsmem_push_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const BlockRing<CLUSTER> my(a, full, TableCount::owner_only);
  auto consume = [&](std::size_t j, int s, std::uint32_t phase, bool failed) {
    const cg::cluster_group cluster = cg::this_cluster();
    uint4* my_tab = my.tab_slot(s);
    if (!failed) failed = block_gave_up(tut::wait_parity_bounded(&full[s], phase), a.error);
    if (!failed && my.owns(j))
      for (int q = 0; q < VECS_PER_THREAD; ++q) {
        const int v = q * THREADS + static_cast<int>(threadIdx.x);
        for (std::uint32_t peer = 0; peer < CLUSTER; ++peer)
          if (peer != my.walk.rank) cluster.map_shared_rank(my_tab, peer)[v] = my_tab[v];
      }
    cluster.sync();  // the owner's stores are visible in every peer's slot s
    if (!failed) my.add(j, my_tab);
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the TMA refill
    return failed;
  };
  cluster_ring(my, LoadOwnTable{my}, consume);
}

}  // namespace ch13
