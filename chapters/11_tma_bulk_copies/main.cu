/// @file main.cu
/// @brief Chapter 11's program: the Problem (chapter 01's stream plus an error word), the
///        16-byte rules of cp.async.bulk, the check sizes, the variant registry, the timeline,
///        and main. The lesson is in kernels.cuh and README.md; broken.cuh holds the negatives.
//
// What the program does: for each variant, poison the output, launch, compare every word with
// the CPU reference (chapter 01's tile reversal), then time it (run_chapter, common/harness.cuh).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "broken.cuh"
#include "common/bounded_wait.cuh"
#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/timeline.cuh"
#include "common/timeline_run.cuh"
#include "common/workload_stencil_stream.cuh"

namespace ch11 {

// cp.async.bulk needs source and destination addresses 16-byte aligned and a size that is a
// multiple of 16 bytes (PTX ISA, "cp.async.bulk"). Breaking them is undefined behaviour on the
// device (an illegal-instruction or misaligned-address error at best), so the bulk-copy
// variants refuse up front, naming the rule.
inline std::string bulk_copy_violation(const void* dst, const void* src, std::size_t bytes) {
  if (reinterpret_cast<std::uintptr_t>(src) % 16 != 0)
    return "source address is not 16-byte aligned";
  if (reinterpret_cast<std::uintptr_t>(dst) % 16 != 0)
    return "destination address is not 16-byte aligned";
  if (bytes % 16 != 0) return "size " + std::to_string(bytes) + " is not a multiple of 16 bytes";
  return "";
}

inline void require_bulk_copy_rules(const void* dst, const void* src, std::size_t bytes) {
  const std::string why = bulk_copy_violation(dst, src, bytes);
  if (why.empty()) return;
  std::fprintf(stderr,
               "ch11: error: cp.async.bulk needs 16-byte aligned addresses and a size that is a "
               "multiple of 16 bytes: %s\n", why.c_str());
  std::exit(tut::kExitFail);
}

// Check sizes: tiny; one vector; short of a 4 KiB sub-tile; short of a 16 KiB TMA tile; tiles
// plus a ragged tail; 1 MiB + 112 B (65 tiles of 16 KiB, fewer than one per block on a full
// grid, so most blocks get no tile or one and the blocks that own none must exit cleanly);
// 8 MiB. The largest one feeds the
// harness's lap check (two blocks): 8 MiB is 512 tiles of 16 KiB, 256 per block, 64 laps of
// v1's 4-slot ring and 32 of v5's 8 slots; v6 (32 KiB slots, 4 deep) gets 32 laps, v7 (4 KiB
// slots, 16 deep) 64, v0 (4 KiB, 8 deep) 128. Every ring wraps at least 3 times.
inline const std::vector<std::uint64_t> kCheckSizes = {
    16, 48, 4096 - 16, 16384 - 16, 3 * 16384 + 4096 + 80, (1u << 20) + 16 * 7, 8u << 20};

// Laps a block of a `blocks`-block grid makes around a ring of `stages` slots of `slot_bytes`
// at `size` bytes (the fewest, for the block with the fewest tiles).
inline std::uint64_t ring_laps(std::uint64_t size, std::uint64_t slot_bytes, int stages,
                               int blocks) {
  const std::uint64_t tiles = (size + slot_bytes - 1) / slot_bytes;
  return tiles / blocks / stages;
}

// Chapter 01's stream (one input and one output buffer of `size` bytes, every 4 KiB sub-tile
// reversed in 16-byte units; bytes moved = size read + size written), plus the device error
// word the bounded waits report into.
using Stream = tut::stencil_stream::Problem;
static_assert(SUB_VECS == tut::stencil_stream::kStreamTileVecs, "chapter 01's reversal unit");

struct Problem : Stream {
  explicit Problem(const tut::RunConfig& cfg) : Stream(cfg) {
    require_bulk_copy_rules(d_out.data(), d_in.data(), cfg.size);  // once, not per launch
  }
  void poison(cudaStream_t s) {
    Stream::poison(s);
    d_error.clear(s);
  }
  // A timed-out wait fails the check even where every word matches (it may have given up
  // after the last store); report() prints one sentence per distinct wait that gave up.
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    const unsigned err = d_error.report(s);
    tut::VerifyResult r = Stream::verify(s, tut::stencil_stream::kReverseTiles);
    if (err != 0 && r.mismatches == 0) r.mismatches = 1;
    return r;
  }

  const void* in() const { return d_in.data(); }
  void* out() { return d_out.data(); }
  unsigned* err() { return d_error.data(); }
  int blocks_per_sm() const { return tut::blocks_per_sm(cfg); }  // --blocks-per-sm (_low rows)

  tut::ErrorWord d_error;
};


// The variant registry, in reading order. The _low rows run at --blocks-per-sm blocks per SM
// (default 1), the others at full occupancy (0). v5-v7 are v1's kernel in other ring shapes
// (over 48 KiB of dynamic shared memory each).
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_cpasync_full", "v0 cp.async 8x4K, full occ",
        "baseline: 16 B LDGSTS per thread into an 8 x 4 KiB ring, as many blocks per SM as fit",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v0(p.in(), p.out(), p.cfg.size, p.sms(), 0, s);
        });
  v.add("v0_cpasync_low", "v0 cp.async 8x4K, low occ",
        "the same at --blocks-per-sm blocks per SM (default 1)", [](Problem& p, cudaStream_t s) {
          launch_stream_v0(p.in(), p.out(), p.cfg.size, p.sms(), p.blocks_per_sm(), s);
        });
  v.add("v1_bulk_ptx_full", "v1 bulk PTX 4x16K, full occ",
        "raw PTX cp.async.bulk, one issuing thread, full/empty mbarrier ring; full occupancy",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), 0, s);
        });
  v.add("v1_bulk_ptx_low", "v1 bulk PTX 4x16K, low occ",
        "the same at --blocks-per-sm blocks per SM", [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.blocks_per_sm(), s);
        });
  v.add("v2_bulk_cccl_low", "v2 bulk cuda::ptx, low occ",
        "v1 written with cuda::ptx wrappers, at --blocks-per-sm blocks per SM",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.blocks_per_sm(), s);
        });
  v.add("v3_bulk_store_low", "v3 bulk load+store, low occ",
        "reverse into shared, fence.proxy.async, bulk store + wait_group.read; low occupancy",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v3(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.blocks_per_sm(), s);
        });
  v.add("v4_memcpy_async_low", "v4 memcpy_async+barrier, low",
        "cuda::memcpy_async(aligned_size_t<16>) on a cuda::barrier -> cp.async.bulk on sm_90",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v4(p.in(), p.out(), p.cfg.size, p.sms(), p.blocks_per_sm(), s);
        });
  v.add("v5_bulk_8x16K_low", "v5 bulk PTX 8x16K, low occ",
        "v1's ring with 8 slots of 16 KiB: 128 KiB in flight per block, at --blocks-per-sm",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1<8, 1024>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(),
                                    p.blocks_per_sm(), s);
        });
  v.add("v6_bulk_4x32K_low", "v6 bulk PTX 4x32K, low occ",
        "v1's ring with 4 slots of 32 KiB: 128 KiB, half the issues of v5, at --blocks-per-sm",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1<4, 2048>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(),
                                    p.blocks_per_sm(), s);
        });
  v.add("v7_bulk_16x4K_low", "v7 bulk PTX 16x4K, low occ",
        "v1's ring with 16 slots of 4 KiB: v1's 64 KiB, 4x finer refills, 4x the issues",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1<16, 256>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(),
                                    p.blocks_per_sm(), s);
        });
  add_negatives(v);  // broken.cuh
  return v.list;
}

// --timeline: v1's ring with 4 slots (the lesson) and with 2 (too few to cover a copy's
// latency), traced on a small problem (at most kTimelineBytes: 64 MiB is 31 tiles per block at
// 1 block per SM) for the blocks on SMs 0 and 1. Each traced run is checked like any other.
constexpr std::uint64_t kTimelineBytes = 64u << 20;

template <int RING_STAGES>
bool trace_v1(Problem& p, cudaStream_t s, const std::string& key, const std::string& title,
              std::vector<tut::KernelTrace>& out) {
  const unsigned grid =
      stream_v1_grid<RING_STAGES, TILE_VECS, tut::TraceOn>(p.sms(), p.blocks_per_sm());
  tut::TraceRecorder rec({grid, 2, 256});
  tut::KernelTrace kt{key, title, {"thread 0: producer", "thread 0: consumer"}, {}};
  return tut::trace_checked_run(p, 0, s, rec, std::move(kt), out, [&](cudaStream_t st, auto trace) {
    launch_stream_v1<RING_STAGES, TILE_VECS>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(),
                                              p.blocks_per_sm(), st, trace);
  });
}

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  Problem p(tut::timeline_config(run, kTimelineBytes));
  std::vector<tut::KernelTrace> kernels;
  bool ok = trace_v1<4>(p, s, "v1_bulk_ptx_low", "v1 bulk PTX 4x16K, low occ", kernels);
  ok = trace_v1<2>(p, s, "v1_bulk_ptx_2x16K_low", "v1's ring with 2 slots of 16K", kernels) && ok;
  return tut::write_chapter_timeline(path, kernels, p.cfg, "ch11_tma_bulk_copies",
                                     " --blocks-per-sm=" + std::to_string(p.blocks_per_sm())) &&
         ok;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The lesson (the tour's pair): one issuing thread per block at 1 block/SM against 256
// cp.async threads.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch11_tma_bulk_copies", variants(), "v1_bulk_ptx_low", "v0_cpasync_low",
      "Chapter 11: TMA bulk copies (cp.async.bulk + mbarrier transaction counts)");
  ch.min_cc_major = 9;  // cp.async.bulk, mbarrier expect_tx: sm_90
  tut::set_buffer_sizes(ch, 16, ", the bulk-copy size rule");
  ch.check_sizes = kCheckSizes;
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM for the *_low variants")};
  ch.timeline = record_timeline;  // --timeline: v1's ring traced
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch11::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
