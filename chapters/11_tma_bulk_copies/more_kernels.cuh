// Chapter 11, second part of the lesson: v3 (bulk load AND bulk store) and v4 (the portable
// cuda::memcpy_async spelling). Read kernels.cuh first; main.cu includes it before this file.
// The negatives (copies of v2 with one line broken) are in tests/negatives/11_tma_bulk_copies.cuh.
#pragma once

#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

namespace ch11 {

// ---------------------------------------------------------------------------------------------
// v3: bulk load AND bulk store - the data never passes through a register on its way out
// ---------------------------------------------------------------------------------------------
// The threads reverse slot s into one of two output staging buffers with ordinary stores
// (STS), then thread 0 hands that buffer to the TMA unit: cp.async.bulk.global.shared::cta
// (bulk_group completion). Two rules:
//   1. fence.proxy.async: the STS writes belong to the generic proxy, the bulk store reads
//      through the async proxy. Each writing thread fences before the barrier that precedes
//      the store; without it the TMA unit may read stale shared memory. The same fence also
//      orders the thread's reads of slot s before the TMA's refill of that slot.
//   2. A staging buffer may be rewritten only once the store that reads it has finished
//      READING it: cp.async.bulk.wait_group.read N waits until at most N bulk groups still
//      read shared memory (their global writes may still be in flight, which is fine).
// Slots are released by a __syncthreads (the loop has two anyway), so there are no empty
// barriers: thread 0 refills slot s right after the barrier that ends tile j.
__global__ void __launch_bounds__(THREADS)
    stream_v3_bulk_store_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                                std::size_t n_vecs, unsigned* d_error) {
  namespace ptx = cuda::ptx;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);   // [STAGES][TMA_TILE_VECS] x 16 B
  int4* s_out = s_ring + TMA_STAGES * TMA_TILE_VECS;  // [2][TMA_TILE_VECS] x 16 B
  __shared__ __align__(8) std::uint64_t full[TMA_STAGES];
  const int t = threadIdx.x;
  const std::size_t my_tiles =
      tut::tiles_of_this_block((n_vecs + TMA_TILE_VECS - 1) / TMA_TILE_VECS);
  if (t == 0) {
    for (int s = 0; s < TMA_STAGES; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_proxy_async(ptx::space_shared);  // the initialisation -> the async proxy
  }
  __syncthreads();
  auto produce = [&](std::size_t j) {
    const int s = static_cast<int>(j % TMA_STAGES);
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    const std::uint32_t bytes = 16u * tile_count(n_vecs, base, TMA_TILE_VECS);
    bulk_load(s_ring + s * TMA_TILE_VECS, d_in + base, bytes, &full[s]);  // v2's issue step
  };
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < TMA_STAGES; ++j) produce(j);

  for (std::size_t j = 0; j < my_tiles; ++j) {
    const int s = static_cast<int>(j % TMA_STAGES);
    const bool landed = tut::wait_parity_bounded(&full[s], (j / TMA_STAGES) & 1);
    int4* s_dst = s_out + (j & 1) * TMA_TILE_VECS;
    if (t == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<1>{});  // s_dst no longer read
    // Barrier A: s_dst is free for everyone; and a block-uniform decision on a timeout, so no
    // thread is left waiting at a later __syncthreads.
    if (__syncthreads_or(!landed)) {
      if (t == 0) {
        atomicOr(d_error, tut::kErrorWaitTimedOut);
        ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
      }
      return;
    }
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    const int count = tile_count(n_vecs, base, TMA_TILE_VECS);
    copy_tile_reversed<TMA_TILE_VECS / THREADS>(s_dst, s_ring + s * TMA_TILE_VECS, count);  // STS
    ptx::fence_proxy_async(ptx::space_shared);  // rule 1: my STS (and slot reads) -> async proxy
    __syncthreads();  // Barrier B: s_dst complete; slot s fully read
    if (t == 0) {
      ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, d_out + base, s_dst, 16u * count);
      ptx::cp_async_bulk_commit_group();  // one bulk group per tile
      if (j + TMA_STAGES < my_tiles) produce(j + TMA_STAGES);  // slot s was released by B
    }
  }
  // The stores must have finished reading shared memory before the block exits; waiting for
  // full completion makes the kernel's end mean "written".
  if (t == 0) ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
}

// ---------------------------------------------------------------------------------------------
// v4: cuda::memcpy_async + cuda::barrier - the portable spelling of the same bulk copy
// ---------------------------------------------------------------------------------------------
// With a cuda::barrier<thread_scope_block> in shared memory, 16-byte aligned pointers and a
// cuda::aligned_size_t<16> size, CCCL lowers memcpy_async on sm_90 to cp.async.bulk plus
// mbarrier.expect_tx (asm_expect.txt asserts it). The barrier counts THREADS arrivals per
// phase; the issuing thread adds the bytes. The waits are unbounded (cuda::barrier has no
// timed wait): this variant has no negative.
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__global__ void __launch_bounds__(THREADS)
    stream_v4_memcpy_async_kernel(const int4* __restrict__ d_in, int4* __restrict__ d_out,
                                  std::size_t n_vecs) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  int4* s_ring = reinterpret_cast<int4*>(smem_raw);  // [STAGES][TMA_TILE_VECS] x 16 B
  // Raw storage, initialised with init() below: a `__shared__ cuda::barrier` would run a
  // dynamic initialiser (warning 20054).
  __shared__ __align__(8) unsigned char bar_storage[TMA_STAGES * sizeof(block_barrier)];
  block_barrier* bar = reinterpret_cast<block_barrier*>(bar_storage);
  const int t = threadIdx.x;
  const std::size_t my_tiles =
      tut::tiles_of_this_block((n_vecs + TMA_TILE_VECS - 1) / TMA_TILE_VECS);
  if (t == 0) {
    for (int s = 0; s < TMA_STAGES; ++s) init(&bar[s], THREADS);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // as in v1: the TMA uses them
  }
  __syncthreads();
  auto produce = [&](std::size_t j) {
    const int s = static_cast<int>(j % TMA_STAGES);
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    const std::size_t bytes = 16u * tile_count(n_vecs, base, TMA_TILE_VECS);
    cuda::memcpy_async(s_ring + s * TMA_TILE_VECS, d_in + base,
                       cuda::aligned_size_t<16>(bytes), bar[s]);
  };
  if (t == 0)
    for (std::size_t j = 0; j < my_tiles && j < TMA_STAGES; ++j) produce(j);
  for (std::size_t j = 0; j < my_tiles; ++j) {
    const int s = static_cast<int>(j % TMA_STAGES);
    bar[s].arrive_and_wait();  // all THREADS arrived and the copy's bytes landed: slot s = tile j
    const std::size_t base = tut::block_tile(j) * TMA_TILE_VECS;
    copy_tile_reversed<TMA_TILE_VECS / THREADS>(d_out + base, s_ring + s * TMA_TILE_VECS,
                                                tile_count(n_vecs, base, TMA_TILE_VECS));
    // The refill below is an async-proxy write into slot s; the reads above were generic.
    // __syncthreads orders them for the generic proxy only, so each thread fences first.
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();  // slot s consumed; the refill's bytes go to bar[s]'s next phase
    if (t == 0 && j + TMA_STAGES < my_tiles) produce(j + TMA_STAGES);
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers (the 16-byte rules are checked on the host first: host.cuh)
// ---------------------------------------------------------------------------------------------
constexpr std::size_t STORE_SMEM_BYTES =
    ring_smem_bytes<TMA_STAGES, TMA_TILE_VECS>() + 2 * TMA_TILE_VECS * 16;  // 96 KiB

inline void launch_stream_v3(const void* d_in, void* d_out, std::size_t bytes, unsigned* d_error,
                             int sm_count, int blocks_per_sm, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(stream_v3_bulk_store_kernel, THREADS, sm_count,
                                             blocks_per_sm, STORE_SMEM_BYTES);
  stream_v3_bulk_store_kernel<<<grid, THREADS, STORE_SMEM_BYTES, s>>>(
      static_cast<const int4*>(d_in), static_cast<int4*>(d_out), bytes / 16, d_error);
}

inline void launch_stream_v4(const void* d_in, void* d_out, std::size_t bytes, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  constexpr std::size_t smem = ring_smem_bytes<TMA_STAGES, TMA_TILE_VECS>();
  const unsigned grid = tut::persistent_grid(stream_v4_memcpy_async_kernel, THREADS, sm_count,
                                             blocks_per_sm, smem);
  stream_v4_memcpy_async_kernel<<<grid, THREADS, smem, s>>>(
      static_cast<const int4*>(d_in), static_cast<int4*>(d_out), bytes / 16);
}

}  // namespace ch11
