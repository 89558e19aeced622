// GPU tests for chapter 15: every GEMM step (and cuBLAS) at shapes that are not multiples of
// any tile, non-square, against the CPU fp64 reference; at a large square size against
// cuBLAS; the negative variant must fail. Host-only checks of the reference, the ring laps at
// the check sizes, and the tolerance (including a CPU simulation of TF32 against it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <tuple>

#include "gpu_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // the chapter's program without its main(): Problem, variants()
#include "main.cu"

namespace {

int device_cc() {
  const tut::DeviceSummary d = tut::query_device();
  return d.cc_major * 10 + d.cc_minor;
}

class Ch15Shapes : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(Ch15Shapes, EveryVariantMatchesTheCpuReference) {
  SKIP_UNLESS_GPU(8, 0);
  const auto [m, n, k] = GetParam();
  ch15::Problem p(ch15::Shape{m, n, k}, 1234);
  ASSERT_EQ(p.oracle, "CPU fp64");
  const int cc = device_cc();
  for (const auto& v : ch15::variants()) {
    if (v.negative || v.min_cc > cc) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at M=" << m << " N=" << n << " K=" << k << ": "
                        << r.summary() << "\n" << r.details();
  }
}

// M x N x K: a single element; K = 1 (one partial 16-k stage); below one tile; one past the
// 128 tile; K not a multiple of 16 or of 4 (zero-fill inside a 16-byte chunk); N not a
// multiple of 4 (scalar stores, partial 16-byte B chunks); exact tile multiples; tall/wide.
INSTANTIATE_TEST_SUITE_P(
    EdgeShapes, Ch15Shapes,
    ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(5, 7, 1),
                      std::make_tuple(17, 33, 9), std::make_tuple(129, 129, 129),
                      std::make_tuple(255, 129, 67), std::make_tuple(130, 257, 301),
                      std::make_tuple(128, 128, 16), std::make_tuple(256, 384, 64),
                      std::make_tuple(1, 300, 200), std::make_tuple(300, 1, 200),
                      std::make_tuple(517, 390, 255)));

TEST(Ch15Large, EveryVariantMatchesCublasAt2048) {
  SKIP_UNLESS_GPU(8, 0);
  ch15::Problem p(ch15::Shape{2048, 2048, 2048}, 99);
  ASSERT_EQ(p.oracle, "cuBLAS");
  const int cc = device_cc();
  for (const auto& v : ch15::variants()) {
    if (v.negative || v.min_cc > cc) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << ": " << r.summary() << "\n" << r.details();
  }
}

TEST(Ch15Large, RaggedLargeShapeMatchesCublas) {
  SKIP_UNLESS_GPU(8, 0);
  ch15::Problem p(ch15::Shape{1023, 1537, 771}, 5);  // > kCpuReferenceMaxMacs: cuBLAS oracle
  ASSERT_EQ(p.oracle, "cuBLAS");
  const int cc = device_cc();
  for (const auto& v : ch15::variants()) {
    if (v.negative || v.min_cc > cc || v.key == "v1_naive") continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << ": " << r.summary() << "\n" << r.details();
  }
}

TEST(Ch15Negative, WrongBOffsetIsCaughtOffTheDiagonal) {
  SKIP_UNLESS_GPU(8, 0);
  ch15::Problem p(ch15::Shape{129, 129, 129}, 7);  // 5x5 blocks of 32: 20 off the diagonal
  for (const auto& v : ch15::variants()) {
    if (!v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_FALSE(r.ok()) << v.key << " must fail";
    EXPECT_GT(r.mismatches, 129u * 129u / 2) << "most blocks are off the diagonal";
  }
}

TEST(Ch15Negative, WrongBOffsetHidesInOneBlock) {
  // Why the check sizes go beyond one tile: on a single 32x32 block the bug is invisible.
  SKIP_UNLESS_GPU(8, 0);
  ch15::Problem p(ch15::Shape{17, 17, 17}, 7);
  for (const auto& v : ch15::variants())
    if (v.negative) EXPECT_TRUE(tut::run_and_verify(p, v, nullptr).ok()) << v.key;
}

TEST(Ch15Reference, KnownProductOnThePaddedLayout) {
  // Host only: [2x3] * [3x2] with pitch 4; the padding (NaN) must never be read.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {1, 2, 3, nan, 4, 5, 6, nan};               // lda = 4
  const std::vector<float> b = {7, 8, nan, nan, 9, 10, nan, nan, 11, 12, nan, nan};  // ldb = 4
  const auto c = ch15::reference_gemm(a, b, 2, 2, 3, 4, 4);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], 58.0f);
  EXPECT_EQ(c[1], 64.0f);
  EXPECT_EQ(c[2], 139.0f);
  EXPECT_EQ(c[3], 154.0f);
}

TEST(Ch15Reference, PitchAndTolerance) {
  EXPECT_EQ(ch15::pitch_of(1), 4);
  EXPECT_EQ(ch15::pitch_of(4), 4);
  EXPECT_EQ(ch15::pitch_of(17), 20);
  EXPECT_GT(ch15::abs_tolerance(4096), 1e-3);
  EXPECT_LT(ch15::abs_tolerance(4096), 1e-2);
}

TEST(Ch15Laps, LargestCheckSizeWrapsEveryRingThreeTimes) {
  // The rings of v4..v7 run over K inside each block: laps = k tiles / ring depth.
  const auto sizes = ch15::check_sizes();
  const std::uint64_t k = *std::max_element(sizes.begin(), sizes.end());
  const std::uint64_t k_tiles = (k + ch15::BK - 1) / ch15::BK;
  EXPECT_GE(k_tiles, 3u * ch15::STAGES) << "laps of the 4-slot ring at K = " << k;
  // v7 (32-deep k-tiles, 3 slots) and its 2-slot control: fewer, deeper k-tiles.
  const std::uint64_t v7_k_tiles = (k + ch15::V7_KDEPTH - 1) / ch15::V7_KDEPTH;
  EXPECT_GE(v7_k_tiles, 3u * ch15::V7_STAGES) << "laps of v7's ring at K = " << k;
}

TEST(Ch15Exact, V7SumsInTheOrderOfV5) {
  // Each accumulator of v5 and v7 is one FFMA chain over k = 0, 1, ..., K-1; the k-depth of a
  // stage only regroups the chain, and the zero-filled tail adds fma(0, 0, acc) = acc. So v7's
  // C equals v5's exactly (== also takes -0 for +0; a NaN, e.g. a poisoned element, fails).
  // K = 255: 16 k-tiles of 16 and 8 of 32, the last 31 k of v7 zero-filled by the TMA.
  SKIP_UNLESS_GPU(9, 0);
  ch15::Problem p(ch15::Shape{517, 390, 255}, 21);
  auto output_of = [&p](const std::string& key) {
    for (const auto& v : ch15::variants())
      if (v.key == key) {
        p.poison(nullptr);
        v.launch(p, nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        return p.compact(p.d_c.download(nullptr));
      }
    ADD_FAILURE() << "no variant " << key;
    return std::vector<float>{};
  };
  const std::vector<float> v5 = output_of("v5_tma");
  for (const char* key : {"v7_tma_bk32", "v7_tma_bk32_s2"}) {
    const std::vector<float> v7 = output_of(key);
    ASSERT_EQ(v7.size(), v5.size()) << key;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < v5.size(); ++i) differ += v7[i] == v5[i] ? 0 : 1;
    EXPECT_EQ(differ, 0u) << key << ": elements that differ from v5's";
  }
}

/// fp32 -> TF32 as the tensor cores see it: 10 explicit mantissa bits, round to nearest even.
float to_tf32(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  b = (b + 0xFFFu + ((b >> 13) & 1u)) & ~0x1FFFu;
  std::memcpy(&x, &b, 4);
  return x;
}

/// Fraction of the elements of an M x N product (the chapter's inputs, depth K) whose TF32
/// result is further from the exact one than the chapter's tolerance allows.
double tf32_fraction_over_tolerance(int M, int N, int K) {
  const auto a = ch15::Problem::padded_fill(M, K, ch15::pitch_of(K), 11);
  const auto b = ch15::Problem::padded_fill(K, N, ch15::pitch_of(N), 12);
  const int lda = ch15::pitch_of(K), ldb = ch15::pitch_of(N);
  int over = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double exact = 0.0, tf32 = 0.0;
      for (int k = 0; k < K; ++k) {
        const float av = a[static_cast<std::size_t>(i) * lda + k];
        const float bv = b[static_cast<std::size_t>(k) * ldb + j];
        exact += static_cast<double>(av) * bv;
        tf32 += static_cast<double>(to_tf32(av)) * to_tf32(bv);  // the products are exact
      }
      over += std::fabs(tf32 - exact) > ch15::abs_tolerance(K) ? 1 : 0;
    }
  return static_cast<double>(over) / (static_cast<double>(M) * N);
}

TEST(Ch15Tolerance, Tf32IsCaughtMostEasilyAtSmallK) {
  // The tolerance grows like K, the TF32 rounding error like sqrt(K): the fraction of elements
  // the check flags falls as K grows. Host only (CPU simulation, fp64 accumulation).
  const double k17 = tf32_fraction_over_tolerance(48, 48, 17);
  const double k4096 = tf32_fraction_over_tolerance(32, 32, 4096);
  const double k16384 = tf32_fraction_over_tolerance(32, 32, 16384);
  std::printf("TF32 elements over the tolerance: K=17 %.0f%%, K=4096 %.0f%%, K=16384 %.0f%%\n",
              100 * k17, 100 * k4096, 100 * k16384);
  EXPECT_GT(k17, 0.85);
  EXPECT_GT(k17, k4096);
  EXPECT_GT(k4096, k16384);
  EXPECT_GT(k16384, 0.02) << "at the largest --size TF32 must still be caught";
}

}  // namespace
