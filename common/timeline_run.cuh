/// @file timeline_run.cuh
/// @brief The host side every chapter's --timeline shares: one traced launch, checked like any
///        checked run and timed against the same launch untraced, and the file with the command
///        that reproduces it.
/// @code
///   tut::TraceRecorder rec({grid, lanes, 256});
///   tut::KernelTrace kt{"v1_ring_s4", "v1 ring, 4 slots", {"producer", "consumer"}, {}};
///   ok = tut::trace_checked_run(p, reference, s, rec, std::move(kt), traces,
///                               [&](cudaStream_t st, auto trace) { launch_ring<4>(..., st, trace); });
///   return tut::write_chapter_timeline(path, traces, p.cfg, "ch11_tma_bulk_copies", " --blocks-per-sm=1");
/// @endcode
/// The launch callable receives tut::TraceOff{} for the untraced launch and the recorder's
/// tut::TraceOn for the traced one, so one lambda serves both; a chapter whose traced kernel
/// has its own launcher dispatches on the type of `trace`.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "harness.cuh"
#include "shared_scrub.cuh"
#include "timeline.cuh"
#include "watchdog.cuh"

namespace tut {

/// @brief The configuration of a --timeline run: the run's own, with --size capped at
///        @p max_bytes (a trace covers a few dozen tiles per block, not a whole 1 GiB pass).
inline RunConfig timeline_config(const RunConfig& run, std::uint64_t max_bytes) {
  RunConfig cfg = run;
  cfg.size = std::min<std::uint64_t>(run.size, max_bytes);
  return cfg;
}

/// @brief For a traced run that failed: each traced lane's last @p last events (block, role,
///        event, tile, slot, microseconds after the lane opened), and whether the lane ever
///        finished. A lane whose last event is "wait begun" and that never closed is the one
///        that gave up (or would have hung) on that tile's wait.
inline void print_last_events(const KernelTrace& kt, const DecodedTrace& trace, std::size_t last = 3,
                              std::size_t max_lanes = 8) {
  std::size_t shown = 0;
  for (const LaneInfo& lane : trace.lanes) {
    if (shown++ == max_lanes) {
      std::printf("  (%zu more traced lanes in this trace)\n", trace.lanes.size() - max_lanes);
      break;
    }
    const std::string role = lane.lane < kt.lane_names.size() ? kt.lane_names[lane.lane]
                                                              : "lane " + std::to_string(lane.lane);
    std::vector<const TimedEvent*> mine;
    for (const TimedEvent& e : trace.events)
      if (e.block == lane.block && e.lane == lane.lane) mine.push_back(&e);
    std::printf("  timeline: block %u %s (SM %u) %s; last events:", lane.block, role.c_str(),
                lane.sm, lane.closed ? "finished" : "never finished");
    if (mine.empty()) std::printf(" none");
    for (std::size_t i = mine.size() > last ? mine.size() - last : 0; i < mine.size(); ++i) {
      const TimedEvent& e = *mine[i];
      std::printf(" [%s tile %u", trace_event_name(e.kind), e.tile);
      if (e.slot != kNoSlot) std::printf(" slot %u", static_cast<unsigned>(e.slot));
      std::printf(" at +%.1f us]", (e.t_ns - lane.open_ns) * 1e-3);
    }
    std::printf("\n");
  }
}

/// @brief One traced launch of a chapter kernel, checked and timed.
/// @details Poisons the output and shared memory and clears the recorder first, exactly like a
///          checked run, so a traced kernel that writes the wrong answer fails here too. Then
///          times the same launch untraced and traced (median of 20 each, on the same data) so
///          the trace says what recording it cost. Appends the trace to @p out on success.
/// @return false (with the mismatch printed) when the traced run's output is wrong
template <class Problem, class Launch>
bool trace_checked_run(Problem& p, int reference, cudaStream_t s, TraceRecorder& rec,
                       KernelTrace kt, std::vector<KernelTrace>& out, Launch&& launch) {
  const WatchdogScope named(kt.variant, "traced launch (--timeline)");
  rec.clear(s);
  p.poison(s);
  scrub_shared_memory(s);
  set_perturb_seed(detail::perturb_seed_of_run());  // a no-op unless TUTORIAL_PERTURB
  launch(s, rec.arg());
  CUDA_CHECK_LAST_LAUNCH();
  wait_stream_or_exit(s);
  const VerifyResult r = p.verify(s, reference);
  if (!r.ok()) {
    std::printf("[%s] traced run: %s\n%s", kt.variant.c_str(), r.summary().c_str(),
                r.details().c_str());
    print_last_events(kt, rec.download(s));  // where each traced role stopped (a hang's clue)
    return false;
  }
  kt.trace = rec.download(s);
  measure_trace_overhead(
      kt, s, 3, 20, [&](cudaStream_t st) { launch(st, TraceOff{}); },
      [&](cudaStream_t st) { launch(st, rec.arg()); });
  out.push_back(std::move(kt));
  return true;
}

/// @brief Write the traces, recording the command that reproduces them:
///        "<chapter_id> --timeline=<file name> --size=<cfg.size><extra_flags>" (the file name
///        only: the folder is the machine's, and the file lands on the reader's wherever they
///        point it).
inline bool write_chapter_timeline(const std::string& path, const std::vector<KernelTrace>& traces,
                                   const RunConfig& cfg, const std::string& chapter_id,
                                   const std::string& extra_flags = "") {
  const std::string::size_type slash = path.find_last_of('/');
  const std::string file_name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string command = chapter_id + " --timeline=" + file_name +
                              " --size=" + std::to_string(cfg.size) + extra_flags;
  return write_timeline(path, traces, TraceFileInfo{chapter_id, cfg.device.name, command});
}

}  // namespace tut
