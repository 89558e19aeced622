// Chapter 06, host side: the window workload's CPU reference, the Problem (chapter 05's, plus
// the window check) and the variant registry. The stream workload's Problem, reference and
// sizes are common/workload_reversed_tiles.cuh; the kernels and their launcher are kernels.cuh.
#pragma once

#include <cstdint>
#include <vector>

#include "common/harness.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "kernels.cuh"

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
enum Reference : int { kReverse = 0, kWindow = 1 };

struct Problem : tut::reversed_tiles::Problem {
  using tut::reversed_tiles::Problem::Problem;
  tut::VerifyResult verify(cudaStream_t s, int reference) {
    if (reference == kWindow) return verify_against(s, want_window, reference_window);
    return tut::reversed_tiles::Problem::verify(s, reference);
  }
  std::vector<std::uint32_t> want_window;
};

}  // namespace ch06

// The negatives (v8, v9) and add_negatives(), which variants() calls last.
#include "tests/negatives/06_ptx_cp_async.cuh"

namespace ch06 {

// The variant registry. All variants run at --blocks-per-sm blocks per SM (default 1), except
// *_full (as many blocks as fit). Names give the ring in slots; this chapter's loop (chapter
// 05's) has slots - 1 tiles in flight at each wait.
inline std::vector<tut::Variant<Problem>> variants() {
  tut::VariantList<Problem> v;
  using Kernel = void (*)(const std::uint32_t*, std::uint32_t*, std::size_t);
  auto add = [&v](const char* key, const char* name, const char* description, Kernel kernel,
                  int reference, bool full = false) -> tut::Variant<Problem>& {
    tut::Variant<Problem>& added =
        v.add(key, name, description, [kernel, full](Problem& p, cudaStream_t s) {
          // every kernel takes (d_in, d_out, n_words) and walks its tiles grid-stride
          tut::launch_persistent(kernel, THREADS, 0, p.sms(), full ? 0 : p.blocks_per_sm(), s,
                                 p.d_in.data(), p.d_out.data(), p.n_words);
        });
    added.reference = reference;
    return added;
  };
  add("v0_prim16_s4", "v0 primitives 16 B 4 slots",
      "chapter 05: __pipeline_memcpy_async 16 B, 4 slots (3 tiles in flight)", stream_v0_primitives_kernel<4>,
      kReverse);
  add("v1_cg16_s4", "v1 PTX .cg 16 B 4 slots", "cp.async.cg 16 B, 4 slots (v0 in raw PTX)",
      stream_v1_cp_async_kernel<4, 16, true>, kReverse);
  add("v1_cg16_s8", "v1 PTX .cg 16 B 8 slots",
      "cp.async.cg 16 B, 8 slots: 7 tiles (28 KiB) in flight per block", stream_v1_cp_async_kernel<8, 16, true>,
      kReverse);
  add("v1_ca16_s8", "v1 PTX .ca 16 B 8 slots", "cp.async.ca 16 B (L1 allocate), 8 slots",
      stream_v1_cp_async_kernel<8, 16, false>, kReverse);
  add("v1_ca8_s8", "v1 PTX .ca 8 B 8 slots", "cp.async.ca 8 B, two copies per thread per tile",
      stream_v1_cp_async_kernel<8, 8, false>, kReverse);
  add("v1_ca4_s8", "v1 PTX .ca 4 B 8 slots", "cp.async.ca 4 B, four copies per thread per tile",
      stream_v1_cp_async_kernel<8, 4, false>, kReverse);
  add("v1_cg16_s8_full", "v1 PTX .cg 16 B 8 slots, full",
      "cp.async.cg 16 B, 8 slots, as many blocks per SM as fit", stream_v1_cp_async_kernel<8, 16, true>,
      kReverse, true);
  add("v2_window_cg", "v2 window .cg 4 slots", "each tile read twice by the same SM, L1 bypassed",
      window_v2_cp_async_kernel<4, true>, kWindow);
  add("v2_window_ca", "v2 window .ca 4 slots",
      "each tile read twice by the same SM, L1 allocate: the second read may hit",
      window_v2_cp_async_kernel<4, false>, kWindow);
  add("v3_mbarrier_s8", "v3 .cg + mbarrier, token",
      "cp.async.cg 16 B completed on an mbarrier (arrive.noinc.shared), per-slot state array",
      stream_v3_mbarrier_token_kernel, kReverse);
  add("v3_cccl_arrive_s8", "v3 .cg + cuda::ptx arrive, token",
      "as v3_mbarrier_s8 with cuda::ptx::cp_async_mbarrier_arrive_noinc (sm_90 only here)",
      stream_v3_cccl_arrive_kernel, kReverse)
      .min_cc = 90;
  add("v4_mbarrier_parity_s8", "v4 .cg + mbarrier, parity",
      "as v3_mbarrier_s8, waiting on the phase parity (test_wait.parity): no state array",
      stream_v4_mbarrier_parity_kernel, kReverse);
  add_negatives(v);
  return v.list;
}

}  // namespace ch06
