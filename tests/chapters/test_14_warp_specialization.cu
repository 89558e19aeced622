// GPU tests for chapter 14: the Ampere-style pipeline and the warp-specialized TMA ring at
// every stage count, at edge sizes, intensities and occupancies, against the exact CPU
// reference; the early-release consumer must fail (and must not hang).
#include <gtest/gtest.h>

#include <chrono>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#include "kernels.cuh"

namespace {

tut::RunConfig config(std::uint64_t bytes, long long intensity = 32, long long blocks_per_sm = 1) {
  return tut_test::test_config(bytes, 1414, {{"intensity", intensity}, {"blocks-per-sm", blocks_per_sm}});
}

class Ch14Sizes : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch14Sizes, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(9, 0);
  ch14::Problem p(config(GetParam()));
  for (const auto& v : ch14::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// One vector; one short of a tile; tiles + ragged tail; fewer tiles than blocks and slots;
// many laps of every slot (64 MiB = 4096 tiles over 132 blocks: ~31 tiles per block).
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch14Sizes,
                         ::testing::Values(16, 16384 - 16, 3 * 16384 + 80, (1u << 20) + 112,
                                           64u << 20));

TEST(Ch14Knobs, IntensityAndOccupancy) {
  SKIP_UNLESS_GPU(9, 0);
  for (long long intensity : {0, 1, 7, 300}) {
    for (long long blocks : {1, 2, 8}) {
      ch14::Problem p(config((4u << 20) + 48, intensity, blocks));
      for (const auto& v : ch14::variants()) {
        if (v.negative) continue;
        EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << v.key << " intensity " << intensity << ", " << blocks
                                    << " blocks/SM";
      }
    }
  }
}

TEST(Ch14Negative, EarlyReleaseIsCaughtAndDoesNotHang) {
  SKIP_UNLESS_GPU(9, 0);
  ch14::Problem p(config(8u << 20));  // 512 tiles through one block: slots reused 127 times
  for (const auto& v : ch14::variants()) {
    if (!v.negative) continue;
    const auto start = std::chrono::steady_clock::now();
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_FALSE(r.ok()) << v.key << " must fail";
    // Every tile except the last 4 (which no later tile overwrites) reads its successor.
    EXPECT_EQ(r.mismatches, (512u - 4u) * ch14::TILE_WORDS) << r.summary();
    EXPECT_LT(s, 10.0) << "the bounded waits must not stall";
  }
}

TEST(Ch14Negative, EarlyReleaseInvisibleWithoutSlotReuse) {
  // Why the check needs sizes with more tiles than slots: 4 tiles never overwrite a slot.
  SKIP_UNLESS_GPU(9, 0);
  ch14::Problem p(config(4 * 16384));
  for (const auto& v : ch14::variants())
    if (v.negative) EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << v.key;
}

TEST(Ch14Reference, ClosedFormEqualsTheLoop) {
  // Host only: the composed affine map equals stepping the LCG.
  const std::vector<std::uint32_t> in = {0u, 1u, 0xDEADBEEFu, 0xFFFFFFFEu};
  for (int n : {0, 1, 2, 33}) {
    const auto out = ch14::reference_lcg(in, n);
    for (std::size_t k = 0; k < in.size(); ++k) {
      std::uint32_t x = in[k];
      for (int i = 0; i < n; ++i) x = x * ch14::LCG_A + ch14::LCG_C;
      EXPECT_EQ(out[k], x) << "n=" << n << " k=" << k;
    }
  }
}

}  // namespace
