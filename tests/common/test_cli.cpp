// Host tests for the common command line (common/cli.*): every valid form and every class of
// bad input the chapters must reject with exit code 2.
#include <gtest/gtest.h>

#include "common/cli.hpp"

namespace {

const std::vector<tut::ExtraOption> kExtras = {{"blocks-per-sm", "help", 1, 1, 32}};

tut::ParseOutcome parse(std::vector<std::string> args) { return tut::parse_cli(args, kExtras); }

TEST(ParseSize, AcceptsPlainAndSuffixedSizes) {
  std::uint64_t v = 0;
  std::string err;
  ASSERT_TRUE(tut::parse_size("4096", v, err));
  EXPECT_EQ(v, 4096u);
  ASSERT_TRUE(tut::parse_size("64K", v, err));
  EXPECT_EQ(v, 64u * 1024);
  ASSERT_TRUE(tut::parse_size("3m", v, err));
  EXPECT_EQ(v, 3u << 20);
  ASSERT_TRUE(tut::parse_size("2G", v, err));
  EXPECT_EQ(v, 2ull << 30);
}

TEST(ParseSize, RejectsZeroNegativeGarbageAndOverflow) {
  std::uint64_t v = 123;
  std::string err;
  for (const char* bad : {"0", "0K", "-1", "-4K", "abc", "12Q", "1.5G", "", "K", " 5",
                          "99999999999999999999", "18446744073709551615G", "17179869184G"}) {
    err.clear();
    EXPECT_FALSE(tut::parse_size(bad, v, err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
    EXPECT_EQ(v, 123u) << "output must be untouched on failure: " << bad;
  }
}

TEST(ParseInteger, RangeAndSyntax) {
  long long v = 0;
  std::string err;
  EXPECT_TRUE(tut::parse_integer("7", 1, 10, v, err));
  EXPECT_EQ(v, 7);
  EXPECT_TRUE(tut::parse_integer("-3", -5, 5, v, err));
  EXPECT_EQ(v, -3);
  EXPECT_FALSE(tut::parse_integer("0", 1, 10, v, err));
  EXPECT_FALSE(tut::parse_integer("11", 1, 10, v, err));
  EXPECT_FALSE(tut::parse_integer("x", 1, 10, v, err));
  EXPECT_FALSE(tut::parse_integer("1e3", 1, 10000, v, err));
  EXPECT_FALSE(tut::parse_integer("99999999999999999999", 1, 10, v, err));
  EXPECT_FALSE(tut::parse_integer("", 1, 10, v, err));
}

TEST(ParseCli, DefaultsWhenNoArguments) {
  const auto r = parse({});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.options.variant, "all");
  EXPECT_FALSE(r.options.size.has_value());
  EXPECT_FALSE(r.options.seed.has_value());
  EXPECT_EQ(r.options.warmup, 3);
  EXPECT_EQ(r.options.repeats, 20);
  EXPECT_FALSE(r.options.check_only);
  EXPECT_EQ(r.options.extras.at("blocks-per-sm"), 1);
}

TEST(ParseCli, EveryFlagBothSpellings) {
  const auto r = parse({"--variant=v1,v2", "--size", "1M", "--warmup=2", "--repeats", "9",
                        "--seed=42", "--check-only", "--json=out.json", "--blocks-per-sm=4"});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.options.variant, "v1,v2");
  EXPECT_EQ(*r.options.size, 1u << 20);
  EXPECT_EQ(r.options.warmup, 2);
  EXPECT_EQ(r.options.repeats, 9);
  EXPECT_EQ(*r.options.seed, 42u);
  EXPECT_TRUE(r.options.check_only);
  EXPECT_EQ(r.options.json_path, "out.json");
  EXPECT_EQ(r.options.extras.at("blocks-per-sm"), 4);
  EXPECT_TRUE(parse({"--list"}).options.list);
  EXPECT_EQ(parse({"--gates=80,90a,120a"}).options.gates, "80,90a,120a");
  EXPECT_TRUE(parse({"-h"}).options.help);
  EXPECT_EQ(*parse({"--seed=0"}).options.seed, 0u);  // 0 is a valid seed
}

TEST(ParseCli, BadInputGivesOneLineNamingTheFlag) {
  const std::vector<std::vector<std::string>> bad = {
      {"--size=0"},         {"--size=-1"},        {"--size=ten"},       {"--size"},
      {"--repeats=0"},      {"--repeats=-2"},     {"--warmup=0"},       {"--warmup=lots"},
      {"--repeats=99999999999999999999"},         {"--seed=-1"},        {"--seed=1.5"},
      {"--bogus"},          {"--bogus=1"},        {"stray"},            {"--variant="},
      {"--json="},          {"--check-only=1"},   {"--list=yes"},       {"--blocks-per-sm=0"},
      {"--blocks-per-sm=33"}, {"--blocks-per-sm=x"}, {"--gates="},    {"--gates=sm_90"},
      {"--gates=90b"}};
  for (const auto& args : bad) {
    const auto r = parse(args);
    EXPECT_FALSE(r.ok) << args[0];
    EXPECT_FALSE(r.error.empty()) << args[0];
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line: " << r.error;
    // One format: the flag (or the stray word, quoted), a colon, the problem.
    const bool names_flag = r.error.rfind("--", 0) == 0 || r.error.rfind("'", 0) == 0;
    EXPECT_TRUE(names_flag && r.error.find(": ") != std::string::npos) << r.error;
    EXPECT_EQ(tut::usage_error(r.error).rfind("error: " + r.error + " (see --help)", 0), 0u);
  }
  EXPECT_NE(parse({"--size=0"}).error.find("--size"), std::string::npos);
  EXPECT_EQ(parse({"--bogus"}).error, "--bogus: unknown option");
  EXPECT_EQ(parse({"--size"}).error, "--size: needs a value");
}

TEST(ParseCli, UsageSaysWhatSizeMeansFirst) {
  const std::string text = tut::usage_text("prog", "title", "matrix side N (default 4096)", kExtras);
  const std::size_t meaning = text.find("--size here is: matrix side N (default 4096)");
  ASSERT_NE(meaning, std::string::npos) << text;
  EXPECT_LT(meaning, text.find("--variant")) << "the meaning of --size comes before the list";
}

TEST(ParseCli, UsageMentionsEveryFlag) {
  const std::string text = tut::usage_text("prog", "title", "bytes", kExtras);
  for (const char* flag : {"--variant", "--size", "--warmup", "--repeats", "--seed",
                           "--check-only", "--list", "--gates", "--json", "--help", "--blocks-per-sm", "77"})
    EXPECT_NE(text.find(flag), std::string::npos) << flag;
}

TEST(SplitCommas, DropsEmptyPieces) {
  EXPECT_EQ(tut::split_commas("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(tut::split_commas("").empty());
}

}  // namespace
