// Chapter 04, host side: the CPU reference, the Problem, the variant registry and the sizes.
// The kernels and launchers are in kernels.cuh.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/harness.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "common/timeline.cuh"
#include "common/timeline_run.cuh"
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
// The problem: one input and one output buffer of `size` bytes, read as uint4. The buffers and
// their unique words are the common Problem's (common/workload_reversed_tiles.cuh); the check
// is this chapter's reference.
// ---------------------------------------------------------------------------------------------
enum Reference : int { kCopy = 0, kWork = 1 };  // plain reversal; reversal + `rounds` of work

struct Problem : tut::reversed_tiles::Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : tut::reversed_tiles::Problem(cfg), rounds(static_cast<int>(cfg.extra("rounds"))) {}
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    const std::vector<std::uint32_t> got = d_out.download(s);
    const int r = reference == kCopy ? 0 : rounds;
    if (want.empty() || want_rounds != r) {  // one reference at a time (the sweep varies rounds)
      want = reference_reverse_tiles(h_in, r);
      want_rounds = r;
    }
    return tut::compare_exact_words(got.data(), want.data(), n_words);
  }
  const uint4* in_vecs() const { return reinterpret_cast<const uint4*>(d_in.data()); }
  uint4* out_vecs() { return reinterpret_cast<uint4*>(d_out.data()); }
  std::size_t n_vecs() const { return n_words / 4; }

  int rounds;  // the compute step's rounds for kWork variants (--rounds; the sweep sets it)
  int want_rounds = -1;
};

}  // namespace ch04

// The negatives (v8, v9) and add_negatives(), which variants() calls last.
#include "tests/negatives/04_pipeline_prefetch.cuh"

namespace ch04 {

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
          launch_stream_v0(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.blocks_per_sm(), s);
        }).reference = kCopy;
  v.add("v1_sync_low", "v1 sync (ch01), low occ",
        "chapter 01: LDG->STS, BAR, LDS->STG at --blocks-per-sm (the yardstick)",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.blocks_per_sm(), s);
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
            launch(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), p.blocks_per_sm(), s);
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
  add_negatives(v);
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
  const int rounds = STAGES == 0 ? 0 : p.rounds;
  tut::TraceRecorder rec({traced_grid<STAGES>(p.sms(), p.blocks_per_sm()), 1, 256});
  return tut::trace_checked_run(
      p, STAGES == 0 ? kCopy : kWork, s, rec, tut::KernelTrace{key, title, {"block (thread 0)"}, {}},
      out, [&](cudaStream_t st, auto trace) {  // tut::TraceOff untraced, TraceOn traced
        if constexpr (STAGES == 0)
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.blocks_per_sm(),
                           st, trace);
        else
          launch_stream_v2<STAGES>(p.in_vecs(), p.out_vecs(), p.n_vecs(), rounds, p.sms(),
                                   p.blocks_per_sm(), st, trace);
      });
}

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  using TraceOne = bool (*)(Problem&, cudaStream_t, const std::string&, const std::string&,
                            std::vector<tut::KernelTrace>&);
  const struct {
    TraceOne trace;
    const char* key;
    const char* title;
  } traced[] = {{trace_one<0>, "v1_sync_low", "v1 sync (ch01), low occ"},
                {trace_one<1>, "v2_pipe_s1_low", "v2 pipeline 1-stage, low occ"},
                {trace_one<2>, "v2_pipe_s2_low", "v2 pipeline 2-stage, low occ"},
                {trace_one<8>, "v2_pipe_s8_low", "v2 pipeline 8-stage, low occ"}};
  Problem p(tut::timeline_config(run, kTimelineBytes));
  std::vector<tut::KernelTrace> kernels;
  bool ok = true;
  for (const auto& t : traced) ok = t.trace(p, s, t.key, t.title, kernels) && ok;
  const std::string flags = " --blocks-per-sm=" + std::to_string(p.blocks_per_sm()) +
                            " --rounds=" + std::to_string(p.rounds);
  return tut::write_chapter_timeline(path, kernels, p.cfg, "ch04_pipeline_prefetch", flags) && ok;
}

}  // namespace ch04
