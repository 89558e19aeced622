/// @file main.cu
/// @brief Chapter 07's program: the Problem (buffers, CPU reference, check), the variant
///        registry, the sizes, the --timeline recording, and main().
///
/// The program runs a 15-point box stencil over a buffer of floats in 1024-output tiles, with
/// copy and compute done by the same threads (v0) or split between producer and consumer warps
/// that hand tiles over through a block-scope cuda::pipeline (v1); it checks every output
/// exactly against the CPU reference, then times every variant and prints the README's table.
/// The kernels and their launchers are kernels.cuh; the broken variant is broken.cuh.
///
/// Tests include this file with TUTORIAL_CHAPTER_TEST defined, for variants().
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/timeline_run.cuh"
#include "common/workload_stencil_stream.cuh"
#include "kernels.cuh"
#include "broken.cuh"

namespace ch07 {

/// One input and one output buffer of `size` bytes (floats).
struct Problem {
  explicit Problem(const tut::RunConfig& cfg) : cfg(cfg), n(cfg.size / 4), d_in(n), d_out(n) {
    h_in.resize(n);
    tut::fill_unique_exact_floats(h_in.data(), n, cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    const std::vector<float> got = d_out.download(s);
    // the common stencil reference at radius 7: 15-term sums of these inputs are exact in fp32
    if (want.empty()) want = tut::stencil_stream::reference_stencil(h_in, RADIUS);
    return tut::compare_exact_floats(got.data(), want.data(), n);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }
  int sms() const { return cfg.device.sm_count; }

  tut::RunConfig cfg;
  std::size_t n;
  tut::DeviceBuffer<float> d_in, d_out;
  std::vector<float> h_in, want;
};

/// Adapts a launcher of kernels.cuh (raw pointers, grid parameters) to the registry's
/// (Problem&, stream) signature.
template <Launch LAUNCH>
void run(Problem& p, cudaStream_t s) {
  LAUNCH(p.d_in.data(), p.d_out.data(), p.n, p.sms(), tut::blocks_per_sm(p.cfg), s);
}

/// The ratio sweep at 256 threads per block, --blocks-per-sm blocks per SM. "Slots" is the
/// ring size (STAGES); at the wait for a tile, v0 has STAGES-1 tiles in flight, v1 up to STAGES.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_unified_s4", "v0 unified 8 warps, 4 slots",
        "thread-scope cuda::pipeline, every thread copies and computes; 3 tiles in flight",
        run<launch_stencil_v0<4>>);
  v.add("v0_unified_s8", "v0 unified 8 warps, 8 slots", "the same, 8 slots: 7 tiles in flight",
        run<launch_stencil_v0<8>>);
  v.add("v1_split_p1c7_s4", "v1 split 1P:7C, 4 slots",
        "block-scope cuda::pipeline: 1 producer warp, 7 consumer warps; up to 4 tiles in flight",
        run<launch_stencil_v1<4, 32>>);
  v.add("v1_split_p2c6_s4", "v1 split 2P:6C, 4 slots", "2 producer warps, 6 consumer warps",
        run<launch_stencil_v1<4, 64>>);
  v.add("v1_split_p4c4_s4", "v1 split 4P:4C, 4 slots", "4 producer warps, 4 consumer warps",
        run<launch_stencil_v1<4, 128>>);
  v.add("v1_split_p6c2_s4", "v1 split 6P:2C, 4 slots", "6 producer warps, 2 consumer warps",
        run<launch_stencil_v1<4, 192>>);
  v.add("v1_split_p2c6_s8", "v1 split 2P:6C, 8 slots",
        "2 producer warps, 6 consumer warps, 8 slots: up to 8 tiles in flight",
        run<launch_stencil_v1<8, 64>>);
  add_negatives(v);
  return v.list;
}

// Check sizes: 4 floats (smaller than the stencil); 12 floats; a tile less 4 floats; tiles plus
// a ragged tail; 1 MiB plus 28 floats; 8 MiB. The lap check runs the largest, 8 MiB = 2048
// tiles of 4 KiB, on 2 blocks: 1024 tiles each, 128 laps of the deepest (8-slot) ring.
inline const std::vector<std::uint64_t> kCheckSizes = {16, 48, 4096 - 16, 3 * 4096 + 80,
                                                        (1u << 20) + 112, 8u << 20};
constexpr int kDeepestRing = 8;  // slots of the deepest ring among the variants

// --timeline: the 2-producer-warp split with 4 and with 8 slots, traced on a small problem
// (at most kTimelineBytes; 32 MiB is 62 tiles per block at 1 block per SM): the blocks on SMs 0
// and 1, the first tiles of each. Each traced run is checked like any other run.
constexpr std::uint64_t kTimelineBytes = 32u << 20;
constexpr std::uint32_t kTimelineCapacity = 512;  // events per lane: ~100 tiles of a consumer

template <int STAGES, int PRODUCERS>
bool trace_split(Problem& p, cudaStream_t s, const char* key, const char* title,
                 std::vector<tut::KernelTrace>& out) {
  constexpr std::uint32_t lanes = 1 + (THREADS - PRODUCERS) / 32;
  const int sms = p.sms(), blocks_per_sm = tut::blocks_per_sm(p.cfg);
  const unsigned grid = grid_stencil_v1_traced<STAGES, PRODUCERS>(sms, blocks_per_sm);
  tut::TraceRecorder rec({grid, lanes, kTimelineCapacity});
  tut::KernelTrace kt{key, title, {"producer warps (thread 0)"}, {}};
  for (std::uint32_t w = 1; w < lanes; ++w)
    kt.lane_names.push_back("consumer warp " + std::to_string(w - 1));
  // Untraced, the variant's own launcher; traced, the TraceOn instance on the recorder's grid.
  return tut::trace_checked_run(p, 0, s, rec, std::move(kt), out, [&](cudaStream_t st, auto trace) {
    if constexpr (std::is_same_v<decltype(trace), tut::TraceOn>)
      launch_stencil_v1_traced<STAGES, PRODUCERS>(p.d_in.data(), p.d_out.data(), p.n, grid, trace,
                                                  st);
    else
      launch_stencil_v1<STAGES, PRODUCERS>(p.d_in.data(), p.d_out.data(), p.n, sms, blocks_per_sm,
                                           st);
  });
}

inline bool record_timeline(const tut::RunConfig& run, cudaStream_t s, const std::string& path) {
  Problem p(tut::timeline_config(run, kTimelineBytes));
  std::vector<tut::KernelTrace> kernels;
  bool ok = trace_split<4, 64>(p, s, "v1_split_p2c6_s4", "v1 split 2P:6C, 4 slots", kernels);
  ok = trace_split<8, 64>(p, s, "v1_split_p2c6_s8", "v1 split 2P:6C, 8 slots", kernels) && ok;
  const std::string flags = " --blocks-per-sm=" + std::to_string(tut::blocks_per_sm(run));
  return tut::write_chapter_timeline(path, kernels, p.cfg, "ch07_producer_consumer", flags) && ok;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The chapter's point (the tour's pair) at 1 block/SM: the split that wins (2 producer warps,
// 8 slots) against the unified pipeline with the same ring.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch07_producer_consumer", variants(),
      "v1_split_p2c6_s8", "v0_unified_s8",
      "Chapter 07: producer/consumer warps through a block-scope cuda::pipeline");
  tut::set_buffer_sizes(ch);  // bytes, multiples of one float4
  ch.check_sizes = kCheckSizes;
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM for every variant")};
  ch.timeline = record_timeline;
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch07::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
