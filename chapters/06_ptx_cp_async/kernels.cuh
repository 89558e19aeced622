// Chapter 06: raw PTX cp.async - the instructions under every API of chapters 02-05
//
// What it adds over chapter 05: no library at all. Five __device__ __forceinline__ functions,
// each one inline-PTX instruction (cp.async.ca 4/8/16 B, cp.async.cg 16 B, commit_group,
// wait_group N, wait_all), with the src-size operand that zero-fills the bytes past the end of
// the array. With them:
//   - the streaming copy at 1 block of 256 threads per SM with 8 stages in flight (the regime
//     where the number of bytes in flight per thread decides the bandwidth);
//   - L1 ACCESS (.ca) against L1 BYPASS (.cg) on two workloads: a stream that reads every
//     byte once (L1 cannot help) and a window that reads every tile twice, one iteration
//     apart, on the same SM (L1 can help);
//   - completion on an mbarrier through cuda::ptx, which wraps cp.async.mbarrier.arrive and the
//     mbarrier instructions for sm_80 but not the cp.async copy, commit or wait instructions.
//
// Workloads (4 KiB tiles of 1024 words; the last tile may be ragged):
//   stream  tile zero-padded to whole 16-byte vectors, reversed word by word (as chapter 05).
//   window  out[i] = in[i] + in[i + 1024] (32-bit wrap-around), in[] past the end read as 0.
//
// Minimum compute capability: 8.0 (cp.async). Run:
//   build/bin/ch06_ptx_cp_async [--blocks-per-sm=N] [--size=1G] [--list]
// Output: the harness table (median/min ms, GB/s, % of the memcpy ceiling, vs v0, check).
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cuda/ptx>

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/05_pipeline_primitives/reversed_tiles.cuh"  // from the root: exercise/ too
#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch06 {

// The stream workload is chapter 05's - THREADS, TILE_WORDS, VEC_WORDS, the tile indexing, the
// consumer consume_reverse, reference_reverse_padded, Problem: reversed_tiles.cuh.
using namespace reversed_tiles;

// ---------------------------------------------------------------------------------------------
// The PTX, one function per instruction
// ---------------------------------------------------------------------------------------------
// cp.async.{ca|cg}.shared.global [dst], [src], cp-size, src-size;
//   dst       a 32-bit shared-state-space address (cvta.to.shared of a generic pointer), aligned
//             to cp-size; src a global address aligned to cp-size.
//   cp-size   4, 8 or 16 (.ca); 16 only (.cg). An immediate.
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
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s_dst),
               "l"(__cvta_generic_to_global(g_src)), "n"(CP_BYTES), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_cg16(std::uint32_t s_dst, const void* g_src,
                                              std::uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s_dst),
               "l"(__cvta_generic_to_global(g_src)), "r"(src_bytes)
               : "memory");
}
// cp.async.commit_group: closes the thread's current group (all cp.async issued since the last
// commit) - SASS LDGDEPBAR. An empty group is legal and completes at once.
__device__ __forceinline__ void cp_async_commit_group() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// cp.async.wait_group N: blocks the thread until at most its N most recent groups are still
// pending - SASS DEPBAR.LE SB0, N. Only the calling thread's groups: no other thread's copies.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// cp.async.wait_all: commit + wait for everything (= commit_group; wait_group 0).
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// One thread's share of a tile: 16 bytes, as one 16-byte, two 8-byte or four 4-byte copies
// (element e of the tile belongs to thread e % 256). Copies past the padded tile are skipped;
// copies past the array's end read src_bytes < cp-size and zero the rest (0 reads nothing, but
// the address must still be a valid aligned global address: the tile's first word).
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
    // EXERCISE-BEGIN: src_bytes = PTX src-size: the BYTES to read (inside the array); rest zeroed
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
// v0: chapter 05's best kernel - __pipeline_* primitives, 16-byte copies, 4 stages
// ---------------------------------------------------------------------------------------------
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    stream_v0_primitives_kernel(const std::uint32_t* __restrict__ d_in,
                                std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  const std::size_t my_tiles = tiles_for_block(n_words);
  const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;
  auto issue = [&](std::size_t k) {
    if (k < my_tiles) {
      const std::size_t base = tile_base(k);
      const int left = tile_count(n_words, base) - w;
      if (left > 0)
        __pipeline_memcpy_async(&s_tiles[k % STAGES][w], d_in + base + w, 16,
                                left >= VEC_WORDS ? 0 : (VEC_WORDS - left) * 4);
    }
    __pipeline_commit();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t k = 0; k < my_tiles; ++k) {
    __pipeline_wait_prior(STAGES - 2);
    __syncthreads();
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
  }
}

// ---------------------------------------------------------------------------------------------
// v1: the stream with raw PTX; STAGES deep, CP_BYTES per copy, .cg (L1 bypass) or .ca
// ---------------------------------------------------------------------------------------------
// Bytes in flight per SM = blocks/SM x STAGES-1 tiles x 4 KiB. At 1 block/SM and 8 stages
// that is 28 KiB per SM: Little's law (bandwidth = bytes in flight / latency) says whether it
// is enough to cover the DRAM latency; the table shows what it reaches.

// One thread's copies of one tile into a slot: issue_tile<CP_BYTES, CG>, or v9's broken one.
using IssueTile = void (*)(std::uint32_t* s_slot, const std::uint32_t* d_in, std::size_t base,
                           int count);

// The ring: STAGES slots, one commit group per tile. v1 and v9 differ only in ISSUE_TILE.
template <int STAGES, IssueTile ISSUE_TILE>
__device__ __forceinline__ void cp_async_ring(std::uint32_t (*s_tiles)[TILE_WORDS],
                                              const std::uint32_t* __restrict__ d_in,
                                              std::uint32_t* __restrict__ d_out,
                                              std::size_t n_words) {
  static_assert(STAGES >= 2, "at least one tile in flight while another is consumed");
  const std::size_t my_tiles = tiles_for_block(n_words);
  auto issue = [&](std::size_t k) {
    if (k < my_tiles) {
      const std::size_t base = tile_base(k);
      ISSUE_TILE(s_tiles[k % STAGES], d_in, base, tile_count(n_words, base));
    }
    cp_async_commit_group();  // one group per tile, empty ones too: the count stays k-based
  };
  // prologue: STAGES-1 groups in flight
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t k = 0; k < my_tiles; ++k) {
    // steady state: STAGES-1+k groups committed; at most STAGES-2 pending => group k landed
    cp_async_wait_group<STAGES - 2>();
    __syncthreads();  // all threads' part of tile k landed; slot (k-1) % STAGES is free
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
  }
  cp_async_wait_all();  // epilogue: the trailing groups are empty, so this returns at once
}

template <int STAGES, int CP_BYTES, bool CG>
__global__ void __launch_bounds__(THREADS)
    stream_v1_cp_async_kernel(const std::uint32_t* __restrict__ d_in,
                              std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];  // STAGES x 4 KiB ring
  cp_async_ring<STAGES, issue_tile<CP_BYTES, CG>>(s_tiles, d_in, d_out, n_words);
}

// ---------------------------------------------------------------------------------------------
// v2: the window - every tile is read twice, one iteration apart, by the same block
// ---------------------------------------------------------------------------------------------
// Blocks take contiguous runs of tiles (not grid-stride), so the second read of tile k+1 (as
// the "current" tile of iteration k+1) comes from the same SM, about one iteration after its
// first read (as the "next" tile of iteration k). With .ca the first read allocated the lines
// in L1 and the second can hit there; with .cg both reads go to L2. Each stage holds the pair
// [tile k | tile k+1] = 8 KiB.
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
  auto issue = [&](std::size_t k) {
    if (k < my_tiles) {
      copy_vec(s_pairs[k % STAGES][0], first + k);
      copy_vec(s_pairs[k % STAGES][1], first + k + 1);  // past the end: all zeros
    }
    cp_async_commit_group();
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);  // prologue
  for (std::size_t k = 0; k < my_tiles; ++k) {
    cp_async_wait_group<STAGES - 2>();  // this thread's pair for tile k landed
    __syncthreads();                    // everyone's; and slot (k-1) % STAGES is free
    issue(k + STAGES - 1);
    const std::uint32_t* s_cur = s_pairs[k % STAGES][0];
    const std::uint32_t* s_next = s_pairs[k % STAGES][1];
    const std::size_t base = (first + k) * TILE_WORDS;
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
  cp_async_wait_all();
}

// ---------------------------------------------------------------------------------------------
// v3: completion on an mbarrier, with cuda::ptx where CCCL has the instruction
// ---------------------------------------------------------------------------------------------
// cuda::ptx (CCCL 3.0) has no cp.async.ca/.cg, commit_group or wait_group wrappers; for sm_80
// it has mbarrier.init, mbarrier.arrive, mbarrier.test_wait and cp.async.mbarrier.arrive(.noinc).
// This variant uses the .noinc form: the async arrival does NOT raise the pending count first,
// so it must be counted in the barrier's expected count - 2 x THREADS per phase (each thread
// arrives once itself and once when its copies land). Compare chapter 05's v2, whose
// __pipeline_arrive_on is the incrementing form with THREADS.
//
// LESSON: cuda::ptx::cp_async_mbarrier_arrive_noinc emits the instruction WITHOUT a state
// space ("cp.async.mbarrier.arrive.noinc.b64 [%r]": generic addressing) but passes it a 32-bit
// shared-memory address. In this build's sm_90 SASS the address is used as is; in the sm_80
// SASS ptxas subtracts a constant-bank value first (UIADD3 UR4, -c[0x0][0x18], offset), i.e.
// treats it as a generic address. So CCCL_ARRIVE=false (the default variant) writes the
// instruction by hand with .shared, and the cuda::ptx form runs as its own variant on sm_90
// only (min_cc 90) until someone confirms it on an sm_80 GPU.
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(std::uint64_t* s_bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(smem_u32(s_bar))
               : "memory");
}

template <int STAGES, bool CCCL_ARRIVE>
__global__ void __launch_bounds__(THREADS)
    stream_v3_ptx_mbarrier_kernel(const std::uint32_t* __restrict__ d_in,
                                  std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  __shared__ std::uint64_t s_full[STAGES];  // one mbarrier per slot: "slot holds its tile"
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES; ++s) cuda::ptx::mbarrier_init(&s_full[s], 2 * THREADS);
  __syncthreads();
  const std::size_t my_tiles = tiles_for_block(n_words);
  std::uint64_t r_state[STAGES];  // the phase this thread arrived on, per slot
  auto issue = [&](std::size_t k) {
    if (k >= my_tiles) return;
    const std::size_t base = tile_base(k);
    issue_tile<16, true>(s_tiles[k % STAGES], d_in, base, tile_count(n_words, base));
    if constexpr (CCCL_ARRIVE)  // arrives when all this thread's earlier cp.async landed
      cuda::ptx::cp_async_mbarrier_arrive_noinc(&s_full[k % STAGES]);
    else
      cp_async_mbarrier_arrive_noinc(&s_full[k % STAGES]);
    r_state[k % STAGES] = cuda::ptx::mbarrier_arrive(&s_full[k % STAGES]);
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);  // prologue
  for (std::size_t k = 0; k < my_tiles; ++k) {
    while (!cuda::ptx::mbarrier_test_wait(&s_full[k % STAGES], r_state[k % STAGES])) {
    }
    __syncthreads();  // slot (k-1) % STAGES: everyone finished reading it
    issue(k + STAGES - 1);
    consume_reverse(s_tiles[k % STAGES], d_out, tile_base(k), tile_count(n_words, tile_base(k)));
  }
}

// ---------------------------------------------------------------------------------------------
// v9 (negative): src-size given in words instead of bytes
// ---------------------------------------------------------------------------------------------
// A unit bug in the one operand the hardware cannot check: a full vector is copied with
// src-size 4, so 4 bytes are read and 12 zero-filled. Three words of every vector come out as
// zero: the check fails at every size. The rest is v1 (its ring, 4 stages, .cg 16 B): only
// this thread's copy of the tile differs.
__device__ __forceinline__ void issue_tile_srcsize_words(std::uint32_t* s_slot,
                                                         const std::uint32_t* __restrict__ d_in,
                                                         std::size_t base, int count) {
  const int w = static_cast<int>(threadIdx.x) * VEC_WORDS;
  const int left = count - w;
  if (left > 0)  // BUG: words, not bytes
    cp_async_cg16(smem_u32(s_slot + w), d_in + base + w,
                  static_cast<std::uint32_t>(left < VEC_WORDS ? left : VEC_WORDS));
}

__global__ void __launch_bounds__(THREADS)
    stream_v9_srcsize_words_kernel(const std::uint32_t* __restrict__ d_in,
                                   std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  constexpr int STAGES = 4;
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  cp_async_ring<STAGES, issue_tile_srcsize_words>(s_tiles, d_in, d_out, n_words);
}

// ---------------------------------------------------------------------------------------------
// Launchers: a persistent grid of blocks_per_sm x SMs blocks (0 = as many as fit).
// ---------------------------------------------------------------------------------------------
using Launch = void (*)(const std::uint32_t*, std::uint32_t*, std::size_t, int, int, cudaStream_t);

template <class Kernel>
void launch_persistent(Kernel kernel, const std::uint32_t* d_in, std::uint32_t* d_out,
                       std::size_t n_words, int sm_count, int blocks_per_sm, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count, blocks_per_sm);
  kernel<<<grid, THREADS, 0, s>>>(d_in, d_out, n_words);
}

template <int STAGES>
void launch_stream_v0(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, int sms,
                      int bps, cudaStream_t s) {
  launch_persistent(stream_v0_primitives_kernel<STAGES>, d_in, d_out, n, sms, bps, s);
}
template <int STAGES, int CP_BYTES, bool CG>
void launch_stream_v1(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, int sms,
                      int bps, cudaStream_t s) {
  launch_persistent(stream_v1_cp_async_kernel<STAGES, CP_BYTES, CG>, d_in, d_out, n, sms, bps, s);
}
template <int STAGES, bool CG>
void launch_window_v2(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, int sms,
                      int bps, cudaStream_t s) {
  launch_persistent(window_v2_cp_async_kernel<STAGES, CG>, d_in, d_out, n, sms, bps, s);
}
template <int STAGES, bool CCCL_ARRIVE>
void launch_stream_v3(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, int sms,
                      int bps, cudaStream_t s) {
  launch_persistent(stream_v3_ptx_mbarrier_kernel<STAGES, CCCL_ARRIVE>, d_in, d_out, n, sms, bps,
                    s);
}
inline void launch_stream_v9(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n,
                             int sms, int bps, cudaStream_t s) {
  launch_persistent(stream_v9_srcsize_words_kernel, d_in, d_out, n, sms, bps, s);
}

// ---------------------------------------------------------------------------------------------
// CPU reference of the window (the stream's is reference_reverse_padded)
// ---------------------------------------------------------------------------------------------
inline std::vector<std::uint32_t> reference_window(const std::vector<std::uint32_t>& in) {
  const std::size_t n = in.size();
  std::vector<std::uint32_t> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = in[i] + (i + TILE_WORDS < n ? in[i + TILE_WORDS] : 0u);  // wraps mod 2^32
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: chapter 05's (one input and one output buffer of `size` bytes), which also
// checks the window variants against reference_window. Bytes moved = size read + size written
// for both workloads (the window's second read of a tile is reuse, not new traffic: it is what
// L1 may or may not absorb).
// ---------------------------------------------------------------------------------------------
enum Reference : int { kReverse = 0, kWindow = 1 };

struct Problem : reversed_tiles::Problem {
  using reversed_tiles::Problem::Problem;
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    if (reference == kWindow) return verify_against(s, want_window, reference_window);
    return reversed_tiles::Problem::verify(s, reference);
  }
  std::vector<std::uint32_t> want_window;
};

// ---------------------------------------------------------------------------------------------
// The variant registry. All variants run at --blocks-per-sm blocks per SM (default 1), except
// *_full (as many blocks as fit).
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  using V = tut::Variant<Problem>;
  std::vector<V> v;
  auto add = [&](const char* key, const char* name, const char* description, Launch launch,
                 int reference, bool full = false) {
    v.push_back(V{key, name, description, [launch, full](Problem& p, cudaStream_t s) {
                    launch(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(),
                           full ? 0 : p.blocks_per_sm(), s);
                  }});
    v.back().reference = reference;
  };
  add("v0_prim16_s4", "v0 primitives 16 B 4-stage",
      "chapter 05: __pipeline_memcpy_async 16 B, 4 stages", launch_stream_v0<4>, kReverse);
  add("v1_cg16_s4", "v1 PTX .cg 16 B 4-stage", "cp.async.cg 16 B, 4 stages (v0 in raw PTX)",
      launch_stream_v1<4, 16, true>, kReverse);
  add("v1_cg16_s8", "v1 PTX .cg 16 B 8-stage",
      "cp.async.cg 16 B, 8 stages: 28 KiB in flight per block", launch_stream_v1<8, 16, true>,
      kReverse);
  add("v1_ca16_s8", "v1 PTX .ca 16 B 8-stage", "cp.async.ca 16 B (L1 allocate), 8 stages",
      launch_stream_v1<8, 16, false>, kReverse);
  add("v1_ca8_s8", "v1 PTX .ca 8 B 8-stage", "cp.async.ca 8 B, two copies per thread per tile",
      launch_stream_v1<8, 8, false>, kReverse);
  add("v1_ca4_s8", "v1 PTX .ca 4 B 8-stage", "cp.async.ca 4 B, four copies per thread per tile",
      launch_stream_v1<8, 4, false>, kReverse);
  add("v1_cg16_s8_full", "v1 PTX .cg 16 B 8-stage, full",
      "cp.async.cg 16 B, 8 stages, as many blocks per SM as fit", launch_stream_v1<8, 16, true>,
      kReverse, true);
  add("v2_window_cg", "v2 window .cg 4-stage", "each tile read twice by the same SM, L1 bypassed",
      launch_window_v2<4, true>, kWindow);
  add("v2_window_ca", "v2 window .ca 4-stage",
      "each tile read twice by the same SM, L1 allocate: the second read may hit",
      launch_window_v2<4, false>, kWindow);
  add("v3_mbarrier_s8", "v3 .cg + mbarrier (noinc)",
      "cp.async.cg 16 B completed on an mbarrier: arrive.noinc.shared + cuda::ptx mbarrier ops",
      launch_stream_v3<8, false>, kReverse);
  add("v3_cccl_arrive_s8", "v3 .cg + cuda::ptx arrive",
      "as v3_mbarrier_s8 with cuda::ptx::cp_async_mbarrier_arrive_noinc (sm_90 only here)",
      launch_stream_v3<8, true>, kReverse);
  v.back().min_cc = 90;
  add("v9_srcsize_words", "v9 BROKEN: src-size in words",
      "negative: src-size operand given in words, not bytes; must FAIL", launch_stream_v9,
      kReverse);
  v.back().negative = true;
  return v;
}

}  // namespace ch06
