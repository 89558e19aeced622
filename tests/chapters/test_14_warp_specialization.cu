// GPU tests for chapter 14: the Ampere-style pipeline and the warp-specialized TMA ring at
// every stage count, at edge sizes, intensities and occupancies, against the exact CPU
// reference, also on a 2-block grid where every ring wraps many times; the early-release
// consumer and the wrong empty arrival count must fail (and must not hang).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // the chapter's program without its main(): Problem, variants()
#include "main.cu"

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

const tut::Variant<ch14::Problem>& variant(const std::vector<tut::Variant<ch14::Problem>>& all,
                                            const std::string& key) {
  for (const auto& v : all)
    if (v.key == key) return v;
  ADD_FAILURE() << "no variant " << key;
  return all.front();
}

TEST(Ch14Laps, LargestCheckSizeGivesTwoBlocksThreeLapsOfTheDeepestRing) {
  // Host arithmetic for the harness's lap check (grid capped at 2 blocks).
  const auto sizes = ch14::check_sizes();
  const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  const std::uint64_t tiles = (largest + ch14::TILE_BYTES - 1) / ch14::TILE_BYTES;
  EXPECT_GE(tiles / 2, 3u * ch14::DEEPEST_RING) << "tiles per block under the lap check";
  for (const auto& v : ch14::variants())  // no ring deeper than DEEPEST_RING
    if (v.key.rfind("v1_ws_s", 0) == 0)
      EXPECT_LE(v.key[7] - '0', ch14::DEEPEST_RING) << v.key;
}

TEST(Ch14Laps, EveryVariantMatchesOnTwoBlocks) {
  // What the lap check runs: each block walks 256 tiles, every ring wraps dozens of times.
  SKIP_UNLESS_GPU(9, 0);
  const auto sizes = ch14::check_sizes();
  ch14::Problem p(config(*std::max_element(sizes.begin(), sizes.end())));
  const tut::ScopedGridCap cap(2);
  for (const auto& v : ch14::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " on 2 blocks: " << r.summary();
    EXPECT_LE(tut::last_grid_choice().blocks, 2u) << v.key;
  }
}

TEST(Ch14Negative, EmptyCountFailsFromTheSecondLap) {
  SKIP_UNLESS_GPU(9, 0);
  const auto all = ch14::variants();
  const auto& v = variant(all, "v9_empty_count");
  ASSERT_TRUE(v.negative);
  {  // 2 blocks x 4 tiles: lap 0 only, the producer never waits on empty: right answer
    ch14::Problem p(config(8u * ch14::TILE_BYTES));
    const tut::ScopedGridCap cap(2);
    EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << "no second lap, no bug";
  }
  {  // 2 blocks x 5 tiles: the fifth tile is the first of lap 1
    ch14::Problem p(config(10u * ch14::TILE_BYTES));
    const tut::ScopedGridCap cap(2);
    const auto start = std::chrono::steady_clock::now();
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_FALSE(r.ok()) << "a second lap must expose the arrival count";
    EXPECT_NE(p.error.read(nullptr) & tut::kErrorWaitTimedOut, 0u) << "the waits gave up";
    EXPECT_LT(s, 10.0) << "the bounded waits must not stall";
  }
}

TEST(Ch14Negative, EarlyReleaseIsCaughtAndDoesNotHang) {
  SKIP_UNLESS_GPU(9, 0);
  ch14::Problem p(config(8u << 20));  // 512 tiles through one block: slots reused 127 times
  for (const auto& v : ch14::variants()) {
    if (v.key != "v9_early_release") continue;
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
    if (v.key == "v9_early_release") EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << v.key;
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
