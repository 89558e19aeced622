/// @file shared_scrub.cuh
/// @brief Poison shared memory before every checked launch, as the outputs are poisoned.
///
/// Shared memory is not cleared between kernels. A block that lands on an SM where the
/// previous kernel left a tile in shared memory sees that tile. So a kernel that forgets to
/// copy a tile into shared memory (a dropped copy, a wait that returns before the bytes
/// arrive, a slot read before it was filled) can still write the right answer, because the
/// previous variant, computing the same thing, left it there. Poisoning the output alone does
/// not catch that. scrub_shared_memory() overwrites the shared memory of every SM with
/// kPoisonWord (a NaN as a float, never produced by the input fills) first, so whatever a
/// kernel reads from shared memory before writing it is garbage, and the check sees it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "cuda_check.cuh"
#include "fill.hpp"

namespace tut {

namespace detail {

/// Blocks of the current scrub that have started (reset before each scrub). static: one
/// counter per translation unit, so any number of them can include this header.
static __device__ unsigned scrub_blocks_started;

/// How long a scrub block waits for the others to start: they start within microseconds;
/// the budget only matters when some SMs are not available to this process.
inline constexpr unsigned long long kScrubWaitBudgetNs = 20'000'000ull;

/// Fill this block's whole dynamic shared memory (the opt-in maximum per block) with
/// @p pattern, then stay resident until all @p blocks blocks have started. The opt-in maximum
/// leaves room for one block per SM, so while they all wait together each SM holds exactly
/// one of them: every SM is scrubbed, none twice.
template <int Unused = 0>
__global__ void scrub_shared_memory_kernel(std::uint32_t pattern, unsigned words, unsigned blocks) {
  extern __shared__ std::uint32_t scrubbed_words[];
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) scrubbed_words[i] = pattern;
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(&scrub_blocks_started, 1u);
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (*static_cast<volatile unsigned*>(&scrub_blocks_started) < blocks &&
             now - start < kScrubWaitBudgetNs);
  }
}

}  // namespace detail

/// @brief Overwrite the shared memory of every SM with kPoisonWord, on @p stream, before a
///        checked launch (run_and_verify() calls it).
/// @note  Covers the opt-in maximum per block (cudaDevAttrMaxSharedMemoryPerBlockOptin),
///        which bounds static plus dynamic shared memory of any kernel. The device queries
///        and the attribute call run once per process.
/// @note  TUTORIAL_SKIP_SMEM_SCRUB=1 in the environment skips the scrub (announced once on
///        stderr). Only for runs under compute-sanitizer racecheck, which checks shared-memory
///        hazards itself and for which the scrub's 227 KiB of stores per SM and its wait for
///        every block to start may be far too slow; never for a check that must prove a result.
inline void scrub_shared_memory(cudaStream_t stream) {
  static const bool skip = [] {
    const char* env = std::getenv("TUTORIAL_SKIP_SMEM_SCRUB");
    const bool off = env != nullptr && env[0] == '1';
    if (off)
      std::fprintf(stderr, "note: shared-memory scrub off (TUTORIAL_SKIP_SMEM_SCRUB=1)\n");
    return off;
  }();
  if (skip) return;
  struct Setup {
    int sm_count = 0;
    int optin_bytes = 0;
    unsigned* counter = nullptr;
  };
  static const Setup setup = [] {
    Setup s;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&s.sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&s.optin_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                      device));
    CUDA_CHECK(cudaFuncSetAttribute(detail::scrub_shared_memory_kernel<>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, s.optin_bytes));
    CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&s.counter),
                                    detail::scrub_blocks_started));
    return s;
  }();
  CUDA_CHECK(cudaMemsetAsync(setup.counter, 0, sizeof(unsigned), stream));
  const unsigned words = static_cast<unsigned>(setup.optin_bytes) / sizeof(std::uint32_t);
  detail::scrub_shared_memory_kernel<><<<setup.sm_count, 1024, setup.optin_bytes, stream>>>(
      kPoisonWord, words, static_cast<unsigned>(setup.sm_count));
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace tut
