/// @file kernels.cuh
/// @brief Chapter 08's lesson kernels: who issues the cp.async of a warp slice (converged,
///        divergent, divergent + __syncwarp, sized, zero-fill), one shared protocol
///        (reverse_slices), then the launcher.
///
/// cp.async is a per-thread instruction, and its completion bookkeeping (the commit group,
/// cp.async.commit_group / cp.async.wait_group) is per-thread too. So when only half of a warp
/// issues copies and every thread commits, nothing is "entangled": each thread owns exactly as
/// many groups as it committed, the lanes that copied nothing own empty groups, and a wait in
/// one lane says nothing about the copies of another lane. What the divergent form really
/// changes is (1) the number of LDGSTS instructions per byte (half the lanes are idle in each)
/// and (2) the ordering obligation: a lane that reads data copied by another lane needs a
/// barrier (__syncwarp here) after everyone's wait - the wait alone is not enough.
///
/// Workload: a tile-through-shared copy. Each 256-thread block stages 4 KiB tiles (256 x 16 B
/// chunks) in a 4-slot per-thread pipeline (cuda::pipeline<thread_scope_thread>). Each warp
/// owns a 512-byte slice of the tile (32 chunks) and writes it out reversed within the slice,
/// so every lane reads a chunk that another lane copied. The variants differ only in WHO
/// issues the copies of a slice: all 32 lanes (v0), half of the lanes (v1..v3), or all lanes
/// with zero-fill predication (v4).
/// Minimum compute capability: 8.0 (cp.async).
#pragma once

#include <cuda/pipeline>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/cp_async.cuh"
#include "common/launch.cuh"
#include "common/ring.cuh"

namespace ch08 {

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;                      // threads per block, every kernel here
constexpr int WARP = 32;                          // lanes per warp
constexpr int TILE_CHUNKS = THREADS;              // 16-byte chunks per 4 KiB tile
constexpr int SLICE_CHUNKS = WARP;                // chunks per warp slice (512 B)
constexpr int STAGES = 4;                         // pipeline slots per block
constexpr unsigned HALF_MASK = 0x00FF00FFu;       // lanes 0-7 and 16-23: lane % 16 < 8
using Chunk = uint4;                              // 16 bytes, alignof 16

static_assert(TILE_CHUNKS % SLICE_CHUNKS == 0, "a tile is a whole number of warp slices");

/// Lanes that issue copies in the divergent variants (`threadIdx.x % 16 < 8`).
__device__ inline bool is_issuer(int lane) { return lane % 16 < 8; }
/// Index 0..15 of an issuing lane among the issuers of its warp.
__device__ inline int issuer_rank(int lane) { return (lane / 16) * 8 + lane % 16; }

/// Chunks of the warp slice that starts at chunk `base`: 32, fewer in the last slice, or 0.
__host__ __device__ inline int slice_count(std::size_t n_chunks, std::size_t base) {
  if (base >= n_chunks) return 0;
  const std::size_t left = n_chunks - base;
  return static_cast<int>(left < SLICE_CHUNKS ? left : SLICE_CHUNKS);
}

// ---------------------------------------------------------------------------------------------
// The protocol: a 4-slot pipeline over 4 KiB tiles, one warp slice per warp
// ---------------------------------------------------------------------------------------------
// `Issue` decides which lanes copy which chunks of a slice: issue(s_slice, g_slice, m, lane,
// pipe) must stage chunks [0, m) of g_slice into s_slice, using any lanes it likes. The driver
// commits exactly one group per lane per slot, copy or not, so every lane's group count is the
// same and wait_prior<STAGES-1> always means "the group of the oldest slot is complete".
using Pipe = cuda::pipeline<cuda::thread_scope_thread>;

template <class Issue>
__device__ void reverse_slices(const Chunk* __restrict__ d_in, Chunk* __restrict__ d_out,
                               std::size_t n_chunks, Issue issue) {
  __shared__ Chunk s_slots[STAGES][TILE_CHUNKS];  // [4 slots][256 chunks] x 16 B = 16 KiB
  const int lane = threadIdx.x % WARP;
  const int warp = threadIdx.x / WARP;
  const std::size_t num_tiles = (n_chunks + TILE_CHUNKS - 1) / TILE_CHUNKS;
  Pipe pipe = cuda::make_pipeline();  // per-thread state only: no shared memory, no init

  // Stage tile `tile` (if it exists) into slot `slot`, then commit: one group per lane, always.
  auto stage = [&](std::size_t tile, int slot) {
    if (tile < num_tiles) {
      const std::size_t base = tile * TILE_CHUNKS + warp * SLICE_CHUNKS;
      const int m = slice_count(n_chunks, base);  // warp-uniform
      if (m > 0) issue(&s_slots[slot][warp * SLICE_CHUNKS], d_in + base, m, lane, pipe);
    }
    pipe.producer_commit();  // cp.async.commit_group (LDGDEPBAR): may close an empty group
  };

  // prologue: fill all STAGES slots with this block's tiles 0..STAGES-1 (grid-stride walk)
  for (int s = 0; s < STAGES; ++s) stage(tut::block_tile(s), s);

  // steady state: consume slot k % STAGES, refill it with the tile STAGES steps ahead
  for (std::size_t k = 0;; ++k) {
    const std::size_t tile = tut::block_tile(k);
    if (tile >= num_tiles) break;
    const int slot = static_cast<int>(k % STAGES);
    // cp.async.wait_group STAGES-1 (DEPBAR.LE SB0, 0x3): of MY groups, all but the 3 newest
    // are complete, so MY copies into this slot have landed. It says nothing about the
    // copies the other lanes issued.
    cuda::pipeline_consumer_wait_prior<STAGES - 1>(pipe);
    // Every lane of the warp has passed its own wait, so the whole slice is in shared memory
    // and visible to the whole warp. This barrier is what makes the divergent issue correct.
    __syncwarp();  // after every lane's wait, before any lane reads the slice
    const std::size_t base = tile * TILE_CHUNKS + warp * SLICE_CHUNKS;
    const int m = slice_count(n_chunks, base);
    // EXERCISE-BEGIN: each of the slice's m output chunks takes its staged chunk from the mirrored position of this warp's slice (a chunk another lane copied)
    if (lane < m) d_out[base + lane] = s_slots[slot][warp * SLICE_CHUNKS + m - 1 - lane];
    // EXERCISE-STUB: (void)base, (void)m;
    // EXERCISE-END
    // The slice has been read by every lane before any lane refills the slot.
    __syncwarp();  // after the reads, before the refill
    stage(tile + std::size_t(STAGES) * gridDim.x, slot);
  }
  // epilogue: the groups still open hold no copies (they were committed for tiles past the
  // end), so nothing is in flight when the kernel exits.
}

// ---------------------------------------------------------------------------------------------
// v0: converged issue - every lane copies its own chunk (the branch moved out of the copy)
// ---------------------------------------------------------------------------------------------
// One LDGSTS per warp per slice with all 32 lanes active: 512 contiguous bytes per instruction.
// This is also the first fix for the divergent pattern: give every lane the same amount of
// copying, so there is no branch around the copy at all (only the tail test `lane < m`).
struct IssueConverged {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe& pipe) const {
    if (lane < m) cuda::memcpy_async(s + lane, g + lane, cuda::aligned_size_t<16>(16), pipe);
  }
};
__global__ void slice_v0_converged_kernel(const Chunk* d_in, Chunk* d_out, std::size_t n) {
  reverse_slices(d_in, d_out, n, IssueConverged{});
}

// ---------------------------------------------------------------------------------------------
// v1: divergent issue - only lanes with lane % 16 < 8 copy (two chunks each); all lanes commit
// ---------------------------------------------------------------------------------------------
// A common pattern, made complete: 16 issuing lanes must cover 32 chunks, so issuer r copies
// chunks r and r + 16 (each instruction still reads 16 x 16 = 256 contiguous bytes). The idle
// lanes commit empty groups; their wait_prior returns at once, and they rely on the
// __syncwarp() after the wait for the data. Per slice: 2 LDGSTS with 16 of 32 lanes active.
struct IssueDivergent {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe& pipe) const {
    if (is_issuer(lane)) {
      // EXERCISE-BEGIN: only the 16 issuing lanes copy, yet all m chunks of the slice must be staged, each into this lane's own pipeline; spread them so each issuer's instructions still read contiguous bytes
      const int r = issuer_rank(lane);
      if (r < m) cuda::memcpy_async(s + r, g + r, cuda::aligned_size_t<16>(16), pipe);
      if (r + 16 < m) cuda::memcpy_async(s + r + 16, g + r + 16, cuda::aligned_size_t<16>(16), pipe);
      // EXERCISE-STUB: (void)s, (void)g, (void)m, (void)pipe;
      // EXERCISE-END
    }
  }
};
__global__ void slice_v1_divergent_kernel(const Chunk* d_in, Chunk* d_out, std::size_t n) {
  reverse_slices(d_in, d_out, n, IssueDivergent{});
}

// ---------------------------------------------------------------------------------------------
// v2: the commonly suggested fix - __syncwarp around the copies inside the branch
// ---------------------------------------------------------------------------------------------
// The suggestion is usually written as __syncwarp() (full mask) inside `if (lane % 16 < 8)`.
// That is undefined behaviour: the full mask names 16 lanes that never reach the call. The
// legal form names
// exactly the lanes in the branch (HALF_MASK). It orders nothing that matters here - the
// copies are asynchronous, and the barrier that makes the data visible is the one after the
// wait - so this variant measures what the extra barriers cost or save.
struct IssueDivergentSyncwarp {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe& pipe) const {
    if (is_issuer(lane)) {
      __syncwarp(HALF_MASK);  // WARPSYNC with the 16 issuing lanes
      IssueDivergent{}(s, g, m, lane, pipe);  // v1's copies (its is_issuer test holds here)
      __syncwarp(HALF_MASK);
    }
  }
};
__global__ void slice_v2_syncwarp_kernel(const Chunk* d_in, Chunk* d_out, std::size_t n) {
  reverse_slices(d_in, d_out, n, IssueDivergentSyncwarp{});
}

// ---------------------------------------------------------------------------------------------
// v3: the branch moved into the size - every lane calls memcpy_async, idle lanes with 0 bytes
// ---------------------------------------------------------------------------------------------
// No `if` in the source: issuer r asks for 32 bytes (chunks 2r, 2r+1), the others for 0. The
// library turns a size into a loop of 16-byte cp.async (CCCL's __cp_async_shared_global_
// mechanism), so the divergence is still there, inside the loop trip count. Read the SASS.
struct IssueSized {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe& pipe) const {
    const int r = issuer_rank(lane);
    const int left = m - 2 * r;  // chunks of this slice from 2r on
    const int want = !is_issuer(lane) || left <= 0 ? 0 : (left < 2 ? left : 2);
    cuda::memcpy_async(s + 2 * r, g + 2 * r,
                       cuda::aligned_size_t<16>(static_cast<std::size_t>(want) * 16), pipe);
  }
};
__global__ void slice_v3_sized_kernel(const Chunk* d_in, Chunk* d_out, std::size_t n) {
  reverse_slices(d_in, d_out, n, IssueSized{});
}

// ---------------------------------------------------------------------------------------------
// v4: converged issue with zero-fill - every lane issues one cp.async, even past the tail
// ---------------------------------------------------------------------------------------------
// The PTX form `cp.async.cg.shared.global [dst], [src], 16, src_size` copies src_size bytes
// and fills the rest of the 16 with zeros. Lanes past the end of the data (the last slice)
// pass src_size = 0 and a safe in-range address, so no lane branches around the copy at all,
// even in the tail. cuda::memcpy_async has no zero-fill form, hence the common wrapper of the
// raw instruction (chapter 06); it still joins the same per-thread group that
// pipe.producer_commit() closes.
struct IssueZeroFill {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe&) const {
    const Chunk* src = g + (lane < m ? lane : 0);  // chunk 0 exists: m > 0
    tut::cp_async_cg16(s + lane, src, lane < m ? 16 : 0);
  }
};
__global__ void slice_v4_zfill_kernel(const Chunk* d_in, Chunk* d_out, std::size_t n) {
  reverse_slices(d_in, d_out, n, IssueZeroFill{});
}

// ---------------------------------------------------------------------------------------------
// Launchers. `blocks_per_sm` = 0 means full occupancy. The grid is persistent; every kernel
// walks its tiles grid-stride, so it is correct for any grid the launcher picks.
// ---------------------------------------------------------------------------------------------
using KernelFn = void (*)(const Chunk*, Chunk*, std::size_t);

inline void launch_slice(KernelFn kernel, const Chunk* d_in, Chunk* d_out, std::size_t n_chunks,
                         int sm_count, int blocks_per_sm, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm);
  kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_chunks);
}

}  // namespace ch08
