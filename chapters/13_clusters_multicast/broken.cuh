/// @file broken.cuh
/// @brief Chapter 13's deliberately broken variant v9: a copy of broadcast_v3_multicast_ptx_kernel
///        (kernels.cuh) with its one changed line marked BUG, and add_negatives(), which
///        registers it.
//
// v9 must FAIL under --check-only, never hang: every wait is bounded, and the error log names
// the wait that gave up (CMakeLists.txt asserts the sentence).
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/harness.cuh"
#include "common/perturb.cuh"
#include "common/ring.cuh"
#include "kernels.cuh"

namespace ch13 {

// ---------------------------------------------------------------------------------------------
// v9 (negative): v3 with a multicast mask that leaves out rank 3
// ---------------------------------------------------------------------------------------------
// Rank 3 never receives a table tile: its bounded wait gives up on full[0] at tile 0 (parity 0)
// and sets the error word. It keeps taking every cluster barrier, so its peers are never left
// waiting; the tiles rank 3 should have multicast never reach them either, so they time out
// too. Deterministic at every size. (A mask bit for a CTA outside the cluster, or a block
// exiting before the last cluster barrier, would be undefined behaviour, not a guaranteed
// failure: not usable as negatives.)
__global__ void __launch_bounds__(THREADS) broadcast_v9_bad_mask_kernel(BroadcastArgs a) {
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
    if (owns(tile))
      ptx_bulk_load_multicast(tab_slots + s * TILE_VECS,
                              a.table + walk.table_tile(tile) * TILE_WORDS, TILE_BYTES, &full[s],
                              (1u << (CLUSTER - 1)) - 1);  // BUG: no rank 3
  };
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  const std::size_t prologue = STAGES < walk.tiles ? STAGES : walk.tiles;
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) expect(tile);
  cg::this_cluster().sync();
  if (tid == 0)
    for (std::size_t tile = 0; tile < prologue; ++tile) issue(tile);
  bool failed = false;
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
    ptx::fence_proxy_async(ptx::space_shared);
    const std::size_t next = tile + STAGES;
    const bool leader = tid == 0 && !failed && next < walk.tiles;
    if (leader) expect(next);
    cg::this_cluster().sync();
    if (leader) issue(next);
  }
}

// Registers the negative on a VariantList of the chapter's Problem (main.cu's: clustered()).
template <class Problem>
void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_bad_mask", "v9 BROKEN: mask omits rank 3",
        "negative: multicast mask 0b0111; rank 3's tiles never arrive; bounded waits give up",
        [](Problem& p, cudaStream_t s) { p.clustered(broadcast_v9_bad_mask_kernel, s); })
      .negative = true;
  v.list.back().arch_specific = {90};  // v3's multicast, compiled for sm_90a only
}

}  // namespace ch13
