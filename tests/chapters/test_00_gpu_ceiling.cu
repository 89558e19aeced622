// GPU tests for chapter 00: every copy kernel at edge sizes against the input, and the
// negative variant caught. Skipped (never passed) without a GPU.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // main.cu without its main(): the Problem and the registry
#include "main.cu"

namespace {

tut::RunConfig config(std::uint64_t bytes) {
  return tut_test::test_config(bytes, 2024);
}

class Ch00Copy : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch00Copy, EveryVariantMatchesItsInput) {
  SKIP_UNLESS_GPU(8, 0);
  ch00::Problem p(config(GetParam()));
  for (const auto& v : ch00::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// tiny, one word, not a multiple of 16 bytes, odd tail after many vectors, large
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch00Copy,
                         ::testing::Values(4, 12, 20, 4096 + 12, (1u << 20) + 8, 64u << 20));

TEST(Ch00Laps, EveryVariantPassesWithTwoBlocks) {
  // The harness's lap check caps the grid at two blocks: every grid-stride loop then walks
  // the whole array in thousands of steps per thread, v3's unrolled loop included.
  SKIP_UNLESS_GPU(8, 0);
  ch00::Problem p(config((16u << 20) + 12));
  const tut::ScopedGridCap cap(2);
  for (const auto& v : ch00::variants()) {
    if (v.negative) continue;
    EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << v.key << " with a 2-block grid";
  }
}

TEST(Ch00Negative, DroppedTailIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  ch00::Problem p(config(4096 + 12));
  for (const auto& v : ch00::variants()) {
    if (!v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_FALSE(r.ok()) << v.key << " must fail";
    EXPECT_EQ(r.mismatches, 3u) << "exactly the 3 tail words stay poisoned";
  }
}

}  // namespace
