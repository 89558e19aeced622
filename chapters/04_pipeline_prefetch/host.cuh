// Chapter 04, host side: the CPU reference, the Problem, the variant registry and the sizes.
// The kernels and launchers are in kernels.cuh.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/shared_scrub.cuh"
#include "common/timeline.cuh"
#include "kernels.cuh"

namespace ch04 {

// ---------------------------------------------------------------------------------------------
// CPU reference: each 256-uint4 tile reversed (the last, partial tile within itself), then
// `rounds` of work_word on every word.
// ---------------------------------------------------------------------------------------------
// `rounds` steps of x -> a*x + c (mod 2^32) are one affine map x -> A*x + C, so the reference
// composes them once and applies one multiply-add per word, at any --rounds. (The compiler does
// the same four rounds at a time: see the README's SASS section.)
struct Affine {
  std::uint32_t a = 1, c = 0;
};
inline Affine compose_rounds(int rounds) {
  Affine m;
  for (int r = 0; r < rounds; ++r) m = Affine{m.a * 1664525u, m.c * 1664525u + 1013904223u};
  return m;
}

inline std::vector<std::uint32_t> reference_reverse_tiles(const std::vector<std::uint32_t>& in,
                                                          int rounds) {
  const Affine m = compose_rounds(rounds);
  const std::size_t n_vecs = in.size() / 4;
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t base = 0; base < n_vecs; base += TILE_VECS) {
    const std::size_t count = std::min<std::size_t>(TILE_VECS, n_vecs - base);
    for (std::size_t t = 0; t < count; ++t)
      for (int w = 0; w < 4; ++w)
        out[(base + t) * 4 + w] = m.a * in[(base + count - 1 - t) * 4 + w] + m.c;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The problem: one input and one output buffer of `size` bytes, as uint4.
// ---------------------------------------------------------------------------------------------
enum Reference : int { kCopy = 0, kWork = 1 };  // plain reversal; reversal + `rounds` of work

struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words),
        rounds(static_cast<int>(cfg.extra("rounds"))) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    const std::vector<std::uint32_t> got = d_out.download(s);
    const int r = reference == kCopy ? 0 : rounds;
    if (want.empty() || want_rounds != r) {  // one reference at a time (the sweep varies rounds)
      want = reference_reverse_tiles(h_in, r);
      want_rounds = r;
    }
    return tut::compare_exact_words(got.data(), want.data(), n_words);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }

  const uint4* in_vecs() const { return reinterpret_cast<const uint4*>(d_in.data()); }
  uint4* out_vecs() { return reinterpret_cast<uint4*>(d_out.data()); }
  std::size_t n_vecs() const { return n_words / 4; }
  int sms() const { return cfg.device.sm_count; }
  int low_blocks_per_sm() const { return static_cast<int>(cfg.extra("blocks-per-sm")); }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  int rounds;  // the compute step's rounds for kWork variants (--rounds; the sweep sets it)
  std::vector<std::uint32_t> h_in, want;
  int want_rounds = -1;
};

// ---------------------------------------------------------------------------------------------
// The instantiated stage counts, for the registry and the sweeps
// ---------------------------------------------------------------------------------------------
using PipelineLaunch = void (*)(const uint4*, uint4*, std::size_t, int, int, int, cudaStream_t);
struct StageKernel {
  int stages;
  PipelineLaunch launch;
};
inline std::vector<StageKernel> stage_kernels() {
  return {{1, launch_stream_v2<1>}, {2, launch_stream_v2<2>},   {3, launch_stream_v2<3>},
          {4, launch_stream_v2<4>}, {6, launch_stream_v2<6>},   {8, launch_stream_v2<8>},
          {12, launch_stream_v2<12>}, {16, launch_stream_v2<16>}};
}
constexpr int kDeepestStages = 16;

// ---------------------------------------------------------------------------------------------
// The variant registry. Every stage count at --blocks-per-sm (default 1: the regime where the
// pipeline depth is the only source of bytes in flight), a few at full occupancy.
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_cg_double_low", "v0 cg 2 buffers (ch03), low occ",
        "chapter 03: collective copies, two buffers, wait_prior<1>; --blocks-per-sm",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v0(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(), s);
        }).reference = kCopy;
  v.add("v1_sync_low", "v1 sync (ch01), low occ",
        "chapter 01: LDG->STS, BAR, LDS->STG at --blocks-per-sm (the yardstick)",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.low_blocks_per_sm(), s);
        }).reference = kCopy;
  v.add("v1_sync_full", "v1 sync (ch01), full occ", "chapter 01's kernel at full occupancy",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
        }).reference = kCopy;
  for (const StageKernel& k : stage_kernels()) {
    const std::string n = std::to_string(k.stages);
    const PipelineLaunch launch = k.launch;
    v.add("v2_pipe_s" + n + "_low", "v2 pipeline " + n + "-stage, low occ",
          "cuda::pipeline, " + n + " x 4 KiB ring, " + n + " tile(s) in flight at the wait (wait_prior<" +
              std::to_string(k.stages - 1) + ">), --blocks-per-sm, --rounds",
          [launch](Problem& p, cudaStream_t s) {
            launch(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), p.low_blocks_per_sm(), s);
          }).reference = kWork;
  }
  for (const StageKernel& k : stage_kernels()) {
    if (k.stages != 1 && k.stages != 2 && k.stages != 4 && k.stages != 8 && k.stages != 16) continue;
    const std::string n = std::to_string(k.stages);
    const PipelineLaunch launch = k.launch;
    v.add("v2_pipe_s" + n + "_full", "v2 pipeline " + n + "-stage, full occ",
          "the same kernel with as many blocks per SM as its shared memory allows",
          [launch](Problem& p, cudaStream_t s) {
            launch(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), 0, s);
          }).reference = kWork;
  }
  tut::Variant<Problem>& v8 = v.add("v8_wrap_bug", "v8 BROKEN: slot wraps to 1",
        "negative: 4-stage ring whose producer wraps to slot 1 (right on the first lap only); must FAIL",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v8(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                           p.low_blocks_per_sm(), s);
        });
  v8.reference = kWork;
  v8.negative = true;
  tut::Variant<Problem>& v9 = v.add("v9_wrong_wait", "v9 BROKEN: wait_prior<STAGES>",
        "negative: 1 stage waiting on prior<1> instead of prior<0>; must FAIL",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v9(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), 1, s);
        });
  v9.reference = kWork;
  v9.negative = true;
  return v.list;
}

// ---------------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------------
// Tiny (one uint4), 3 uint4, one short of a tile, tiles plus a ragged tail, just over 1 MiB,
// and 8 MiB. The largest is for the rings: 8 MiB = 2048 tiles of 4 KiB; in the harness's lap
// check (2 blocks) each block walks 1024 tiles, 64 laps of the deepest (16-slot) ring and far
// more than the 3 laps (2 x 3 x 16 = 96 tiles in all) the lap check asks for; at 1 block per SM
// on 132 SMs each block still walks 15-16 tiles, so the 4-slot rings wrap there too.
inline const std::vector<std::uint64_t>& check_sizes() {
  static const std::vector<std::uint64_t> sizes = {16, 48, 4096 - 16, 3 * 4096 + 80,
                                                   (1u << 20) + 16 * 7, 8u << 20};
  return sizes;
}

// ---------------------------------------------------------------------------------------------
// --timeline: chapter 01's synchronous kernel and the ring with 1, 2 and 8 slots, at
// --blocks-per-sm (default 1) and --rounds, traced on a small problem (at most kTimelineBytes:
// 16 MiB is 31 tiles per block at 1 block per SM) for the blocks on SMs 0 and 1. Each traced
// run is checked like any other run.
// ---------------------------------------------------------------------------------------------
constexpr std::uint64_t kTimelineBytes = 16u << 20;

template <int STAGES>  // 0: v1, the synchronous kernel
bool trace_one(Problem& p, cudaStream_t s, const std::string& key, const std::string& title,
               std::vector<tut::KernelTrace>& out) {
  const unsigned grid = traced_grid<STAGES>(p.sms(), p.low_blocks_per_sm());
  const int rounds = STAGES == 0 ? 0 : p.rounds;
  tut::TraceRecorder rec({grid, 1, 256});
  rec.clear(s);
  p.poison(s);
  tut::scrub_shared_memory(s);
  launch_traced<STAGES>(p.in_vecs(), p.out_vecs(), p.n_vecs(), rounds, grid, rec.arg(), s);
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(s));
  const tut::VerifyResult r = p.verify(s, STAGES == 0 ? kCopy : kWork);
  if (!r.ok()) {
    std::printf("[%s] traced run: %s\n%s", key.c_str(), r.summary().c_str(), r.details().c_str());
    return false;
  }
  tut::KernelTrace kt{key, title, {"block (thread 0)"}, rec.download(s)};
  tut::measure_trace_overhead(  // the same launch untraced and traced, median of 20 each
      kt, s, 3, 20,
      [&](cudaStream_t st) {
        if constexpr (STAGES == 0)
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(),
                           p.low_blocks_per_sm(), st);
        else
          launch_stream_v2<STAGES>(p.in_vecs(), p.out_vecs(), p.n_vecs(), rounds, p.sms(),
                                   p.low_blocks_per_sm(), st);
      },
      [&](cudaStream_t st) {
        launch_traced<STAGES>(p.in_vecs(), p.out_vecs(), p.n_vecs(), rounds, grid, rec.arg(), st);
      });
  out.push_back(std::move(kt));
  return true;
}

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  tut::RunConfig cfg = run;
  cfg.size = std::min<std::uint64_t>(run.size, kTimelineBytes);
  Problem p(cfg);
  std::vector<tut::KernelTrace> kernels;
  bool ok = trace_one<0>(p, s, "v1_sync_low", "v1 sync (ch01), low occ", kernels);
  ok = trace_one<1>(p, s, "v2_pipe_s1_low", "v2 pipeline 1-stage, low occ", kernels) && ok;
  ok = trace_one<2>(p, s, "v2_pipe_s2_low", "v2 pipeline 2-stage, low occ", kernels) && ok;
  ok = trace_one<8>(p, s, "v2_pipe_s8_low", "v2 pipeline 8-stage, low occ", kernels) && ok;
  const std::string command = "ch04_pipeline_prefetch --timeline=" + path + " --size=" +
                              std::to_string(cfg.size) + " --blocks-per-sm=" +
                              std::to_string(p.low_blocks_per_sm()) + " --rounds=" +
                              std::to_string(p.rounds);
  const tut::TraceFileInfo info{"ch04_pipeline_prefetch", cfg.device.name, command};
  return tut::write_timeline(path, kernels, info) && ok;
}

}  // namespace ch04
