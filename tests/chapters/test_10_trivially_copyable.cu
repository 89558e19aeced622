// GPU tests for chapter 10: AoS (two promises), SoA, and the copy-constructor type at edge
// sizes against the CPU references; the variant that expects the copy constructor must fail.
#include <gtest/gtest.h>

#include <type_traits>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#include "kernels.cuh"

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

TEST(Ch10Negative, CopyConstructorIsNeverCalled) {
  SKIP_UNLESS_GPU(8, 0);
  ch10::Problem p(config(24 * (256 + 4)));
  for (const auto& v : ch10::variants()) {
    if (!v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_FALSE(r.ok()) << v.key << " must fail: the bytes arrive, the constructor never runs";
    // Positions match (the constructor would copy them too); every velocity differs unless
    // it is zero, so at least half the floats mismatch less the few zero velocities.
    EXPECT_GT(r.mismatches, r.checked / 2 - 16);
  }
}

TEST(Ch10Types, TriviallyCopyable) {
  EXPECT_TRUE(std::is_trivially_copyable<ch10::Particle>::value);
  EXPECT_FALSE(std::is_trivially_copyable<ch10::ParticleWithCtor>::value);
  EXPECT_EQ(sizeof(ch10::Particle), sizeof(ch10::ParticleWithCtor));
}

TEST(Ch10Reference, AdvanceOnAKnownInput) {
  // Host-only: 4 particles, AoS and SoA, and the copy-constructor semantics.
  std::vector<float> in(4 * ch10::FIELDS);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  const auto aos = ch10::reference_advance(in, ch10::kAoS);
  EXPECT_EQ(aos[0], 0.0f + 0.5f * 3.0f);   // particle 0: pos0 + dt * vel0
  EXPECT_EQ(aos[5], 5.0f);                 // vel unchanged
  const auto soa = ch10::reference_advance(in, ch10::kSoA);
  EXPECT_EQ(soa[1], 1.0f + 0.5f * 13.0f);  // particle 1: pos plane 0, vel plane 3 (n = 4)
  const auto ctor = ch10::reference_advance(in, ch10::kAoSCopyCtor);
  EXPECT_EQ(ctor[0], 0.0f);
  EXPECT_EQ(ctor[3], 0.0f);
}

}  // namespace
