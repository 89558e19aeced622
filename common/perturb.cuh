/// @file perturb.cuh
/// @brief Seeded delays at the points where ordering matters, in the TUTORIAL_PERTURB build.
///
/// A race that the H200 happens to order (a slot refilled before its last reader is done, a
/// `wgmma.wait_group` that lets one group too many run on) passes every bit-exact check in a
/// normal build: the scheduler rarely parks the one warp that would expose it. Configured with
/// `-DTUTORIAL_PERTURB=ON`, every perturbation point below sleeps a few microseconds in a seeded
/// subset of (block, warp, iteration) triples, as a warp the scheduler parks would, so such a
/// race shows up as a mismatch. A correct protocol is unaffected (it waits for what it needs,
/// however late it comes); a broken one fails. In the normal build each point compiles to
/// nothing.
///
/// The points: after a wait returns (bounded_wait.cuh's wait_or_report calls it), before an
/// arrive, before a slot release (the consumers' "empty" arrive), before a TMA issue.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_check.cuh"

namespace tut {

/// @brief Where in the protocol a perturbation point sits (part of the seeded choice, so two
///        points of one iteration are delayed independently).
enum class Perturb : std::uint32_t {
  kAfterWait = 1,       ///< a wait just returned: the data is there, the reader is late
  kBeforeArrive = 2,    ///< a producer-side arrive (a hand-off) comes late
  kBeforeRelease = 3,   ///< a consumer's "slot is free" comes late
  kBeforeTmaIssue = 4,  ///< the copy of the next tile is issued late
};

#if defined(TUTORIAL_PERTURB)
/// @brief The seed of this run's delays (set from --seed by the harness; 0: no delays).
static __device__ std::uint32_t perturb_seed = 0;

/// @brief Host: choose this run's delays (called by run_chapter before every checked launch).
inline void set_perturb_seed(std::uint32_t seed) {
  CUDA_CHECK(cudaMemcpyToSymbol(perturb_seed, &seed, sizeof(seed)));
}

/// @brief Sleep 2-9 us in about one of eight (block, warp, point, iteration) choices. Every lane
///        of a warp computes the same choice, so the whole warp is late together.
__device__ __forceinline__ void perturb(Perturb point, std::uint32_t iteration = 0) {
  const std::uint32_t seed = perturb_seed;
  if (seed == 0) return;
  std::uint32_t h = seed ^ (blockIdx.x * 0x9E3779B1u) ^ ((threadIdx.x / 32) * 0x85EBCA77u) ^
                    (static_cast<std::uint32_t>(point) * 0xC2B2AE3Du) ^ (iteration * 0x27D4EB2Fu);
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  if ((h & 7u) == 0) __nanosleep(2000u + ((h >> 3) & 7u) * 1000u);
}
#else
/// @brief Host: nothing to set in the normal build.
inline void set_perturb_seed(std::uint32_t) {}
/// @brief No-op in the normal build (TUTORIAL_PERTURB unset).
__device__ __forceinline__ void perturb(Perturb, std::uint32_t = 0) {}
#endif

/// @brief True in the TUTORIAL_PERTURB build (the harness prints it in the run's header).
inline constexpr bool kPerturbBuild =
#if defined(TUTORIAL_PERTURB)
    true;
#else
    false;
#endif

}  // namespace tut
