/// @file watchdog.cuh
/// @brief Bounded host-side waits for a stream or an event: the harness's watchdog
///        (watchdog.hpp says why and what it prints).
///
/// cudaStreamSynchronize() waits as long as the kernel runs, and a kernel stuck in a wait
/// that never completes runs forever. These waits poll instead (cudaStreamQuery /
/// cudaEventQuery) and give up after watchdog_seconds() without progress: then the run ends
/// with one line naming the chapter, the variant and what it was doing, and exit code 1.
/// A launch that faults is reported like CUDA_CHECK(cudaStreamSynchronize(...)) would.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <thread>

#include "cuda_check.cuh"
#include "watchdog.hpp"

namespace tut {

namespace detail {

/// Poll @p query until it returns cudaSuccess; exit 1 through watchdog_fire() when the
/// watchdog's limit passes first. The first 2 ms are polled with yields (short kernels finish
/// with little latency), then every 100 us (a long wait costs the host no core).
template <class Query>
void wait_or_exit(Query&& query, const char* expr) {
  const double limit_s = watchdog_seconds();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = query();
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) fail_cuda(e, expr, __FILE__, __LINE__);
    const double waited_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (limit_s > 0 && waited_s > limit_s) watchdog_fire(limit_s);
    if (waited_s < 2e-3)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace detail

/// @brief Wait until everything enqueued on @p stream has finished, for at most the
///        watchdog's limit (then exit 1 naming the WatchdogScope's variant).
inline void wait_stream_or_exit(cudaStream_t stream) {
  detail::wait_or_exit([stream] { return cudaStreamQuery(stream); }, "cudaStreamQuery(stream)");
}

/// @brief Wait until @p event has completed, for at most the watchdog's limit.
inline void wait_event_or_exit(cudaEvent_t event) {
  detail::wait_or_exit([event] { return cudaEventQuery(event); }, "cudaEventQuery(event)");
}

}  // namespace tut
