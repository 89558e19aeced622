/// @file main.cu
/// @brief Chapter 08's program: the Problem (buffers, CPU reference, check), the variant
///        registry, the sizes, and main().
///
/// The program copies a buffer of 16-byte chunks through shared memory in 4 KiB tiles, each
/// warp writing its 32-chunk slice out reversed (so every lane reads a chunk another lane
/// copied), and checks every word against a CPU reference; then it times every variant and
/// prints the README's table. The variants differ only in which lanes issue the copies of a
/// slice. The kernels and their launcher are kernels.cuh; the broken variant is broken.cuh.
///
/// Tests include this file with TUTORIAL_CHAPTER_TEST defined, for variants().

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buffer.cuh"
#include "common/harness.cuh"
#include "common/workload_stencil_stream.cuh"
#include "kernels.cuh"
#include "broken.cuh"

namespace ch08 {

/// One input and one output buffer of `size` bytes (16-byte chunks).
struct Problem {
  explicit Problem(const tut::RunConfig& cfg)
      : cfg(cfg), n_words(cfg.size / 4), d_in(cfg.size / 16), d_out(cfg.size / 16) {
    h_in.resize(n_words);
    tut::fill_unique_words(h_in.data(), n_words, cfg.seed);
    std::vector<Chunk> chunks(n_words / 4);
    std::memcpy(chunks.data(), h_in.data(), cfg.size);
    d_in.upload(chunks);
  }
  void poison(cudaStream_t s) { d_out.poison(s); }
  tut::VerifyResult verify(cudaStream_t s, int) {
    const std::vector<Chunk> got = d_out.download(s);
    // every 32-chunk slice reversed, the last, partial slice within itself: the common stream
    // reference with a tile of one warp slice
    if (want.empty()) want = tut::stencil_stream::reference_reverse_tiles(h_in, SLICE_CHUNKS);
    return tut::compare_exact_words(reinterpret_cast<const std::uint32_t*>(got.data()),
                                    want.data(), n_words);
  }
  double work() const { return 2.0 * static_cast<double>(cfg.size); }
  std::string describe() const { return tut::format_bytes(double(cfg.size)) + " per buffer"; }
  std::size_t n_chunks() const { return n_words / 4; }
  int sms() const { return cfg.device.sm_count; }

  tut::RunConfig cfg;
  std::size_t n_words;
  tut::DeviceBuffer<Chunk> d_in, d_out;
  std::vector<std::uint32_t> h_in, want;
};

/// Adapts the launcher of kernels.cuh to the registry's (Problem&, stream) signature: KERNEL at
/// full occupancy (LOW false: as many blocks per SM as fit) or at --blocks-per-sm blocks per SM
/// (LOW true: the *_low rows).
template <KernelFn KERNEL, bool LOW>
void run(Problem& p, cudaStream_t s) {
  launch_slice(KERNEL, p.d_in.data(), p.d_out.data(), p.n_chunks(), p.sms(),
               LOW ? tut::blocks_per_sm(p.cfg) : 0, s);
}

/// v0, v1 and v4 run twice: at full occupancy, and at --blocks-per-sm blocks per SM (the *_low
/// rows), the regime where an extra LDGSTS per slice could show.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_converged", "v0 converged, full occ",
        "every lane copies its own 16 B chunk: 1 LDGSTS x 32 lanes per slice",
        run<slice_v0_converged_kernel, false>);
  v.add("v0_converged_low", "v0 converged, low occ",
        "the same at --blocks-per-sm blocks per SM (default 1)",
        run<slice_v0_converged_kernel, true>);
  v.add("v1_divergent", "v1 divergent, full occ",
        "lane%16<8 copy two chunks each, all lanes commit: 2 LDGSTS x 16 lanes",
        run<slice_v1_divergent_kernel, false>);
  v.add("v1_divergent_low", "v1 divergent, low occ",
        "the same at --blocks-per-sm blocks per SM (default 1)",
        run<slice_v1_divergent_kernel, true>);
  v.add("v2_syncwarp", "v2 divergent + __syncwarp",
        "v1 with __syncwarp(0x00FF00FF) before and after the copies",
        run<slice_v2_syncwarp_kernel, false>);
  v.add("v3_sized", "v3 sized, no branch",
        "every lane calls memcpy_async; idle lanes ask for 0 bytes",
        run<slice_v3_sized_kernel, false>);
  v.add("v4_zfill", "v4 converged zero-fill",
        "every lane issues cp.async; tail lanes use src-size 0 (zero fill)",
        run<slice_v4_zfill_kernel, false>);
  v.add("v4_zfill_low", "v4 converged zero-fill, low occ",
        "the same at --blocks-per-sm blocks per SM (default 1)",
        run<slice_v4_zfill_kernel, true>);
  add_negatives(v);
  return v.list;
}

// Check sizes: one chunk, 3 chunks, a slice short of 2 (63 chunks), a tile short of one chunk,
// tiles plus a ragged slice, a few MiB. The lap check runs the largest, 8 MiB = 2048 tiles of
// 4 KiB, on 2 blocks: 1024 tiles each, 256 laps of the 4-slot ring (the full-occupancy rows
// never refill a slot at the other check sizes).
inline const std::vector<std::uint64_t> kCheckSizes = {
    16, 48, 1008, 4096 - 16, 5 * 4096 + 16 * 45, (1u << 20) + 16 * 7, 8u << 20};

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The tour's pair, in the regime where the extra LDGSTS of divergent issue could show: one
// block per SM.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch08_warp_divergence", variants(),
      "v1_divergent_low", "v0_converged_low",
      "Chapter 08: warp divergence around memcpy_async (per-thread commit groups)");
  tut::set_buffer_sizes(ch);  // bytes, multiples of one 16-byte chunk
  ch.check_sizes = kCheckSizes;
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM for the *_low variants")};
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch08::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
