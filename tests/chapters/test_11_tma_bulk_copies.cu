// Chapter 11 kernels at edge shapes against the CPU reference; the negatives must fail.
#include <gtest/gtest.h>

#include "gpu_test.cuh"
#include "kernels.cuh"
#define TUTORIAL_CHAPTER_TEST  // the chapter's program without its main(): Problem, variants()
#include "main.cu"
#include "common/launch.cuh"
#include "common/timeline.cuh"
#include "variant_test.cuh"

namespace {

// Poison, launch, synchronise, compare - what the harness does for one variant.
tut::VerifyResult run_variant(const std::string& key, std::uint64_t size, int blocks_per_sm = 1) {
  return tut_test::run_variant(tut_test::test_config(size, 11, {{"blocks-per-sm", blocks_per_sm}}),
                               ch11::variants(), key);
}

// Tiny, one vector short of a sub-tile / a TMA tile, a ragged tail, many tiles.
const std::uint64_t kSizes[] = {16, 4096 - 16, 16384 - 16, 16384 + 16,
                                3 * 16384 + 4096 + 80, (8u << 20) + 16 * 5};

class Positive : public ::testing::TestWithParam<std::string> {};

TEST_P(Positive, MatchesReferenceAtEdgeShapes) {
  SKIP_UNLESS_GPU(9, 0);
  for (std::uint64_t size : kSizes) {
    const tut::VerifyResult r = run_variant(GetParam(), size);
    EXPECT_TRUE(r.ok()) << GetParam() << " size " << size << ": " << r.summary() << "\n"
                        << r.details();
  }
}

TEST_P(Positive, MatchesReferenceWithManyBlocksPerSm) {
  SKIP_UNLESS_GPU(9, 0);
  const tut::VerifyResult r = run_variant(GetParam(), (3u << 20) + 16 * 3, 8);
  EXPECT_TRUE(r.ok()) << r.summary() << "\n" << r.details();
}

INSTANTIATE_TEST_SUITE_P(Ch11, Positive,
                         ::testing::Values("v0_cpasync_low", "v1_bulk_ptx_low", "v1_bulk_ptx_full",
                                           "v2_bulk_cccl_low", "v3_bulk_store_low",
                                           "v4_memcpy_async_low", "v5_bulk_8x16K_low",
                                           "v6_bulk_4x32K_low", "v7_bulk_16x4K_low"));

TEST(Ch11Large, BulkStoreAt64MiB) {
  SKIP_UNLESS_GPU(9, 0);
  const tut::VerifyResult r = run_variant("v3_bulk_store_low", 64u << 20);
  EXPECT_TRUE(r.ok()) << r.summary();
}

// The broken variants must FAIL (and return: the bounded waits give up after 1 s).
TEST(Ch11Negative, WrongExpectTxIsCaught) {
  SKIP_UNLESS_GPU(9, 0);
  EXPECT_FALSE(run_variant("v8_wrong_tx", 3 * 16384 + 16).ok());
}

TEST(Ch11Negative, WrongParityIsCaught) {
  SKIP_UNLESS_GPU(9, 0);
  EXPECT_FALSE(run_variant("v9_wrong_parity", 3 * 16384 + 16).ok());
}

// The second-lap negative: correct in lap 0, so it passes where no block wraps its ring (one
// tile), and fails where blocks lap it (two blocks, as in the harness's lap check at the
// largest check size).
TEST(Ch11Negative, WrongEmptyCountIsCaughtOnceTheRingWraps) {
  SKIP_UNLESS_GPU(9, 0);
  const std::uint64_t size = ch11::kCheckSizes.back();
  tut::ScopedGridCap two_blocks(2);
  EXPECT_FALSE(run_variant("v10_empty_count", size).ok());
  EXPECT_TRUE(run_variant("v10_empty_count", 16384 - 16).ok());  // one tile per block: no lap
  EXPECT_TRUE(run_variant("v1_bulk_ptx_full", size).ok());  // the context is still usable
}

// The overlap the lesson claims, asserted from an in-kernel trace (common/timeline.cuh) of v1's
// ring at 1 block per SM, blocks on SMs 0 and 1: with two slots the next tile's copy is in
// flight while thread 0 copies the current tile out (a copy counts as in flight until the
// consumer's wait for it returns); with one slot a copy is issued only after every warp has
// released the previous tile, and it has landed before that tile's successor is computed, so
// no copy overlaps a compute phase. The traced runs must still give the exact output.
struct TracedRun {
  tut::DecodedTrace trace;
  bool output_ok = false;
};

template <int STAGES>
TracedRun traced_v1(std::uint64_t bytes) {
  ch11::Problem p(tut_test::test_config(bytes, 11, {{"blocks-per-sm", 1}}));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const unsigned grid = ch11::stream_v1_grid<STAGES, ch11::TILE_VECS, tut::TraceOn>(p.sms(), 1);
  tut::TraceRecorder rec({grid, 2, 512}, 2);
  rec.clear(s);
  p.poison(s);
  ch11::launch_stream_v1<STAGES, ch11::TILE_VECS>(p.in(), p.out(), bytes, p.err(), p.sms(), 1, s,
                                                  rec.arg());
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(s));
  TracedRun r;
  const tut::VerifyResult v = p.verify(s, 0);
  r.output_ok = v.ok();
  EXPECT_TRUE(r.output_ok) << STAGES << " slots, traced: " << v.summary();
  r.trace = rec.download(s);
  CUDA_CHECK(cudaStreamDestroy(s));
  // Well formed: some block ran on SM 0 or 1, every lane closed, nothing dropped, and one
  // compute phase and one copy per tile.
  EXPECT_FALSE(r.trace.lanes.empty());
  for (const tut::LaneInfo& l : r.trace.lanes) {
    EXPECT_LT(l.sm, 2u) << "block " << l.block;
    EXPECT_TRUE(l.closed) << "block " << l.block << " lane " << l.lane;
    EXPECT_EQ(l.dropped, 0u);
  }
  tut::TraceSummary sum;
  tut::chrome_trace_json({tut::KernelTrace{"v1", "v1", {"producer", "consumer"}, r.trace}},
                         {"test", "gpu", "test"}, &sum);
  EXPECT_EQ(sum.unpaired_copies, 0u);
  EXPECT_EQ(sum.unpaired_compute, 0u);
  EXPECT_EQ(sum.copy_spans, sum.compute_spans);
  const std::size_t blocks = r.trace.lanes.size() / 2;  // two lanes per traced block
  EXPECT_GE(sum.compute_spans, blocks * 3 * STAGES) << "every traced block laps its ring 3+ times";
  return r;
}

constexpr std::uint64_t kTraceBytes = 32u << 20;  // 2048 tiles: 15+ per block on 132 SMs

TEST(Ch11Timeline, TwoSlotRingHasCopiesInFlightDuringCompute) {
  SKIP_UNLESS_GPU(9, 0);
  const TracedRun r = traced_v1<2>(kTraceBytes);
  EXPECT_GT(tut::copies_overlapping_compute(r.trace), 0u)
      << "with two slots, tile j+1's copy is in flight while tile j is copied out";
}

TEST(Ch11Timeline, OneSlotRingHasNone) {
  SKIP_UNLESS_GPU(9, 0);
  const TracedRun r = traced_v1<1>(kTraceBytes);
  EXPECT_EQ(tut::copies_overlapping_compute(r.trace), 0u)
      << "with one slot, a copy is issued only after the previous tile was released";
}

// Host only: the largest check size gives each of two blocks at least 3 laps of every ring.
TEST(Ch11Laps, LargestCheckSizeLapsEveryRing) {
  const std::uint64_t size = ch11::kCheckSizes.back();
  const int blocks = 2;
  EXPECT_GE(ch11::ring_laps(size, 16 * ch11::THREADS, 8, blocks), 3u);  // v0: 8 x 4 KiB
  EXPECT_GE(ch11::ring_laps(size, 16 * 1024, 4, blocks), 3u);   // v1-v4, v8-v11
  EXPECT_GE(ch11::ring_laps(size, 16 * 1024, 8, blocks), 3u);   // v5
  EXPECT_GE(ch11::ring_laps(size, 16 * 2048, 4, blocks), 3u);   // v6
  EXPECT_GE(ch11::ring_laps(size, 16 * 256, 16, blocks), 3u);   // v7
}

// Host only: the 16-byte rules are refused with a reason before anything is launched.
TEST(Ch11Rules, BulkCopyAlignmentAndSize) {
  alignas(16) static unsigned char buf[64];
  EXPECT_EQ(ch11::bulk_copy_violation(buf, buf + 16, 32), "");
  EXPECT_NE(ch11::bulk_copy_violation(buf, buf + 4, 32).find("source"), std::string::npos);
  EXPECT_NE(ch11::bulk_copy_violation(buf + 8, buf, 32).find("destination"), std::string::npos);
  EXPECT_NE(ch11::bulk_copy_violation(buf, buf, 40).find("multiple of 16"), std::string::npos);
}

TEST(Ch11Rules, ReversedSourceIsAPermutationOfEachSubTile) {
  for (int count : {1, 7, 256, 300, 1024}) {
    std::vector<int> seen(count, 0);
    for (int i = 0; i < count; ++i) {
      const int src = ch11::reversed_source(i, count);
      ASSERT_GE(src, 0);
      ASSERT_LT(src, count);
      ASSERT_EQ(src / ch11::SUB_VECS, i / ch11::SUB_VECS);
      ++seen[src];
    }
    for (int c : seen) EXPECT_EQ(c, 1);
  }
}

}  // namespace
