/// @file kernels.cuh
/// @brief Chapter 07's lesson kernels: producer/consumer roles, a block-scope cuda::pipeline
///        between warps (v1) against the unified pipeline (v0), then their launchers.
///
///
/// In chapters 04-06 every thread copies AND computes: each thread waits for its own copies
/// (thread-scope pipeline, commit groups) and a __syncthreads makes everybody's copies visible.
/// Here the block is split: producer warps only copy, consumer warps only compute, and they
/// hand tiles over through a block-scope cuda::pipeline
/// (cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES>, cuda::make_pipeline(block,
/// &state, role)). Each stage has two mbarriers in shared memory: "produced" (the producers
/// arrived and their copies landed) and "consumed" (the consumers finished reading the slot).
/// No __syncthreads in the loop: producers run up to STAGES tiles ahead of the consumers.
///
/// Workload: a 1D box stencil of radius 7, out[i] = sum of in[i-7 .. i+7] (floats; elements
/// outside the array count as 0), in 1024-output tiles. A slot holds [8 | 1024 | 8] floats:
/// the tile plus an 8-float (two 16-byte vectors) halo on each side, 260 vectors of 16 B.
/// The inputs are exact 2^-10 multiples, so the 15-term sums are exact and the check is exact.
/// Minimum compute capability: 8.0 (cp.async, mbarrier).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cuda/pipeline>

#include <cstdint>

#include "common/launch.cuh"
#include "common/ring.cuh"
#include "common/timeline.cuh"

namespace ch07 {

// ---------------------------------------------------------------------------------------------
// Constants and tile geometry
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;                     // threads per block, every kernel
constexpr int RADIUS = 7;                        // 15-point box stencil
constexpr int HALO = 8;                          // halo floats per side (2 vectors)
constexpr int TILE = 1024;                       // outputs per tile
constexpr int SLOT_FLOATS = HALO + TILE + HALO;  // [8 | 1024 | 8] = 1040 floats
constexpr int SLOT_VECS = SLOT_FLOATS / 4;       // 260 16-byte vectors
static_assert(HALO >= RADIUS && HALO % 4 == 0, "the halo is whole 16-byte vectors");

__host__ __device__ inline int tile_count(std::size_t n, std::size_t base) {
  const std::size_t left = n - base;
  return static_cast<int>(left < TILE ? left : TILE);
}
// Tiles in an array of n floats. A block walks its share with tut::tiles_of_this_block and
// tut::block_tile (common/ring.cuh): tiles blockIdx.x, blockIdx.x + gridDim.x, ...; the first
// element of the block's tile `tile` is tut::block_tile(tile) * TILE.
__host__ __device__ inline std::size_t num_tiles(std::size_t n) { return (n + TILE - 1) / TILE; }

// Vector v of a slot holds floats [base - HALO + 4v, +4). n is a multiple of 4 and base of
// 1024, so a vector is wholly inside the array or wholly outside (then it is zeros).
// `rank`/`stride` split the 260 vectors among the copying threads.
template <class Pipe>
__device__ inline void produce_slot(float* s_slot, const float* __restrict__ d_in, std::size_t n,
                                    std::size_t base, int rank, int stride, Pipe& pipe) {
  // EXERCISE-BEGIN: stage the slot's SLOT_VECS 16-byte vectors (the tile and its halo), vector v by the copying thread of rank v mod stride: an asynchronous 16-byte copy into the pipeline where the vector lies inside the array, zeros where it lies outside
  for (int v = rank; v < SLOT_VECS; v += stride) {
    const long long first = static_cast<long long>(base) - HALO + 4 * v;
    float* dst = s_slot + 4 * v;
    if (first >= 0 && first < static_cast<long long>(n))
      cuda::memcpy_async(dst, d_in + first, cuda::aligned_size_t<16>(16), pipe);  // LDGSTS
    else  // STS of zeros: made visible to the consumers by the same hand-over as the copies
      *reinterpret_cast<float4*>(dst) = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  // EXERCISE-STUB: (void)s_slot, (void)d_in, (void)n, (void)base, (void)rank, (void)stride, (void)pipe;
  // EXERCISE-END
}

// The consumer's work: outputs j = rank, rank + stride, ... of the tile, 15 LDS + 14 FADD each.
__device__ inline void stencil_slot(const float* s_slot, float* __restrict__ d_out,
                                    std::size_t base, int count, int rank, int stride) {
  for (int j = rank; j < count; j += stride) {
    float sum = 0.0f;
#pragma unroll
    for (int d = -RADIUS; d <= RADIUS; ++d) sum += s_slot[HALO + j + d];
    d_out[base + j] = sum;
  }
}

// ---------------------------------------------------------------------------------------------
// v0: unified pipeline: every thread copies and computes
// ---------------------------------------------------------------------------------------------
// cuda::pipeline<thread_scope_thread>: each thread's commit groups track only its own copies,
// so after the wait a __syncthreads makes all 256 threads' copies (and zero stores) visible.
// With a ring of STAGES slots this loop waits FIRST: the prologue issues STAGES-1 tiles, and
// each step waits for tile, passes the barrier (the slot of tile-1 is now free), refills
// that slot with tile+STAGES-1, and computes tile. So when a thread waits for tile,
// STAGES-1 tiles (tile .. tile+STAGES-2) are in flight - 3 for the 4-slot ring - and one slot sits
// idle until the barrier. v1's producers refill a slot as soon as the consumers release it,
// so at a consumer's wait up to STAGES tiles (tile .. tile+STAGES-1) can be in flight.
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    stencil_v0_unified_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                              std::size_t n) {
  __shared__ alignas(16) float s_slots[STAGES][SLOT_FLOATS];  // STAGES x 4160 B ring
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  const int tid = threadIdx.x;
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n));
  auto issue = [&](std::size_t tile) {
    pipe.producer_acquire();
    // EXERCISE-BEGIN: copy this block's tile `tile` (if it exists) into its slot; in this unified kernel every thread of the block copies
    if (tile < my_tiles) produce_slot(s_slots[tile % STAGES], d_in, n, tut::block_tile(tile) * TILE, tid, THREADS, pipe);
    // EXERCISE-STUB: (void)tid;
    // EXERCISE-END
    pipe.producer_commit();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);  // prologue: STAGES-1 tiles in flight
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    cuda::pipeline_consumer_wait_prior<STAGES - 2>(pipe);  // my part of tile landed
    __syncthreads();  // everyone's part landed; slot (tile-1) % STAGES is no longer read
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE;
    stencil_slot(s_slots[tile % STAGES], d_out, base, tile_count(n, base), tid, THREADS);
    pipe.consumer_release();
  }
}

// ---------------------------------------------------------------------------------------------
// v1: producer warps and consumer warps, block-scope cuda::pipeline
// ---------------------------------------------------------------------------------------------
// Threads [0, PRODUCERS) copy, the rest compute. The hand-over per stage:
//   producer_acquire()  waits on the stage's "consumed" mbarrier: all consumers released the
//                       slot's previous tile (the first STAGES acquires pass at once);
//   memcpy_async(...)   cp.async 16 B (LDGSTS), plus plain zero stores outside the array;
//   producer_commit()   cp.async.mbarrier.arrive on "produced" (it fires when this thread's
//                       copies land) + an ordinary arrive: the phase completes when all
//                       PRODUCERS threads arrived AND all their copies landed;
//   consumer_wait()     waits on "produced": the whole tile is in the slot, for every consumer;
//   consumer_release()  arrives on "consumed".
// The mbarriers are block-scope objects in shared memory, so an arrival by one thread is seen
// by another: that is what a thread-scope pipeline cannot do (the negative v9, broken.cuh).
// These waits have no time bound (producer_acquire has no timed form), so a mistake that
// starves one (a consumer that never releases, a wrong role count) hangs the kernel; the
// harness's watchdog then names the variant and exits 1.
// Timeline (tut::TraceOn only; tut::TraceOff compiles to the same code as no calls): lane 0 is
// producer thread 0, lane 1 + w is consumer warp w (its lane 0 records).
template <int STAGES, int PRODUCERS, class Tracing = tut::TraceOff>
__global__ void __launch_bounds__(THREADS)
    stencil_v1_split_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                            std::size_t n, Tracing trace = {}) {
  static_assert(PRODUCERS % 32 == 0 && PRODUCERS > 0 && PRODUCERS < THREADS,
                "whole warps on each side");
  constexpr int CONSUMERS = THREADS - PRODUCERS;
  __shared__ alignas(16) float s_slots[STAGES][SLOT_FLOATS];
  // LESSON: the shared state has a default constructor, which nvcc reports (#20054) for a
  // __shared__ variable; make_pipeline initialises every barrier in it, so it is harmless.
#pragma nv_diagnostic push
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> s_state;
#pragma nv_diagnostic pop
  const auto block = cooperative_groups::this_thread_block();
  const int tid = threadIdx.x;
  const bool is_producer = tid < PRODUCERS;
  // Collective over the block: counts the producers, initialises 2 x STAGES mbarriers
  // (produced: PRODUCERS arrivals, consumed: CONSUMERS arrivals) and syncs the block.
  cuda::pipeline<cuda::thread_scope_block> pipe = cuda::make_pipeline(
      block, &s_state, is_producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer);
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n));
  auto lane = trace.lane(is_producer ? 0 : 1 + (tid - PRODUCERS) / 32,
                         is_producer ? tid == 0 : (tid - PRODUCERS) % 32 == 0);
  if (is_producer) {
    for (std::size_t tile = 0; tile < my_tiles; ++tile) {
      const int slot = static_cast<int>(tile % STAGES);
      lane.wait_begun(tile, slot);
      pipe.producer_acquire();  // slot tile % STAGES is free
      lane.wait_done(tile, slot);
      // EXERCISE-BEGIN: copy tile into the slot just acquired, the 260 vectors shared among the producer threads only
      produce_slot(s_slots[tile % STAGES], d_in, n, tut::block_tile(tile) * TILE, tid, PRODUCERS, pipe);
      // EXERCISE-STUB: (void)PRODUCERS;
      // EXERCISE-END
      pipe.producer_commit();  // "produced" completes when these copies land
      lane.copy_issued(tile, slot);
    }
  } else {
    for (std::size_t tile = 0; tile < my_tiles; ++tile) {
      const int slot = static_cast<int>(tile % STAGES);
      lane.wait_begun(tile, slot);
      pipe.consumer_wait();  // slot tile % STAGES holds tile, all of it
      lane.wait_done(tile, slot);
      lane.compute_begun(tile, slot);
      // EXERCISE-BEGIN: compute tile's outputs from the slot; only the consumer threads work here, so number them from 0 and let them cover all outputs between them
      const std::size_t base = tut::block_tile(tile) * TILE;
      stencil_slot(s_slots[tile % STAGES], d_out, base, tile_count(n, base),
                   tid - PRODUCERS, CONSUMERS);
      // EXERCISE-STUB: (void)CONSUMERS;
      // EXERCISE-END
      lane.compute_ended(tile, slot);
      pipe.consumer_release();  // the producers may refill it
      lane.slot_released(tile, slot);
    }
  }
  lane.close();
}

// ---------------------------------------------------------------------------------------------
// Launchers: a persistent grid of blocks_per_sm x SMs blocks (0 = as many as fit). Every
// kernel walks its tiles grid-stride, so it is correct for any grid the launcher picks.
// ---------------------------------------------------------------------------------------------
using Launch = void (*)(const float*, float*, std::size_t, int, int, cudaStream_t);

template <int STAGES>
void launch_stencil_v0(const float* d_in, float* d_out, std::size_t n, int sms, int bps,
                       cudaStream_t s) {
  tut::launch_persistent(stencil_v0_unified_kernel<STAGES>, THREADS, 0, sms, bps, s, d_in, d_out,
                         n);
}
template <int STAGES, int PRODUCERS>
void launch_stencil_v1(const float* d_in, float* d_out, std::size_t n, int sms, int bps,
                       cudaStream_t s) {
  tut::launch_persistent(stencil_v1_split_kernel<STAGES, PRODUCERS>, THREADS, 0, sms, bps, s, d_in,
                         d_out, n, tut::TraceOff{});  // untraced
}
// The traced instance (--timeline): the same kernel with a tut::TraceOn argument. The trace
// buffer needs the grid before the launch, so the grid is asked for first.
template <int STAGES, int PRODUCERS>
unsigned grid_stencil_v1_traced(int sms, int bps) {
  return tut::persistent_grid(stencil_v1_split_kernel<STAGES, PRODUCERS, tut::TraceOn>, THREADS,
                              sms, bps);
}
template <int STAGES, int PRODUCERS>
void launch_stencil_v1_traced(const float* d_in, float* d_out, std::size_t n, unsigned grid,
                              tut::TraceOn trace, cudaStream_t s) {
  stencil_v1_split_kernel<STAGES, PRODUCERS, tut::TraceOn><<<grid, THREADS, 0, s>>>(d_in, d_out,
                                                                                   n, trace);
}

}  // namespace ch07
