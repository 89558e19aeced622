// GPU tests for chapter 09: every alignment promise and every source/destination offset at
// edge sizes against the CPU reference; the negative (a 16-byte promise kept by rounding the
// source address down) runs and copies the wrong bytes; a promise the addresses do not keep
// is refused before launch; the largest check size gives the lap check 3+ laps of the ring.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // main.cu: the registry without its main()
#include "main.cu"

namespace {

tut::RunConfig config(std::uint64_t bytes) {
  return tut_test::test_config(bytes, 99);
}

class Ch09Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch09Kernels, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch09::Problem p(config(GetParam()));
  for (const auto& v : ch09::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// 16 B; 48 B (a partial slice); a slice short of one chunk... up to tiles + ragged slice and
// 32 MiB, where every slot is reused.
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch09Kernels,
                         ::testing::Values(16, 48, 512 - 16, 4096 - 16, 5 * 4096 + 16 * 45,
                                           (1u << 20) + 112, 32u << 20));

TEST(Ch09Negative, RoundedDownSourceIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  ch09::Problem p(config(4096 + 48));
  for (const auto& v : ch09::variants()) {
    if (!v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_FALSE(r.ok()) << v.key << " must fail";
    // Every word comes from 4 bytes too early: with unique input words none matches.
    EXPECT_EQ(r.mismatches, r.checked) << "every word is shifted by one";
  }
}

TEST(Ch09Laps, EveryVariantOnTheLapCheckGrid) {
  // What the harness's lap check does: the largest check size on kLapCheckBlocks blocks, so
  // every ring wraps many times. Positives must pass; negatives must still fail.
  SKIP_UNLESS_GPU(8, 0);
  std::uint64_t largest = 0;
  for (std::uint64_t s : ch09::kCheckSizes) largest = s > largest ? s : largest;
  const tut::ScopedGridCap cap(tut::kLapCheckBlocks);
  ch09::Problem p(config(largest));
  for (const auto& v : ch09::variants()) {
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    if (v.negative)
      EXPECT_FALSE(r.ok()) << v.key << " must fail on two blocks too";
    else
      EXPECT_TRUE(r.ok()) << v.key << " on two blocks: " << r.summary() << "\n" << r.details();
  }
}

TEST(Ch09Laps, LargestCheckSizeGivesTwoBlocksThreeLaps) {
  // Host arithmetic: the harness's lap check runs the largest check size on kLapCheckBlocks (2) blocks. Each
  // must refill every slot of the 4-slot ring at least 3 times (and v10's one slot as often).
  std::uint64_t largest = 0;
  for (std::uint64_t s : ch09::kCheckSizes) largest = s > largest ? s : largest;
  const std::uint64_t tiles = (largest + ch09::TILE_BYTES - 1) / ch09::TILE_BYTES;
  EXPECT_GE(tut::laps_per_block(tiles, tut::kLapCheckBlocks, ch09::STAGES), 3u);
}

TEST(Ch09Alignment, WidestLegalCopyPerOffset) {
  // Host-only: the run-time dispatch of v8.
  const auto* base = reinterpret_cast<const unsigned char*>(std::uintptr_t{0x7f0000000000});
  EXPECT_EQ(ch09::widest_alignment(base, 0), 16);
  EXPECT_EQ(ch09::widest_alignment(base + 1, 0), 1);
  EXPECT_EQ(ch09::widest_alignment(base + 4, 0), 4);
  EXPECT_EQ(ch09::widest_alignment(base + 8, 0), 8);
  EXPECT_EQ(ch09::widest_alignment(base + 16, 0), 16);
  EXPECT_EQ(ch09::widest_alignment(base + 128, 0), 16);
  EXPECT_EQ(ch09::widest_alignment(base, 4), 4);
  EXPECT_EQ(ch09::widest_alignment(base + 8, 1), 1);
  EXPECT_EQ(ch09::widest_alignment(base + 2, 0), 1);  // no 2-byte cp.async: a synchronous copy
  EXPECT_EQ(ch09::address_alignment(base, 0), 128);
  EXPECT_EQ(ch09::address_alignment(base + 64, 0), 64);
}

TEST(Ch09Alignment, CheckRefusesBrokenPromisesWithAMessage) {
  const auto* base = reinterpret_cast<const unsigned char*>(std::uintptr_t{0x7f0000000000});
  EXPECT_TRUE(ch09::alignment_ok(base, 0, 16, "test"));
  EXPECT_TRUE(ch09::alignment_ok(base + 1, 3, 1, "test"));
  EXPECT_TRUE(ch09::alignment_ok(base + 8, 0, 8, "test"));
  EXPECT_TRUE(ch09::alignment_ok(base + 128, 0, 128, "test"));  // v7's 128-byte promise
  EXPECT_TRUE(ch09::alignment_ok(base + 16, 0, 16, "test"));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(ch09::alignment_ok(base + 4, 0, 16, "aligned_size_t<16>"));
  EXPECT_FALSE(ch09::alignment_ok(base, 8, 16, "aligned_size_t<16>"));
  EXPECT_FALSE(ch09::alignment_ok(base + 16, 0, 128, "aligned_size_t<128>"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("promises 16-byte alignment"), std::string::npos) << err;
  EXPECT_NE(err.find("Not launching"), std::string::npos) << err;
}

TEST(Ch09Alignment, TypeAlignment) {
  static_assert(alignof(ch09::Chunk16) == 16, "__align__(16) raises the type's alignment");
  static_assert(alignof(ch09::Bytes16) == 1, "an array of bytes has alignment 1");
  SUCCEED();
}

}  // namespace
