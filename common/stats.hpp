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

}  // namespace tut
