// GPU tests for chapter 07: the unified and the producer/consumer stencil kernels at edge
// sizes and several occupancies against the CPU reference; the thread-scope hand-over
// (negative) must fail, and fail on its first tile; the largest check size gives the lap check
// 3+ laps of the deepest ring.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // main.cu: the registry without its main()
#include "main.cu"

namespace {

tut::RunConfig config(std::uint64_t bytes, long long blocks_per_sm = 1) {
  return tut_test::test_config(bytes, 77, {{"blocks-per-sm", blocks_per_sm}});
}

class Ch07Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch07Kernels, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch07::Problem p(config(GetParam()));
  for (const auto& v : ch07::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// 4 floats (shorter than the radius); 8 floats; a tile less 4 floats; one tile exactly;
// tiles + a ragged tail; > 1 MiB ragged; 64 MiB (many tiles per block, every stage reused).
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch07Kernels,
                         ::testing::Values(16, 32, 4096 - 16, 4096, 5 * 4096 + 48,
                                           (1u << 20) + 16 * 3, 64u << 20));

TEST(Ch07Occupancy, EveryVariantAtSeveralBlocksPerSm) {
  SKIP_UNLESS_GPU(8, 0);
  for (long long blocks : {1, 2, 4, 32}) {
    ch07::Problem p(config((2u << 20) + 16 * 5, blocks));
    for (const auto& v : ch07::variants()) {
      if (v.negative) continue;
      EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << v.key << " at " << blocks << " blocks/SM";
    }
  }
}

TEST(Ch07Negative, ThreadScopeHandOverIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  ch07::Problem p(config(4096));  // one tile: computed from the NaN-initialised slot
  for (const auto& v : ch07::variants()) {
    if (!v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_FALSE(r.ok()) << v.key << " must fail";
    EXPECT_EQ(r.mismatches, 1024u) << "every output of the only tile";
  }
}

TEST(Ch07Laps, EveryVariantOnTheLapCheckGrid) {
  // What the harness's lap check does: the largest check size on kLapCheckBlocks blocks, so
  // every ring wraps many times. Positives must pass; negatives must still fail.
  SKIP_UNLESS_GPU(8, 0);
  std::uint64_t largest = 0;
  for (std::uint64_t s : ch07::kCheckSizes) largest = s > largest ? s : largest;
  const tut::ScopedGridCap cap(tut::kLapCheckBlocks);
  ch07::Problem p(config(largest));
  for (const auto& v : ch07::variants()) {
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    if (v.negative)
      EXPECT_FALSE(r.ok()) << v.key << " must fail on two blocks too";
    else
      EXPECT_TRUE(r.ok()) << v.key << " on two blocks: " << r.summary() << "\n" << r.details();
  }
}

TEST(Ch07Laps, LargestCheckSizeGivesTwoBlocksThreeLaps) {
  // Host arithmetic: the harness's lap check runs the largest check size on kLapCheckBlocks (2) blocks; each
  // must refill every slot of the deepest ring at least 3 times.
  std::uint64_t largest = 0;
  for (std::uint64_t s : ch07::kCheckSizes) largest = s > largest ? s : largest;
  const std::uint64_t tiles = (largest / 4 + ch07::TILE - 1) / ch07::TILE;
  EXPECT_GE(tut::laps_per_block(tiles, tut::kLapCheckBlocks, ch07::kDeepestRing), 3u);
}

TEST(Ch07Reference, StencilOnAKnownInput) {
  // Host-only: 16 ones. Output i counts the in-range neighbours within radius 7.
  const std::vector<float> in(16, 1.0f);
  const auto out = tut::stencil_stream::reference_stencil(in, ch07::RADIUS);
  EXPECT_EQ(out[0], 8.0f);   // i = 0: itself + 7 to the right
  EXPECT_EQ(out[7], 15.0f);  // i = 7: 7 left + itself + 7 right
  EXPECT_EQ(out[15], 8.0f);
}

}  // namespace
