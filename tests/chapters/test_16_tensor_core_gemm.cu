// GPU tests for chapter 16: every GEMM step (and cuBLAS) at shapes that are not multiples of
// any tile, non-square, against the CPU fp64 reference with the derived error bound; at a
// large square size against cuBLAS; every negative must fail, the parity negative only once
// the ring wraps a second time. Host-only checks of the reference, bound and pitches.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "common/launch.cuh"
#include "gpu_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // the chapter's program without its main(): Problem, variants()
#include "main.cu"

namespace {

/// The chapter is sm_90a only: skip (never pass) on anything but compute capability 9.0.
#define SKIP_UNLESS_SM90A()                                                        \
  do {                                                                             \
    SKIP_UNLESS_GPU(9, 0);                                                         \
    const tut::DeviceSummary d_ = tut::query_device();                             \
    if (d_.cc_major != 9 || d_.cc_minor != 0) GTEST_SKIP() << "needs sm_90a (cc 9.0)"; \
  } while (0)

int sms() { return tut::query_device().sm_count; }

class Ch16Shapes : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(Ch16Shapes, EveryStepMatchesTheCpuReference) {
  SKIP_UNLESS_SM90A();
  const auto [m, n, k] = GetParam();
  ch16::Problem p(ch16::Shape{m, n, k}, 1234, sms());
  ASSERT_EQ(p.oracle, "CPU fp64");
  for (const auto& v : ch16::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " at M=" << m << " N=" << n << " K=" << k << ": "
                        << r.summary() << "\n" << r.details();
  }
}

// One element; K = 1 (one box, 63 columns of TMA zero fill); K not a multiple of 8 (a padded
// pitch, cp.async partial chunks); an odd number of 128-row tiles (step 4/5's second block
// computes a tile wholly below M); N = 1 (no column pair); exact multiples of 128 x 256 x 64;
// tall and wide.
INSTANTIATE_TEST_SUITE_P(
    EdgeShapes, Ch16Shapes,
    ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(5, 7, 1),
                      std::make_tuple(17, 33, 9), std::make_tuple(129, 257, 67),
                      std::make_tuple(300, 1, 200), std::make_tuple(1, 300, 200),
                      std::make_tuple(384, 512, 128), std::make_tuple(640, 200, 333),
                      std::make_tuple(517, 390, 255)));

TEST(Ch16Large, EveryStepMatchesCublasAt2048) {
  SKIP_UNLESS_SM90A();
  ch16::Problem p(ch16::Shape{2048, 2048, 2048}, 99, sms());
  ASSERT_EQ(p.oracle, "cuBLAS");
  for (const auto& v : ch16::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << ": " << r.summary() << "\n" << r.details();
  }
}

TEST(Ch16Large, RaggedLargeShapeMatchesCublas) {
  SKIP_UNLESS_SM90A();
  ch16::Problem p(ch16::Shape{1023, 1537, 771}, 5, sms());
  ASSERT_EQ(p.oracle, "cuBLAS");
  for (const auto& v : ch16::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << ": " << r.summary() << "\n" << r.details();
  }
}

TEST(Ch16Negative, EveryNegativeFailsAtTheLargestCheckSize) {
  SKIP_UNLESS_SM90A();
  ch16::Problem p(ch16::Shape{517, 517, 517}, 7, sms());
  for (const auto& v : ch16::variants()) {
    if (!v.negative) continue;
    EXPECT_FALSE(tut::run_and_verify(p, v, nullptr).ok()) << v.key << " must fail";
  }
}

TEST(Ch16Negative, ParityBugNeedsASecondLap) {
  // 256^3: one 128 x 256 tile per block, 4 k-tiles of 64 = exactly one lap of the 4-slot
  // ring: the fixed parity 0 is right there. 517^3 with two blocks: each walks >= 7 tiles of
  // 9 k-tiles, so the ring wraps many times and the bug must show.
  SKIP_UNLESS_SM90A();
  const auto all = ch16::variants();
  const tut::Variant<ch16::Problem>* parity = nullptr;
  for (const auto& v : all)
    if (v.key == "neg_parity_lap2") parity = &v;
  ASSERT_NE(parity, nullptr);
  ch16::Problem one_lap(ch16::Shape{256, 256, 256}, 3, sms());
  EXPECT_TRUE(tut::run_and_verify(one_lap, *parity, nullptr).ok()) << "one lap: parity 0 is right";
  ch16::Problem laps(ch16::Shape{517, 517, 517}, 3, sms());
  tut::ScopedGridCap two_blocks(2);
  EXPECT_FALSE(tut::run_and_verify(laps, *parity, nullptr).ok());
}

TEST(Ch16Laps, LargestCheckSizeWrapsEveryRingThreeTimesOnTwoBlocks) {
  // Host arithmetic for the harness's lap check (517^3 on a grid capped at 2 blocks).
  const int s = 517;
  const int ws_ktiles = ch16::ceil_div(s, ch16::step3::BK);
  const int ws_tiles = ch16::ceil_div(s, ch16::step3::BM) * ch16::ceil_div(s, ch16::step3::BN);
  EXPECT_GE((ws_tiles / 2) * ws_ktiles, 3 * ch16::step3::STAGES);  // steps 2, 3 (per block)
  const int pairs = ch16::ceil_div(ch16::ceil_div(s, ch16::step4::BM), 2) * ch16::ceil_div(s, ch16::step4::BN);
  EXPECT_GE(pairs * ws_ktiles, 3 * ch16::step4::STAGES);  // steps 4, 5: one cluster walks all pairs
  EXPECT_GE(pairs * ws_ktiles, 3 * ch16::step6::AllLevers::STAGES);  // step 6's 4-slot ring
  EXPECT_GE(ch16::ceil_div(s, ch16::step1::BK), 3 * ch16::step1::STAGES);  // step 1, per tile
  // Step 7: 128 x 128 tiles, two blocks (7a) or one 2-block cluster (7b) for all of them;
  // 7b's rank 1 has the shorter half of K, and its hand-off barriers complete once per tile.
  const int small_tiles = ch16::ceil_div(s, ch16::step7::BM) * ch16::ceil_div(s, ch16::step7::BN);
  const int k7 = ch16::ceil_div(s, ch16::step7::BK);
  EXPECT_GE((small_tiles / 2) * k7, 3 * ch16::step7::Config<1>::STAGES);
  EXPECT_GE(small_tiles * (k7 / 2), 3 * ch16::step7::Config<2>::STAGES);
  EXPECT_EQ((ch16::step7::Config<2, true>::STAGES), ch16::step7::Config<2>::STAGES);  // 7d: 7b's ring
  EXPECT_GE(small_tiles, 3);  // ready and taken change phase at least twice
  // 7j: 7i's 5-slot ring wraps at least 3 times too (rank 1's 4 k-tiles per tile).
  EXPECT_GE(small_tiles * (k7 / 2), 3 * (ch16::step7::Config<2, true, true, true, 1>::STAGES));
}

TEST(Ch16FixedCost, SharedMemoryOfTheStepSevenLevers) {
  // Host only: 7i drops 7e's outbox (32 KiB), 7j spends it on a 5th ring slot.
  using namespace ch16::step7;
  EXPECT_EQ((Config<2, true, true, true>::SMEM_BYTES), (Config<2, true, true>::SMEM_BYTES) - PARTIAL_BYTES);
  EXPECT_EQ((Config<2, true, true, true, 1>::STAGES), 5);
  EXPECT_EQ((Config<2, true, true, true, 1>::SMEM_BYTES), (Config<2, true, true>::SMEM_BYTES));
  EXPECT_LE((Config<2, true, true, true, 1>::SMEM_BYTES), 227 * 1024);
}

TEST(Ch16FixedCost, LeversOnOneClusterWalkingEveryTile) {
  // 7f-7k on a grid capped at one cluster: its two blocks walk all 25 tiles of 517^3, so
  // ready and taken complete 25 phases, the deferred cluster wait happens once in the first
  // tile and 7h's exit waits for the 25th taken; at 1^3 rank 1's half of K is empty.
  SKIP_UNLESS_SM90A();
  for (const int n : {517, 1}) {
    ch16::Problem p(ch16::Shape{n, n, n}, 11, sms());
    tut::ScopedGridCap one_cluster(2);
    int seen = 0;
    for (const auto& v : ch16::variants()) {
      if (v.key.rfind("step7", 0) != 0 || v.key.size() < 6 || v.key[5] < 'f' || v.key[5] > 'k') continue;
      ++seen;
      const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
      EXPECT_TRUE(r.ok()) << v.key << " at " << n << ": " << r.summary() << "\n" << r.details();
    }
    EXPECT_EQ(seen, 6);
  }
}

/// Two GEMMs in a row on one stream, the second reading the first's C as its A (X = A B^T,
/// then Y = X B^T), each launched by @p launch (a step launched with programmatic dependent
/// launch). The second grid is launched while the first runs and its blocks take the SMs the
/// first leaves free; they must wait for the first grid (cudaGridDependencySynchronize)
/// before they load X, or they read X's poison (NaN) and Y fails. Three rounds, each on
/// freshly poisoned X and Y.
template <class Launch>
void expect_second_gemm_reads_the_firsts_output(int n, Launch launch) {
  using ch16::bf16;
  ch16::Problem p(ch16::Shape{n, n, n}, 21, sms());
  tut::DeviceBuffer<bf16> y(p.d_c.size()), y_ref(p.d_c.size());
  const CUtensorMap map_x128 = ch16::make_map(p.d_c.data(), n, n, p.ldc, 128);
  const CUtensorMap map_y64 = ch16::make_map(y.data(), n, n, p.ldc, 64);
  tut::GemmArgs<bf16> second = p.args();  // K = N: X [n x n] is the second GEMM's A
  second.A = p.d_c.data();
  second.lda = p.ldc;
  second.C = y.data();
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  // The second GEMM's oracle: cuBLAS on the X the first one wrote, with the chapter's
  // cuBLAS-oracle tolerance for that X (its row norms, B's).
  const std::vector<float> b = [&] {
    std::vector<float> rows(static_cast<std::size_t>(n) * n);
    const std::vector<bf16> pitched = p.d_b.download(nullptr);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c)
        rows[static_cast<std::size_t>(r) * n + c] = static_cast<float>(pitched[static_cast<std::size_t>(r) * p.ldb + c]);
    return rows;
  }();
  const auto max_row_norm = [n](const std::vector<float>& m) {
    double best = 0.0;
    for (int r = 0; r < n; ++r) {
      double sum = 0.0;
      for (int c = 0; c < n; ++c) sum += static_cast<double>(m[static_cast<std::size_t>(r) * n + c]) * m[static_cast<std::size_t>(r) * n + c];
      best = std::max(best, std::sqrt(sum));
    }
    return best;
  };
  for (int round = 0; round < 3; ++round) {
    p.poison(s);
    y.poison(s);
    launch(p.map_a128, p.map_b128, p.map_c64, p.args(), s);
    launch(map_x128, p.map_b128, map_y64, second, s);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    EXPECT_EQ(p.error.report(s), 0u) << "a bounded wait gave up, round " << round;
    const std::vector<float> x = p.compact(p.d_c.download(s));
    const tut::VerifyResult first = tut::compare_close_floats(x.data(), p.want.data(), x.size(), p.abs_tol, p.rel_tol);
    EXPECT_TRUE(first.ok()) << "the first GEMM, round " << round << ": " << first.summary();
    tut::GemmArgs<bf16> reference = second;
    reference.C = y_ref.data();
    ch16::launch_cublas(p.blas, reference, y_ref.data(), s);
    const std::vector<float> got = p.compact(y.download(s)), want = p.compact(y_ref.download(s));
    const double bound = ch16::accumulation_bound(n, max_row_norm(x), max_row_norm(b));
    const tut::VerifyResult r = tut::compare_close_floats(got.data(), want.data(), got.size(), 2.1 * bound,
                                                          std::ldexp(1.0, -7) + std::ldexp(1.0, -14));
    EXPECT_TRUE(r.ok()) << "the second GEMM (A = the first's C), round " << round << ": " << r.summary() << "\n" << r.details();
  }
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST(Ch16Programmatic, Step7kSecondGemmReadsTheFirstsOutput) {
  // 1024^3: 7k's 128 blocks leave 4 of the H200's 132 SMs to the second grid from the start.
  SKIP_UNLESS_SM90A();
  expect_second_gemm_reads_the_firsts_output(1024, [](const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& c,
                                                      const tut::GemmArgs<ch16::bf16>& g, cudaStream_t s) {
    ch16::step7::launch_fixed_cost<ch16::step7::kStep7kLevers>(a, b, c, g, s);
  });
}

TEST(Ch16Programmatic, Step6lSecondGemmReadsTheFirstsOutput) {
  // 1024^3: 16 tile pairs, so 6l's first grid holds 32 SMs and the second starts on the rest.
  SKIP_UNLESS_SM90A();
  expect_second_gemm_reads_the_firsts_output(1024, [](const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& c,
                                                      const tut::GemmArgs<ch16::bf16>& g, cudaStream_t s) {
    ch16::step6::launch<ch16::step6::ProgrammaticLaunch>(a, b, c, g, sms(), s);
  });
}

TEST(Ch16Dispatch, TheRuleOnTheReferenceGpu) {
  // Host only: step7::choose_schedule on the H200's 132 SMs at the sweep's sizes and the
  // chapter's check sizes.
  using ch16::step7::Schedule;
  const auto at = [](int n) { return ch16::step7::choose_schedule(n, n, n, 132); };
  // kSplitK launches 7k (7e's split-K with 7f-7k's lower fixed costs), kLargeTiles step 6l.
  EXPECT_EQ(at(1024), Schedule::kSplitK);      // 32 large tiles; 64 small ones, 128 blocks
  EXPECT_EQ(at(2048), Schedule::kLargeTiles);  // 128 large tiles >= 7/8 of 132
  EXPECT_EQ(at(4096), Schedule::kLargeTiles);
  EXPECT_EQ(at(8192), Schedule::kLargeTiles);
  EXPECT_EQ(at(517), Schedule::kSplitK);       // 25 tiles, 9 k-tiles: the check covers 7k
  EXPECT_EQ(at(256), Schedule::kSmallTiles);   // 4 k-tiles: too short to split
  EXPECT_EQ(at(1), Schedule::kSmallTiles);
  // A wide, shallow problem: 128 small tiles, two blocks each would overfill the wave.
  EXPECT_EQ(ch16::step7::choose_schedule(1024, 2048, 1024, 132), Schedule::kSmallTiles);
}

// Step 8's schedule, host only: every k-tile of every pair is computed exactly once; a
// cluster's only partial unit is the first of its stretch of the tail; an owner's unit is its
// cluster's last; the
// contributors an owner waits for are exactly the clusters holding the rest of its pair.
void expect_stream_k_schedule_sound(int pairs, int ktiles, int clusters) {
  SCOPED_TRACE("pairs " + std::to_string(pairs) + ", k-tiles " + std::to_string(ktiles) +
               ", clusters " + std::to_string(clusters));
  using ch16::step8::Schedule, ch16::step8::Units, ch16::step8::Unit;
  const Schedule s = Schedule::make(pairs, ktiles, clusters);
  EXPECT_EQ(s.dp_pairs % clusters, 0);
  EXPECT_LT(pairs - s.dp_pairs, clusters);  // the tail is less than one round
  std::vector<int> times(static_cast<std::size_t>(pairs) * ktiles, 0);
  std::vector<int> holder(times.size(), -1);  // which cluster computed each k-tile
  for (int c = 0; c < clusters; ++c) {
    Units units(s, c);
    std::vector<Unit> list;
    for (Unit u; units.next(u);) list.push_back(u);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Unit& u = list[i];
      ASSERT_GE(u.pair, 0);
      ASSERT_LT(u.pair, pairs);
      ASSERT_LT(u.k_begin, u.k_end);
      ASSERT_LE(u.k_end, ktiles);
      const std::size_t rounds = static_cast<std::size_t>(s.dp_pairs / clusters);
      if (i < rounds) EXPECT_TRUE(u.k_begin == 0 && u.k_end == ktiles) << "a full round's pair is whole";
      if (u.k_begin > 0) EXPECT_EQ(i, rounds) << "a partial must be the first unit after the full rounds";
      if (u.k_begin == 0 && u.k_end < ktiles) EXPECT_EQ(i + 1, list.size()) << "an owner must be last";
      for (int k = u.k_begin; k < u.k_end; ++k) {
        ++times[static_cast<std::size_t>(u.pair) * ktiles + k];
        holder[static_cast<std::size_t>(u.pair) * ktiles + k] = c;
      }
    }
  }
  for (int v : times) ASSERT_EQ(v, 1);
  for (int p = s.dp_pairs; p < pairs; ++p) {  // the owner's contributors hold the rest
    int owner_end = 0;
    while (owner_end < ktiles && holder[static_cast<std::size_t>(p) * ktiles + owner_end] == holder[static_cast<std::size_t>(p) * ktiles]) ++owner_end;
    int first = 0, last = 0;
    s.contributors(p - s.dp_pairs, owner_end, first, last);
    std::vector<int> want;
    for (int k = owner_end; k < ktiles; ++k) {
      const int c = holder[static_cast<std::size_t>(p) * ktiles + k];
      if (want.empty() || want.back() != c) want.push_back(c);
    }
    std::vector<int> got;
    for (int c = first; c <= last; ++c) got.push_back(c);
    EXPECT_EQ(got, want) << "pair " << p;
  }
}

TEST(Ch16StreamK, ScheduleCoversEveryKTileOnce) {
  expect_stream_k_schedule_sound(256, 64, 66);   // 4096^3 on 132 SMs: 3 rounds + 58 pairs
  expect_stream_k_schedule_sound(1024, 128, 66); // 8192^3: 15 rounds + 34 pairs
  expect_stream_k_schedule_sound(64, 32, 66);    // 2048^3: fewer pairs than clusters
  expect_stream_k_schedule_sound(16, 16, 66);    // 1024^3
  expect_stream_k_schedule_sound(9, 9, 66);      // 517^3 on the whole GPU: all tail
  expect_stream_k_schedule_sound(9, 9, 4);       // 517^3 on 8 blocks: 2 rounds + 1 pair
  expect_stream_k_schedule_sound(9, 9, 1);       // the lap check: one cluster, no tail
  expect_stream_k_schedule_sound(1, 1, 66);
  for (int pairs = 1; pairs <= 40; pairs += 3)
    for (int ktiles = 1; ktiles <= 20; ktiles += 2)
      for (int clusters = 1; clusters <= 12; ++clusters) expect_stream_k_schedule_sound(pairs, ktiles, clusters);
}

TEST(Ch16StreamK, TheTailAtTheTableSizes) {
  using ch16::step8::Schedule;
  const Schedule s4096 = Schedule::make(256, 64, 66);
  EXPECT_EQ(s4096.dp_pairs, 198);
  EXPECT_EQ(s4096.span, 57);  // 58 x 64 / 66 = 56.2: 57 k-tiles each instead of a whole 64
  const Schedule s517 = Schedule::make(9, 9, 66);
  EXPECT_EQ(s517.span, 4);  // kMinTailSpan: pairs cut into up to 3 parts (2 partials per owner)
  const Schedule s2048 = Schedule::make(64, 32, 66);
  EXPECT_EQ(s2048.span, 32);  // one whole pair per cluster: nothing is split
}

// Step 8 on grids that give every kind of unit: the whole GPU at 517^3 (no full round, pairs cut
// into 3 parts), 4 clusters (2 full rounds, then one pair cut over 3 clusters) and 7 clusters
// (one round, then 2 pairs), each against the CPU reference, twice (a second epoch).
TEST(Ch16StreamK, FullRoundsAndTailMatchTheCpuReference) {
  SKIP_UNLESS_SM90A();
  ch16::Problem p(ch16::Shape{517, 517, 517}, 11, sms());
  const tut::Variant<ch16::Problem>* step8 = nullptr;
  const auto all = ch16::variants();
  for (const auto& v : all)
    if (v.key == "step8_stream_k") step8 = &v;
  ASSERT_NE(step8, nullptr);
  for (unsigned cap : {0u, 8u, 14u}) {
    const tut::ScopedGridCap grid(cap);
    for (int run = 0; run < 2; ++run) {
      const tut::VerifyResult r = tut::run_and_verify(p, *step8, nullptr);
      EXPECT_TRUE(r.ok()) << "grid cap " << cap << ", run " << run << ": " << r.summary() << "\n" << r.details();
    }
  }
}

TEST(Ch16Reference, KnownProductOnThePaddedLayout) {
  // Host only: [2x3] * [2x3]^T with pitch 8; the padding (NaN) must never be read.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a(16, nan), b(16, nan);
  const float av[2][3] = {{1, 2, 3}, {4, 5, 6}}, bv[2][3] = {{7, 9, 11}, {8, 10, 12}};
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) a[r * 8 + c] = av[r][c], b[r * 8 + c] = bv[r][c];
  const auto c = ch16::reference_gemm(a, b, 2, 2, 3, 8, 8);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], 58.0f);
  EXPECT_EQ(c[1], 64.0f);
  EXPECT_EQ(c[2], 139.0f);
  EXPECT_EQ(c[3], 154.0f);
}

TEST(Ch16Reference, PitchAndBound) {
  EXPECT_EQ(ch16::pitch_of(1), 8);
  EXPECT_EQ(ch16::pitch_of(8), 8);
  EXPECT_EQ(ch16::pitch_of(517), 520);
  // K = 4096, row norms 37 (uniform [-1, 1): sqrt(4096 / 3)): about 0.67.
  const double b = ch16::accumulation_bound(4096, 37.0, 37.0);
  EXPECT_GT(b, 0.6);
  EXPECT_LT(b, 0.7);
}

}  // namespace
