// GPU tests for chapter 04: every pipeline depth at edge sizes, several occupancies and
// several compute intensities against the CPU reference; the wrong-wait negative must fail.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#include "kernels.cuh"

namespace {

tut::RunConfig config(std::uint64_t bytes, long long blocks_per_sm = 1, long long rounds = 0) {
  return tut_test::test_config(bytes, 404, {{"blocks-per-sm", blocks_per_sm}, {"rounds", rounds}});
}

class Ch04Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch04Kernels, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch04::Problem p(config(GetParam()));
  for (const auto& v : ch04::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// one uint4; 3 uint4; one short of a tile; tiles + ragged tail; > 1 MiB; and 64 MiB (16384
// tiles: at 1 block per SM ~124 tiles per block, far more than the deepest ring).
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch04Kernels,
                         ::testing::Values(16, 48, 4096 - 16, 3 * 4096 + 80, (1u << 20) + 112,
                                           64u << 20));

TEST(Ch04Shapes, EveryDepthAtSeveralBlocksPerSmAndRounds) {
  SKIP_UNLESS_GPU(8, 0);
  // Fewer tiles than blocks x stages (most blocks run only the prologue and the drain), a few
  // tiles per block, and many: with 1, 2, 3 and 32 blocks per SM (32 is clamped to what fits).
  for (std::uint64_t bytes : {std::uint64_t{40} * 4096 + 16, std::uint64_t{1} << 20,
                              (std::uint64_t{8} << 20) + 4096 + 32}) {
    for (long long blocks : {1, 2, 3, 32}) {
      for (long long rounds : {0, 3}) {
        ch04::Problem p(config(bytes, blocks, rounds));
        for (const auto& v : ch04::variants()) {
          if (v.negative || v.key.find("_low") == std::string::npos) continue;
          const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
          EXPECT_TRUE(r.ok()) << v.key << " at " << bytes << " bytes, " << blocks
                              << " blocks/SM, " << rounds << " rounds: " << r.summary();
        }
      }
    }
  }
}

TEST(Ch04Negative, WaitingOnOnePriorStageTooManyIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  for (std::uint64_t bytes : {std::uint64_t{3 * 4096 + 80}, std::uint64_t{8} << 20}) {
    ch04::Problem p(config(bytes));
    for (const auto& v : ch04::variants()) {
      if (!v.negative) continue;
      const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
      EXPECT_FALSE(r.ok()) << v.key << " must fail at " << bytes << " bytes";
    }
  }
}

TEST(Ch04Reference, ReverseAndWorkOnAKnownInput) {
  // Host-only: the CPU reference itself (runs without a GPU). 1 tile + 2 uint4.
  const std::size_t n_vecs = ch04::TILE_VECS + 2;
  std::vector<std::uint32_t> in(n_vecs * 4);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i);
  const auto copy = ch04::reference_reverse_tiles(in, 0);
  EXPECT_EQ(copy[0], (ch04::TILE_VECS - 1) * 4u);
  EXPECT_EQ(copy[ch04::TILE_VECS * 4], (ch04::TILE_VECS + 1) * 4u);  // tail reversed in itself
  const auto worked = ch04::reference_reverse_tiles(in, 2);
  EXPECT_EQ(worked[0], ch04::work_word(ch04::work_word(copy[0], 1), 1));
  EXPECT_NE(worked[0], copy[0]);
}

}  // namespace
