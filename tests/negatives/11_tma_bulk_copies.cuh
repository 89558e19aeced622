// Chapter 11's negatives v8-v10: copies of stream_v2_bulk_cccl_kernel (chapters/
// 11_tma_bulk_copies/kernels.cuh), each with one line broken and marked BUG. Each must FAIL
// under --check-only, never hang: the bounded waits give up after 1 s and the error word says
// so. The chapter's host.cuh includes this file after its Problem.
#pragma once

#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/harness.cuh"
#include "common/launch.cuh"
#include "common/ring.cuh"

namespace ch11 {

// v8: the producer announces 16 bytes more than the copy delivers. The transaction count never
// returns to zero, so full[s]'s phase never completes: the consumers' first wait gives up.
// (v2's bulk_load is written out here, to break its expect_tx.)
__global__ void __launch_bounds__(THREADS)
    stream_v8_wrong_tx_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                             std::size_t n_vecs, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);
  __shared__ __align__(8) std::uint64_t full[TMA_STAGES], empty[TMA_STAGES];
  const int t = threadIdx.x;
  const std::size_t my_tiles =
      tut::tiles_of_this_block((n_vecs + TMA_TILE_VECS - 1) / TMA_TILE_VECS);
  if (t == 0) {
    for (int s = 0; s < TMA_STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], WARPS);
    }
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  auto produce = [&](std::size_t j) -> bool {
    const int s = static_cast<int>(j % TMA_STAGES);
    const std::uint32_t parity = ((j / TMA_STAGES) & 1) ^ 1;
    if (!tut::wait_parity_bounded(&empty[s], parity)) {
      atomicOr(d_error, tut::kErrorWaitTimedOut);
      return false;
    }
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TMA_TILE_VECS);
    (void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                         &full[s], bytes + 16);  // BUG: 16 bytes too many
    ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_ring + s * TMA_TILE_VECS,
                       d_in + base, bytes, &full[s]);
    return true;
  };
  bool producing = true;  // thread 0 never returns early (its warp meets it at __syncwarp)
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < TMA_STAGES && producing; ++j)
      producing = produce(j);
  for (std::size_t j = 0; j < my_tiles; ++j) {
    const int s = static_cast<int>(j % TMA_STAGES);
    if (!tut::wait_parity_bounded(&full[s], (j / TMA_STAGES) & 1)) {
      atomicOr(d_error, tut::kErrorWaitTimedOut);
      return;
    }
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    copy_tile_reversed<TMA_TILE_VECS / THREADS>(d_out + base, s_ring + s * TMA_TILE_VECS,
                                                tile_count(n_vecs, base, TMA_TILE_VECS));
    ptx::fence_proxy_async(ptx::space_shared);
    __syncwarp();
    if (t % 32 == 0) (void)ptx::mbarrier_arrive(&empty[s]);
    if (t == 0 && producing && j + TMA_STAGES < my_tiles) producing = produce(j + TMA_STAGES);
  }
}

// v9: the producer waits on empty[s] with parity n & 1, without the ^ 1. For tile 0 that is
// phase 0 of a fresh barrier, which needs tile 0 consumed, which needs tile 0 issued: a
// deadlock in the first lap, which the bounded waits turn into a FAIL.
__global__ void __launch_bounds__(THREADS)
    stream_v9_wrong_parity_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                                 std::size_t n_vecs, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);
  __shared__ __align__(8) std::uint64_t full[TMA_STAGES], empty[TMA_STAGES];
  const int t = threadIdx.x;
  const std::size_t my_tiles =
      tut::tiles_of_this_block((n_vecs + TMA_TILE_VECS - 1) / TMA_TILE_VECS);
  if (t == 0) {
    for (int s = 0; s < TMA_STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], WARPS);
    }
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  auto produce = [&](std::size_t j) -> bool {
    const int s = static_cast<int>(j % TMA_STAGES);
    const std::uint32_t parity = (j / TMA_STAGES) & 1;  // BUG: the phase of tile j itself
    if (!tut::wait_parity_bounded(&empty[s], parity)) {
      atomicOr(d_error, tut::kErrorWaitTimedOut);
      return false;
    }
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TMA_TILE_VECS);
    bulk_load(s_ring + s * TMA_TILE_VECS, d_in + base, bytes, &full[s]);  // expect_tx, copy
    return true;
  };
  bool producing = true;  // thread 0 never returns early (its warp meets it at __syncwarp)
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < TMA_STAGES && producing; ++j)
      producing = produce(j);
  for (std::size_t j = 0; j < my_tiles; ++j) {
    const int s = static_cast<int>(j % TMA_STAGES);
    if (!tut::wait_parity_bounded(&full[s], (j / TMA_STAGES) & 1)) {
      atomicOr(d_error, tut::kErrorWaitTimedOut);
      return;
    }
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    copy_tile_reversed<TMA_TILE_VECS / THREADS>(d_out + base, s_ring + s * TMA_TILE_VECS,
                                                tile_count(n_vecs, base, TMA_TILE_VECS));
    ptx::fence_proxy_async(ptx::space_shared);
    __syncwarp();
    if (t % 32 == 0) (void)ptx::mbarrier_arrive(&empty[s]);
    if (t == 0 && producing && j + TMA_STAGES < my_tiles) producing = produce(j + TMA_STAGES);
  }
}

// v10: the empty barriers count THREADS arrivals per phase, but only lane 0 of each warp
// arrives (WARPS per phase). Lap 0 never needs a completed release (the producer's first waits
// name the fresh barrier's "phase before phase 0"), so a block that never wraps its ring
// passes. From lap 1 on the producer waits for a release that can never complete: the bounded
// wait gives up, and the consumers time out on the tile that was never issued. Deterministic,
// but only in a launch where blocks lap the ring: the harness's lap check (two blocks) makes
// --check-only catch it.
__global__ void __launch_bounds__(THREADS)
    stream_v10_empty_count_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                                 std::size_t n_vecs, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);
  __shared__ __align__(8) std::uint64_t full[TMA_STAGES], empty[TMA_STAGES];
  const int t = threadIdx.x;
  const std::size_t my_tiles =
      tut::tiles_of_this_block((n_vecs + TMA_TILE_VECS - 1) / TMA_TILE_VECS);
  if (t == 0) {
    for (int s = 0; s < TMA_STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], THREADS);  // BUG: one arrival per warp, not per thread
    }
    ptx::fence_proxy_async(ptx::space_shared);
  }
  __syncthreads();
  auto produce = [&](std::size_t j) -> bool {
    const int s = static_cast<int>(j % TMA_STAGES);
    const std::uint32_t parity = ((j / TMA_STAGES) & 1) ^ 1;
    if (!tut::wait_parity_bounded(&empty[s], parity)) {
      atomicOr(d_error, tut::kErrorWaitTimedOut);
      return false;
    }
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TMA_TILE_VECS);
    bulk_load(s_ring + s * TMA_TILE_VECS, d_in + base, bytes, &full[s]);  // expect_tx, copy
    return true;
  };
  bool producing = true;  // thread 0 never returns early (its warp meets it at __syncwarp)
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < TMA_STAGES && producing; ++j)
      producing = produce(j);
  for (std::size_t j = 0; j < my_tiles; ++j) {
    const int s = static_cast<int>(j % TMA_STAGES);
    if (!tut::wait_parity_bounded(&full[s], (j / TMA_STAGES) & 1)) {
      atomicOr(d_error, tut::kErrorWaitTimedOut);
      return;
    }
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    copy_tile_reversed<TMA_TILE_VECS / THREADS>(d_out + base, s_ring + s * TMA_TILE_VECS,
                                                tile_count(n_vecs, base, TMA_TILE_VECS));
    ptx::fence_proxy_async(ptx::space_shared);
    __syncwarp();
    if (t % 32 == 0) (void)ptx::mbarrier_arrive(&empty[s]);
    if (t == 0 && producing && j + TMA_STAGES < my_tiles) producing = produce(j + TMA_STAGES);
  }
}

// The negatives, at v2's shape and a full-occupancy persistent grid.
using NegativeKernel = void (*)(const int4*, int4*, std::size_t, unsigned*);
inline void launch_stream_negative(NegativeKernel kernel, const void* d_in, void* d_out,
                                   std::size_t bytes, unsigned* d_error, int sm_count,
                                   cudaStream_t s) {
  constexpr std::size_t smem = ring_smem_bytes<TMA_STAGES, TMA_TILE_VECS>();
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, 0, smem);
  kernel<<<grid, THREADS, smem, s>>>(static_cast<const int4*>(d_in), static_cast<int4*>(d_out),
                                     bytes / 16, d_error);
}

inline void add_negatives(tut::VariantList<Problem>& v) {
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
}

}  // namespace ch11
