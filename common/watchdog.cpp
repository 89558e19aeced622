#include "watchdog.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace tut {

namespace {

struct Subject {
  std::string chapter;
  std::string variant;
  std::string doing;
};

Subject& subject() {
  static Subject s;
  return s;
}

// "10 s", "2.5 s": the limit as the reader set it.
std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g s", seconds);
  return buf;
}

}  // namespace

bool parse_watchdog_seconds(const char* text, double& seconds, std::string& error) {
  if (text == nullptr) {
    seconds = kWatchdogDefaultSeconds;
    return true;
  }
  const std::string value(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || errno != 0 || !std::isfinite(v) ||
      v < 0) {
    error = "TUTORIAL_WATCHDOG_S=" + value +
            ": not a number of seconds (> 0; 0 switches the watchdog off)";
    return false;
  }
  seconds = v;
  return true;
}

double watchdog_seconds() {
  static const double limit = [] {
    double s = kWatchdogDefaultSeconds;
    std::string error;
    if (!parse_watchdog_seconds(std::getenv("TUTORIAL_WATCHDOG_S"), s, error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      std::exit(2);
    }
    return s;
  }();
  return limit;
}

WatchdogScope::WatchdogScope(std::string variant, std::string doing)
    : previous_variant_(std::move(subject().variant)), previous_doing_(std::move(subject().doing)) {
  subject().variant = std::move(variant);
  subject().doing = std::move(doing);
}

WatchdogScope::~WatchdogScope() {
  subject().variant = std::move(previous_variant_);
  subject().doing = std::move(previous_doing_);
}

void WatchdogScope::set_chapter(std::string chapter_id) { subject().chapter = std::move(chapter_id); }

std::string WatchdogScope::message(double seconds) {
  const Subject& s = subject();
  return watchdog_message(s.chapter, s.variant, s.doing, seconds);
}

std::string watchdog_message(const std::string& chapter, const std::string& variant,
                             const std::string& doing, double seconds) {
  std::string line = chapter.empty() ? "" : chapter + ": ";
  line += variant.empty() ? "the launch" : "variant " + variant;
  line += " did not finish within " + seconds_text(seconds);
  if (!doing.empty()) line += " (" + doing + ")";
  line += ": a wait that never completes (inside cuda::pipeline, or an unbounded mbarrier wait);"
          " exit 1";
  return line;
}

void watchdog_fire(double seconds) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", WatchdogScope::message(seconds).c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

}  // namespace tut
