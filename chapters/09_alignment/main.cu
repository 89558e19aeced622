/// @file main.cu
/// @brief Chapter 09's program: the Problem (buffers, CPU reference, check), the variant
///        registry, the sizes, and main().
///
/// The program copies a buffer through shared memory with cuda::memcpy_async under different
/// alignment promises (the size type, the pointer type, the source and shared offsets), checks
/// every word against a CPU reference, then times every variant and prints the README's table.
/// The kernels, their launchers and the run-time alignment check are kernels.cuh; the broken
/// variant is broken.cuh.
///
/// Tests include this file with TUTORIAL_CHAPTER_TEST defined, for variants().
#include <functional>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "kernels.cuh"
#include "broken.cuh"

namespace ch09 {

/// out[i] = in[src_off + i] for i < size; the input has MAX_OFFSET spare bytes at its end.
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in((cfg.size + MAX_OFFSET) / 4), d_out(cfg.size / 16) {
    h_in.resize(d_in.size());
    tut::fill_unique_words(h_in.data(), h_in.size(), cfg.seed);
    d_in.upload(h_in);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  /// `src_off`: the source offset in bytes the variant was asked to read from (its reference).
  tut::VerifyResult verify(cudaStream_t s, int src_off) {
    const std::vector<uint4> got = d_out.download(s);
    std::vector<std::uint32_t> want(n_words);
    std::memcpy(want.data(), reinterpret_cast<const unsigned char*>(h_in.data()) + src_off, cfg.size);
    return tut::compare_exact_words(reinterpret_cast<const std::uint32_t*>(got.data()), want.data(),
                                    n_words);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }
  const unsigned char* src(int src_off) const {
    return reinterpret_cast<const unsigned char*>(d_in.data()) + src_off;
  }
  int sms() const { return cfg.device.sm_count; }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<std::uint32_t> d_in;
  tut::DeviceBuffer<uint4> d_out;
  std::vector<std::uint32_t> h_in;
};

/// A launcher for the registry: `kernel`, which promises `promised` bytes of alignment
/// (`what` names the promise in the launch check's error line), at source offset 0.
inline std::function<void(Problem&, cudaStream_t)> at_offset_0(CopyKernel kernel, int promised,
                                                                const char* what) {
  return [=](Problem& p, cudaStream_t s) {
    launch_copy(kernel, promised, what, p.src(0), p.d_out.data(), p.cfg.size, 0, p.sms(), s);
  };
}

/// The registry. `.reference` carries the source offset each variant must reproduce.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_align16", "v0 aligned_size_t<16>",
        "cp.async.cg 16 B (LDGSTS.E.BYPASS.128)",
        at_offset_0(copy_v0_align16_kernel, 16, "aligned_size_t<16>"));
  v.add("v1_sizet_chunk16", "v1 size_t, __align__(16) T",
        "plain size_t on Chunk16*: alignof(T)=16 gives cp.async.cg 16",
        at_offset_0(copy_v1_sizet_chunk16_kernel, 16, "size_t on Chunk16*"));
  v.add("v2_sizet_bytes16", "v2 size_t, 16-byte T align 1",
        "plain size_t on Bytes16*: alignof(T)=1 gives the synchronous byte loop",
        at_offset_0(copy_v2_sizet_bytes16_kernel, 1, "size_t on Bytes16*"));
  v.add("v3_sizet_char", "v3 size_t, char*",
        "plain size_t on unsigned char*: the synchronous byte loop",
        at_offset_0(copy_v3_sizet_char_kernel, 1, "size_t on unsigned char*"));
  v.add("v4_align8", "v4 aligned_size_t<8>",
        "cp.async.ca 8 B (LDGSTS.E.64)",
        at_offset_0(copy_v4_align8_kernel, 8, "aligned_size_t<8>"));
  v.add("v5_align4", "v5 aligned_size_t<4>",
        "cp.async.ca 4 B (LDGSTS.E)",
        at_offset_0(copy_v5_align4_kernel, 4, "aligned_size_t<4>"));
  v.add("v6_align2", "v6 aligned_size_t<2>",
        "a promise of 2 bytes: a synchronous loop of 2-byte copies",
        at_offset_0(copy_v6_align2_kernel, 2, "aligned_size_t<2>"));
  v.add("v6_align1", "v6 aligned_size_t<1>",
        "a promise of 1 byte: the synchronous byte loop",
        at_offset_0(copy_v6_align1_kernel, 1, "aligned_size_t<1>"));
  v.add("v7_align128", "v7 aligned_size_t<128>",
        "a 128-byte promise: the same cp.async.cg 16 as v0",
        at_offset_0(copy_v7_align128_kernel, 128, "aligned_size_t<128>"));
  for (int off : {1, 4, 8, 16, 128}) {
    const std::string o = std::to_string(off);
    v.add("v8_src_off" + o, "v8 widest, src +" + o,
          "source at byte offset " + o + "; widest legal copy chosen at run time",
          [off](Problem& p, cudaStream_t s) {
            launch_copy_widest(p.src(off), p.d_out.data(), p.cfg.size, 0, p.sms(), s);
          })
        .reference = off;
  }
  for (int off : {1, 4, 8, 16, 128}) {
    const std::string o = std::to_string(off);
    v.add("v8_dst_off" + o, "v8 widest, dst +" + o,
          "shared destination at byte offset " + o + "; widest legal copy chosen at run time",
          [off](Problem& p, cudaStream_t s) {
            launch_copy_widest(p.src(0), p.d_out.data(), p.cfg.size, off, p.sms(), s);
          });
  }
  v.add("v10_barrier_align16", "v10 <16> + cuda::barrier",
        "the 16-byte promise with a shared-memory cuda::barrier: cp.async.bulk on sm_90",
        [](Problem& p, cudaStream_t s) {
          launch_copy_barrier(p.src(0), p.d_out.data(), p.cfg.size, p.sms(), s);
        });
  add_negatives(v);
  return v.list;
}

// Check sizes: one chunk, a partial slice, a tile short of a chunk, tiles plus a ragged slice,
// a few MiB. The lap check runs the largest, 8 MiB = 2048 tiles of 4 KiB, on 2 blocks: 1024
// tiles each, 256 laps of the 4-slot ring (v10's one slot: 1024 refills).
inline const std::vector<std::uint64_t> kCheckSizes = {16,        48, 1008, 4096 - 16, 5 * 4096 + 16 * 45,
                                                        (1u << 20) + 16 * 7, 8u << 20};

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The tour's pair: the promise that costs (the synchronous byte loop) against the 16-byte
// promise.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch09_alignment", variants(), "v6_align1", "v0_align16",
      "Chapter 09: alignment - cp.async 16/8/4 B or the synchronous fallback");
  tut::set_buffer_sizes(ch);
  ch.check_sizes = kCheckSizes;
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch09::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
