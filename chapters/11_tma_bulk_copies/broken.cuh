/// @file broken.cuh
/// @brief Chapter 11's deliberately broken variants v8-v11: copies of stream_v2_bulk_cccl_kernel
///        (kernels.cuh), each with one line broken and marked BUG, and add_negatives(), which
///        registers them.
//
// v8-v10 must FAIL under --check-only, never hang: the bounded waits give up after 1 s, and the
// error log names the wait that gave up (barrier, slot, parity, tile). v11 is a race, not a
// hang: the H200 usually orders it the lucky way, so it is a perturbation negative
// (`.perturb_negative`): registered in every build, it must FAIL in the TUTORIAL_PERTURB build,
// whose seeded delays park a warp inside the race window (CTest
// ch11_tma_bulk_copies_perturb_negatives), and the plain build's negatives test skips it.
#pragma once

#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/perturb.cuh"
#include "common/ring.cuh"
#include "kernels.cuh"

namespace ch11 {

// v8: the producer announces 16 bytes more than the copy delivers. The transaction count never
// returns to zero, so full[s]'s phase never completes: the consumers' first wait gives up
// ("... timed out on full[0] waiting for parity 0 at tile 0"). v2's bulk_load is written out
// here, to break its expect_tx.
__global__ void __launch_bounds__(THREADS)
    stream_v8_wrong_tx_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                               std::size_t n_vecs, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];  // [4][1024] x 16 B = 64 KiB
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);
  __shared__ __align__(8) std::uint64_t full[STAGES], empty[STAGES];
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const std::size_t my_tiles = tut::tiles_of_this_block((n_vecs + TILE_VECS - 1) / TILE_VECS);
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);       // mbarrier.init
      ptx::mbarrier_init(&empty[s], WARPS);  // mbarrier.init
    }
    ptx::fence_proxy_async(ptx::space_shared);  // v8's init fence, as in v2
  }
  __syncthreads();

  auto produce = [&](std::size_t tile) -> bool {
    const int s = static_cast<int>(tile % STAGES);
    const std::uint32_t free_parity = ((tile / STAGES) & 1) ^ 1;
    if (!tut::wait_or_report(&empty[s], free_parity, d_error,
                             tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, s).at_tile(tile)))
      return false;
    const std::size_t base = tut::block_tile(tile) * TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TILE_VECS);
    tut::perturb(tut::Perturb::kBeforeTmaIssue, tile);
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[s], bytes + 16);  // BUG: 16 bytes too many
    ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_ring + s * TILE_VECS, d_in + base,
                       bytes, &full[s]);
    return true;
  };
  bool producing = true;  // thread 0 never returns early (its warp meets it at __syncwarp)
  if (tid == 0)
    for (std::size_t tile = 0; tile < my_tiles && tile < STAGES && producing; ++tile)
      producing = produce(tile);

  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    const int s = static_cast<int>(tile % STAGES);
    const std::size_t base = tut::block_tile(tile) * TILE_VECS;
    const int count = tile_count(n_vecs, base, TILE_VECS);
    // mbarrier.try_wait.parity, in a loop bounded by %globaltimer
    if (!tut::wait_or_report(&full[s], (tile / STAGES) & 1, d_error,
                             tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s)
                                 .at_tile(tile).expecting(16u * count)))
      return;
    copy_tile_reversed<TILE_VECS / THREADS>(d_out + base, s_ring + s * TILE_VECS, count);
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    ptx::fence_proxy_async(ptx::space_shared);  // v8: my slot reads before the refill
    __syncwarp();
    if (tid % 32 == 0) (void)ptx::mbarrier_arrive(&empty[s]);  // mbarrier.arrive.release.cta
    if (tid == 0 && producing && tile + STAGES < my_tiles) producing = produce(tile + STAGES);
  }
}

// v9: the producer waits on empty[s] with parity n & 1, without the ^ 1. For tile 0 that is
// phase 0 of a fresh barrier, which needs tile 0 consumed, which needs tile 0 issued: a
// deadlock in the first lap ("producer warp 0 ... timed out on empty[0] waiting for parity 0
// at tile 0"; the consumers time out on full[0] beside it).
__global__ void __launch_bounds__(THREADS)
    stream_v9_wrong_parity_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                               std::size_t n_vecs, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];  // [4][1024] x 16 B = 64 KiB
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);
  __shared__ __align__(8) std::uint64_t full[STAGES], empty[STAGES];
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const std::size_t my_tiles = tut::tiles_of_this_block((n_vecs + TILE_VECS - 1) / TILE_VECS);
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);       // mbarrier.init
      ptx::mbarrier_init(&empty[s], WARPS);  // mbarrier.init
    }
    ptx::fence_proxy_async(ptx::space_shared);  // v9's init fence, as in v2
  }
  __syncthreads();

  auto produce = [&](std::size_t tile) -> bool {
    const int s = static_cast<int>(tile % STAGES);
    const std::uint32_t free_parity = (tile / STAGES) & 1;  // BUG: the phase of this tile itself
    if (!tut::wait_or_report(&empty[s], free_parity, d_error,
                             tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, s).at_tile(tile)))
      return false;
    const std::size_t base = tut::block_tile(tile) * TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TILE_VECS);
    tut::perturb(tut::Perturb::kBeforeTmaIssue, tile);
    bulk_load(s_ring + s * TILE_VECS, d_in + base, bytes, &full[s]);  // v9: expect_tx, copy
    return true;
  };
  bool producing = true;  // thread 0 never returns early (its warp meets it at __syncwarp)
  if (tid == 0)
    for (std::size_t tile = 0; tile < my_tiles && tile < STAGES && producing; ++tile)
      producing = produce(tile);

  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    const int s = static_cast<int>(tile % STAGES);
    const std::size_t base = tut::block_tile(tile) * TILE_VECS;
    const int count = tile_count(n_vecs, base, TILE_VECS);
    // mbarrier.try_wait.parity, in a loop bounded by %globaltimer
    if (!tut::wait_or_report(&full[s], (tile / STAGES) & 1, d_error,
                             tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s)
                                 .at_tile(tile).expecting(16u * count)))
      return;
    copy_tile_reversed<TILE_VECS / THREADS>(d_out + base, s_ring + s * TILE_VECS, count);
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    ptx::fence_proxy_async(ptx::space_shared);  // v9: my slot reads before the refill
    __syncwarp();
    if (tid % 32 == 0) (void)ptx::mbarrier_arrive(&empty[s]);  // mbarrier.arrive.release.cta
    if (tid == 0 && producing && tile + STAGES < my_tiles) producing = produce(tile + STAGES);
  }
}

// v10: the empty barriers count THREADS arrivals per phase, but only lane 0 of each warp
// arrives (WARPS per phase). Lap 0 never needs a completed release (the producer's first waits
// name the fresh barrier's phase before phase 0), so a block that never wraps its ring passes.
// From lap 1 on the producer waits for a release that can never complete: "producer warp 0
// ... timed out on empty[0] waiting for parity 0 at tile 4" (STAGES = 4), and the consumers
// time out on the tile that was never issued. Deterministic, but only in a launch where blocks
// lap the ring: the harness's lap check (two blocks) makes --check-only catch it.
__global__ void __launch_bounds__(THREADS)
    stream_v10_empty_count_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                               std::size_t n_vecs, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];  // [4][1024] x 16 B = 64 KiB
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);
  __shared__ __align__(8) std::uint64_t full[STAGES], empty[STAGES];
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const std::size_t my_tiles = tut::tiles_of_this_block((n_vecs + TILE_VECS - 1) / TILE_VECS);
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);       // mbarrier.init
      ptx::mbarrier_init(&empty[s], THREADS);  // BUG: one arrival per warp, not per thread
    }
    ptx::fence_proxy_async(ptx::space_shared);  // v10's init fence, as in v2
  }
  __syncthreads();

  auto produce = [&](std::size_t tile) -> bool {
    const int s = static_cast<int>(tile % STAGES);
    const std::uint32_t free_parity = ((tile / STAGES) & 1) ^ 1;
    if (!tut::wait_or_report(&empty[s], free_parity, d_error,
                             tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, s).at_tile(tile)))
      return false;
    const std::size_t base = tut::block_tile(tile) * TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TILE_VECS);
    tut::perturb(tut::Perturb::kBeforeTmaIssue, tile);
    bulk_load(s_ring + s * TILE_VECS, d_in + base, bytes, &full[s]);  // v10: expect_tx, copy
    return true;
  };
  bool producing = true;  // thread 0 never returns early (its warp meets it at __syncwarp)
  if (tid == 0)
    for (std::size_t tile = 0; tile < my_tiles && tile < STAGES && producing; ++tile)
      producing = produce(tile);

  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    const int s = static_cast<int>(tile % STAGES);
    const std::size_t base = tut::block_tile(tile) * TILE_VECS;
    const int count = tile_count(n_vecs, base, TILE_VECS);
    // mbarrier.try_wait.parity, in a loop bounded by %globaltimer
    if (!tut::wait_or_report(&full[s], (tile / STAGES) & 1, d_error,
                             tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s)
                                 .at_tile(tile).expecting(16u * count)))
      return;
    copy_tile_reversed<TILE_VECS / THREADS>(d_out + base, s_ring + s * TILE_VECS, count);
    tut::perturb(tut::Perturb::kBeforeRelease, tile);
    ptx::fence_proxy_async(ptx::space_shared);  // v10: my slot reads before the refill
    __syncwarp();
    if (tid % 32 == 0) (void)ptx::mbarrier_arrive(&empty[s]);  // mbarrier.arrive.release.cta
    if (tid == 0 && producing && tile + STAGES < my_tiles) producing = produce(tile + STAGES);
  }
}

// v11: the consumer releases the slot (its warp's empty arrive) BEFORE it reads it: the release
// moved above the reads. Once all eight warps have arrived, thread 0 refills the slot with the
// tile STAGES ahead, and a warp that is still reading sees the new tile's bytes. On the H200
// the refill's DRAM round trip usually loses the race to the late warp's reads, so a plain
// build mostly passes; the TUTORIAL_PERTURB build parks a seeded subset of warps for a few
// microseconds between their release and their reads, and the check fails. Only a run with
// such delays (or compute-sanitizer's racecheck) can show the race. The order itself is in the
// rules: asm_expect.txt's read-fence-arrive lines reject this kernel (a forbid line for v11
// shows it), so the same move in v1 or v2 fails them.
__global__ void __launch_bounds__(THREADS)
    stream_v11_early_release_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                               std::size_t n_vecs, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];  // [4][1024] x 16 B = 64 KiB
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);
  __shared__ __align__(8) std::uint64_t full[STAGES], empty[STAGES];
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const std::size_t my_tiles = tut::tiles_of_this_block((n_vecs + TILE_VECS - 1) / TILE_VECS);
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);       // mbarrier.init
      ptx::mbarrier_init(&empty[s], WARPS);  // mbarrier.init
    }
    ptx::fence_proxy_async(ptx::space_shared);  // v11's init fence, as in v2
  }
  __syncthreads();

  auto produce = [&](std::size_t tile) -> bool {
    const int s = static_cast<int>(tile % STAGES);
    const std::uint32_t free_parity = ((tile / STAGES) & 1) ^ 1;
    if (!tut::wait_or_report(&empty[s], free_parity, d_error,
                             tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, s).at_tile(tile)))
      return false;
    const std::size_t base = tut::block_tile(tile) * TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TILE_VECS);
    tut::perturb(tut::Perturb::kBeforeTmaIssue, tile);
    bulk_load(s_ring + s * TILE_VECS, d_in + base, bytes, &full[s]);  // v11: expect_tx, copy
    return true;
  };
  bool producing = true;  // thread 0 never returns early (its warp meets it at __syncwarp)
  if (tid == 0)
    for (std::size_t tile = 0; tile < my_tiles && tile < STAGES && producing; ++tile)
      producing = produce(tile);

  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    const int s = static_cast<int>(tile % STAGES);
    const std::size_t base = tut::block_tile(tile) * TILE_VECS;
    const int count = tile_count(n_vecs, base, TILE_VECS);
    // mbarrier.try_wait.parity, in a loop bounded by %globaltimer
    if (!tut::wait_or_report(&full[s], (tile / STAGES) & 1, d_error,
                             tut::WaitSite::consumer_warp(warp).on(tut::Barrier::kFull, s)
                                 .at_tile(tile).expecting(16u * count)))
      return;
    __syncwarp();
    // BUG: the slot is released before it is read (the release below belongs after the reads)
    if (tid % 32 == 0) (void)ptx::mbarrier_arrive(&empty[s]);
    tut::perturb(tut::Perturb::kBeforeRelease, tile);  // a warp parked here reads a refilled slot
    copy_tile_reversed<TILE_VECS / THREADS>(d_out + base, s_ring + s * TILE_VECS, count);
    ptx::fence_proxy_async(ptx::space_shared);  // v11: fenced, but after the release
    if (tid == 0 && producing && tile + STAGES < my_tiles) producing = produce(tile + STAGES);
  }
}

// The negatives, at v2's shape and a full-occupancy persistent grid.
using NegativeKernel = void (*)(const int4*, int4*, std::size_t, unsigned*);
inline void launch_stream_negative(NegativeKernel kernel, const void* d_in, void* d_out,
                                   std::size_t bytes, unsigned* d_error, int sm_count,
                                   cudaStream_t s) {
  tut::launch_persistent(kernel, THREADS, ring_smem_bytes<STAGES, TILE_VECS>(), sm_count, 0, s,
                         static_cast<const int4*>(d_in), static_cast<int4*>(d_out), bytes / 16,
                         d_error);
}

// Registers the negatives on a VariantList of the chapter's Problem (any type with in(), out(),
// err(), cfg and sms(): main.cu's).
template <class Problem>
void add_negatives(tut::VariantList<Problem>& v) {
  v.add("v8_wrong_tx", "v8 BROKEN: expect_tx +16 B",
        "negative: announces 16 bytes too many; the phase never completes; bounded wait gives up",
        [](Problem& p, cudaStream_t s) {
          launch_stream_negative(stream_v8_wrong_tx_kernel, p.in(), p.out(), p.cfg.size, p.err(),
                                 p.sms(), s);
        }).negative = true;
  v.add("v9_wrong_parity", "v9 BROKEN: producer parity",
        "negative: producer waits on empty[] parity n&1 instead of (n&1)^1; deadlock in lap 0",
        [](Problem& p, cudaStream_t s) {
          launch_stream_negative(stream_v9_wrong_parity_kernel, p.in(), p.out(), p.cfg.size,
                                 p.err(), p.sms(), s);
        }).negative = true;
  v.add("v10_empty_count", "v10 BROKEN: empty count 256",
        "negative: empty[] expects 256 arrivals, gets 8 per phase; deadlock from the second lap",
        [](Problem& p, cudaStream_t s) {
          launch_stream_negative(stream_v10_empty_count_kernel, p.in(), p.out(), p.cfg.size,
                                 p.err(), p.sms(), s);
        }).negative = true;
  // A race the plain build rarely shows: a perturbation negative, which `--variant=negative`
  // leaves out and the perturbation build's CTest (label perturb) requires to FAIL.
  v.add("v11_early_release", "v11 BROKEN: early release",
        "negative (TUTORIAL_PERTURB build): each warp releases its slot before reading it",
        [](Problem& p, cudaStream_t s) {
          launch_stream_negative(stream_v11_early_release_kernel, p.in(), p.out(), p.cfg.size,
                                 p.err(), p.sms(), s);
        }).perturb_negative = true;
}

}  // namespace ch11
