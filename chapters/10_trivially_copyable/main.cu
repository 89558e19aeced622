/// @file main.cu
/// @brief Chapter 10's program: the CPU references, the Problem (buffers, check), the variant
///        registry, the sizes, and main().
///
/// The program advances n particles by one time step (pos += dt * vel) through shared memory,
/// staging them with cuda::memcpy_async as an array of structs or as six float planes, checks
/// every float exactly against a CPU reference of the variant's layout, then times every
/// variant and prints the README's table. The particle types are particle.cuh, the kernels and
/// their launcher kernels.cuh, the broken variant broken.cuh.
///
/// Tests include this file with TUTORIAL_CHAPTER_TEST defined, for variants().

#include <cstdint>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "kernels.cuh"
#include "broken.cuh"
#include "particle.cuh"

namespace ch10 {


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

/// Adapts the launcher of kernels.cuh to the registry's (Problem&, stream) signature: KERNEL at
/// full occupancy. Each variant's `.reference` names the layout (kAoS or kSoA) its output must
/// match.
template <AdvanceKernel KERNEL>
void run(Problem& p, cudaStream_t s) {
  launch_advance(KERNEL, p.d_in.data(), p.d_out.data(), p.n, p.sms(), s);
}

inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_aos_sizet", "v0 AoS, size_t (align 4)",
        "plain-data Particle, plain size_t: cp.async.ca 4 B", run<advance_v0_aos_sizet_kernel>)
      .reference = kAoS;
  v.add("v1_aos_align16", "v1 AoS, aligned_size_t<16>",
        "plain-data Particle, 16-byte promise: cp.async.cg 16 B",
        run<advance_v1_aos_align16_kernel>)
      .reference = kAoS;
  v.add("v2_soa_align16", "v2 SoA planes, <16>",
        "six float planes, each copied with a 16-byte promise", run<advance_v2_soa_align16_kernel>)
      .reference = kSoA;
  v.add("v3_ctor_unchecked", "v3 AoS with copy ctor",
        "ParticleWithCtor via the unchecked pipeline overload: compiles, copies the bytes, "
        "skips the constructor",
        run<advance_v3_ctor_unchecked_kernel>)
      .reference = kAoS;
  add_negatives(v);
  return v.list;
}

// Check sizes: 4 particles, 8, a slice short of 4 (28), a tile short of 4 (252), 5 tiles plus
// a ragged slice, and ~8 MiB. The lap check runs the largest (349,528 particles = 1366 tiles of
// 256) on 2 blocks: 683 tiles each, 170 laps of the 4-slot ring.
inline const std::vector<std::uint64_t> kCheckSizes = {96, 192, 24 * 28, 24 * 252,
                                                        24 * (5 * 256 + 36), 96 * 87382};

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The tour's pair: the same plain data, promised 16-byte alignment, against a plain size_t
// (4-byte copies).
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch10_trivially_copyable", variants(), "v1_aos_align16", "v0_aos_sizet",
      "Chapter 10: trivially copyable element types, AoS vs SoA in memcpy_async");
  tut::set_buffer_sizes(ch, 96, " (4 particles of 24 B)");
  ch.check_sizes = kCheckSizes;
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch10::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
