// EXERCISE for chapter 08_warp_divergence, generated from ../kernels.cuh by tools/make_exercise.py.
// Fill in every TODO(exercise) until `chNN_topic_exercise` reports PASS.
// Chapter 08: warp divergence around memcpy_async (what it does to commit groups, and to speed)
//
// What it teaches: cp.async is a per-thread instruction, and its completion bookkeeping (the
// commit group, cp.async.commit_group / cp.async.wait_group) is per-thread too. So when only
// half of a warp issues copies and every thread commits, nothing is "entangled": each thread
// owns exactly as many groups as it committed, the lanes that copied nothing own empty groups,
// and a wait in one lane says nothing about the copies of another lane. What the divergent
// form really changes is (1) the number of LDGSTS instructions per byte (half the lanes are
// idle in each one) and (2) the ordering obligation: a lane that reads data copied by another
// lane needs a barrier (__syncwarp here) after everyone's wait - the wait alone is not enough.
//
// Workload: a tile-through-shared copy. Each 256-thread block stages 4 KiB tiles (256 x 16 B
// chunks) in a 4-slot per-thread pipeline (cuda::pipeline<thread_scope_thread>). Each warp
// owns a 512-byte slice of the tile (32 chunks) and writes it out reversed within the slice,
// so every lane reads a chunk that another lane copied. The variants differ only in WHO
// issues the copies of a slice: all 32 lanes (v0), half of the lanes (v1..v3), or all lanes
// with zero-fill predication (v4).
//
// Minimum compute capability: 8.0 (cp.async). Built for sm_80 and sm_90; on the H200 the
// sm_90 code runs (an sm_80 cubin cannot run on sm_90), so the sm_80 code is compared by its
// SASS only.
// Run:    build/bin/ch08_warp_divergence [--blocks-per-sm=N] [--size=1G] [--list]
// Output: the harness table (median/min ms, GB/s, % of the memcpy ceiling, vs v0, check).
#pragma once

#include <cuda/pipeline>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"

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

/// Lanes that issue copies in the divergent variants (the seed's `threadIdx.x % 16 < 8`).
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
// The shared driver: a 4-slot pipeline over 4 KiB tiles, one warp slice per warp
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

  // prologue: fill all STAGES slots (tiles blockIdx.x, +grid, +2 grid, +3 grid)
  for (int s = 0; s < STAGES; ++s) stage(blockIdx.x + std::size_t(s) * gridDim.x, s);

  // steady state: consume slot k % STAGES, refill it with the tile STAGES steps ahead
  for (std::size_t k = 0;; ++k) {
    const std::size_t tile = blockIdx.x + k * gridDim.x;
    if (tile >= num_tiles) break;
    const int slot = static_cast<int>(k % STAGES);
    // cp.async.wait_group STAGES-1 (DEPBAR.LE SB0, 0x3): of MY groups, all but the 3 newest
    // are complete, so MY copies into this slot have landed. It says nothing about the
    // copies the other lanes issued.
    cuda::pipeline_consumer_wait_prior<STAGES - 1>(pipe);
    // Every lane of the warp has passed its own wait, so the whole slice is in shared memory
    // and visible to the whole warp. This barrier is what makes the divergent issue correct.
    __syncwarp();
    const std::size_t base = tile * TILE_CHUNKS + warp * SLICE_CHUNKS;
    const int m = slice_count(n_chunks, base);
    // TODO(exercise): lanes 0..m-1 write output chunk base + lane from the staged chunk m - 1 - lane of this warp's slice (another lane copied it: that is why the __syncwarp above is needed)
    (void)base, (void)m;
    // The slice has been read by every lane before any lane refills the slot.
    __syncwarp();
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
// The seed's pattern, made complete: 16 issuing lanes must cover 32 chunks, so issuer r copies
// chunks r and r + 16 (each instruction still reads 16 x 16 = 256 contiguous bytes). The idle
// lanes commit empty groups; their wait_prior returns at once, and they rely on the
// __syncwarp() after the wait for the data. Per slice: 2 LDGSTS with 16 of 32 lanes active.
struct IssueDivergent {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe& pipe) const {
    if (is_issuer(lane)) {
      // TODO(exercise): 16 issuing lanes must stage all m chunks of the slice: issuer r = issuer_rank(lane) copies chunks r and r + 16 (each only if < m), 16 B each, into this lane's pipe
      (void)s, (void)g, (void)m, (void)pipe;
    }
  }
};
__global__ void slice_v1_divergent_kernel(const Chunk* d_in, Chunk* d_out, std::size_t n) {
  reverse_slices(d_in, d_out, n, IssueDivergent{});
}

// ---------------------------------------------------------------------------------------------
// v2: the seed's fix - __syncwarp around the copies inside the branch
// ---------------------------------------------------------------------------------------------
// The seed writes __syncwarp() (full mask) inside `if (lane % 16 < 8)`. That is undefined
// behaviour: the full mask names 16 lanes that never reach the call. The legal form names
// exactly the lanes in the branch (HALF_MASK). It orders nothing that matters here - the
// copies are asynchronous, and the barrier that makes the data visible is the one after the
// wait - so this variant measures what the extra barriers cost or save.
struct IssueDivergentSyncwarp {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe& pipe) const {
    if (is_issuer(lane)) {
      __syncwarp(HALF_MASK);  // WARPSYNC with the 16 issuing lanes
      const int r = issuer_rank(lane);
      if (r < m) cuda::memcpy_async(s + r, g + r, cuda::aligned_size_t<16>(16), pipe);
      if (r + 16 < m) cuda::memcpy_async(s + r + 16, g + r + 16, cuda::aligned_size_t<16>(16), pipe);
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
// even in the tail. cuda::memcpy_async has no zero-fill form, hence the inline PTX; it still
// joins the same per-thread group that pipe.producer_commit() closes.
struct IssueZeroFill {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe&) const {
    const unsigned src_bytes = lane < m ? 16u : 0u;
    const Chunk* src = g + (lane < m ? lane : 0);  // chunk 0 exists: m > 0
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                     static_cast<unsigned>(__cvta_generic_to_shared(s + lane))),
                 "l"(src), "r"(src_bytes)
                 : "memory");
  }
};
__global__ void slice_v4_zfill_kernel(const Chunk* d_in, Chunk* d_out, std::size_t n) {
  reverse_slices(d_in, d_out, n, IssueZeroFill{});
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): the seed's kernel taken literally - half the lanes copy their own chunk only
// ---------------------------------------------------------------------------------------------
// Lanes with lane % 16 >= 8 never copy, and nobody copies for them: chunks 8-15 and 24-31 of
// every slice are never staged, so their outputs come from whatever the slot held. Unique
// inputs make that fail at every check size with more than 8 chunks in a slice.
struct IssueHalfOnly {
  __device__ void operator()(Chunk* s, const Chunk* g, int m, int lane, Pipe& pipe) const {
    if (is_issuer(lane) && lane < m)  // BUG: nobody covers the other half of the slice
      cuda::memcpy_async(s + lane, g + lane, cuda::aligned_size_t<16>(16), pipe);
  }
};
__global__ void slice_v9_half_only_kernel(const Chunk* d_in, Chunk* d_out, std::size_t n) {
  reverse_slices(d_in, d_out, n, IssueHalfOnly{});
}

// ---------------------------------------------------------------------------------------------
// Launchers. `blocks_per_sm` = 0 means full occupancy. The grid is persistent.
// ---------------------------------------------------------------------------------------------
using KernelFn = void (*)(const Chunk*, Chunk*, std::size_t);

inline void launch_slice(KernelFn kernel, const Chunk* d_in, Chunk* d_out, std::size_t n_chunks,
                         int sm_count, int blocks_per_sm, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm);
  kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_chunks);
}
inline void launch_slice_v0(const Chunk* i, Chunk* o, std::size_t n, int sms, int bps, cudaStream_t s) {
  launch_slice(slice_v0_converged_kernel, i, o, n, sms, bps, s);
}
inline void launch_slice_v1(const Chunk* i, Chunk* o, std::size_t n, int sms, int bps, cudaStream_t s) {
  launch_slice(slice_v1_divergent_kernel, i, o, n, sms, bps, s);
}
inline void launch_slice_v2(const Chunk* i, Chunk* o, std::size_t n, int sms, int bps, cudaStream_t s) {
  launch_slice(slice_v2_syncwarp_kernel, i, o, n, sms, bps, s);
}
inline void launch_slice_v3(const Chunk* i, Chunk* o, std::size_t n, int sms, int bps, cudaStream_t s) {
  launch_slice(slice_v3_sized_kernel, i, o, n, sms, bps, s);
}
inline void launch_slice_v4(const Chunk* i, Chunk* o, std::size_t n, int sms, int bps, cudaStream_t s) {
  launch_slice(slice_v4_zfill_kernel, i, o, n, sms, bps, s);
}
inline void launch_slice_v9(const Chunk* i, Chunk* o, std::size_t n, int sms, int bps, cudaStream_t s) {
  launch_slice(slice_v9_half_only_kernel, i, o, n, sms, bps, s);
}

// ---------------------------------------------------------------------------------------------
// CPU reference: reverse every 32-chunk (512 B) slice, the last partial slice within itself.
// ---------------------------------------------------------------------------------------------
inline std::vector<std::uint32_t> reference_reverse_slices(const std::vector<std::uint32_t>& in) {
  const std::size_t n_chunks = in.size() / 4;
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t base = 0; base < n_chunks; base += SLICE_CHUNKS) {
    const int m = slice_count(n_chunks, base);
    for (int l = 0; l < m; ++l)
      for (int w = 0; w < 4; ++w) out[(base + l) * 4 + w] = in[(base + m - 1 - l) * 4 + w];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: one input and one output buffer of `size` bytes (16-byte chunks).
// ---------------------------------------------------------------------------------------------
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(cfg.size / 16), d_out(cfg.size / 16) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    std::vector<Chunk> chunks(n_words / 4);
    std::memcpy(chunks.data(), h_in.data(), cfg.size);
    d_in.upload(chunks);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int) {
    const std::vector<Chunk> got = d_out.download(s);
    if (want.empty()) want = reference_reverse_slices(h_in);
    return tut::compare_exact_words(reinterpret_cast<const std::uint32_t*>(got.data()),
                                    want.data(), n_words);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }

  std::size_t n_chunks() const { return n_words / 4; }
  int sms() const { return cfg.device.sm_count; }
  int low_blocks_per_sm() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<Chunk> d_in, d_out;
  std::vector<std::uint32_t> h_in, want;
};

// ---------------------------------------------------------------------------------------------
// The variant registry
// ---------------------------------------------------------------------------------------------
using Launcher = void (*)(const Chunk*, Chunk*, std::size_t, int, int, cudaStream_t);

inline tut::Variant<Problem> make_variant(std::string key, std::string name, std::string desc,
                                          Launcher launch, bool low_occupancy) {
  tut::Variant<Problem> v{std::move(key), std::move(name), std::move(desc),
                          [launch, low_occupancy](Problem& p, cudaStream_t s) {
                            launch(p.d_in.data(), p.d_out.data(), p.n_chunks(), p.sms(),
                                   low_occupancy ? p.low_blocks_per_sm() : 0, s);
                          }};
  return v;
}

inline std::vector<tut::Variant<Problem>> variants() {
  std::vector<tut::Variant<Problem>> v;
  v.push_back(make_variant("v0_converged", "v0 converged, full occ",
                           "every lane copies its own 16 B chunk: 1 LDGSTS x 32 lanes per slice",
                           launch_slice_v0, false));
  v.push_back(make_variant("v0_converged_low", "v0 converged, low occ",
                           "the same at --blocks-per-sm blocks per SM (default 1)",
                           launch_slice_v0, true));
  v.push_back(make_variant("v1_divergent", "v1 divergent, full occ",
                           "lane%16<8 copy two chunks each, all lanes commit: 2 LDGSTS x 16 lanes",
                           launch_slice_v1, false));
  v.push_back(make_variant("v1_divergent_low", "v1 divergent, low occ",
                           "the same at --blocks-per-sm blocks per SM", launch_slice_v1, true));
  v.push_back(make_variant("v2_syncwarp", "v2 divergent + __syncwarp",
                           "v1 with __syncwarp(0x00FF00FF) before and after the copies",
                           launch_slice_v2, false));
  v.push_back(make_variant("v3_sized", "v3 sized, no branch",
                           "every lane calls memcpy_async; idle lanes ask for 0 bytes",
                           launch_slice_v3, false));
  v.push_back(make_variant("v4_zfill", "v4 converged zero-fill",
                           "every lane issues cp.async; tail lanes use src-size 0 (zero fill)",
                           launch_slice_v4, false));
  v.push_back(make_variant("v4_zfill_low", "v4 converged zero-fill, low occ",
                           "the same at --blocks-per-sm blocks per SM", launch_slice_v4, true));
  v.push_back(make_variant("v9_half_only", "v9 BROKEN: half the lanes copy",
                           "negative: the seed's kernel literally; half of each slice is never staged",
                           launch_slice_v9, false));
  v.back().negative = true;
  return v;
}

}  // namespace ch08
