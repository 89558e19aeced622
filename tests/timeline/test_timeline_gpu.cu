// GPU tests of the in-kernel timeline (common/timeline.cuh) on the sample ring of
// sample_ring.cuh: a traced run still computes the right output; only blocks on the traced
// SMs record; every lane opens, closes and stays inside its window; the clock never runs
// backwards within a lane; and the overlap the lessons claim is asserted from the data: a
// two-stage ring has copies in flight during compute, a one-stage ring has none.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/cuda_check.cuh"
#include "common/device_buffer.cuh"
#include "common/device_info.cuh"
#include "common/timeline.cuh"
#include "gpu_test.cuh"
#include "sample_ring.cuh"

namespace {

using timeline_sample::kThreads;
using timeline_sample::ring;

constexpr int kTilesPerBlock = 24;  // several laps of each ring (24 tiles, 1, 2 or 4 slots)
constexpr std::uint32_t kCapacity = 256;

std::uint32_t lcg8(std::uint32_t x) {
  for (int r = 0; r < 8; ++r) x = x * 1664525u + 1013904223u;
  return x;
}

struct RingRun {
  tut::DecodedTrace trace;
  bool output_ok = false;
  int grid = 0;
};

// Launch ring<STAGES> (traced when TRACED) on 2 blocks per SM, check the output exactly,
// return the decoded trace.
template <int STAGES, bool TRACED>
RingRun run_ring(std::uint32_t traced_sms) {
  const tut::DeviceSummary dev = tut::query_device();
  RingRun r;
  r.grid = 2 * dev.sm_count;
  const std::size_t vecs = std::size_t(r.grid) * kTilesPerBlock * kThreads;
  std::vector<uint4> in(vecs);
  for (std::size_t i = 0; i < vecs; ++i) {
    const auto w = static_cast<std::uint32_t>(4 * i);
    in[i] = make_uint4(w, w + 1, w + 2, w + 3);  // unique words
  }
  tut::DeviceBuffer<uint4> d_in(vecs), d_out(vecs);
  d_in.upload(in);
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  d_out.poison(s);
  tut::TraceRecorder rec({static_cast<std::uint32_t>(r.grid), 1, kCapacity}, traced_sms);
  rec.clear(s);
  if constexpr (TRACED)
    ring<STAGES, tut::TraceOn><<<r.grid, kThreads, 0, s>>>(d_in.data(), d_out.data(),
                                                          kTilesPerBlock, rec.arg());
  else
    ring<STAGES><<<r.grid, kThreads, 0, s>>>(d_in.data(), d_out.data(), kTilesPerBlock);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(s));
  const std::vector<uint4> out = d_out.download(s);
  r.output_ok = true;
  for (std::size_t base = 0; base < vecs && r.output_ok; base += kThreads) {
    for (int t = 0; t < kThreads; ++t) {
      const uint4 want = in[base + kThreads - 1 - t];
      const uint4 got = out[base + t];
      if (got.x != lcg8(want.x) || got.y != want.y || got.z != want.z || got.w != want.w) {
        r.output_ok = false;
        ADD_FAILURE() << "wrong output at vector " << base + t;
        break;
      }
    }
  }
  r.trace = rec.download(s);
  CUDA_CHECK(cudaStreamDestroy(s));
  return r;
}

// What every trace of the sample must satisfy.
void expect_well_formed(const RingRun& r, std::uint32_t traced_sms) {
  ASSERT_TRUE(r.output_ok) << "a traced run must still compute the right answer";
  ASSERT_FALSE(r.trace.lanes.empty()) << "no block ran on the traced SMs";
  for (const tut::LaneInfo& l : r.trace.lanes) {
    if (traced_sms) EXPECT_LT(l.sm, traced_sms) << "block " << l.block;
    EXPECT_TRUE(l.closed) << "block " << l.block;
    EXPECT_EQ(l.dropped, 0u);
    // one copy issued per tile (STAGES-1 of them before the loop), and per tile a wait begun,
    // a wait done, a compute begun and ended, and a slot released
    EXPECT_EQ(l.recorded, std::uint32_t(kTilesPerBlock * 6)) << "block " << l.block;
  }
  std::uint64_t last = 0;
  std::uint32_t last_block = ~0u;
  for (const tut::TimedEvent& e : r.trace.events) {
    if (e.block != last_block) last = 0;
    last_block = e.block;
    EXPECT_GE(e.t_ns, last) << "clock ran backwards in block " << e.block << " at event " << e.seq;
    last = e.t_ns;
    for (const tut::LaneInfo& l : r.trace.lanes)
      if (l.block == e.block) {
        EXPECT_GE(e.t_ns, l.open_ns);
        EXPECT_LE(e.t_ns, l.close_ns);
      }
  }
  tut::TraceSummary sum;
  const std::string json = tut::chrome_trace_json({tut::KernelTrace{"ring", "ring", {"block"}, r.trace}},
                                                  {"test", tut::query_device().name, "test"}, &sum);
  EXPECT_EQ(sum.unpaired_copies, 0u);
  EXPECT_EQ(sum.unpaired_compute, 0u);
  EXPECT_EQ(sum.copy_spans, r.trace.lanes.size() * kTilesPerBlock);
  EXPECT_EQ(sum.compute_spans, r.trace.lanes.size() * kTilesPerBlock);
}

TEST(TimelineGpu, UntracedRingIsCorrect) {
  SKIP_UNLESS_GPU(8, 0);
  EXPECT_TRUE((run_ring<2, false>(2).output_ok));
}

TEST(TimelineGpu, TwoStageRingOverlapsCopiesWithCompute) {
  SKIP_UNLESS_GPU(8, 0);
  const RingRun r = run_ring<2, true>(2);
  expect_well_formed(r, 2);
  EXPECT_GT(tut::copies_overlapping_compute(r.trace), 0u)
      << "with two slots the next tile's copy is in flight while this tile is computed";
}

TEST(TimelineGpu, OneStageRingHasNoOverlap) {
  SKIP_UNLESS_GPU(8, 0);
  const RingRun r = run_ring<1, true>(2);
  expect_well_formed(r, 2);
  EXPECT_EQ(tut::copies_overlapping_compute(r.trace), 0u)
      << "with one slot a copy is issued only after the previous tile's compute ended";
}

TEST(TimelineGpu, EveryBlockWhenNoSmIsSelected) {
  SKIP_UNLESS_GPU(8, 0);
  const RingRun r = run_ring<4, true>(0);
  expect_well_formed(r, 0);
  EXPECT_EQ(r.trace.lanes.size(), std::size_t(r.grid));
}

}  // namespace
