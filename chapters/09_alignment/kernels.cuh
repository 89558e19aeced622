/// @file kernels.cuh
/// @brief Chapter 09's lesson kernels: which copy instruction cuda::memcpy_async really emits
///        for each alignment promise (v0-v7, v10), the slice protocol they share, then the
///        launchers with the run-time alignment check (v8 picks the widest legal copy).
///
/// cuda::memcpy_async picks its copy unit at COMPILE time from the alignment it is promised:
/// the larger of alignof(T) of the pointer type and the N of a cuda::aligned_size_t<N> size.
/// It never looks at the run-time addresses for that. With a thread-scope pipeline:
///   promise >= 16  cp.async.cg.shared.global ..., 16, 16   (LDGSTS.E.BYPASS.128, L1 bypassed)
///   promise 8      cp.async.ca.shared.global ..., 8, 8     (LDGSTS.E.64, through L1)
///   promise 4      cp.async.ca.shared.global ..., 4, 4     (LDGSTS.E)
///   promise 2      a synchronous loop of 2-byte loads and stores, done before the call returns
///   promise 1      a synchronous loop of 1-byte loads and stores
/// With a cuda::barrier in shared memory instead of a pipeline, a promise >= 16 on sm_90 takes
/// cp.async.bulk (one thread copies the whole range; v10). What CCCL does test at run time is
/// the address SPACE (__isGlobal(src) && __isShared(dst)); here the compiler can see both and
/// folds the test away.
///
/// Workload: copy `size` bytes from d_in + src_off to d_out through shared memory. Each warp
/// stages 512-byte slices of 4 KiB tiles into a 4-slot per-thread pipeline at byte offset
/// dst_off of each slot, then writes 16 B per lane to the (always aligned) output.
/// Minimum compute capability: 8.0 (cp.async); v10 takes its bulk path on 9.0.
#pragma once

#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "common/launch.cuh"
#include "common/ring.cuh"

namespace ch09 {
namespace cg = cooperative_groups;

constexpr int THREADS = 256;
constexpr int WARP = 32;
constexpr int TILE_BYTES = 4096;                            // per block per stage
constexpr int SLICE_BYTES = TILE_BYTES / (THREADS / WARP);  // 512 B per warp
constexpr int MAX_OFFSET = 128;                             // largest src/dst offset
constexpr int SLOT_BYTES = TILE_BYTES + MAX_OFFSET;         // 4224 = 33 x 128
constexpr int STAGES = 4;
static_assert(SLICE_BYTES == WARP * 16, "one 16-byte chunk per lane per slice");
static_assert(SLOT_BYTES % 128 == 0, "every slot starts 128-byte aligned");

// A 16-byte record of bytes has alignment 1; with __align__(16) (CUDA's spelling of
// alignas(16)) the same record has alignment 16, and memcpy_async on it promises 16.
struct Bytes16 {
  unsigned char b[16];
};
struct __align__(16) Chunk16 {
  unsigned char b[16];
};
static_assert(alignof(Bytes16) == 1 && sizeof(Bytes16) == 16, "Bytes16: 16 B, alignment 1");
static_assert(alignof(Chunk16) == 16 && sizeof(Chunk16) == 16, "Chunk16: 16 B, alignment 16");

using Pipe = cuda::pipeline<cuda::thread_scope_thread>;
using Warp = cg::thread_block_tile<WARP>;

// ---------------------------------------------------------------------------------------------
// The copy calls. Each differs only in the alignment it promises (the table above).
// ---------------------------------------------------------------------------------------------
template <std::size_t N>
struct IssueAligned {  // cuda::aligned_size_t<N> on byte pointers
  __device__ void operator()(const Warp& warp, unsigned char* s, const unsigned char* g, int bytes,
                             Pipe& pipe) const {
    // EXERCISE-BEGIN: stage the warp's slice (bytes from g to s) with one warp-wide memcpy_async into this lane's pipeline, promising N bytes of alignment through the size argument
    cuda::memcpy_async(warp, s, g, cuda::aligned_size_t<N>(static_cast<std::size_t>(bytes)), pipe);
    // EXERCISE-STUB: (void)warp, (void)s, (void)g, (void)bytes, (void)pipe;
    // EXERCISE-END
  }
};
template <class T>
struct IssueTyped {  // plain size_t: the promise comes from alignof(T) alone
  __device__ void operator()(const Warp& warp, unsigned char* s, const unsigned char* g, int bytes,
                             Pipe& pipe) const {
    // EXERCISE-BEGIN: the same warp-wide copy of the slice, with a plain size_t size: here the promise must come from the element type alone, so copy the bytes as an array of T
    cuda::memcpy_async(warp, reinterpret_cast<T*>(s), reinterpret_cast<const T*>(g),
                       static_cast<std::size_t>(bytes), pipe);
    // EXERCISE-STUB: (void)warp, (void)s, (void)g, (void)bytes, (void)pipe;
    // EXERCISE-END
  }
};
struct IssueAligned128 {  // a 128-byte promise holds only for whole 128-byte multiples
  __device__ void operator()(const Warp& warp, unsigned char* s, const unsigned char* g, int bytes,
                             Pipe& pipe) const {
    if (bytes % 128 == 0)
      IssueAligned<128>{}(warp, s, g, bytes, pipe);
    else
      IssueAligned<16>{}(warp, s, g, bytes, pipe);
  }
};
// ---------------------------------------------------------------------------------------------
// The protocol: a 4-slot per-thread pipeline of 512-byte warp slices. Each warp copies and
// consumes only its own slices, so __syncwarp is the only barrier.
// ---------------------------------------------------------------------------------------------
template <class Issue>
__device__ void stage_slices(const unsigned char* __restrict__ d_src, uint4* __restrict__ d_out,
                             std::size_t size, int dst_off, Issue issue) {
  // alignas on the array is what makes the promise true: a char array alone is only
  // guaranteed alignment 1.
  __shared__ alignas(128) unsigned char s_slots[STAGES][SLOT_BYTES];
  const Warp warp = cg::tiled_partition<WARP>(cg::this_thread_block());
  const int lane = static_cast<int>(warp.thread_rank());
  const int w = threadIdx.x / WARP;
  const std::size_t num_tiles = (size + TILE_BYTES - 1) / TILE_BYTES;
  Pipe pipe = cuda::make_pipeline();

  auto slice_bytes = [&](std::size_t tile) {
    const std::size_t start = tile * TILE_BYTES + std::size_t(w) * SLICE_BYTES;
    if (start >= size) return 0;
    const std::size_t left = size - start;
    return static_cast<int>(left < SLICE_BYTES ? left : SLICE_BYTES);
  };
  auto stage = [&](std::size_t tile, int slot) {
    if (tile < num_tiles && slice_bytes(tile) > 0)  // warp-uniform
      issue(warp, &s_slots[slot][dst_off + w * SLICE_BYTES],
            d_src + tile * TILE_BYTES + std::size_t(w) * SLICE_BYTES, slice_bytes(tile), pipe);
    pipe.producer_commit();  // one group per lane per slot, empty for the synchronous paths
  };

  for (int s = 0; s < STAGES; ++s) stage(tut::block_tile(s), s);  // this block's tiles 0..3
  for (std::size_t k = 0;; ++k) {
    const std::size_t tile = tut::block_tile(k);
    if (tile >= num_tiles) break;
    const int slot = static_cast<int>(k % STAGES);
    cuda::pipeline_consumer_wait_prior<STAGES - 1>(pipe);  // my copies into `slot` landed
    __syncwarp();  // ... and every other lane's: the slice is complete and visible to the warp
    if (lane * 16 < slice_bytes(tile)) {
      const unsigned char* s = &s_slots[slot][dst_off + w * SLICE_BYTES + lane * 16];
      uint4 r;  // read the staged bytes with the widest load that dst_off allows
      if (dst_off % 16 == 0) {
        r = *reinterpret_cast<const uint4*>(s);
      } else if (dst_off % 4 == 0) {
        const unsigned* s4 = reinterpret_cast<const unsigned*>(s);
        r = make_uint4(s4[0], s4[1], s4[2], s4[3]);
      } else {
        unsigned char tmp[16];
        for (int i = 0; i < 16; ++i) tmp[i] = s[i];
        std::memcpy(&r, tmp, 16);
      }
      d_out[(tile * TILE_BYTES + std::size_t(w) * SLICE_BYTES) / 16 + lane] = r;
    }
    __syncwarp();  // the slice is consumed before any lane refills the slot
    stage(tile + std::size_t(STAGES) * gridDim.x, slot);
  }
}

using CopyKernel = void (*)(const unsigned char*, uint4*, std::size_t, int);

// v0: aligned_size_t<16>: cp.async.cg 16 (the previous chapters' copy)
__global__ void copy_v0_align16_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueAligned<16>{});
}
// v1: plain size_t on __align__(16) Chunk16 pointers: cp.async.cg 16, from the type
__global__ void copy_v1_sizet_chunk16_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueTyped<Chunk16>{});
}
// v2: plain size_t on Bytes16 pointers (alignment 1): the synchronous byte loop
__global__ void copy_v2_sizet_bytes16_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueTyped<Bytes16>{});
}
// v3: plain size_t on unsigned char pointers: the synchronous byte loop
__global__ void copy_v3_sizet_char_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueTyped<unsigned char>{});
}
// v4: aligned_size_t<8>: cp.async.ca 8
__global__ void copy_v4_align8_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueAligned<8>{});
}
// v5: aligned_size_t<4>: cp.async.ca 4
__global__ void copy_v5_align4_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueAligned<4>{});
}
// v6: aligned_size_t<2>: a synchronous loop of 2-byte chunks (cp.async has no 2-byte form)
__global__ void copy_v6_align2_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueAligned<2>{});
}
// v6: aligned_size_t<1>: the synchronous byte loop (a promise of 1 is no promise)
__global__ void copy_v6_align1_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueAligned<1>{});
}
// v7: aligned_size_t<128>: still cp.async.cg 16 - the cp.async unit is capped at 16 bytes
__global__ void copy_v7_align128_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueAligned128{});
}

// ---------------------------------------------------------------------------------------------
// v10: the same 16-byte promise with a block-scope cuda::barrier in shared memory. On sm_90
// CCCL then issues ONE cp.async.bulk per tile (thread 0 of the group) that completes on the
// barrier's transaction count; on sm_80 it issues cp.async.cg 16 per thread plus
// cp.async.mbarrier.arrive. One slot, reused tile after tile (a ring of depth 1).
// ---------------------------------------------------------------------------------------------
__global__ void __launch_bounds__(THREADS)
    copy_v10_barrier_align16_kernel(const unsigned char* __restrict__ d_src,
                                    uint4* __restrict__ d_out, std::size_t size) {
  __shared__ alignas(128) unsigned char s_tile[TILE_BYTES];
#pragma nv_diagnostic push
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;  // initialised below, once
#pragma nv_diagnostic pop
  const auto block = cg::this_thread_block();
  if (threadIdx.x == 0) init(&bar, THREADS);
  __syncthreads();  // the barrier is initialised before anyone uses it
  const std::size_t num_tiles = (size + TILE_BYTES - 1) / TILE_BYTES;
  for (std::size_t tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    const std::size_t left = size - tile * TILE_BYTES;
    const int bytes = static_cast<int>(left < TILE_BYTES ? left : TILE_BYTES);  // multiple of 16
    cuda::memcpy_async(block, s_tile, d_src + tile * TILE_BYTES,
                       cuda::aligned_size_t<16>(static_cast<std::size_t>(bytes)), bar);
    bar.arrive_and_wait();  // the phase completes when every thread arrived and the bytes landed
    for (int i = threadIdx.x; i * 16 < bytes; i += THREADS)
      d_out[tile * (TILE_BYTES / 16) + i] = reinterpret_cast<const uint4*>(s_tile)[i];
#if __CUDA_ARCH__ >= 900
    // The next tile's bulk copy writes s_tile through the async proxy; these generic reads of
    // it must be ordered before that write, which a barrier alone does not do across proxies.
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // fence.proxy.async.shared::cta
#endif
    __syncthreads();  // every thread has read the tile before the slot is refilled
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers, with the run-time alignment check
// ---------------------------------------------------------------------------------------------
/// Largest power of two up to 128 that divides both the global source address and the shared
/// offset (the shared slots are 128-byte aligned, so the offset decides the shared side).
inline int address_alignment(const void* src, int dst_off) {
  const std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(src) | static_cast<unsigned>(dst_off);
  int a = 1;
  while (a < 128 && bits % (2 * a) == 0) a *= 2;
  return a;
}

/// The widest asynchronous copy those addresses allow: 16, 8 or 4; 1 when none is legal.
inline int widest_alignment(const void* src, int dst_off) {
  // EXERCISE-BEGIN: map the addresses' common alignment to the widest copy unit cp.async has (16, 8 or 4), and to 1 when no cp.async width is legal
  const int a = address_alignment(src, dst_off);
  return a >= 16 ? 16 : a >= 8 ? 8 : a >= 4 ? 4 : 1;
  // EXERCISE-STUB: (void)src, (void)dst_off;
  // EXERCISE-STUB: return 16;  // always promising 16 is what this function must not do
  // EXERCISE-END
}

/// Does the promise `promised` hold for these addresses? Prints one clear error line and
/// returns false when it does not (the caller then does not launch).
inline bool alignment_ok(const void* src, int dst_off, int promised, const char* what) {
  if (address_alignment(src, dst_off) >= promised) return true;
  std::fprintf(stderr,
               "ch09: error: %s promises %d-byte alignment, but the source address %p is %d mod %d "
               "and the shared offset is %d: only %d-byte copies are legal. Not launching (the "
               "copy would be undefined behaviour).\n",
               what, promised, src, static_cast<int>(reinterpret_cast<std::uintptr_t>(src) % promised),
               promised, dst_off, widest_alignment(src, dst_off));
  return false;
}

/// Launch `kernel`, which promises `promised` bytes of alignment, after checking the promise.
inline void launch_copy(CopyKernel kernel, int promised, const char* what, const unsigned char* src,
                        uint4* out, std::size_t size, int dst_off, int sm_count, cudaStream_t s) {
  if (!alignment_ok(src, dst_off, promised, what)) return;  // the output keeps its poison
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count);
  kernel<<<grid, THREADS, 0, s>>>(src, out, size, dst_off);
}

/// v8: the widest legal copy for whatever addresses it gets - what a library entry point
/// should do.
inline void launch_copy_widest(const unsigned char* src, uint4* out, std::size_t size, int dst_off,
                               int sm_count, cudaStream_t s) {
  switch (widest_alignment(src, dst_off)) {
    case 16: launch_copy(copy_v0_align16_kernel, 16, "aligned_size_t<16>", src, out, size, dst_off, sm_count, s); break;
    case 8: launch_copy(copy_v4_align8_kernel, 8, "aligned_size_t<8>", src, out, size, dst_off, sm_count, s); break;
    case 4: launch_copy(copy_v5_align4_kernel, 4, "aligned_size_t<4>", src, out, size, dst_off, sm_count, s); break;
    default: launch_copy(copy_v6_align1_kernel, 1, "aligned_size_t<1>", src, out, size, dst_off, sm_count, s); break;
  }
}

/// v10: a 16-byte promise on the source; the shared tile is 128-byte aligned by declaration.
inline void launch_copy_barrier(const unsigned char* src, uint4* out, std::size_t size, int sm_count,
                                cudaStream_t s) {
  if (!alignment_ok(src, 0, 16, "aligned_size_t<16> with cuda::barrier")) return;
  const unsigned grid = tut::persistent_grid(copy_v10_barrier_align16_kernel, THREADS, sm_count);
  copy_v10_barrier_align16_kernel<<<grid, THREADS, 0, s>>>(src, out, size);
}

}  // namespace ch09
