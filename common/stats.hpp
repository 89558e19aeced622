/// @file stats.hpp
/// @brief Summary statistics of timing samples (host only).
#pragma once

#include <vector>

namespace tut {

/// @brief Median of the samples (mean of the two middle ones for an even count).
/// @note Returns 0 for an empty vector. The median is robust to the occasional slow repeat
///       (another process, a clock change), which is why tables report it, not the mean.
double median(std::vector<float> samples);

/// @brief Smallest sample; 0 for an empty vector.
double minimum(const std::vector<float>& samples);

/// @brief Bytes (or flops) per millisecond, scaled to GB/s (or GFLOP/s): work / (ms * 1e6).
/// @return 0 when @p ms is not positive.
double rate_per_second_1e9(double work, double ms);

/// @brief The distribution of per-pair ratios from alternating timings (time_alternating in
///        timer.cuh): the median, the quartiles and the extremes.
struct RatioSummary {
  int pairs = 0;
  double median = 0;
  double p25 = 0;  ///< 25th percentile (linear interpolation between samples)
  double p75 = 0;  ///< 75th percentile
  double min = 0;
  double max = 0;
};

/// @brief Summarize @p ratios (all zero for an empty vector).
RatioSummary summarize_ratios(std::vector<double> ratios);

}  // namespace tut
