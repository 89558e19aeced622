// Chapter 03: collective block copies (cooperative_groups::memcpy_async, cuda::memcpy_async(block))
//
// What it adds over chapter 02: instead of every thread naming its own 16 bytes, the whole
// block makes ONE call that names the whole tile, and the library splits it over the threads
// (or, on sm_90, hands it to the TMA unit). Two interfaces:
//   cooperative_groups::memcpy_async(block, dst, src, bytes)   commits a cp.async group;
//       cooperative_groups::wait(block) / wait_prior<N>(block)   = cp.async.wait_group N + block.sync()
//   cuda::memcpy_async(block, dst, src, cuda::aligned_size_t<16>(bytes), barrier)
//       completes through a cuda::barrier, as in chapter 02.
// The rule for both: EVERY thread of the group makes the call, with identical arguments. The
// call is a loop over the group's ranks (or a rank-0 bulk copy); a thread that skips it leaves
// its share of the tile uncopied - the negative variant shows that.
//
// Workloads: the 4 KiB tile-reversal stream (v0 = chapter 02's per-thread kernel, the same work
// per tile) and the radius-3 stencil with the halos copied by one collective call.
//
// Minimum compute capability: 8.0. On sm_90, v2's collective 16-byte copy becomes a single
// cp.async.bulk issued by thread 0 (the instruction mix changes completely; see the README).
// Run:    build/bin/ch03_collective_copies [--blocks-per-sm=N] [--size=1G] [--list]
// Output: the harness table (median/min ms, GB/s, % of the memcpy ceiling, vs v0, check).
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "chapters/01_sync_shared_loads/workload.cuh"  // from the root: the exercise copy finds it too

namespace ch03 {

namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------------------------
// Constants (chapter 01's shapes)
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;                  // threads per block, every kernel here
constexpr int RADIUS = 3;                     // stencil: out[i] = sum of in[i-3 .. i+3]
constexpr int STENCIL_TILE_ELEMS = THREADS;   // one output float per thread per tile
constexpr int STREAM_TILE_VECS = THREADS;     // one float4 (16 B) per thread per tile

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__host__ __device__ inline int tile_count(std::size_t n_vecs, std::size_t base) {
  const std::size_t left = n_vecs - base;
  return static_cast<int>(left < STREAM_TILE_VECS ? left : STREAM_TILE_VECS);
}

// Chapter 02's barrier set-up: raw shared bytes + init() by one thread + __syncthreads().
__device__ inline block_barrier& init_block_barrier(unsigned char* s_bar_bytes) {
  block_barrier* bar = reinterpret_cast<block_barrier*>(s_bar_bytes);
  if (threadIdx.x == 0) {
    init(bar, blockDim.x);
    // sm_90: v0 and v2 become TMA bulk copies, which complete on the barrier from the async
    // proxy; make the (generic-proxy) init visible to it first. See chapter 02.
    NV_IF_TARGET(NV_PROVIDES_SM_90, (cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);));
  }
  __syncthreads();  // the init must be visible before anyone arrives or binds a copy
  return *bar;
}

// ---------------------------------------------------------------------------------------------
// v0: chapter 02's per-thread copy - each thread names its own 16 bytes
// ---------------------------------------------------------------------------------------------
__global__ void stream_v0_perthread_kernel(const float4* __restrict__ d_in,
                                           float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[STREAM_TILE_VECS];  // [256] float4 = 4 KiB
  __shared__ alignas(block_barrier) unsigned char s_bar_bytes[sizeof(block_barrier)];
  block_barrier& bar = init_block_barrier(s_bar_bytes);
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + STREAM_TILE_VECS - 1) / STREAM_TILE_VECS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STREAM_TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (t < count)
      cuda::memcpy_async(&s_tile[t], &d_in[base + t], cuda::aligned_size_t<16>(sizeof(float4)), bar);
    bar.arrive_and_wait();
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v1: cooperative_groups::memcpy_async(block, ...) + cooperative_groups::wait(block)
// ---------------------------------------------------------------------------------------------
// The call below stands for this loop, run by every thread (rank = threadIdx.x here):
//   for (int j = rank; j < count; j += block.size())
//     cp.async.ca.shared.global [&s_tile[j]], [&src[j]], 16;     // LDGSTS.E.128 (L1-allocating)
//   cp.async.commit_group;                                       // LDGDEPBAR
// and cg::wait(block) is cp.async.wait_group 0 (DEPBAR.LE SB0, 0x0) followed by block.sync()
// (BAR.SYNC): first "my copies landed", then "everyone's copies landed".
// The element type decides the chunk: float4 gives 16-byte copies; a char* would give bytes.
__global__ void stream_v1_cg_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                    std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[STREAM_TILE_VECS];
  const cg::thread_block block = cg::this_thread_block();
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + STREAM_TILE_VECS - 1) / STREAM_TILE_VECS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STREAM_TILE_VECS;
    const int count = tile_count(n_vecs, base);
    // Identical arguments in every thread: the block's tile, not the thread's element.
    // EXERCISE-BEGIN: one cg::memcpy_async, same args in every thread: count float4 -> s_tile
    cg::memcpy_async(block, s_tile, d_in + base, sizeof(float4) * count);
    // EXERCISE-END
    cg::wait(block);  // invariant: s_tile[0 .. count) holds tile `tile`, visible to all
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    block.sync();     // consumed before the next call overwrites it
  }
}

// ---------------------------------------------------------------------------------------------
// v2: cuda::memcpy_async(block, ..., aligned_size_t<16>, barrier)
// ---------------------------------------------------------------------------------------------
// LESSON: same collective contract, different machinery per architecture.
//   sm_80: the loop of v1 with cp.async.cg (L1-bypassing, 16 B), then one deferred barrier
//          arrival per thread (cp.async.mbarrier.arrive).
//   sm_90: thread rank 0 alone issues ONE cp.async.bulk for the whole tile (4 KiB, UBLKCP: the
//          TMA unit moves it) and one mbarrier.expect_tx of the byte count; the other 255 threads
//          issue no copy instruction at all. The barrier phase completes when all 256 threads
//          have arrived and 4096 bytes of transactions have been counted.
__global__ void stream_v2_cuda_block_kernel(const float4* __restrict__ d_in,
                                            float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[STREAM_TILE_VECS];
  __shared__ alignas(block_barrier) unsigned char s_bar_bytes[sizeof(block_barrier)];
  block_barrier& bar = init_block_barrier(s_bar_bytes);
  const cg::thread_block block = cg::this_thread_block();
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + STREAM_TILE_VECS - 1) / STREAM_TILE_VECS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STREAM_TILE_VECS;
    const int count = tile_count(n_vecs, base);
    cuda::memcpy_async(block, s_tile, d_in + base, cuda::aligned_size_t<16>(sizeof(float4) * count),
                       bar);
    bar.arrive_and_wait();  // 256 arrivals + (sm_90) count*16 transaction bytes
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v3: two buffers with cooperative_groups::wait_prior<1>
// ---------------------------------------------------------------------------------------------
// Each cg::memcpy_async commits its own cp.async group, so "groups" are tiles. While the block
// reverses tile k out of one buffer, tile k+1 is already on its way into the other.
//   prologue:     copy tile 0 -> buffer 0
//   steady state: copy tile k+1 -> buffer (k+1)&1; wait_prior<1> (all groups but the newest
//                 done: tile k landed); consume buffer k&1; block.sync()
//   epilogue:     the last tile has no successor: wait(block) instead (no group was committed,
//                 so wait_prior<1> would leave tile k itself outstanding).
__global__ void stream_v3_cg_double_kernel(const float4* __restrict__ d_in,
                                           float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[2][STREAM_TILE_VECS];  // [2][256] float4 = 8 KiB
  const cg::thread_block block = cg::this_thread_block();
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + STREAM_TILE_VECS - 1) / STREAM_TILE_VECS;
  std::size_t tile = blockIdx.x;
  if (tile < num_tiles) {  // prologue
    const std::size_t base = tile * STREAM_TILE_VECS;
    cg::memcpy_async(block, s_tile[0], d_in + base, sizeof(float4) * tile_count(n_vecs, base));
  }
  for (int k = 0; tile < num_tiles; tile += gridDim.x, ++k) {
    const std::size_t next = tile + gridDim.x;
    if (next < num_tiles) {
      const std::size_t next_base = next * STREAM_TILE_VECS;
      cg::memcpy_async(block, s_tile[(k + 1) & 1], d_in + next_base,
                       sizeof(float4) * tile_count(n_vecs, next_base));
      cg::wait_prior<1>(block);  // tile k landed; tile k+1 may still be in flight
    } else {
      cg::wait(block);           // epilogue: nothing newer was committed
    }
    const std::size_t base = tile * STREAM_TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (t < count) d_out[base + t] = s_tile[k & 1][count - 1 - t];
    block.sync();  // buffer k&1 is refilled by the copy issued in iteration k+1
  }
}

// ---------------------------------------------------------------------------------------------
// v4: chapter 02's stencil, halos copied per thread (the conditional pattern)
// ---------------------------------------------------------------------------------------------
__global__ void stencil_v4_perthread_kernel(const float* __restrict__ d_in,
                                            float* __restrict__ d_out, std::size_t n) {
  __shared__ alignas(16) float s_tile[RADIUS + STENCIL_TILE_ELEMS + RADIUS];  // [3|256|3] floats
  __shared__ alignas(block_barrier) unsigned char s_bar_bytes[sizeof(block_barrier)];
  block_barrier& bar = init_block_barrier(s_bar_bytes);
  const int t = threadIdx.x;
  const auto four_bytes = cuda::aligned_size_t<4>(sizeof(float));
  const std::size_t num_tiles = (n + STENCIL_TILE_ELEMS - 1) / STENCIL_TILE_ELEMS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STENCIL_TILE_ELEMS;
    const std::size_t i = base + t;
    if (i < n) cuda::memcpy_async(&s_tile[RADIUS + t], &d_in[i], four_bytes, bar);
    else s_tile[RADIUS + t] = 0.0f;
    if (t < RADIUS) {
      const std::size_t left = base + t;
      if (left >= RADIUS && left - RADIUS < n)
        cuda::memcpy_async(&s_tile[t], &d_in[left - RADIUS], four_bytes, bar);
      else
        s_tile[t] = 0.0f;
    }
    if (t >= STENCIL_TILE_ELEMS - RADIUS) {
      const std::size_t right = i + RADIUS;
      if (right < n) cuda::memcpy_async(&s_tile[RADIUS + t + RADIUS], &d_in[right], four_bytes, bar);
      else s_tile[RADIUS + t + RADIUS] = 0.0f;
    }
    bar.arrive_and_wait();
    if (i < n) {
      float sum = 0.0f;
#pragma unroll
      for (int k = -RADIUS; k <= RADIUS; ++k) sum += s_tile[RADIUS + t + k];
      d_out[i] = sum;
    }
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v5: the stencil tile (centre AND halos) as ONE collective cuda::memcpy_async(block, ...)
// ---------------------------------------------------------------------------------------------
// The tile's input span is elements [base-3, base+259), clipped to the array: [lo, hi). It is
// contiguous in global memory and in s_tile, so one call covers it; no thread needs to know
// whether it is a "halo thread". With aligned_size_t<4> it is the v1 loop with 4-byte cp.async
// (on both architectures: the bulk path needs 16-byte alignment, and base-3 is not 16-aligned).
// Slots outside the array are zeroed with plain stores; they never overlap the copied span.
__global__ void stencil_v5_block_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                        std::size_t n) {
  constexpr int SPAN = RADIUS + STENCIL_TILE_ELEMS + RADIUS;  // 262 floats
  __shared__ alignas(16) float s_tile[SPAN];
  __shared__ alignas(block_barrier) unsigned char s_bar_bytes[sizeof(block_barrier)];
  block_barrier& bar = init_block_barrier(s_bar_bytes);
  const cg::thread_block block = cg::this_thread_block();
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n + STENCIL_TILE_ELEMS - 1) / STENCIL_TILE_ELEMS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STENCIL_TILE_ELEMS;
    const std::size_t lo = base >= RADIUS ? base - RADIUS : 0;           // first element used
    const std::size_t end = base + STENCIL_TILE_ELEMS + RADIUS;          // one past, unclipped
    const std::size_t hi = end < n ? end : n;
    const int first_slot = static_cast<int>(lo + RADIUS - base);         // slot of element lo
    const int end_slot = first_slot + static_cast<int>(hi - lo);         // one past the last
    cuda::memcpy_async(block, &s_tile[first_slot], &d_in[lo],
                       cuda::aligned_size_t<4>(sizeof(float) * (hi - lo)), bar);
    for (int slot = t; slot < SPAN; slot += THREADS)  // zeros outside the array
      if (slot < first_slot || slot >= end_slot) s_tile[slot] = 0.0f;
    bar.arrive_and_wait();
    const std::size_t i = base + t;
    if (i < n) {
      float sum = 0.0f;
#pragma unroll
      for (int k = -RADIUS; k <= RADIUS; ++k) sum += s_tile[RADIUS + t + k];
      d_out[i] = sum;
    }
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): only warp 0 makes the collective call
// ---------------------------------------------------------------------------------------------
// The bug: "one warp is enough to start a copy" - but cg::memcpy_async(block, ...) is a loop
// over block ranks 0..255 stepping by block.size(); called by ranks 0..31 only, it copies
// float4 0..31 of each tile and nothing else. The tile is filled with a NaN poison first (and
// a block.sync() orders the fill before the copy), so the 224 uncopied float4 of every full tile
// are deterministically wrong - not whatever an earlier kernel left in shared memory.
// (The cuda::memcpy_async(block, ...) of v2 would hide this bug on sm_90, where rank 0 issues the
// whole bulk copy, and show it on sm_80: the rule holds even where the symptom does not.)
__global__ void stream_v9_one_warp_kernel(const float4* __restrict__ d_in,
                                          float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[STREAM_TILE_VECS];
  const cg::thread_block block = cg::this_thread_block();
  const int t = threadIdx.x;
  const float nan = __int_as_float(0x7fffffff);
  const std::size_t num_tiles = (n_vecs + STREAM_TILE_VECS - 1) / STREAM_TILE_VECS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STREAM_TILE_VECS;
    const int count = tile_count(n_vecs, base);
    s_tile[t] = make_float4(nan, nan, nan, nan);
    block.sync();
    if (t < 32) cg::memcpy_async(block, s_tile, d_in + base, sizeof(float4) * count);  // BUG
    cg::wait(block);
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    block.sync();
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers. `blocks_per_sm` = 0 means full occupancy. Persistent grids, as in chapter 01.
// ---------------------------------------------------------------------------------------------
using StreamKernel = void (*)(const float4*, float4*, std::size_t);
using StencilKernel = void (*)(const float*, float*, std::size_t);

inline void launch_stream(StreamKernel kernel, const float4* d_in, float4* d_out,
                          std::size_t n_vecs, int sm_count, int blocks_per_sm, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm);
  kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_vecs);
}
inline void launch_stream_v0(const float4* i, float4* o, std::size_t n, int sms, int bps,
                             cudaStream_t s) {
  launch_stream(stream_v0_perthread_kernel, i, o, n, sms, bps, s);
}
inline void launch_stream_v1(const float4* i, float4* o, std::size_t n, int sms, int bps,
                             cudaStream_t s) {
  launch_stream(stream_v1_cg_kernel, i, o, n, sms, bps, s);
}
inline void launch_stream_v2(const float4* i, float4* o, std::size_t n, int sms, int bps,
                             cudaStream_t s) {
  launch_stream(stream_v2_cuda_block_kernel, i, o, n, sms, bps, s);
}
inline void launch_stream_v3(const float4* i, float4* o, std::size_t n, int sms, int bps,
                             cudaStream_t s) {
  launch_stream(stream_v3_cg_double_kernel, i, o, n, sms, bps, s);
}
inline void launch_stream_v9(const float4* i, float4* o, std::size_t n, int sms, cudaStream_t s) {
  launch_stream(stream_v9_one_warp_kernel, i, o, n, sms, 0, s);
}
inline void launch_stencil_v4(const float* d_in, float* d_out, std::size_t n, int sm_count,
                              cudaStream_t s) {
  StencilKernel k = stencil_v4_perthread_kernel;
  const unsigned grid = tut::persistent_grid(k, THREADS, sm_count);
  k<<<grid, THREADS, 0, s>>>(d_in, d_out, n);
}
inline void launch_stencil_v5(const float* d_in, float* d_out, std::size_t n, int sm_count,
                              cudaStream_t s) {
  StencilKernel k = stencil_v5_block_kernel;
  const unsigned grid = tut::persistent_grid(k, THREADS, sm_count);
  k<<<grid, THREADS, 0, s>>>(d_in, d_out, n);
}

// ---------------------------------------------------------------------------------------------
// CPU references and the Problem: chapter 01's (chapters/01_sync_shared_loads/workload.cuh)
// ---------------------------------------------------------------------------------------------
using Problem = ch01::StencilStreamProblem<RADIUS, STREAM_TILE_VECS>;
using ch01::kReverseTiles;
using ch01::kStencil;

// ---------------------------------------------------------------------------------------------
// The variant registry
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  using V = tut::Variant<Problem>;
  std::vector<V> v;
  using StreamLaunch = void (*)(const float4*, float4*, std::size_t, int, int, cudaStream_t);
  // One stream kernel at --blocks-per-sm (the "_low" row) and at full occupancy.
  auto add_stream = [&v](const std::string& key, const std::string& name,
                         const std::string& description, StreamLaunch launch) {
    v.push_back(V{key + "_low", name + ", low occ", description + " (--blocks-per-sm)",
                  [launch](Problem& p, cudaStream_t s) {
                    launch(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(), s);
                  }});
    v.back().reference = kReverseTiles;
    v.push_back(V{key + "_full", name + ", full occ", description + " (full occupancy)",
                  [launch](Problem& p, cudaStream_t s) {
                    launch(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
                  }});
    v.back().reference = kReverseTiles;
  };
  add_stream("v0_perthread", "v0 per-thread memcpy_async (ch02)",
             "chapter 02: each thread copies its own 16 B, cuda::barrier", launch_stream_v0);
  add_stream("v1_cg", "v1 cg::memcpy_async + wait",
             "one collective cg::memcpy_async per tile, cg::wait(block)", launch_stream_v1);
  add_stream("v2_cuda_block", "v2 cuda::memcpy_async(block)",
             "one collective cuda::memcpy_async per tile, aligned_size_t<16>, barrier",
             launch_stream_v2);
  add_stream("v3_cg_double", "v3 cg 2 buffers + wait_prior<1>",
             "collective copies into two buffers, the next tile in flight during the use",
             launch_stream_v3);
  v.push_back(V{"v4_stencil_perthread", "v4 stencil per-thread (ch02)",
                "chapter 02's stencil: centre and halos copied by the conditional pattern",
                [](Problem& p, cudaStream_t s) {
                  launch_stencil_v4(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
                }});
  v.back().reference = kStencil;
  v.push_back(V{"v5_stencil_block", "v5 stencil one collective copy",
                "centre + halos as one cuda::memcpy_async(block, ..., aligned_size_t<4>)",
                [](Problem& p, cudaStream_t s) {
                  launch_stencil_v5(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
                }});
  v.back().reference = kStencil;
  v.push_back(V{"v9_one_warp", "v9 BROKEN: one warp calls",
                "negative: only warp 0 makes the collective call; must FAIL",
                [](Problem& p, cudaStream_t s) {
                  launch_stream_v9(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), s);
                }});
  v.back().reference = kReverseTiles;
  v.back().negative = true;
  return v;
}

}  // namespace ch03
