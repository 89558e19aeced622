#include "stats.hpp"

#include <algorithm>

namespace tut {

double median(std::vector<float> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (double(samples[n / 2 - 1]) + double(samples[n / 2]));
}

double minimum(const std::vector<float>& samples) {
  if (samples.empty()) return 0.0;
  return *std::min_element(samples.begin(), samples.end());
}

double rate_per_second_1e9(double work, double ms) { return ms > 0 ? work / (ms * 1e6) : 0.0; }

}  // namespace tut
