// Chapter 13's negative: a copy of broadcast_v3_multicast_ptx_kernel (chapters/
// 13_clusters_multicast/kernels.cuh) with its one changed line marked // BUG:. It must FAIL
// under --check-only (and return: every wait is bounded). The chapter's host.cuh includes this
// file after its Problem and calls add_negatives() at the end of variants().
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/harness.cuh"

namespace ch13 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): v3 with a multicast mask that leaves out rank 3
// ---------------------------------------------------------------------------------------------
// Rank 3 never receives a table tile: its bounded wait gives up and sets the error word. It
// keeps taking every cluster barrier, so its peers are never left waiting; the tiles rank 3
// should have multicast never reach them either, so they time out too. Deterministic at every
// size. (A mask bit for a CTA outside the cluster, or a block exiting before the last cluster
// barrier, would be undefined behaviour, not a guaranteed failure: not usable as negatives.)
__global__ void __launch_bounds__(THREADS) broadcast_v9_bad_mask_kernel(BroadcastArgs a) {
  __shared__ __align__(8) std::uint64_t full[STAGES];
  const BlockRing<CLUSTER> my(a, full);
  auto issue_table = [&](std::size_t j) {
    if (my.owns(j))
      ptx_bulk_load_multicast(my.tab_slot(j % STAGES), my.table_tile(j), TILE_BYTES,
                              &full[j % STAGES], (1u << (CLUSTER - 1)) - 1);  // BUG: no rank 3
  };
  auto consume = [&](std::size_t j, int s, std::uint32_t phase, bool failed) {
    if (!failed) failed = block_gave_up(tut::wait_parity_bounded_cluster(&full[s], phase), a.error);
    if (!failed) my.add(j, my.tab_slot(s));
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads -> before the next TMA write
    return failed;
  };
  cluster_ring(my, issue_table, consume);
}

inline void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_bad_mask", "v9 BROKEN: mask omits rank 3",
        "negative: multicast mask 0b0111; rank 3's tiles never arrive; bounded waits give up",
        [](Problem& p, cudaStream_t s) { p.clustered(broadcast_v9_bad_mask_kernel, s); })
      .negative = true;
}

}  // namespace ch13
