/// @file kernels.cuh
/// @brief Chapter 03's lesson kernels: collective block copies (cooperative_groups::memcpy_async
///        and cuda::memcpy_async(block, ...)), one call per tile instead of one per thread.
///
/// What it adds over chapter 02: instead of every thread naming its own 16 bytes, the whole
/// block makes ONE call that names the whole tile, and the library splits it over the threads
/// (or, on sm_90, hands it to the TMA unit). Two interfaces:
///   cooperative_groups::memcpy_async(block, dst, src, bytes)  commits a cp.async group;
///     cooperative_groups::wait(block) / wait_prior<N>(block) = cp.async.wait_group N + block.sync()
///   cuda::memcpy_async(block, dst, src, cuda::aligned_size_t<16>(bytes), bar)
///     completes through a cuda::barrier, as in chapter 02.
/// The rule for both: EVERY thread of the group makes the call, with identical arguments. The
/// call is a loop over the group's ranks (or a rank-0 bulk copy); a thread that skips it leaves
/// its share of the tile uncopied - the negative variant shows that.
///
/// Reading order: v1 cg::memcpy_async, v2 cuda::memcpy_async(block), v3 two buffers with
/// wait_prior, v5 the stencil as one collective copy. The baselines v0 and v4 are chapter 02's
/// per-thread stream and stencil kernels (the same tiles and bytes), run from common/
/// workload_stencil_stream_baselines.cuh; every kernel runs through the workload's launchers
/// (common/workload_stencil_stream_kernels.cuh). The registry is in main.cu; the negative v9
/// is in broken.cuh.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_runtime.h>
#include <nv/target>

#include <cstdint>

#include "common/block_barrier.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_kernels.cuh"

namespace ch03 {

namespace cg = cooperative_groups;

// The workload's shapes and helpers (common/workload_stencil_stream.cuh and
// common/workload_stencil_stream_kernels.cuh): kRadius (3), kStencilTileElems (256 floats),
// kStreamTileVecs (256 float4), kThreads (256 per block, every kernel here),
// stream_tile_count() and stencil_sum().
using namespace tut::stencil_stream;
using tut::BlockBarrier;

// ---------------------------------------------------------------------------------------------
// v1: cooperative_groups::memcpy_async(block, ...) + cooperative_groups::wait(block)
// ---------------------------------------------------------------------------------------------
// For float4 elements the call stands for this loop, run by every thread (rank = threadIdx.x):
//   for (int j = rank; j < count; j += block.size())
//     cp.async.cg.shared.global [&s_tile[j]], [&src[j]], 16, 16;   // LDGSTS.E.BYPASS.128
//   cp.async.commit_group;                                          // LDGDEPBAR
// and cg::wait(block) is cp.async.wait_group 0 (DEPBAR.LE SB0, 0x0), then block.sync()
// (BAR.SYNC): first "my copies landed", then "everyone's copies landed".
__global__ void stream_v1_cg_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                    std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[kStreamTileVecs];
  const cg::thread_block block = cg::this_thread_block();
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    // EXERCISE-BEGIN: the whole tile (count float4 from d_in + base) into s_tile, with one collective call that every thread makes with the same arguments
    cg::memcpy_async(block, s_tile, d_in + base, sizeof(float4) * count);
    // EXERCISE-END
    cg::wait(block);  // invariant: s_tile[0 .. count) holds this tile, visible to all
    if (tid < count) d_out[base + tid] = s_tile[count - 1 - tid];
    block.sync();     // consumed before the next call overwrites it
  }
}

// ---------------------------------------------------------------------------------------------
// v2: cuda::memcpy_async(block, ..., aligned_size_t<16>, bar)
// ---------------------------------------------------------------------------------------------
// LESSON: the same collective contract, different machinery per architecture.
//   sm_80: v1's loop with cp.async.cg (16 B), then one deferred barrier arrival per thread
//          (cp.async.mbarrier.arrive).
//   sm_90: thread rank 0 alone issues ONE cp.async.bulk for the whole tile (UBLKCP: the TMA
//          unit moves count*16 bytes) and one mbarrier.expect_tx of that byte count; the other
//          255 threads issue no copy instruction. The phase completes when all 256 threads
//          have arrived and the bytes have landed. As in v0 (chapter 02's per-thread 16-byte
//          copies), the TMA refills the tile from the async proxy: every thread fences its
//          reads before the trailing barrier.
__global__ void stream_v2_cuda_block_kernel(const float4* __restrict__ d_in,
                                            float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[kStreamTileVecs];
  __shared__ alignas(BlockBarrier) unsigned char s_bar_bytes[sizeof(BlockBarrier)];
  BlockBarrier& bar = tut::init_block_barrier(s_bar_bytes);
  const cg::thread_block block = cg::this_thread_block();
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    cuda::memcpy_async(block, s_tile, d_in + base, cuda::aligned_size_t<16>(sizeof(float4) * count),
                       bar);
    bar.arrive_and_wait();  // 256 arrivals and (sm_90) count*16 transaction bytes
    if (tid < count) d_out[base + tid] = s_tile[count - 1 - tid];
    NV_IF_TARGET(NV_PROVIDES_SM_90, (cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);));
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v3: two buffers with cooperative_groups::wait_prior<1>
// ---------------------------------------------------------------------------------------------
// Each cg::memcpy_async commits its own cp.async group, so groups are tiles. While the block
// reverses tile k out of one buffer, tile k+1 is already on its way into the other.
//   prologue:     copy tile 0 -> buffer 0
//   steady state: copy tile k+1 -> buffer (k+1)&1; wait_prior<1> (all groups but the newest
//                 done: tile k landed); consume buffer k&1; block.sync()
//   epilogue:     the last tile has no successor: wait(block) instead (no newer group was
//                 committed, so wait_prior<1> would leave tile k itself outstanding).
__global__ void stream_v3_cg_double_kernel(const float4* __restrict__ d_in,
                                           float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[2][kStreamTileVecs];  // [2][256] float4 = 8 KiB
  const cg::thread_block block = cg::this_thread_block();
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  std::size_t tile = blockIdx.x;
  if (tile < num_tiles) {  // prologue
    const std::size_t base = tile * kStreamTileVecs;
    cg::memcpy_async(block, s_tile[0], d_in + base, sizeof(float4) * stream_tile_count(n_vecs, base));
  }
  for (int k = 0; tile < num_tiles; tile += gridDim.x, ++k) {
    const std::size_t next = tile + gridDim.x;
    if (next < num_tiles) {
      // EXERCISE-BEGIN: start the block's next tile (next) on its way into the other buffer, then wait until every copy group but that newest one has landed
      const std::size_t next_base = next * kStreamTileVecs;
      cg::memcpy_async(block, s_tile[(k + 1) & 1], d_in + next_base,
                       sizeof(float4) * stream_tile_count(n_vecs, next_base));
      cg::wait_prior<1>(block);  // tile k landed; tile k+1 may still be in flight
      // EXERCISE-END
    } else {
      cg::wait(block);           // epilogue: nothing newer was committed
    }
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    if (tid < count) d_out[base + tid] = s_tile[k & 1][count - 1 - tid];
    block.sync();  // buffer k&1 is refilled by the copy issued in iteration k+1
  }
}

// ---------------------------------------------------------------------------------------------
// v5: the stencil tile (centre AND halos) as ONE collective cuda::memcpy_async(block, ...)
// ---------------------------------------------------------------------------------------------
// The tile's input span, elements [base-3, base+259) clipped to the array ([lo, hi)), is
// contiguous in global memory and in s_tile, so one call covers it; no thread needs to know
// whether it is a "halo thread". With aligned_size_t<4> it is v1's loop with 4-byte cp.async on
// both architectures (the bulk path needs 16-byte alignment; base-3 floats is only 4-aligned).
// Slots outside the array get plain zero stores; they never overlap the copied span.
__global__ void stencil_v5_block_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                        std::size_t n) {
  constexpr int SPAN = kRadius + kStencilTileElems + kRadius;  // 262 floats
  __shared__ alignas(16) float s_tile[SPAN];
  __shared__ alignas(BlockBarrier) unsigned char s_bar_bytes[sizeof(BlockBarrier)];
  BlockBarrier& bar = tut::init_block_barrier(s_bar_bytes);
  const cg::thread_block block = cg::this_thread_block();
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n + kStencilTileElems - 1) / kStencilTileElems;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStencilTileElems;
    const std::size_t lo = base >= kRadius ? base - kRadius : 0;    // first element used
    const std::size_t end = base + kStencilTileElems + kRadius;   // one past, unclipped
    const std::size_t hi = end < n ? end : n;
    const int first_slot = static_cast<int>(lo + kRadius - base);  // slot of element lo
    const int end_slot = first_slot + static_cast<int>(hi - lo);  // one past the last
    cuda::memcpy_async(block, &s_tile[first_slot], &d_in[lo],
                       cuda::aligned_size_t<4>(sizeof(float) * (hi - lo)), bar);
    for (int slot = tid; slot < SPAN; slot += kThreads)  // zeros outside the array
      if (slot < first_slot || slot >= end_slot) s_tile[slot] = 0.0f;
    bar.arrive_and_wait();
    const std::size_t i = base + tid;
    if (i < n) d_out[i] = stencil_sum(s_tile, tid);
    __syncthreads();
  }
}

}  // namespace ch03
