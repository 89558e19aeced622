// Host tests for the fills: unique, reproducible from the seed, different across seeds,
// never the poison, and exact in fp32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "common/fill.hpp"

namespace {

TEST(Mix32, IsABijectionOnASample) {
  std::unordered_set<std::uint32_t> seen;
  for (std::uint32_t i = 0; i < (1u << 20); ++i) seen.insert(tut::mix32(i * 2654435761u));
  EXPECT_EQ(seen.size(), 1u << 20);
}

TEST(FillUniqueWords, DistinctReproducibleNeverPoison) {
  const std::size_t n = 1u << 21;
  std::vector<std::uint32_t> a(n), b(n), c(n);
  tut::fill_unique_words(a.data(), n, 42);
  tut::fill_unique_words(b.data(), n, 42);
  tut::fill_unique_words(c.data(), n, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::unordered_set<std::uint32_t> seen(a.begin(), a.end());
  EXPECT_EQ(seen.size(), n);
  EXPECT_EQ(seen.count(tut::kPoisonWord), 0u);
}

TEST(FillUniqueWords, ManySeedsStayDistinctAndPoisonFree) {
  // The replacement of the (at most one) poison preimage is rare by construction; this
  // sweeps seeds to check the invariant holds across many offsets.
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    const std::size_t n = 1u << 16;
    std::vector<std::uint32_t> v(n);
    tut::fill_unique_words(v.data(), n, seed);
    std::unordered_set<std::uint32_t> seen(v.begin(), v.end());
    ASSERT_EQ(seen.size(), n);
    ASSERT_EQ(seen.count(tut::kPoisonWord), 0u);
  }
}

TEST(FillUniqueExactFloats, DistinctInWindowExactAndSmall) {
  const std::size_t n = 1u << 20;
  std::vector<float> v(n);
  tut::fill_unique_exact_floats(v.data(), n, 7);
  std::unordered_set<float> seen(v.begin(), v.end());
  EXPECT_EQ(seen.size(), n);
  for (float f : v) {
    ASSERT_GE(f, -512.0f);
    ASSERT_LT(f, 512.0f);
    ASSERT_EQ(f * 1024.0f, std::floor(f * 1024.0f)) << "not on the 2^-10 grid";
  }
  std::vector<float> w(n);
  tut::fill_unique_exact_floats(w.data(), n, 7);
  EXPECT_EQ(v, w);
  tut::fill_unique_exact_floats(w.data(), n, 8);
  EXPECT_NE(v, w);
}

TEST(FillUniqueExactFloats, NeverPeriodic) {
  // Four windows: within each every value is distinct; across windows, at any distance
  // (multiples of the window included) equal pairs are as rare as chance makes them (2^-20).
  const std::size_t window = tut::kExactFloatsWindow;
  const std::size_t n = 4 * window + 123;
  std::vector<float> v(n);
  tut::fill_unique_exact_floats(v.data(), n, 42);
  for (std::size_t w = 0; w < 4; ++w) {
    std::vector<float> sorted(v.begin() + w * window, v.begin() + (w + 1) * window);
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "window " << w;
  }
  for (std::size_t d : {window, 2 * window, 3 * window, window + 1, window - 1, std::size_t{4096}}) {
    std::size_t equal = 0;
    for (std::size_t i = 0; i + d < n; ++i) equal += v[i] == v[i + d];
    EXPECT_LE(equal, 32u) << "distance " << d;  // about 3 expected by chance
  }
  // The tail past the last full window is filled too, on the same grid and range.
  for (std::size_t i = 4 * window; i < n; ++i) {
    ASSERT_GE(v[i], -512.0f);
    ASSERT_LT(v[i], 512.0f);
  }
  // A prefix of a longer fill is the shorter fill: sizes do not change the values.
  std::vector<float> shorter(window + 5);
  tut::fill_unique_exact_floats(shorter.data(), shorter.size(), 42);
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), v.begin()));
}

TEST(FillUniqueExactFloats, SixteenTermSumsAreExact) {
  std::vector<float> v(4096);
  tut::fill_unique_exact_floats(v.data(), v.size(), 3);
  for (std::size_t i = 0; i + 16 <= v.size(); i += 16) {
    float f = 0.0f;
    double d = 0.0;
    for (std::size_t k = 0; k < 16; ++k) {
      f += v[i + k];
      d += v[i + k];
    }
    ASSERT_EQ(static_cast<double>(f), d);
  }
}

TEST(FreshSeed, Varies) {
  std::unordered_set<std::uint64_t> seeds;
  for (int i = 0; i < 16; ++i) seeds.insert(tut::fresh_seed());
  EXPECT_GT(seeds.size(), 1u);
}

}  // namespace
