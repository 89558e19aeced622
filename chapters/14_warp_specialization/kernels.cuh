/// @file kernels.cuh
/// @brief Chapter 14: warp specialization - one producer warp feeds TMA copies into a ring of
///        shared memory slots, consumer warps compute on them, and two mbarriers per slot keep
///        them in step.
//
// Warp 0 is the producer: one of its lanes issues a 16 KiB cp.async.bulk (TMA, 1D) per tile
// into the next slot of the ring and never computes. Warps 1..4 are consumers: they wait for a
// slot to be full, read it into registers, hand the slot back, and compute on the registers.
// Per slot:
//   full[s]   count 1 + transaction bytes: the producer's arrive.expect_tx and the TMA's bytes
//   empty[s]  count CONSUMERS: every consumer thread arrives once it has read its share
//   v0         the same roles with sm_80 tools: a partitioned block-scope cuda::pipeline, the
//              producer warp's 32 lanes issuing cp.async (the baseline)
//   v1 sN      the warp-specialized TMA ring with N = 2..6 slots
//   v1 off16   the 4-slot ring placed 16 bytes past a 128-byte boundary (alignment test)
// The negative variants (copies of v1 with one line changed) are in broken.cuh; the host side
// (Problem, CPU reference, registry, timeline) in main.cu.
// Work per word: --intensity steps of the LCG x = x * 1664525 + 1013904223, on 32 independent
// words per consumer thread. n steps compose to one affine map, so the CPU reference is one
// multiply-add per word and the check is exact. nvcc composes pairs of steps the same way:
// two steps are one IMAD with the constants A^2 and A*C + C (asm_expect.txt pins it), so an
// intensity of n costs about n / 2 IMADs per word.
//
// Minimum compute capability: 9.0 (cp.async.bulk, mbarrier transaction counts); minimum
// toolkit CUDA 12.8 (PTX ISA 8.6: the .shared::cta destination of cp.async.bulk).
#pragma once

#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/launch.cuh"
#include "common/perturb.cuh"
#include "common/ring.cuh"
#include "common/timeline.cuh"

namespace ch14 {

constexpr int CONSUMER_WARPS = 4;
constexpr int CONSUMERS = CONSUMER_WARPS * 32;            // 128 consumer threads
constexpr int THREADS = 32 + CONSUMERS;                   // warp 0 produces, warps 1..4 consume
constexpr int TILE_BYTES = 16384;                         // one slot: 16 KiB
constexpr int TILE_VECS = TILE_BYTES / 16;                // 1024 x 16-byte vectors
constexpr int TILE_WORDS = TILE_BYTES / 4;                // 4096 x 32-bit words
constexpr int VECS_PER_CONSUMER = TILE_VECS / CONSUMERS;  // 8 uint4 = 32 words per thread
constexpr std::uint32_t LCG_A = 1664525u, LCG_C = 1013904223u;
static_assert(TILE_VECS % CONSUMERS == 0, "every consumer thread takes the same share");
// v1's dynamic shared memory: the ring plus room to move it to a 128-byte boundary (+ 16).
constexpr int RING_PAD_BYTES = 256;

/// Vectors (16 bytes) of tile `tile`: TILE_VECS, or fewer for the last one.
__host__ __device__ inline int tile_vecs(std::size_t n_vecs, std::size_t tile) {
  const std::size_t left = n_vecs - tile * TILE_VECS;
  return static_cast<int>(left < TILE_VECS ? left : TILE_VECS);
}

/// Read this consumer's share of a slot: vectors c, c+128, ... (a warp reads 512 contiguous
/// bytes per step: conflict-free LDS.128).
__device__ __forceinline__ void read_slot(const uint4* s_slot, uint4 (&r)[VECS_PER_CONSUMER],
                                          int count, int c) {
#pragma unroll
  for (int j = 0; j < VECS_PER_CONSUMER; ++j) {
    const int v = c + j * CONSUMERS;
    r[j] = v < count ? s_slot[v] : make_uint4(0, 0, 0, 0);
  }
}

/// `intensity` LCG steps on each of the thread's 32 words (32 independent chains: the IMAD
/// pipe, not the latency of one chain, is the limit), then store the 8 vectors.
__device__ __forceinline__ void compute_and_store(uint4 (&r)[VECS_PER_CONSUMER], uint4* d_out,
                                                  std::size_t tile, int count, int c,
                                                  int intensity) {
  for (int i = 0; i < intensity; ++i) {
#pragma unroll
    for (int j = 0; j < VECS_PER_CONSUMER; ++j) {
      r[j].x = r[j].x * LCG_A + LCG_C;
      r[j].y = r[j].y * LCG_A + LCG_C;
      r[j].z = r[j].z * LCG_A + LCG_C;
      r[j].w = r[j].w * LCG_A + LCG_C;
    }
  }
#pragma unroll
  for (int j = 0; j < VECS_PER_CONSUMER; ++j) {
    const int v = c + j * CONSUMERS;
    if (v < count) d_out[tile * TILE_VECS + v] = r[j];
  }
}

// ---------------------------------------------------------------------------------------------
// v0: Ampere-style producer/consumer with a partitioned block-scope cuda::pipeline
// ---------------------------------------------------------------------------------------------
// Each of the 32 producer lanes issues 32 cp.async of 16 bytes per tile (LDGSTS); producer_commit
// makes the stage's "produced" barrier track them, and consumer_release arrives on its
// "consumed" barrier. The pipeline keeps the slot index and both phase bits itself.
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    ws_v0_pipeline_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                          std::size_t n_vecs, int intensity) {
  extern __shared__ uint4 s_ring[];  // STAGES x [TILE_VECS] x 16 B
  // nvcc warns about any __shared__ object with a constructor (diagnostic 20054); the
  // pipeline's shared state is declared this way in the CUDA documentation.
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
#pragma nv_diag_default static_var_with_dynamic_init
  const bool is_producer = threadIdx.x < 32;
  // make_pipeline with a role initialises the per-stage barriers (it syncs the block).
  auto pipe = cuda::make_pipeline(cooperative_groups::this_thread_block(), &state,
                                  is_producer ? cuda::pipeline_role::producer
                                              : cuda::pipeline_role::consumer);
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles);
  for (std::size_t j = 0; j < my_tiles; ++j) {
    const std::size_t tile = tut::block_tile(j);
    uint4* s_slot = s_ring + (j % STAGES) * TILE_VECS;
    const int count = tile_vecs(n_vecs, tile);
    if (is_producer) {
      pipe.producer_acquire();  // waits until the consumers released this slot's last tile
      for (int v = threadIdx.x; v < count; v += 32)
        cuda::memcpy_async(s_slot + v, d_in + tile * TILE_VECS + v, cuda::aligned_size_t<16>(16),
                           pipe);
      pipe.producer_commit();
    } else {
      const int c = threadIdx.x - 32;
      uint4 r[VECS_PER_CONSUMER];
      pipe.consumer_wait();  // the slot holds tile `tile`
      read_slot(s_slot, r, count, c);
      pipe.consumer_release();  // the reads are in registers: the slot may be refilled
      compute_and_store(r, d_out, tile, count, c, intensity);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// v1: the warp-specialized TMA ring with STAGES slots
// ---------------------------------------------------------------------------------------------
// Phase invariants, for the block's j-th tile in slot j % STAGES, lap j / STAGES (the
// parity of the lap is tut::RingPosition::phase):
//   full[slot]  completes phase `lap` when tile j has landed: consumers wait on lap & 1.
//   empty[slot] completes phase `lap` when all CONSUMERS threads have read tile j out of the
//               slot. Before writing lap L >= 1 into the slot the producer waits for phase
//               L - 1, parity (L - 1) & 1 == phase ^ 1. Lap 0 needs no wait: every slot
//               starts free.
// One parity bit is enough because neither side can get two phases ahead of the other: the
// producer cannot refill a slot the consumers have not released, and the consumers cannot
// release a tile that has not landed.
// Ring placement: the dynamic shared memory starts after the static barriers, at an offset
// that depends on STAGES, so the ring is moved to the next 128-byte boundary, plus
// RING_OFFSET bytes (16 in the variant that measures what a misaligned ring costs).
// Timeline (tut::TraceOn only; TraceOff compiles to nothing): lane 0 is the producer lane,
// lane w the consumer warp w (its first lane records).
template <int STAGES, int RING_OFFSET = 0, class Tracing = tut::TraceOff>
__global__ void __launch_bounds__(THREADS)
    ws_v1_tma_kernel(const uint4* __restrict__ d_in, uint4* __restrict__ d_out,
                     std::size_t n_vecs, int intensity, unsigned* d_error, Tracing trace = {}) {
  namespace ptx = cuda::ptx;
  static_assert(RING_OFFSET % 16 == 0, "cp.async.bulk needs a 16-byte aligned destination");
  extern __shared__ __align__(16) unsigned char s_raw[];  // STAGES x 16 KiB + RING_PAD_BYTES
  __shared__ std::uint64_t full[STAGES], empty[STAGES];
  // Offset added to s_raw itself, so the compiler still knows the ring is shared (LDS).
  const unsigned misalign = static_cast<unsigned>(__cvta_generic_to_shared(s_raw)) & 127u;
  uint4* s_ring = reinterpret_cast<uint4*>(s_raw + ((128u - misalign) & 127u) + RING_OFFSET);
  const std::size_t num_tiles = (n_vecs + TILE_VECS - 1) / TILE_VECS;
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles);

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);           // the producer's arrive.expect_tx
      ptx::mbarrier_init(&empty[s], CONSUMERS);  // one arrive per consumer thread
    }
    // The barriers are used only inside this block (no cluster): the async-proxy fence makes
    // the initialised barriers visible to the TMA, which completes transactions on full[s].
    ptx::fence_proxy_async(ptx::space_shared);  // init -> TMA
  }
  __syncthreads();  // the last block-wide barrier: from here on the roles meet only at mbarriers
  auto lane = trace.lane(threadIdx.x / 32, threadIdx.x % 32 == 0);

  if (threadIdx.x < 32) {
    // ---- producer: lane 0 issues every copy; the other 31 lanes have nothing to do ----
    if (threadIdx.x != 0) return;
    tut::RingPosition<STAGES> pos;
    for (std::size_t j = 0; j < my_tiles; ++j, pos.advance()) {
      const std::size_t tile = tut::block_tile(j);
      // From lap 1 on, wait until the consumers have released the slot's previous tile.
      lane.wait_begun(j, pos.slot);
      const auto empty_site = tut::WaitSite::producer_warp(0).on(tut::Barrier::kEmpty, pos.slot).at_tile(j);
      if (j >= STAGES && !tut::wait_or_report(&empty[pos.slot], pos.phase ^ 1u, d_error, empty_site))
        return;
      lane.wait_done(j, pos.slot);
      const std::uint32_t bytes = static_cast<std::uint32_t>(tile_vecs(n_vecs, tile)) * 16u;
      tut::perturb(tut::Perturb::kBeforeTmaIssue, static_cast<std::uint32_t>(j));
      // EXERCISE-BEGIN: owe full[slot] this tile's bytes (the one arrival its phase needs), and hand the whole tile to the TMA so that its bytes complete on full[slot]
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                     &full[pos.slot], bytes);
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s_ring + pos.slot * TILE_VECS,
                         d_in + tile * TILE_VECS, bytes, &full[pos.slot]);
      // EXERCISE-STUB: (void)bytes;
      // EXERCISE-END
      lane.copy_issued(j, pos.slot);
    }
    lane.close();
    return;
  }

  // ---- consumers: warps 1..CONSUMER_WARPS ----
  const int c = threadIdx.x - 32;
  tut::RingPosition<STAGES> pos;
  for (std::size_t j = 0; j < my_tiles; ++j, pos.advance()) {
    const std::size_t tile = tut::block_tile(j);
    const int count = tile_vecs(n_vecs, tile);
    const uint4* s_slot = s_ring + pos.slot * TILE_VECS;
    uint4 r[VECS_PER_CONSUMER];
    // A thread that gives up leaves without arriving on empty[slot], so the producer's wait
    // gives up too: a bug ends in a failed check, never a hang.
    lane.wait_begun(j, pos.slot);
    const auto full_site = tut::WaitSite::consumer_warp(threadIdx.x / 32)
                               .on(tut::Barrier::kFull, pos.slot)
                               .at_tile(j)
                               .expecting(static_cast<unsigned>(count) * 16u);
    if (!tut::wait_or_report(&full[pos.slot], pos.phase, d_error, full_site)) return;
    lane.wait_done(j, pos.slot);
    lane.compute_begun(j, pos.slot);  // the work on tile j: read the slot, release, compute
    // try_wait acquired the phase: the TMA's bytes of tile j are visible.
    read_slot(s_slot, r, count, c);
    // EXERCISE-BEGIN: hand the slot back - the next write into it comes from the TMA (the async proxy), while these reads were generic-proxy loads
    // Release the slot as soon as the data is in registers. Each thread vouches only for its
    // own reads; the 128th arrive completes the phase that the producer waits for. The next
    // write into the slot comes from the TMA - the async proxy - and the arrive's release
    // orders these reads only for the generic proxy. The LDS results are not used before
    // the arrive, so without the fence they may still be outstanding when the next copy
    // lands. fence.proxy.async orders them before the release for the async proxy too.
    ptx::fence_proxy_async(ptx::space_shared);  // my slot reads, before the release
    tut::perturb(tut::Perturb::kBeforeRelease, static_cast<std::uint32_t>(j));
    ptx::mbarrier_arrive(&empty[pos.slot]);
    // EXERCISE-END
    lane.slot_released(j, pos.slot);
    compute_and_store(r, d_out, tile, count, c, intensity);
    lane.compute_ended(j, pos.slot);
  }
  lane.close();
}

// ---------------------------------------------------------------------------------------------
// Launchers: a persistent grid of blocks_per_sm x sm_count blocks (capped at what fits, and
// during the harness's lap check at the grid cap). The kernels are correct for any grid.
// ---------------------------------------------------------------------------------------------
/// What the launchers hand to the kernels.
struct WsArgs {
  const uint4* in;
  uint4* out;
  std::size_t n_vecs;
  int intensity;
  unsigned* error;  // the bounded waits' error word (v0's pipeline waits are not bounded)
};

template <int STAGES>
void launch_ws_v0(const WsArgs& a, int sm_count, int blocks_per_sm, cudaStream_t s) {
  tut::launch_persistent(ws_v0_pipeline_kernel<STAGES>, THREADS, STAGES * TILE_BYTES, sm_count,
                         blocks_per_sm, s, a.in, a.out, a.n_vecs, a.intensity);
}

// The timed runs launch the untraced instance; --timeline passes a tut::TraceOn (and asks for
// the grid first, to size the trace buffer).
template <int STAGES, int RING_OFFSET = 0, class Tracing = tut::TraceOff>
unsigned ws_v1_grid(int sm_count, int blocks_per_sm) {
  constexpr int smem = STAGES * TILE_BYTES + RING_PAD_BYTES;
  return tut::persistent_grid(ws_v1_tma_kernel<STAGES, RING_OFFSET, Tracing>, THREADS, sm_count,
                              blocks_per_sm, smem);
}
template <int STAGES, int RING_OFFSET = 0, class Tracing = tut::TraceOff>
void launch_ws_v1(const WsArgs& a, int sm_count, int blocks_per_sm, cudaStream_t s,
                  Tracing trace = {}) {
  tut::launch_persistent(ws_v1_tma_kernel<STAGES, RING_OFFSET, Tracing>, THREADS,
                         STAGES * TILE_BYTES + RING_PAD_BYTES, sm_count, blocks_per_sm, s, a.in,
                         a.out, a.n_vecs, a.intensity, a.error, trace);
}

}  // namespace ch14
