// GPU tests for chapter 10: AoS (two promises), SoA, and the copy-constructor type at edge
// sizes against the CPU references; the negative (the type staged through its copy
// constructor) runs and fails the real reference; the largest check size gives the lap check
// 3+ laps of the ring.
#include <gtest/gtest.h>

#include <type_traits>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // main.cu: the registry without its main()
#include "main.cu"

namespace {

tut::RunConfig config(std::uint64_t bytes) {
  return tut_test::test_config(bytes, 1010);
}

class Ch10Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch10Kernels, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch10::Problem p(config(GetParam()));
  for (const auto& v : ch10::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// 4 particles; 8; a slice short of 4; a tile short of 4; 5 tiles + a ragged slice; ~8 MiB and
// ~48 MiB (many slot reuses).
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch10Kernels,
                         ::testing::Values(96, 192, 24 * 28, 24 * 252, 24 * (5 * 256 + 36),
                                           96 * 87382, 96 * 524288));

TEST(Ch10Negative, StagingThroughTheCopyConstructorIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  ch10::Problem p(config(24 * (256 + 4)));
  for (const auto& v : ch10::variants()) {
    if (!v.negative) continue;
    EXPECT_EQ(v.reference, ch10::kAoS) << "a negative is checked against the real reference";
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_FALSE(r.ok()) << v.key << " must fail: the constructor drops the velocity";
    // Each particle loses its velocity (3 floats) and does not move (3 more): every float
    // mismatches except where the input velocity is 0 (unique inputs: at most one such value).
    EXPECT_GT(r.mismatches, r.checked - 16);
  }
}

TEST(Ch10Laps, EveryVariantOnTheLapCheckGrid) {
  // What the harness's lap check does: the largest check size on kLapCheckBlocks blocks, so
  // every ring wraps many times. Positives must pass; negatives must still fail.
  SKIP_UNLESS_GPU(8, 0);
  std::uint64_t largest = 0;
  for (std::uint64_t s : ch10::kCheckSizes) largest = s > largest ? s : largest;
  const tut::ScopedGridCap cap(tut::kLapCheckBlocks);
  ch10::Problem p(config(largest));
  for (const auto& v : ch10::variants()) {
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    if (v.negative)
      EXPECT_FALSE(r.ok()) << v.key << " must fail on two blocks too";
    else
      EXPECT_TRUE(r.ok()) << v.key << " on two blocks: " << r.summary() << "\n" << r.details();
  }
}

TEST(Ch10Laps, LargestCheckSizeGivesTwoBlocksThreeLaps) {
  // Host arithmetic: the harness's lap check runs the largest check size on kLapCheckBlocks (2) blocks; each
  // must refill every slot of the 4-slot ring at least 3 times.
  std::uint64_t largest = 0;
  for (std::uint64_t s : ch10::kCheckSizes) largest = s > largest ? s : largest;
  const std::uint64_t particles = largest / sizeof(ch10::Particle);
  const std::uint64_t tiles = (particles + ch10::TILE_PARTICLES - 1) / ch10::TILE_PARTICLES;
  EXPECT_GE(tut::laps_per_block(tiles, tut::kLapCheckBlocks, ch10::STAGES), 3u);
}

TEST(Ch10Types, TriviallyCopyable) {
  EXPECT_TRUE(std::is_trivially_copyable<ch10::Particle>::value);
  EXPECT_FALSE(std::is_trivially_copyable<ch10::ParticleWithCtor>::value);
  EXPECT_EQ(sizeof(ch10::Particle), sizeof(ch10::ParticleWithCtor));
}

TEST(Ch10Reference, AdvanceOnAKnownInput) {
  // Host-only: 4 particles, AoS and SoA.
  std::vector<float> in(4 * ch10::FIELDS);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  const auto aos = ch10::reference_advance(in, ch10::kAoS);
  EXPECT_EQ(aos[0], 0.0f + 0.5f * 3.0f);   // particle 0: pos0 + dt * vel0
  EXPECT_EQ(aos[5], 5.0f);                 // vel unchanged
  const auto soa = ch10::reference_advance(in, ch10::kSoA);
  EXPECT_EQ(soa[1], 1.0f + 0.5f * 13.0f);  // particle 1: pos plane 0, vel plane 3 (n = 4)
}

}  // namespace
