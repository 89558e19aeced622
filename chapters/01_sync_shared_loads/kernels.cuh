/// @file kernels.cuh
/// @brief Chapter 01's lesson kernels: synchronous global -> shared staging (LDG, STS,
///        BAR.SYNC) on the stencil and the stream, the no-staging yardstick, and v1's launcher.
///
/// The classic way to stage data in shared memory: each thread loads from global memory into a
/// register (LDG), stores the register into shared memory (STS), and the block waits at
/// __syncthreads() (BAR.SYNC) before anyone reads the tile (LDS). The load's whole latency
/// (hundreds of cycles from DRAM) is exposed unless many warps are resident to hide it.
///
/// Two workloads (common/workload_stencil_stream.cuh holds their references and the Problem):
///   stencil  a 1D box stencil of radius 3; each block stages its tile plus a halo on each side
///            with the conditional loading pattern (some threads also load a halo element);
///   stream   4 KiB tiles (256 threads x 16 B) written out in reverse 16-byte order, so every
///            byte crosses shared memory and crosses from one warp to another.
/// Reading order: v0 stencil, v1 stream, v2 the stream without shared memory (the yardstick),
/// then v1's launcher (v0 and v2 run through common/workload_stencil_stream_kernels.cuh). The
/// registry and the --timeline run are in main.cu; the negatives v8, v9 and v10 in broken.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/launch.cuh"
#include "common/perturb.cuh"
#include "common/timeline.cuh"
#include "common/workload_stencil_stream.cuh"
#include "common/workload_stencil_stream_kernels.cuh"

namespace ch01 {

// The workload's shapes and helpers (common/workload_stencil_stream.cuh and
// common/workload_stencil_stream_kernels.cuh): kRadius (3), kStencilTileElems (256 floats),
// kStreamTileVecs (256 float4), kThreads (256 per block, every kernel here),
// stream_tile_count() and stencil_sum().
using namespace tut::stencil_stream;

// ---------------------------------------------------------------------------------------------
// v0: 1D stencil, synchronous halo loads
// ---------------------------------------------------------------------------------------------
// A persistent grid: block b walks tiles b, b + gridDim.x, ... (correct for any grid size).
// For one tile of 256 outputs it needs 256 + 2*kRadius inputs: thread tid loads the centre
// element tid, threads 0..kRadius-1 also load the left halo and the last kRadius threads the right
// halo. Elements outside the array count as zero.
__global__ void stencil_v0_sync_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                       std::size_t n) {
  __shared__ float s_tile[kRadius + kStencilTileElems + kRadius];  // [halo | 256 | halo] floats
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n + kStencilTileElems - 1) / kStencilTileElems;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStencilTileElems;
    const std::size_t i = base + tid;
    // LESSON: each assignment is an LDG (global -> register) and then an STS (register ->
    // shared). The STS cannot issue until the LDG's data is back, and the halo loads sit in
    // separate branches, so a halo thread does not start its second load before its first
    // store: its loads are not in flight together.
    s_tile[kRadius + tid] = i < n ? d_in[i] : 0.0f;
    // EXERCISE-BEGIN: the halos: the first kRadius threads stage the kRadius elements left of the tile, the last kRadius threads the kRadius elements right of it (zero outside the array)
    if (tid < kRadius) {
      const std::size_t left = base + tid;  // element base - kRadius + tid, without underflow
      s_tile[tid] = left >= kRadius && left - kRadius < n ? d_in[left - kRadius] : 0.0f;
    }
    if (tid >= kStencilTileElems - kRadius) {
      const std::size_t right = i + kRadius;
      s_tile[kRadius + tid + kRadius] = right < n ? d_in[right] : 0.0f;
    }
    // EXERCISE-END
    // Read after write: thread tid reads elements that other warps stored. Wait for all.
    __syncthreads();  // the tile and both halos are in s_tile
    if (i < n) d_out[i] = stencil_sum(s_tile, tid);
    // Write after read: the next tile's stores overwrite s_tile. No thread may still be
    // reading this one.
    __syncthreads();  // every sum of this tile is done
  }
}

// ---------------------------------------------------------------------------------------------
// v1: tile-through-shared stream, synchronous loads
// ---------------------------------------------------------------------------------------------
// Tile k holds float4 [k*256, k*256 + count). Output float4 tid of the tile is input float4
// count-1-tid: thread tid reads what thread count-1-tid (another warp) stored.
// The whole sequence per tile, and why each step waits for the one before:
//   LDG.E.128   global -> register (the thread stalls at the STS until the data is back)
//   STS.128     register -> s_tile[tid]
//   BAR.SYNC    read after write: every warp's STS is done before anyone reads
//   LDS.128     s_tile[count-1-tid], stored by another warp
//   STG.E.128   register -> global
//   BAR.SYNC    write after read: every warp's LDS is done before the next tile's STS
// Perturbation points (common/perturb.cuh; no-ops unless the build sets TUTORIAL_PERTURB): a
// reader that comes late after the first barrier, and a late release before the second. The
// kernel must stay correct under both; the negative v10 (broken.cuh) is this kernel without
// its second barrier and fails under them.
// Timeline (--timeline; tut::TraceOn only, with TraceOff the calls compile to nothing): thread
// 0 records, for the block's tile k, when its load is issued, when the first barrier returns,
// the reversal as the compute phase and the second barrier's return as the slot's release.
template <class Tracing = tut::TraceOff>
__global__ void stream_v1_sync_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                      std::size_t n_vecs, Tracing trace = {}) {
  __shared__ float4 s_tile[kStreamTileVecs];  // [256] float4 = 4 KiB, reused by every tile
  auto lane = trace.lane(0, threadIdx.x == 0);
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  std::uint32_t k = 0;  // the block's tile number
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x, ++k) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    lane.copy_issued(k);
    // EXERCISE-BEGIN: stage this thread's float4 of the tile in shared memory, then make sure the whole tile is there before any thread reads another thread's float4
    if (tid < count) s_tile[tid] = d_in[base + tid];  // LDG.E.128 -> register -> STS.128
    __syncthreads();                                // read after write: the tile is complete
    // EXERCISE-END
    tut::perturb(tut::Perturb::kAfterWait, k);  // this warp reads late
    lane.wait_done(k);
    lane.compute_begun(k);
    if (tid < count) d_out[base + tid] = s_tile[count - 1 - tid];  // LDS.128 -> STG.E.128
    lane.compute_ended(k);
    tut::perturb(tut::Perturb::kBeforeRelease, k);  // this warp releases the tile late
    __syncthreads();  // write after read: consumed before refilled
    lane.slot_released(k);
  }
  lane.close();
}

// ---------------------------------------------------------------------------------------------
// v2: the same reversal with no shared memory (each thread loads its mirrored float4)
// ---------------------------------------------------------------------------------------------
// Not a staging kernel: the yardstick for what LDG -> STG alone achieves at the same
// occupancy, so that the cost of the shared-memory round trip and the barriers is visible.
__global__ void stream_v2_direct_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                        std::size_t n_vecs) {
  const int tid = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + kStreamTileVecs - 1) / kStreamTileVecs;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * kStreamTileVecs;
    const int count = stream_tile_count(n_vecs, base);
    if (tid < count) d_out[base + tid] = d_in[base + count - 1 - tid];
  }
}

// ---------------------------------------------------------------------------------------------
// v1's launcher: a persistent grid of blocks_per_sm x SMs blocks (0 = as many as fit, i.e. full
// occupancy), via tut::launch_persistent, which also honours the harness's lap-check grid cap.
// ---------------------------------------------------------------------------------------------
// The timed runs launch v1 untraced; --timeline passes a tut::TraceOn (and asks for the grid
// first, to size the trace buffer).
template <class Tracing = tut::TraceOff>
unsigned stream_v1_grid(int sm_count, int blocks_per_sm) {
  return tut::persistent_grid(stream_v1_sync_kernel<Tracing>, kThreads, sm_count, blocks_per_sm);
}
template <class Tracing = tut::TraceOff>
void launch_stream_v1(const float4* d_in, float4* d_out, std::size_t n_vecs, int sm_count,
                      int blocks_per_sm, cudaStream_t s, Tracing trace = {}) {
  tut::launch_persistent(stream_v1_sync_kernel<Tracing>, kThreads, 0, sm_count, blocks_per_sm, s,
                         d_in, d_out, n_vecs, trace);
}

}  // namespace ch01
