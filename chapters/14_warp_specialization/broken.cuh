/// @file broken.cuh
/// @brief Chapter 14's negatives: copies of ws_v1_tma_kernel (kernels.cuh, without its trace
///        points) with the changed line marked // BUG:, their launchers and their registration.
///
/// Each must FAIL under --check-only, and neither can hang: every wait is bounded, and a wait
/// that gives up names itself (role, barrier, slot, parity, tile) through the error word.
//   v9 early release  a consumer arrives on empty[s] before it reads the slot
//   v9 empty count    empty[s] is initialised to expect one arrival more than the consumers
//                     make; the bug exists only from the ring's second lap on, so it needs a
//                     check in which a block walks more tiles than the ring has slots (the
//                     harness's lap check)
#pragma once

#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/ring.cuh"
#include "kernels.cuh"

namespace ch14 {

constexpr int NEG_STAGES = 4;

// Early release. Left to chance, the race would rarely show; to make it deterministic the
// consumer, after its early arrive, waits (bounded) for the slot's NEXT full phase - the
// producer has then really overwritten the slot with tile j + NEG_STAGES - and only then
// reads. With one block, every tile except the last NEG_STAGES comes out with the values of
// the tile NEG_STAGES later.
__global__ void __launch_bounds__(THREADS)
    ws_early_release_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                            std::size_t n_vecs, int intensity, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(16) unsigned char s_raw[];
  __shared__ std::uint64_t full[NEG_STAGES], empty[NEG_STAGES];
  const unsigned misalign = static_cast<unsigned>(__cvta_generic_to_shared(s_raw)) & 127u;
  uint4* s_ring = reinterpret_cast<uint4*>(s_raw + ((128u - misalign) & 127u));
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles);
  if (threadIdx.x == 0) {
    for (int s = 0; s < NEG_STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMERS);
    }
    ptx::fence_proxy_async(ptx::space_shared);  // init -> TMA (no cluster)
  }
  __syncthreads();
  tut::RingPosition<NEG_STAGES> pos;
  if (threadIdx.x < 32) {
    if (threadIdx.x != 0) return;
    for (std::size_t j = 0; j < my_tiles; ++j, pos.advance()) {
      const std::size_t tile = tut::block_tile(j);
      const auto empty_site = tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, pos.slot).at_tile(j);
      if (j >= NEG_STAGES && !tut::wait_or_report(&empty[pos.slot], pos.phase ^ 1u, d_error, empty_site))
        return;
      const std::uint32_t bytes = static_cast<std::uint32_t>(tile_vecs(n_vecs, tile)) * 16u;
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                     &full[pos.slot], bytes);
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_ring + pos.slot * TILE_VECS,
                         d_in + tile * TILE_VECS, bytes, &full[pos.slot]);
    }
    return;
  }
  const int c = threadIdx.x - 32;
  for (std::size_t j = 0; j < my_tiles; ++j, pos.advance()) {
    const std::size_t tile = tut::block_tile(j);
    const int count = tile_vecs(n_vecs, tile);
    uint4 r[VECS_PER_CONSUMER];
    const auto full_site = tut::WaitSite::consumer_warp(threadIdx.x / 32)
                               .on(tut::Barrier::kFull, pos.slot)
                               .at_tile(j)
                               .expecting(static_cast<unsigned>(count) * 16u);
    if (!tut::wait_or_report(&full[pos.slot], pos.phase, d_error, full_site)) return;
    ptx::mbarrier_arrive(&empty[pos.slot]);  // BUG: the slot is handed back before it is read
    const bool overwritten = j + NEG_STAGES < my_tiles;  // the producer refills this slot
    if (overwritten &&
        !tut::wait_or_report(&full[pos.slot], pos.phase ^ 1u, d_error, full_site.at_tile(j + NEG_STAGES)))
      return;
    read_slot(s_ring + pos.slot * TILE_VECS, r, count, c);
    compute_and_store(r, d_out, tile, count, c, intensity);
  }
}

// Empty count. Before refilling a slot in lap L >= 1 the producer waits for empty's phase
// L - 1: the consumers have released the slot's previous tile. Here empty[s] is initialised to
// expect CONSUMERS + 1 arrivals, one more than the consumer threads make, so its first phase
// never completes: in lap 1 the producer's wait gives up after its budget, and the consumers'
// waits for the tile it never issued give up too. In lap 0 the producer does not wait at all,
// so a block with at most NEG_STAGES tiles computes every word right. (A wrong parity in that
// wait is NOT a deterministic bug: try_wait.parity(P) returns at once while the barrier is
// still in phase P ^ 1, so whether the refill races the readers or the wait stalls depends on
// which side runs ahead.)
__global__ void __launch_bounds__(THREADS)
    ws_empty_count_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                          std::size_t n_vecs, int intensity, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(16) unsigned char s_raw[];
  __shared__ std::uint64_t full[NEG_STAGES], empty[NEG_STAGES];
  const unsigned misalign = static_cast<unsigned>(__cvta_generic_to_shared(s_raw)) & 127u;
  uint4* s_ring = reinterpret_cast<uint4*>(s_raw + ((128u - misalign) & 127u));
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles);
  if (threadIdx.x == 0) {
    for (int s = 0; s < NEG_STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], CONSUMERS + 1);  // BUG: one arrival more than will come
    }
    ptx::fence_proxy_async(ptx::space_shared);  // init -> TMA (no cluster)
  }
  __syncthreads();
  tut::RingPosition<NEG_STAGES> pos;
  if (threadIdx.x < 32) {
    if (threadIdx.x != 0) return;
    for (std::size_t j = 0; j < my_tiles; ++j, pos.advance()) {
      const std::size_t tile = tut::block_tile(j);
      const auto empty_site = tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, pos.slot).at_tile(j);
      if (j >= NEG_STAGES && !tut::wait_or_report(&empty[pos.slot], pos.phase ^ 1u, d_error, empty_site))
        return;
      const std::uint32_t bytes = static_cast<std::uint32_t>(tile_vecs(n_vecs, tile)) * 16u;
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                     &full[pos.slot], bytes);
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_ring + pos.slot * TILE_VECS,
                         d_in + tile * TILE_VECS, bytes, &full[pos.slot]);
    }
    return;
  }
  const int c = threadIdx.x - 32;
  for (std::size_t j = 0; j < my_tiles; ++j, pos.advance()) {
    const std::size_t tile = tut::block_tile(j);
    const int count = tile_vecs(n_vecs, tile);
    uint4 r[VECS_PER_CONSUMER];
    const auto full_site = tut::WaitSite::consumer_warp(threadIdx.x / 32)
                               .on(tut::Barrier::kFull, pos.slot)
                               .at_tile(j)
                               .expecting(static_cast<unsigned>(count) * 16u);
    if (!tut::wait_or_report(&full[pos.slot], pos.phase, d_error, full_site)) return;
    read_slot(s_ring + pos.slot * TILE_VECS, r, count, c);
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads, before the release
    ptx::mbarrier_arrive(&empty[pos.slot]);
    compute_and_store(r, d_out, tile, count, c, intensity);
  }
}

/// v9 early release: one block, so every slot is reused once there are > NEG_STAGES tiles.
inline void launch_ws_early_release(const WsArgs& a, cudaStream_t s) {
  tut::launch_persistent(ws_early_release_kernel, THREADS, NEG_STAGES * TILE_BYTES + RING_PAD_BYTES,
                         1, 1, s, a.in, a.out, a.n_vecs, a.intensity, a.error);
}

/// v9 empty count: the usual persistent grid; it fails where some block makes a second lap.
inline void launch_ws_empty_count(const WsArgs& a, int sm_count, int blocks_per_sm,
                                  cudaStream_t s) {
  tut::launch_persistent(ws_empty_count_kernel, THREADS, NEG_STAGES * TILE_BYTES + RING_PAD_BYTES,
                         sm_count, blocks_per_sm, s, a.in, a.out, a.n_vecs, a.intensity, a.error);
}

/// Registers the negatives on the chapter's variant list (@p Problem: main.cu's).
template <class Problem>
void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v9_early_release", "v9 BROKEN: release before read",
        "negative: consumers free the slot, then read the overwritten data; must FAIL",
        [](Problem& p, cudaStream_t s) { launch_ws_early_release(p.args(), s); })
      .negative = true;
  v.add("v9_empty_count", "v9 BROKEN: empty barrier expects one arrival too many",
        "negative: empty[s] never completes a phase; fails from the 2nd lap on",
        [](Problem& p, cudaStream_t s) {
          launch_ws_empty_count(p.args(), p.sms(), p.blocks_per_sm(), s);
        })
      .negative = true;
}

}  // namespace ch14
