// GPU tests for chapter 05: every __pipeline_* variant at edge sizes (one word, ragged
// vectors, ragged tiles, many tiles per block) and several occupancies, against the CPU
// reference; the zfill-swapped negative variant must fail (from 3 words on: at 1 and 2 words
// its mistaken zeros are exactly the padding zeros the reference expects); the largest check
// size gives every ring the laps the harness's lap check needs.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // main.cu: the registry without its main()
#include "main.cu"

namespace {

tut::RunConfig config(std::uint64_t bytes, long long blocks_per_sm = 1) {
  return tut_test::test_config(bytes, 55, {{"blocks-per-sm", blocks_per_sm}});
}

class Ch05Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch05Kernels, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch05::Problem p(config(GetParam()));
  for (const auto& v : ch05::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// 1, 2 and 3 words (each ragged vector length); one word short of a tile; a tile plus one
// word; tiles plus a 3-word tail; > 1 MiB ragged; 64 MiB (many tiles per block, ring wraps).
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch05Kernels,
                         ::testing::Values(4, 8, 12, 4096 - 4, 4096 + 4, 7 * 4096 + 12,
                                           (1u << 20) + 4 * 5, 64u << 20));

TEST(Ch05Occupancy, EveryVariantAtSeveralBlocksPerSm) {
  SKIP_UNLESS_GPU(8, 0);
  for (long long blocks : {1, 2, 3, 32}) {
    ch05::Problem p(config((2u << 20) + 4 * 3, blocks));
    for (const auto& v : ch05::variants()) {
      if (v.negative) continue;
      EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << v.key << " at " << blocks << " blocks/SM";
    }
  }
}

TEST(Ch05Negative, SwappedZfillIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  ch05::Problem p(config(3 * 4096));  // whole vectors only: every one is zero-filled by the bug
  for (const auto& v : ch05::variants()) {
    if (!v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_FALSE(r.ok()) << v.key << " must fail";
    EXPECT_GE(r.mismatches, 3u * 1024 - 1) << "every word but possibly one zero input";
  }
}

TEST(Ch05Negative, SwappedZfillPassesOnlyAtOneAndTwoWords) {
  // What the README claims: the bug's zeros land where the reference expects padding zeros at
  // 1 and 2 words; every size from 3 words on fails.
  SKIP_UNLESS_GPU(8, 0);
  for (std::uint64_t bytes : {4u, 8u})
    EXPECT_TRUE(tut_test::run_variant(config(bytes), ch05::variants(), "v9_zfill_swapped").ok())
        << bytes << " bytes";
  for (std::uint64_t bytes : {12u, 16u, 4096u + 4u})
    EXPECT_FALSE(tut_test::run_variant(config(bytes), ch05::variants(), "v9_zfill_swapped").ok())
        << bytes << " bytes";
}

TEST(Ch05Laps, LargestCheckSizeGivesTwoBlocksThreeLapsOfTheDeepestRing) {
  // Host arithmetic (runs without a GPU): the harness's lap check runs every variant at the
  // largest check size on two blocks; each must walk at least 3 laps of the deepest ring.
  const std::uint64_t words = tut::reversed_tiles::check_sizes().back() / 4;
  const std::uint64_t tiles = (words + ch05::TILE_WORDS - 1) / ch05::TILE_WORDS;
  EXPECT_GE(tut::laps_per_block(tiles, tut::kLapCheckBlocks, tut::reversed_tiles::MAX_STAGES), 3u);
  EXPECT_EQ(tut::reversed_tiles::MAX_STAGES, 8);  // v1 allows up to 8 slots (static_assert)
}

TEST(Ch05Laps, EveryVariantPassesOnTwoBlocksAtTheLargestCheckSize) {
  SKIP_UNLESS_GPU(8, 0);
  tut::ScopedGridCap two_blocks(tut::kLapCheckBlocks);  // what the harness's lap check does
  ch05::Problem p(config(tut::reversed_tiles::check_sizes().back()));
  for (const auto& v : ch05::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " on two blocks: " << r.summary();
  }
}

TEST(Ch05Reference, ReversePaddedOnAKnownInput) {
  // Host-only: one full tile then 6 words. The ragged tile pads to 8 words: out = 0,0,w5..w0.
  std::vector<std::uint32_t> in(ch05::TILE_WORDS + 6);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i + 1);
  const auto out = ch05::reference_reverse_padded(in);
  EXPECT_EQ(out[0], static_cast<std::uint32_t>(ch05::TILE_WORDS));  // word 1023, plus 1
  EXPECT_EQ(out[ch05::TILE_WORDS - 1], 1u);
  EXPECT_EQ(out[ch05::TILE_WORDS + 0], 0u);
  EXPECT_EQ(out[ch05::TILE_WORDS + 1], 0u);
  EXPECT_EQ(out[ch05::TILE_WORDS + 2], ch05::TILE_WORDS + 6u);
  EXPECT_EQ(out[ch05::TILE_WORDS + 5], ch05::TILE_WORDS + 3u);
}

}  // namespace
