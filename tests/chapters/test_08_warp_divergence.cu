// GPU tests for chapter 08: every way of issuing the copies of a warp slice (converged,
// divergent, divergent + __syncwarp, sized, zero-fill) at edge sizes and occupancies against
// the CPU reference; the literal half-warp kernel (negative) must fail; the largest check size
// gives the lap check 3+ laps of the ring.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // main.cu: the registry without its main()
#include "main.cu"

namespace {

tut::RunConfig config(std::uint64_t bytes, std::uint64_t seed = 77, long long blocks_per_sm = 1) {
  return tut_test::test_config(bytes, seed, {{"blocks-per-sm", blocks_per_sm}});
}

class Ch08Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch08Kernels, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch08::Problem p(config(GetParam()));
  for (const auto& v : ch08::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// one chunk; 3 chunks (fewer than the 8 issuers of a half-warp); a slice short of two (63
// chunks); a tile short of one chunk; tiles + a ragged slice; > 1 MiB; and 64 MiB, where the
// persistent grid loops and every pipeline slot is reused many times.
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch08Kernels,
                         ::testing::Values(16, 48, 1008, 4096 - 16, 5 * 4096 + 16 * 45,
                                           (1u << 20) + 112, 64u << 20));

TEST(Ch08Occupancy, LowOccupancyVariantsAtSeveralBlocksPerSm) {
  SKIP_UNLESS_GPU(8, 0);
  for (long long blocks : {1, 2, 3, 32}) {
    ch08::Problem p(config((1u << 20) + 48, 77, blocks));
    for (const auto& v : ch08::variants()) {
      if (v.key.find("_low") == std::string::npos) continue;
      EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << v.key << " at " << blocks << " blocks/SM";
    }
  }
}

TEST(Ch08Negative, HalfWarpCopyIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  // A seed no other test uses: the chunks the broken kernel never stages have then never been
  // in shared memory at all, so stale shared memory from an earlier kernel cannot hold them.
  ch08::Problem p(config(1008, 4242));  // 63 chunks: a full slice + a slice of 31
  for (const auto& v : ch08::variants()) {
    if (!v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_FALSE(r.ok()) << v.key << " must fail";
    // never staged: positions 8-15 and 24-31 of slice 0 (16) and 8-15, 24-30 of slice 1 (15)
    EXPECT_EQ(r.mismatches, 31u * 4) << "exactly the chunks of the idle lanes";
  }
}

TEST(Ch08Laps, EveryVariantOnTheLapCheckGrid) {
  // What the harness's lap check does: the largest check size on kLapCheckBlocks blocks, so
  // every ring wraps many times. Positives must pass; negatives must still fail.
  SKIP_UNLESS_GPU(8, 0);
  std::uint64_t largest = 0;
  for (std::uint64_t s : ch08::kCheckSizes) largest = s > largest ? s : largest;
  const tut::ScopedGridCap cap(tut::kLapCheckBlocks);
  ch08::Problem p(config(largest));
  for (const auto& v : ch08::variants()) {
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    if (v.negative)
      EXPECT_FALSE(r.ok()) << v.key << " must fail on two blocks too";
    else
      EXPECT_TRUE(r.ok()) << v.key << " on two blocks: " << r.summary() << "\n" << r.details();
  }
}

TEST(Ch08Laps, LargestCheckSizeGivesTwoBlocksThreeLaps) {
  // Host arithmetic: the harness's lap check runs the largest check size on kLapCheckBlocks (2) blocks; each
  // must refill every slot of the 4-slot ring at least 3 times.
  std::uint64_t largest = 0;
  for (std::uint64_t s : ch08::kCheckSizes) largest = s > largest ? s : largest;
  const std::uint64_t tiles = (largest / 16 + ch08::TILE_CHUNKS - 1) / ch08::TILE_CHUNKS;
  EXPECT_GE(tut::laps_per_block(tiles, tut::kLapCheckBlocks, ch08::STAGES), 3u);
}

TEST(Ch08Reference, ReverseSlicesOnAKnownInput) {
  // Host-only: 1 full slice + 3 chunks.
  const std::size_t n_chunks = ch08::SLICE_CHUNKS + 3;
  std::vector<std::uint32_t> in(n_chunks * 4);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i);
  const auto out = tut::stencil_stream::reference_reverse_tiles(in, ch08::SLICE_CHUNKS);
  EXPECT_EQ(out[0], (ch08::SLICE_CHUNKS - 1) * 4u);                  // chunk 0 <- chunk 31
  EXPECT_EQ(out[ch08::SLICE_CHUNKS * 4], (ch08::SLICE_CHUNKS + 2) * 4u);  // chunk 32 <- 34
  EXPECT_EQ(out[(ch08::SLICE_CHUNKS + 2) * 4 + 1], ch08::SLICE_CHUNKS * 4u + 1);
}

TEST(Ch08Reference, SliceCountsAtTheTail) {
  EXPECT_EQ(ch08::slice_count(63, 0), 32);
  EXPECT_EQ(ch08::slice_count(63, 32), 31);
  EXPECT_EQ(ch08::slice_count(63, 64), 0);
}

}  // namespace
