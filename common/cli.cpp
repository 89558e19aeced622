#include "cli.hpp"

#include <cctype>
#include <limits>
#include <sstream>

namespace tut {

namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Decimal digits to uint64 with overflow detection.
bool digits_to_u64(const std::string& digits, std::uint64_t& out) {
  std::uint64_t value = 0;
  for (char c : digits) {
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    value = value * 10 + d;
  }
  out = value;
  return true;
}

}  // namespace

bool parse_size(const std::string& text, std::uint64_t& out, std::string& error) {
  if (text.empty()) {
    error = "is empty";
    return false;
  }
  if (text[0] == '-') {
    error = "'" + text + "' is negative";
    return false;
  }
  std::string digits = text;
  std::uint64_t multiplier = 1;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (!std::isdigit(static_cast<unsigned char>(text.back()))) {
    switch (last) {
      case 'K': multiplier = 1ull << 10; break;
      case 'M': multiplier = 1ull << 20; break;
      case 'G': multiplier = 1ull << 30; break;
      default:
        error = "'" + text + "' is not a number; the allowed suffixes are K, M and G";
        return false;
    }
    digits.pop_back();
  }
  if (!all_digits(digits)) {
    error = "'" + text + "' is not a number; the allowed suffixes are K, M and G";
    return false;
  }
  std::uint64_t value = 0;
  if (!digits_to_u64(digits, value) ||
      value > std::numeric_limits<std::uint64_t>::max() / multiplier) {
    error = "'" + text + "' is too large";
    return false;
  }
  value *= multiplier;
  if (value == 0) {
    error = "must be greater than zero";
    return false;
  }
  out = value;
  return true;
}

bool parse_integer(const std::string& text, long long min_value, long long max_value,
                   long long& out, std::string& error) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = negative ? text.substr(1) : text;
  if (!all_digits(digits)) {
    error = "'" + text + "' is not an integer";
    return false;
  }
  std::uint64_t magnitude = 0;
  if (!digits_to_u64(digits, magnitude) ||
      magnitude > static_cast<std::uint64_t>(std::numeric_limits<long long>::max())) {
    error = "'" + text + "' is too large";
    return false;
  }
  const long long value =
      negative ? -static_cast<long long>(magnitude) : static_cast<long long>(magnitude);
  if (value < min_value || value > max_value) {
    std::ostringstream os;
    os << "'" << text << "' is out of range [" << min_value << ", " << max_value << "]";
    error = os.str();
    return false;
  }
  out = value;
  return true;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> pieces;
  std::string piece;
  std::istringstream is(text);
  while (std::getline(is, piece, ','))
    if (!piece.empty()) pieces.push_back(piece);
  return pieces;
}

ParseOutcome parse_cli(const std::vector<std::string>& args,
                       const std::vector<ExtraOption>& extras) {
  ParseOutcome result;
  Options& o = result.options;
  for (const ExtraOption& e : extras) o.extras[e.name] = e.default_value;

  auto fail = [&](const std::string& message) {
    result.ok = false;
    result.error = message;
    return result;
  };

  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") { o.help = true; continue; }
    if (arg == "--check-only") { o.check_only = true; continue; }
    if (arg == "--list") { o.list = true; continue; }
    if (arg.rfind("--", 0) != 0) return fail("'" + arg + "': unexpected argument; options start with --");

    // --name=value or --name value
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    const std::size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const bool boolean_flag = (name == "check-only" || name == "list" || name == "help");
    if (boolean_flag) return fail("--" + name + ": takes no value");

    const bool known = name == "variant" || name == "size" || name == "warmup" ||
                       name == "repeats" || name == "seed" || name == "json" ||
                       name == "timeline" || name == "gates" || o.extras.count(name) != 0;
    if (!known) return fail("--" + name + ": unknown option");
    if (!has_value) {
      if (i + 1 >= args.size()) return fail("--" + name + ": needs a value");
      value = args[++i];
    }

    std::string why;
    if (name == "variant") {
      if (split_commas(value).empty()) return fail("--variant: needs a variant key, from --list");
      o.variant = value;
    } else if (name == "size") {
      std::uint64_t size = 0;
      if (!parse_size(value, size, why)) return fail("--size: " + why);
      o.size = size;
    } else if (name == "warmup" || name == "repeats") {
      long long n = 0;
      if (!parse_integer(value, 1, 100000, n, why)) return fail("--" + name + ": " + why);
      (name == "warmup" ? o.warmup : o.repeats) = static_cast<int>(n);
    } else if (name == "seed") {
      std::uint64_t seed = 0;
      if (!all_digits(value) || !digits_to_u64(value, seed))
        return fail("--seed: '" + value + "' is not a non-negative integer below 2^64");
      o.seed = seed;
    } else if (name == "json") {
      if (value.empty()) return fail("--json: needs a file path");
      o.json_path = value;
    } else if (name == "gates") {
      if (split_commas(value).empty())
        return fail("--gates: needs architectures, e.g. --gates=80,86,89,90a,100a,120a");
      for (const std::string& target : split_commas(value)) {
        std::size_t digits = 0;
        while (digits < target.size() && std::isdigit(static_cast<unsigned char>(target[digits])))
          ++digits;
        const std::string rest = target.substr(digits);
        if (digits == 0 || digits > 4 || !(rest.empty() || rest == "a"))
          return fail("--gates: '" + target + "' is not an architecture such as 80 or 90a");
      }
      o.gates = value;
    } else if (name == "timeline") {
      if (value.empty()) return fail("--timeline: needs a file path");
      o.timeline_path = value;
    } else {
      for (const ExtraOption& e : extras) {
        if (e.name != name) continue;
        long long n = 0;
        if (!parse_integer(value, e.min_value, e.max_value, n, why))
          return fail("--" + name + ": " + why);
        o.extras[name] = n;
      }
    }
  }
  result.ok = true;
  return result;
}

std::string usage_error(const std::string& flag_and_problem) {
  return "error: " + flag_and_problem + " (see --help)";
}

std::string usage_text(const std::string& program, const std::string& title,
                       const std::string& size_help, const std::vector<ExtraOption>& extras) {
  std::ostringstream os;
  os << title << "\n\n"
     << "usage: " << program << " [options]\n\n"
     << "  --size here is: " << size_help << "\n\n"
     << "  --variant=<key[,key..]|all|negative>  variants to run (default all; see --list).\n"
     << "                        'negative' runs the deliberately broken variants, which must FAIL\n"
     << "  --size=<n>[K|M|G]     " << size_help << "\n"
     << "  --warmup=<n>          untimed runs before timing (default 3, >= 1)\n"
     << "  --repeats=<n>         timed runs; median and min are reported (default 20, >= 1)\n"
     << "  --seed=<n>            input seed (default: fresh each run, always printed)\n"
     << "  --check-only          verify at small and awkward sizes; no timing\n"
     << "  --list                list the variants and exit\n"
     << "  --gates=<arch,..>     for each architecture (e.g. 80,90a,120a): what this chapter\n"
     << "                        does when compiled for it and run on such a GPU (JSON; no GPU\n"
     << "                        needed) and exit\n"
     << "  --json=<path>         also write the result rows as JSON\n"
     << "  --timeline=<path>     also trace a few blocks of the lesson's kernels on a small problem\n"
     << "                        and write the in-kernel timeline (Chrome trace JSON, opens in\n"
     << "                        Perfetto); only chapters that have one\n"
     << "  --help                this text\n";
  for (const ExtraOption& e : extras)
    os << "  --" << e.name << "=<n>  " << e.help << " (default " << e.default_value << ", range "
       << e.min_value << ".." << e.max_value << ")\n";
  os << "\nexit codes: 0 all checks passed, 1 a check failed, 2 usage error,\n"
     << "            77 skipped (no suitable GPU, or no code for it in this binary)\n";
  return os.str();
}

}  // namespace tut
