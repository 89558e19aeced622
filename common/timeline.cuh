/// @file timeline.cuh
/// @brief In-kernel timelines: a kernel records, for a few blocks, when each copy was issued,
///        when each wait began and returned, when each compute phase began and ended, and
///        when each ring slot was released. The host writes the result as a Chrome trace
///        (timeline.hpp), which Perfetto opens and tools/plot_timeline.py draws.
///
/// Tracing is a policy type, so the timed kernels pay nothing for it:
/// @code
///   template <int STAGES, class Tracing = tut::TraceOff>
///   __global__ void ring_kernel(const uint4* in, uint4* out, std::size_t n, Tracing trace = {}) {
///     auto lane = trace.lane(0, threadIdx.x == 0);   // one recording thread per block
///     ...
///     lane.copy_issued(j + STAGES - 1, slot_of_next);  // right after the copy is issued
///     lane.wait_begun(j, slot);                        // before the wait
///     lane.wait_done(j, slot);                         // after the wait (and its barrier)
///     lane.compute_begun(j, slot);
///     lane.compute_ended(j, slot);
///     lane.slot_released(j, slot);                     // after the arrive / trailing barrier
///     ...
///     lane.close();                                    // last statement of the lane
///   }
///   ring_kernel<4><<<grid, block, smem, s>>>(in, out, n);                     // timed: untraced
///   ring_kernel<4, tut::TraceOn><<<grid, block, smem, s>>>(in, out, n, rec.arg());  // traced
/// @endcode
/// With tut::TraceOff every call is an empty inline function of an empty object, and the empty
/// parameter comes last: the untraced instance has the SASS of the kernel without the calls
/// (test timeline_zero_cost). A chapter asserts it in its asm_expect.txt (the TraceOff instance
/// has no `%smid` in PTX, no SR_VIRTUALSMID in SASS and, unless the kernel has bounded waits,
/// no SR_GLOBALTIMERLO), and prints the traced and untraced times of the same launch, so the
/// cost of tracing when it is on is measured (docs/timelines.md).
///
/// Which blocks are traced: those with blockIdx.x < layout.max_blocks that run on an SM whose
/// %smid is below traced_sms (0 means every SM). Each recording thread decides on its own,
/// with no atomics and no barrier, so tracing adds no synchronisation to the kernel. Tracing
/// "the blocks on SMs 0 and 1" rather than "blocks 0 and 1" shows what shares an SM: at two
/// blocks per SM both residents of SM 0, and, in a grid larger than one wave, the blocks that
/// follow each other on it. The buffer has a region for every block below max_blocks, so give
/// it the grid size (a persistent grid is a few hundred blocks; a few MiB of records).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "timeline.hpp"
#include "timer.cuh"

namespace tut {

/// @brief Tracing off: every call compiles to nothing.
struct TraceOff {
  static constexpr bool kEnabled = false;
  /// @brief A recording thread that records nothing.
  struct Lane {
    __device__ __forceinline__ void copy_issued(std::uint32_t, int = kNoSlot) const {}
    __device__ __forceinline__ void wait_begun(std::uint32_t, int = kNoSlot) const {}
    __device__ __forceinline__ void wait_done(std::uint32_t, int = kNoSlot) const {}
    __device__ __forceinline__ void compute_begun(std::uint32_t, int = kNoSlot) const {}
    __device__ __forceinline__ void compute_ended(std::uint32_t, int = kNoSlot) const {}
    __device__ __forceinline__ void slot_released(std::uint32_t, int = kNoSlot) const {}
    __device__ __forceinline__ void close() const {}
  };
  /// @brief The lane of this thread (see TraceOn::lane()).
  __device__ __forceinline__ Lane lane(std::uint32_t, bool) const { return {}; }
};

namespace detail {

/// %globaltimer with a memory clobber, so the compiler keeps the stamp where it is written,
/// between the memory operations it brackets (the traced instance only).
__device__ __forceinline__ unsigned long long trace_clock_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
  return t;
}

__device__ __forceinline__ std::uint32_t trace_smid() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

/// One 16-byte store: {t_ns low, t_ns high, tile, kind | slot << 8} (the TraceRecord layout).
__device__ __forceinline__ void trace_store(TraceRecord* at, unsigned long long t_ns,
                                            std::uint32_t tile, TraceEvent kind, int slot) {
  const std::uint32_t kind_slot =
      static_cast<std::uint32_t>(kind) | (static_cast<std::uint32_t>(slot & 0xFF) << 8);
  *reinterpret_cast<uint4*>(at) =
      make_uint4(static_cast<std::uint32_t>(t_ns), static_cast<std::uint32_t>(t_ns >> 32), tile,
                 kind_slot);
}

}  // namespace detail

/// @brief Tracing on: the kernel argument that says where the records go.
struct TraceOn {
  static constexpr bool kEnabled = true;
  TraceRecord* records = nullptr;  ///< TraceLayout::total_records() records, zeroed
  std::uint32_t max_blocks = 0;    ///< regions exist for blockIdx.x < max_blocks
  std::uint32_t lanes = 1;         ///< recording threads per block
  std::uint32_t capacity = 0;      ///< events per lane; later ones are counted, not written
  std::uint32_t traced_sms = 0;    ///< trace blocks on SMs with %smid < traced_sms (0: all)

  /// @brief A recording thread. Holds its region and its event count in registers; each event
  ///        is one %globaltimer read and one 16-byte store.
  class Lane {
   public:
    __device__ __forceinline__ Lane(TraceRecord* region, std::uint32_t capacity, std::uint32_t sm)
        : region_(region), capacity_(capacity) {
      if (region_) detail::trace_store(region_, detail::trace_clock_ns(), sm, TraceEvent::kLaneOpen, kNoSlot);
    }
    /// @brief Right after this lane issued the copy of tile @p tile into @p slot.
    __device__ __forceinline__ void copy_issued(std::uint32_t tile, int slot = kNoSlot) {
      event(TraceEvent::kCopyIssued, tile, slot);
    }
    /// @brief Right before this lane waits for tile @p tile.
    __device__ __forceinline__ void wait_begun(std::uint32_t tile, int slot = kNoSlot) {
      event(TraceEvent::kWaitBegin, tile, slot);
    }
    /// @brief Right after the wait (and any barrier that makes the data visible) returned.
    __device__ __forceinline__ void wait_done(std::uint32_t tile, int slot = kNoSlot) {
      event(TraceEvent::kWaitDone, tile, slot);
    }
    __device__ __forceinline__ void compute_begun(std::uint32_t tile, int slot = kNoSlot) {
      event(TraceEvent::kComputeBegin, tile, slot);
    }
    __device__ __forceinline__ void compute_ended(std::uint32_t tile, int slot = kNoSlot) {
      event(TraceEvent::kComputeEnd, tile, slot);
    }
    /// @brief Right after the slot was handed back (arrive on "empty", trailing barrier).
    __device__ __forceinline__ void slot_released(std::uint32_t tile, int slot = kNoSlot) {
      event(TraceEvent::kSlotReleased, tile, slot);
    }
    /// @brief The lane's last event: its end time and how many events it attempted (so the
    ///        host knows how many were dropped past the capacity).
    __device__ __forceinline__ void close() {
      if (region_) detail::trace_store(region_ + 1, detail::trace_clock_ns(), count_, TraceEvent::kLaneClose, kNoSlot);
    }

   private:
    __device__ __forceinline__ void event(TraceEvent kind, std::uint32_t tile, int slot) {
      if (!region_) return;
      if (count_ < capacity_) detail::trace_store(region_ + 2 + count_, detail::trace_clock_ns(), tile, kind, slot);
      ++count_;
    }
    TraceRecord* region_;  // nullptr: this thread does not record
    std::uint32_t capacity_;
    std::uint32_t count_ = 0;
  };

  /// @brief The lane @p lane_id of this block; only a thread with @p recorder true records
  ///        (e.g. `threadIdx.x == 0`, or `lane_in_warp == 0` for one lane per warp), and only
  ///        in a traced block.
  __device__ __forceinline__ Lane lane(std::uint32_t lane_id, bool recorder) const {
    TraceRecord* region = nullptr;
    std::uint32_t sm = 0;
    if (recorder && records != nullptr && blockIdx.x < max_blocks && lane_id < lanes) {
      sm = detail::trace_smid();
      if (traced_sms == 0 || sm < traced_sms)
        region = records + (static_cast<std::uint64_t>(blockIdx.x) * lanes + lane_id) *
                               (static_cast<std::uint64_t>(capacity) + 2);
    }
    return Lane(region, capacity, sm);
  }
};

/// @brief The host side of one traced launch: owns the device buffer.
class TraceRecorder {
 public:
  /// @param layout     regions: max_blocks (give the grid size), lanes, capacity per lane
  /// @param traced_sms trace the blocks on SMs 0 .. traced_sms-1 (0: every block < max_blocks)
  explicit TraceRecorder(const TraceLayout& layout, std::uint32_t traced_sms = 2)
      : layout_(layout), traced_sms_(traced_sms),
        buffer_(static_cast<std::size_t>(layout.total_records())) {}

  /// @brief The kernel argument. Call clear() before each traced launch.
  TraceOn arg() {
    TraceOn t;
    t.records = buffer_.data();
    t.max_blocks = layout_.max_blocks;
    t.lanes = layout_.lanes;
    t.capacity = layout_.capacity;
    t.traced_sms = traced_sms_;
    return t;
  }
  /// @brief Zero the buffer (an untraced region reads as kind 0), enqueued on @p s.
  void clear(cudaStream_t s) {
    if (buffer_.bytes()) CUDA_CHECK(cudaMemsetAsync(buffer_.data(), 0, buffer_.bytes(), s));
  }
  /// @brief Download and decode, after the work on @p s finished.
  DecodedTrace download(cudaStream_t s) const { return decode_trace(buffer_.download(s), layout_); }
  const TraceLayout& layout() const { return layout_; }

 private:
  TraceLayout layout_;
  std::uint32_t traced_sms_;
  DeviceBuffer<TraceRecord> buffer_;
};

/// @brief Measure what tracing costs: the median of @p repeats launches of @p untraced and of
///        @p traced (each a callable enqueueing one launch on the stream), one after the other
///        on the same data; fills kt.untraced_ms / kt.traced_ms and prints one line.
template <class Untraced, class Traced>
void measure_trace_overhead(KernelTrace& kt, cudaStream_t s, int warmup, int repeats,
                            Untraced&& untraced, Traced&& traced) {
  const Timing off = time_on_stream(s, warmup, repeats, untraced);
  const Timing on = time_on_stream(s, warmup, repeats, traced);
  kt.untraced_ms = off.median_ms;
  kt.traced_ms = on.median_ms;
  std::printf("timeline %-24s untraced %.4f ms, traced %.4f ms (%+.1f%%; median of %d)\n",
              kt.variant.c_str(), off.median_ms, on.median_ms,
              off.median_ms > 0 ? 100.0 * (on.median_ms / off.median_ms - 1.0) : 0.0, repeats);
}

/// @brief Write the traces and print where they went and what they show; false (with a
///        message) when the file cannot be written.
inline bool write_timeline(const std::string& path, const std::vector<KernelTrace>& kernels,
                           const TraceFileInfo& info) {
  std::string error;
  TraceSummary sum;
  if (!write_chrome_trace(path, kernels, info, error, &sum)) {
    std::fprintf(stderr, "error: --timeline: %s\n", error.c_str());
    return false;
  }
  std::printf("timeline: %s (%zu kernel(s), %zu copy spans, %zu compute spans, %zu copies "
              "in flight during compute, %zu events dropped past the window)\n",
              path.c_str(), kernels.size(), sum.copy_spans, sum.compute_spans,
              sum.overlapping_copies, sum.dropped);
  return true;
}

}  // namespace tut
