// Host tests for verification: the checker must catch one wrong element, a NaN, and an
// output that was never written (still holding the poison).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "common/fill.hpp"
#include "common/verify.hpp"

namespace {

std::vector<std::uint32_t> words(std::size_t n, std::uint64_t seed = 1) {
  std::vector<std::uint32_t> v(n);
  tut::fill_unique_words(v.data(), n, seed);
  return v;
}

TEST(CompareExactWords, EqualPasses) {
  const auto a = words(1000);
  const auto r = tut::compare_exact_words(a.data(), a.data(), a.size());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.checked, 1000u);
  EXPECT_NE(r.summary().find("PASS"), std::string::npos);
}

TEST(CompareExactWords, CatchesOneWrongElement) {
  const auto want = words(1000);
  auto got = want;
  got[617] ^= 1u;  // one flipped bit
  const auto r = tut::compare_exact_words(got.data(), want.data(), want.size());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.mismatches, 1u);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].index, 617u);
  EXPECT_NE(r.summary().find("FAIL"), std::string::npos);
  EXPECT_NE(r.details().find("[617]"), std::string::npos);
}

TEST(CompareExactWords, CatchesUnwrittenOutputAndReportsFirstTen) {
  const auto want = words(500);
  std::vector<std::uint32_t> got(500, tut::kPoisonWord);  // kernel wrote nothing
  const auto r = tut::compare_exact_words(got.data(), want.data(), want.size());
  EXPECT_EQ(r.mismatches, 500u);
  EXPECT_EQ(r.first.size(), tut::kMaxReported);
  EXPECT_NE(r.details().find("and 490 more"), std::string::npos);
}

TEST(CompareExactFloats, NanNeverPassesAndPoisonIsNan) {
  float poison;
  std::memcpy(&poison, &tut::kPoisonWord, sizeof poison);
  EXPECT_TRUE(std::isnan(poison));
  const std::vector<float> want = {1.0f, 2.0f, 3.0f};
  std::vector<float> got = want;
  got[1] = poison;
  EXPECT_EQ(tut::compare_exact_floats(got.data(), want.data(), 3).mismatches, 1u);
  // Even a NaN "expected" value cannot be matched by a NaN.
  std::vector<float> nan_want = {poison};
  EXPECT_FALSE(tut::compare_exact_floats(nan_want.data(), nan_want.data(), 1).ok());
}

TEST(CompareCloseFloats, ToleranceAndNonFinite) {
  const std::vector<float> want = {1.0f, 100.0f, -5.0f};
  std::vector<float> got = {1.0005f, 100.01f, -5.0f};
  EXPECT_TRUE(tut::compare_close_floats(got.data(), want.data(), 3, 1e-3, 1e-4).ok());
  got[0] = 1.01f;
  const auto r = tut::compare_close_floats(got.data(), want.data(), 3, 1e-3, 1e-4);
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_NEAR(r.max_abs_error, 0.01, 1e-5);
  got[0] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(tut::compare_close_floats(got.data(), want.data(), 3, 1e9, 1e9).ok());
  got[0] = std::nanf("");
  EXPECT_FALSE(tut::compare_close_floats(got.data(), want.data(), 3, 1e9, 1e9).ok());
}

TEST(CompareExactBytes, CatchesOneByteInAStruct) {
  struct Rec { float a; int b; char c[8]; };
  std::vector<Rec> want(10, Rec{1.0f, 2, "abcdefg"});
  auto got = want;
  got[3].c[5] = 'X';
  const auto r = tut::compare_exact_bytes(got.data(), want.data(), 10, sizeof(Rec));
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_EQ(r.first[0].index, 3u);
}

TEST(VerifyResult, NothingComparedIsAFailure) {
  tut::VerifyResult r;
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.summary().find("nothing"), std::string::npos);
}

TEST(VerifyResult, MergeAccumulates) {
  const auto want = words(10);
  auto got = want;
  got[2] = 0;
  auto total = tut::compare_exact_words(want.data(), want.data(), 10);
  total.merge(tut::compare_exact_words(got.data(), want.data(), 10), 10);
  EXPECT_EQ(total.checked, 20u);
  EXPECT_EQ(total.mismatches, 1u);
  EXPECT_EQ(total.first[0].index, 12u);
}

}  // namespace
