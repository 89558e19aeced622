#include "timeline.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

namespace tut {

const char* trace_event_name(TraceEvent kind) {
  switch (kind) {
    case TraceEvent::kCopyIssued: return "copy issued";
    case TraceEvent::kWaitBegin: return "wait begun";
    case TraceEvent::kWaitDone: return "wait done";
    case TraceEvent::kComputeBegin: return "compute begun";
    case TraceEvent::kComputeEnd: return "compute ended";
    case TraceEvent::kSlotReleased: return "slot released";
    case TraceEvent::kLaneOpen: return "lane opened";
    case TraceEvent::kLaneClose: return "lane closed";
    case TraceEvent::kNone: break;
  }
  return "none";
}

std::uint64_t DecodedTrace::first_ns() const {
  std::uint64_t first = 0;
  bool any = false;
  auto take = [&](std::uint64_t t) {
    if (!any || t < first) first = t;
    any = true;
  };
  for (const LaneInfo& l : lanes) take(l.open_ns);
  for (const TimedEvent& e : events) take(e.t_ns);
  return first;
}

std::uint64_t DecodedTrace::last_ns() const {
  std::uint64_t last = 0;
  for (const LaneInfo& l : lanes) last = std::max(last, l.close_ns);
  for (const TimedEvent& e : events) last = std::max(last, e.t_ns);
  return last;
}

DecodedTrace decode_trace(const std::vector<TraceRecord>& raw, const TraceLayout& layout) {
  DecodedTrace out;
  const std::uint64_t per_region = layout.records_per_region();
  for (std::uint32_t block = 0; block < layout.max_blocks; ++block) {
    for (std::uint32_t lane = 0; lane < layout.lanes; ++lane) {
      const std::uint64_t base = (std::uint64_t{block} * layout.lanes + lane) * per_region;
      if (base + per_region > raw.size()) return out;  // a short buffer: decode what is there
      const TraceRecord& open = raw[base];
      if (open.kind != static_cast<std::uint8_t>(TraceEvent::kLaneOpen)) continue;  // untraced
      const TraceRecord& close = raw[base + 1];
      LaneInfo info;
      info.block = block;
      info.lane = lane;
      info.sm = open.tile;
      info.open_ns = open.t_ns;
      info.closed = close.kind == static_cast<std::uint8_t>(TraceEvent::kLaneClose);
      if (info.closed) info.close_ns = close.t_ns;
      std::uint32_t n = 0;
      for (; n < layout.capacity; ++n) {
        const TraceRecord& r = raw[base + 2 + n];
        if (r.kind == 0) break;  // the buffer was zeroed: the first empty record ends the lane
        TimedEvent e;
        e.block = block;
        e.sm = info.sm;
        e.lane = lane;
        e.kind = static_cast<TraceEvent>(r.kind);
        e.tile = r.tile;
        e.slot = r.slot;
        e.t_ns = r.t_ns;
        e.seq = n;
        out.events.push_back(e);
      }
      info.recorded = n;
      if (info.closed && close.tile > n) info.dropped = close.tile - n;
      out.lanes.push_back(info);
    }
  }
  return out;
}

namespace {

struct Span {
  std::uint64_t begin = 0, end = 0;
};

// Copies of one block, paired: issue .. earliest "wait done" for the same tile, by any lane of
// the block, at or after the copy is issued (and, in the issuing lane, after it in program order).
// Unpaired issues have `paired` false.
struct CopySpan {
  TimedEvent issue;
  std::uint64_t landed = 0;
  bool paired = false;
};

using BlockKey = std::uint32_t;

std::map<BlockKey, std::vector<CopySpan>> pair_copies(const DecodedTrace& t) {
  std::map<BlockKey, std::vector<CopySpan>> copies;
  // (block, tile) -> index into copies[block] of the latest issue of that tile
  std::map<std::pair<BlockKey, std::uint32_t>, std::size_t> open;
  for (const TimedEvent& e : t.events) {
    if (e.kind != TraceEvent::kCopyIssued) continue;
    auto& list = copies[e.block];
    open[{e.block, e.tile}] = list.size();
    list.push_back(CopySpan{e, 0, false});
  }
  for (const TimedEvent& e : t.events) {
    if (e.kind != TraceEvent::kWaitDone) continue;
    const auto it = open.find({e.block, e.tile});
    if (it == open.end()) continue;
    CopySpan& c = copies[e.block][it->second];
    if (e.t_ns < c.issue.t_ns) continue;
    // A wait of the issuing lane before issuing the copy (a producer waiting for the slot to be free
    // for this tile) is not the landing, even within the same 32 ns tick.
    if (e.lane == c.issue.lane && e.seq < c.issue.seq) continue;
    if (!c.paired || e.t_ns < c.landed) c.landed = e.t_ns;
    c.paired = true;
  }
  return copies;
}

struct ComputeSpan {
  TimedEvent begin;
  std::uint64_t end = 0;
};

// Compute spans of each lane, in program order; counts the begins and ends that do not pair.
std::map<BlockKey, std::vector<ComputeSpan>> pair_compute(const DecodedTrace& t,
                                                          std::size_t* unpaired) {
  std::map<BlockKey, std::vector<ComputeSpan>> spans;
  std::map<std::pair<BlockKey, std::uint32_t>, TimedEvent> open;  // (block, lane) -> begin
  std::size_t bad = 0;
  for (const TimedEvent& e : t.events) {  // each lane's events are in program order
    const auto key = std::make_pair(e.block, e.lane);
    if (e.kind == TraceEvent::kComputeBegin) {
      if (open.count(key)) ++bad;  // the previous begin never ended
      open[key] = e;
    } else if (e.kind == TraceEvent::kComputeEnd) {
      const auto it = open.find(key);
      if (it == open.end() || it->second.tile != e.tile || e.t_ns < it->second.t_ns) {
        ++bad;
        if (it != open.end()) open.erase(it);
        continue;
      }
      spans[e.block].push_back(ComputeSpan{it->second, e.t_ns});
      open.erase(it);
    }
  }
  bad += open.size();  // begins without an end (the window ended inside a compute phase)
  if (unpaired) *unpaired = bad;
  return spans;
}

std::size_t count_overlaps(const std::map<BlockKey, std::vector<CopySpan>>& copies,
                           const std::map<BlockKey, std::vector<ComputeSpan>>& compute) {
  std::size_t n = 0;
  for (const auto& [block, list] : copies) {
    const auto it = compute.find(block);
    if (it == compute.end()) continue;
    for (const CopySpan& c : list) {
      if (!c.paired) continue;
      for (const ComputeSpan& s : it->second) {
        // strictly positive intersection of [issue, landed] and [begin, end]
        if (c.issue.t_ns < s.end && s.begin.t_ns < c.landed) {
          ++n;
          break;
        }
      }
    }
  }
  return n;
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string micros(std::uint64_t t_ns, std::uint64_t t0_ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", (t_ns >= t0_ns ? double(t_ns - t0_ns) : 0.0) / 1000.0);
  return buf;
}

std::string slot_text(std::uint8_t slot) {
  return slot == kNoSlot ? std::string() : " slot " + std::to_string(slot);
}

// Track numbering inside one process (one SM of one kernel): lanes first, then slots.
constexpr std::uint32_t kTracksPerBlock = 512;
constexpr std::uint32_t kFirstCopyTrack = 256;
std::uint32_t lane_tid(std::uint32_t block, std::uint32_t lane) {
  return 1 + block * kTracksPerBlock + lane;
}
std::uint32_t copy_tid(std::uint32_t block, std::uint8_t slot) {
  return 1 + block * kTracksPerBlock + kFirstCopyTrack + slot;
}

// One JSON event line, kept with its sort key so each track is written in order.
struct Line {
  std::uint32_t pid, tid;
  int group;  // 0 = metadata, 1 = events
  std::uint64_t ts;
  std::uint32_t seq;
  std::string text;
};

}  // namespace

std::size_t copies_overlapping_compute(const DecodedTrace& trace) {
  return count_overlaps(pair_copies(trace), pair_compute(trace, nullptr));
}

std::string chrome_trace_json(const std::vector<KernelTrace>& kernels, const TraceFileInfo& info,
                              TraceSummary* summary) {
  TraceSummary sum;
  std::vector<Line> lines;
  std::ostringstream kernels_meta;

  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const KernelTrace& kt = kernels[k];
    const DecodedTrace& t = kt.trace;
    const std::uint64_t t0 = t.first_ns();
    const std::uint64_t t1 = std::max(t.last_ns(), t0);
    const std::string variant = json_escape(kt.variant);
    auto pid_of = [&](std::uint32_t sm) { return static_cast<std::uint32_t>((k + 1) * 1000 + sm); };
    auto lane_name = [&](std::uint32_t lane) {
      return lane < kt.lane_names.size() ? kt.lane_names[lane] : "lane " + std::to_string(lane);
    };
    auto common_args = [&](const TimedEvent& e) {
      std::ostringstream a;
      a << "\"variant\":\"" << variant << "\",\"block\":" << e.block << ",\"sm\":" << e.sm
        << ",\"lane\":" << e.lane << ",\"tile\":" << e.tile;
      if (e.slot != kNoSlot) a << ",\"slot\":" << unsigned(e.slot);
      return a.str();
    };
    auto add = [&](std::uint32_t pid, std::uint32_t tid, std::uint64_t ts, std::uint32_t seq,
                   const std::string& text, int group = 1) {
      lines.push_back(Line{pid, tid, group, ts, seq, text});
    };

    // Processes (one per SM that ran a traced block) and their kernel span.
    std::map<std::uint32_t, bool> sms;
    for (const LaneInfo& l : t.lanes) sms[l.sm] = true;
    for (const auto& [sm, unused] : sms) {
      (void)unused;
      const std::uint32_t pid = pid_of(sm);
      std::ostringstream m;
      m << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid << ",\"args\":{\"name\":\""
        << json_escape(kt.title.empty() ? kt.variant : kt.title) << " | SM " << sm << "\"}}";
      add(pid, 0, 0, 0, m.str(), 0);
      std::ostringstream s;
      s << "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << pid
        << ",\"args\":{\"sort_index\":" << pid << "}}";
      add(pid, 0, 0, 1, s.str(), 0);
      std::ostringstream n;
      n << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid
        << ",\"tid\":0,\"args\":{\"name\":\"kernel\"}}";
      add(pid, 0, 0, 2, n.str(), 0);
      std::ostringstream x;
      x << "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel " << variant << "\",\"pid\":" << pid
        << ",\"tid\":0,\"ts\":0.000,\"dur\":" << micros(t1, t0) << ",\"args\":{\"variant\":\""
        << variant << "\",\"sm\":" << sm << "}}";
      add(pid, 0, 0, 0, x.str());
      ++sum.events;
    }
    // Tracks: one per lane, one per slot that saw a copy.
    for (const LaneInfo& l : t.lanes) {
      sum.dropped += l.dropped;
      const std::uint32_t pid = pid_of(l.sm), tid = lane_tid(l.block, l.lane);
      std::ostringstream m;
      m << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << tid
        << ",\"args\":{\"name\":\"block " << l.block << " | " << json_escape(lane_name(l.lane))
        << "\"}}";
      add(pid, tid, 0, 0, m.str(), 0);
    }

    // Copies in flight: issue .. landed, on the slot's track.
    std::map<std::pair<std::uint32_t, std::uint32_t>, bool> copy_tracks;
    const auto copies = pair_copies(t);
    for (const auto& [block, list] : copies) {
      for (const CopySpan& c : list) {
        const TimedEvent& e = c.issue;
        const std::uint32_t pid = pid_of(e.sm), tid = copy_tid(block, e.slot);
        if (!copy_tracks[{pid, tid}]) {
          copy_tracks[{pid, tid}] = true;
          std::ostringstream m;
          m << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << tid
            << ",\"args\":{\"name\":\"block " << block << " |"
            << (e.slot == kNoSlot ? std::string(" copies") : slot_text(e.slot) + " copies")
            << "\"}}";
          add(pid, tid, 0, 0, m.str(), 0);
        }
        std::ostringstream x;
        if (c.paired) {
          x << "{\"ph\":\"X\",\"cat\":\"copy\",\"name\":\"copy tile " << e.tile << slot_text(e.slot)
            << "\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << micros(e.t_ns, t0)
            << ",\"dur\":" << micros(c.landed, e.t_ns) << ",\"args\":{" << common_args(e) << "}}";
          ++sum.copy_spans;
        } else {
          x << "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"copy\",\"name\":\"copy issued tile " << e.tile
            << slot_text(e.slot) << " (landing not recorded)\",\"pid\":" << pid << ",\"tid\":" << tid
            << ",\"ts\":" << micros(e.t_ns, t0) << ",\"args\":{" << common_args(e) << "}}";
          ++sum.unpaired_copies;
          ++sum.instants;
        }
        add(pid, tid, e.t_ns, e.seq, x.str());
        ++sum.events;
      }
    }

    // Compute spans and instants on the lane tracks, in program order.
    std::size_t unpaired = 0;
    const auto compute = pair_compute(t, &unpaired);
    sum.unpaired_compute += unpaired;
    for (const auto& [block, list] : compute) {
      for (const ComputeSpan& s : list) {
        const TimedEvent& e = s.begin;
        const std::uint32_t pid = pid_of(e.sm), tid = lane_tid(block, e.lane);
        std::ostringstream x;
        x << "{\"ph\":\"X\",\"cat\":\"compute\",\"name\":\"compute tile " << e.tile
          << slot_text(e.slot) << "\",\"pid\":" << pid << ",\"tid\":" << tid
          << ",\"ts\":" << micros(e.t_ns, t0) << ",\"dur\":" << micros(s.end, e.t_ns)
          << ",\"args\":{" << common_args(e) << "}}";
        add(pid, tid, 0, e.seq, x.str());  // lane tracks: program order only
        ++sum.compute_spans;
        ++sum.events;
      }
    }
    for (const TimedEvent& e : t.events) {
      const char* cat = nullptr;
      if (e.kind == TraceEvent::kWaitBegin || e.kind == TraceEvent::kWaitDone) cat = "wait";
      if (e.kind == TraceEvent::kSlotReleased) cat = "release";
      if (!cat) continue;
      const std::uint32_t pid = pid_of(e.sm), tid = lane_tid(e.block, e.lane);
      std::ostringstream x;
      x << "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"" << cat << "\",\"name\":\""
        << trace_event_name(e.kind) << " tile " << e.tile << slot_text(e.slot)
        << "\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << micros(e.t_ns, t0)
        << ",\"args\":{" << common_args(e) << "}}";
      add(pid, tid, 0, e.seq, x.str());
      ++sum.instants;
      ++sum.events;
    }
    const std::size_t overlaps = count_overlaps(copies, compute);
    sum.overlapping_copies += overlaps;

    if (k) kernels_meta << ",";
    kernels_meta << "{\"variant\":\"" << variant << "\",\"title\":\"" << json_escape(kt.title)
                 << "\",\"lanes\":" << t.lanes.size() << ",\"span_us\":" << micros(t1, t0)
                 << ",\"t0_ns\":" << t0 << ",\"overlapping_copies\":" << overlaps;
    if (kt.untraced_ms > 0 && kt.traced_ms > 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, ",\"untraced_ms\":%.6f,\"traced_ms\":%.6f", kt.untraced_ms,
                    kt.traced_ms);
      kernels_meta << buf;
    }
    kernels_meta << "}";
  }

  // Metadata first, then each track in order: lane tracks in program order (so a reader can
  // check that the device clock never ran backwards), copy tracks by issue time.
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return std::tie(a.group, a.pid, a.tid, a.ts, a.seq) < std::tie(b.group, b.pid, b.tid, b.ts, b.seq);
  });
  std::ostringstream os;
  os << "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"chapter\":\"" << json_escape(info.chapter)
     << "\",\"gpu\":\"" << json_escape(info.gpu) << "\",\"command\":\"" << json_escape(info.command)
     << "\",\"time_unit\":\"us from each kernel's first traced event\",\"kernels\":["
     << kernels_meta.str() << "]},\n\"traceEvents\":[\n";
  for (std::size_t i = 0; i < lines.size(); ++i)
    os << lines[i].text << (i + 1 < lines.size() ? ",\n" : "\n");
  os << "]}\n";
  if (summary) *summary = sum;
  return os.str();
}

bool write_chrome_trace(const std::string& path, const std::vector<KernelTrace>& kernels,
                        const TraceFileInfo& info, std::string& error, TraceSummary* summary) {
  const std::string text = chrome_trace_json(kernels, info, summary);
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    error = "cannot write '" + tmp + "'";
    return false;
  }
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    std::remove(tmp.c_str());
    error = "cannot write '" + tmp + "' (disk full?)";
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    error = "cannot rename '" + tmp + "' to '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace tut
