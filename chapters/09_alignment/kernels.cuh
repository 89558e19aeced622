// Chapter 09: alignment - which copy instruction cuda::memcpy_async really emits
//
// What it teaches: cuda::memcpy_async picks its instruction at COMPILE time from the alignment
// it is promised - the larger of alignof(T) of the pointer type and the N of a
// cuda::aligned_size_t<N> size - never from the run-time addresses:
//   promise >= 16  cp.async.cg.shared.global ..., 16   (LDGSTS.E.BYPASS.128, L1 bypassed)
//   promise 8      cp.async.ca.shared.global ..., 8    (LDGSTS.E.64, through L1)
//   promise 4      cp.async.ca.shared.global ..., 4    (LDGSTS.E)
//   promise 1      a plain synchronous byte loop: ld.global.u8 + st.shared.u8 (LDG.E.U8, STS.U8)
// Promising more than the addresses give is undefined behaviour, so the launchers check the
// real addresses at run time and refuse with a clear error. A promise above 16 (the seed's
// __align__(128) struct) buys nothing: the copy unit is capped at 16 bytes.
//
// Workload: copy `size` bytes from d_in + src_off to d_out through shared memory. Each warp
// stages 512-byte slices of 4 KiB tiles with a warp-cooperative memcpy_async into a 4-slot
// per-thread pipeline, at byte offset dst_off inside each shared slot, then writes 16 B per
// lane to the (always aligned) output. src_off moves the global source, dst_off the shared
// destination.
//
// Minimum compute capability: 8.0 (cp.async). Built for sm_80 and sm_90.
// Run:    build/bin/ch09_alignment [--size=1G] [--list]
// Output: the harness table (median/min ms, GB/s, % of the memcpy ceiling, vs v0, check).
#pragma once

#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"

namespace ch09 {
namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------------------------
// Constants and the element types
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;                 // threads per block
constexpr int WARP = 32;
constexpr int TILE_BYTES = 4096;             // per block per stage
constexpr int SLICE_BYTES = TILE_BYTES / (THREADS / WARP);  // 512 B per warp
constexpr int MAX_OFFSET = 128;              // largest src/dst offset the buffers leave room for
constexpr int SLOT_BYTES = TILE_BYTES + MAX_OFFSET;          // 4224 = 33 x 128
constexpr int STAGES = 4;

static_assert(SLICE_BYTES == WARP * 16, "one 16-byte chunk per lane per slice");
static_assert(SLOT_BYTES % 128 == 0, "every slot starts 128-byte aligned");

// A 16-byte record of bytes has alignment 1: memcpy_async on Bytes16* takes the byte path.
struct Bytes16 {
  unsigned char b[16];
};
// The same record with __align__(16) (CUDA's spelling of alignas(16)): now alignof is 16, and
// memcpy_async on Chunk16* takes cp.async 16 even with a plain size_t size.
struct __align__(16) Chunk16 {
  unsigned char b[16];
};
static_assert(alignof(Bytes16) == 1 && sizeof(Bytes16) == 16, "Bytes16: 16 B, alignment 1");
static_assert(alignof(Chunk16) == 16 && sizeof(Chunk16) == 16, "Chunk16: 16 B, alignment 16");

using Pipe = cuda::pipeline<cuda::thread_scope_thread>;
using Warp = cg::thread_block_tile<WARP>;

// ---------------------------------------------------------------------------------------------
// The shared driver: 4-slot pipeline of 512-byte warp slices, no block barrier anywhere
// ---------------------------------------------------------------------------------------------
// Each warp copies and consumes only its own slices, so __syncwarp is the only barrier needed.
// issue(warp, s, g, bytes, pipe) stages `bytes` (a multiple of 16, <= 512) from g to s.
template <class Issue>
__device__ void stage_slices(const unsigned char* __restrict__ d_src, uint4* __restrict__ d_out,
                             std::size_t size, int dst_off, Issue issue) {
  // [STAGES][4096 + 128] bytes, 128-byte aligned: alignas on the array is what guarantees the
  // base alignment the copy promises (a char array alone only guarantees 1).
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
    if (tile < num_tiles) {
      const int bytes = slice_bytes(tile);  // warp-uniform
      if (bytes > 0)
        issue(warp, &s_slots[slot][dst_off + w * SLICE_BYTES],
              d_src + tile * TILE_BYTES + std::size_t(w) * SLICE_BYTES, bytes, pipe);
    }
    pipe.producer_commit();  // one group per lane per slot (empty for the byte fallback)
  };

  // prologue: fill all STAGES slots
  for (int s = 0; s < STAGES; ++s) stage(blockIdx.x + std::size_t(s) * gridDim.x, s);
  // steady state
  for (std::size_t k = 0;; ++k) {
    const std::size_t tile = blockIdx.x + k * gridDim.x;
    if (tile >= num_tiles) break;
    const int slot = static_cast<int>(k % STAGES);
    cuda::pipeline_consumer_wait_prior<STAGES - 1>(pipe);  // my copies into `slot` landed
    __syncwarp();  // ... and every other lane's: the slice is complete and visible to the warp
    const int bytes = slice_bytes(tile);
    if (lane * 16 < bytes) {
      const unsigned char* s = &s_slots[slot][dst_off + w * SLICE_BYTES + lane * 16];
      uint4 r;
      // The shared copy sits at dst_off: read it with the widest load that offset allows.
      if (dst_off % 16 == 0) {
        r = *reinterpret_cast<const uint4*>(s);  // LDS.128
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

// ---------------------------------------------------------------------------------------------
// The copy calls. Each differs only in the alignment it promises; see the table at the top.
// Per lane of a 512-byte slice: 1 x 16 B, 2 x 8 B, 4 x 4 B or 16 x 1 B (strided by the group).
// ---------------------------------------------------------------------------------------------
template <std::size_t N>
struct IssueAligned {  // cuda::aligned_size_t<N> on byte pointers
  __device__ void operator()(const Warp& warp, unsigned char* s, const unsigned char* g, int bytes,
                             Pipe& pipe) const {
    cuda::memcpy_async(warp, s, g, cuda::aligned_size_t<N>(static_cast<std::size_t>(bytes)), pipe);
  }
};
struct IssueAligned128 {  // the seed's 128-byte promise; only true for whole 128-byte multiples
  __device__ void operator()(const Warp& warp, unsigned char* s, const unsigned char* g, int bytes,
                             Pipe& pipe) const {
    if (bytes % 128 == 0)
      cuda::memcpy_async(warp, s, g, cuda::aligned_size_t<128>(static_cast<std::size_t>(bytes)), pipe);
    else
      cuda::memcpy_async(warp, s, g, cuda::aligned_size_t<16>(static_cast<std::size_t>(bytes)), pipe);
  }
};
template <class T>
struct IssueTyped {  // plain size_t; the promise comes from alignof(T) alone
  __device__ void operator()(const Warp& warp, unsigned char* s, const unsigned char* g, int bytes,
                             Pipe& pipe) const {
    cuda::memcpy_async(warp, reinterpret_cast<T*>(s), reinterpret_cast<const T*>(g),
                       static_cast<std::size_t>(bytes), pipe);
  }
};

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
// v6: aligned_size_t<1>: the synchronous byte loop (a promise of 1 is no promise)
__global__ void copy_v6_align1_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueAligned<1>{});
}
// v7: aligned_size_t<128>: still cp.async.cg 16 - the copy unit is capped at 16 bytes
__global__ void copy_v7_align128_kernel(const unsigned char* src, uint4* out, std::size_t size, int dst_off) {
  stage_slices(src, out, size, dst_off, IssueAligned128{});
}

// ---------------------------------------------------------------------------------------------
// Launchers, with the run-time alignment check
// ---------------------------------------------------------------------------------------------
using KernelFn = void (*)(const unsigned char*, uint4*, std::size_t, int);

/// Largest power of two up to 128 that divides both the global source address and the shared
/// offset (the shared slots are 128-byte aligned, so the offset decides the shared side).
inline int address_alignment(const void* src, int dst_off) {
  const std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(src) | static_cast<unsigned>(dst_off);
  int a = 1;
  while (a < 128 && bits % (2 * a) == 0) a *= 2;
  return a;
}

/// The widest copy those addresses allow: 16, 8, 4, or 1 (the byte loop; cp.async has no
/// 2-byte form). The slice sizes are multiples of 16, so only the addresses limit it.
inline int widest_alignment(const void* src, int dst_off) {
  // EXERCISE-BEGIN: return the widest cp.async size that address_alignment(src, dst_off) allows: 16, 8 or 4, else 1 (the byte loop)
  const int a = address_alignment(src, dst_off);
  return a >= 16 ? 16 : a >= 8 ? 8 : a >= 4 ? 4 : 1;
  // EXERCISE-STUB: (void)src, (void)dst_off;
  // EXERCISE-STUB: return 16;  // always promising 16 is what this function must not do
  // EXERCISE-END
}

/// The run-time check: does the promise `promised` hold for these addresses? Prints one clear
/// error line and returns false when it does not (the caller then does not launch).
inline bool alignment_ok(const void* src, int dst_off, int promised, const char* what) {
  if (address_alignment(src, dst_off) >= promised) return true;
  const int have = widest_alignment(src, dst_off);
  std::fprintf(stderr,
               "ch09: error: %s promises %d-byte alignment, but the source address %p is %d mod %d "
               "and the shared offset is %d: only %d-byte copies are legal. Not launching (the "
               "copy would be undefined behaviour).\n",
               what, promised, src, static_cast<int>(reinterpret_cast<std::uintptr_t>(src) % promised),
               promised, dst_off, have);
  return false;
}

/// Launch `kernel`, which promises `promised` bytes of alignment, after checking the promise.
inline void launch_copy(KernelFn kernel, int promised, const char* what, const unsigned char* src,
                        uint4* out, std::size_t size, int dst_off, int sm_count, cudaStream_t s) {
  if (!alignment_ok(src, dst_off, promised, what)) return;  // the output keeps its poison
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count);
  kernel<<<grid, THREADS, 0, s>>>(src, out, size, dst_off);
}

inline void launch_copy_v0(const unsigned char* src, uint4* out, std::size_t n, int off, int sms, cudaStream_t s) {
  launch_copy(copy_v0_align16_kernel, 16, "aligned_size_t<16>", src, out, n, off, sms, s);
}
inline void launch_copy_v1(const unsigned char* src, uint4* out, std::size_t n, int off, int sms, cudaStream_t s) {
  launch_copy(copy_v1_sizet_chunk16_kernel, 16, "size_t on Chunk16*", src, out, n, off, sms, s);
}
inline void launch_copy_v2(const unsigned char* src, uint4* out, std::size_t n, int off, int sms, cudaStream_t s) {
  launch_copy(copy_v2_sizet_bytes16_kernel, 1, "size_t on Bytes16*", src, out, n, off, sms, s);
}
inline void launch_copy_v3(const unsigned char* src, uint4* out, std::size_t n, int off, int sms, cudaStream_t s) {
  launch_copy(copy_v3_sizet_char_kernel, 1, "size_t on unsigned char*", src, out, n, off, sms, s);
}
inline void launch_copy_v4(const unsigned char* src, uint4* out, std::size_t n, int off, int sms, cudaStream_t s) {
  launch_copy(copy_v4_align8_kernel, 8, "aligned_size_t<8>", src, out, n, off, sms, s);
}
inline void launch_copy_v5(const unsigned char* src, uint4* out, std::size_t n, int off, int sms, cudaStream_t s) {
  launch_copy(copy_v5_align4_kernel, 4, "aligned_size_t<4>", src, out, n, off, sms, s);
}
inline void launch_copy_v6(const unsigned char* src, uint4* out, std::size_t n, int off, int sms, cudaStream_t s) {
  launch_copy(copy_v6_align1_kernel, 1, "aligned_size_t<1>", src, out, n, off, sms, s);
}
inline void launch_copy_v7(const unsigned char* src, uint4* out, std::size_t n, int off, int sms, cudaStream_t s) {
  launch_copy(copy_v7_align128_kernel, 128, "aligned_size_t<128>", src, out, n, off, sms, s);
}
/// v8: the widest legal copy for whatever offsets it gets - what a library entry point should do.
inline void launch_copy_v8(const unsigned char* src, uint4* out, std::size_t n, int off, int sms, cudaStream_t s) {
  switch (widest_alignment(src, off)) {
    case 16: launch_copy_v0(src, out, n, off, sms, s); break;
    case 8: launch_copy_v4(src, out, n, off, sms, s); break;
    case 4: launch_copy_v5(src, out, n, off, sms, s); break;
    default: launch_copy_v6(src, out, n, off, sms, s); break;
  }
}

// ---------------------------------------------------------------------------------------------
// The problem: out[i] = in[src_off + i] for i < size; the input has MAX_OFFSET spare bytes.
// ---------------------------------------------------------------------------------------------
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in((cfg.size + MAX_OFFSET) / 4), d_out(cfg.size / 16) {
    h_in.resize(d_in.size());
    tut::fill_unique_words(h_in.data(), h_in.size(), cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  /// `reference` is the source offset in bytes the variant read from.
  tut::VerifyResult verify(cudaStream_t s, int src_off) {
    const std::vector<uint4> got = d_out.download(s);
    std::vector<std::uint32_t> want(n_words);
    std::memcpy(want.data(), reinterpret_cast<const unsigned char*>(h_in.data()) + src_off, cfg.size);
    return tut::compare_exact_words(reinterpret_cast<const std::uint32_t*>(got.data()), want.data(),
                                    n_words);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }

  const unsigned char* src(int src_off) const {
    return reinterpret_cast<const unsigned char*>(d_in.data()) + src_off;
  }
  int sms() const { return cfg.device.sm_count; }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in;
  tut::DeviceBuffer<uint4> d_out;
  std::vector<std::uint32_t> h_in;
};

// ---------------------------------------------------------------------------------------------
// The variant registry. `.reference` carries the source offset, for the check.
// ---------------------------------------------------------------------------------------------
using Launcher = void (*)(const unsigned char*, uint4*, std::size_t, int, int, cudaStream_t);

inline tut::Variant<Problem> make_variant(const std::string& key, const std::string& name,
                                          const std::string& desc, Launcher launch, int src_off,
                                          int dst_off) {
  tut::Variant<Problem> v{key, name, desc, [=](Problem& p, cudaStream_t s) {
                            launch(p.src(src_off), p.d_out.data(), p.cfg.size, dst_off, p.sms(), s);
                          }};
  v.reference = src_off;
  return v;
}

inline std::vector<tut::Variant<Problem>> variants() {
  std::vector<tut::Variant<Problem>> v;
  v.push_back(make_variant("v0_align16", "v0 aligned_size_t<16>", "cp.async.cg 16 B (LDGSTS.E.BYPASS.128)",
                           launch_copy_v0, 0, 0));
  v.push_back(make_variant("v1_sizet_chunk16", "v1 size_t, __align__(16) T",
                           "plain size_t on Chunk16*: alignof(T)=16 gives cp.async.cg 16",
                           launch_copy_v1, 0, 0));
  v.push_back(make_variant("v2_sizet_bytes16", "v2 size_t, 16-byte T align 1",
                           "plain size_t on Bytes16*: alignof(T)=1 gives the synchronous byte loop",
                           launch_copy_v2, 0, 0));
  v.push_back(make_variant("v3_sizet_char", "v3 size_t, char*",
                           "plain size_t on unsigned char*: the synchronous byte loop", launch_copy_v3,
                           0, 0));
  v.push_back(make_variant("v4_align8", "v4 aligned_size_t<8>", "cp.async.ca 8 B (LDGSTS.E.64)",
                           launch_copy_v4, 0, 0));
  v.push_back(make_variant("v5_align4", "v5 aligned_size_t<4>", "cp.async.ca 4 B (LDGSTS.E)",
                           launch_copy_v5, 0, 0));
  v.push_back(make_variant("v6_align1", "v6 aligned_size_t<1>",
                           "a promise of 1 byte: the synchronous byte loop", launch_copy_v6, 0, 0));
  v.push_back(make_variant("v7_align128", "v7 aligned_size_t<128>",
                           "the seed's 128-byte promise: the same cp.async.cg 16 as v0",
                           launch_copy_v7, 0, 0));
  for (int off : {1, 4, 8, 16, 128}) {
    const std::string o = std::to_string(off);
    v.push_back(make_variant("v8_src_off" + o, "v8 widest, src +" + o,
                             "source at byte offset " + o + "; widest legal copy chosen at run time",
                             launch_copy_v8, off, 0));
  }
  for (int off : {1, 4, 8, 16, 128}) {
    const std::string o = std::to_string(off);
    v.push_back(make_variant("v8_dst_off" + o, "v8 widest, dst +" + o,
                             "shared destination at byte offset " + o + "; widest legal copy",
                             launch_copy_v8, 0, off));
  }
  v.push_back(make_variant("v9_lie16_src_off4", "v9 BROKEN: <16> on src +4",
                           "negative: promises 16 B on a 4-aligned source; the run-time check "
                           "refuses to launch, so the output keeps its poison",
                           launch_copy_v0, 4, 0));
  v.back().negative = true;
  return v;
}

}  // namespace ch09
