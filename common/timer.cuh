/// @file timer.cuh
/// @brief Time a launch with CUDA events: warm-ups, then N timed samples, median and min.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda_check.cuh"
#include "stats.hpp"
#include "watchdog.cuh"

namespace tut {

/// @brief Timing samples of one variant, in milliseconds per launch.
struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  int launches_per_sample = 1;  ///< back-to-back launches between one pair of events
  std::vector<float> samples_ms;
};

/// @brief The shortest sample worth trusting. A CUDA event pair resolves about half a
///        microsecond and the launch of a few-microsecond kernel varies by as much, so a kernel
///        shorter than this is timed as many back-to-back launches between one pair of events.
inline constexpr double kMinSampleMs = 1.0;

/// @brief The most launches in one sample: well below the number of launches a stream can
///        hold pending, so enqueueing a whole sample never blocks the host.
inline constexpr int kMaxLaunchesPerSample = 256;

namespace detail {

/// Holds the stream until the host has enqueued a whole sample (or a 100 ms safety budget of
/// %globaltimer runs out), so the sample's launches run back to back on the GPU instead of
/// trickling in at the host's launch rate.
template <int Unused = 0>
__global__ void hold_stream_kernel(const volatile int* release) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (*release == 0 && now - start < 100'000'000ull);
}

/// A flag in pinned, mapped host memory that the host sets to let hold_stream_kernel finish.
inline volatile int* stream_release_flag() {
  static volatile int* flag = [] {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, sizeof(int), cudaHostAllocMapped));
    return static_cast<volatile int*>(p);
  }();
  return flag;
}

}  // namespace detail

/// @brief Run @p launch @p warmup times untimed, then take @p repeats samples, each a pair of
///        events recorded on @p stream around one launch or, for a launch shorter than
///        kMinSampleMs, around enough back-to-back launches to last that long (at most
///        kMaxLaunchesPerSample); every sample is reported per launch.
/// @param stream  the (non-default) stream the work and the events go on
/// @param warmup  untimed launches first
/// @param repeats timed samples
/// @param launch callable that enqueues the work on @p stream (and checks its launch)
/// @note Events measure GPU time between two points in the stream, so host overheads
///       between launches do not count as long as the GPU never waits for the host. For
///       batched samples the stream is held by a tiny kernel until the whole sample is
///       enqueued, so it does not. The warm-ups absorb module loading and first-touch costs
///       (and every one-time host query of the launch). Use a working set several times the
///       L2 size so repeats do not hit in L2.
/// @note Every wait here is bounded by the watchdog (watchdog.cuh), one launch or one batched
///       sample at a time, so a launch that never finishes ends the run with exit 1 (naming
///       the WatchdogScope's variant) instead of hanging it, however many repeats were asked.
template <class Launch>
Timing time_on_stream(cudaStream_t stream, int warmup, int repeats, Launch&& launch) {
  for (int i = 0; i < warmup; ++i) {
    launch(stream);
    wait_stream_or_exit(stream);
  }
  if (repeats < 1) return Timing{};

  std::vector<cudaEvent_t> start(repeats), stop(repeats);
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventCreate(&start[i]));
    CUDA_CHECK(cudaEventCreate(&stop[i]));
  }

  // How many launches make a sample of at least kMinSampleMs: time one launch first.
  CUDA_CHECK(cudaEventRecord(start[0], stream));
  launch(stream);
  CUDA_CHECK(cudaEventRecord(stop[0], stream));
  wait_event_or_exit(stop[0]);
  float one_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&one_ms, start[0], stop[0]));
  int per_sample = 1;
  if (one_ms < kMinSampleMs)
    per_sample = static_cast<int>(std::min<double>(
        kMaxLaunchesPerSample, std::ceil(kMinSampleMs / std::max<double>(one_ms, 1e-4))));

  for (int i = 0; i < repeats; ++i) {
    if (per_sample == 1) {
      CUDA_CHECK(cudaEventRecord(start[i], stream));
      launch(stream);
      CUDA_CHECK(cudaEventRecord(stop[i], stream));
      continue;
    }
    volatile int* release = detail::stream_release_flag();
    *release = 0;
    int* release_on_device = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&release_on_device),
                                        const_cast<int*>(release), 0));
    detail::hold_stream_kernel<><<<1, 1, 0, stream>>>(release_on_device);
    CUDA_CHECK_LAST_LAUNCH();
    CUDA_CHECK(cudaEventRecord(start[i], stream));
    for (int k = 0; k < per_sample; ++k) launch(stream);
    CUDA_CHECK(cudaEventRecord(stop[i], stream));
    *release = 1;
    wait_event_or_exit(stop[i]);
  }
  // One launch per sample: the samples were enqueued back to back; wait for them one by one,
  // so the limit applies to each launch, not to all of them together.
  for (int i = 0; i < repeats; ++i) wait_event_or_exit(stop[i]);
  wait_stream_or_exit(stream);

  Timing t;
  t.launches_per_sample = per_sample;
  t.samples_ms.resize(repeats);
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventElapsedTime(&t.samples_ms[i], start[i], stop[i]));
    t.samples_ms[i] /= static_cast<float>(per_sample);
    CUDA_CHECK(cudaEventDestroy(start[i]));
    CUDA_CHECK(cudaEventDestroy(stop[i]));
  }
  t.median_ms = median(t.samples_ms);
  t.min_ms = minimum(t.samples_ms);
  return t;
}

}  // namespace tut
