/// @file kernels.cuh
/// @brief Chapter 06's lesson kernels v0-v2: raw PTX cp.async (.ca/.cg, src-size,
///        commit_group, wait_group), then their launchers.
///
/// What it adds over chapter 05: no library at all. Two __device__ __forceinline__ functions,
/// each one inline-PTX copy (cp.async.ca 4/8/16 B, cp.async.cg 16 B) with the src-size operand
/// that zero-fills the bytes past the end of the array, and commit_group, wait_group N and
/// wait_all written inline in the lesson kernel (v1). With them:
///   - the streaming copy at 1 block of 256 threads per SM with 8 slots, 7 tiles in flight at
///     each wait (chapter 05's wait-first loop: a ring of STAGES slots keeps STAGES-1 tiles in
///     flight), the regime where the bytes in flight per block decide the bandwidth;
///   - L1 ACCESS (.ca) against L1 BYPASS (.cg) on two workloads: a stream that reads every
///     byte once (L1 cannot help) and a window that reads every tile twice, one iteration
///     apart, on the same SM (L1 can help);
///   - completion on an mbarrier (v3, v4: mbarrier_completion.cuh).
///
/// Workloads (4 KiB tiles of 1024 words; the last tile may be ragged):
///   stream  tile zero-padded to whole 16-byte vectors, reversed word by word
///           (common/workload_reversed_tiles.cuh, as chapter 05).
///   window  out[i] = in[i] + in[i + 1024] (32-bit wrap-around), in[] past the end read as 0.
///
/// This file holds v0-v2 and their launchers; mbarrier_completion.cuh holds v3-v4 and theirs;
/// broken.cuh the broken variants; main.cu the window's CPU reference and the variant registry.
/// Minimum compute capability: 8.0 (cp.async).
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cp_async.cuh"
#include "common/launch.cuh"
#include "common/ring.cuh"
#include "common/workload_reversed_tiles.cuh"

namespace ch06 {

// The stream workload is chapter 05's - THREADS, TILE_WORDS, VEC_WORDS, the tile indexing, the
// consumer consume_reverse.
using namespace tut::reversed_tiles;

/// Which CPU reference a variant's output is checked against (Variant::reference).
enum Reference : int { kReverse = 0, kWindow = 1 };

// ---------------------------------------------------------------------------------------------
// The PTX, one function per instruction
// ---------------------------------------------------------------------------------------------
// cp.async.{ca|cg}.shared.global [dst], [src], cp-size, src-size;
//   dst       a 32-bit shared-state-space address (cvta.to.shared of a generic pointer), aligned
//             to cp-size; src a global address aligned to cp-size.
//   cp-size   4, 8 or 16 for .ca; 16 only for .cg (the PTX ISA's rule). An immediate.
//   src-size  bytes actually read, 0..cp-size; the remaining cp-size - src-size bytes of dst
//             are written with zeros. A register, so one instruction handles the ragged tail.
//   .ca       "cache at all levels": the line is allocated in L1 on its way to shared memory
//             (SASS LDGSTS.E, LDGSTS.E.64, LDGSTS.E.128).
//   .cg       "cache global": L2 only, L1 bypassed (SASS LDGSTS.E.BYPASS.128).
// The copy is issued by the thread and performed by the load/store unit (LSU): global -> L2
// (-> L1 for .ca) -> shared memory, without a register. It belongs to the thread's current,
// not yet committed, group.
template <int CP_BYTES>
__device__ __forceinline__ void cp_async_ca(std::uint32_t s_dst, const void* g_src,
                                            std::uint32_t src_bytes) {
  static_assert(CP_BYTES == 4 || CP_BYTES == 8 || CP_BYTES == 16, "cp.async.ca: 4, 8 or 16 B");
  // EXERCISE-BEGIN: one PTX instruction: CP_BYTES bytes from global to shared memory, allocated in L1 on the way, of which only src_bytes are read (the rest arrive as zeros); CP_BYTES is a compile-time constant, src_bytes a register
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s_dst),
               "l"(__cvta_generic_to_global(g_src)), "n"(CP_BYTES), "r"(src_bytes)
               : "memory");
  // EXERCISE-STUB: (void)s_dst, (void)g_src, (void)src_bytes;
  // EXERCISE-END
}
__device__ __forceinline__ void cp_async_cg16(std::uint32_t s_dst, const void* g_src,
                                              std::uint32_t src_bytes) {
  // EXERCISE-BEGIN: one PTX instruction: 16 bytes from global to shared memory that bypass L1, of which only src_bytes are read (the rest arrive as zeros)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s_dst),
               "l"(__cvta_generic_to_global(g_src)), "r"(src_bytes)
               : "memory");
  // EXERCISE-STUB: (void)s_dst, (void)g_src, (void)src_bytes;
  // EXERCISE-END
}
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// One thread's share of a tile: 16 bytes, as one 16-byte, two 8-byte or four 4-byte copies
// (element e of the tile belongs to thread e % 256). Copies past the padded tile are skipped;
// copies past the array's end read src_bytes < cp-size and zero the rest (0 reads nothing, but
// the address must still be a valid aligned global address: the tile's first word). CG picks
// the L1 policy the lesson compares: .cg (16 B only) or .ca.
template <int CP_BYTES, bool CG>
__device__ __forceinline__ void issue_tile(std::uint32_t* s_slot,
                                           const std::uint32_t* __restrict__ d_in, std::size_t base,
                                           int count) {
  static_assert(!CG || CP_BYTES == 16, "cp.async.cg exists only for 16 bytes");
  constexpr int ELEM_WORDS = CP_BYTES / 4;
  constexpr int COPIES = TILE_WORDS / ELEM_WORDS / THREADS;
  const int padded = padded_count(count);
#pragma unroll
  for (int c = 0; c < COPIES; ++c) {
    const int w = (c * THREADS + static_cast<int>(threadIdx.x)) * ELEM_WORDS;
    if (w >= padded) continue;
    const int left = count - w;
    const int valid = left < 0 ? 0 : (left < ELEM_WORDS ? left : ELEM_WORDS);
    const std::uint32_t* src = d_in + base + (valid > 0 ? w : 0);
    // EXERCISE-BEGIN: PTX's src-size for this copy: how much of it lies inside the array (the hardware zero-fills the rest)
    const std::uint32_t src_bytes = static_cast<std::uint32_t>(valid) * 4u;
    // EXERCISE-STUB: const std::uint32_t src_bytes = CP_BYTES;
    // EXERCISE-END
    if constexpr (CG)
      cp_async_cg16(smem_u32(s_slot + w), src, src_bytes);
    else
      cp_async_ca<CP_BYTES>(smem_u32(s_slot + w), src, src_bytes);
  }
}

// ---------------------------------------------------------------------------------------------
// v0: chapter 05's kernel - __pipeline_* primitives, 16-byte copies, 4 slots (3 in flight)
// ---------------------------------------------------------------------------------------------
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    stream_v0_primitives_kernel(const std::uint32_t* __restrict__ d_in,
                                std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;
  auto issue = [&](std::size_t tile) {
    if (tile < my_tiles) {
      const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
      const int left = tile_count(n_words, base) - w;
      if (left > 0)
        __pipeline_memcpy_async(&s_tiles[tile % STAGES][w], d_in + base + w, 16,
                                left >= VEC_WORDS ? 0 : (VEC_WORDS - left) * 4);
    }
    __pipeline_commit();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    __pipeline_wait_prior(STAGES - 2);
    __syncthreads();
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
  }
}

// ---------------------------------------------------------------------------------------------
// v1: the stream with raw PTX; STAGES slots, CP_BYTES per copy, .cg (L1 bypass) or .ca
// ---------------------------------------------------------------------------------------------
// Bytes in flight per SM = blocks/SM x (STAGES-1) tiles x 4 KiB. At 1 block/SM and 8 slots that
// is 28 KiB per SM: Little's law (bandwidth = bytes in flight / latency) says whether it is
// enough to cover the DRAM latency; the table shows what it reaches.
template <int STAGES, int CP_BYTES, bool CG>
__global__ void __launch_bounds__(THREADS)
    stream_v1_cp_async_kernel(const std::uint32_t* __restrict__ d_in,
                              std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  static_assert(STAGES >= 2, "at least one tile in flight while another is consumed");
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];  // STAGES x 4 KiB ring
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  auto issue = [&](std::size_t tile) {  // tile into slot tile % STAGES, one commit group per tile
    if (tile < my_tiles) {
      const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
      issue_tile<CP_BYTES, CG>(s_tiles[tile % STAGES], d_in, base, tile_count(n_words, base));
    }
    // cp.async.commit_group (SASS LDGDEPBAR): closes this thread's current group, all cp.async
    // issued since the last commit. Empty groups too: an empty group is legal and completes at
    // once, and it keeps the count of groups at "one per tile".
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);  // prologue: STAGES-1 groups in flight
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    // cp.async.wait_group N (SASS DEPBAR.LE SB0, N; N an immediate): blocks this thread until at
    // most its N newest groups are pending - its own groups only, no other thread's copies.
    // STAGES-1+tile groups committed; at most STAGES-2 pending => this thread's group tile landed.
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
    __syncthreads();  // all threads' part of tile landed; slot (tile-1) % STAGES is free
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));  // v1: LDS.128, STG.E.128
  }
  // Epilogue: cp.async.wait_all (= commit_group; wait_group 0). The trailing groups are empty,
  // so this returns at once.
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

// ---------------------------------------------------------------------------------------------
// v2: the window - every tile is read twice, one iteration apart, by the same block
// ---------------------------------------------------------------------------------------------
// Blocks take contiguous runs of tiles (not grid-stride), so the second read of tile+1 (as
// the "current" tile of iteration tile+1) comes from the same SM, about one iteration after its
// first read (as the "next" tile of iteration tile). With .ca the first read allocated the lines
// in L1 and the second can hit there; with .cg both reads go to L2. Each slot holds the pair
// [tile | tile+1] = 8 KiB.
// Commit and wait are v1's instructions, here through common/cp_async.cuh (tut::), the
// spelling later chapters use.
template <int STAGES, bool CG>
__global__ void __launch_bounds__(THREADS)
    window_v2_cp_async_kernel(const std::uint32_t* __restrict__ d_in,
                              std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  __shared__ alignas(16) std::uint32_t s_pairs[STAGES][2][TILE_WORDS];  // STAGES x 8 KiB ring
  const std::size_t num_tiles = (n_words + TILE_WORDS - 1) / TILE_WORDS;
  const std::size_t chunk = (num_tiles + gridDim.x - 1) / gridDim.x;
  const std::size_t first = blockIdx.x * chunk;
  const std::size_t my_tiles =
      first < num_tiles ? (num_tiles - first < chunk ? num_tiles - first : chunk) : 0;
  const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;  // this thread's vector in a tile
  auto copy_vec = [&](std::uint32_t* s_tile, std::size_t tile) {
    const std::size_t base = tile * TILE_WORDS;
    const long long left = static_cast<long long>(n_words) - static_cast<long long>(base + w);
    const int valid = left <= 0 ? 0 : (left < VEC_WORDS ? static_cast<int>(left) : VEC_WORDS);
    const std::uint32_t* src = valid > 0 ? d_in + base + w : d_in;  // 0 bytes read: any address
    if constexpr (CG)
      cp_async_cg16(smem_u32(s_tile + w), src, valid * 4u);
    else
      cp_async_ca<16>(smem_u32(s_tile + w), src, valid * 4u);
  };
  auto issue = [&](std::size_t tile) {
    if (tile < my_tiles) {
      copy_vec(s_pairs[tile % STAGES][0], first + tile);
      copy_vec(s_pairs[tile % STAGES][1], first + tile + 1);  // past the end: all zeros
    }
    tut::cp_async_commit_group();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);  // prologue
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    tut::cp_async_wait_group<STAGES - 2>();  // this thread's pair for tile landed
    __syncthreads();                    // everyone's; and slot (tile-1) % STAGES is free
    issue(tile + STAGES - 1);
    const std::uint32_t* s_cur = s_pairs[tile % STAGES][0];
    const std::uint32_t* s_next = s_pairs[tile % STAGES][1];
    const std::size_t base = (first + tile) * TILE_WORDS;
    const int count = tile_count(n_words, base);
    if (w < count) {  // this thread's output words [w, w+4): one 16-byte vector of each tile
      const uint4 a = *reinterpret_cast<const uint4*>(s_cur + w);   // LDS.128
      const uint4 b = *reinterpret_cast<const uint4*>(s_next + w);  // LDS.128
      const uint4 r = make_uint4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
      if (w + VEC_WORDS <= count) {
        *reinterpret_cast<uint4*>(d_out + base + w) = r;  // STG.128
      } else {                                            // the array's ragged last vector
        d_out[base + w] = r.x;
        if (w + 1 < count) d_out[base + w + 1] = r.y;
        if (w + 2 < count) d_out[base + w + 2] = r.z;
      }
    }
  }
  tut::cp_async_wait_all();
}

// ---------------------------------------------------------------------------------------------
// Launchers: a persistent grid of --blocks-per-sm blocks per SM (default 1); *_full: as many
// as fit (blocks_per_sm 0)
// ---------------------------------------------------------------------------------------------
using StreamProblem = tut::reversed_tiles::Problem;  // main.cu's ch06::Problem derives from it

template <int STAGES>
void launch_stream_v0(StreamProblem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v0_primitives_kernel<STAGES>, THREADS, 0, p.sms(),
                         p.blocks_per_sm(), s, p.d_in.data(), p.d_out.data(), p.n_words);
}
template <int STAGES, int CP_BYTES, bool CG, bool FULL = false>
void launch_stream_v1(StreamProblem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v1_cp_async_kernel<STAGES, CP_BYTES, CG>, THREADS, 0, p.sms(),
                         FULL ? 0 : p.blocks_per_sm(), s, p.d_in.data(), p.d_out.data(),
                         p.n_words);
}
template <int STAGES, bool CG>
void launch_window_v2(StreamProblem& p, cudaStream_t s) {
  tut::launch_persistent(window_v2_cp_async_kernel<STAGES, CG>, THREADS, 0, p.sms(),
                         p.blocks_per_sm(), s, p.d_in.data(), p.d_out.data(), p.n_words);
}

}  // namespace ch06
