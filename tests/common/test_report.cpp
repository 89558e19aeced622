// Host tests for statistics and the report table/JSON.
#include <algorithm>
#include <gtest/gtest.h>
#include <unistd.h>  // getpid

#include <cstdio>
#include <cstdlib>  // getenv, setenv
#include <fstream>
#include <sstream>
#include <string>

#include "common/report.hpp"
#include "common/stats.hpp"

namespace {

TEST(Stats, MedianOddEvenEmpty) {
  EXPECT_DOUBLE_EQ(tut::median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(tut::median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(tut::median({}), 0.0);
  EXPECT_DOUBLE_EQ(tut::median({5, 1, 100, 2, 3}), 3.0) << "robust to one slow repeat";
}

TEST(Stats, MinimumAndRate) {
  EXPECT_DOUBLE_EQ(tut::minimum({3, 1.5f, 2}), 1.5);
  EXPECT_DOUBLE_EQ(tut::minimum({}), 0.0);
  EXPECT_DOUBLE_EQ(tut::rate_per_second_1e9(2e9, 1000.0), 2.0);  // 2 GB in 1 s
  EXPECT_DOUBLE_EQ(tut::rate_per_second_1e9(2e9, 0.0), 0.0);
}

tut::Report sample() {
  tut::Report r;
  r.chapter = "ch99_test";
  r.title = "Chapter 99: \"quotes\" and\ttabs";
  r.seed = 1234;
  r.device.name = "Fake GPU";
  r.device.cc_major = 9;
  r.device.sm_count = 132;
  r.device.l2_bytes = 60ll << 20;
  r.ceiling_name = "cudaMemcpyAsync D2D";
  r.ceiling_rate = 4000;
  r.ceiling_ms = 0.5;
  tut::ResultRow a;
  a.key = "v0";
  a.name = "v0 base";
  a.timed = true;
  a.median_ms = 1.0;
  a.min_ms = 0.9;
  a.rate = 2000;
  a.pct_of_ceiling = 50;
  a.vs_v0 = 1.0;
  a.passed = true;
  a.blocks_per_sm = 6;
  tut::ResultRow b = a;
  b.blocks_per_sm = 0;  // not known
  b.key = "v9";
  b.name = "v9 broken";
  b.negative = true;
  b.passed = false;
  r.rows = {a, b};
  r.tour_lesson = "v0";
  r.tour_baseline = "v9";
  return r;
}

TEST(Report, HeaderNamesGpuCcSmsL2Seed) {
  const std::string h = tut::format_header(sample());
  for (const char* s : {"Fake GPU", "CC 9.0", "132 SMs", "60.0 MiB", "seed 1234", "4000.0 GB/s"})
    EXPECT_NE(h.find(s), std::string::npos) << s;
}

TEST(Report, TableHasColumnsAndLabels) {
  const std::string t = tut::format_table(sample());
  for (const char* s : {"variant", "blocks/SM", "median ms", "min ms", "GB/s", "% ceil", "vs v0",
                        "check", "v0 base", "2000.0", "50.0%", "1.00x", "PASS", "FAIL (expected)"})
    EXPECT_NE(t.find(s), std::string::npos) << s;
  // Every row has a blocks/SM cell: the number, or "-" when the launcher did not report it.
  EXPECT_NE(t.find("v0 base   |         6 |"), std::string::npos) << t;
  EXPECT_NE(t.find("v9 broken |         - |"), std::string::npos) << t;
  EXPECT_EQ(t.find("back to back"), std::string::npos) << "no batched sample, no footnote";
}

TEST(Report, TableSaysWhenLaunchesWereBatched) {
  tut::Report r = sample();
  r.rows[0].launches_per_sample = 40;
  EXPECT_NE(tut::format_table(r).find("up to 40 back to back"), std::string::npos);
}

TEST(Report, CheckLabels) {
  tut::ResultRow r;
  r.passed = true;
  EXPECT_EQ(tut::check_label(r), "PASS");
  r.passed = false;
  EXPECT_EQ(tut::check_label(r), "FAIL");
  r.negative = true;
  EXPECT_EQ(tut::check_label(r), "FAIL (expected)");
  r.passed = true;
  EXPECT_EQ(tut::check_label(r), "PASS (BROKEN CHECK)");
  r.skipped = true;
  EXPECT_EQ(tut::check_label(r), "SKIP");
}

// The JSON names the commit the binary was built from and the GPU job's call that ran it
// (decision: every results header says which commit and call produced its table).
TEST(Report, JsonCarriesCommitAndCall) {
  const std::string commit = tut::build_commit();
  EXPECT_FALSE(commit.empty());
  // a hex commit, maybe "-dirty", or "unknown" outside a git checkout. git gives 40 digits;
  // TUTORIAL_SOURCE_COMMIT (tools/gpu_check.sh) may name an abbreviated one (7 or more).
  const std::size_t digits = std::min(commit.find_first_not_of("0123456789abcdef"), commit.size());
  const bool hex = digits >= 7 && digits <= 40 &&
                   (digits == commit.size() || commit.substr(digits) == "-dirty");
  EXPECT_TRUE(hex || commit == "unknown") << commit;

  const char* saved = std::getenv("TUTORIAL_RUN_CALL");
  const std::string saved_text = saved ? saved : "";
  unsetenv("TUTORIAL_RUN_CALL");
  EXPECT_EQ(tut::run_call(), "");
  setenv("TUTORIAL_RUN_CALL", "call 3 (2026-12-02 10:00:00 UTC, STEPS=full)", 1);
  EXPECT_EQ(tut::run_call(), "call 3 (2026-12-02 10:00:00 UTC, STEPS=full)");
  tut::Report r = sample();  // a Report made now picks both up
  EXPECT_EQ(r.call, "call 3 (2026-12-02 10:00:00 UTC, STEPS=full)");
  EXPECT_EQ(r.commit, commit);
  r.call = "call \"4\"";
  const std::string j = tut::to_json(r);
  EXPECT_NE(j.find("\"commit\": \"" + commit + "\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"call\": \"call \\\"4\\\"\""), std::string::npos) << j;  // escaped
  if (saved) setenv("TUTORIAL_RUN_CALL", saved_text.c_str(), 1); else unsetenv("TUTORIAL_RUN_CALL");
}

TEST(Report, JsonEscapesAndCarriesRows) {
  const std::string j = tut::to_json(sample());
  EXPECT_NE(j.find("\"chapter\": \"ch99_test\""), std::string::npos);
  EXPECT_NE(j.find("\\\"quotes\\\" and\\ttabs"), std::string::npos);
  EXPECT_NE(j.find("\"key\": \"v9\""), std::string::npos);
  EXPECT_NE(j.find("\"negative\": true"), std::string::npos);
  EXPECT_NE(j.find("\"rate\": 2000"), std::string::npos);
  EXPECT_NE(j.find("\"seed\": 1234"), std::string::npos);
  EXPECT_NE(j.find("\"blocks_per_sm\": 6"), std::string::npos);
  EXPECT_NE(j.find("\"blocks_per_sm\": null"), std::string::npos);
  EXPECT_NE(j.find("\"launches_per_sample\": 1"), std::string::npos);
  EXPECT_NE(j.find("\"tour_lesson\": \"v0\""), std::string::npos);
  EXPECT_NE(j.find("\"tour_baseline\": \"v9\""), std::string::npos);
  // Balanced braces and brackets: a cheap structural check.
  int braces = 0, brackets = 0;
  for (char c : j) {
    braces += c == '{' ? 1 : c == '}' ? -1 : 0;
    brackets += c == '[' ? 1 : c == ']' ? -1 : 0;
  }
  EXPECT_EQ(braces, 0);
  EXPECT_EQ(brackets, 0);
}

TEST(Report, FormatBytes) {
  EXPECT_EQ(tut::format_bytes(512), "512 B");
  EXPECT_EQ(tut::format_bytes(64 * 1024), "64.0 KiB");
  EXPECT_EQ(tut::format_bytes(1ull << 30), "1.00 GiB");
}

TEST(Report, SweepJsonKeepsOrderArraysAndEscapes) {
  tut::SweepJson json("ch99_demo");
  json.text("device", "GPU \"X\"").num("memcpy_gbs", 1.5).array("occupancy");
  json.add(tut::SweepRow().integer("stages", 4).num("gbs", 2.25).passed(true));
  json.add(tut::SweepRow().text("variant", "v\"1").passed(false));
  json.integer("blocks", 2).array("intensity");
  json.add(tut::SweepRow().integer("rounds", 8));
  EXPECT_EQ(json.str(),
            "{\"chapter\": \"ch99_demo\", \"device\": \"GPU \\\"X\\\"\", \"memcpy_gbs\": 1.500000, "
            "\"occupancy\": [\n"
            "  {\"stages\": 4, \"gbs\": 2.250000, \"passed\": true},\n"
            "  {\"variant\": \"v\\\"1\", \"passed\": false}\n], \"blocks\": 2, \"intensity\": [\n"
            "  {\"rounds\": 8}\n]}\n");
  tut::SweepJson empty("ch98");
  EXPECT_EQ(empty.add(tut::SweepRow().integer("n", 1)).str(),
            "{\"chapter\": \"ch98\", \"sweep\": [\n  {\"n\": 1}\n]}\n")
      << "rows without an array go to \"sweep\"";
}

TEST(Report, SweepJsonIsWrittenBesideTheJsonFile) {
  const std::string base = ::testing::TempDir() + "sweep_test.json";
  const std::string sweep = base + ".sweep.json";
  std::remove(sweep.c_str());
  ASSERT_TRUE(tut::write_sweep_json(base, "{\"sweep\": [1, 2]}\n"));
  std::ifstream in(sweep);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"sweep\": [1, 2]}\n");
  std::remove(sweep.c_str());
}

TEST(Report, SweepJsonWithoutJsonPathWritesNothing) {
  EXPECT_TRUE(tut::write_sweep_json("", "{}"));
  EXPECT_FALSE(std::ifstream(".sweep.json").good());
}

TEST(Report, SweepJsonToAMissingDirectoryFails) {
  EXPECT_FALSE(tut::write_sweep_json("/nonexistent-dir-for-this-test/x.json", "{}"));
}

}  // namespace

TEST(Report, JsonFileReplacesAtomicallyAndLeavesNoTemporary) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "atomic_test.json";
  ASSERT_TRUE(tut::write_json_file(path, "{\"run\": 1}\n"));
  ASSERT_TRUE(tut::write_json_file(path, "{\"run\": 2}\n"));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"run\": 2}\n");
  std::string why;
  EXPECT_TRUE(tut::json_path_writable(path, why)) << why;
  std::ifstream again(path);
  std::stringstream still;
  still << again.rdbuf();
  EXPECT_EQ(still.str(), "{\"run\": 2}\n") << "the check must not touch the file";
  std::remove(path.c_str());
}

TEST(Report, JsonPathInAMissingDirectoryIsReported) {
  std::string why;
  EXPECT_FALSE(tut::json_path_writable("/nonexistent-dir-for-this-test/x.json", why));
  EXPECT_NE(why.find("cannot create"), std::string::npos) << why;
  EXPECT_FALSE(tut::write_json_file("/nonexistent-dir-for-this-test/x.json", "{}"));
}

TEST(Report, JsonPathThatIsADirectoryIsRefused) {
  // --json=<folder> or --json=<folder>/ is a usage error before any GPU work, not a run that
  // ends unable to write its results.
  const std::string dir = ::testing::TempDir();  // ends in '/'
  std::string why;
  EXPECT_FALSE(tut::json_path_writable(dir, why));
  EXPECT_NE(why.find("is a directory"), std::string::npos) << why;
  const std::string no_slash = dir.substr(0, dir.size() - 1);
  EXPECT_FALSE(tut::json_path_writable(no_slash, why));
  EXPECT_NE(why.find("is a directory"), std::string::npos) << why;
  EXPECT_EQ(why.find(")"), std::string::npos) << "one parenthesis, (see --help), is added later";
}

TEST(Report, JsonPathProbeLeavesFilesBesideThePathAlone) {
  // The probe creates a file of its own and removes only that: files with the names a probe
  // might use (the old --timeline probe's <path>.tmp, this process's <path>.tmp<pid>) survive.
  const std::string path = ::testing::TempDir() + "probe_test.json";
  const std::string beside[] = {path + ".tmp", path + ".tmp" + std::to_string(::getpid())};
  for (const std::string& b : beside) {
    std::ofstream(b) << "keep\n";
  }
  std::string why;
  EXPECT_TRUE(tut::json_path_writable(path, why)) << why;
  for (const std::string& b : beside) {
    std::ifstream in(b);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "keep\n") << b;
    std::remove(b.c_str());
  }
  std::ifstream made(path);
  EXPECT_FALSE(made.good()) << "the probe must not create the file itself";
}

TEST(Report, SweepJsonPathIsBesideTheJsonFile) {
  EXPECT_EQ(tut::sweep_json_path("out/ch04.json"), "out/ch04.json.sweep.json");
}

// The idle time before each timed block travels in the JSON, where the README's method sentence
// (tools/results_to_md.py) reads it: the text states the value the run used, not a copy of it.
TEST(Report, JsonCarriesIdleBeforeTiming) {
  tut::Report r = sample();
  r.idle_before_timing_ms = 200;
  EXPECT_NE(tut::to_json(r).find("\"idle_before_timing_ms\": 200,"), std::string::npos);
  r.idle_before_timing_ms = 0;
  EXPECT_NE(tut::to_json(r).find("\"idle_before_timing_ms\": 0,"), std::string::npos);
}
