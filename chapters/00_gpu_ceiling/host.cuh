// Chapter 00, host side: the Problem (copy `size` bytes of unique 32-bit words; the reference
// is the input itself), the variant registry and the size settings.
// main.cu and the chapter's tests include this file; it includes the kernels beside it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "kernels.cuh"

namespace ch00 {

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

}  // namespace ch00

// The negative (v9) and add_negatives(), which variants() calls last.
#include "tests/negatives/00_gpu_ceiling.cuh"

namespace ch00 {

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
  add_negatives(v);
  return v.list;
}

/// Sizes: --size in bytes per buffer, a multiple of 4 (default 1 GiB).
template <class P>
void set_sizes(tut::Chapter<P>& ch) {
  tut::set_buffer_sizes(ch, 4);  // input + output, plus the memcpy ceiling's two buffers
  // One word; 3 words (no whole vector); a vector and a bit; a 64 KiB tail case; just over
  // 1 MiB; and 16 MiB, where v3's unrolled loop runs for every thread of a full grid (and, in
  // the lap check's two blocks, thousands of times per thread). There is no ring here: every
  // kernel is a grid-stride loop with no shared memory.
  ch.check_sizes = {4, 12, 4100, 65536 + 12, (1u << 20) + 4, 16u << 20};
}

}  // namespace ch00
