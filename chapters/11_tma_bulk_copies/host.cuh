// Chapter 11, host side: the 16-byte rules of cp.async.bulk, the CPU reference, the Problem,
// the check sizes and the variant list. main.cu includes kernels.cuh and more_kernels.cuh
// before this file.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/bounded_wait.cuh"
#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/shared_scrub.cuh"
#include "common/timeline.cuh"

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

// CPU reference: every 4 KiB sub-tile (256 x 16 B) reversed in 16-byte units, the last one
// (possibly partial) within itself.
inline std::vector<std::uint32_t> reference_reverse_tiles(const std::vector<std::uint32_t>& in) {
  const std::size_t n_vecs = in.size() / 4;
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t base = 0; base < n_vecs; base += SUB_VECS) {
    const std::size_t count = std::min<std::size_t>(SUB_VECS, n_vecs - base);
    for (std::size_t t = 0; t < count; ++t)
      for (int w = 0; w < 4; ++w) out[(base + t) * 4 + w] = in[(base + count - 1 - t) * 4 + w];
  }
  return out;
}

// Check sizes: tiny; one vector; short of a 4 KiB sub-tile; short of a 16 KiB TMA tile; tiles
// plus a ragged tail; more tiles than one wave of blocks; 8 MiB. The largest one feeds the
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

// One input and one output buffer of `size` bytes, plus the device error word the bounded
// waits report into. Bytes moved = size read + size written.
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    d_in.upload(h_in);
    require_bulk_copy_rules(d_out.data(), d_in.data(), cfg.size);  // once, not per launch
  }
  void poison(cudaStream_t s) {
    d_out.poison(s);
    d_error.clear(s);
  }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    if (want.empty()) want = reference_reverse_tiles(h_in);
    return tut::compare_words_and_error(s, d_out, want, d_error);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }

  const void* in() const { return d_in.data(); }
  void* out() { return d_out.data(); }
  unsigned* err() { return d_error.data(); }
  int sms() const { return cfg.device.sm_count; }
  int low() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  tut::ErrorWord d_error;
  std::vector<std::uint32_t> h_in, want;
};

inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_cpasync_full", "v0 cp.async 8x4K, full occ",
        "baseline: 16 B LDGSTS per thread into an 8 x 4 KiB ring, as many blocks per SM as fit",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v0(p.in(), p.out(), p.cfg.size, p.sms(), 0, s);
        });
  v.add("v0_cpasync_low", "v0 cp.async 8x4K, low occ",
        "the same at --blocks-per-sm blocks per SM (default 1)",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v0(p.in(), p.out(), p.cfg.size, p.sms(), p.low(), s);
        });
  v.add("v1_bulk_ptx_full", "v1 bulk PTX 4x16K, full occ",
        "raw PTX cp.async.bulk, one issuing thread, full/empty mbarrier ring; full occupancy",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), 0, s);
        });
  v.add("v1_bulk_ptx_low", "v1 bulk PTX 4x16K, low occ",
        "the same at --blocks-per-sm blocks per SM",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.low(), s);
        });
  v.add("v2_bulk_cccl_low", "v2 bulk cuda::ptx, low occ",
        "v1 written with cuda::ptx wrappers, at --blocks-per-sm blocks per SM",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.low(), s);
        });
  v.add("v3_bulk_store_low", "v3 bulk load+store, low occ",
        "reverse into shared, fence.proxy.async, bulk store + wait_group.read; low occupancy",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v3(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.low(), s);
        });
  v.add("v4_memcpy_async_low", "v4 memcpy_async+barrier, low",
        "cuda::memcpy_async(aligned_size_t<16>) on a cuda::barrier -> cp.async.bulk on sm_90",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v4(p.in(), p.out(), p.cfg.size, p.sms(), p.low(), s);
        });
  // v5-v7: v1's kernel in other ring shapes (more than 48 KiB of dynamic shared memory each)
  v.add("v5_bulk_8x16K_low", "v5 bulk PTX 8x16K, low occ",
        "v1's ring with 8 slots of 16 KiB: 128 KiB in flight per block, at --blocks-per-sm",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1<8, 1024>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.low(), s);
        });
  v.add("v6_bulk_4x32K_low", "v6 bulk PTX 4x32K, low occ",
        "v1's ring with 4 slots of 32 KiB: 128 KiB, half the issues of v5, at --blocks-per-sm",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1<4, 2048>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.low(), s);
        });
  v.add("v7_bulk_16x4K_low", "v7 bulk PTX 16x4K, low occ",
        "v1's ring with 16 slots of 4 KiB: v1's 64 KiB, 4x finer refills, 4x the issues",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1<16, 256>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.low(), s);
        });
  v.add("v8_wrong_tx", "v8 BROKEN: expect_tx +16 B",
        "negative: announces 16 bytes too many; the phase never completes; bounded wait gives up",
        [](Problem& p, cudaStream_t s) {
          launch_stream_negative(stream_v8_wrong_tx_kernel, p.in(), p.out(), p.cfg.size, p.err(),
                                 p.sms(), s);
        }).negative = true;
  v.add("v9_wrong_parity", "v9 BROKEN: producer parity",
        "negative: producer waits on empty[] parity n&1 instead of (n&1)^1; deadlock in lap 0",
        [](Problem& p, cudaStream_t s) {
          launch_stream_negative(stream_v9_wrong_parity_kernel, p.in(), p.out(), p.cfg.size,
                                 p.err(), p.sms(), s);
        }).negative = true;
  v.add("v10_empty_count", "v10 BROKEN: empty count 256",
        "negative: empty[] expects 256 arrivals, gets 8 per phase; deadlock from the second lap",
        [](Problem& p, cudaStream_t s) {
          launch_stream_negative(stream_v10_empty_count_kernel, p.in(), p.out(), p.cfg.size,
                                 p.err(), p.sms(), s);
        }).negative = true;
  return v.list;
}

// --timeline: v1's ring with 4 slots (the lesson) and with 2 (too few to cover a copy's
// latency), traced on a small problem (at most kTimelineBytes: 64 MiB is 31 tiles per block at
// 1 block per SM) for the blocks on SMs 0 and 1. Each traced run is checked like any other.
constexpr std::uint64_t kTimelineBytes = 64u << 20;

template <int STAGES>
bool trace_v1(Problem& p, cudaStream_t s, const std::string& key, const std::string& title,
              std::vector<tut::KernelTrace>& out) {
  const unsigned grid = stream_v1_grid<STAGES, TMA_TILE_VECS, tut::TraceOn>(p.sms(), p.low());
  tut::TraceRecorder rec({grid, 2, 256});
  rec.clear(s);
  p.poison(s);
  tut::scrub_shared_memory(s);
  launch_stream_v1<STAGES, TMA_TILE_VECS>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(), p.low(),
                                          s, rec.arg());
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(s));
  const tut::VerifyResult r = p.verify(s, 0);
  if (!r.ok()) {
    std::printf("[%s] traced run: %s\n%s", key.c_str(), r.summary().c_str(), r.details().c_str());
    return false;
  }
  tut::KernelTrace kt{key, title, {"thread 0: producer", "thread 0: consumer"}, rec.download(s)};
  tut::measure_trace_overhead(  // the same launch untraced and traced, median of 20 each
      kt, s, 3, 20,
      [&](cudaStream_t st) {
        launch_stream_v1<STAGES, TMA_TILE_VECS>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(),
                                                p.low(), st);
      },
      [&](cudaStream_t st) {
        launch_stream_v1<STAGES, TMA_TILE_VECS>(p.in(), p.out(), p.cfg.size, p.err(), p.sms(),
                                                p.low(), st, rec.arg());
      });
  out.push_back(std::move(kt));
  return true;
}

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  tut::RunConfig cfg = run;
  cfg.size = std::min<std::uint64_t>(run.size, kTimelineBytes);
  Problem p(cfg);
  std::vector<tut::KernelTrace> kernels;
  bool ok = trace_v1<4>(p, s, "v1_bulk_ptx_low", "v1 bulk PTX 4x16K, low occ", kernels);
  ok = trace_v1<2>(p, s, "v1_bulk_ptx_2x16K_low", "v1's ring with 2 slots of 16K", kernels) && ok;
  const std::string command = "ch11_tma_bulk_copies --timeline=" + path + " --size=" +
                              std::to_string(cfg.size) + " --blocks-per-sm=" +
                              std::to_string(p.low());
  return tut::write_timeline(path, kernels, {"ch11_tma_bulk_copies", cfg.device.name, command}) &&
         ok;
}

}  // namespace ch11
