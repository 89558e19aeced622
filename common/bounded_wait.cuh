/// @file bounded_wait.cuh
/// @brief The one bounded mbarrier wait of the Hopper chapters, and the device error word it
///        reports into.
///
/// A wait that can never complete (a wrong byte count, a wrong phase parity, a multicast that
/// leaves a block out) would hang the GPU. Production code waits forever; a tutorial whose
/// negative variants must FAIL, not hang, cannot. So every mbarrier wait in chapters 11-16
/// loops on `mbarrier.try_wait.parity` for at most kWaitBudgetNs of `%globaltimer` time
/// (a nanosecond clock, the same on every SM, independent of the SM clock), then gives up and
/// returns false. The kernel then records the failure in the ErrorWord and returns, leaving
/// the poisoned output in place, and verify() reports it.
/// Chapter 11 spells the wait out; the later chapters call these helpers.
#pragma once

#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "device_buffer.cuh"
#include "verify.hpp"

namespace tut {

/// @brief How long a bounded wait keeps trying before it gives up: 1 s of `%globaltimer`.
inline constexpr unsigned long long kWaitBudgetNs = 1'000'000'000ull;

/// @brief `%globaltimer`: nanoseconds, advancing in 32 ns steps on an H200.
__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// @brief Wait until the phase of @p bar with parity @p parity has completed, for at most
///        kWaitBudgetNs. `mbarrier.try_wait.parity` (default .acquire.cta semantics): once it
///        returns true, what completed the phase (the TMA's bytes, other threads' writes
///        before their arrive) is visible to this thread.
/// @return true when the phase completed; false when the budget ran out.
/// @note  sm_90 (try_wait); the caller records a false in its ErrorWord and stops.
__device__ __forceinline__ bool wait_parity_bounded(std::uint64_t* bar, std::uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned long long start = globaltimer_ns();
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity))
    if (globaltimer_ns() - start > kWaitBudgetNs) return false;
  return true;
#else
  (void)bar;
  (void)parity;
  return false;  // no mbarrier.try_wait before sm_90: the variant is skipped there
#endif
}

/// @brief The same wait at cluster scope (`.acquire.cluster`): for barriers whose phase is
///        completed by other blocks of the cluster (remote arrivals, multicast copies).
__device__ __forceinline__ bool wait_parity_bounded_cluster(std::uint64_t* bar,
                                                            std::uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned long long start = globaltimer_ns();
  while (!cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cluster,
                                              bar, parity))
    if (globaltimer_ns() - start > kWaitBudgetNs) return false;
  return true;
#else
  (void)bar;
  (void)parity;
  return false;
#endif
}

/// @brief The bounded wait for sm_80 chapters: `mbarrier.test_wait.parity` (PTX ISA 7.1, sm_80;
///        a single poll that never suspends the thread) in a loop, for at most kWaitBudgetNs.
/// @return true when the phase of @p bar with parity @p parity completed; false when the
///         budget ran out (a wrong parity, a barrier whose phase can never complete).
/// @note  A kernel that gets false stops waiting and stops writing, but keeps meeting its
///        block barriers, so the block never deadlocks and the unwritten output stays poisoned.
__device__ __forceinline__ bool test_wait_parity_bounded(std::uint64_t* bar, std::uint32_t parity) {
  const unsigned long long start = globaltimer_ns();
  while (!cuda::ptx::mbarrier_test_wait_parity(bar, parity))
    if (globaltimer_ns() - start > kWaitBudgetNs) return false;
  return true;
}

/// @brief Bits a kernel ORs into its ErrorWord.
inline constexpr unsigned kErrorWaitTimedOut = 1u;  ///< a bounded wait gave up

/// @brief One device word that kernels with bounded waits atomicOr a reason into (0: every
///        wait completed). A Problem clears it in poison() and reads it in verify().
class ErrorWord {
 public:
  /// @brief Device pointer the kernels take.
  unsigned* data() { return word_.data(); }
  /// @brief Reset to 0 (enqueued on @p s).
  void clear(cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(word_.data(), 0, sizeof(unsigned), s)); }
  /// @brief Copy the word back (synchronises @p s).
  unsigned read(cudaStream_t s) const { return word_.download(s)[0]; }

 private:
  DeviceBuffer<unsigned> word_{1};
};

/// @brief verify() for a kernel with bounded waits: report a nonzero error word, then compare
///        the output word by word. A timeout counts as a failure even where every word matches
///        (the wait may have given up after the last store).
inline VerifyResult compare_words_and_error(cudaStream_t s, const DeviceBuffer<std::uint32_t>& d_out,
                                            const std::vector<std::uint32_t>& want,
                                            const ErrorWord& error) {
  const unsigned err = error.read(s);
  if (err & kErrorWaitTimedOut) std::printf("  device reported: an mbarrier wait timed out\n");
  const std::vector<std::uint32_t> got = d_out.download(s);
  VerifyResult r = compare_exact_words(got.data(), want.data(), want.size());
  if (err != 0 && r.mismatches == 0) r.mismatches = 1;
  return r;
}

}  // namespace tut
