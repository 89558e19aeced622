/// @file particle.cuh
/// @brief Chapter 10's particle types (the "before" with a copy constructor, the plain-data
///        "after"), advance(), and checked_memcpy_async: kept apart from the kernels so the
///        compile-fail tests can include them without the harness. See kernels.cuh for the
///        lesson.
#pragma once

#include <cuda/pipeline>

#include <cstddef>
#include <type_traits>

namespace ch10 {

// The "before": data and behaviour in one type. The user-defined copy constructor makes the
// type NOT trivially copyable - and its body does something a byte copy cannot: it copies the
// position only and leaves the velocity zero ("recomputed later").
struct ParticleWithCtor {
  float pos[3];
  float vel[3];
  __host__ __device__ ParticleWithCtor() : pos{}, vel{} {}
  __host__ __device__ ParticleWithCtor(const ParticleWithCtor& other) : pos{}, vel{} {
    for (int i = 0; i < 3; ++i) pos[i] = other.pos[i];
  }
  __host__ __device__ ParticleWithCtor& operator=(const ParticleWithCtor& other) {
    for (int i = 0; i < 3; ++i) pos[i] = other.pos[i];
    return *this;
  }
};
static_assert(!std::is_trivially_copyable<ParticleWithCtor>::value,
              "the 'before' type is deliberately not trivially copyable");

// The "after": plain data (an aggregate: trivially copyable, standard layout) ...
struct Particle {
  float pos[3];
  float vel[3];
};
static_assert(std::is_trivially_copyable<Particle>::value, "Particle must stay plain data");
static_assert(sizeof(Particle) == 24 && alignof(Particle) == 4, "6 floats, alignment 4");

// ... and the behaviour as a free function that works on it.
__host__ __device__ inline void advance(float* pos, const float* vel, float dt) {
  for (int i = 0; i < 3; ++i) pos[i] += dt * vel[i];
}

/// @brief cuda::memcpy_async into a thread-scope pipeline, refusing types that are not
///        trivially copyable (the pipeline overloads do not check; the barrier overloads do).
template <class Group, class T, class Size>
__device__ void checked_memcpy_async(const Group& group, T* dst, const T* src, Size size,
                                     cuda::pipeline<cuda::thread_scope_thread>& pipe) {
  static_assert(std::is_trivially_copyable<T>::value,
                "checked_memcpy_async: the element type must be trivially copyable");
  cuda::memcpy_async(group, dst, src, size, pipe);
}

}  // namespace ch10
