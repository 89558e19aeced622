// GPU tests for chapter 01: the stencil and the tile-reversal kernels at edge sizes, at full
// and at low occupancy, against the CPU references; the negative variant must fail.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#include "kernels.cuh"

namespace {

tut::RunConfig config(std::uint64_t bytes, long long blocks_per_sm = 1) {
  return tut_test::test_config(bytes, 77, {{"blocks-per-sm", blocks_per_sm}});
}

class Ch01Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch01Kernels, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch01::Problem p(config(GetParam()));
  for (const auto& v : ch01::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// one float4; 3 float4 (shorter than the radius-3 halo span); one short of a stencil tile;
// tiles + ragged tail; > 1 MiB; and enough tiles that the persistent grid loops many times.
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch01Kernels,
                         ::testing::Values(16, 48, 1008, 3 * 4096 + 80, (1u << 20) + 112,
                                           64u << 20));

TEST(Ch01Occupancy, LowOccupancyVariantsAtSeveralBlocksPerSm) {
  SKIP_UNLESS_GPU(8, 0);
  for (long long blocks : {1, 2, 3, 32}) {
    ch01::Problem p(config((1u << 20) + 48, blocks));
    for (const auto& v : ch01::variants()) {
      if (v.key.find("_low") == std::string::npos) continue;
      EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok())
          << v.key << " at " << blocks << " blocks/SM";
    }
  }
}

TEST(Ch01Negative, DroppedPartialTileIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  ch01::Problem p(config(3 * 4096 + 80));  // 3 whole tiles + 5 float4
  for (const auto& v : ch01::variants()) {
    if (!v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_FALSE(r.ok()) << v.key << " must fail";
    EXPECT_EQ(r.mismatches, 5u * 4) << "exactly the 5 float4 of the partial tile";
  }
}

TEST(Ch01Reference, ReverseTilesOnAKnownInput) {
  // Host-only sanity of the CPU reference itself (runs without a GPU): 2 tiles + 2 float4.
  const std::size_t n_vecs = 2 * ch01::STREAM_TILE_VECS + 2;
  std::vector<std::uint32_t> in(n_vecs * 4);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i);
  const auto out = ch01::reference_reverse_tiles(in, ch01::STREAM_TILE_VECS);
  EXPECT_EQ(out[0], (ch01::STREAM_TILE_VECS - 1) * 4u);  // first of tile 0 <- its last float4
  EXPECT_EQ(out[2 * ch01::STREAM_TILE_VECS * 4], (2 * ch01::STREAM_TILE_VECS + 1) * 4u);
  EXPECT_EQ(out[(2 * ch01::STREAM_TILE_VECS + 1) * 4 + 3], 2 * ch01::STREAM_TILE_VECS * 4u + 3);
}

TEST(Ch01Reference, StencilOnAKnownInput) {
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8};
  const auto out = ch01::reference_stencil(in, ch01::RADIUS);
  EXPECT_EQ(out[0], 1 + 2 + 3 + 4);          // left edge: zeros outside
  EXPECT_EQ(out[3], 1 + 2 + 3 + 4 + 5 + 6 + 7);
  EXPECT_EQ(out[7], 5 + 6 + 7 + 8);
}

}  // namespace
