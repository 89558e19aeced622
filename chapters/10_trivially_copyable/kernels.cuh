// Chapter 10: trivially copyable types - what cuda::memcpy_async requires of the element type
//
// What it teaches: memcpy_async moves BYTES (cp.async or a byte loop); it never runs a copy
// constructor. So the element type must be trivially copyable, and CCCL 3.0 enforces that in
// only some overloads: the cuda::barrier overloads static_assert it (compile_fail_barrier.cu
// shows the diagnostic), the cuda::pipeline overloads do not - a type with a user-defined copy
// constructor compiles there, its bytes are copied, and its constructor is silently skipped
// (v3 and the negative v9 show it). The fix is to keep the data plain (Particle, checked by
// static_assert) and move the behaviour into functions (advance()); checked_memcpy_async adds
// the missing static_assert to the pipeline path (compile_fail_guard.cu).
//
// A type's alignment matters too: Particle is 6 floats (alignof 4), so a plain size_t makes
// memcpy_async emit 4-byte cp.async.ca; a cuda::aligned_size_t<16> promise, or a
// struct-of-arrays layout with 16-byte-aligned planes, gets 16-byte cp.async.cg.
//
// Workload: advance n particles by dt = 0.5 (pos += dt * vel). Each warp stages 32 particles
// (768 B) per tile in a 4-slot per-thread pipeline, updates them in shared memory, and writes
// the slice back with 16-byte stores - the same store path for both layouts.
//
// Minimum compute capability: 8.0 (cp.async). Built for sm_80 and sm_90.
// Run:    build/bin/ch10_trivially_copyable [--size=1G] [--list]
// Output: the harness table (median/min ms, GB/s, % of the memcpy ceiling, vs v0, check).
#pragma once

#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "chapters/10_trivially_copyable/particle.cuh"  // from the root: the exercise copy finds it too

namespace ch10 {
namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------
constexpr int THREADS = 256;
constexpr int WARP = 32;
constexpr int FIELDS = 6;                          // pos[3], vel[3]
constexpr int TILE_PARTICLES = THREADS;            // one particle per thread per tile
constexpr int SLICE_PARTICLES = WARP;              // 32 particles = 768 B per warp
constexpr int SLICE_FLOATS = SLICE_PARTICLES * FIELDS;
constexpr int STAGES = 4;
constexpr float DT = 0.5f;                         // exact: pos + 0.5 * vel is exact in fp32
constexpr std::size_t PARTICLE_MULTIPLE = 4;       // n % 4 == 0: every plane 16-byte aligned

using Pipe = cuda::pipeline<cuda::thread_scope_thread>;
using Warp = cg::thread_block_tile<WARP>;

__host__ __device__ inline int slice_count(std::size_t n, std::size_t base) {
  if (base >= n) return 0;
  const std::size_t left = n - base;
  return static_cast<int>(left < SLICE_PARTICLES ? left : SLICE_PARTICLES);
}

// ---------------------------------------------------------------------------------------------
// Layouts. Each knows how to stage a warp slice, advance it in shared memory, and store it.
// The data lives in one float buffer of 6n floats: AoS is [n][6], SoA is [6][n].
// In shared memory a warp slice is 192 floats: AoS [32][6], SoA [6][32].
// ---------------------------------------------------------------------------------------------
/// AoS with element type T. The copy is memcpy_async on T*; Size picks the promise.
template <class T, bool PROMISE16, bool CHECKED>
struct AoS {
  __device__ void issue(const Warp& warp, float* s, const float* d_in, std::size_t, std::size_t base,
                        int m, Pipe& pipe) const {
    T* dst = reinterpret_cast<T*>(s);  // the bytes of m objects of type T, never constructed
    const T* src = reinterpret_cast<const T*>(d_in + base * FIELDS);
    const std::size_t bytes = static_cast<std::size_t>(m) * sizeof(T);  // 24 m, a multiple of 96
    if constexpr (CHECKED) {
      if constexpr (PROMISE16) checked_memcpy_async(warp, dst, src, cuda::aligned_size_t<16>(bytes), pipe);
      else checked_memcpy_async(warp, dst, src, bytes, pipe);
    } else {
      if constexpr (PROMISE16) cuda::memcpy_async(warp, dst, src, cuda::aligned_size_t<16>(bytes), pipe);
      else cuda::memcpy_async(warp, dst, src, bytes, pipe);  // alignof(T) = 4: cp.async.ca 4
    }
  }
  __device__ void advance_one(float* s, int lane) const {
    float* p = s + lane * FIELDS;
    advance(p, p + 3, DT);
  }
  __device__ void store(float* d_out, const float* s, std::size_t, std::size_t base, int m,
                        int lane) const {
    const int quads = m * FIELDS / 4;  // 6m floats = 1.5 m uint4 (m % 4 == 0)
    uint4* out = reinterpret_cast<uint4*>(d_out + base * FIELDS);
    const uint4* in = reinterpret_cast<const uint4*>(s);
    for (int i = lane; i < quads; i += WARP) out[i] = in[i];
  }
};

/// SoA: six planes, each copied with a 16-byte promise (plane j of the slice is 4m bytes).
struct SoA {
  __device__ void issue(const Warp& warp, float* s, const float* d_in, std::size_t n,
                        std::size_t base, int m, Pipe& pipe) const {
    // EXERCISE-BEGIN: stage the six planes of this slice: plane j is m floats at d_in + j * n + base, copied to s + j * SLICE_PARTICLES with checked_memcpy_async and a 16-byte promise
    const std::size_t bytes = static_cast<std::size_t>(m) * sizeof(float);  // 4 m, multiple of 16
    for (int j = 0; j < FIELDS; ++j)
      checked_memcpy_async(warp, s + j * SLICE_PARTICLES, d_in + j * n + base,
                           cuda::aligned_size_t<16>(bytes), pipe);
    // EXERCISE-STUB: (void)warp, (void)s, (void)d_in, (void)n, (void)base, (void)m, (void)pipe;
    // EXERCISE-END
  }
  __device__ void advance_one(float* s, int lane) const {
    float pos[3], vel[3];
    for (int i = 0; i < 3; ++i) {
      pos[i] = s[i * SLICE_PARTICLES + lane];
      vel[i] = s[(i + 3) * SLICE_PARTICLES + lane];
    }
    advance(pos, vel, DT);
    for (int i = 0; i < 3; ++i) s[i * SLICE_PARTICLES + lane] = pos[i];
  }
  __device__ void store(float* d_out, const float* s, std::size_t n, std::size_t base, int m,
                        int lane) const {
    const int per_plane = m / 4;  // uint4 per plane
    for (int i = lane; i < FIELDS * per_plane; i += WARP) {
      const int j = i / per_plane, k = i % per_plane;
      reinterpret_cast<uint4*>(d_out + j * n + base)[k] =
          reinterpret_cast<const uint4*>(s + j * SLICE_PARTICLES)[k];
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The shared driver: 4-slot pipeline of warp slices; only __syncwarp (each warp owns its slice)
// ---------------------------------------------------------------------------------------------
template <class Layout>
__device__ void advance_slices(const float* __restrict__ d_in, float* __restrict__ d_out,
                               std::size_t n, Layout layout) {
  __shared__ alignas(16) float s_slots[STAGES][TILE_PARTICLES * FIELDS];  // [4][1536] = 24 KiB
  const Warp warp = cg::tiled_partition<WARP>(cg::this_thread_block());
  const int lane = static_cast<int>(warp.thread_rank());
  const int w = threadIdx.x / WARP;
  const std::size_t num_tiles = (n + TILE_PARTICLES - 1) / TILE_PARTICLES;
  Pipe pipe = cuda::make_pipeline();

  auto stage = [&](std::size_t tile, int slot) {
    if (tile < num_tiles) {
      const std::size_t base = tile * TILE_PARTICLES + std::size_t(w) * SLICE_PARTICLES;
      const int m = slice_count(n, base);  // warp-uniform, a multiple of 4
      if (m > 0) layout.issue(warp, &s_slots[slot][w * SLICE_FLOATS], d_in, n, base, m, pipe);
    }
    pipe.producer_commit();  // one group per lane per slot
  };

  // prologue: fill all STAGES slots
  for (int s = 0; s < STAGES; ++s) stage(blockIdx.x + std::size_t(s) * gridDim.x, s);
  // steady state
  for (std::size_t k = 0;; ++k) {
    const std::size_t tile = blockIdx.x + k * gridDim.x;
    if (tile >= num_tiles) break;
    const int slot = static_cast<int>(k % STAGES);
    float* s = &s_slots[slot][w * SLICE_FLOATS];
    const std::size_t base = tile * TILE_PARTICLES + std::size_t(w) * SLICE_PARTICLES;
    const int m = slice_count(n, base);
    cuda::pipeline_consumer_wait_prior<STAGES - 1>(pipe);  // my copies into `slot` landed
    __syncwarp();  // everyone's copies landed: the slice is complete and visible to the warp
    if (lane < m) layout.advance_one(s, lane);
    __syncwarp();  // the updated slice is complete before the 16-byte stores read it
    layout.store(d_out, s, n, base, m, lane);
    __syncwarp();  // the slice is consumed before any lane refills the slot
    stage(tile + std::size_t(STAGES) * gridDim.x, slot);
  }
}

// v0: AoS Particle, plain size_t: the promise is alignof(Particle) = 4 -> cp.async.ca 4 B
__global__ void advance_v0_aos_sizet_kernel(const float* in, float* out, std::size_t n) {
  advance_slices(in, out, n, AoS<Particle, false, true>{});
}
// v1: AoS Particle, aligned_size_t<16>: the slice (24 m bytes, m % 4 == 0) is 16-aligned
__global__ void advance_v1_aos_align16_kernel(const float* in, float* out, std::size_t n) {
  advance_slices(in, out, n, AoS<Particle, true, true>{});
}
// v2: SoA, six planes, aligned_size_t<16> each
__global__ void advance_v2_soa_align16_kernel(const float* in, float* out, std::size_t n) {
  advance_slices(in, out, n, SoA{});
}
// v3: AoS ParticleWithCtor through the UNCHECKED pipeline overload: it compiles, copies bytes
// with cp.async.ca 4 B (alignof 4), and never calls the copy constructor.
__global__ void advance_v3_ctor_unchecked_kernel(const float* in, float* out, std::size_t n) {
  advance_slices(in, out, n, AoS<ParticleWithCtor, false, false>{});
}

// ---------------------------------------------------------------------------------------------
// Launchers (full occupancy, persistent grid)
// ---------------------------------------------------------------------------------------------
using KernelFn = void (*)(const float*, float*, std::size_t);
inline void launch_advance(KernelFn kernel, const float* in, float* out, std::size_t n, int sms,
                           cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sms);
  kernel<<<grid, THREADS, 0, s>>>(in, out, n);
}
inline void launch_advance_v0(const float* i, float* o, std::size_t n, int sms, cudaStream_t s) {
  launch_advance(advance_v0_aos_sizet_kernel, i, o, n, sms, s);
}
inline void launch_advance_v1(const float* i, float* o, std::size_t n, int sms, cudaStream_t s) {
  launch_advance(advance_v1_aos_align16_kernel, i, o, n, sms, s);
}
inline void launch_advance_v2(const float* i, float* o, std::size_t n, int sms, cudaStream_t s) {
  launch_advance(advance_v2_soa_align16_kernel, i, o, n, sms, s);
}
inline void launch_advance_v3(const float* i, float* o, std::size_t n, int sms, cudaStream_t s) {
  launch_advance(advance_v3_ctor_unchecked_kernel, i, o, n, sms, s);
}

// ---------------------------------------------------------------------------------------------
// CPU references
// ---------------------------------------------------------------------------------------------
enum Reference : int { kAoS = 0, kSoA = 1, kAoSCopyCtor = 2 };

/// out = in with pos += DT * vel, for the layout `ref`. kAoSCopyCtor is what the output would
/// be if each particle went through ParticleWithCtor's copy constructor (velocity zeroed).
inline std::vector<float> reference_advance(const std::vector<float>& in, int ref) {
  const std::size_t n = in.size() / FIELDS;
  std::vector<float> out(in.size());
  for (std::size_t i = 0; i < n; ++i) {
    float p[FIELDS];
    for (int j = 0; j < FIELDS; ++j) p[j] = ref == kSoA ? in[j * n + i] : in[i * FIELDS + j];
    if (ref == kAoSCopyCtor)
      for (int j = 3; j < FIELDS; ++j) p[j] = 0.0f;
    advance(p, p + 3, DT);
    for (int j = 0; j < FIELDS; ++j) (ref == kSoA ? out[j * n + i] : out[i * FIELDS + j]) = p[j];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: n particles (size / 24 bytes, n % 4 == 0) in and out. One float buffer each,
// read as AoS or SoA by the variant.
// ---------------------------------------------------------------------------------------------
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n(cfg.size / sizeof(Particle)), d_in(n * FIELDS), d_out(n * FIELDS) {
    h_in.resize(n * FIELDS);
    tut::fill_unique_exact_floats(h_in.data(), h_in.size(), cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int ref) {
    const std::vector<float> got = d_out.download(s);
    std::vector<float>& want = wants[ref];
    if (want.empty()) want = reference_advance(h_in, ref);
    return tut::compare_exact_floats(got.data(), want.data(), got.size());
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const {
    return std::to_string(n) + " particles (" + tut::format_bytes(double(cfg.size)) + ") per buffer";
  }
  int sms() const { return cfg.device.sm_count; }

  tut::RunConfig cfg;
  std::size_t n;
  tut::DeviceBuffer<float> d_in, d_out;
  std::vector<float> h_in;
  std::vector<float> wants[3];
};

// ---------------------------------------------------------------------------------------------
// The variant registry
// ---------------------------------------------------------------------------------------------
using Launcher = void (*)(const float*, float*, std::size_t, int, cudaStream_t);

inline tut::Variant<Problem> make_variant(const std::string& key, const std::string& name,
                                          const std::string& desc, Launcher launch, int ref) {
  tut::Variant<Problem> v{key, name, desc, [launch](Problem& p, cudaStream_t s) {
                            launch(p.d_in.data(), p.d_out.data(), p.n, p.sms(), s);
                          }};
  v.reference = ref;
  return v;
}

inline std::vector<tut::Variant<Problem>> variants() {
  std::vector<tut::Variant<Problem>> v;
  v.push_back(make_variant("v0_aos_sizet", "v0 AoS, size_t (align 4)",
                           "plain-data Particle, plain size_t: cp.async.ca 4 B", launch_advance_v0, kAoS));
  v.push_back(make_variant("v1_aos_align16", "v1 AoS, aligned_size_t<16>",
                           "plain-data Particle, 16-byte promise: cp.async.cg 16 B",
                           launch_advance_v1, kAoS));
  v.push_back(make_variant("v2_soa_align16", "v2 SoA planes, <16>",
                           "six float planes, each copied with a 16-byte promise", launch_advance_v2,
                           kSoA));
  v.push_back(make_variant("v3_ctor_unchecked", "v3 AoS with copy ctor",
                           "ParticleWithCtor via the unchecked pipeline overload: compiles, copies "
                           "bytes, skips the constructor",
                           launch_advance_v3, kAoS));
  v.push_back(make_variant("v9_expects_copy_ctor", "v9 BROKEN: expects copy ctor",
                           "negative: v3 checked against copy-constructor semantics (velocity "
                           "zeroed); memcpy_async never runs the constructor, so it FAILS",
                           launch_advance_v3, kAoSCopyCtor));
  v.back().negative = true;
  return v;
}

}  // namespace ch10
