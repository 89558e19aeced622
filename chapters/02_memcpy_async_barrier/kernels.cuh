// Chapter 02: cuda::memcpy_async completed by a cuda::barrier in shared memory
//
// What it adds over chapter 01: the halo stencil's loads stop travelling through registers.
// Each thread asks for its elements with cuda::memcpy_async(dst, src, size, barrier); the
// load/store unit copies global -> shared on its own (cp.async, SASS LDGSTS), and the block-scope
// barrier (an mbarrier object in shared memory) completes its phase only when every thread has
// arrived AND every copy bound to it has landed. One arrive_and_wait replaces "wait for my
// loads" + __syncthreads().
//
// The same call can compile to three different things, and the lesson shows all three:
//   aligned_size_t<4> on floats      cp.async.ca 4 B + cp.async.mbarrier.arrive  (LDGSTS)
//   void* and a plain size_t         ordinary byte loads and stores, completed synchronously
//   aligned_size_t<16>, sm_90        cp.async.bulk (the TMA unit) + mbarrier.expect_tx
//
// Two workloads, as in chapter 01: the radius-3 stencil (v0 is chapter 01's kernel) and the
// 4 KiB tile-reversal stream (v3 is chapter 01's synchronous kernel at low occupancy). v5 keeps
// v4's per-thread shape but completes through a thread-scope cuda::pipeline: LDGSTS.128 on
// every architecture, which is the fix for v4's tiny bulk copies on sm_90.
//
// Minimum compute capability: 8.0 (cp.async and mbarrier arrived with Ampere); the sm_90 build
// of v4 uses the Hopper bulk-copy path automatically.
// Run:    build/bin/ch02_memcpy_async_barrier [--blocks-per-sm=N] [--size=1G] [--list]
// Output: the harness table (median/min ms, GB/s, % of the memcpy ceiling, vs v0, check).
#pragma once

#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "chapters/01_sync_shared_loads/workload.cuh"  // from the root: the exercise copy finds it too

namespace ch02 {

// ---------------------------------------------------------------------------------------------
// Constants (the same shapes as chapter 01, so the rows compare like with like)
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;                  // threads per block, every kernel here
constexpr int RADIUS = 3;                     // stencil: out[i] = sum of in[i-3 .. i+3]
constexpr int STENCIL_TILE_ELEMS = THREADS;   // one output float per thread per tile
constexpr int STREAM_TILE_VECS = THREADS;     // one float4 (16 B) per thread per tile

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

// Elements in the tile that starts at `base`: STREAM_TILE_VECS, or fewer for the last tile.
__host__ __device__ inline int tile_count(std::size_t n_vecs, std::size_t base) {
  const std::size_t left = n_vecs - base;
  return static_cast<int>(left < STREAM_TILE_VECS ? left : STREAM_TILE_VECS);
}

// LESSON: `__shared__ block_barrier bar;` works, but cuda::barrier has a non-trivial default
// constructor, and a __shared__ variable is never constructed: nvcc warns #20054
// (static_var_with_dynamic_init) and ignores the constructor. The clean way is to say what
// really happens: reserve raw, suitably aligned shared bytes and let init() (mbarrier.init)
// give them meaning. Each kernel declares
//   __shared__ alignas(block_barrier) unsigned char s_bar_bytes[sizeof(block_barrier)];
// and calls this once.
__device__ inline block_barrier& init_block_barrier(unsigned char* s_bar_bytes) {
  block_barrier* bar = reinterpret_cast<block_barrier*>(s_bar_bytes);
  // One thread initialises: expected arrivals per phase = every thread of the block.
  if (threadIdx.x == 0) {
    init(bar, blockDim.x);
    // On sm_90 memcpy_async may hand a copy to the TMA unit (v4), which works in the *async
    // proxy* and signals the barrier from there. mbarrier.init is an ordinary (generic-proxy)
    // write; this fence makes the initialised barrier visible to the async proxy before any
    // bulk copy can refer to it. sm_80 has no bulk copies, so no fence.
    NV_IF_TARGET(NV_PROVIDES_SM_90, (cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);));
  }
  // LESSON: this __syncthreads() cannot be replaced by the barrier itself. Until mbarrier.init
  // has executed, the barrier word is garbage, and a thread that arrived on it (or issued a
  // copy bound to it) before thread 0 got there would corrupt the phase count. The plain block
  // barrier (BAR.SYNC) orders the init before any other thread touches the object.
  __syncthreads();
  return *bar;
}

// ---------------------------------------------------------------------------------------------
// v0: chapter 01's stencil, synchronous halo loads (LDG -> register -> STS, then BAR.SYNC)
// ---------------------------------------------------------------------------------------------
__global__ void stencil_v0_sync_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                       std::size_t n) {
  __shared__ float s_tile[RADIUS + STENCIL_TILE_ELEMS + RADIUS];  // [halo | 256 | halo] floats
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n + STENCIL_TILE_ELEMS - 1) / STENCIL_TILE_ELEMS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STENCIL_TILE_ELEMS;
    const std::size_t i = base + t;
    s_tile[RADIUS + t] = i < n ? d_in[i] : 0.0f;
    if (t < RADIUS) {
      const std::size_t left = base + t;  // element base - RADIUS + t, without underflow
      s_tile[t] = left >= RADIUS && left - RADIUS < n ? d_in[left - RADIUS] : 0.0f;
    }
    if (t >= STENCIL_TILE_ELEMS - RADIUS) {
      const std::size_t right = i + RADIUS;
      s_tile[RADIUS + t + RADIUS] = right < n ? d_in[right] : 0.0f;
    }
    __syncthreads();
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
// v1: the same stencil, every load a cuda::memcpy_async(..., aligned_size_t<4>, barrier)
// ---------------------------------------------------------------------------------------------
// Per copy, on sm_80 and sm_90 alike (a 4-byte copy never takes the bulk path):
//   cp.async.ca.shared.global [s], [g], 4, 4;   LDGSTS.E: the LSU fetches g and writes s itself
//   cp.async.mbarrier.arrive.shared.b64 [bar];  ARRIVES on the barrier: now +1 pending arrival
//                                               for this phase, retired by the hardware once
//                                               all of this thread's earlier cp.async landed
// and then, once per tile, bar.arrive_and_wait():
//   mbarrier.arrive (this thread's own arrival) + a try_wait loop on the returned phase token.
// The phase completes when the pending count reaches zero: blockDim.x thread arrivals, plus
// one deferred arrival per memcpy_async call. So the wait covers both "everyone got here" and
// "every copy bound to the barrier has landed" - no separate wait for the data is needed.
__global__ void stencil_v1_async_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                        std::size_t n) {
  __shared__ alignas(16) float s_tile[RADIUS + STENCIL_TILE_ELEMS + RADIUS];  // [3|256|3] floats
  __shared__ alignas(block_barrier) unsigned char s_bar_bytes[sizeof(block_barrier)];
  block_barrier& bar = init_block_barrier(s_bar_bytes);
  const int t = threadIdx.x;
  const auto four_bytes = cuda::aligned_size_t<4>(sizeof(float));  // src, dst, size: x4 bytes
  const std::size_t num_tiles = (n + STENCIL_TILE_ELEMS - 1) / STENCIL_TILE_ELEMS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STENCIL_TILE_ELEMS;
    const std::size_t i = base + t;
    // LESSON: the three copies no longer block the thread. It issues the centre, then (if it
    // is a halo thread) the halo, back to back; all are in flight together. Out-of-range
    // elements are plain shared stores of zero: they are ordered for the other threads by the
    // same arrive_and_wait (mbarrier.arrive releases, the wait acquires, at block scope).
    // EXERCISE-BEGIN: memcpy_async d_in[i] -> s_tile[RADIUS + t], four_bytes, on bar; 0 if i >= n
    if (i < n) cuda::memcpy_async(&s_tile[RADIUS + t], &d_in[i], four_bytes, bar);
    else s_tile[RADIUS + t] = 0.0f;
    // EXERCISE-END
    if (t < RADIUS) {
      const std::size_t left = base + t;  // element base - RADIUS + t
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
    // Invariant after the wait: the whole [3|256|3] tile is in shared memory, visible to all.
    bar.arrive_and_wait();
    if (i < n) {
      float sum = 0.0f;
#pragma unroll
      for (int k = -RADIUS; k <= RADIUS; ++k) sum += s_tile[RADIUS + t + k];
      d_out[i] = sum;
    }
    // The next tile's copies overwrite s_tile: every thread must be done reading this one.
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v2: the same call through void* with a plain size: the silent fallback
// ---------------------------------------------------------------------------------------------
// A generic "copy these bytes" helper would pass void* and sizeof(float). memcpy_async then
// knows nothing about alignment (void* -> char, align 1), cannot prove the 4-byte alignment
// cp.async needs, and falls back to a loop of 1-byte ld.global + st.shared executed by the
// calling thread, right here, synchronously (async_contract_fulfillment::none). The result is
// still correct - the barrier wait still orders it - but the data goes through registers again,
// one byte at a time. Nothing warns you: read the PTX.
__global__ void stencil_v2_bytes_kernel(const float* __restrict__ d_in, float* __restrict__ d_out,
                                        std::size_t n) {
  __shared__ alignas(16) float s_tile[RADIUS + STENCIL_TILE_ELEMS + RADIUS];
  __shared__ alignas(block_barrier) unsigned char s_bar_bytes[sizeof(block_barrier)];
  block_barrier& bar = init_block_barrier(s_bar_bytes);
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n + STENCIL_TILE_ELEMS - 1) / STENCIL_TILE_ELEMS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STENCIL_TILE_ELEMS;
    const std::size_t i = base + t;
    if (i < n)
      cuda::memcpy_async(static_cast<void*>(&s_tile[RADIUS + t]), static_cast<const void*>(&d_in[i]),
                         sizeof(float), bar);
    else
      s_tile[RADIUS + t] = 0.0f;
    if (t < RADIUS) {
      const std::size_t left = base + t;
      if (left >= RADIUS && left - RADIUS < n)
        cuda::memcpy_async(static_cast<void*>(&s_tile[t]),
                           static_cast<const void*>(&d_in[left - RADIUS]), sizeof(float), bar);
      else
        s_tile[t] = 0.0f;
    }
    if (t >= STENCIL_TILE_ELEMS - RADIUS) {
      const std::size_t right = i + RADIUS;
      if (right < n)
        cuda::memcpy_async(static_cast<void*>(&s_tile[RADIUS + t + RADIUS]),
                           static_cast<const void*>(&d_in[right]), sizeof(float), bar);
      else
        s_tile[RADIUS + t + RADIUS] = 0.0f;
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
// v3: chapter 01's synchronous tile-reversal stream (the streaming reference for v4)
// ---------------------------------------------------------------------------------------------
__global__ void stream_v3_sync_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                      std::size_t n_vecs) {
  __shared__ float4 s_tile[STREAM_TILE_VECS];  // [256] float4 = 4 KiB
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + STREAM_TILE_VECS - 1) / STREAM_TILE_VECS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STREAM_TILE_VECS;
    const int count = tile_count(n_vecs, base);
    if (t < count) s_tile[t] = d_in[base + t];
    __syncthreads();
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// v4: the stream with one 16-byte memcpy_async per thread, aligned_size_t<16>, barrier
// ---------------------------------------------------------------------------------------------
// LESSON: this is where the architecture changes the instruction. With a 16-byte guarantee and
// a block-scope barrier in shared memory, CCCL picks:
//   sm_80: cp.async.cg.shared.global [s], [g], 16, 16  (LDGSTS.E.BYPASS.128: skips L1)
//          + cp.async.mbarrier.arrive                   (deferred arrival, as in v1)
//   sm_90: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [s], [g], 16, [bar]
//          (UBLKCP: a 16-byte request to the TMA unit) + mbarrier.expect_tx 16 by the same
//          thread: the phase now also waits for 16 more bytes of "transaction count".
// Both are correct; they differ in who moves the bytes (the SM's LSU vs the TMA unit) and in
// how completion is counted (arrivals vs bytes). Here it is one stage: issue, wait, use. With
// one block per SM that is still one 4 KiB tile in flight per SM - chapter 04 fixes that.
__global__ void stream_v4_async_kernel(const float4* __restrict__ d_in, float4* __restrict__ d_out,
                                       std::size_t n_vecs) {
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
    bar.arrive_and_wait();  // tile landed (all threads' copies) and everyone arrived
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    __syncthreads();        // tile consumed before the next copies overwrite it
  }
}

// ---------------------------------------------------------------------------------------------
// v5: v4's per-thread 16-byte copy, completed by a thread-scope cuda::pipeline instead
// ---------------------------------------------------------------------------------------------
// LESSON: v4 on sm_90 turns every thread's 16 bytes into its own TMA bulk request (UBLKCP) plus
// an expect_tx on the shared barrier: 256 tiny requests and 256 transaction updates per 4 KiB
// tile, all funnelled through one unit and one mbarrier. The copy is the same; the completion
// object decides the instruction. With a thread-scope pipeline CCCL has no mbarrier to count
// bytes on, so it emits the cp.async of sm_80 on sm_90 too:
//   memcpy_async(.., aligned_size_t<16>, pipe)  cp.async.cg.shared.global [s], [g], 16, 16
//                                               (LDGSTS.E.BYPASS.128: the LSU, skipping L1)
//   producer_commit()                           cp.async.commit_group (LDGDEPBAR)
//   pipeline_consumer_wait_prior<0>(pipe)       cp.async.wait_group 0 (DEPBAR.LE SB0, 0x0)
// The wait covers only THIS thread's copies, so a __syncthreads() follows it before anyone reads
// another thread's float4 (chapter 04 builds its multi-stage ring on exactly this pattern).
__global__ void stream_v5_pipeline_kernel(const float4* __restrict__ d_in,
                                          float4* __restrict__ d_out, std::size_t n_vecs) {
  __shared__ alignas(16) float4 s_tile[STREAM_TILE_VECS];  // [256] float4 = 4 KiB
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();  // registers only
  const int t = threadIdx.x;
  const std::size_t num_tiles = (n_vecs + STREAM_TILE_VECS - 1) / STREAM_TILE_VECS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STREAM_TILE_VECS;
    const int count = tile_count(n_vecs, base);
    pipe.producer_acquire();
    if (t < count)
      cuda::memcpy_async(&s_tile[t], &d_in[base + t], cuda::aligned_size_t<16>(sizeof(float4)), pipe);
    pipe.producer_commit();  // every thread commits, copy or not: one group per tile
    cuda::pipeline_consumer_wait_prior<0>(pipe);  // this thread's float4 has landed
    __syncthreads();         // everyone's has: the whole tile is in s_tile
    if (t < count) d_out[base + t] = s_tile[count - 1 - t];
    pipe.consumer_release();
    __syncthreads();         // tile consumed before the next copies overwrite it
  }
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): reads the tile before the barrier phase completes
// ---------------------------------------------------------------------------------------------
// The bug: the stencil sum is computed between issuing the copies and arrive_and_wait(). The
// copies are asynchronous, so the shared memory being read still holds whatever was there.
// To make the failure deterministic rather than "usually wrong", the tile is first filled with
// a NaN poison (and a __syncthreads() orders that fill before the copies are issued). A copy
// cannot come back from L2 or DRAM within the few cycles between its issue and the thread's own
// shared-memory read, so the sum includes poison and the check reports NaN. The wait still
// happens afterwards, so no copy is left in flight when the tile is reused or the block exits.
__global__ void stencil_v9_early_read_kernel(const float* __restrict__ d_in,
                                             float* __restrict__ d_out, std::size_t n) {
  __shared__ alignas(16) float s_tile[RADIUS + STENCIL_TILE_ELEMS + RADIUS];
  __shared__ alignas(block_barrier) unsigned char s_bar_bytes[sizeof(block_barrier)];
  block_barrier& bar = init_block_barrier(s_bar_bytes);
  const int t = threadIdx.x;
  const float poison = __int_as_float(0x7fffffff);  // a quiet NaN
  const auto four_bytes = cuda::aligned_size_t<4>(sizeof(float));
  const std::size_t num_tiles = (n + STENCIL_TILE_ELEMS - 1) / STENCIL_TILE_ELEMS;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t base = tile * STENCIL_TILE_ELEMS;
    const std::size_t i = base + t;
    s_tile[RADIUS + t] = poison;
    if (t < 2 * RADIUS) s_tile[t < RADIUS ? t : STENCIL_TILE_ELEMS + t] = poison;  // both halos
    __syncthreads();
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
    float sum = 0.0f;  // BUG: read before bar.arrive_and_wait()
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) sum += s_tile[RADIUS + t + k];
    bar.arrive_and_wait();
    if (i < n) d_out[i] = sum;
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers. `blocks_per_sm` = 0 means full occupancy. Persistent grids, as in chapter 01.
// ---------------------------------------------------------------------------------------------
inline void launch_stencil_v0(const float* d_in, float* d_out, std::size_t n, int sm_count,
                              cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(stencil_v0_sync_kernel, THREADS, sm_count);
  stencil_v0_sync_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n);
}

inline void launch_stencil_v1(const float* d_in, float* d_out, std::size_t n, int sm_count,
                              cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(stencil_v1_async_kernel, THREADS, sm_count);
  stencil_v1_async_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n);
}

inline void launch_stencil_v2(const float* d_in, float* d_out, std::size_t n, int sm_count,
                              cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(stencil_v2_bytes_kernel, THREADS, sm_count);
  stencil_v2_bytes_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n);
}

inline void launch_stream_v3(const float4* d_in, float4* d_out, std::size_t n_vecs, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(stream_v3_sync_kernel, THREADS, sm_count, blocks_per_sm);
  stream_v3_sync_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_vecs);
}

inline void launch_stream_v4(const float4* d_in, float4* d_out, std::size_t n_vecs, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(stream_v4_async_kernel, THREADS, sm_count, blocks_per_sm);
  stream_v4_async_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_vecs);
}

inline void launch_stream_v5(const float4* d_in, float4* d_out, std::size_t n_vecs, int sm_count,
                             int blocks_per_sm, cudaStream_t s) {
  const unsigned grid =
      tut::persistent_grid(stream_v5_pipeline_kernel, THREADS, sm_count, blocks_per_sm);
  stream_v5_pipeline_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_vecs);
}

inline void launch_stencil_v9(const float* d_in, float* d_out, std::size_t n, int sm_count,
                              cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(stencil_v9_early_read_kernel, THREADS, sm_count);
  stencil_v9_early_read_kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n);
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
  auto add = [&v](const char* key, const char* name, const char* description, int reference,
                  std::function<void(Problem&, cudaStream_t)> launch) {
    v.push_back(V{key, name, description, std::move(launch)});
    v.back().reference = reference;
  };
  add("v0_stencil", "v0 stencil sync (ch01)",
      "chapter 01: halos loaded LDG->STS by the conditional pattern, BAR.SYNC", kStencil,
      [](Problem& p, cudaStream_t s) {
        launch_stencil_v0(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
      });
  add("v1_stencil_async", "v1 stencil memcpy_async<4>",
      "per-thread cuda::memcpy_async, aligned_size_t<4>, one cuda::barrier: LDGSTS", kStencil,
      [](Problem& p, cudaStream_t s) {
        launch_stencil_v1(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
      });
  add("v2_stencil_bytes", "v2 stencil memcpy_async void*",
      "the same call through void* + size_t: silent fallback to byte loads/stores", kStencil,
      [](Problem& p, cudaStream_t s) {
        launch_stencil_v2(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
      });
  add("v3_stream_sync_low", "v3 stream sync (ch01), low occ",
      "chapter 01's 4 KiB tile reversal at --blocks-per-sm (default 1): the stream reference",
      kReverseTiles, [](Problem& p, cudaStream_t s) {
        launch_stream_v3(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(), s);
      });
  add("v4_stream_async_low", "v4 stream memcpy_async<16>, low occ",
      "one 16 B memcpy_async per thread + barrier (sm_90: cp.async.bulk), --blocks-per-sm",
      kReverseTiles, [](Problem& p, cudaStream_t s) {
        launch_stream_v4(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(), s);
      });
  add("v4_stream_async_full", "v4 stream memcpy_async<16>, full occ",
      "the same kernel with as many blocks per SM as fit", kReverseTiles,
      [](Problem& p, cudaStream_t s) {
        launch_stream_v4(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
      });
  add("v5_stream_pipe_low", "v5 stream memcpy_async<16> pipeline, low occ",
      "v4's per-thread copy completed by a thread-scope cuda::pipeline: LDGSTS.128 on sm_90 too",
      kReverseTiles, [](Problem& p, cudaStream_t s) {
        launch_stream_v5(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(), s);
      });
  add("v5_stream_pipe_full", "v5 stream memcpy_async<16> pipeline, full occ",
      "the same kernel with as many blocks per SM as fit", kReverseTiles,
      [](Problem& p, cudaStream_t s) {
        launch_stream_v5(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
      });
  add("v9_early_read", "v9 BROKEN: reads before the wait",
      "negative: sums the tile between issuing the copies and arrive_and_wait; must FAIL",
      kStencil, [](Problem& p, cudaStream_t s) {
        launch_stencil_v9(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
      });
  v.back().negative = true;
  return v;
}

}  // namespace ch02
