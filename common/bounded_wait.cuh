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
///
/// A timeout alone says only "something hung". wait_or_report() also records WHO waited on
/// WHAT (a WaitSite: block, warp, role, barrier name, slot, parity, iteration, expected bytes)
/// in the error log behind the ErrorWord, and ErrorWord::report() prints one sentence per
/// distinct wait (wait_record.hpp), e.g. "consumer warpgroup 2 of block 17 (warp 8) timed out
/// on full[3] waiting for parity 1 at k-tile 9 (expect_tx 49152 bytes)".
/// Chapter 11 spells the wait out; the later chapters call these helpers.
#pragma once

#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "device_buffer.cuh"
#include "perturb.cuh"
#include "verify.hpp"
#include "wait_record.hpp"

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

/// @brief Where a wait sits in the protocol, for the sentence a timeout prints. Built with the
///        named constructors and chained setters, so a call site reads like the sentence:
/// @code
///   const auto site = tut::WaitSite::consumer_warpgroup(wg).on(tut::Barrier::kFull, slot)
///                         .at_k_tile(kt).expecting(kStageBytes);
///   if (!tut::wait_or_report(&full[slot], parity, error, site)) return;
/// @endcode
struct WaitSite {
  WaitRole role = WaitRole::kWarp;
  std::uint8_t role_index = 0;
  Barrier barrier = Barrier::kTile;
  std::uint8_t has_slot = 0;
  std::uint32_t slot = 0;
  WaitStep step_kind = WaitStep::kNone;
  std::uint32_t step = 0;
  std::uint32_t expect_tx = 0;

  __host__ __device__ static constexpr WaitSite make(WaitRole r, unsigned index) {
    WaitSite w;
    w.role = r;
    w.role_index = static_cast<std::uint8_t>(index);
    return w;
  }
  /// @brief A warp of a kernel without separate roles (index: the warp in the block).
  __host__ __device__ static constexpr WaitSite warp(unsigned i) { return make(WaitRole::kWarp, i); }
  __host__ __device__ static constexpr WaitSite producer_warp(unsigned i = 0) {
    return make(WaitRole::kProducerWarp, i);
  }
  __host__ __device__ static constexpr WaitSite consumer_warp(unsigned i) {
    return make(WaitRole::kConsumerWarp, i);
  }
  __host__ __device__ static constexpr WaitSite producer_warpgroup(unsigned i = 0) {
    return make(WaitRole::kProducerWarpgroup, i);
  }
  __host__ __device__ static constexpr WaitSite consumer_warpgroup(unsigned i) {
    return make(WaitRole::kConsumerWarpgroup, i);
  }
  /// @brief The barrier: an element of a ring (`full[slot]`)...
  __host__ __device__ constexpr WaitSite on(Barrier b, unsigned ring_slot) const {
    WaitSite w = *this;
    w.barrier = b;
    w.has_slot = 1;
    w.slot = ring_slot;
    return w;
  }
  /// @brief ...or a lone barrier (`tile`).
  __host__ __device__ constexpr WaitSite on(Barrier b) const {
    WaitSite w = *this;
    w.barrier = b;
    w.has_slot = 0;
    return w;
  }
  __host__ __device__ constexpr WaitSite at(WaitStep kind, unsigned n) const {
    WaitSite w = *this;
    w.step_kind = kind;
    w.step = n;
    return w;
  }
  __host__ __device__ constexpr WaitSite at_tile(unsigned n) const { return at(WaitStep::kTile, n); }
  __host__ __device__ constexpr WaitSite at_k_tile(unsigned n) const { return at(WaitStep::kKTile, n); }
  __host__ __device__ constexpr WaitSite at_step(unsigned n) const { return at(WaitStep::kStep, n); }
  /// @brief A transaction barrier: the bytes its phase expects (expect_tx).
  __host__ __device__ constexpr WaitSite expecting(unsigned bytes) const {
    WaitSite w = *this;
    w.expect_tx = bytes;
    return w;
  }
};

/// @brief Record that this thread's wait at @p site for @p parity gave up: set the timeout bit
///        in the ErrorWord and, once per warp (the lowest active lane writes), append a
///        WaitRecord to the log behind it (the first WaitLog::kCapacity are kept; the rest are
///        counted).
/// @param error the kernel's `unsigned*` error word (ErrorWord::data(): the start of a WaitLog)
/// @param site where the wait sits in the protocol (who waited on which barrier, when)
/// @param parity the phase parity the wait was for
__device__ __forceinline__ void record_timeout(unsigned* error, const WaitSite& site,
                                               std::uint32_t parity) {
  atomicOr(error, kErrorWaitTimedOut);
  const unsigned active = __activemask();
  if ((threadIdx.x % 32) != static_cast<unsigned>(__ffs(active) - 1)) return;
  WaitLog* log = reinterpret_cast<WaitLog*>(error);
  const unsigned i = atomicAdd(&log->count, 1u);
  if (i >= WaitLog::kCapacity) return;
  WaitRecord& r = log->records[i];
  r.block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  r.step = site.step;
  r.expect_tx = site.expect_tx;
  r.slot = site.slot;
  r.warp = static_cast<std::uint16_t>(threadIdx.x / 32);
  r.role = site.role;
  r.role_index = site.role_index;
  r.barrier = site.barrier;
  r.step_kind = site.step_kind;
  r.parity = static_cast<std::uint8_t>(parity & 1u);
  r.has_slot = site.has_slot;
}

namespace detail {
/// @brief What every wait_or_report flavour does once its wait returned: a wait that gave up
///        records who waited on what (record_timeout()); a completed one may be delayed by the
///        TUTORIAL_PERTURB build (perturb.cuh), as a parked warp would be.
/// @return @p completed.
__device__ __forceinline__ bool report_wait(bool completed, std::uint32_t parity, unsigned* error,
                                            const WaitSite& site) {
  if (!completed) {
    record_timeout(error, site, parity);
    return false;
  }
  perturb(Perturb::kAfterWait, site.step);
  return true;
}
}  // namespace detail

/// @brief wait_parity_bounded(), then, on a timeout, record_timeout(); after a completed wait
///        the TUTORIAL_PERTURB build may delay this warp (perturb.cuh), as a parked warp would be.
/// @return true when the phase completed.
__device__ __forceinline__ bool wait_or_report(std::uint64_t* bar, std::uint32_t parity,
                                               unsigned* error, const WaitSite& site) {
  return detail::report_wait(wait_parity_bounded(bar, parity), parity, error, site);
}

/// @brief The same at cluster scope (wait_parity_bounded_cluster).
__device__ __forceinline__ bool wait_or_report_cluster(std::uint64_t* bar, std::uint32_t parity,
                                                       unsigned* error, const WaitSite& site) {
  return detail::report_wait(wait_parity_bounded_cluster(bar, parity), parity, error, site);
}

/// @brief The same for the sm_80 chapters (test_wait_parity_bounded).
__device__ __forceinline__ bool test_wait_or_report(std::uint64_t* bar, std::uint32_t parity,
                                                    unsigned* error, const WaitSite& site) {
  return detail::report_wait(test_wait_parity_bounded(bar, parity), parity, error, site);
}

/// @brief The device word that kernels with bounded waits atomicOr a reason into (0: every
///        wait completed), at the start of a WaitLog that names each timed-out wait. A Problem
///        clears it in poison() and reads it in verify() (report() prints the sentences).
class ErrorWord {
 public:
  /// @brief Device pointer the kernels take (the WaitLog's `word`).
  unsigned* data() { return reinterpret_cast<unsigned*>(log_.data()); }
  /// @brief Reset the word and the log (enqueued on @p s).
  void clear(cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(log_.data(), 0, sizeof(WaitLog), s)); }
  /// @brief Copy the word back (synchronises @p s).
  unsigned read(cudaStream_t s) const { return log_.download(s)[0].word; }
  /// @brief Copy the log back (synchronises @p s).
  WaitLog log(cudaStream_t s) const { return log_.download(s)[0]; }
  /// @brief Print one line per distinct timed-out wait ("  device reported: ..."), return the word.
  unsigned report(cudaStream_t s) const {
    const WaitLog l = log(s);
    if (l.word & kErrorWaitTimedOut) {
      if (l.count == 0) std::printf("  device reported: an mbarrier wait timed out\n");
      for (const std::string& line : describe_timeouts(l))
        std::printf("  device reported: %s\n", line.c_str());
    }
    return l.word;
  }

 private:
  DeviceBuffer<WaitLog> log_{1};
};

/// @brief verify() for a kernel with bounded waits: report a nonzero error word, then compare
///        the output word by word. A timeout counts as a failure even where every word matches
///        (the wait may have given up after the last store).
inline VerifyResult compare_words_and_error(cudaStream_t s, const DeviceBuffer<std::uint32_t>& d_out,
                                            const std::vector<std::uint32_t>& want,
                                            const ErrorWord& error) {
  const unsigned err = error.report(s);
  const std::vector<std::uint32_t> got = d_out.download(s);
  VerifyResult r = compare_exact_words(got.data(), want.data(), want.size());
  if (err != 0 && r.mismatches == 0) r.mismatches = 1;
  return r;
}

}  // namespace tut
