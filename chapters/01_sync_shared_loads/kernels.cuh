// Chapter 01: synchronous global -> shared loads (the baseline every later chapter improves on)
//
// What it teaches: the classic way to stage data in shared memory. Each thread loads from
// global memory into a register (LDG), stores the register into shared memory (STS), and the
// block waits at __syncthreads() (BAR.SYNC) before anyone reads the tile (LDS). The load's
// full latency (hundreds of cycles from DRAM) is exposed unless many warps are resident.
//
// Two workloads:
//   stencil  a 1D box stencil of radius 3. Each block stages its tile plus a left and right
//            halo, with the conditional loading pattern (some threads load halos).
//   stream   a tile-through-shared copy: 256 threads x 16 B = 4 KiB tiles, each tile written
//            out in reverse 16-byte order, so every byte really passes through shared memory.
//            Run at full occupancy and at --blocks-per-sm (default 1) to show where the
//            synchronous path falls behind.
//
// The CPU references and the Problem (buffers, fill, verify) are in workload.cuh: chapters 02
// and 03 run the same workloads and include it too.
//
// Minimum compute capability: 8.0 (the tutorial's floor; nothing here needs more).
// Run:    build/bin/ch01_sync_shared_loads [--blocks-per-sm=N] [--size=1G] [--list]
// Output: the harness table (median/min ms, GB/s, % of the memcpy ceiling, vs v0, check).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "chapters/01_sync_shared_loads/workload.cuh"  // from the root: the exercise copy finds it too

namespace ch01 {

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;                  // threads per block, every kernel here
constexpr int RADIUS = 3;                     // stencil: out[i] = sum of in[i-3 .. i+3]
constexpr int STENCIL_TILE_ELEMS = THREADS;   // one output float per thread per tile
constexpr int STREAM_TILE_VECS = THREADS;     // one float4 (16 B) per thread per tile
constexpr int STREAM_TILE_BYTES = STREAM_TILE_VECS * 16;  // 4 KiB

// Elements in the tile that starts at `base`: STREAM_TILE_VECS, or fewer for the last tile.
__host__ __device__ inline int tile_count(std::size_t n_vecs, std::size_t base) {
  const std::size_t left = n_vecs - base;
  return static_cast<int>(left < STREAM_TILE_VECS ? left : STREAM_TILE_VECS);
}

// ---------------------------------------------------------------------------------------------
// v0: 1D stencil, synchronous halo loads
// ---------------------------------------------------------------------------------------------
// Each block walks tiles of 256 outputs (grid-stride). For one tile it needs 256 + 2*RADIUS
// inputs: the centre, plus RADIUS on each side. Threads 0..RADIUS-1 also load the left halo
// and the last RADIUS threads the right halo: the conditional pattern. Elements outside the
// array count as zero.
__global__ void stencil_v0_sync_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                       std::size_t n) {
  __shared__ float s_tile[RADIUS + STENCIL_TILE_ELEMS + RADIUS];  // [halo | 256 | halo] floats
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n + STENCIL_TILE_ELEMS - 1) / STENCIL_TILE_ELEMS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STENCIL_TILE_ELEMS;
    const std::size_t i = base + t;
    // LESSON: each of these is LDG (global -> register) then STS (register -> shared). The
    // thread stalls on the LDG before it can issue the STS: the data makes a round trip
    // through the register file, and the compiler may not batch the three loads together
    // because they sit in different branches.
    s_tile[RADIUS + t] = i < n ? d_in[i] : 0.0f;
    // EXERCISE-BEGIN: load the left halo (threads 0..RADIUS-1) and the right halo (the last RADIUS threads); outside the array counts as 0
    if (t < RADIUS) {
      const std::size_t left = base + t;  // element base - RADIUS + t, without underflow
      s_tile[t] = left >= RADIUS && left - RADIUS < n ? d_in[left - RADIUS] : 0.0f;
    }
    if (t >= STENCIL_TILE_ELEMS - RADIUS) {
      const std::size_t right = i + RADIUS;
      s_tile[RADIUS + t + RADIUS] = right < n ? d_in[right] : 0.0f;
    }
    // EXERCISE-END
    // Every thread reads neighbours written by other threads (other warps): wait for all.
    __syncthreads();
    if (i < n) {
      float sum = 0.0f;
#pragma unroll
      for (int k = -RADIUS; k <= RADIUS; ++k) sum += s_tile[RADIUS + t + k];
      d_out[i] = sum;
    }
    // The next iteration overwrites s_tile: nobody may still be reading this tile.
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v1: tile-through-shared streaming copy, synchronous loads
// ---------------------------------------------------------------------------------------------
// Tile k holds float4 elements [k*256, k*256 + count). Output element t of the tile is input
// element count-1-t: a reversal, so thread t reads what another warp stored.
__global__ void stream_v1_sync_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                      std::size_t n_vecs) {
  __shared__ float4 s_tile[STREAM_TILE_VECS];  // [256] float4 = 4 KiB
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + STREAM_TILE_VECS - 1) / STREAM_TILE_VECS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STREAM_TILE_VECS;
    const int count = tile_count(n_vecs, base);
    // EXERCISE-BEGIN: stage this thread's float4 of the tile in s_tile, then make the whole tile visible to the block
    if (t < count) s_tile[t] = d_in[base + t];  // LDG.E.128 -> register -> STS.128
    __syncthreads();                            // tile complete before anyone reads it
    // EXERCISE-END
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    __syncthreads();                            // tile consumed before it is overwritten
  }
}

// ---------------------------------------------------------------------------------------------
// v2: the same reversal with no shared memory (each thread loads its mirrored element)
// ---------------------------------------------------------------------------------------------
// Not a staging kernel at all: it is here as the yardstick for what LDG -> STG alone achieves
// at the same occupancy, so the cost of the shared-memory round trip is visible.
__global__ void stream_v2_direct_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                        std::size_t n_vecs) {
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + STREAM_TILE_VECS - 1) / STREAM_TILE_VECS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STREAM_TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (t < count) d_out[base + t] = d_in[base + count - 1 - t];
  }
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): forgets the partial last tile
// ---------------------------------------------------------------------------------------------
// A classic tiling bug: the loop bound rounds the element count down to whole tiles. It is
// correct whenever the size is a multiple of 4 KiB, which is why the checks run awkward sizes.
__global__ void stream_v9_no_tail_kernel(const float4* __restrict__ d_in,
                                         float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ float4 s_tile[STREAM_TILE_VECS];
  const int t = threadIdx.x;
  const std::size_t num_tiles = n_vecs / STREAM_TILE_VECS;  // BUG: drops the remainder
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STREAM_TILE_VECS;
    s_tile[t] = d_in[base + t];
    __syncthreads();
    d_out[base + t] = s_tile[STREAM_TILE_VECS - 1 - t];
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers. `blocks_per_sm` = 0 means full occupancy (as many blocks as fit on an SM).
// The grid is persistent: blocks_per_sm x SMs blocks loop over all tiles, so occupancy is
// exactly what we ask for, whatever the size.
// ---------------------------------------------------------------------------------------------
inline void launch_stencil_v0(const float* d_in, float* d_out, std::size_t n, int sm_count,
                              cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(stencil_v0_sync_kernel, THREADS, sm_count);
  stencil_v0_sync_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n);
}

inline void launch_stream_v1(const float4* d_in, float4* d_out, std::size_t n_vecs, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(stream_v1_sync_kernel, THREADS, sm_count, blocks_per_sm);
  stream_v1_sync_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_vecs);
}

inline void launch_stream_v2(const float4* d_in, float4* d_out, std::size_t n_vecs, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(stream_v2_direct_kernel, THREADS, sm_count, blocks_per_sm);
  stream_v2_direct_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_vecs);
}

inline void launch_stream_v9(const float4* d_in, float4* d_out, std::size_t n_vecs, int sm_count,
                             cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(stream_v9_no_tail_kernel, THREADS, sm_count);
  stream_v9_no_tail_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_vecs);
}

// ---------------------------------------------------------------------------------------------
// CPU references and the Problem: workload.cuh, shared with chapters 02 and 03
// ---------------------------------------------------------------------------------------------
using Problem = StencilStreamProblem<RADIUS, STREAM_TILE_VECS>;

// ---------------------------------------------------------------------------------------------
// The variant registry: drives --list, the table, the tests and the docs.
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  using V = tut::Variant<Problem>;
  std::vector<V> v;
  v.push_back(V{"v0_stencil", "v0 stencil sync, full occ",
                "1D radius-3 stencil, halos loaded LDG->STS by the conditional pattern",
                [](Problem& p, cudaStream_t s) {
                  launch_stencil_v0(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
                }});
  v.back().reference = kStencil;
  v.push_back(V{"v1_stream_full", "v1 stream sync, full occ",
                "4 KiB tiles LDG->STS, BAR, LDS->STG; as many blocks per SM as fit",
                [](Problem& p, cudaStream_t s) {
                  launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
                }});
  v.back().reference = kReverseTiles;
  v.push_back(V{"v1_stream_low", "v1 stream sync, low occ",
                "the same kernel at --blocks-per-sm blocks per SM (default 1)",
                [](Problem& p, cudaStream_t s) {
                  launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(),
                                   p.low_blocks_per_sm(), s);
                }});
  v.back().reference = kReverseTiles;
  v.push_back(V{"v2_direct_full", "v2 direct LDG->STG, full occ",
                "no shared memory: the same reversal straight from global",
                [](Problem& p, cudaStream_t s) {
                  launch_stream_v2(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
                }});
  v.back().reference = kReverseTiles;
  v.push_back(V{"v2_direct_low", "v2 direct LDG->STG, low occ",
                "no shared memory, at --blocks-per-sm blocks per SM",
                [](Problem& p, cudaStream_t s) {
                  launch_stream_v2(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(),
                                   p.low_blocks_per_sm(), s);
                }});
  v.back().reference = kReverseTiles;
  v.push_back(V{"v9_no_tail", "v9 BROKEN: drops partial tile",
                "negative: rounds the tile count down; must FAIL at awkward sizes",
                [](Problem& p, cudaStream_t s) {
                  launch_stream_v9(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), s);
                }});
  v.back().reference = kReverseTiles;
  v.back().negative = true;
  return v;
}

}  // namespace ch01
