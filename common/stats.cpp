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

RatioSummary summarize_ratios(std::vector<double> ratios) {
  RatioSummary r;
  if (ratios.empty()) return r;
  std::sort(ratios.begin(), ratios.end());
  const auto at = [&](double q) {  // linear interpolation between the two nearest ranks
    const double pos = q * double(ratios.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, ratios.size() - 1);
    return ratios[lo] + (pos - double(lo)) * (ratios[hi] - ratios[lo]);
  };
  r.pairs = static_cast<int>(ratios.size());
  r.median = at(0.5);
  r.p25 = at(0.25);
  r.p75 = at(0.75);
  r.min = ratios.front();
  r.max = ratios.back();
  return r;
}

}  // namespace tut
