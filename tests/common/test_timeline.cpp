// Host tests for the in-kernel timeline: decoding a raw record buffer, the Chrome trace JSON
// written from it (parsed back here and checked: valid JSON, each track in time order, spans
// paired, every event inside the kernel's span), the overlap count, and the --timeline flag.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/cli.hpp"
#include "common/timeline.hpp"

namespace {

using tut::TraceEvent;
using tut::TraceRecord;

// ---- a small JSON reader, enough to check the writer's output ---------------------------

struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  double number = 0;
  bool boolean = false;
  std::string text;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  const Json* find(const std::string& key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& s) : s_(s) {}
  // Parses the whole text; false (with the offset in `where`) on any syntax error.
  bool parse(Json& out, std::size_t& where) {
    const bool ok = value(out) && (skip(), pos_ == s_.size());
    where = pos_;
    return ok;
  }

 private:
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }
  bool string(std::string& out) {
    if (s_[pos_] != '"') return false;
    for (++pos_; pos_ < s_.size(); ++pos_) {
      const char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return false;  // raw control character
      if (c == '\\') {
        if (++pos_ >= s_.size()) return false;
        const char e = s_[pos_];
        if (e == 'u') {
          if (pos_ + 4 >= s_.size()) return false;
          pos_ += 4;
          out += '?';
        } else if (std::string("\"\\/bfnrt").find(e) != std::string::npos) {
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else {
          return false;
        }
      } else {
        out += c;
      }
    }
    return false;
  }
  bool value(Json& v) {
    skip();
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '{') {
      v.kind = Json::kObject;
      ++pos_;
      skip();
      if (s_[pos_] == '}') return ++pos_, true;
      for (;;) {
        skip();
        std::string key;
        if (!string(key)) return false;
        skip();
        if (s_[pos_++] != ':') return false;
        Json member;
        if (!value(member)) return false;
        v.members.emplace_back(key, std::move(member));
        skip();
        if (s_[pos_] == ',') { ++pos_; continue; }
        if (s_[pos_] == '}') return ++pos_, true;
        return false;
      }
    }
    if (c == '[') {
      v.kind = Json::kArray;
      ++pos_;
      skip();
      if (s_[pos_] == ']') return ++pos_, true;
      for (;;) {
        Json item;
        if (!value(item)) return false;
        v.items.push_back(std::move(item));
        skip();
        if (s_[pos_] == ',') { ++pos_; continue; }
        if (s_[pos_] == ']') return ++pos_, true;
        return false;
      }
    }
    if (c == '"') {
      v.kind = Json::kString;
      return string(v.text);
    }
    if (literal("true")) { v.kind = Json::kBool; v.boolean = true; return true; }
    if (literal("false")) { v.kind = Json::kBool; return true; }
    if (literal("null")) return true;
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    v.number = std::strtod(begin, &end);
    if (end == begin) return false;
    v.kind = Json::kNumber;
    pos_ += static_cast<std::size_t>(end - begin);
    return true;
  }
  const std::string& s_;
  std::size_t pos_ = 0;
};

// ---- synthetic buffers ---------------------------------------------------------------------

// Builds a raw buffer the way the kernel would fill it.
class BufferBuilder {
 public:
  explicit BufferBuilder(tut::TraceLayout layout)
      : layout_(layout), raw_(static_cast<std::size_t>(layout.total_records())) {}
  // Open a lane on SM `sm` at time t; returns nothing, remembers the write position.
  void open(std::uint32_t block, std::uint32_t lane, std::uint32_t sm, std::uint64_t t) {
    at(block, lane, 0) = TraceRecord{t, sm, std::uint8_t(TraceEvent::kLaneOpen), tut::kNoSlot, 0};
    count_[{block, lane}] = 0;
  }
  void event(std::uint32_t block, std::uint32_t lane, TraceEvent kind, std::uint32_t tile,
             std::uint8_t slot, std::uint64_t t) {
    std::uint32_t& n = count_[{block, lane}];
    if (n < layout_.capacity)
      at(block, lane, 2 + n) = TraceRecord{t, tile, std::uint8_t(kind), slot, 0};
    ++n;
  }
  void close(std::uint32_t block, std::uint32_t lane, std::uint64_t t) {
    at(block, lane, 1) = TraceRecord{t, count_[{block, lane}], std::uint8_t(TraceEvent::kLaneClose),
                                     tut::kNoSlot, 0};
  }
  const std::vector<TraceRecord>& raw() const { return raw_; }
  const tut::TraceLayout& layout() const { return layout_; }

 private:
  TraceRecord& at(std::uint32_t block, std::uint32_t lane, std::uint64_t i) {
    return raw_[(std::uint64_t{block} * layout_.lanes + lane) * layout_.records_per_region() + i];
  }
  tut::TraceLayout layout_;
  std::vector<TraceRecord> raw_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> count_;
};

constexpr std::uint64_t kT0 = 1'700'000'000'000'000'000ull;  // a %globaltimer-like epoch

// One lane walking `tiles` tiles through a ring of `stages` slots, the way chapter 04's loop
// does: issue tile j + stages - 1, wait for j, compute j, release j. With stages == 1 the copy
// of the next tile is issued only after the compute (no overlap); with 2+ it is in flight
// during the compute.
void ring_lane(BufferBuilder& b, std::uint32_t block, std::uint32_t sm, int stages, int tiles) {
  std::uint64_t t = kT0 + 1000 * block;
  b.open(block, 0, sm, t);
  auto issue = [&](int j) {
    if (j < tiles) b.event(block, 0, TraceEvent::kCopyIssued, j, std::uint8_t(j % stages), t += 32);
  };
  for (int j = 0; j < stages - 1; ++j) issue(j);
  for (int j = 0; j < tiles; ++j) {
    const auto slot = std::uint8_t(j % stages);
    if (stages > 1) issue(j + stages - 1);
    b.event(block, 0, TraceEvent::kWaitBegin, j, slot, t += 32);
    if (stages == 1) issue(j);
    b.event(block, 0, TraceEvent::kWaitDone, j, slot, t += 640);
    b.event(block, 0, TraceEvent::kComputeBegin, j, slot, t += 32);
    b.event(block, 0, TraceEvent::kComputeEnd, j, slot, t += 1280);
    b.event(block, 0, TraceEvent::kSlotReleased, j, slot, t += 32);
  }
  b.close(block, 0, t += 64);
}

// A two-lane block (producer lane 0, consumer lane 1), as in a warp-specialized kernel.
void producer_consumer(BufferBuilder& b, std::uint32_t block, std::uint32_t sm, int stages,
                       int tiles) {
  const std::uint64_t start = kT0 + 5000;
  b.open(block, 0, sm, start);
  b.open(block, 1, sm, start + 32);
  std::vector<std::uint64_t> released(tiles);
  std::uint64_t tp = start, tc = start + 32;
  for (int j = 0; j < tiles; ++j) {
    const auto slot = std::uint8_t(j % stages);
    if (j >= stages) {  // the producer waits for the slot to be free; issuing the copy follows in
                        // the same clock tick, which must not count as the copy's landing
      b.event(block, 0, TraceEvent::kWaitBegin, j, slot, tp += 32);
      tp = std::max(tp, released[j - stages]);
      b.event(block, 0, TraceEvent::kWaitDone, j, slot, tp);
    }
    b.event(block, 0, TraceEvent::kCopyIssued, j, slot, tp);
    const std::uint64_t landed = tp + 700;
    b.event(block, 1, TraceEvent::kWaitBegin, j, slot, tc += 32);
    tc = std::max(tc, landed);
    b.event(block, 1, TraceEvent::kWaitDone, j, slot, tc);
    b.event(block, 1, TraceEvent::kComputeBegin, j, slot, tc += 32);
    b.event(block, 1, TraceEvent::kComputeEnd, j, slot, tc += 1280);
    b.event(block, 1, TraceEvent::kSlotReleased, j, slot, tc += 32);
    released[j] = tc;
  }
  b.close(block, 0, tp + 64);
  b.close(block, 1, tc + 64);
}

tut::KernelTrace kernel(const BufferBuilder& b, std::string variant,
                        std::vector<std::string> lanes = {"block"}) {
  tut::KernelTrace k;
  k.variant = std::move(variant);
  k.title = k.variant + " \"quoted\"";
  k.lane_names = std::move(lanes);
  k.trace = tut::decode_trace(b.raw(), b.layout());
  return k;
}

// Parse the writer's output and check what any reader of the file relies on.
void check_trace_file(const std::string& text, std::size_t expect_kernels) {
  Json root;
  std::size_t where = 0;
  ASSERT_TRUE(JsonReader(text).parse(root, where)) << "invalid JSON near offset " << where << ":\n"
                                                   << text.substr(where > 80 ? where - 80 : 0, 160);
  ASSERT_EQ(root.kind, Json::kObject);
  const Json* events = root.find("traceEvents");
  ASSERT_NE(events, nullptr);
  ASSERT_EQ(events->kind, Json::kArray);
  const Json* other = root.find("otherData");
  ASSERT_NE(other, nullptr);
  ASSERT_NE(other->find("kernels"), nullptr);
  EXPECT_EQ(other->find("kernels")->items.size(), expect_kernels);

  std::map<double, std::pair<double, double>> kernel_span;      // pid -> [ts, ts + dur]
  std::map<std::pair<double, double>, double> last_ts;          // (pid, tid) -> last ts
  std::map<std::pair<double, double>, double> last_span_end;    // (pid, tid) -> end of last X
  std::size_t spans = 0;
  for (const Json& e : events->items) {
    ASSERT_EQ(e.kind, Json::kObject);
    const Json* ph = e.find("ph");
    ASSERT_NE(ph, nullptr);
    ASSERT_NE(e.find("pid"), nullptr);
    if (ph->text == "M") continue;
    for (const char* key : {"name", "cat", "tid", "ts"}) ASSERT_NE(e.find(key), nullptr) << key;
    const double pid = e.find("pid")->number, tid = e.find("tid")->number;
    const double ts = e.find("ts")->number;
    EXPECT_GE(ts, 0.0) << "times are relative to the kernel's first event";
    const auto track = std::make_pair(pid, tid);
    if (last_ts.count(track)) EXPECT_LE(last_ts[track], ts) << "track out of time order: " << e.find("name")->text;
    last_ts[track] = ts;
    if (ph->text == "X") {
      ASSERT_NE(e.find("dur"), nullptr);
      const double dur = e.find("dur")->number;
      EXPECT_GE(dur, 0.0);
      if (e.find("cat")->text == "kernel") {
        kernel_span[pid] = {ts, ts + dur};
        continue;
      }
      // spans on one track follow each other (a lane computes one tile at a time; a slot
      // holds one tile at a time)
      if (last_span_end.count(track)) EXPECT_LE(last_span_end[track], ts + 1e-9);
      last_span_end[track] = ts + dur;
      ++spans;
      EXPECT_NE(e.find("name")->text.find("tile "), std::string::npos) << "names carry the tile";
      ASSERT_NE(e.find("args"), nullptr);
      EXPECT_NE(e.find("args")->find("block"), nullptr);
      EXPECT_NE(e.find("args")->find("tile"), nullptr);
    } else {
      EXPECT_EQ(ph->text, "i");
    }
  }
  EXPECT_GT(spans, 0u);
  // every event inside its kernel's span (the kernel event comes first in each process)
  for (const Json& e : events->items) {
    if (e.find("ph")->text == "M") continue;
    const double pid = e.find("pid")->number;
    ASSERT_TRUE(kernel_span.count(pid)) << "process without a kernel span";
    const double ts = e.find("ts")->number;
    const double end = ts + (e.find("dur") ? e.find("dur")->number : 0.0);
    EXPECT_GE(ts, kernel_span[pid].first);
    EXPECT_LE(end, kernel_span[pid].second + 1e-9) << e.find("name")->text;
  }
}

TEST(TimelineDecode, FindsTracedLanesAndCountsDroppedEvents) {
  BufferBuilder b({4, 2, 8});
  b.open(1, 0, 7, kT0);
  for (int i = 0; i < 11; ++i) b.event(1, 0, TraceEvent::kWaitBegin, i, 0, kT0 + 32 * (i + 1));
  b.close(1, 0, kT0 + 1000);
  b.open(3, 1, 2, kT0 + 64);  // never closed: the lane returned early
  b.event(3, 1, TraceEvent::kComputeBegin, 0, tut::kNoSlot, kT0 + 96);
  const tut::DecodedTrace t = tut::decode_trace(b.raw(), b.layout());
  ASSERT_EQ(t.lanes.size(), 2u) << "blocks 0 and 2 and the other lanes were not traced";
  EXPECT_EQ(t.lanes[0].block, 1u);
  EXPECT_EQ(t.lanes[0].sm, 7u);
  EXPECT_EQ(t.lanes[0].recorded, 8u);
  EXPECT_EQ(t.lanes[0].dropped, 3u) << "11 attempted, capacity 8";
  EXPECT_TRUE(t.lanes[0].closed);
  EXPECT_EQ(t.lanes[1].block, 3u);
  EXPECT_EQ(t.lanes[1].lane, 1u);
  EXPECT_FALSE(t.lanes[1].closed);
  EXPECT_EQ(t.lanes[1].recorded, 1u);
  EXPECT_EQ(t.events.size(), 9u);
  EXPECT_EQ(t.first_ns(), kT0);
  EXPECT_EQ(t.last_ns(), kT0 + 1000);
  for (std::uint32_t i = 0; i < 8; ++i) EXPECT_EQ(t.events[i].seq, i);
}

TEST(TimelineDecode, ShortBufferDecodesWhatIsThere) {
  BufferBuilder b({2, 1, 4});
  b.open(0, 0, 0, kT0);
  std::vector<TraceRecord> raw = b.raw();
  raw.resize(9);  // region 1 cut short
  EXPECT_EQ(tut::decode_trace(raw, b.layout()).lanes.size(), 1u);
}

TEST(TimelineWriter, PipelinedRingIsValidPairedAndOverlaps) {
  BufferBuilder b({4, 1, 64});
  ring_lane(b, 0, 0, 2, 6);
  ring_lane(b, 2, 1, 2, 6);
  tut::TraceSummary sum;
  const std::string text = tut::chrome_trace_json({kernel(b, "v2_stages2")}, {"ch99", "GPU", "cmd"}, &sum);
  check_trace_file(text, 1);
  EXPECT_EQ(sum.copy_spans, 12u);
  EXPECT_EQ(sum.compute_spans, 12u);
  EXPECT_EQ(sum.unpaired_copies, 0u);
  EXPECT_EQ(sum.unpaired_compute, 0u);
  EXPECT_EQ(sum.instants, 12u * 3);
  EXPECT_GT(sum.overlapping_copies, 0u) << "a 2-stage ring has copies in flight during compute";
  EXPECT_NE(text.find("| SM 1\""), std::string::npos);
  EXPECT_NE(text.find("compute tile 5 slot 1"), std::string::npos);
  EXPECT_NE(text.find("\\\"quoted\\\""), std::string::npos) << "titles are escaped";
}

TEST(TimelineWriter, SerialRingHasNoOverlap) {
  BufferBuilder b({1, 1, 64});
  ring_lane(b, 0, 0, 1, 6);
  tut::TraceSummary sum;
  const std::string text = tut::chrome_trace_json({kernel(b, "v2_stages1")}, {}, &sum);
  check_trace_file(text, 1);
  EXPECT_EQ(sum.copy_spans, 6u);
  EXPECT_EQ(sum.overlapping_copies, 0u);
  EXPECT_EQ(tut::copies_overlapping_compute(tut::decode_trace(b.raw(), b.layout())), 0u);
}

TEST(TimelineWriter, ProducerConsumerLanesPairAcrossLanes) {
  BufferBuilder b({1, 2, 64});
  producer_consumer(b, 0, 3, 3, 9);
  tut::TraceSummary sum;
  const std::string text = tut::chrome_trace_json(
      {kernel(b, "v1_ws", {"producer", "consumer"})}, {}, &sum);
  check_trace_file(text, 1);
  EXPECT_EQ(sum.copy_spans, 9u) << "issued by the producer, landed when the consumer's wait returned";
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find("\"cat\":\"copy\"") != std::string::npos)
      EXPECT_EQ(line.find("\"dur\":0.000,"), std::string::npos)
          << "the producer's own wait for a free slot is not the copy's landing: " << line;
  EXPECT_EQ(sum.compute_spans, 9u);
  EXPECT_GT(sum.overlapping_copies, 0u);
  EXPECT_NE(text.find("block 0 | producer"), std::string::npos);
  EXPECT_NE(text.find("block 0 | slot 2 copies"), std::string::npos);
}

TEST(TimelineWriter, SeveralKernelsEachStartAtZero) {
  BufferBuilder a({1, 1, 64}), c({1, 1, 64});
  ring_lane(a, 0, 0, 1, 4);
  ring_lane(c, 0, 0, 4, 8);
  tut::TraceSummary sum;
  const std::string text =
      tut::chrome_trace_json({kernel(a, "v1_sync"), kernel(c, "v2_stages4")}, {}, &sum);
  check_trace_file(text, 2);
  EXPECT_NE(text.find("\"pid\":1000"), std::string::npos);
  EXPECT_NE(text.find("\"pid\":2000"), std::string::npos);
}

TEST(TimelineWriter, UnpairedEventsAreCountedNotDrawn) {
  BufferBuilder b({1, 1, 6});  // the window ends after the first compute phase
  ring_lane(b, 0, 0, 2, 4);
  tut::TraceSummary sum;
  const std::string text = tut::chrome_trace_json({kernel(b, "v2_stages2")}, {}, &sum);
  check_trace_file(text, 1);
  EXPECT_GT(sum.dropped, 0u);
  EXPECT_EQ(sum.compute_spans, 1u);
  EXPECT_GT(sum.unpaired_copies, 0u);
  EXPECT_NE(text.find("landing not recorded"), std::string::npos);

  BufferBuilder bad({1, 1, 8});
  bad.open(0, 0, 0, kT0);
  bad.event(0, 0, TraceEvent::kComputeBegin, 0, 0, kT0 + 32);
  bad.event(0, 0, TraceEvent::kComputeEnd, 1, 0, kT0 + 64);    // a different tile
  bad.event(0, 0, TraceEvent::kComputeEnd, 2, 0, kT0 + 96);    // no begin
  bad.event(0, 0, TraceEvent::kComputeBegin, 3, 0, kT0 + 128); // never ends
  bad.close(0, 0, kT0 + 160);
  tut::chrome_trace_json({kernel(bad, "broken")}, {}, &sum);
  EXPECT_EQ(sum.compute_spans, 0u);
  EXPECT_EQ(sum.unpaired_compute, 3u);
}

TEST(TimelineWriter, WritesThroughATemporaryFile) {
  BufferBuilder b({1, 1, 64});
  ring_lane(b, 0, 0, 2, 3);
  const std::string path = ::testing::TempDir() + "timeline_test.json";
  std::string error;
  ASSERT_TRUE(tut::write_chrome_trace(path, {kernel(b, "v")}, {"ch", "gpu", "c"}, error)) << error;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  check_trace_file(text.str(), 1);
  EXPECT_FALSE(std::ifstream(path + ".tmp").good()) << "the temporary file was renamed";
  std::remove(path.c_str());
  EXPECT_FALSE(tut::write_chrome_trace("/nonexistent-dir/t.json", {}, {}, error));
  EXPECT_NE(error.find("/nonexistent-dir/t.json"), std::string::npos);
}

TEST(TimelineCli, FlagTakesAPath) {
  const auto ok = tut::parse_cli({"--timeline=t.json"}, {});
  ASSERT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(ok.options.timeline_path, "t.json");
  EXPECT_EQ(tut::parse_cli({"--timeline", "u.json"}, {}).options.timeline_path, "u.json");
  EXPECT_TRUE(tut::parse_cli({}, {}).options.timeline_path.empty());
  const auto bad = tut::parse_cli({"--timeline="}, {});
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.error.find("--timeline"), std::string::npos);
  EXPECT_NE(tut::usage_text("p", "t", "s", {}).find("--timeline"), std::string::npos);
}

}  // namespace
