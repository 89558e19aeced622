/// @file timer.cuh
/// @brief Time a launch with CUDA events: warm-ups, then N timed samples, median and min.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "stats.hpp"
#include "watchdog.cuh"

namespace tut {

/// @brief How long the GPU idles before every timed block of a table or a sweep.
///        A GEMM at full speed draws more than the board's power limit allows for long, and
///        the firmware answers with a lower SM clock (NVML's reason "SW power cap"), judged on
///        power averaged over about a second. A block timed right after others then runs at a
///        clock that depends on what ran before it: timed blocks back to back (a table) heat
///        up and slow down, blocks with checks between them (a sweep) do not, and a kernel's
///        share of cuBLAS shifts with the clock (docs/results/h200/notes/timing-method.md has
///        the run that showed it). Idling this long first gives every block the same start,
///        whatever ran before it.
inline constexpr int kIdleBeforeTimingMs = 200;

/// @brief Drain @p stream, then let the GPU idle for kIdleBeforeTimingMs.
inline void idle_before_timing(cudaStream_t stream) {
  wait_stream_or_exit(stream);
  std::this_thread::sleep_for(std::chrono::milliseconds(kIdleBeforeTimingMs));
}

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

namespace detail {

/// How many back-to-back launches make one sample of at least kMinSampleMs: one launch is
/// timed (after the warm-ups), and a shorter one is repeated up to kMaxLaunchesPerSample times.
template <class Launch>
int launches_per_sample(cudaStream_t stream, Launch& launch) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, stream));
  launch(stream);
  CUDA_CHECK(cudaEventRecord(stop, stream));
  wait_event_or_exit(stop);
  float one_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&one_ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  if (one_ms >= kMinSampleMs) return 1;
  return static_cast<int>(std::min<double>(
      kMaxLaunchesPerSample, std::ceil(kMinSampleMs / std::max<double>(one_ms, 1e-4))));
}

/// Enqueue one sample: events @p start and @p stop around @p per_sample launches. A batched
/// sample is held behind hold_stream_kernel until all its launches are enqueued (and waited
/// for here, so the flag can be reused); a single launch is not waited for, so the samples of
/// a run go back to back on the GPU.
template <class Launch>
void enqueue_sample(cudaStream_t stream, int per_sample, Launch& launch, cudaEvent_t start,
                    cudaEvent_t stop) {
  if (per_sample == 1) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    launch(stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    return;
  }
  volatile int* release = stream_release_flag();
  *release = 0;
  int* release_on_device = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&release_on_device),
                                      const_cast<int*>(release), 0));
  hold_stream_kernel<><<<1, 1, 0, stream>>>(release_on_device);
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int k = 0; k < per_sample; ++k) launch(stream);
  CUDA_CHECK(cudaEventRecord(stop, stream));
  *release = 1;
  wait_event_or_exit(stop);
}

/// A growing set of event pairs, read and destroyed together.
struct SampleEvents {
  std::vector<cudaEvent_t> start, stop;
  explicit SampleEvents(int n) : start(n), stop(n) {
    for (int i = 0; i < n; ++i) {
      CUDA_CHECK(cudaEventCreate(&start[i]));
      CUDA_CHECK(cudaEventCreate(&stop[i]));
    }
  }
  SampleEvents(const SampleEvents&) = delete;
  SampleEvents& operator=(const SampleEvents&) = delete;
  /// Wait for sample @p i (one at a time, so the watchdog's limit applies to each) and return
  /// its time per launch.
  float ms_per_launch(int i, int per_sample) {
    wait_event_or_exit(stop[i]);
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start[i], stop[i]));
    return ms / static_cast<float>(per_sample);
  }
  ~SampleEvents() {
    for (std::size_t i = 0; i < start.size(); ++i) {
      cudaEventDestroy(start[i]);
      cudaEventDestroy(stop[i]);
    }
  }
};

inline Timing summarize(std::vector<float> samples_ms, int per_sample) {
  Timing t;
  t.launches_per_sample = per_sample;
  t.median_ms = median(samples_ms);
  t.min_ms = minimum(samples_ms);
  t.samples_ms = std::move(samples_ms);
  return t;
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
  const int per_sample = detail::launches_per_sample(stream, launch);
  detail::SampleEvents events(repeats);
  for (int i = 0; i < repeats; ++i)
    detail::enqueue_sample(stream, per_sample, launch, events.start[i], events.stop[i]);
  std::vector<float> samples(repeats);
  for (int i = 0; i < repeats; ++i) samples[i] = events.ms_per_launch(i, per_sample);
  wait_stream_or_exit(stream);
  return detail::summarize(std::move(samples), per_sample);
}

/// @brief Two launches timed in alternation: A, B, A, B, ... (@p pairs of each, after
///        @p warmup untimed launches of each), so both see the same clocks, temperature and
///        power state, and any drift in them moves both sides of every pair together.
struct PairTiming {
  Timing a;                  ///< A's samples, per launch
  Timing b;                  ///< B's samples, per launch
  std::vector<double> ratio;  ///< per pair: B's time / A's time (A's speed relative to B's)
};

/// @brief Time @p launch_a against @p launch_b in alternation (see PairTiming); each sample
///        as in time_on_stream() (batched when a launch is shorter than kMinSampleMs).
/// @return A's and B's samples, and the ratio of each pair: summarize_ratios(result.ratio)
///         gives the median and spread of "A as a fraction of B" (B a library or a ceiling).
template <class LaunchA, class LaunchB>
PairTiming time_alternating(cudaStream_t stream, int warmup, int pairs, LaunchA&& launch_a,
                            LaunchB&& launch_b) {
  for (int i = 0; i < warmup; ++i) {
    launch_a(stream);
    wait_stream_or_exit(stream);
    launch_b(stream);
    wait_stream_or_exit(stream);
  }
  PairTiming result;
  if (pairs < 1) return result;
  const int per_a = detail::launches_per_sample(stream, launch_a);
  const int per_b = detail::launches_per_sample(stream, launch_b);
  detail::SampleEvents ev_a(pairs), ev_b(pairs);
  for (int i = 0; i < pairs; ++i) {
    detail::enqueue_sample(stream, per_a, launch_a, ev_a.start[i], ev_a.stop[i]);
    detail::enqueue_sample(stream, per_b, launch_b, ev_b.start[i], ev_b.stop[i]);
  }
  std::vector<float> a(pairs), b(pairs);
  result.ratio.resize(pairs);
  for (int i = 0; i < pairs; ++i) {
    a[i] = ev_a.ms_per_launch(i, per_a);
    b[i] = ev_b.ms_per_launch(i, per_b);
    result.ratio[i] = a[i] > 0 ? double(b[i]) / double(a[i]) : 0.0;
  }
  wait_stream_or_exit(stream);
  result.a = detail::summarize(std::move(a), per_a);
  result.b = detail::summarize(std::move(b), per_b);
  return result;
}

}  // namespace tut
