#include "wait_record.hpp"

#include <algorithm>
#include <tuple>

namespace tut {

namespace {

const char* role_name(WaitRole role) {
  switch (role) {
    case WaitRole::kWarp: return "warp";
    case WaitRole::kProducerWarp: return "producer warp";
    case WaitRole::kConsumerWarp: return "consumer warp";
    case WaitRole::kProducerWarpgroup: return "producer warpgroup";
    case WaitRole::kConsumerWarpgroup: return "consumer warpgroup";
  }
  return "warp";
}

const char* barrier_name(Barrier b) {
  switch (b) {
    case Barrier::kFull: return "full";
    case Barrier::kEmpty: return "empty";
    case Barrier::kTile: return "tile";
    case Barrier::kReady: return "ready";
    case Barrier::kConsumed: return "consumed";
    case Barrier::kDone: return "done";
    case Barrier::kStore: return "store";
    case Barrier::kCluster: return "cluster";
    case Barrier::kPartial: return "partial";
  }
  return "barrier";
}

// Records that describe the same place in the protocol (only the block and warp differ).
auto place(const WaitRecord& r) {
  return std::make_tuple(r.role, r.role_index, r.barrier, r.has_slot, r.slot, r.parity, r.step_kind,
                         r.step, r.expect_tx);
}

}  // namespace

std::string describe_role(const WaitRecord& r) {
  return std::string(role_name(r.role)) + " " + std::to_string(r.role_index);
}

std::string describe_barrier(const WaitRecord& r) {
  std::string s = barrier_name(r.barrier);
  if (r.has_slot) s += "[" + std::to_string(r.slot) + "]";
  return s;
}

std::string describe_timeout(const WaitRecord& r) {
  std::string s = describe_role(r) + " of block " + std::to_string(r.block);
  if (r.role != WaitRole::kWarp) s += " (warp " + std::to_string(r.warp) + ")";
  s += " timed out on " + describe_barrier(r);
  if (r.barrier == Barrier::kPartial)  // a flag, not an mbarrier: it has no phase parity
    s += ", the flag of the partial tile cluster " + std::to_string(r.slot) + " writes,";
  else
    s += " waiting for parity " + std::to_string(static_cast<unsigned>(r.parity));
  switch (r.step_kind) {
    case WaitStep::kNone: break;
    case WaitStep::kTile: s += " at tile " + std::to_string(r.step); break;
    case WaitStep::kKTile: s += " at k-tile " + std::to_string(r.step); break;
    case WaitStep::kStep: s += " at step " + std::to_string(r.step); break;
  }
  if (r.expect_tx != 0) s += " (expect_tx " + std::to_string(r.expect_tx) + " bytes)";
  return s;
}

std::vector<std::string> describe_timeouts(const WaitLog& log) {
  const unsigned kept = std::min(log.count, WaitLog::kCapacity);
  std::vector<std::string> lines;
  std::vector<bool> done(kept, false);
  for (unsigned i = 0; i < kept; ++i) {
    if (done[i]) continue;
    unsigned others = 0;
    for (unsigned j = i + 1; j < kept; ++j)
      if (!done[j] && place(log.records[j]) == place(log.records[i])) {
        done[j] = true;
        ++others;
      }
    std::string line = describe_timeout(log.records[i]);
    if (others == 1) line += "; 1 other warp timed out at the same place";
    if (others > 1) line += "; " + std::to_string(others) + " other warps timed out at the same place";
    lines.push_back(line);
  }
  if (log.count > kept)
    lines.push_back(std::to_string(log.count - kept) + " more warps timed out (the log keeps the first " +
                    std::to_string(WaitLog::kCapacity) + ")");
  return lines;
}

}  // namespace tut
