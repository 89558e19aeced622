/// @file main.cu
/// @brief Chapter 06's program: the window workload's CPU reference, the Problem, the variant
///        registry, and main().
///
/// The program runs two workloads over a buffer of 32-bit words in 4 KiB tiles and checks every
/// word against a CPU reference: the stream (each tile zero-padded to whole 16-byte vectors and
/// reversed; chapter 05's workload, common/workload_reversed_tiles.cuh) and the window (out[i] =
/// in[i] + in[i + 1024], which reads every tile twice). Then it times every variant and prints
/// the table of the README. The kernels and their launchers are kernels.cuh (v0-v2) and
/// mbarrier_completion.cuh (v3-v4); the broken variants are broken.cuh.
///
/// Tests include this file with TUTORIAL_CHAPTER_TEST defined, for variants().
#include <cstdint>
#include <vector>

#include "common/harness.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "kernels.cuh"
#include "mbarrier_completion.cuh"
#include "broken.cuh"

namespace ch06 {

// CPU reference of the window: out[i] = in[i] + in[i + 1024], zero past the end (the stream's
// reference is tut::reversed_tiles::reference_reverse_padded).
inline std::vector<std::uint32_t> reference_window(const std::vector<std::uint32_t>& in) {
  const std::size_t n = in.size();
  std::vector<std::uint32_t> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = in[i] + (i + TILE_WORDS < n ? in[i + TILE_WORDS] : 0u);  // wraps mod 2^32
  return out;
}

// The problem: chapter 05's (one input and one output buffer of `size` bytes), which also
// checks the window variants against reference_window. Bytes moved = size read + size written
// for both workloads (the window's second read of a tile is reuse, not new traffic: it is what
// L1 may or may not absorb).
struct Problem : tut::reversed_tiles::Problem {
  using tut::reversed_tiles::Problem::Problem;
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    if (reference == kWindow) return verify_against(s, want_window, reference_window);
    return tut::reversed_tiles::Problem::verify(s, reference);
  }
  std::vector<std::uint32_t> want_window;
};

// The variant registry. All variants run at --blocks-per-sm blocks per SM (default 1), except
// *_full (as many blocks as fit). Names give the ring in slots; this chapter's loop (chapter
// 05's) has slots - 1 tiles in flight at each wait.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  v.add("v0_prim16_s4", "v0 primitives 16 B 4 slots",
        "chapter 05: __pipeline_memcpy_async 16 B, 4 slots (3 tiles in flight)",
        launch_stream_v0<4>);
  v.add("v1_cg16_s4", "v1 PTX .cg 16 B 4 slots", "cp.async.cg 16 B, 4 slots (v0 in raw PTX)",
        launch_stream_v1<4, 16, true>);
  v.add("v1_cg16_s8", "v1 PTX .cg 16 B 8 slots",
        "cp.async.cg 16 B, 8 slots: 7 tiles (28 KiB) in flight per block",
        launch_stream_v1<8, 16, true>);
  v.add("v1_ca16_s8", "v1 PTX .ca 16 B 8 slots", "cp.async.ca 16 B (L1 allocate), 8 slots",
        launch_stream_v1<8, 16, false>);
  v.add("v1_ca8_s8", "v1 PTX .ca 8 B 8 slots", "cp.async.ca 8 B, two copies per thread per tile",
        launch_stream_v1<8, 8, false>);
  v.add("v1_ca4_s8", "v1 PTX .ca 4 B 8 slots", "cp.async.ca 4 B, four copies per thread per tile",
        launch_stream_v1<8, 4, false>);
  v.add("v1_cg16_s8_full", "v1 PTX .cg 16 B 8 slots, full",
        "cp.async.cg 16 B, 8 slots, as many blocks per SM as fit",
        launch_stream_v1<8, 16, true, /*FULL=*/true>);
  v.add("v2_window_cg", "v2 window .cg 4 slots", "each tile read twice by the same SM, L1 bypassed",
        launch_window_v2<4, true>)
      .reference = kWindow;
  v.add("v2_window_ca", "v2 window .ca 4 slots",
        "each tile read twice by the same SM, L1 allocate: the second read may hit",
        launch_window_v2<4, false>)
      .reference = kWindow;
  v.add("v3_mbarrier_s8", "v3 .cg + mbarrier, token",
        "cp.async.cg 16 B completed on an mbarrier (arrive.noinc.shared), per-slot state array",
        launch_stream_v3);
  v.add("v3_cccl_arrive_s8", "v3 .cg + cuda::ptx arrive, token",
        "as v3_mbarrier_s8 with cuda::ptx::cp_async_mbarrier_arrive_noinc (sm_90 only here)",
        launch_stream_v3_cccl)
      .min_cc = 90;
  v.add("v4_mbarrier_parity_s8", "v4 .cg + mbarrier, parity",
        "as v3_mbarrier_s8, waiting on the phase parity (test_wait.parity): no state array",
        launch_stream_v4);
  add_negatives(v);
  return v.list;
}

// The chapter main() hands to tut::run_chapter(): name, heading, registry, sizes, options.
// The lesson (the tour's pair): raw PTX with 7 tiles in flight against chapter 05's kernel
// with 3, 1 block/SM.
inline tut::Chapter<Problem> chapter() {
  tut::Chapter<Problem> ch("ch06_ptx_cp_async", variants(), "v1_cg16_s8", "v0_prim16_s4",
      "Chapter 06: raw PTX cp.async (.ca/.cg, src-size, commit_group, wait_group)");
  tut::reversed_tiles::set_sizes(ch);  // --size and the check sizes (the workload's header)
  ch.extra_options = {tut::blocks_per_sm_option("blocks per SM (every variant but *_full)")};
  return ch;
}

}

// A test includes this file with TUTORIAL_CHAPTER_TEST defined, for the Problem and the registry.
#ifndef TUTORIAL_CHAPTER_TEST
int main(int argc, char** argv) { return tut::run_chapter(argc, argv, ch06::chapter()); }
#endif  // TUTORIAL_CHAPTER_TEST
