/// @file mbarrier_completion.cuh
/// @brief Chapter 06's v3 and v4: the .cg copies of v1 completed on an mbarrier per slot
///        (cp.async.mbarrier.arrive.noinc) instead of on commit groups, then their launchers.
///
/// cuda::ptx (CCCL) has no cp.async.ca/.cg, commit_group or wait_group wrappers; for sm_80 it
/// has mbarrier.init, mbarrier.arrive, mbarrier.test_wait(.parity) and
/// cp.async.mbarrier.arrive(.noinc). These kernels complete the same 16-byte .cg copies on one
/// mbarrier per slot instead of on commit groups, with the .noinc arrive: it does NOT raise the
/// barrier's pending count first, so it must be counted in the expected count - 2 x THREADS per
/// phase (each thread arrives once itself and once when its copies land). Compare chapter 05,
/// whose __pipeline_arrive_on is the incrementing form with THREADS.
///   v3  the wait names its phase by the token its own arrive returned, kept per slot;
///   v3  with cuda::ptx's arrive instead of the hand-written one (a second spelling);
///   v4  the wait names its phase by parity: no token to keep.
/// All three use 8 slots, the ring of v1_cg16_s8, so that they compare with it.
#pragma once

#include <cuda_runtime.h>

#include <cuda/ptx>

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/launch.cuh"
#include "common/ring.cuh"
#include "common/workload_reversed_tiles.cuh"
#include "kernels.cuh"  // issue_tile, smem_u32, the workload

namespace ch06 {

// cp.async.mbarrier.arrive.noinc.shared.b64 [bar]: an arrival on `bar` that the hardware makes
// once all of this thread's earlier cp.async have landed. Written by hand with the .shared state
// space; CCCL's cuda::ptx::cp_async_mbarrier_arrive_noinc emits the same instruction without a
// state space (generic addressing) while passing it a 32-bit shared-memory address. In this
// build's sm_90 SASS the address is used as is; in the sm_80 SASS ptxas subtracts a
// constant-bank value first (UIADD3 UR4, -c[0x0][0x18], offset), i.e. treats it as a generic
// address. v3_cccl_arrive_s8 therefore runs on sm_90 only (min_cc 90) until someone confirms it
// on an sm_80 GPU.
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(std::uint64_t* s_bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(smem_u32(s_bar))
               : "memory");
}

// ---------------------------------------------------------------------------------------------
// v3: completion on an mbarrier per slot, waiting on the token of this thread's arrive
// ---------------------------------------------------------------------------------------------
// mbarrier.arrive returns a state naming the phase it arrived on; test_wait(bar, state) is true
// once that phase completed. The state must be kept per slot until the wait, in an array
// indexed by tile % STAGES: the compiler cannot keep a dynamically indexed array in registers, so
// it lives in local memory: on sm_90 an STL.64 after the arrive and an LDL.64 before the wait
// (16 bytes of L1 traffic per tile and thread); on sm_80 ptxas reloads only the 32-bit phase
// half (a 32-bit LDL). v4 needs no state.
__global__ void __launch_bounds__(THREADS)
    stream_v3_mbarrier_token_kernel(const std::uint32_t* __restrict__ d_in,
                                    std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  constexpr int STAGES = 8;  // the ring of v1_cg16_s8
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  __shared__ std::uint64_t s_full[STAGES];  // one mbarrier per slot: "slot holds its tile"
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES; ++s) cuda::ptx::mbarrier_init(&s_full[s], 2 * THREADS);  // v3 token: 2 arrivals a thread
  __syncthreads();  // the initialised barriers are visible before anyone arrives
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  std::uint64_t r_state[STAGES];  // the phase this thread arrived on, per slot
  auto issue = [&](std::size_t tile) {
    if (tile >= my_tiles) return;  // no arrivals either: nobody waits for this phase
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    issue_tile<16, true>(s_tiles[tile % STAGES], d_in, base, tile_count(n_words, base));
    cp_async_mbarrier_arrive_noinc(&s_full[tile % STAGES]);  // arrives when my copies landed
    r_state[tile % STAGES] = cuda::ptx::mbarrier_arrive(&s_full[tile % STAGES]);  // my own arrival
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);  // prologue
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    // all 256 threads arrived and all their copies of tile landed: the whole tile is there
    // No time bound (common/bounded_wait.cuh bounds parity waits only, v4's form): a phase
    // that never completed would spin here until the harness's watchdog ends the run.
    while (!cuda::ptx::mbarrier_test_wait(&s_full[tile % STAGES], r_state[tile % STAGES])) {  // v3 token
    }
    __syncthreads();  // slot (tile-1) % STAGES: everyone finished reading it
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
  }
}

// v3 with the cp.async arrive spelled by cuda::ptx (no state space in the PTX: see above).
__global__ void __launch_bounds__(THREADS)
    stream_v3_cccl_arrive_kernel(const std::uint32_t* __restrict__ d_in,
                                 std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  constexpr int STAGES = 8;  // the ring of v1_cg16_s8
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  __shared__ std::uint64_t s_full[STAGES];
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES; ++s) cuda::ptx::mbarrier_init(&s_full[s], 2 * THREADS);  // v3 cccl: 2 arrivals a thread
  __syncthreads();
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  std::uint64_t r_state[STAGES];
  auto issue = [&](std::size_t tile) {
    if (tile >= my_tiles) return;
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    issue_tile<16, true>(s_tiles[tile % STAGES], d_in, base, tile_count(n_words, base));
    cuda::ptx::cp_async_mbarrier_arrive_noinc(&s_full[tile % STAGES]);
    r_state[tile % STAGES] = cuda::ptx::mbarrier_arrive(&s_full[tile % STAGES]);
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    // No time bound (common/bounded_wait.cuh bounds parity waits only, v4's form): a phase
    // that never completed would spin here until the harness's watchdog ends the run.
    while (!cuda::ptx::mbarrier_test_wait(&s_full[tile % STAGES], r_state[tile % STAGES])) {  // v3 cccl
    }
    __syncthreads();
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
  }
}

// ---------------------------------------------------------------------------------------------
// v4: the same completion, waiting on the phase parity: no state to keep
// ---------------------------------------------------------------------------------------------
// Tile `tile` is the (tile / STAGES)-th use of slot tile % STAGES, so its phase has parity
// (tile / STAGES) & 1: mbarrier.test_wait.parity (PTX ISA 7.1, sm_80) names the phase from tile
// alone, and the state the arrive returns is dropped. Parity is enough: a slot is refilled only
// after the __syncthreads that follows every thread's wait on it, so no slot's barrier gets a
// whole phase ahead of its waiters.
__global__ void __launch_bounds__(THREADS)
    stream_v4_mbarrier_parity_kernel(const std::uint32_t* __restrict__ d_in,
                                     std::uint32_t* __restrict__ d_out, std::size_t n_words,
                                     unsigned* __restrict__ error) {
  constexpr int STAGES = 8;  // the ring of v1_cg16_s8
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];
  __shared__ std::uint64_t s_full[STAGES];
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES; ++s) cuda::ptx::mbarrier_init(&s_full[s], 2 * THREADS);  // v4: 2 arrivals a thread
  __syncthreads();
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  auto issue = [&](std::size_t tile) {
    if (tile >= my_tiles) return;
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    issue_tile<16, true>(s_tiles[tile % STAGES], d_in, base, tile_count(n_words, base));
    cp_async_mbarrier_arrive_noinc(&s_full[tile % STAGES]);  // v4: arrives when my copies landed
    (void)cuda::ptx::mbarrier_arrive(&s_full[tile % STAGES]);  // the state is not needed
  };
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  bool gave_up = false;  // bounded as in chapter 05's v3: a broken variant fails, never hangs
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    const std::uint32_t parity = static_cast<std::uint32_t>(tile / STAGES) & 1u;
    // The site names the wait for the host's sentence if it gives up (no expect_tx: the phase
    // is completed by 2 x 256 arrivals, not by a byte count).
    const auto site = tut::WaitSite::warp(threadIdx.x / 32)
                          .on(tut::Barrier::kFull, static_cast<unsigned>(tile % STAGES))
                          .at_tile(static_cast<unsigned>(tile));
    if (!gave_up)
      gave_up = !tut::test_wait_or_report(&s_full[tile % STAGES], parity, error, site);
    __syncthreads();
    issue(tile + STAGES - 1);
    if (!gave_up) {
      const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
      consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers (--blocks-per-sm blocks per SM, default 1)
// ---------------------------------------------------------------------------------------------
inline void launch_stream_v3(StreamProblem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v3_mbarrier_token_kernel, THREADS, 0, p.sms(), p.blocks_per_sm(),
                         s, p.d_in.data(), p.d_out.data(), p.n_words);
}
inline void launch_stream_v3_cccl(StreamProblem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v3_cccl_arrive_kernel, THREADS, 0, p.sms(), p.blocks_per_sm(), s,
                         p.d_in.data(), p.d_out.data(), p.n_words);
}
inline void launch_stream_v4(StreamProblem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v4_mbarrier_parity_kernel, THREADS, 0, p.sms(), p.blocks_per_sm(),
                         s, p.d_in.data(), p.d_out.data(), p.n_words, p.error.data());
}

}  // namespace ch06
