// Chapter 11 kernels at edge shapes against the CPU reference; the negatives must fail.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "kernels.cuh"
#include "chapters/11_tma_bulk_copies/more_kernels.cuh"
#include "chapters/11_tma_bulk_copies/host.cuh"
#include "common/launch.cuh"
#include "variant_test.cuh"

namespace {

// Poison, launch, synchronise, compare - what the harness does for one variant.
tut::VerifyResult run_variant(const std::string& key, std::uint64_t size, int blocks_per_sm = 1) {
  return tut_test::run_variant(tut_test::test_config(size, 11, {{"blocks-per-sm", blocks_per_sm}}),
                               ch11::variants(), key);
}

// Tiny, one vector short of a sub-tile / a TMA tile, a ragged tail, many tiles.
const std::uint64_t kSizes[] = {16, 4096 - 16, 16384 - 16, 16384 + 16,
                                3 * 16384 + 4096 + 80, (8u << 20) + 16 * 5};

class Positive : public ::testing::TestWithParam<std::string> {};

TEST_P(Positive, MatchesReferenceAtEdgeShapes) {
  SKIP_UNLESS_GPU(9, 0);
  for (std::uint64_t size : kSizes) {
    const tut::VerifyResult r = run_variant(GetParam(), size);
    EXPECT_TRUE(r.ok()) << GetParam() << " size " << size << ": " << r.summary() << "\n"
                        << r.details();
  }
}

TEST_P(Positive, MatchesReferenceWithManyBlocksPerSm) {
  SKIP_UNLESS_GPU(9, 0);
  const tut::VerifyResult r = run_variant(GetParam(), (3u << 20) + 16 * 3, 8);
  EXPECT_TRUE(r.ok()) << r.summary() << "\n" << r.details();
}

INSTANTIATE_TEST_SUITE_P(Ch11, Positive,
                         ::testing::Values("v0_cpasync_low", "v1_bulk_ptx_low", "v1_bulk_ptx_full",
                                           "v2_bulk_cccl_low", "v3_bulk_store_low",
                                           "v4_memcpy_async_low", "v5_bulk_8x16K_low",
                                           "v6_bulk_4x32K_low", "v7_bulk_16x4K_low"));

TEST(Ch11Large, BulkStoreAt64MiB) {
  SKIP_UNLESS_GPU(9, 0);
  const tut::VerifyResult r = run_variant("v3_bulk_store_low", 64u << 20);
  EXPECT_TRUE(r.ok()) << r.summary();
}

// The broken variants must FAIL (and return: the bounded waits give up after 1 s).
TEST(Ch11Negative, WrongExpectTxIsCaught) {
  SKIP_UNLESS_GPU(9, 0);
  EXPECT_FALSE(run_variant("v8_wrong_tx", 3 * 16384 + 16).ok());
}

TEST(Ch11Negative, WrongParityIsCaught) {
  SKIP_UNLESS_GPU(9, 0);
  EXPECT_FALSE(run_variant("v9_wrong_parity", 3 * 16384 + 16).ok());
}

// The second-lap negative: correct in lap 0, so it passes where no block wraps its ring (one
// tile), and fails where blocks lap it (two blocks, as in the harness's lap check at the
// largest check size).
TEST(Ch11Negative, WrongEmptyCountIsCaughtOnceTheRingWraps) {
  SKIP_UNLESS_GPU(9, 0);
  const std::uint64_t size = ch11::kCheckSizes.back();
  tut::ScopedGridCap two_blocks(2);
  EXPECT_FALSE(run_variant("v10_empty_count", size).ok());
  EXPECT_TRUE(run_variant("v10_empty_count", 16384 - 16).ok());  // one tile per block: no lap
  EXPECT_TRUE(run_variant("v1_bulk_ptx_full", size).ok());  // the context is still usable
}

// Host only: the largest check size gives each of two blocks at least 3 laps of every ring.
TEST(Ch11Laps, LargestCheckSizeLapsEveryRing) {
  const std::uint64_t size = ch11::kCheckSizes.back();
  const int blocks = 2;
  EXPECT_GE(ch11::ring_laps(size, 16 * ch11::CPA_TILE_VECS, ch11::CPA_STAGES, blocks), 3u);  // v0
  EXPECT_GE(ch11::ring_laps(size, 16 * 1024, 4, blocks), 3u);   // v1-v4, v8-v10
  EXPECT_GE(ch11::ring_laps(size, 16 * 1024, 8, blocks), 3u);   // v5
  EXPECT_GE(ch11::ring_laps(size, 16 * 2048, 4, blocks), 3u);   // v6
  EXPECT_GE(ch11::ring_laps(size, 16 * 256, 16, blocks), 3u);   // v7
}

// Host only: the 16-byte rules are refused with a reason before anything is launched.
TEST(Ch11Rules, BulkCopyAlignmentAndSize) {
  alignas(16) static unsigned char buf[64];
  EXPECT_EQ(ch11::bulk_copy_violation(buf, buf + 16, 32), "");
  EXPECT_NE(ch11::bulk_copy_violation(buf, buf + 4, 32).find("source"), std::string::npos);
  EXPECT_NE(ch11::bulk_copy_violation(buf + 8, buf, 32).find("destination"), std::string::npos);
  EXPECT_NE(ch11::bulk_copy_violation(buf, buf, 40).find("multiple of 16"), std::string::npos);
}

TEST(Ch11Rules, ReversedSourceIsAPermutationOfEachSubTile) {
  for (int count : {1, 7, 256, 300, 1024}) {
    std::vector<int> seen(count, 0);
    for (int i = 0; i < count; ++i) {
      const int src = ch11::reversed_source(i, count);
      ASSERT_GE(src, 0);
      ASSERT_LT(src, count);
      ASSERT_EQ(src / ch11::SUB_VECS, i / ch11::SUB_VECS);
      ++seen[src];
    }
    for (int c : seen) EXPECT_EQ(c, 1);
  }
}

}  // namespace
