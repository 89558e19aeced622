/// @file cli.hpp
/// @brief The command line shared by every chapter (host only, no CUDA).
///
/// Every chapter accepts the same flags:
/// @verbatim
///   --variant=<key[,key...]|all|negative>  --size=<n>[K|M|G]  --warmup=<n>  --repeats=<n>
///   --seed=<n>  --check-only  --list  --gates=<targets>  --json=<path>  --timeline=<path>  --help
/// @endverbatim
/// plus a few integer options a chapter declares itself (ExtraOption), such as
/// --blocks-per-sm. Values may be written `--flag=value` or `--flag value`. Anything
/// malformed is reported in one line and the program exits with code 2.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tut {

/// @brief Exit code for a usage error (bad flag or value).
inline constexpr int kExitUsage = 2;

/// @brief An integer option that one chapter adds to the common command line.
struct ExtraOption {
  std::string name;         ///< flag name without dashes, e.g. "blocks-per-sm"
  std::string help;         ///< one line for --help
  long long default_value;  ///< value used when the flag is absent
  long long min_value;      ///< smallest accepted value (inclusive)
  long long max_value;      ///< largest accepted value (inclusive)
};

/// @brief The parsed command line.
struct Options {
  std::string variant = "all";       ///< variant keys, comma separated, or "all" / "negative"
  std::optional<std::uint64_t> size;  ///< problem size; unset means the chapter's default
  int warmup = 3;                    ///< untimed runs before timing (>= 1)
  int repeats = 20;                  ///< timed runs; the median and min are reported
  std::optional<std::uint64_t> seed;  ///< unset means a fresh seed, printed so it can be reused
  bool check_only = false;           ///< verify at small and awkward sizes, no timing
  bool list = false;                 ///< print the variant registry and exit
  std::string gates;                 ///< --gates=80,90a,...: print the architecture gates' verdicts and exit
  bool help = false;                 ///< print usage and exit
  std::string json_path;             ///< write the result rows here as JSON (empty: don't)
  std::string timeline_path;         ///< write an in-kernel timeline here (empty: don't)
  std::map<std::string, long long> extras;  ///< chapter-declared options, defaults filled in
};

/// @brief Result of parsing: either options, or one line saying what is wrong.
struct ParseOutcome {
  bool ok = false;
  Options options;
  std::string error;  ///< set when !ok: "--flag: problem", one line, naming the bad value
};

/// @brief The one format of every command-line error: `error: --flag: problem (see --help)`.
/// @param flag_and_problem "--flag: problem", as ParseOutcome::error holds it
std::string usage_error(const std::string& flag_and_problem);

/// @brief Parse a size such as "4096", "64K", "256M", "1G" (binary multiples, 1K = 1024).
/// @param text  the value as typed
/// @param out   set to the size on success
/// @param error set to a one-line reason on failure
/// @return false for empty, zero, negative, non-numeric, bad-suffix or overflowing values
bool parse_size(const std::string& text, std::uint64_t& out, std::string& error);

/// @brief Parse a plain decimal integer within [min_value, max_value].
/// @return false (with a one-line reason in @p error) for non-numeric, overflowing or
///         out-of-range text
bool parse_integer(const std::string& text, long long min_value, long long max_value,
                   long long& out, std::string& error);

/// @brief Parse the arguments after argv[0].
/// @param args   the arguments, in order
/// @param extras options this chapter adds to the common set
ParseOutcome parse_cli(const std::vector<std::string>& args,
                       const std::vector<ExtraOption>& extras);

/// @brief The --help text for a chapter. What --size means comes first, right after the usage
///        line, because it differs between chapters (bytes, or a matrix side).
/// @param program   executable name
/// @param title     chapter title line
/// @param size_help what --size means for this chapter (unit and default)
/// @param extras    the chapter's extra options
std::string usage_text(const std::string& program, const std::string& title,
                       const std::string& size_help, const std::vector<ExtraOption>& extras);

/// @brief Split "a,b,c" into {"a","b","c"} (empty pieces dropped).
std::vector<std::string> split_commas(const std::string& text);

}  // namespace tut
