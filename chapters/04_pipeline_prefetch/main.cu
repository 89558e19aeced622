/// @file main.cu
/// @brief Chapter 04's program: stream 4 KiB tiles through a STAGES-deep cp.async ring
///        (cuda::pipeline) at 1 to 16 stages, check every variant against the CPU reference,
///        time them, then run the two sweeps (stages x blocks per SM, stages x rounds); with
///        --timeline, trace v1 and the 1-, 2- and 8-slot rings.
///
/// Reading order: the variant registry, the --timeline run, main(). The Problem and its CPU
/// reference are in problem.cuh, the kernels in kernels.cuh, the negatives in broken.cuh, the
/// sweeps in sweep.cuh. The chapter's GoogleTest includes this file with TUTORIAL_CHAPTER_TEST
/// defined, which leaves main() out.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/harness.cuh"
#include "common/timeline.cuh"
#include "common/timeline_run.cuh"
#include "kernels.cuh"  // by its short name: an exercise copy finds its own
#include "problem.cuh"
#include "broken.cuh"
#include "sweep.cuh"

namespace ch04 {

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
        })
      .reference = kCopy;
  v.add("v1_sync_low", "v1 sync (ch01), low occ",
        "chapter 01: LDG->STS, BAR, LDS->STG at --blocks-per-sm (the yardstick)",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), p.blocks_per_sm(), s);
        })
      .reference = kCopy;
  v.add("v1_sync_full", "v1 sync (ch01), full occ", "chapter 01's kernel at full occupancy",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v1(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.sms(), 0, s);
        })
      .reference = kCopy;
  v.add("v2_pipe_s1_low", "v2 pipeline 1-stage, low occ",
        "cuda::pipeline, 1 x 4 KiB ring, 1 tile(s) in flight at the wait (wait_prior<0>), "
        "--blocks-per-sm, --rounds",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<1>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                               p.blocks_per_sm(), s);
        })
      .reference = kWork;
  v.add("v2_pipe_s2_low", "v2 pipeline 2-stage, low occ",
        "cuda::pipeline, 2 x 4 KiB ring, 2 tile(s) in flight at the wait (wait_prior<1>), "
        "--blocks-per-sm, --rounds",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<2>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                               p.blocks_per_sm(), s);
        })
      .reference = kWork;
  v.add("v2_pipe_s3_low", "v2 pipeline 3-stage, low occ",
        "cuda::pipeline, 3 x 4 KiB ring, 3 tile(s) in flight at the wait (wait_prior<2>), "
        "--blocks-per-sm, --rounds",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<3>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                               p.blocks_per_sm(), s);
        })
      .reference = kWork;
  v.add("v2_pipe_s4_low", "v2 pipeline 4-stage, low occ",
        "cuda::pipeline, 4 x 4 KiB ring, 4 tile(s) in flight at the wait (wait_prior<3>), "
        "--blocks-per-sm, --rounds",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<4>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                               p.blocks_per_sm(), s);
        })
      .reference = kWork;
  v.add("v2_pipe_s6_low", "v2 pipeline 6-stage, low occ",
        "cuda::pipeline, 6 x 4 KiB ring, 6 tile(s) in flight at the wait (wait_prior<5>), "
        "--blocks-per-sm, --rounds",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<6>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                               p.blocks_per_sm(), s);
        })
      .reference = kWork;
  v.add("v2_pipe_s8_low", "v2 pipeline 8-stage, low occ",
        "cuda::pipeline, 8 x 4 KiB ring, 8 tile(s) in flight at the wait (wait_prior<7>), "
        "--blocks-per-sm, --rounds",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<8>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                               p.blocks_per_sm(), s);
        })
      .reference = kWork;
  v.add("v2_pipe_s12_low", "v2 pipeline 12-stage, low occ",
        "cuda::pipeline, 12 x 4 KiB ring, 12 tile(s) in flight at the wait (wait_prior<11>), "
        "--blocks-per-sm, --rounds",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<12>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                               p.blocks_per_sm(), s);
        })
      .reference = kWork;
  v.add("v2_pipe_s16_low", "v2 pipeline 16-stage, low occ",
        "cuda::pipeline, 16 x 4 KiB ring, 16 tile(s) in flight at the wait (wait_prior<15>), "
        "--blocks-per-sm, --rounds",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<16>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(),
                               p.blocks_per_sm(), s);
        })
      .reference = kWork;
  v.add("v2_pipe_s1_full", "v2 pipeline 1-stage, full occ",
        "the same kernel with as many blocks per SM as its shared memory allows",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<1>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), 0, s);
        })
      .reference = kWork;
  v.add("v2_pipe_s2_full", "v2 pipeline 2-stage, full occ",
        "the same kernel with as many blocks per SM as its shared memory allows",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<2>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), 0, s);
        })
      .reference = kWork;
  v.add("v2_pipe_s4_full", "v2 pipeline 4-stage, full occ",
        "the same kernel with as many blocks per SM as its shared memory allows",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<4>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), 0, s);
        })
      .reference = kWork;
  v.add("v2_pipe_s8_full", "v2 pipeline 8-stage, full occ",
        "the same kernel with as many blocks per SM as its shared memory allows",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<8>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), 0, s);
        })
      .reference = kWork;
  v.add("v2_pipe_s16_full", "v2 pipeline 16-stage, full occ",
        "the same kernel with as many blocks per SM as its shared memory allows",
        [](Problem& p, cudaStream_t s) {
          launch_stream_v2<16>(p.in_vecs(), p.out_vecs(), p.n_vecs(), p.rounds, p.sms(), 0, s);
        })
      .reference = kWork;
  add_negatives(v);  // broken.cuh
  return v.list;
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

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The lesson (the tour's pair): the 8-stage ring at one block per SM against chapter 01's
// kernel there.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch04_pipeline_prefetch", variants(), "v2_pipe_s8_low", "v1_sync_low",
      "Chapter 04: multi-stage prefetch with cuda::pipeline (cp.async commit/wait groups)");
  // --size: bytes, multiples of one uint4, default 1 GiB; room for input, output and the memcpy
  // ceiling's two buffers (the sweep's problem, with the expected output on the GPU, fits too)
  tut::set_buffer_sizes(ch);
  ch.check_sizes = check_sizes();  // problem.cuh says why the largest gives every ring laps
  ch.extra_options = {
      tut::blocks_per_sm_option("blocks per SM for the *_low variants and sweep 2"),
      {"rounds", "integer multiply-adds per 32-bit word in the compute step", 0, 0, 4096}};
  ch.after_table = run_sweeps;
  ch.timeline = record_timeline;  // --timeline: v1 and the 1-, 2-, 8-slot rings
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch04::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
