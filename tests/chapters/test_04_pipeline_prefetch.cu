// GPU tests for chapter 04: every pipeline depth at edge sizes, several occupancies and
// several compute intensities against the CPU reference; both negatives (the wrong wait, and
// the slot counter that is right on the first lap only) must fail; the largest check size
// gives every ring the laps the harness's lap check needs.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "variant_test.cuh"
#define TUTORIAL_CHAPTER_TEST  // main.cu without its main(): the Problem and the registry
#include "main.cu"
#include "common/timeline.cuh"

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
    const tut::VerifyResult r = tut_test::run_variant(config(bytes), ch04::variants(), "v9_wrong_wait");
    EXPECT_FALSE(r.ok()) << "v9_wrong_wait must fail at " << bytes << " bytes";
  }
}

TEST(Ch04Negative, SlotWrapBugFailsFromTheSecondLapOnOnly) {
  SKIP_UNLESS_GPU(8, 0);
  const std::uint64_t lap = std::uint64_t{ch04::WRAP_BUG_STAGES} * ch04::TILE_BYTES;
  {  // two blocks, each with exactly one lap of the 4-slot ring: the bug never shows
    tut::ScopedGridCap two_blocks(2);
    EXPECT_TRUE(tut_test::run_variant(config(2 * lap), ch04::variants(), "v8_wrap_bug").ok())
        << "one lap per block must pass: the bug is in the wrap";
  }
  {  // two blocks, one tile into the second lap each: tile STAGES reads tile 0's slot
    tut::ScopedGridCap two_blocks(2);
    EXPECT_FALSE(tut_test::run_variant(config(2 * lap + 2 * ch04::TILE_BYTES), ch04::variants(),
                                       "v8_wrap_bug").ok());
  }
  // the largest check size, at the chapter's own grid and under the lap check's two blocks
  const std::uint64_t largest = ch04::check_sizes().back();
  EXPECT_FALSE(tut_test::run_variant(config(largest), ch04::variants(), "v8_wrap_bug").ok());
  tut::ScopedGridCap two_blocks(tut::kLapCheckBlocks);
  EXPECT_FALSE(tut_test::run_variant(config(largest), ch04::variants(), "v8_wrap_bug").ok());
}

TEST(Ch04Laps, LargestCheckSizeGivesTwoBlocksThreeLapsOfTheDeepestRing) {
  // Host arithmetic (runs without a GPU): the harness's lap check runs every variant at the
  // largest check size on two blocks; each must walk at least 3 laps of the deepest ring.
  const std::uint64_t largest = ch04::check_sizes().back();
  const std::uint64_t tiles = (largest / 16 + ch04::TILE_VECS - 1) / ch04::TILE_VECS;
  EXPECT_GE(tut::laps_per_block(tiles, tut::kLapCheckBlocks, ch04::kDeepestStages), 3u);
  EXPECT_GE(tut::laps_per_block(tiles, tut::kLapCheckBlocks, ch04::WRAP_BUG_STAGES), 3u);
  for (const auto& k : ch04::stage_kernels()) EXPECT_LE(k.stages, ch04::kDeepestStages);
}

TEST(Ch04Laps, EveryVariantPassesOnTwoBlocksAtTheLargestCheckSize) {
  SKIP_UNLESS_GPU(8, 0);
  tut::ScopedGridCap two_blocks(tut::kLapCheckBlocks);  // what the harness's lap check does
  ch04::Problem p(config(ch04::check_sizes().back(), 1, 3));
  for (const auto& v : ch04::variants()) {
    if (v.negative) continue;
    const tut::VerifyResult r = tut::run_and_verify(p, v, nullptr);
    EXPECT_TRUE(r.ok()) << v.key << " on two blocks: " << r.summary();
  }
}

TEST(Ch04Sweep, TheSweepsCheckPassesGoodKernelsAndCatchesABrokenOne) {
  // The sweep checks each configuration on the GPU against the uploaded CPU reference: it must
  // pass a correct kernel at several --rounds (the reference follows p.rounds) and fail v9.
  SKIP_UNLESS_GPU(8, 0);
  ch04::SweepProblem p(config((std::uint64_t{8} << 20) + 4096 + 32, 1, 0));
  tut::Variant<ch04::SweepProblem> good;
  good.reference = ch04::kWork;
  good.launch = [](ch04::SweepProblem& q, cudaStream_t s) {
    ch04::launch_stream_v2<4>(q.in_vecs(), q.out_vecs(), q.n_vecs(), q.rounds, q.sms(), 1, s);
  };
  for (int rounds : {0, 1, 16, 0}) {
    p.rounds = rounds;
    EXPECT_TRUE(tut::run_and_verify(p, good, nullptr).ok()) << rounds << " rounds";
  }
  tut::Variant<ch04::SweepProblem> bad = good;
  bad.launch = [](ch04::SweepProblem& q, cudaStream_t s) {
    ch04::launch_stream_v9(q.in_vecs(), q.out_vecs(), q.n_vecs(), q.rounds, q.sms(), 1, s);
  };
  EXPECT_FALSE(tut::run_and_verify(p, bad, nullptr).ok());
  p.rounds = 3;  // the right kernel checked against another rounds' reference must fail too
  tut::Variant<ch04::SweepProblem> wrong_rounds = good;
  wrong_rounds.launch = [](ch04::SweepProblem& q, cudaStream_t s) {
    ch04::launch_stream_v2<4>(q.in_vecs(), q.out_vecs(), q.n_vecs(), 2, q.sms(), 1, s);
  };
  EXPECT_FALSE(tut::run_and_verify(p, wrong_rounds, nullptr).ok());
}

// The overlap the lesson claims, asserted from an in-kernel trace (common/timeline.cuh) at
// 1 block per SM, blocks on SMs 0 and 1 (what --timeline records): with two slots the copy of
// tile k+1 is in flight while tile k is computed (a copy counts as in flight until the wait for
// it returns); with one slot, and in chapter 01's synchronous kernel, a tile's copy is issued
// only after the previous tile's compute and trailing barrier, and waited for before its own
// compute, so no copy overlaps a compute phase. The traced runs must give the exact output.
template <int STAGES>  // 0: v1, the synchronous kernel
tut::DecodedTrace traced_run() {
  ch04::Problem p(config(16u << 20, 1, 3));  // 4096 tiles: 31+ per block on 132 SMs
  const unsigned grid = ch04::traced_grid<STAGES>(p.sms(), 1);
  tut::TraceRecorder rec({grid, 1, 256}, 2);
  rec.clear(nullptr);
  p.poison(nullptr);
  if constexpr (STAGES == 0)  // the launchers size the same grid as traced_grid()
    ch04::launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 1, nullptr, rec.arg());
  else
    ch04::launch_stream_v2<STAGES>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), 1,
                                   nullptr, rec.arg());
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  const tut::VerifyResult r = p.verify(nullptr, STAGES == 0 ? ch04::kCopy : ch04::kWork);
  EXPECT_TRUE(r.ok()) << STAGES << " stages, traced: " << r.summary();
  tut::DecodedTrace trace = rec.download(nullptr);
  EXPECT_FALSE(trace.lanes.empty()) << "no block ran on SM 0 or 1";
  for (const tut::LaneInfo& l : trace.lanes) {
    EXPECT_LT(l.sm, 2u);
    EXPECT_TRUE(l.closed) << "block " << l.block;
    EXPECT_EQ(l.dropped, 0u) << "block " << l.block;
    EXPECT_GE(l.recorded, 6u * 3 * (STAGES > 1 ? STAGES : 1)) << "3+ laps of the ring";
  }
  tut::TraceSummary sum;
  tut::chrome_trace_json({tut::KernelTrace{"k", "k", {"block"}, trace}}, {"test", "gpu", "test"},
                         &sum);
  EXPECT_EQ(sum.unpaired_copies, 0u);
  EXPECT_EQ(sum.unpaired_compute, 0u);
  EXPECT_EQ(sum.copy_spans, sum.compute_spans);
  return trace;
}

TEST(Ch04Timeline, TwoAndEightSlotRingsHaveCopiesInFlightDuringCompute) {
  SKIP_UNLESS_GPU(8, 0);
  EXPECT_GT(tut::copies_overlapping_compute(traced_run<2>()), 0u)
      << "with two slots, tile k+1's copy is in flight while tile k is computed";
  EXPECT_GT(tut::copies_overlapping_compute(traced_run<8>()), 0u);
}

TEST(Ch04Timeline, OneSlotRingAndSynchronousKernelHaveNone) {
  SKIP_UNLESS_GPU(8, 0);
  EXPECT_EQ(tut::copies_overlapping_compute(traced_run<1>()), 0u)
      << "one slot: a copy is issued only after the previous tile's compute";
  EXPECT_EQ(tut::copies_overlapping_compute(traced_run<0>()), 0u)
      << "chapter 01's kernel: load, barrier, compute, barrier, one tile at a time";
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
  // the composed affine map of the reference is the device's loop of single rounds
  for (int rounds : {0, 1, 2, 5, 16, 257})
    for (std::uint32_t x : {0u, 1u, 0x9E3779B9u, 0xFFFFFFFFu}) {
      const ch04::Affine m = ch04::compose_rounds(rounds);
      EXPECT_EQ(m.a * x + m.c, ch04::work_word(x, rounds)) << rounds << " rounds of " << x;
    }
}

}  // namespace
