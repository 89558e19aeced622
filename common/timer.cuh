/// @file timer.cuh
/// @brief Time a launch with CUDA events: warm-ups, then N timed repeats, median and min.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "cuda_check.cuh"
#include "stats.hpp"

namespace tut {

/// @brief Timing samples of one variant, in milliseconds.
struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  std::vector<float> samples_ms;
};

/// @brief Run @p launch @p warmup times untimed, then @p repeats times, each bracketed by
///        its own pair of events recorded on @p stream.
/// @param stream  the (non-default) stream the work and the events go on
/// @param warmup  untimed launches first
/// @param repeats timed launches, each between its own pair of events
/// @param launch callable that enqueues the work on @p stream (and checks its launch)
/// @note Events measure GPU time between two points in the stream, so host overheads
///       between launches do not count. The warm-ups absorb module loading and first-touch
///       costs. Use a working set several times the L2 size so repeats do not hit in L2.
template <class Launch>
Timing time_on_stream(cudaStream_t stream, int warmup, int repeats, Launch&& launch) {
  for (int i = 0; i < warmup; ++i) launch(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<cudaEvent_t> start(repeats), stop(repeats);
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventCreate(&start[i]));
    CUDA_CHECK(cudaEventCreate(&stop[i]));
  }
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventRecord(start[i], stream));
    launch(stream);
    CUDA_CHECK(cudaEventRecord(stop[i], stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));

  Timing t;
  t.samples_ms.resize(repeats);
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventElapsedTime(&t.samples_ms[i], start[i], stop[i]));
    CUDA_CHECK(cudaEventDestroy(start[i]));
    CUDA_CHECK(cudaEventDestroy(stop[i]));
  }
  t.median_ms = median(t.samples_ms);
  t.min_ms = minimum(t.samples_ms);
  return t;
}

}  // namespace tut
