// Chapter 13 kernels at edge shapes against the CPU reference; the cluster-size query; the
// negative variant must fail (and return).
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // the chapter's program without its main(): Problem, variants()
#include "main.cu"
#include "common/launch.cuh"

namespace {

tut::VerifyResult run_variant(const std::string& key, std::uint64_t size) {
  return tut_test::run_variant(tut_test::test_config(size, 13), ch13::variants(), key);
}

// 16 B (one partial row: 1 busy block, 3 idle ones in the cluster); a row minus 16 B; rows
// plus a tail ending inside a tile; one row more than two clusters; many clusters.
const std::uint64_t kSizes[] = {16, 65536 - 16, 5 * 65536 + 8192 + 48, 9 * 65536 + 16,
                                (16u << 20) + 4096};

class Positive : public ::testing::TestWithParam<std::string> {};

TEST_P(Positive, MatchesReferenceAtEdgeShapes) {
  SKIP_UNLESS_GPU(9, 0);
  for (std::uint64_t size : kSizes) {
    const tut::VerifyResult r = run_variant(GetParam(), size);
    EXPECT_TRUE(r.ok()) << GetParam() << " size " << size << ": " << r.summary() << "\n"
                        << r.details();
  }
}

INSTANTIATE_TEST_SUITE_P(Ch13, Positive,
                         ::testing::Values("v0_bulk", "v1_dsmem_pull", "v2_st_async",
                                           "v3_multicast_ptx", "v4_multicast_cccl",
                                           "v5_dsmem_push"));

// One cluster walking every row group: the harness's lap check, per variant (64 laps).
TEST_P(Positive, MatchesReferenceWhenTheRingWraps) {
  SKIP_UNLESS_GPU(9, 0);
  tut::ScopedGridCap one_cluster(2);  // rounded to a whole cluster of 4
  const tut::VerifyResult r = run_variant(GetParam(), ch13::kCheckSizes.back());
  EXPECT_TRUE(r.ok()) << r.summary() << "\n" << r.details();
}

// Host only: at the largest check size, one cluster's blocks lap the ring at least 3 times.
TEST(Ch13Laps, LargestCheckSizeLapsTheRing) {
  EXPECT_GE(ch13::ring_laps(ch13::kCheckSizes.back(), 1), 3u);
  EXPECT_EQ(tut::apply_grid_cap(ch13::cluster_grid(ch13::kCheckSizes.back() / 4), ch13::CLUSTER),
            ch13::cluster_grid(ch13::kCheckSizes.back() / 4));  // no cap outside the lap check
  tut::ScopedGridCap two(2);
  EXPECT_EQ(tut::apply_grid_cap(ch13::cluster_grid(ch13::kCheckSizes.back() / 4), ch13::CLUSTER),
            static_cast<unsigned>(ch13::CLUSTER));  // the lap check: one whole cluster
}

TEST(Ch13Negative, MaskMissingARankIsCaught) {
  SKIP_UNLESS_GPU(9, 0);
  EXPECT_FALSE(run_variant("v9_bad_mask", 9 * 65536 + 16).ok());
  // The bounded waits gave up cleanly: the context is still usable afterwards.
  EXPECT_TRUE(run_variant("v3_multicast_ptx", 65536).ok());
}

TEST(Ch13Cluster, ClusterOfFourFits) {
  SKIP_UNLESS_GPU(9, 0);
  const int portable = ch13::max_cluster_size(ch13::broadcast_v3_multicast_ptx_kernel, false);
  const int any = ch13::max_cluster_size(ch13::broadcast_v3_multicast_ptx_kernel, true);
  EXPECT_GE(portable, ch13::CLUSTER);
  EXPECT_GE(any, portable);
  std::printf("max cluster size: %d portable, %d non-portable\n", portable, any);
}

TEST(Ch13Host, GridIsWholeClusters) {
  EXPECT_EQ(ch13::cluster_grid(4), 4u);                         // one partial row
  EXPECT_EQ(ch13::cluster_grid(ch13::ROW_WORDS * 4), 4u);       // exactly one cluster
  EXPECT_EQ(ch13::cluster_grid(ch13::ROW_WORDS * 4 + 4), 8u);   // one word more: two
}

}  // namespace
