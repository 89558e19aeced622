// GPU tests for chapter 07: the unified and the producer/consumer stencil kernels at edge
// sizes and several occupancies against the CPU reference; the thread-scope hand-over
// (negative) must fail, and fail on its first tile.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu_test.cuh"
#include "kernels.cuh"

namespace {

tut::RunConfig config(std::uint64_t bytes, long long blocks_per_sm = 1) {
  tut::RunConfig cfg;
  cfg.size = bytes;
  cfg.seed = 77;
  cfg.device = tut::query_device();
  cfg.extras["blocks-per-sm"] = blocks_per_sm;
  return cfg;
}

tut::VerifyResult run(ch07::Problem& p, const tut::Variant<ch07::Problem>& v) {
  p.poison(nullptr);
  v.launch(p, nullptr);
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  return p.verify(nullptr, v.reference);
}

class Ch07Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch07Kernels, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch07::Problem p(config(GetParam()));
  for (const auto& v : ch07::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = run(p, v);
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
      EXPECT_TRUE(run(p, v).ok()) << v.key << " at " << blocks << " blocks/SM";
    }
  }
}

TEST(Ch07Negative, ThreadScopeHandOverIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  ch07::Problem p(config(4096));  // one tile: computed from the NaN-initialised slot
  for (const auto& v : ch07::variants()) {
    if (!v.negative) continue;
    const tut::VerifyResult r = run(p, v);
    EXPECT_FALSE(r.ok()) << v.key << " must fail";
    EXPECT_EQ(r.mismatches, 1024u) << "every output of the only tile";
  }
}

TEST(Ch07Reference, StencilOnAKnownInput) {
  // Host-only: 16 ones. Output i counts the in-range neighbours within radius 7.
  const std::vector<float> in(16, 1.0f);
  const auto out = ch07::reference_stencil(in);
  EXPECT_EQ(out[0], 8.0f);   // i = 0: itself + 7 to the right
  EXPECT_EQ(out[7], 15.0f);  // i = 7: 7 left + itself + 7 right
  EXPECT_EQ(out[15], 8.0f);
}

}  // namespace
