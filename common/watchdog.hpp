/// @file watchdog.hpp
/// @brief The host-side limit on how long a launch may run, and the one line it prints when a
///        launch runs past it. Plain C++ so the parsing and the sentence are unit-tested without
///        a GPU; common/watchdog.cuh applies it to CUDA streams and events.
///
/// Most waits of the tutorial are bounded on the device (bounded_wait.cuh: 1 s, then the
/// kernel records who waited on what and stops). Some waits cannot be bounded from the
/// kernel: the waits inside `cuda::pipeline` (chapters 04 and 07), a `setmaxnreg.inc` that
/// asks for more registers than the block's pool holds, an unbounded mbarrier loop a reader
/// writes in an exercise. Such a kernel never finishes, and a host that waited with
/// cudaStreamSynchronize() would hang with it. So the harness waits for every checked launch
/// and every timed batch with a limit (10 s, or TUTORIAL_WATCHDOG_S). When it runs out, it
/// prints one line naming the chapter, the variant and what it was doing, and ends the
/// process with exit code 1: a context whose kernel still spins cannot be recovered, only torn
/// down, which the operating system does when the process ends.
#pragma once

#include <string>

namespace tut {

/// @brief The limit when TUTORIAL_WATCHDOG_S is not set: seconds.
inline constexpr double kWatchdogDefaultSeconds = 10.0;

/// @brief Read a TUTORIAL_WATCHDOG_S value: a number of seconds, > 0; 0 switches the
///        watchdog off (for runs under tools that slow kernels down by orders of magnitude).
/// @param text   the variable's value, or nullptr when it is not set (then the default)
/// @param seconds set to the limit (0: no limit) when the value is valid
/// @param error   set to a one-line reason when it is not
/// @return true when @p text is absent or valid
bool parse_watchdog_seconds(const char* text, double& seconds, std::string& error);

/// @brief The limit of this process: TUTORIAL_WATCHDOG_S, read once. On an invalid value
///        prints "error: TUTORIAL_WATCHDOG_S=...: ..." and exits 2 (bad usage).
double watchdog_seconds();

/// @brief What the watchdog names when it fires: set by run_chapter() (the chapter id) and,
///        around each launch it waits for, the variant and what it was doing. Restores the
///        previous subject when it goes out of scope, so nested scopes name the innermost.
class WatchdogScope {
 public:
  WatchdogScope(std::string variant, std::string doing);
  ~WatchdogScope();
  WatchdogScope(const WatchdogScope&) = delete;
  WatchdogScope& operator=(const WatchdogScope&) = delete;

  /// @brief The chapter the process runs (set once by run_chapter(); empty in tests).
  static void set_chapter(std::string chapter_id);

  /// @brief The sentence for the current subject, e.g. "ch04_pipeline_prefetch: variant
  ///        v7_x did not finish within 10 s (checked launch, size 4096): a wait that never
  ///        completes (inside cuda::pipeline, or an unbounded mbarrier wait); exit 1".
  static std::string message(double seconds);

 private:
  std::string previous_variant_;
  std::string previous_doing_;
};

/// @brief The sentence itself, from its parts (WatchdogScope::message() fills them in).
/// @param chapter "" leaves the chapter out
/// @param variant "" says "the launch"
/// @param doing what the variant was doing (e.g. "checked launch, size 4096")
/// @param seconds the limit that ran out
std::string watchdog_message(const std::string& chapter, const std::string& variant,
                             const std::string& doing, double seconds);

/// @brief Print the current subject's sentence to stderr (after flushing stdout, so the line
///        comes after everything the run printed) and end the process with exit code 1 at once
///        (std::_Exit: no destructors, no atexit handlers, which would wait for the GPU).
[[noreturn]] void watchdog_fire(double seconds);

}  // namespace tut
