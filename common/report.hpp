/// @file report.hpp
/// @brief The one result table every chapter prints, and its JSON twin (host only).
///
/// Table columns: variant | blocks/SM | median ms | min ms | GB/s (or GFLOP/s) | % of ceiling |
/// vs v0 | check
/// The header names the GPU, compute capability, SM count, L2 size and seed, so a pasted
/// table always says where it came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_state.hpp"

namespace tut {

/// @brief What the harness knows about the GPU (filled by query_device()).
struct DeviceSummary {
  std::string name = "none";
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  long long l2_bytes = 0;
  long long smem_optin_per_block = 0;  ///< max dynamic shared memory a block may opt in to
  long long smem_per_sm = 0;
  int max_threads_per_sm = 0;
  long long global_mem_bytes = 0;
  int driver_version = 0;
  int runtime_version = 0;
  std::string pci_bus_id;  ///< e.g. "0000:19:00.0": how NVML finds this GPU (gpu_state.hpp)
};

/// @brief One variant's row.
struct ResultRow {
  std::string key;            ///< variant key (CLI name)
  std::string name;           ///< display name
  bool timed = false;         ///< false in --check-only runs
  double median_ms = 0;        ///< per launch
  double min_ms = 0;           ///< per launch
  int launches_per_sample = 1;  ///< back-to-back launches timed between one pair of events
  int blocks_per_sm = 0;       ///< resident blocks per SM of the timed grid; 0: not known
  double rate = 0;            ///< GB/s or GFLOP/s from the median
  double pct_of_ceiling = 0;  ///< speed as a % of the ceiling's: the median over `pairs`
                              ///< alternating pairs (this row, then the ceiling), or rate /
                              ///< ceiling rate * 100 for the ceiling's own row
  double pct_p25 = 0;         ///< the pairs' 25th percentile of that %
  double pct_p75 = 0;         ///< their 75th percentile
  int pairs = 0;              ///< alternating pairs timed with the ceiling; 0: timed alone
  GpuState gpu_start;         ///< NVML reading at the start of this row's timed block
  GpuState gpu_end;           ///< ... and at its end
  double vs_v0 = 0;           ///< v0 median / this median (x faster than v0)
  bool passed = false;        ///< every check of this variant passed
  bool later_checks_skipped = false;  ///< failed once, so its later sizes were not checked
  bool negative = false;      ///< deliberately broken: expected to FAIL
  bool skipped = false;       ///< not run: this GPU lacks what the variant needs
  bool is_ceiling = false;    ///< this row is the yardstick (e.g. cuBLAS), not a lesson variant
  std::string check_detail;   ///< first line of the verification summary
};

/// @brief Everything one chapter run reports.
/// @brief The commit this program was built from: `git rev-parse HEAD` at configure time, with
/// a "-dirty" suffix when the work tree had changes, or "unknown" outside a git checkout.
std::string build_commit();

/// @brief Which call of a GPU job ran this program: the environment variable TUTORIAL_RUN_CALL
/// (tools/gpu_check.sh sets it for each call), or "" when it is unset.
std::string run_call();

struct Report {
  std::string chapter;        ///< e.g. "ch01_sync_shared_loads"
  std::string commit = build_commit();  ///< the source of the binary that measured this
  std::string call = run_call();        ///< the GPU job's call that ran it ("" when unknown)
  std::string title;
  std::string metric = "GB/s";
  std::string size_text;      ///< e.g. "1.00 GiB per buffer"
  std::uint64_t seed = 0;
  bool check_only = false;
  DeviceSummary device;
  std::string ceiling_name;   ///< e.g. "cudaMemcpyAsync D2D"
  double ceiling_rate = 0;    ///< in `metric` units, measured in the same run
  double ceiling_ms = 0;
  std::string gpu_state;      ///< GpuStateLog::summary() over every timed block of the run
  std::string clock_limits;   ///< clock-limit reasons seen in any reading ("none")
  int idle_before_timing_ms = 0;  ///< how long the GPU idled before each timed block
  std::string tour_lesson;    ///< key of the row that makes the chapter's point (the tour's)
  std::string tour_baseline;  ///< key of the row it is compared with, in the same regime
  std::vector<ResultRow> rows;
};

/// @brief "GPU: NVIDIA H200 | CC 9.0 | 132 SMs | L2 60.0 MiB | seed 42" and the ceiling line.
std::string format_header(const Report& report);

/// @brief The aligned table, one row per variant, with a header rule.
std::string format_table(const Report& report);

/// @brief The whole report as a JSON object (stable keys, for docs and plots).
std::string to_json(const Report& report);

/// @brief "PASS", "FAIL", "SKIP", "FAIL (expected)" or "PASS (BROKEN CHECK)" for a row.
std::string check_label(const ResultRow& row);

/// @brief Human-readable bytes: "512 B", "64.0 KiB", "1.00 GiB".
std::string format_bytes(double bytes);

/// @brief The one JSON writer of the tutorial (tables and sweeps): write @p text to a temporary
///        file in the directory of @p path, then rename it over @p path, so a run that stops
///        half way never leaves a truncated file and never destroys the previous one.
/// @return false, with a message on stderr, when the file cannot be written
bool write_json_file(const std::string& path, const std::string& text);

/// @brief Whether write_json_file(@p path, ...) can succeed: @p path is not a directory, its
///        folder exists and a file can be created in it. Checked before any GPU work (--json
///        and --timeline are usage errors then). The probe creates a file of its own (never
///        opening an existing one) and removes only that: no existing file is touched.
/// @param path  the --json or --timeline path
/// @param error set to a one-line reason when not
bool json_path_writable(const std::string& path, std::string& error);

/// @brief Where a chapter's sweep JSON goes for the chapter's --json @p json_path:
///        `<json_path>.sweep.json` (plot scripts and the results import look for it there).
std::string sweep_json_path(const std::string& json_path);

/// @brief Write a sweep's JSON to sweep_json_path(@p json_path) with write_json_file(), and
///        say where. Does nothing when @p json_path is empty (no --json given).
/// @return false, with a message on stderr, when the file cannot be written
bool write_sweep_json(const std::string& json_path, const std::string& text);

/// @brief Escape a string for a JSON string literal.
std::string json_escape(const std::string& text);

/// @brief One row of a sweep: its fields in the order they are added.
/// @code
///   json.add(tut::SweepRow().integer("stages", 4).num("gbs", rate).passed(ok));
/// @endcode
class SweepRow {
 public:
  SweepRow& num(const std::string& key, double value);
  SweepRow& integer(const std::string& key, long long value);
  SweepRow& text(const std::string& key, const std::string& value);
  SweepRow& passed(bool ok) { return flag("passed", ok); }
  SweepRow& flag(const std::string& key, bool value);
  const std::string& fields() const { return fields_; }

 private:
  void key(const std::string& name);
  std::string fields_;
};

/// @brief A sweep's JSON, built the same way by every chapter: {"chapter": id, then top-level
///        numbers and arrays of rows in the order they were added}. Write it with
///        write_sweep_json(json_path, sweep.str()).
class SweepJson {
 public:
  explicit SweepJson(const std::string& chapter_id);
  /// @brief A top-level number, e.g. the memcpy ceiling the sweep was measured against.
  SweepJson& num(const std::string& key, double value);
  SweepJson& integer(const std::string& key, long long value);
  /// @brief A top-level string, e.g. the GPU's name.
  SweepJson& text(const std::string& key, const std::string& value);
  /// @brief Start the array @p name; add() appends rows to the array started last.
  SweepJson& array(const std::string& name);
  SweepJson& add(const SweepRow& row);
  std::string str() const;

 private:
  void close_array();
  SweepJson& field(const SweepRow& one);
  std::string text_;
  bool in_array_ = false;
  bool first_row_ = true;
};

}  // namespace tut
