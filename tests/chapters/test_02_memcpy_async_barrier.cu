// GPU tests for chapter 02: every memcpy_async + barrier kernel at edge sizes and occupancies
// against the CPU references; the early-read negative variant must fail.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "kernels.cuh"

namespace {

tut::RunConfig config(std::uint64_t bytes, long long blocks_per_sm = 1) {
  tut::RunConfig cfg;
  cfg.size = bytes;
  cfg.seed = 202;
  cfg.device = tut::query_device();
  cfg.extras["blocks-per-sm"] = blocks_per_sm;
  return cfg;
}

tut::VerifyResult run(ch02::Problem& p, const tut::Variant<ch02::Problem>& v) {
  p.poison(nullptr);
  v.launch(p, nullptr);
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  return p.verify(nullptr, v.reference);
}

class Ch02Kernels : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(Ch02Kernels, EveryVariantMatchesTheReference) {
  SKIP_UNLESS_GPU(8, 0);
  ch02::Problem p(config(GetParam()));
  for (const auto& v : ch02::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = run(p, v);
    EXPECT_TRUE(r.ok()) << v.key << " at " << GetParam() << " bytes: " << r.summary() << "\n"
                        << r.details();
  }
}

// one float4 (4 floats: less than the 7-wide stencil window); 3 float4; one short of a stencil
// tile; a stencil tile and a bit (halo crosses into a second tile); tiles + ragged tail;
// > 1 MiB; and enough tiles that every persistent block loops many times.
INSTANTIATE_TEST_SUITE_P(EdgeSizes, Ch02Kernels,
                         ::testing::Values(16, 48, 1008, 1024 + 16, 3 * 4096 + 80,
                                           (1u << 20) + 112, 64u << 20));

TEST(Ch02Occupancy, LowOccupancyVariantsAtSeveralBlocksPerSm) {
  SKIP_UNLESS_GPU(8, 0);
  for (long long blocks : {1, 2, 3, 32}) {
    ch02::Problem p(config((1u << 20) + 48, blocks));
    for (const auto& v : ch02::variants()) {
      if (v.key.find("_low") == std::string::npos) continue;
      EXPECT_TRUE(run(p, v).ok()) << v.key << " at " << blocks << " blocks/SM";
    }
  }
}

TEST(Ch02Negative, ReadingBeforeTheBarrierIsCaught) {
  SKIP_UNLESS_GPU(8, 0);
  for (std::uint64_t bytes : {std::uint64_t{48}, std::uint64_t{3 * 4096 + 80}}) {
    ch02::Problem p(config(bytes));
    for (const auto& v : ch02::variants()) {
      if (!v.negative) continue;
      const tut::VerifyResult r = run(p, v);
      EXPECT_FALSE(r.ok()) << v.key << " must fail at " << bytes << " bytes";
    }
  }
}

TEST(Ch02Reference, StencilOnAKnownInput) {
  // Host-only: the CPU reference itself (runs without a GPU).
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8};
  const auto out = ch02::reference_stencil(in);
  EXPECT_EQ(out[0], 1 + 2 + 3 + 4);
  EXPECT_EQ(out[3], 1 + 2 + 3 + 4 + 5 + 6 + 7);
  EXPECT_EQ(out[7], 5 + 6 + 7 + 8);
}

}  // namespace
