/// @file harness.cuh
/// @brief run_chapter(): the driver every chapter's main() calls.
///
/// A chapter supplies a Problem type (its buffers, its CPU reference and its check) and a
/// registry of variants (kernels). The harness does the rest, identically for every chapter:
///   1. parse the common CLI (exit 2 on bad input), answer --help and --list without a GPU;
///   2. gate on the GPU (exit 77 with the reason when there is none or it is too old);
///   3. skip, naming what is missing, every variant that needs an architecture the binary has
///      no code for on this GPU (arch_probe.cuh); exit 77 when nothing is left;
///   4. for each check size: build the Problem, then for each variant poison the output and
///      shared memory, launch, wait for it (at most the watchdog's limit, watchdog.cuh) and
///      verify against the CPU reference; then the lap
///      check: every variant once more at the largest check size with the grid capped at two
///      blocks, so every ring wraps around several times;
///   5. unless --check-only: at the full size, verify once more, measure the ceiling
///      (device-to-device cudaMemcpyAsync of the same byte count), time every variant
///      (warm-ups, then --repeats event-timed runs; median and min), print the table and
///      write JSON;
///   6. exit 0 when every check passed, 1 otherwise.
///
/// A launch or timed batch that does not finish within the watchdog's limit (10 s, or
/// TUTORIAL_WATCHDOG_S) ends the run at once with one line naming the chapter, the variant and
/// what it was doing, and exit code 1: see watchdog.hpp. In a TUTORIAL_PERTURB build
/// (perturb.cuh) every checked launch is preceded by tut::set_perturb_seed() with a seed made
/// from --seed, so a failing perturbed run is reproduced by the same --seed.
///
/// The Problem type is duck-typed:
/// @code
/// struct Problem {
///   explicit Problem(const tut::RunConfig& cfg);  // allocate, fill from cfg.seed, reference
///   void poison(cudaStream_t s);                  // overwrite every output with kPoisonByte
///   tut::VerifyResult verify(cudaStream_t s, int reference);  // copy back, compare with
///                                                 // CPU reference number `reference`
///   double work() const;                          // bytes moved (read + written) or flops
///   std::string describe() const;                 // e.g. "256 MiB per buffer"
/// };
/// @endcode
#pragma once

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX3: ranges that Nsight tools can filter on

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "arch_probe.cuh"
#include "cli.hpp"
#include "cuda_check.cuh"
#include "device_info.cuh"
#include "fill.hpp"
#include "gpu_state.hpp"
#include "launch.cuh"
#include "perturb.cuh"
#include "report.hpp"
#include "shared_scrub.cuh"
#include "stats.hpp"
#include "timer.cuh"
#include "verify.hpp"
#include "watchdog.cuh"

namespace tut {

/// @brief Exit code when every check passed.
inline constexpr int kExitPass = 0;
/// @brief Exit code when any check failed.
inline constexpr int kExitFail = 1;

/// @brief The fewest alternating pairs (a row, then its ceiling) behind a "% of ceiling":
///        --repeats when larger. Twenty give the median and the quartiles some footing.
inline constexpr int kMinAlternatingPairs = 20;

/// @brief What a Problem is built from.
struct RunConfig {
  std::uint64_t size = 0;  ///< in the chapter's size unit (see Chapter::size_help)
  std::uint64_t seed = 0;  ///< input seed; the same seed gives the same inputs
  bool check_only = false;
  DeviceSummary device;
  std::map<std::string, long long> extras;  ///< chapter options (ExtraOption), by name
  int warmup = 3;  ///< untimed launches before every timed block (--warmup), table and sweep alike

  /// @brief Value of a chapter option; aborts on a name the chapter did not declare.
  long long extra(const std::string& name) const {
    const auto it = extras.find(name);
    if (it == extras.end()) {
      std::fprintf(stderr, "internal error: option --%s was not declared\n", name.c_str());
      std::exit(kExitFail);
    }
    return it->second;
  }
};

/// @brief One entry of a chapter's variant registry.
template <class Problem>
struct Variant {
  std::string key;          ///< CLI name, no spaces: "v1_async"
  std::string name;         ///< table name: "v1 memcpy_async + barrier"
  std::string description;  ///< one line for --list
  std::function<void(Problem&, cudaStream_t)> launch;  ///< enqueue once on the stream
  bool negative = false;    ///< deliberately broken; runs only when asked for; must FAIL
  /// Deliberately broken with a race that the GPU usually orders by luck (a slot released
  /// before its last read, a trailing barrier dropped), so only the TUTORIAL_PERTURB
  /// build's delays make it fail reliably. Runs only with `--variant=perturb-negative` (or
  /// its key); CTest `<chapter>_perturb_negatives` (label `perturb`, TUTORIAL_PERTURB=ON
  /// builds only) requires each to FAIL. Set this instead of `negative`, never both: in a
  /// normal build it may pass, so `<chapter>_negatives` must not run it.
  bool perturb_negative = false;
  bool is_ceiling = false;  ///< this variant is the yardstick (e.g. cuBLAS) for "% of ceiling"
  int min_cc = 0;           ///< e.g. 90 for a Hopper-only variant in an sm_80 chapter
  /// Architectures whose architecture-specific image (the "a" target) alone holds this
  /// variant's instructions: {90} for wgmma (sm_90a only). Empty: any image of min_cc or newer.
  /// The variant is skipped, naming the target, when the code this GPU runs is not one of them.
  std::vector<int> arch_specific;
  int reference = 0;        ///< which CPU reference the output must match, for chapters whose
                            ///< variants compute different things (most have only 0)
};

/// @brief The one way chapters build their variant registry, in reading order (v0 first):
/// @code
///   tut::VariantList<Problem> v;
///   v.add("v0_sync", "v0 sync", "chapter 01's kernel", [](Problem& p, cudaStream_t s) {...});
///   v.add("v9_bug", "v9 BUG: ...", "...", launch).negative = true;   // optional fields by name
///   v.add("v10_early_release", "v10 BUG: ...", "...", launch).perturb_negative = true;
///   return v.list;
/// @endcode
template <class Problem>
struct VariantList {
  /// @brief Append a variant; returns it so optional fields (negative, perturb_negative,
  ///        min_cc, reference, is_ceiling) can be set by name.
  Variant<Problem>& add(std::string key, std::string name, std::string description,
                        std::function<void(Problem&, cudaStream_t)> launch) {
    list.push_back(Variant<Problem>{});
    Variant<Problem>& v = list.back();
    v.key = std::move(key);
    v.name = std::move(name);
    v.description = std::move(description);
    v.launch = std::move(launch);
    return v;
  }
  /// @brief Append one kernel's low/full occupancy twins, in this order: `<key>_low`
  ///        ("<name>, low occ", "<what> (--blocks-per-sm)"), launched at p.blocks_per_sm()
  ///        blocks per SM, then `<key>_full` ("<name>, full occ", "<what> (full occupancy)"),
  ///        launched with 0 (as many blocks per SM as fit). Both rows check against CPU
  ///        reference @p reference.
  /// @param key the rows' key stem (the rows are `<key>_low` and `<key>_full`)
  /// @param name the table name stem (", low occ" / ", full occ" is appended)
  /// @param what the description stem (the occupancy is appended)
  /// @param launch `void(Problem&, cudaStream_t, int blocks_per_sm)`
  /// @param reference the CPU reference both rows check against
  template <class LaunchAtBlocksPerSm>
  void add_low_and_full(const std::string& key, const std::string& name, const std::string& what,
                        LaunchAtBlocksPerSm launch, int reference = 0) {
    add(key + "_low", name + ", low occ", what + " (--blocks-per-sm)",
        [launch](Problem& p, cudaStream_t s) { launch(p, s, p.blocks_per_sm()); })
        .reference = reference;
    add(key + "_full", name + ", full occ", what + " (full occupancy)",
        [launch](Problem& p, cudaStream_t s) { launch(p, s, 0); })
        .reference = reference;
  }
  std::vector<Variant<Problem>> list;  ///< the registry, in the order added
};

/// @brief A chapter's description: everything run_chapter() needs besides the Problem type.
///
/// Every chapter builds one in its `chapter()` function (the last one in its main.cu) with the
/// constructor, which takes what every chapter names (its id, variants, the tour's pair and its
/// title), then sets only its own fields (sizes, options, sweeps, timeline) by name; main() is
/// the one line `return tut::run_chapter(argc, argv, chNN::chapter());`.
template <class Problem>
struct Chapter {
  /// An empty description, filled field by field (the harness's own tests build fake ones).
  Chapter() = default;
  /// The fields every chapter sets: the executable @p name, its @p registry of variants in
  /// reading order, the tour's pair (the key of the lesson's variant, @p lesson, and of the
  /// baseline it is compared with, @p baseline) and the one-line @p heading printed first.
  Chapter(std::string name, std::vector<Variant<Problem>> registry, std::string lesson,
          std::string baseline, std::string heading)
      : id(std::move(name)),
        title(std::move(heading)),
        variants(std::move(registry)),
        tour_lesson(std::move(lesson)),
        tour_baseline(std::move(baseline)) {}

  std::string id;     ///< executable name, e.g. "ch01_sync_shared_loads"
  std::string title;  ///< one line, printed first
  int min_cc_major = 8;
  int min_cc_minor = 0;
  /// As Variant::arch_specific, for every variant of the chapter.
  std::vector<int> arch_specific;
  /// What --size means, its unit and default; --help shows it first. Start it with "bytes"
  /// when --size is a byte count (messages then print sizes in KiB/MiB/GiB); otherwise say
  /// what it counts, e.g. "matrix side N for square M = N = K (default 4096)".
  std::string size_help;
  std::uint64_t size_multiple = 1;                   ///< --size must be a multiple of this
  std::uint64_t max_size = std::uint64_t{1} << 40;   ///< largest --size the kernels index
  std::function<std::uint64_t(const DeviceSummary&)> default_size;
  std::vector<std::uint64_t> check_sizes;            ///< small and awkward sizes
  /// GPU memory a run at a size needs: the Problem's buffers plus, with memcpy_ceiling, the
  /// ceiling's source and destination (work()/2 bytes each), which exist at the same time.
  std::function<std::uint64_t(std::uint64_t)> device_bytes;
  std::string metric = "GB/s";                       ///< or "GFLOP/s"
  bool memcpy_ceiling = true;  ///< measure cudaMemcpyAsync D2D of work()/2 bytes as ceiling
  std::vector<ExtraOption> extra_options;
  std::vector<Variant<Problem>> variants;
  /// The chapter's point, for the tour summary: the key of the lesson's variant in the regime
  /// the chapter teaches (e.g. 1 block/SM, or the stage count that matters) and the key of the
  /// baseline it is compared with in that same regime.
  std::string tour_lesson;
  std::string tour_baseline;
  /// Optional: extra measurements printed after the table in full runs (a size or stages
  /// sweep). Receives the run's config (full size, seed, options), its stream and the path
  /// of --json (empty when not given) so it can write its own JSON beside it. Returns false
  /// when one of its own checks failed.
  std::function<bool(const RunConfig&, cudaStream_t, const std::string& json_path)> after_table;
  /// Optional: --timeline=PATH. Launches the chapter's traced kernels (timeline.cuh) on a small
  /// problem, verifies their output, prints the cost of tracing and writes the Chrome trace to
  /// PATH. Called after the table, in full and --check-only runs. Returns false when a check
  /// failed or the file could not be written. A chapter without it rejects --timeline (exit 2).
  std::function<bool(const RunConfig&, cudaStream_t, const std::string& path)> timeline;
};

/// @brief The size settings of a chapter that streams one buffer of --size bytes into another:
///        --size in bytes, a multiple of @p multiple, at most 16 GiB, by default 1 GiB (rounded
///        down to the multiple). The GPU holds the input, the output and the memcpy ceiling's
///        two buffers of the same size, plus 64 MiB of headroom. @p note follows the multiple in
///        --help, e.g. " (4 particles of 24 B)".
template <class Problem>
void set_buffer_sizes(Chapter<Problem>& ch, std::uint64_t multiple = 16,
                      const std::string& note = "") {
  const bool exact = (std::uint64_t{1} << 30) % multiple == 0;
  ch.size_help = "bytes per buffer, a multiple of " + std::to_string(multiple) + note +
                 (exact ? " (default 1G)" : " (default ~1G)");
  ch.size_multiple = multiple;
  ch.max_size = std::uint64_t{16} << 30;
  ch.default_size = [multiple](const DeviceSummary&) {
    return (std::uint64_t{1} << 30) / multiple * multiple;
  };
  ch.device_bytes = [](std::uint64_t size) { return 4 * size + (std::uint64_t{64} << 20); };
}

/// @brief The --blocks-per-sm option (default 1, the regime where only the copies a block keeps
///        in flight hide the latency), and its value in a run.
inline ExtraOption blocks_per_sm_option(const std::string& help, long long max_blocks = 32) {
  return ExtraOption{"blocks-per-sm", help, 1, 1, max_blocks};
}
inline int blocks_per_sm(const RunConfig& cfg) {
  return static_cast<int>(cfg.extra("blocks-per-sm"));
}

/// @brief Why chapter @p ch cannot run on a GPU of compute capability @p device_cc (90 for 9.0)
///        from image @p image ("" when it can): the first gate of run_chapter().
template <class Problem>
std::string why_chapter_cannot_run_on(const Chapter<Problem>& ch, int device_cc,
                                      const LoadedImage& image) {
  const int chapter_cc = ch.min_cc_major * 10 + ch.min_cc_minor;
  if (device_cc < chapter_cc)
    return "needs a GPU of compute capability " + std::to_string(ch.min_cc_major) + "." +
           std::to_string(ch.min_cc_minor) + " or newer";
  return missing_code_reason(image, chapter_cc, ch.arch_specific);
}

/// @brief Why @p v cannot run on a GPU of compute capability @p device_cc from image @p image
///        ("" when it can): a compute capability below v.min_cc, no code for v.min_cc, or not
///        the architecture-specific image v.arch_specific asks for.
template <class Problem>
std::string why_variant_cannot_run_on(const Variant<Problem>& v, int device_cc,
                                      const LoadedImage& image) {
  if (device_cc < v.min_cc)
    return "needs compute capability " + std::to_string(v.min_cc / 10) + "." +
           std::to_string(v.min_cc % 10);
  return missing_code_reason(image, v.min_cc, v.arch_specific);
}

/// @brief Why @p v cannot run on @p device from this binary ("" when it can), for the image the
///        driver loaded (arch_probe.cuh). Sweeps use it to skip what the table skips.
template <class Problem>
std::string why_variant_cannot_run(const Variant<Problem>& v, const DeviceSummary& device) {
  return why_variant_cannot_run_on(v, device.cc_major * 10 + device.cc_minor, loaded_image());
}

namespace detail {

/// The TUTORIAL_PERTURB build's delay seed for this run (never 0, which means "no delays"):
/// run_chapter() sets it from --seed; tests that call run_and_verify() directly get a fixed one.
inline std::uint32_t& perturb_seed_of_run() {
  static std::uint32_t seed = 0x2545F491u;
  return seed;
}

/// Fold a 64-bit --seed into the 32-bit perturbation seed, never 0.
inline std::uint32_t perturb_seed_from(std::uint64_t seed) {
  const auto folded = static_cast<std::uint32_t>(seed ^ (seed >> 32));
  return folded == 0 ? 1u : folded;
}

}  // namespace detail

/// @brief Poison the output and every SM's shared memory, launch @p v once, wait for it
///        (bounded: wait_stream_or_exit()), verify against the CPU reference.
/// @param problem the chapter's buffers and CPU reference
/// @param v the variant to launch
/// @param stream the stream it runs on
/// @param doing what the watchdog says the variant was doing if it never finishes
///        (e.g. "checked launch, size 4096")
/// @note  The poison is what makes the check honest: a kernel that writes nothing (or not
///        everything) cannot pass on a previous run's output, and a kernel that reads a shared
///        memory tile it never filled cannot pass on the tile the previous variant left there.
///        Sweeps in `after_table` use this too, so every number they print comes from a
///        checked kernel.
template <class Problem>
VerifyResult run_and_verify(Problem& problem, const Variant<Problem>& v, cudaStream_t stream,
                            const std::string& doing = "checked launch") {
  const WatchdogScope named(v.key, doing);
  problem.poison(stream);
  scrub_shared_memory(stream);
  set_perturb_seed(detail::perturb_seed_of_run());  // a no-op unless TUTORIAL_PERTURB
  v.launch(problem, stream);
  CUDA_CHECK_LAST_LAUNCH();
  wait_stream_or_exit(stream);
  return problem.verify(stream, v.reference);
}

/// @brief Time @p v on @p stream: @p warmup launches, then the median and minimum of
///        @p repeats samples per launch, each launch checked for launch errors (see
///        time_on_stream(): short launches are timed many back to back per sample).
template <class Problem>
Timing time_variant(Problem& problem, const Variant<Problem>& v, cudaStream_t stream, int warmup,
                    int repeats) {
  const WatchdogScope named(v.key, "timed runs");
  return time_on_stream(stream, warmup, repeats, [&](cudaStream_t s) {
    v.launch(problem, s);
    CUDA_CHECK_LAST_LAUNCH();
  });
}

namespace detail {

/// In a student's exercise build (tutorial_add_exercise defines TUTORIAL_EXERCISE="NN"), the
/// line that follows a SKIP: the student's code was not run, and the check that needs no GPU.
/// Empty in the chapters themselves.
inline const char* exercise_not_run_note() {
#ifdef TUTORIAL_EXERCISE
  return "your exercise code was NOT run, so nothing checked it; without a GPU, "
         "`python3 tools/exercise.py check " TUTORIAL_EXERCISE "` holds the instructions it "
         "compiles to against the chapter's rules\n";
#else
  return "";
#endif
}

/// Resolve --variant to registry indices. Empty vector + error text on an unknown key.
template <class Problem>
std::vector<std::size_t> select_variants(const Chapter<Problem>& ch, const std::string& spec,
                                         std::string& error) {
  std::vector<std::size_t> picked;
  for (const std::string& key : split_commas(spec)) {
    bool found = false;
    for (std::size_t i = 0; i < ch.variants.size(); ++i) {
      const Variant<Problem>& v = ch.variants[i];
      const bool broken = v.negative || v.perturb_negative;
      const bool match = key == v.key || (key == "all" && !broken) ||
                         (key == "negative" && v.negative && !v.perturb_negative) ||
                         (key == "perturb-negative" && v.perturb_negative);
      if (!match) continue;
      found = true;
      bool dup = false;
      for (std::size_t p : picked) dup = dup || p == i;
      if (!dup) picked.push_back(i);
    }
    if (!found) {
      error = "--variant: unknown variant '" + key + "'; valid keys:";
      for (const auto& v : ch.variants) error += " " + v.key;
      error += ", or all, negative, perturb-negative";
      return {};
    }
  }
  if (picked.empty()) error = "--variant: nothing selected";
  return picked;
}

/// A --size value in the chapter's unit: bytes with a binary unit ("16 B", "2.00 GiB") when
/// size_help starts with "bytes", else the plain number (a matrix side).
template <class Problem>
std::string size_text(const Chapter<Problem>& ch, std::uint64_t value) {
  if (ch.size_help.rfind("bytes", 0) != 0) return std::to_string(value);
  if (value >= 1024 && value % 1024 == 0) {  // exact multiples read best without decimals
    const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    int u = -1;
    while (value % 1024 == 0 && value >= 1024 && u < 3) {
      value /= 1024;
      ++u;
    }
    return std::to_string(value) + " " + units[u];
  }
  return value < 1024 ? std::to_string(value) + " B" : format_bytes(double(value));
}

/// A JSON string literal of @p text.
inline std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

inline std::string json_int_list(const std::vector<int>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

/// --gates: for every target (e.g. "120a"), what run_chapter() decides for each variant when
/// the binary is compiled for that target and runs on a GPU of that architecture: "runs", or
/// "skip: <the message the run prints>". The same gate functions as a run, asked about the
/// image such a build would load (image_for_target), so no GPU is needed. tools/arch_matrix.py
/// builds docs/arch-matrix.md from it.
template <class Problem>
std::string gates_json(const Chapter<Problem>& ch, const std::vector<std::string>& targets) {
  std::string out = "{\n  \"chapter\": " + json_quote(ch.id) + ",\n  \"min_cc\": " +
                    std::to_string(ch.min_cc_major * 10 + ch.min_cc_minor) +
                    ",\n  \"arch_specific\": " + json_int_list(ch.arch_specific) +
#ifdef TUTORIAL_BUILT_ARCHS
                    ",\n  \"built_archs\": " + json_quote(TUTORIAL_BUILT_ARCHS) +
#endif
                    ",\n  \"variants\": [";
  for (std::size_t i = 0; i < ch.variants.size(); ++i) {
    const Variant<Problem>& v = ch.variants[i];
    out += std::string(i ? "," : "") + "\n    {\"key\": " + json_quote(v.key) +
           ", \"name\": " + json_quote(v.name) +
           ", \"negative\": " + (v.negative ? "true" : "false") +
           ", \"min_cc\": " + std::to_string(v.min_cc) +
           ", \"arch_specific\": " + json_int_list(v.arch_specific) + ", \"on\": {";
    for (std::size_t t = 0; t < targets.size(); ++t) {
      const LoadedImage image = image_for_target(targets[t]);
      std::string why = why_chapter_cannot_run_on(ch, image.ptx_arch, image);
      if (why.empty()) why = why_variant_cannot_run_on(v, image.ptx_arch, image);
      out += std::string(t ? ", " : "") + json_quote(targets[t]) + ": " +
             json_quote(why.empty() ? "runs" : "skip: " + why);
    }
    out += "}}";
  }
  return out + "\n  ]\n}\n";
}

/// The memcpy ceiling's buffers: a device-to-device cudaMemcpyAsync of the problem's bytes,
/// timed in alternation with each variant (time_all in run_chapter).
struct MemcpyCeiling {
  void* src = nullptr;
  void* dst = nullptr;
  std::uint64_t bytes = 0;
  void allocate(std::uint64_t n, cudaStream_t stream) {
    bytes = n;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMalloc(&dst, bytes));
    CUDA_CHECK(cudaMemsetAsync(src, 0x5A, bytes, stream));
  }
  void launch(cudaStream_t s) const {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  }
  MemcpyCeiling() = default;
  MemcpyCeiling(const MemcpyCeiling&) = delete;
  MemcpyCeiling& operator=(const MemcpyCeiling&) = delete;
  ~MemcpyCeiling() {
    if (src) cudaFree(src);
    if (dst) cudaFree(dst);
  }
};

}  // namespace detail

/// @brief Parse the command line, run the selected variants, print the table, return the
///        exit code (0 pass, 1 fail, 2 usage, 77 skip). main() returns what this returns.
template <class Problem>
int run_chapter(int argc, char** argv, const Chapter<Problem>& ch) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const ParseOutcome parsed = parse_cli(args, ch.extra_options);
  if (!parsed.ok) {
    std::fprintf(stderr, "%s\n", usage_error(parsed.error).c_str());
    return kExitUsage;
  }
  const Options& opt = parsed.options;
  if (opt.help) {
    std::printf("%s", usage_text(ch.id, ch.title, ch.size_help, ch.extra_options).c_str());
    return kExitPass;
  }
  if (opt.list) {
    for (const auto& v : ch.variants)
      std::printf("%-24s %s%s%s\n", v.key.c_str(), v.name.c_str(),
                  v.perturb_negative ? "  [perturb negative: must FAIL in a TUTORIAL_PERTURB build]"
                  : v.negative       ? "  [negative: must FAIL]"
                                     : "",
                  v.description.empty() ? "" : ("\n                         " + v.description).c_str());
    return kExitPass;
  }
  if (!opt.gates.empty()) {
    std::printf("%s", detail::gates_json(ch, split_commas(opt.gates)).c_str());
    return kExitPass;
  }
  watchdog_seconds();  // a bad TUTORIAL_WATCHDOG_S is a usage error (exit 2), before any GPU work
  std::string error;
  const std::vector<std::size_t> selected = detail::select_variants(ch, opt.variant, error);
  if (selected.empty()) {
    std::fprintf(stderr, "%s\n", usage_error(error).c_str());
    return kExitUsage;
  }
  if (opt.size) {
    if (*opt.size % ch.size_multiple != 0) {
      std::fprintf(stderr, "%s\n",
                   usage_error("--size: " + detail::size_text(ch, *opt.size) +
                               " is not a multiple of " + detail::size_text(ch, ch.size_multiple))
                       .c_str());
      return kExitUsage;
    }
    if (*opt.size > ch.max_size) {
      std::fprintf(stderr, "%s\n",
                   usage_error("--size: " + detail::size_text(ch, *opt.size) +
                               " is larger than this chapter supports, at most " +
                               detail::size_text(ch, ch.max_size))
                       .c_str());
      return kExitUsage;
    }
  }
  if (!opt.timeline_path.empty()) {
    if (!ch.timeline) {
      std::fprintf(stderr, "%s\n",
                   usage_error("--timeline: this chapter has no in-kernel timeline").c_str());
      return kExitUsage;
    }
    std::string why;  // fail now, not after a long run; the probe touches no existing file
    if (!json_path_writable(opt.timeline_path, why)) {
      std::fprintf(stderr, "%s\n", usage_error("--timeline: " + why).c_str());
      return kExitUsage;
    }
  }
  if (!opt.json_path.empty()) {  // fail now, not after a long run; the file itself is
    std::string why;               // replaced only at the end, and only by a passing run
    if (!json_path_writable(opt.json_path, why)) {
      std::fprintf(stderr, "%s\n", usage_error("--json: " + why).c_str());
      return kExitUsage;
    }
  }

  Report report;
  report.seed = opt.seed ? *opt.seed : fresh_seed();  // the run's options first,
  report.check_only = opt.check_only;
  report.chapter = ch.id;                              // then what the chapter says of itself
  report.title = ch.title;
  report.metric = ch.metric;
  report.tour_lesson = ch.tour_lesson;
  report.tour_baseline = ch.tour_baseline;
#ifdef TUTORIAL_EXERCISE  // a student's copy (tutorial_add_exercise): its skip says what it means
  if (const std::string why = gpu_missing_reason(ch.min_cc_major, ch.min_cc_minor); !why.empty()) {
    std::printf("SKIP: %s exercise needs a GPU of compute capability %d.%d or newer: %s\n%s",
                ch.id.c_str(), ch.min_cc_major, ch.min_cc_minor, why.c_str(),
                detail::exercise_not_run_note());
    return kExitSkip;
  }
#endif
  report.device = require_cc(ch.min_cc_major, ch.min_cc_minor, ch.id);  // exits 77 if unmet
  // The binary must hold code for this GPU, compiled for at least the chapter's minimum
  // architecture; otherwise its kernels would run from the wrong (or no) image.
  const int chapter_cc = ch.min_cc_major * 10 + ch.min_cc_minor;
  if (const std::string why = missing_arch_reason(chapter_cc, ch.arch_specific); !why.empty()) {
    std::printf("SKIP: %s on %s (compute capability %d.%d): %s\n%s", ch.id.c_str(),
                report.device.name.c_str(), report.device.cc_major, report.device.cc_minor,
                why.c_str(), detail::exercise_not_run_note());
    return kExitSkip;
  }

  RunConfig cfg{/*size, set per run below*/ 0, report.seed, opt.check_only, report.device,
                opt.extras, opt.warmup};
  const std::uint64_t main_size = opt.size ? *opt.size : ch.default_size(report.device);

  // A size the GPU cannot hold is a usage error with a clear message, not an OOM crash.
  if (!opt.check_only || opt.size) {
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::uint64_t need = ch.device_bytes(main_size);
    if (need > free_bytes) {
      std::fprintf(stderr, "%s\n",
                   usage_error("--size: " + detail::size_text(ch, main_size) + " needs " +
                               format_bytes(double(need)) + " of GPU memory; " +
                               format_bytes(double(free_bytes)) + " is free")
                       .c_str());
      return kExitUsage;
    }
  }
  std::printf("%s\nseed %llu (rerun with --seed=%llu)\n", ch.id.c_str(),
              static_cast<unsigned long long>(report.seed),
              static_cast<unsigned long long>(report.seed));
  WatchdogScope::set_chapter(ch.id);
  detail::perturb_seed_of_run() = detail::perturb_seed_from(report.seed);
  if (kPerturbBuild)
    std::printf("perturbation build: seeded delays at ordering points (delay seed %u, from "
                "--seed); its timings are not the lesson's\n",
                detail::perturb_seed_of_run());

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  std::vector<ResultRow> rows(selected.size());
  for (std::size_t r = 0; r < selected.size(); ++r) {
    const Variant<Problem>& v = ch.variants[selected[r]];
    rows[r].key = v.key;
    rows[r].name = v.name;
    rows[r].negative = v.negative || v.perturb_negative;
    if (v.perturb_negative && !kPerturbBuild)
      std::printf("note: %s is a perturbation negative: its race shows reliably only in a "
                  "-DTUTORIAL_PERTURB=ON build, so here it may pass\n",
                  v.key.c_str());
    rows[r].is_ceiling = v.is_ceiling;
    rows[r].passed = true;
    if (const std::string why = why_variant_cannot_run(v, report.device); !why.empty()) {
      rows[r].skipped = true;
      rows[r].check_detail = why;
      std::printf("skipping %s: %s\n", v.key.c_str(), why.c_str());
    }
  }
  std::size_t runnable = 0;
  for (const ResultRow& row : rows) runnable += row.skipped ? 0 : 1;
  if (runnable == 0) {
    std::printf("SKIP: %s: none of the selected variants can run on this GPU from this binary "
                "(%s)\n%s",
                ch.id.c_str(), rows.front().check_detail.c_str(), detail::exercise_not_run_note());
    CUDA_CHECK(cudaStreamDestroy(stream));
    return kExitSkip;
  }

  // Timing at the full size, every row in this run. When the chapter has a ceiling (the
  // memcpy ceiling, or a row that is one, like cuBLAS), every other row is timed against it in
  // alternation, A (the row), B (the ceiling), A, B, ...: both sides of each pair see the same
  // clocks, temperature and power, so the ratio holds even when those drift during the run,
  // and "% ceil" is the median of the pairs' ratios. The ceiling's own time is the median of
  // all its samples. NVML reads the clock and power at the start and end of each timed block.
  auto time_all = [&](Problem& problem) {
    GpuStateLog gpu_log;
    std::function<void(cudaStream_t)> ceiling_launch;
    std::size_t ceiling_row = selected.size();  // none
    detail::MemcpyCeiling memcpy_ceiling;
    if (ch.memcpy_ceiling) {
      memcpy_ceiling.allocate(static_cast<std::uint64_t>(problem.work() / 2), stream);
      ceiling_launch = [&](cudaStream_t s) { memcpy_ceiling.launch(s); };
      report.ceiling_name = "cudaMemcpyAsync D2D";
    } else {
      for (std::size_t r = 0; r < selected.size() && !ceiling_launch; ++r) {
        const Variant<Problem>& v = ch.variants[selected[r]];
        if (!v.is_ceiling || rows[r].skipped || !rows[r].passed) continue;
        ceiling_row = r;
        report.ceiling_name = v.name;
        ceiling_launch = [&problem, &v](cudaStream_t s) {
          v.launch(problem, s);
          CUDA_CHECK_LAST_LAUNCH();
        };
      }
    }
    const int pairs = std::max(opt.repeats, kMinAlternatingPairs);
    std::vector<float> ceiling_samples;
    int ceiling_per_sample = 1;
    for (std::size_t r = 0; r < selected.size(); ++r) {
      if (rows[r].skipped || !rows[r].passed) continue;  // a wrong kernel's time means nothing
      const Variant<Problem>& v = ch.variants[selected[r]];
      // One extra untimed launch inside an NVTX range named "profile": Nsight Compute can
      // profile exactly one launch per variant with --nvtx --nvtx-include "profile/"
      // (tools/profile_chapters.sh), skipping the many launches of the checks.
      // The launch also reports its grid (persistent_grid or record_grid), read here for the
      // blocks/SM column; a launcher that reports nothing leaves it unknown ("-").
      last_grid_choice() = GridChoice{};
      nvtxRangePushA("profile");
      {
        const WatchdogScope named(v.key, "untimed launch before timing");
        v.launch(problem, stream);
        CUDA_CHECK_LAST_LAUNCH();
        wait_stream_or_exit(stream);
      }
      nvtxRangePop();
      rows[r].blocks_per_sm = last_grid_choice().blocks_per_sm;
      if (r == ceiling_row) continue;  // its samples come from the pairs of the other rows
      idle_before_timing(stream);  // the same starting state as every timed block (timer.cuh)
      rows[r].gpu_start = sample_gpu_state(report.device.pci_bus_id);
      Timing t;
      if (ceiling_launch) {
        const WatchdogScope named(v.key, "timed runs, in alternation with the ceiling");
        const PairTiming pt = time_alternating(stream, opt.warmup, pairs,
                                               [&](cudaStream_t s) {
                                                 v.launch(problem, s);
                                                 CUDA_CHECK_LAST_LAUNCH();
                                               },
                                               ceiling_launch);
        t = pt.a;
        ceiling_samples.insert(ceiling_samples.end(), pt.b.samples_ms.begin(),
                               pt.b.samples_ms.end());
        ceiling_per_sample = pt.b.launches_per_sample;
        const RatioSummary ratio = summarize_ratios(pt.ratio);
        rows[r].pairs = ratio.pairs;
        rows[r].pct_of_ceiling = 100.0 * ratio.median;
        rows[r].pct_p25 = 100.0 * ratio.p25;
        rows[r].pct_p75 = 100.0 * ratio.p75;
      } else {
        t = time_variant(problem, v, stream, opt.warmup, opt.repeats);
      }
      rows[r].gpu_end = sample_gpu_state(report.device.pci_bus_id);
      gpu_log.add(rows[r].gpu_start);
      gpu_log.add(rows[r].gpu_end);
      rows[r].timed = true;
      rows[r].median_ms = t.median_ms;
      rows[r].min_ms = t.min_ms;
      rows[r].launches_per_sample = t.launches_per_sample;
      rows[r].rate = rate_per_second_1e9(problem.work(), t.median_ms);
    }
    if (ceiling_launch) {
      if (ceiling_samples.empty()) {  // no other row was timed: the ceiling alone
        const WatchdogScope named(ceiling_row < selected.size() ? rows[ceiling_row].key : "",
                                  "the ceiling's timed runs");
        idle_before_timing(stream);
        const GpuState start = sample_gpu_state(report.device.pci_bus_id);
        const Timing t = time_on_stream(stream, opt.warmup, opt.repeats, ceiling_launch);
        gpu_log.add(start);
        gpu_log.add(sample_gpu_state(report.device.pci_bus_id));
        ceiling_samples = t.samples_ms;
        ceiling_per_sample = t.launches_per_sample;
      }
      report.ceiling_ms = median(ceiling_samples);
      report.ceiling_rate = rate_per_second_1e9(problem.work(), report.ceiling_ms);
      if (ceiling_row < selected.size()) {
        ResultRow& row = rows[ceiling_row];
        row.timed = true;
        row.median_ms = report.ceiling_ms;
        row.min_ms = minimum(ceiling_samples);
        row.launches_per_sample = ceiling_per_sample;
        row.rate = report.ceiling_rate;
        row.pct_of_ceiling = 100.0;
      }
    }
    report.gpu_state = gpu_log.summary();
    report.idle_before_timing_ms = kIdleBeforeTimingMs;
    report.clock_limits = clock_reasons_text(gpu_log.limits_seen());
    // v0 is the registry's first variant: the baseline every other variant is compared with.
    const ResultRow* v0 = nullptr;
    for (const ResultRow& row : rows)
      if (row.timed && row.key == ch.variants.front().key) v0 = &row;
    for (ResultRow& row : rows) {
      if (!row.timed) continue;
      if (v0) row.vs_v0 = v0->median_ms / row.median_ms;
    }
  };

  // Checks: every variant at every small/awkward size, then (full runs) at the full size.
  auto check_all = [&](Problem& problem, std::uint64_t size, const char* what) {
    for (std::size_t r = 0; r < selected.size(); ++r) {
      if (rows[r].skipped) continue;
      const Variant<Problem>& v = ch.variants[selected[r]];
      // A variant that failed once is not checked again: its verdict is made, and a variant
      // whose waits time out would spend the bounded wait's seconds again at every size, so
      // a planted hang would take far longer than the 10 s a learner should wait for a FAIL.
      if (!rows[r].passed) {
        if (!rows[r].later_checks_skipped)
          std::printf("[%s] not checked at the remaining sizes: it has already failed\n",
                      v.key.c_str());
        rows[r].later_checks_skipped = true;
        continue;
      }
      last_grid_choice() = GridChoice{};
      const VerifyResult result =
          run_and_verify(problem, v, stream, std::string("checked launch, ") + what + std::to_string(size));
      // blocks/SM as the launcher chose it (a capped grid still records the per-SM choice);
      // full runs overwrite it from the untimed launch before timing.
      if (last_grid_choice().blocks_per_sm > 0)
        rows[r].blocks_per_sm = last_grid_choice().blocks_per_sm;
      if (result.ok()) continue;
      if (rows[r].passed)
        rows[r].check_detail = what + std::to_string(size) + ": " + result.summary();
      rows[r].passed = false;
      std::printf("[%s] %s%llu (%s): %s\n%s", v.key.c_str(), what,
                  static_cast<unsigned long long>(size), problem.describe().c_str(),
                  result.summary().c_str(), result.details().c_str());
    }
  };
  std::size_t sizes_checked = 0;
  std::uint64_t largest_check_size = 0;
  for (std::uint64_t size : ch.check_sizes)
    if (size % ch.size_multiple == 0 && size <= main_size && size > largest_check_size)
      largest_check_size = size;
  for (std::uint64_t size : ch.check_sizes) {
    if (size % ch.size_multiple != 0 || size > main_size) continue;
    cfg.size = size;
    Problem problem(cfg);
    check_all(problem, size, "size ");
    ++sizes_checked;
    if (size != largest_check_size) continue;
    // The lap check: at the check sizes a full grid gives most blocks one tile or a few, so a
    // ring never wraps around and a bug that shows only from the second lap on (a slot
    // refilled while still being read, a phase parity wrong after wrap-around, a missing proxy
    // fence) would pass. With the grid capped at two blocks, every block walks half the tiles.
    std::printf("lap check: grid capped at %u blocks, size %llu (%s)\n", kLapCheckBlocks,
                static_cast<unsigned long long>(size), problem.describe().c_str());
    const ScopedGridCap cap(kLapCheckBlocks);
    check_all(problem, size, "lap check (grid capped at 2 blocks), size ");
    largest_check_size = 0;  // once, even if the size is listed twice
  }
  if (!opt.check_only || opt.size) {
    cfg.size = main_size;
    Problem problem(cfg);
    report.size_text = problem.describe();
    check_all(problem, main_size, "size ");
    ++sizes_checked;
    if (!opt.check_only) time_all(problem);
  }
  std::printf("checked %zu variant(s) at %zu size(s)\n", selected.size(), sizes_checked);

  report.rows = rows;
  std::printf("\n%s%s", format_header(report).c_str(), format_table(report).c_str());
  bool all_passed = true;
  for (const ResultRow& row : rows) all_passed = all_passed && row.passed;
  if (!opt.check_only && ch.after_table) {
    cfg.size = main_size;
    const WatchdogScope named("", "the chapter's runs after the table");
    all_passed = ch.after_table(cfg, stream, opt.json_path) && all_passed;
  }
  if (!opt.timeline_path.empty()) {
    cfg.size = main_size;
    const WatchdogScope named("", "--timeline");
    all_passed = ch.timeline(cfg, stream, opt.timeline_path) && all_passed;
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  std::printf("RESULT: %s\n", all_passed ? "PASS" : "FAIL");
  if (!opt.json_path.empty()) {
    if (all_passed)
      all_passed = write_json_file(opt.json_path, to_json(report));
    else
      std::printf("not writing %s: a check failed (an earlier file there is left as it was)\n",
                  opt.json_path.c_str());
  }
  return all_passed ? kExitPass : kExitFail;
}

}  // namespace tut
