// Chapter 10, host side: the Problem (buffers, CPU references, check), the variant registry and
// the chapter's size settings. The lesson's device code is in kernels.cuh and particle.cuh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "kernels.cuh"

namespace ch10 {

enum Reference : int { kAoS = 0, kSoA = 1 };

/// out = in with pos += DT * vel, for the layout `ref` (AoS [n][6] or SoA [6][n]).
inline std::vector<float> reference_advance(const std::vector<float>& in, int ref) {
  const std::size_t n = in.size() / FIELDS;
  std::vector<float> out(in.size());
  for (std::size_t i = 0; i < n; ++i) {
    float p[FIELDS];
    for (int j = 0; j < FIELDS; ++j) p[j] = ref == kSoA ? in[j * n + i] : in[i * FIELDS + j];
    advance(p, p + 3, DT);
    for (int j = 0; j < FIELDS; ++j) (ref == kSoA ? out[j * n + i] : out[i * FIELDS + j]) = p[j];
  }
  return out;
}

/// n particles (size / 24 bytes, n % 4 == 0) in and out: one float buffer each, read as AoS or
/// SoA by the variant.
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n(cfg.size / sizeof(Particle)), d_in(n * FIELDS), d_out(n * FIELDS) {
    h_in.resize(n * FIELDS);
    tut::fill_unique_exact_floats(h_in.data(), h_in.size(), cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int ref) {
    const std::vector<float> got = d_out.download(s);
    std::vector<float>& want = wants[ref];
    if (want.empty()) want = reference_advance(h_in, ref);
    return tut::compare_exact_floats(got.data(), want.data(), got.size());
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const {
    return std::to_string(n) + " particles (" + tut::format_bytes(double(cfg.size)) + ") per buffer";
  }
  int sms() const { return cfg.device.sm_count; }

  tut::RunConfig cfg;
  std::size_t n;
  tut::DeviceBuffer<float> d_in, d_out;
  std::vector<float> h_in;
  std::vector<float> wants[2];
};

/// Adds a variant that runs `kernel` at full occupancy; its output must match the CPU
/// reference of `layout`.
inline tut::Variant<Problem>& add_advance(tut::VariantList<Problem>& v, const char* key,
                                          const char* name, const char* description,
                                          AdvanceKernel kernel, Reference layout) {
  auto launch = [kernel](Problem& p, cudaStream_t s) {
    launch_advance(kernel, p.d_in.data(), p.d_out.data(), p.n, p.sms(), s);
  };
  tut::Variant<Problem>& added = v.add(key, name, description, launch);
  added.reference = layout;
  return added;
}

}  // namespace ch10

#include "tests/negatives/10_trivially_copyable.cuh"  // v9, staged by the copy constructor

namespace ch10 {

inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  add_advance(v, "v0_aos_sizet", "v0 AoS, size_t (align 4)",
              "plain-data Particle, plain size_t: cp.async.ca 4 B", advance_v0_aos_sizet_kernel,
              kAoS);
  add_advance(v, "v1_aos_align16", "v1 AoS, aligned_size_t<16>",
              "plain-data Particle, 16-byte promise: cp.async.cg 16 B",
              advance_v1_aos_align16_kernel, kAoS);
  add_advance(v, "v2_soa_align16", "v2 SoA planes, <16>",
              "six float planes, each copied with a 16-byte promise", advance_v2_soa_align16_kernel,
              kSoA);
  add_advance(v, "v3_ctor_unchecked", "v3 AoS with copy ctor",
              "ParticleWithCtor via the unchecked pipeline overload: compiles, copies the bytes, "
              "skips the constructor",
              advance_v3_ctor_unchecked_kernel, kAoS);
  add_negatives(v);
  return v.list;
}

// Check sizes: 4 particles, 8, a slice short of 4 (28), a tile short of 4 (252), 5 tiles plus
// a ragged slice, and ~8 MiB. The lap check runs the largest (349,528 particles = 1366 tiles of
// 256) on 2 blocks: 683 tiles each, 170 laps of the 4-slot ring.
inline const std::vector<std::uint64_t> kCheckSizes = {96, 192, 24 * 28, 24 * 252,
                                                        24 * (5 * 256 + 36), 96 * 87382};

inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch;
  ch.id = "ch10_trivially_copyable";
  ch.title = "Chapter 10: trivially copyable element types, AoS vs SoA in memcpy_async";
  tut::set_buffer_sizes(ch, 96, " (4 particles of 24 B)");
  ch.check_sizes = kCheckSizes;
  ch.variants = variants();
  ch.tour_lesson = "v1_aos_align16";  // the same plain data, promised 16-byte alignment
  ch.tour_baseline = "v0_aos_sizet";
  return ch;
}

}  // namespace ch10
