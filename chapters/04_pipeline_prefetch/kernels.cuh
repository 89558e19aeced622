/// @file kernels.cuh
/// @brief Chapter 04's lesson kernels: a STAGES-deep ring of 4 KiB tiles filled by cp.async
///        through a thread-scope cuda::pipeline (v2), beside chapter 03's two-buffer pipeline
///        (v0) and chapter 01's synchronous kernel (v1), and their launchers.
///
/// What it adds over chapter 03: more than one or two tiles in flight per block. A ring of
/// STAGES tile buffers in shared memory; while the block waits for tile k, tiles k+1 ..
/// k+STAGES-1 are already being copied, so STAGES tiles are in flight at every wait (the depth
/// this chapter's "N-stage" names). The copies are cp.async (LDGSTS) issued per thread through a
/// thread-scope cuda::pipeline:
///   producer_acquire()  memcpy_async(..., pipe)  producer_commit()     (cp.async.commit_group)
///   pipeline_consumer_wait_prior<N>(pipe)  ...use...  consumer_release()
///                                                                     (cp.async.wait_group N)
/// (which N lets tile k be read with the later tiles still in flight is the lesson's point:
/// README, "The protocol").
/// STAGES is a template parameter (1, 2, 3, 4, 6, 8, 12, 16 instantiated). The work per element
/// (--rounds: integer multiply-adds per 32-bit word) is the arithmetic-intensity knob that
/// decides whether there is any compute for the copies to hide behind.
///
/// Why it matters: bytes in flight per SM = blocks/SM x STAGES x 4 KiB. Chapter 01's synchronous
/// kernel at one block per SM has at most one 4 KiB tile in flight; DRAM latency x bandwidth per
/// SM needs several times that. Deep pipelines get it from ONE block; occupancy gets it from many.
///
/// The block's tiles are numbered k = 0 .. my_tiles-1 (the loop variable `tile` in v0 and v2);
/// the comments say "tile k". The Problem and the CPU reference are in problem.cuh, the registry
/// and the --timeline run in main.cu, the sweeps in sweep.cuh, the negatives in broken.cuh.
/// Minimum compute capability: 8.0 (cp.async). Dynamic shared memory: STAGES x 4 KiB per block.
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/pipeline>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/launch.cuh"
#include "common/perturb.cuh"
#include "common/timeline.cuh"

namespace ch04 {

namespace cg = cooperative_groups;

constexpr int THREADS = 256;                       // threads per block, every kernel here
constexpr int TILE_VECS = THREADS;                 // one uint4 (16 B) per thread per tile
constexpr int TILE_BYTES = TILE_VECS * 16;         // 4 KiB

// Elements in the tile that starts at `base`: TILE_VECS, or fewer for the last tile.
__host__ __device__ inline int tile_count(std::size_t n_vecs, std::size_t base) {
  const std::size_t left = n_vecs - base;
  return static_cast<int>(left < TILE_VECS ? left : TILE_VECS);
}

// The compute step: `rounds` dependent integer multiply-adds per 32-bit word (a bijection, so
// unique inputs stay unique, and exact, so the CPU reference matches bit for bit). `rounds` is a
// run-time value, so the loop stays a loop: nvcc composes four rounds into one IMAD and handles
// the remainder with single IMADs, and each word pays the loop's compares and branches as well
// (the README's SASS section).
__host__ __device__ inline std::uint32_t work_word(std::uint32_t x, int rounds) {
  for (int r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
  return x;
}
__device__ inline uint4 work_vec(uint4 v, int rounds) {
  return make_uint4(work_word(v.x, rounds), work_word(v.y, rounds), work_word(v.z, rounds),
                    work_word(v.w, rounds));
}

// ---------------------------------------------------------------------------------------------
// v0: chapter 03's best pipeline: collective copies into two buffers, cg::wait_prior<1>
// ---------------------------------------------------------------------------------------------
// Written in this chapter's loop form (tile k of the block, my_tiles of them) so that it reads
// beside v2: one collective group per tile, two buffers, the wait leaves the newest group in
// flight.
__global__ void stream_v0_cg_double_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                                           std::size_t n_vecs) {
  __shared__ alignas(16) uint4 s_tile[2][TILE_VECS];  // [2][256] uint4 = 8 KiB
  const cg::thread_block block = cg::this_thread_block();
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles =
      blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  auto copy = [&](std::size_t tile) {  // tile k of this block into buffer k & 1: one group
    const std::size_t base = (blockIdx.x + tile * gridDim.x) * TILE_VECS;
    cg::memcpy_async(block, s_tile[tile & 1], d_in + base, sizeof(uint4) * tile_count(n_vecs, base));
  };
  if (my_tiles > 0) copy(0);
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    if (tile + 1 < my_tiles) {
      copy(tile + 1);
      cg::wait_prior<1>(block);  // tile k landed; tile k+1 may still be in flight
    } else {
      cg::wait(block);  // the last tile: no newer group was committed
    }
    const std::size_t base = (blockIdx.x + tile * gridDim.x) * TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (tid < count) d_out[base + tid] = s_tile[tile & 1][count - 1 - tid];
    block.sync();  // buffer k & 1 is refilled in iteration k + 1: all reads first
  }
}

// ---------------------------------------------------------------------------------------------
// v1: chapter 01's synchronous kernel (LDG -> STS, BAR, LDS -> STG): the yardstick
// ---------------------------------------------------------------------------------------------
// In this chapter's loop form, like v0 and v2. Timeline (tut::TraceOn only; with TraceOff the
// calls compile to nothing): thread 0 records for the block, here and in v2.
template <class Tracing = tut::TraceOff>
__global__ void stream_v1_sync_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                                      std::size_t n_vecs, Tracing trace = {}) {
  __shared__ uint4 s_tile[TILE_VECS];  // [256] uint4 = 4 KiB
  auto lane = trace.lane(0, threadIdx.x == 0);
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  // Chapter 01's loop, as it is there: with this loop form nvcc keeps each tile's load after
  // the previous tile's trailing barrier, so the kernel stays synchronous (one tile in flight).
  std::uint32_t k = 0;  // the block's tile number
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x, ++k) {
    const std::size_t base = tile * TILE_VECS;
    const int count = tile_count(n_vecs, base);
    lane.copy_issued(k);  // the load is issued here; the store into shared waits for it
    if (tid < count) s_tile[tid] = d_in[base + tid];
    lane.wait_begun(k);
    __syncthreads();
    lane.wait_done(k);
    lane.compute_begun(k);
    if (tid < count) d_out[base + tid] = s_tile[count - 1 - tid];
    lane.compute_ended(k);
    __syncthreads();
    lane.slot_released(k);
  }
  lane.close();
}

// ---------------------------------------------------------------------------------------------
// v2: STAGES-deep prefetch through a thread-scope cuda::pipeline
// ---------------------------------------------------------------------------------------------
// The block owns tiles blockIdx.x + k*gridDim.x, k = 0 .. my_tiles-1 (a persistent grid).
// Tile k lives in ring slot k % STAGES: [STAGES][256] uint4 of dynamic shared memory. The
// slot arithmetic is written out with two counters that wrap at STAGES (the lesson).
//
// What the pipeline calls compile to (thread scope; read <cuda/pipeline>):
//   producer_acquire()            nothing: a thread-scope pipeline has no shared stage state
//   memcpy_async(.., <16>, pipe)  cp.async.cg.shared.global [s], [g], 16, 16  (LDGSTS...BYPASS.128)
//   producer_commit()             cp.async.commit_group (LDGDEPBAR): closes this thread's group
//   consumer_wait_prior<N>()      cp.async.wait_group N (DEPBAR.LE SB0, N): all but the N newest
//                                 of THIS THREAD's groups have landed. CCCL clamps N to 8.
//   consumer_release()            nothing at thread scope
// The groups are per thread and counted, not named: a wait_prior<N> means "tile k" only because
// every iteration commits exactly one group - even an empty one.
template <int STAGES, class Tracing = tut::TraceOff>
__global__ void __launch_bounds__(THREADS)
    stream_v2_pipeline_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                              std::size_t n_vecs, int rounds, Tracing trace = {}) {
  static_assert(STAGES >= 1, "at least one stage");
  extern __shared__ uint4 s_ring[];  // [STAGES][TILE_VECS] uint4, STAGES x 4 KiB
  auto lane = trace.lane(0, threadIdx.x == 0);  // thread 0 records the ring
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles =
      blockIdx.x < num_tiles ? (num_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  int produce_slot = 0;  // the slot the next produce() fills
  int consume_slot = 0;  // the slot of tile k

  // Producer step: tile k of this block into ring slot produce_slot; exactly one commit.
  auto produce = [&](std::size_t tile) {
    pipe.producer_acquire();
    if (tile < my_tiles) {
      const std::size_t base = (blockIdx.x + tile * gridDim.x) * TILE_VECS;
      // EXERCISE-BEGIN: this thread's 16 bytes of the tile (if it has any) start their trip to the ring slot, as part of the pipeline's current group
      if (tid < tile_count(n_vecs, base))
        cuda::memcpy_async(&s_ring[produce_slot * TILE_VECS + tid], &d_in[base + tid],
                           cuda::aligned_size_t<16>(sizeof(uint4)), pipe);
      // EXERCISE-STUB: (void)base;
      // EXERCISE-END
    }
    // Commit even when nothing was issued (past the last tile, or tid >= count). An empty group
    // completes at once, and it keeps "the group committed in iteration k" == "tile k".
    pipe.producer_commit();
    if (tile < my_tiles) lane.copy_issued(tile, produce_slot);
    produce_slot = produce_slot + 1 == STAGES ? 0 : produce_slot + 1;
  };

  // Prologue: fill STAGES-1 slots (tiles 0 .. STAGES-2).
  for (int s = 0; s < STAGES - 1; ++s) produce(static_cast<std::size_t>(s));
  // Steady state, and for the last STAGES-1 iterations the drain (produce() commits empty
  // groups). Iteration k issues tile k+STAGES-1 into the slot consumed in iteration k-1, then
  // waits for tile k: STAGES tiles (k .. k+STAGES-1) are in flight at the wait.
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    produce(tile + STAGES - 1);
    lane.wait_begun(tile, consume_slot);
    // EXERCISE-BEGIN: wait until this thread's part of tile k has landed in slot consume_slot, while the tiles issued after it stay in flight (count the groups this thread has committed so far)
    // k + STAGES groups committed so far; all but the newest STAGES-1 are complete, so group k
    // is: THIS thread's part of tile k has landed in slot consume_slot.
    cuda::pipeline_consumer_wait_prior<STAGES - 1>(pipe);
    // EXERCISE-STUB: // (no wait yet)
    // EXERCISE-END
    tut::perturb(tut::Perturb::kAfterWait, static_cast<std::uint32_t>(tile));  // a late waiter
    __syncthreads();  // the reversal reads other threads' parts: wait for everyone's wait
    lane.wait_done(tile, consume_slot);
    lane.compute_begun(tile, consume_slot);
    const std::size_t base = (blockIdx.x + tile * gridDim.x) * TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (tid < count) d_out[base + tid] = work_vec(s_ring[consume_slot * TILE_VECS + count - 1 - tid], rounds);
    lane.compute_ended(tile, consume_slot);
    pipe.consumer_release();
    // The next iteration's produce() refills consume_slot: every thread's reads first. Without
    // this barrier the refill races with slow warps' reads (a write-after-read hazard). (A
    // block-scope pipeline would instead make the refill wait in producer_acquire() for every
    // thread's consumer_release(); chapter 07 uses one.)
    tut::perturb(tut::Perturb::kBeforeRelease, static_cast<std::uint32_t>(tile));  // a late reader
    __syncthreads();
    lane.slot_released(tile, consume_slot);
    consume_slot = consume_slot + 1 == STAGES ? 0 : consume_slot + 1;
  }
  // Leave nothing in flight when the block exits: only empty groups remain here (the drain
  // committed them), so this costs nothing.
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  lane.close();
}

// ---------------------------------------------------------------------------------------------
// Launchers: a persistent grid of blocks_per_sm x SMs blocks (0 = as many as fit), through
// tut::launch_persistent (which honours the harness's lap-check grid cap).
// ---------------------------------------------------------------------------------------------

inline void launch_stream_v0(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  tut::launch_persistent(stream_v0_cg_double_kernel, THREADS, 0, sm_count, blocks_per_sm, s, d_in,
                         d_out, n_vecs);
}

// v1 and v2 take a Tracing argument: tut::TraceOff in the timed runs, the recorder's
// tut::TraceOn under --timeline (whose trace buffer is sized from traced_grid() first).
template <class Tracing = tut::TraceOff>
void launch_stream_v1(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int sm_count,
                      int blocks_per_sm, cudaStream_t s, Tracing trace = {}) {
  tut::launch_persistent(stream_v1_sync_kernel<Tracing>, THREADS, 0, sm_count, blocks_per_sm, s,
                         d_in, d_out, n_vecs, trace);
}

template <int STAGES, class Tracing>
void launch_stream_v2(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int rounds,
                      int sm_count, int blocks_per_sm, cudaStream_t s, Tracing trace) {
  // STAGES x 4 KiB of dynamic shared memory; above 48 KiB persistent_grid opts the kernel in
  tut::launch_persistent(stream_v2_pipeline_kernel<STAGES, Tracing>, THREADS,
                         std::size_t{STAGES} * TILE_BYTES, sm_count, blocks_per_sm, s, d_in, d_out,
                         n_vecs, rounds, trace);
}
template <int STAGES>  // untraced: the registry's and the sweeps' function pointer
void launch_stream_v2(const uint4* d_in, uint4* d_out, std::size_t n_vecs, int rounds,
                      int sm_count, int blocks_per_sm, cudaStream_t s) {
  launch_stream_v2<STAGES>(d_in, d_out, n_vecs, rounds, sm_count, blocks_per_sm, s, tut::TraceOff{});
}

// The grid of a traced v1 (STAGES = 0) or v2, for sizing the trace buffer before the launch.
template <int STAGES>
unsigned traced_grid(int sm_count, int blocks_per_sm) {
  if constexpr (STAGES == 0)
    return tut::persistent_grid(stream_v1_sync_kernel<tut::TraceOn>, THREADS, sm_count,
                                blocks_per_sm);
  else
    return tut::persistent_grid(stream_v2_pipeline_kernel<STAGES, tut::TraceOn>, THREADS,
                                sm_count, blocks_per_sm, std::size_t{STAGES} * TILE_BYTES);
}

}  // namespace ch04
