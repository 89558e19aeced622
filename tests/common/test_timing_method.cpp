// Host tests for the timing method's statistics and reporting: the alternating pairs' ratio
// summary, the NVML readings' summary and words, and how the table and JSON show both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/gpu_state.hpp"
#include "common/report.hpp"
#include "common/stats.hpp"

namespace {

TEST(RatioSummary, MedianQuartilesAndExtremes) {
  const tut::RatioSummary r = tut::summarize_ratios({0.95, 0.90, 1.00, 0.97, 0.93});
  EXPECT_EQ(r.pairs, 5);
  EXPECT_DOUBLE_EQ(r.median, 0.95);
  EXPECT_DOUBLE_EQ(r.p25, 0.93);
  EXPECT_DOUBLE_EQ(r.p75, 0.97);
  EXPECT_DOUBLE_EQ(r.min, 0.90);
  EXPECT_DOUBLE_EQ(r.max, 1.00);
}

TEST(RatioSummary, InterpolatesBetweenRanks) {
  const tut::RatioSummary r = tut::summarize_ratios({1.0, 2.0, 3.0, 4.0});
  EXPECT_DOUBLE_EQ(r.median, 2.5);
  EXPECT_DOUBLE_EQ(r.p25, 1.75);
  EXPECT_DOUBLE_EQ(r.p75, 3.25);
}

TEST(RatioSummary, OneSlowPairDoesNotMoveTheMedian) {
  std::vector<double> ratios(20, 0.98);
  ratios[7] = 0.5;  // a pair where the variant's sample was hit by something else
  EXPECT_DOUBLE_EQ(tut::summarize_ratios(ratios).median, 0.98);
  EXPECT_DOUBLE_EQ(tut::summarize_ratios(ratios).min, 0.5);
}

TEST(RatioSummary, EmptyIsAllZero) {
  const tut::RatioSummary r = tut::summarize_ratios({});
  EXPECT_EQ(r.pairs, 0);
  EXPECT_DOUBLE_EQ(r.median, 0.0);
}

TEST(GpuState, ClockReasonsInWords) {
  EXPECT_EQ(tut::clock_reasons_text(0), "none");
  EXPECT_EQ(tut::clock_reasons_text(0x1), "none") << "idle is not a limit";
  EXPECT_EQ(tut::clock_reasons_text(0x4 | 0x8), "SW power cap, HW slowdown");
  EXPECT_EQ(tut::clock_reasons_text(0x40), "HW thermal slowdown");
  EXPECT_NE(tut::clock_reasons_text(0x100000).find("other (0x100000)"), std::string::npos);
}

TEST(GpuState, WithoutNvmlNothingIsKnown) {
  // No bus id: no reading, whatever the machine (here, CI has no driver at all).
  EXPECT_FALSE(tut::sample_gpu_state("").known);
}

TEST(GpuStateLog, SummaryGivesTheRangesAndTheLimits) {
  tut::GpuStateLog log;
  tut::GpuState a;
  a.known = true;
  a.sm_mhz = 1980;
  a.power_w = 310.4;
  a.temperature_c = 38;
  a.reasons = 0x1;  // idle at the instant of the reading
  tut::GpuState b = a;
  b.sm_mhz = 1755;
  b.power_w = 689.6;
  b.temperature_c = 52;
  b.reasons = 0x4;
  log.add(a);
  log.add(b);
  log.add(tut::GpuState{});  // unknown: not in the ranges
  const std::string s = log.summary();
  EXPECT_NE(s.find("2 readings"), std::string::npos) << s;
  EXPECT_NE(s.find("SM clock 1755-1980 MHz"), std::string::npos) << s;
  EXPECT_NE(s.find("power 310-690 W"), std::string::npos) << s;
  EXPECT_NE(s.find("38-52 C"), std::string::npos) << s;
  EXPECT_NE(s.find("clock limits: SW power cap"), std::string::npos) << s;
  EXPECT_EQ(log.limits_seen(), 0x4u);
}

TEST(GpuStateLog, SaysWhenNothingWasRead) {
  tut::GpuStateLog log;
  log.add(tut::GpuState{});
  EXPECT_NE(log.summary().find("not read"), std::string::npos);
}

tut::Report paired_report() {
  tut::Report r;
  r.title = "T";
  r.metric = "GFLOP/s";
  r.ceiling_name = "cuBLAS";
  r.ceiling_rate = 800000;
  r.ceiling_ms = 0.2;
  r.gpu_state = "GPU state (NVML, 2 readings: ...): SM clock 1980-1980 MHz";
  tut::ResultRow row;
  row.key = "step5";
  row.name = "step 5";
  row.timed = true;
  row.passed = true;
  row.median_ms = 0.21;
  row.rate = 760000;
  row.pct_of_ceiling = 95.2;
  row.pct_p25 = 94.8;
  row.pct_p75 = 95.9;
  row.pairs = 20;
  row.gpu_start.sm_mhz = 1980;
  row.gpu_end.sm_mhz = 1965;
  r.rows.push_back(row);
  return r;
}

TEST(PairedReport, TableStatesTheMethodAndTheGpuState) {
  const std::string t = tut::format_table(paired_report());
  EXPECT_NE(t.find("the median of 20 alternating pairs"), std::string::npos) << t;
  EXPECT_NE(t.find("SM clock 1980-1980 MHz"), std::string::npos) << t;
  EXPECT_NE(t.find("95.2%"), std::string::npos) << t;
}

TEST(PairedReport, JsonCarriesQuartilesPairsAndReadings) {
  const std::string j = tut::to_json(paired_report());
  EXPECT_NE(j.find("\"pct_p25\": 94.8"), std::string::npos) << j;
  EXPECT_NE(j.find("\"pct_p75\": 95.9"), std::string::npos) << j;
  EXPECT_NE(j.find("\"pairs\": 20"), std::string::npos) << j;
  EXPECT_NE(j.find("\"sm_mhz_start\": 1980"), std::string::npos) << j;
  EXPECT_NE(j.find("\"sm_mhz_end\": 1965"), std::string::npos) << j;
  EXPECT_NE(j.find("\"gpu_state\": \"GPU state (NVML"), std::string::npos) << j;
}

TEST(PairedReport, RowsTimedAloneStateNoPairs) {
  tut::Report r = paired_report();
  r.rows[0].pairs = 0;
  EXPECT_EQ(tut::format_table(r).find("alternating pairs"), std::string::npos);
}

}  // namespace
