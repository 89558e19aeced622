/// @file kernels.cuh
/// @brief Chapter 10's lesson kernels: what cuda::memcpy_async requires of the element type
///        (AoS with and without an alignment promise, SoA planes, a type with a copy
///        constructor), the slice protocol they share, then the launcher.
///
/// memcpy_async moves BYTES (cp.async, or a load/store loop); it never runs a copy constructor.
/// So the element type must be trivially copyable. CCCL 3.0 enforces that in the cuda::barrier
/// overloads (a static_assert; compile_fail.cu, CASE_BARRIER) but not in the cuda::pipeline
/// ones: a type with a user-defined copy constructor compiles there, its bytes are copied, and
/// its constructor is silently skipped (v3). The fix: keep the data plain (Particle, checked by
/// static_assert) and put the behaviour in functions (advance()); checked_memcpy_async in
/// particle.cuh adds the missing static_assert to the pipeline path (compile_fail.cu,
/// CASE_GUARD).
///
/// The type's alignment matters too: Particle is 6 floats (alignof 4), so a plain size_t gives
/// 4-byte cp.async.ca; an aligned_size_t<16> promise, or a struct-of-arrays layout with
/// 16-byte-aligned planes, gives 16-byte cp.async.cg.
///
/// Workload: advance n particles by dt = 0.5 (pos += dt * vel). Each warp stages 32 particles
/// (768 B) per tile in a 4-slot per-thread pipeline, updates them in shared memory, and writes
/// the slice back with 16-byte stores - the same store path for both layouts.
/// Minimum compute capability: 8.0 (cp.async).
#pragma once

#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/launch.cuh"
#include "common/ring.cuh"
#include "particle.cuh"

namespace ch10 {
namespace cg = cooperative_groups;

constexpr int THREADS = 256;
constexpr int WARP = 32;
constexpr int FIELDS = 6;                      // pos[3], vel[3]
constexpr int TILE_PARTICLES = THREADS;        // one particle per thread per tile
constexpr int SLICE_PARTICLES = WARP;          // 32 particles = 768 B per warp
constexpr int SLICE_FLOATS = SLICE_PARTICLES * FIELDS;
constexpr int STAGES = 4;
constexpr float DT = 0.5f;                     // exact: pos + 0.5 * vel is exact in fp32
constexpr std::size_t PARTICLE_MULTIPLE = 4;   // n % 4 == 0: every plane 16-byte aligned

using Pipe = cuda::pipeline<cuda::thread_scope_thread>;
using Warp = cg::thread_block_tile<WARP>;

__host__ __device__ inline int slice_count(std::size_t n, std::size_t base) {
  if (base >= n) return 0;
  const std::size_t left = n - base;
  return static_cast<int>(left < SLICE_PARTICLES ? left : SLICE_PARTICLES);
}

// ---------------------------------------------------------------------------------------------
// Layouts. The data is one float buffer of 6n floats: AoS is [n][6], SoA is [6][n]. In shared
// memory a warp slice is 192 floats: AoS [32][6], SoA [6][32]. A layout stages a slice
// (issue), advances one particle in shared memory, and stores the slice.
// ---------------------------------------------------------------------------------------------
struct AoS {  // the update and the store; the AoS variants differ only in issue()
  __device__ static void advance_one(float* s, int lane) {
    float* p = s + lane * FIELDS;
    advance(p, p + 3, DT);
  }
  __device__ static void store(float* d_out, const float* s, std::size_t, std::size_t base, int m,
                               int lane) {
    const int quads = m * FIELDS / 4;  // 6m floats = 1.5 m uint4 (m % 4 == 0)
    uint4* out = reinterpret_cast<uint4*>(d_out + base * FIELDS);
    for (int i = lane; i < quads; i += WARP) out[i] = reinterpret_cast<const uint4*>(s)[i];
  }
};
// v0: plain size_t: the promise is alignof(Particle) = 4 -> cp.async.ca 4 B
struct AoSSizeT : AoS {
  __device__ static void issue(const Warp& warp, float* s, const float* d_in, std::size_t,
                               std::size_t base, int m, Pipe& pipe) {
    checked_memcpy_async(warp, reinterpret_cast<Particle*>(s),
                         reinterpret_cast<const Particle*>(d_in + base * FIELDS),
                         static_cast<std::size_t>(m) * sizeof(Particle), pipe);
  }
};
// v1: aligned_size_t<16>: a slice is 24 m bytes at a multiple of 96 bytes (m % 4 == 0)
struct AoSAlign16 : AoS {
  __device__ static void issue(const Warp& warp, float* s, const float* d_in, std::size_t,
                               std::size_t base, int m, Pipe& pipe) {
    checked_memcpy_async(warp, reinterpret_cast<Particle*>(s),
                         reinterpret_cast<const Particle*>(d_in + base * FIELDS),
                         cuda::aligned_size_t<16>(static_cast<std::size_t>(m) * sizeof(Particle)),
                         pipe);
  }
};
// v3: ParticleWithCtor through the UNCHECKED pipeline overload: it compiles, copies the bytes
// with cp.async.ca 4 B (alignof 4), and never calls the copy constructor.
struct AoSCtorUnchecked : AoS {
  __device__ static void issue(const Warp& warp, float* s, const float* d_in, std::size_t,
                               std::size_t base, int m, Pipe& pipe) {
    cuda::memcpy_async(warp, reinterpret_cast<ParticleWithCtor*>(s),
                       reinterpret_cast<const ParticleWithCtor*>(d_in + base * FIELDS),
                       static_cast<std::size_t>(m) * sizeof(ParticleWithCtor), pipe);
  }
};
// v2: six planes, each copied with a 16-byte promise (plane j of the slice is 4m bytes)
struct SoA {
  __device__ static void issue(const Warp& warp, float* s, const float* d_in, std::size_t n,
                               std::size_t base, int m, Pipe& pipe) {
    // EXERCISE-BEGIN: stage the slice's m particles plane by plane (plane j of the input starts j * n floats in, plane j of the slot j * SLICE_PARTICLES floats in), each as one warp-wide checked copy that promises 16-byte alignment
    const std::size_t bytes = static_cast<std::size_t>(m) * sizeof(float);  // 4 m, multiple of 16
    for (int j = 0; j < FIELDS; ++j)
      checked_memcpy_async(warp, s + j * SLICE_PARTICLES, d_in + j * n + base,
                           cuda::aligned_size_t<16>(bytes), pipe);
    // EXERCISE-STUB: (void)warp, (void)s, (void)d_in, (void)n, (void)base, (void)m, (void)pipe;
    // EXERCISE-END
  }
  __device__ static void advance_one(float* s, int lane) {
    float pos[3], vel[3];
    // EXERCISE-BEGIN: gather this lane's particle from the six staged planes, advance it, and write its position back to the planes
    for (int i = 0; i < 3; ++i) {
      pos[i] = s[i * SLICE_PARTICLES + lane];
      vel[i] = s[(i + 3) * SLICE_PARTICLES + lane];
    }
    advance(pos, vel, DT);
    for (int i = 0; i < 3; ++i) s[i * SLICE_PARTICLES + lane] = pos[i];
    // EXERCISE-STUB: (void)s, (void)lane, (void)pos, (void)vel;
    // EXERCISE-END
  }
  __device__ static void store(float* d_out, const float* s, std::size_t n, std::size_t base, int m,
                               int lane) {
    const int per_plane = m / 4;  // uint4 per plane
    for (int i = lane; i < FIELDS * per_plane; i += WARP) {
      const int j = i / per_plane, k = i % per_plane;
      reinterpret_cast<uint4*>(d_out + j * n + base)[k] =
          reinterpret_cast<const uint4*>(s + j * SLICE_PARTICLES)[k];
    }
  }
};

// ---------------------------------------------------------------------------------------------
// The protocol: a 4-slot per-thread pipeline of warp slices; each warp owns its slices, so
// __syncwarp is the only barrier.
// ---------------------------------------------------------------------------------------------
template <class Layout>
__device__ void advance_slices(const float* __restrict__ d_in, float* __restrict__ d_out,
                               std::size_t n) {
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
      if (m > 0) Layout::issue(warp, &s_slots[slot][w * SLICE_FLOATS], d_in, n, base, m, pipe);
    }
    pipe.producer_commit();  // one group per lane per slot
  };

  for (int s = 0; s < STAGES; ++s) stage(tut::block_tile(s), s);  // this block's tiles 0..3
  for (std::size_t k = 0;; ++k) {
    const std::size_t tile = tut::block_tile(k);
    if (tile >= num_tiles) break;
    const int slot = static_cast<int>(k % STAGES);
    float* s = &s_slots[slot][w * SLICE_FLOATS];
    const std::size_t base = tile * TILE_PARTICLES + std::size_t(w) * SLICE_PARTICLES;
    const int m = slice_count(n, base);
    cuda::pipeline_consumer_wait_prior<STAGES - 1>(pipe);  // my copies into `slot` landed
    __syncwarp();  // everyone's copies landed: the slice is complete and visible to the warp
    if (lane < m) Layout::advance_one(s, lane);
    __syncwarp();  // the updated slice is complete before the 16-byte stores read it
    Layout::store(d_out, s, n, base, m, lane);
    __syncwarp();  // the slice is consumed before any lane refills the slot
    stage(tile + std::size_t(STAGES) * gridDim.x, slot);
  }
}

using AdvanceKernel = void (*)(const float*, float*, std::size_t);

/// The layout a kernel reads and writes, which is the CPU reference its output must match (a
/// variant's `.reference`): AoS [n][6] floats or SoA [6][n].
enum Reference : int { kAoS = 0, kSoA = 1 };

__global__ void advance_v0_aos_sizet_kernel(const float* in, float* out, std::size_t n) {
  advance_slices<AoSSizeT>(in, out, n);
}
__global__ void advance_v1_aos_align16_kernel(const float* in, float* out, std::size_t n) {
  advance_slices<AoSAlign16>(in, out, n);
}
__global__ void advance_v2_soa_align16_kernel(const float* in, float* out, std::size_t n) {
  advance_slices<SoA>(in, out, n);
}
__global__ void advance_v3_ctor_unchecked_kernel(const float* in, float* out, std::size_t n) {
  advance_slices<AoSCtorUnchecked>(in, out, n);
}

/// Launch `kernel` on a persistent grid at full occupancy.
inline void launch_advance(AdvanceKernel kernel, const float* in, float* out, std::size_t n,
                           int sm_count, cudaStream_t s) {
  const unsigned grid = tut::persistent_grid(kernel, THREADS, sm_count);
  kernel<<<grid, THREADS, 0, s>>>(in, out, n);
}

}  // namespace ch10
