// The watchdog's limit (TUTORIAL_WATCHDOG_S) and the line it prints (common/watchdog.hpp),
// without a GPU. tests/harness/test_harness_gpu.cu checks that it fires on a kernel that spins.
#include "common/watchdog.hpp"

#include <gtest/gtest.h>

#include <string>

TEST(Watchdog, DefaultLimitWhenTheVariableIsUnset) {
  double s = -1;
  std::string error;
  ASSERT_TRUE(tut::parse_watchdog_seconds(nullptr, s, error));
  EXPECT_EQ(s, tut::kWatchdogDefaultSeconds);
  EXPECT_EQ(s, 10.0);
}

TEST(Watchdog, AcceptsSecondsAndZeroForOff) {
  double s = -1;
  std::string error;
  ASSERT_TRUE(tut::parse_watchdog_seconds("600", s, error));
  EXPECT_EQ(s, 600.0);
  ASSERT_TRUE(tut::parse_watchdog_seconds("2.5", s, error));
  EXPECT_EQ(s, 2.5);
  ASSERT_TRUE(tut::parse_watchdog_seconds("0", s, error));
  EXPECT_EQ(s, 0.0);
}

TEST(Watchdog, RejectsWhatIsNotANumberOfSeconds) {
  for (const char* bad : {"", "ten", "10s", "-1", "inf", "nan", "1e999"}) {
    double s = 7;
    std::string error;
    EXPECT_FALSE(tut::parse_watchdog_seconds(bad, s, error)) << bad;
    EXPECT_EQ(s, 7) << "left as it was for '" << bad << "'";
    EXPECT_EQ(error.rfind(std::string("TUTORIAL_WATCHDOG_S=") + bad + ": ", 0), 0u) << error;
  }
}

TEST(Watchdog, SentenceNamesChapterVariantWhatItWasDoingAndTheCause) {
  EXPECT_EQ(tut::watchdog_message("ch04_pipeline_prefetch", "v7_x", "checked launch, size 4096", 10),
            "ch04_pipeline_prefetch: variant v7_x did not finish within 10 s (checked launch, "
            "size 4096): a wait that never completes (inside cuda::pipeline, or an unbounded "
            "mbarrier wait); exit 1");
  EXPECT_EQ(tut::watchdog_message("", "", "", 2.5),
            "the launch did not finish within 2.5 s: a wait that never completes (inside "
            "cuda::pipeline, or an unbounded mbarrier wait); exit 1");
}

TEST(Watchdog, ScopesNestAndRestoreTheOuterSubject) {
  tut::WatchdogScope::set_chapter("ch07_producer_consumer");
  {
    const tut::WatchdogScope outer("", "the chapter's runs after the table");
    EXPECT_EQ(tut::WatchdogScope::message(10).rfind(
                  "ch07_producer_consumer: the launch did not finish within 10 s (the chapter's "
                  "runs after the table)",
                  0),
              0u);
    {
      const tut::WatchdogScope inner("v3_ring", "timed runs");
      EXPECT_EQ(tut::WatchdogScope::message(10).rfind(
                    "ch07_producer_consumer: variant v3_ring did not finish within 10 s (timed runs)", 0),
                0u);
    }
    EXPECT_NE(tut::WatchdogScope::message(10).find("(the chapter's runs after the table)"),
              std::string::npos);
  }
  tut::WatchdogScope::set_chapter("");
  EXPECT_EQ(tut::WatchdogScope::message(1).rfind("the launch did not finish within 1 s:", 0), 0u);
}
