// GPU tests for chapter 06: the raw-PTX cp.async kernels (.ca 4/8/16 B, .cg 16 B, mbarrier
// completion) and the window workload at edge sizes and several occupancies, against the CPU
// references; the src-size-in-words negative must fail (from 3 words on), the ring-wrap
// negative from the second lap on; the largest check size gives every ring the laps the
// harness's lap check needs.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // main.cu: the registry without its main()
#include "main.cu"

namespace {

tut::RunConfig config(std::uint64_t bytes, long long blocks_per_sm = 1) {
  return tut_test::test_config(bytes, 66, {{"blocks-per-sm", blocks_per_sm}});
}

bool runnable(const tut::Variant<ch06::Problem>& v, const tut::DeviceSummary& d) {
  return d.cc_major * 10 + d.cc_minor >= v.min_cc;
}

class Ch06Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch06Kernels, EveryVariantMatchesItsReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch06::Problem p(config(GetParam()));
  for (const auto& v : ch06::variants()) {
    if (v.negative || !runnable(v, p.cfg.device)) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// 1, 2, 3 words; a tile less a word; a tile plus a word (the window's next tile is ragged);
// 7 tiles + 3 words; > 1 MiB ragged; 64 MiB (many tiles per block: the 8-slot ring wraps).
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch06Kernels,
                         ::testing::Values(4, 8, 12, 4096 - 4, 4096 + 4, 7 * 4096 + 12,
                                           (1u << 20) + 4 * 5, 64u << 20));

TEST(Ch06Occupancy, EveryVariantAtSeveralBlocksPerSm) {
  SKIP_UNLESS_GPU(8, 0);
  for (long long blocks : {1, 2, 5, 32}) {
    ch06::Problem p(config((3u << 20) + 4 * 1, blocks));
    for (const auto& v : ch06::variants()) {
      if (v.negative || !runnable(v, p.cfg.device)) continue;
      EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << v.key << " at " << blocks << " blocks/SM";
    }
  }
}

TEST(Ch06Negative, SrcSizeInWordsIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  const tut::VerifyResult r =
      tut_test::run_variant(config(2 * 4096), ch06::variants(), "v9_srcsize_words");
  EXPECT_FALSE(r.ok()) << "v9_srcsize_words must fail";
  EXPECT_GE(r.mismatches, 2u * 768 - 1) << "3 of every 4 words are zero-filled";
  // the README's claim: it passes at 1 and 2 words only
  for (std::uint64_t bytes : {4u, 8u})
    EXPECT_TRUE(tut_test::run_variant(config(bytes), ch06::variants(), "v9_srcsize_words").ok())
        << bytes << " bytes";
  for (std::uint64_t bytes : {12u, 16u})
    EXPECT_FALSE(tut_test::run_variant(config(bytes), ch06::variants(), "v9_srcsize_words").ok())
        << bytes << " bytes";
}

TEST(Ch06Negative, RingWrapBugFailsFromTheSecondLapOnOnly) {
  SKIP_UNLESS_GPU(8, 0);
  constexpr std::uint64_t kSlots = 8;  // stream_v8_wrap_bug_kernel's ring
  const std::uint64_t lap = kSlots * 4096;
  {  // two blocks with exactly one lap each: the bug never shows
    tut::ScopedGridCap two_blocks(2);
    EXPECT_TRUE(tut_test::run_variant(config(2 * lap), ch06::variants(), "v8_wrap_bug").ok());
  }
  {  // two blocks, one tile into the second lap each
    tut::ScopedGridCap two_blocks(2);
    EXPECT_FALSE(
        tut_test::run_variant(config(2 * lap + 2 * 4096), ch06::variants(), "v8_wrap_bug").ok());
  }
  const std::uint64_t largest = tut::reversed_tiles::check_sizes().back();
  EXPECT_FALSE(tut_test::run_variant(config(largest), ch06::variants(), "v8_wrap_bug").ok());
  tut::ScopedGridCap two_blocks(tut::kLapCheckBlocks);
  EXPECT_FALSE(tut_test::run_variant(config(largest), ch06::variants(), "v8_wrap_bug").ok());
}

TEST(Ch06Laps, LargestCheckSizeGivesTwoBlocksThreeLapsOfTheDeepestRing) {
  // Host arithmetic (runs without a GPU): the deepest ring here is 8 slots (v1, v3, v4, v8).
  const std::uint64_t words = tut::reversed_tiles::check_sizes().back() / 4;
  const std::uint64_t tiles = (words + ch06::TILE_WORDS - 1) / ch06::TILE_WORDS;
  EXPECT_GE(tut::laps_per_block(tiles, tut::kLapCheckBlocks, tut::reversed_tiles::MAX_STAGES), 3u);
  EXPECT_EQ(tut::reversed_tiles::MAX_STAGES, 8);
}

TEST(Ch06Laps, EveryVariantPassesOnTwoBlocksAtTheLargestCheckSize) {
  SKIP_UNLESS_GPU(8, 0);
  tut::ScopedGridCap two_blocks(tut::kLapCheckBlocks);  // what the harness's lap check does
  ch06::Problem p(config(tut::reversed_tiles::check_sizes().back()));
  for (const auto& v : ch06::variants()) {
    if (v.negative || !runnable(v, p.cfg.device)) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " on two blocks: " << r.summary();
  }
}

TEST(Ch06Reference, WindowOnAKnownInput) {
  // Host-only: 1 tile + 2 words. out[i] = in[i] + in[i + 1024], zero past the end.
  std::vector<std::uint32_t> in(ch06::TILE_WORDS + 2);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i);
  in[1] = 0xFFFFFFFFu - 5;  // wraps: (2^32 - 6) + 1025 = 1019 mod 2^32
  const auto out = ch06::reference_window(in);
  EXPECT_EQ(out[0], 1024u);
  EXPECT_EQ(out[1], 1019u);
  EXPECT_EQ(out[2], 2u);  // in[1026] is past the end
  EXPECT_EQ(out[ch06::TILE_WORDS + 1], ch06::TILE_WORDS + 1u);
}

}  // namespace
