/// @file main.cu
/// @brief Chapter 00's program: copy `size` bytes with cudaMemcpyAsync (the ceiling) and three
///        plain copy kernels, check each against its input, time them, then print the device
///        properties and a size sweep that shows where the L2 cache stops flattering bandwidth.
///
/// Reading order (as llm.c's files): the Problem and its CPU reference (the input itself), the
/// variant registry, the sizes, the size sweep, main(). The kernels are in kernels.cuh, the
/// negative in broken.cuh. The chapter's GoogleTest includes this file with
/// TUTORIAL_CHAPTER_TEST defined, which leaves main() out.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/report.hpp"
#include "kernels.cuh"  // by its short name: an exercise copy finds its own
#include "broken.cuh"

namespace ch00 {

// ---------------------------------------------------------------------------------------------
// The problem: copy `size` bytes of unique 32-bit words; the reference is the input itself.
// ---------------------------------------------------------------------------------------------
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(n_words), d_out(n_words), h_in(n_words) {
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);  // every word distinct
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int /*reference*/) {
    const std::vector<std::uint32_t> got = d_out.download(s);
    return tut::compare_exact_words(got.data(), h_in.data(), n_words);
  }
  double work() const { return 2.0 * static_cast<double>(n_words) * 4; }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " copied"; }
  int sms() const { return cfg.device.sm_count; }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in, d_out;
  std::vector<std::uint32_t> h_in;
};

// ---------------------------------------------------------------------------------------------
// The variant registry (the table's rows, in reading order; the negative last)
// ---------------------------------------------------------------------------------------------
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_memcpy", "v0 cudaMemcpyAsync D2D", "the driver's device-to-device copy",
        [](Problem& p, cudaStream_t s) {
          launch_copy_v0(p.d_in.data(), p.d_out.data(), p.n_words, s);
        })
      .is_ceiling = true;  // v0 is the ceiling itself: "% of ceiling" is relative to it
  v.add("v1_word", "v1 LDG->STG 4 B/thread", "one 32-bit word per thread per step",
        [](Problem& p, cudaStream_t s) {
          launch_copy_v1(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
        });
  v.add("v2_vec4", "v2 LDG->STG 16 B/thread", "one 16-byte vector per thread per step",
        [](Problem& p, cudaStream_t s) {
          launch_copy_v2(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
        });
  v.add("v3_vec4_x4", "v3 LDG->STG 16 B x4/thread",
        "four independent 16-byte loads in flight per thread", [](Problem& p, cudaStream_t s) {
          launch_copy_v3(p.d_in.data(), p.d_out.data(), p.n_words, p.sms(), s);
        });
  add_negatives(v);  // broken.cuh
  return v.list;
}

// ---------------------------------------------------------------------------------------------
// Sizes: --size in bytes per buffer, a multiple of 4 (default 1 GiB).
// ---------------------------------------------------------------------------------------------
template <class P>
void set_sizes(tut::Chapter<P>& ch) {
  tut::set_buffer_sizes(ch, 4);  // input + output, plus the memcpy ceiling's two buffers
  // One word; 3 words (no whole vector); a vector and a bit; a 64 KiB tail case; just over
  // 1 MiB; and 16 MiB, where v3's unrolled loop runs for every thread of a full grid (and, in
  // the lap check's two blocks, thousands of times per thread). There is no ring here: every
  // kernel is a grid-stride loop with no shared memory.
  ch.check_sizes = {4, 12, 4100, 65536 + 12, (1u << 20) + 4, 16u << 20};
}

// ---------------------------------------------------------------------------------------------
// The size sweep, after the table
// ---------------------------------------------------------------------------------------------
// cudaMemcpyAsync (v0) and the v3 kernel at 1, 4, 16, 64, 256 MiB and 1 GiB per buffer. Small
// working sets (input + output below the L2 size) are served partly from L2 across repeats,
// so they report more than DRAM can deliver. Each configuration is checked once (poisoned
// output, launch, compare) before it is timed; returns false if any check failed.
inline bool size_sweep(const tut::RunConfig& base, cudaStream_t stream, const std::string& json_path) {
  std::printf("\nDevice properties:\n%s", tut::describe_device(base.device).c_str());
  std::printf("\nSize sweep (GB/s = bytes read + written per second; L2 = %s):\n",
              tut::format_bytes(double(base.device.l2_bytes)).c_str());
  std::printf("%12s | %12s | %12s | %s\n", "per buffer", "memcpy GB/s", "v3 GB/s", "check");
  const std::vector<tut::Variant<Problem>> all = variants();
  const tut::Variant<Problem>* memcpy_variant = nullptr;
  const tut::Variant<Problem>* kernel_variant = nullptr;
  for (const auto& v : all) {
    if (v.key == "v0_memcpy") memcpy_variant = &v;
    if (v.key == "v3_vec4_x4") kernel_variant = &v;
  }
  tut::SweepJson json("ch00_gpu_ceiling");
  json.array("sweep");
  bool ok = true;
  constexpr std::uint64_t kFirst = std::uint64_t{1} << 20, kLast = std::uint64_t{1} << 30;
  for (std::uint64_t size = kFirst; size <= kLast; size *= 4) {
    tut::RunConfig cfg = base;
    cfg.size = size;
    Problem p(cfg);
    const bool passed = tut::run_and_verify(p, *memcpy_variant, stream).ok() &&
                        tut::run_and_verify(p, *kernel_variant, stream).ok();
    ok = ok && passed;
    // The kernel and the memcpy in alternation (the tutorial's one method for a comparison
    // with a ceiling, common/timer.cuh), so both see the same clocks at every size.
    const tut::WatchdogScope named(kernel_variant->key, "size sweep, in alternation with memcpy");
    tut::idle_before_timing(stream);  // the same start as every timed block of a table
    const tut::PairTiming pt = tut::time_alternating(
        stream, base.warmup, tut::kMinAlternatingPairs,
        [&](cudaStream_t s) {
          kernel_variant->launch(p, s);
          CUDA_CHECK_LAST_LAUNCH();
        },
        [&](cudaStream_t s) {
          memcpy_variant->launch(p, s);
          CUDA_CHECK_LAST_LAUNCH();
        });
    const double memcpy_rate = tut::rate_per_second_1e9(p.work(), pt.b.median_ms);
    const double kernel_rate = tut::rate_per_second_1e9(p.work(), pt.a.median_ms);
    const tut::RatioSummary ratio = tut::summarize_ratios(pt.ratio);
    std::printf("%12s | %12.1f | %12.1f | %s\n", tut::format_bytes(double(size)).c_str(),
                memcpy_rate, kernel_rate, passed ? "PASS" : "FAIL");
    json.add(tut::SweepRow()
                 .integer("bytes_per_buffer", static_cast<long long>(size))
                 .num("memcpy_gbs", memcpy_rate)
                 .num("v3_gbs", kernel_rate)
                 .num("v3_pct_of_memcpy", 100.0 * ratio.median)
                 .integer("pairs", ratio.pairs)
                 .passed(passed));
  }
  ok = tut::write_sweep_json(json_path, json.str()) && ok;
  return ok;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The point (the tour's pair): 16 bytes per load instruction against 4, both at full
// occupancy.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch00_gpu_ceiling", variants(), "v2_vec4", "v1_word",
      "Chapter 00: your GPU and its ceiling (cudaMemcpyAsync vs plain copy kernels)");
  set_sizes(ch);
  ch.memcpy_ceiling = false;  // v0 *is* the memcpy ceiling, timed like every other variant
  ch.after_table = size_sweep;
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch00::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
