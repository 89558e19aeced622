/// @file timeline.hpp
/// @brief In-kernel timelines, host side: the record layout a traced kernel writes, decoding a
///        downloaded buffer, and the Chrome trace-event JSON writer (host only, no CUDA).
///
/// A traced kernel (see timeline.cuh) writes one 16-byte TraceRecord per event into a device
/// buffer divided into regions, one per (block, lane). A lane is one recording thread: a warp
/// or a role (producer, consumer) chosen by the chapter. Each region holds an open record, a
/// close record and `capacity` event records:
/// @verbatim
///   region(block, lane) = records + (block * lanes + lane) * (capacity + 2)
///   [0] open:  t_ns = when the lane started, tile = %smid, kind = kLaneOpen
///   [1] close: t_ns = when the lane finished, tile = events attempted, kind = kLaneClose
///   [2 .. 2 + capacity) the events, in the lane's program order
/// @endverbatim
/// Events past `capacity` are counted (close record), not written. The host zeroes the buffer
/// before the launch, so a region whose open record has kind 0 belongs to a block that was
/// not traced.
///
/// The writer turns the events into the JSON that Perfetto (ui.perfetto.dev) and
/// chrome://tracing open: one process per SM, one track per (block, lane) with the compute
/// spans and the wait/release instants, one track per (block, ring slot) with the copies in
/// flight (issued .. landed). Times are microseconds from the kernel's first traced event.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tut {

/// @brief What happened. The numbering is part of the buffer format (timeline.cuh writes it).
enum class TraceEvent : std::uint8_t {
  kNone = 0,           ///< an unwritten record
  kCopyIssued = 1,     ///< the copy of a tile into a slot was issued (cp.async, TMA, loads)
  kWaitBegin = 2,      ///< the lane starts waiting for a tile's data
  kWaitDone = 3,       ///< the wait returned: the tile's data has landed and is visible
  kComputeBegin = 4,   ///< the lane starts working on a tile
  kComputeEnd = 5,     ///< ... and is done with it
  kSlotReleased = 6,   ///< the slot may be refilled (arrive on "empty", trailing barrier)
  kLaneOpen = 0x10,    ///< region header: lane started (tile field = %smid)
  kLaneClose = 0x11,   ///< region header: lane finished (tile field = events attempted)
};

/// @brief No ring slot (an event that concerns no slot, or a kernel without a ring).
inline constexpr std::uint8_t kNoSlot = 0xFF;

/// @brief One event as the kernel stores it: 16 bytes, one vector store.
struct alignas(16) TraceRecord {
  std::uint64_t t_ns;   ///< %globaltimer, nanoseconds
  std::uint32_t tile;   ///< the block's tile number j = 0, 1, 2, ... (not the global tile)
  std::uint8_t kind;    ///< a TraceEvent
  std::uint8_t slot;    ///< ring slot, or kNoSlot
  std::uint16_t reserved;
};
static_assert(sizeof(TraceRecord) == 16, "one 16-byte store per event");

/// @brief How the trace buffer is divided.
struct TraceLayout {
  std::uint32_t max_blocks = 0;  ///< regions for blockIdx.x < max_blocks
  std::uint32_t lanes = 1;       ///< recording threads per block
  std::uint32_t capacity = 0;    ///< event records per lane

  std::uint64_t records_per_region() const { return std::uint64_t{capacity} + 2; }
  std::uint64_t total_records() const {
    return std::uint64_t{max_blocks} * lanes * records_per_region();
  }
};

/// @brief One decoded event.
struct TimedEvent {
  std::uint32_t block = 0;
  std::uint32_t sm = 0;
  std::uint32_t lane = 0;
  TraceEvent kind = TraceEvent::kNone;
  std::uint32_t tile = 0;
  std::uint8_t slot = kNoSlot;
  std::uint64_t t_ns = 0;
  std::uint32_t seq = 0;  ///< position in the lane's program order
};

/// @brief One traced lane (recording thread).
struct LaneInfo {
  std::uint32_t block = 0;
  std::uint32_t sm = 0;
  std::uint32_t lane = 0;
  std::uint64_t open_ns = 0;
  std::uint64_t close_ns = 0;  ///< 0 when the lane never closed (it returned early)
  bool closed = false;
  std::uint32_t recorded = 0;  ///< events in the buffer
  std::uint32_t dropped = 0;   ///< events past the capacity (known only when closed)
};

/// @brief A downloaded buffer, decoded: the lanes that were traced and their events, each
///        lane's events in program order, lanes in (block, lane) order.
struct DecodedTrace {
  std::vector<LaneInfo> lanes;
  std::vector<TimedEvent> events;
  std::uint64_t first_ns() const;  ///< earliest lane open (or event); 0 when empty
  std::uint64_t last_ns() const;   ///< latest lane close (or event)
};

/// @brief Decode the raw records of a buffer laid out as @p layout.
DecodedTrace decode_trace(const std::vector<TraceRecord>& raw, const TraceLayout& layout);

/// @brief One kernel's trace, as it goes into the file.
struct KernelTrace {
  std::string variant;                  ///< variant key, e.g. "v2_stages2"
  std::string title;                    ///< display name, e.g. "v2 pipeline, 2 stages"
  std::vector<std::string> lane_names;  ///< by lane id; a missing name reads "lane N"
  DecodedTrace trace;
  double untraced_ms = 0;               ///< same launch without tracing (0: not measured)
  double traced_ms = 0;                 ///< with tracing (0: not measured)
};

/// @brief Where the traces come from (goes to the file's "otherData").
struct TraceFileInfo {
  std::string chapter;  ///< e.g. "ch04_pipeline_prefetch"
  std::string gpu;      ///< e.g. "NVIDIA H200"
  std::string command;  ///< the command line that wrote the file
};

/// @brief What the writer made of the events (also a sanity report for tests).
struct TraceSummary {
  std::size_t events = 0;            ///< JSON events written (spans + instants, no metadata)
  std::size_t copy_spans = 0;        ///< copies paired issue .. landed
  std::size_t compute_spans = 0;     ///< compute phases paired begin .. end
  std::size_t instants = 0;
  std::size_t unpaired_copies = 0;   ///< issued, landing not recorded
  std::size_t unpaired_compute = 0;  ///< a begin without end or an end without begin
  std::size_t dropped = 0;           ///< events past a lane's capacity
  std::size_t overlapping_copies = 0;  ///< see copies_overlapping_compute()
};

/// @brief Number of copies that were in flight (issued, not yet landed) while a compute phase
///        of the same block was open, with a positive overlap in time. This is the overlap an
///        asynchronous pipeline exists for: a synchronous kernel, or a one-stage ring, has none.
std::size_t copies_overlapping_compute(const DecodedTrace& trace);

/// @brief The Chrome trace-event JSON for one or more kernels. Each kernel's times start at
///        its own first event, so kernels traced one after another line up at 0 (each in its
///        own processes, named "<variant> SM <n>").
std::string chrome_trace_json(const std::vector<KernelTrace>& kernels, const TraceFileInfo& info,
                              TraceSummary* summary = nullptr);

/// @brief Write chrome_trace_json() to @p path through a temporary file and a rename, so a
///        reader never sees half a file.
/// @return false with a one-line reason in @p error when the file cannot be written
bool write_chrome_trace(const std::string& path, const std::vector<KernelTrace>& kernels,
                        const TraceFileInfo& info, std::string& error,
                        TraceSummary* summary = nullptr);

/// @brief Short lower-case name of an event kind ("copy issued", "wait done", ...).
const char* trace_event_name(TraceEvent kind);

}  // namespace tut
