/// @file kernels.cuh
/// @brief Chapter 05's lesson kernels: the __pipeline_* primitives (<cuda_pipeline.h>) and
///        completion on an mbarrier, in variant order, then their launchers.
///
/// What it adds over chapter 04: the multi-stage prefetch, written with the C-style primitives
/// that sit one level below cuda::pipeline. Each primitive is one PTX instruction:
///   __pipeline_memcpy_async(dst, src, 16|8|4, zfill)  cp.async.{cg|ca}.shared.global (LDGSTS)
///   __pipeline_commit()                               cp.async.commit_group        (LDGDEPBAR)
///   __pipeline_wait_prior(N)                          cp.async.wait_group N        (DEPBAR.LE)
///   __pipeline_arrive_on(&mbar)                       cp.async.mbarrier.arrive     (ARRIVES)
/// with double and triple buffering, 4/8/16-byte element copies, the zero-fill argument for the
/// ragged tail of the array, and completion on an mbarrier (<cuda_awbarrier_primitives.h>)
/// instead of on commit groups - once with a per-slot token, once with the phase parity.
///
/// The loop differs from chapter 04's: it waits FIRST, then refills, so one __syncthreads per
/// tile both publishes the tile and frees the slot the refill reuses. The price is one tile of
/// depth: a ring of STAGES slots has STAGES-1 tiles in flight at each wait (wait_prior
/// STAGES-2), where chapter 04's ring of STAGES slots has STAGES (wait_prior STAGES-1). Depths
/// are therefore compared in tiles in flight, not in slots.
///
/// Workload (every variant, common/workload_reversed_tiles.cuh): 4 KiB tiles of 1024 words, the
/// last one possibly ragged, each zero-padded to whole 16-byte vectors and reversed word by
/// word. A block walks tiles blockIdx.x, blockIdx.x + gridDim.x, ... (tut::tiles_of_this_block
/// and tut::block_tile, common/ring.cuh); `tile` counts the block's own tiles.
///
/// The variant registry is in main.cu; the broken variant in broken.cuh.
/// Minimum compute capability: 8.0 (cp.async).
#pragma once

#include <cuda_awbarrier_primitives.h>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cuda/pipeline>
#include <cuda/ptx>

#include <cstdint>

#include "common/bounded_wait.cuh"
#include "common/launch.cuh"
#include "common/workload_reversed_tiles.cuh"

namespace ch05 {

// The workload, shared with chapter 06: THREADS (256), TILE_WORDS (1024), VEC_WORDS (4); the
// tile indexing (num_tiles, tile_count, padded_count); the consumer
// consume_reverse, the same in every variant, which reads vectors that other warps copied:
// hence a block-wide barrier in every kernel below.
using namespace tut::reversed_tiles;

// ---------------------------------------------------------------------------------------------
// v0: chapter 04's API (cuda::pipeline<thread_scope_thread>, 16-byte copies) in this loop
// ---------------------------------------------------------------------------------------------
// The same wait-first loop as v1, so v0 and v1 differ only in how the copy is written: STAGES
// slots, STAGES-1 tiles in flight at each wait. The ragged vector at the end of the array cannot use the 16-byte form (it would read past
// the end), and cuda::memcpy_async has no zero-fill operand: the thread copies the valid words
// one by one (4-byte cp.async) and stores zeros into the rest of the vector itself.
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    stream_v0_cuda_pipeline_kernel(const std::uint32_t* __restrict__ d_in,
                                   std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];  // STAGES x 4 KiB ring
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  const int tid = threadIdx.x;
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));

  auto issue = [&](std::size_t tile) {  // copy this thread's vector of tile into slot tile % STAGES
    pipe.producer_acquire();
    if (tile < my_tiles) {
      const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
      const int w = tid * VEC_WORDS;  // first word of this thread's vector
      const int valid = tile_count(n_words, base) - w;
      std::uint32_t* dst = &s_tiles[tile % STAGES][w];
      if (valid >= VEC_WORDS) {
        cuda::memcpy_async(dst, d_in + base + w, cuda::aligned_size_t<16>(16), pipe);
      } else if (valid > 0) {
        for (int i = 0; i < VEC_WORDS; ++i) {
          if (i < valid)
            cuda::memcpy_async(dst + i, d_in + base + w + i, cuda::aligned_size_t<4>(4), pipe);
          else
            dst[i] = 0u;  // plain STS: ordered before the readers by the barrier below
        }
      }
    }
    pipe.producer_commit();  // one commit group per tile, even an empty one: keeps the count
  };

  // prologue: fill STAGES-1 slots
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    // steady state. Committed groups: STAGES-1+tile. Leaving STAGES-2 pending means groups
    // 0..tile are complete: this thread's part of tile is in slot tile % STAGES; tiles .. tile+STAGES-2
    // (STAGES-1 of them) were in flight when the wait began.
    cuda::pipeline_consumer_wait_prior<STAGES - 2>(pipe);
    // Every thread's part of tile has landed, and every thread has finished reading slot
    // (tile-1) % STAGES in the previous iteration, so that slot may be refilled.
    __syncthreads();
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
    pipe.consumer_release();
  }
  // epilogue: the trailing groups are empty (tile >= my_tiles), nothing to drain.
}

// ---------------------------------------------------------------------------------------------
// v1: the same loop with the primitives; COPY_BYTES = 16, 8 or 4 per cp.async
// ---------------------------------------------------------------------------------------------
// Each thread moves 16 bytes of every tile, as one 16-byte, two 8-byte or four 4-byte copies
// (element e of the tile is thread e % 256's). The 4th argument of __pipeline_memcpy_async is
// the number of trailing bytes to ZERO (PTX's src-size is COPY_BYTES - zfill): the ragged
// vector reads only its valid words, and a copy wholly past the end reads nothing and writes
// zeros, so the padded tile is complete without any plain store.
template <int COPY_BYTES>
__device__ inline void issue_tile_primitives(std::uint32_t* s_slot,
                                             const std::uint32_t* __restrict__ d_in,
                                             std::size_t base, int count) {
  constexpr int ELEM_WORDS = COPY_BYTES / 4;
  constexpr int COPIES = TILE_WORDS / ELEM_WORDS / THREADS;  // 1, 2 or 4 per thread
  const int padded = padded_count(count);
#pragma unroll
  for (int c = 0; c < COPIES; ++c) {
    const int w = (c * THREADS + static_cast<int>(threadIdx.x)) * ELEM_WORDS;  // first word
    if (w >= padded) continue;   // beyond the padded tile: nothing to copy or zero
    const int left = count - w;  // may be <= 0 for 4-byte copies
    const int valid = left < 0 ? 0 : (left < ELEM_WORDS ? left : ELEM_WORDS);
    // EXERCISE-BEGIN: the 4th argument of the primitive for this copy: how many of its bytes lie past the end of the array and must arrive as zeros
    const int zfill = (ELEM_WORDS - valid) * 4;
    // EXERCISE-STUB: const int zfill = 0;
    // EXERCISE-END
    // With src-size 0 nothing is read, but the address must still be a valid, aligned global
    // address: point such copies at the tile's first word.
    const std::uint32_t* src = d_in + base + (valid > 0 ? w : 0);
    __pipeline_memcpy_async(s_slot + w, src, COPY_BYTES, zfill);
  }
}

template <int STAGES, int COPY_BYTES>
__global__ void __launch_bounds__(THREADS)
    stream_v1_primitives_kernel(const std::uint32_t* __restrict__ d_in,
                                std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  static_assert(STAGES >= 2 && STAGES <= 8, "__pipeline_wait_prior clamps its count at 8");
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];  // STAGES x 4 KiB ring
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  auto issue = [&](std::size_t tile) {
    if (tile < my_tiles) {
      const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
      issue_tile_primitives<COPY_BYTES>(s_tiles[tile % STAGES], d_in, base, tile_count(n_words, base));
    }
    __pipeline_commit();  // cp.async.commit_group: closes this thread's group for tile
  };

  // prologue: STAGES-1 tiles in flight (2 slots, "double buffering": 1; 3 slots: 2)
  for (int s = 0; s < STAGES - 1; ++s) issue(s);
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    // cp.async.wait_group STAGES-2: at most the newest STAGES-2 groups of THIS THREAD may be
    // pending, so its group tile is complete. It says nothing about other threads' copies...
    __pipeline_wait_prior(STAGES - 2);
    // ...hence the barrier: after it, all of tile is in slot tile % STAGES, and nobody still
    // reads slot (tile-1) % STAGES, which the next line refills.
    __syncthreads();
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));  // v1: LDS.128, STG.E.128
  }
}

// ---------------------------------------------------------------------------------------------
// v2: complete on an mbarrier: __pipeline_arrive_on + <cuda_awbarrier_primitives.h>
// ---------------------------------------------------------------------------------------------
// One mbarrier per slot, expecting THREADS arrivals per phase. For each tile every thread
//   1. issues its copies,
//   2. __pipeline_arrive_on(&bar): cp.async.mbarrier.arrive - raises the barrier's pending
//      count by one now, and lowers it when all of this thread's earlier cp.async complete,
//   3. __mbarrier_arrive(&bar): its own arrival.
// The phase completes when all 256 threads arrived AND all their copies landed, so a thread
// that sees the phase flip knows the WHOLE tile is in shared memory: no commit groups, and no
// __syncthreads for visibility. __mbarrier_arrive returns a token naming the phase it arrived
// on; __mbarrier_test_wait(bar, token) is true once that phase completed. The token must be
// kept per slot until the wait, in an array indexed by tile % STAGES: the compiler cannot keep a
// dynamically indexed array in registers, so it lives in local memory. On sm_90 that is an
// STL.64 after the arrive and an LDL.64 before the wait (16 bytes of L1 traffic per tile and
// thread); on sm_80 ptxas reloads only the 32-bit phase half of the token (STL.64, then a 32-bit
// LDL: 12 bytes). v3 needs no token.
// The __syncthreads that remains protects slot reuse (the barrier says "tile landed", not
// "everyone finished reading the previous tile"); chapter 07 replaces it with a second,
// "consumed" barrier per slot.
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    stream_v2_mbarrier_kernel(const std::uint32_t* __restrict__ d_in,
                              std::uint32_t* __restrict__ d_out, std::size_t n_words) {
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];  // STAGES x 4 KiB ring
  __shared__ __mbarrier_t s_full[STAGES];                            // "slot holds its tile"
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES; ++s) __mbarrier_init(&s_full[s], THREADS);  // v2: 256 arrivals
  __syncthreads();  // the initialised barriers are visible before anyone arrives
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  __mbarrier_token_t r_token[STAGES];  // the phase this thread arrived on, per slot
  auto issue = [&](std::size_t tile) {
    if (tile >= my_tiles) return;  // no arrivals either: nobody waits for this phase
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    issue_tile_primitives<16>(s_tiles[tile % STAGES], d_in, base, tile_count(n_words, base));
    __pipeline_arrive_on(&s_full[tile % STAGES]);  // v2: my copies count on this phase
    r_token[tile % STAGES] = __mbarrier_arrive(&s_full[tile % STAGES]);
  };

  for (int s = 0; s < STAGES - 1; ++s) issue(s);  // prologue
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    // Wait for the phase of slot tile % STAGES that tile's arrivals belong to: when it
    // completes, all 256 threads' copies of tile have landed. test_wait polls once; the
    // loop spins (try_wait, which can suspend the thread, needs sm_90).
    // This wait has no time bound: common/bounded_wait.cuh bounds waits on a phase PARITY
    // (v3 uses it), and a token names its phase differently. If the phase never completed
    // (a lost arrival), the block would spin here until the harness's watchdog ends the run
    // with a line naming the variant; v3 shows the bounded, self-reporting form.
    while (!__mbarrier_test_wait(&s_full[tile % STAGES], r_token[tile % STAGES])) {
    }
    __syncthreads();  // slot (tile-1) % STAGES: everyone finished reading it
    issue(tile + STAGES - 1);
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
  }
}

// ---------------------------------------------------------------------------------------------
// v3: the same mbarrier completion, waiting on the phase PARITY: no token array
// ---------------------------------------------------------------------------------------------
// Tile `tile` is the (tile / STAGES)-th use of slot tile % STAGES, so the phase it completes has parity
// (tile / STAGES) & 1: the wait can name its phase from `tile` alone, and the token of the arrive is
// dropped. PTX has mbarrier.test_wait.parity from sm_80 (PTX ISA 7.1), but this toolkit's
// __mbarrier_test_wait_parity compiles it for sm_90 only and __trap()s on sm_80
// (cuda_awbarrier_helpers.h), so the wait is CCCL's cuda::ptx::mbarrier_test_wait_parity,
// which emits the instruction for sm_80 and up. Parity is enough: a slot is refilled only after
// the __syncthreads that follows every thread's wait on it, so no slot's barrier can get a
// whole phase ahead of its waiters.
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    stream_v3_mbarrier_parity_kernel(const std::uint32_t* __restrict__ d_in,
                                     std::uint32_t* __restrict__ d_out, std::size_t n_words,
                                     unsigned* __restrict__ error) {
  __shared__ alignas(16) std::uint32_t s_tiles[STAGES][TILE_WORDS];  // STAGES x 4 KiB ring
  __shared__ __mbarrier_t s_full[STAGES];                            // "slot holds its tile"
  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES; ++s) __mbarrier_init(&s_full[s], THREADS);  // v3: 256 arrivals
  __syncthreads();
  const std::size_t my_tiles = tut::tiles_of_this_block(num_tiles(n_words));
  auto issue = [&](std::size_t tile) {
    if (tile >= my_tiles) return;
    const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
    issue_tile_primitives<16>(s_tiles[tile % STAGES], d_in, base, tile_count(n_words, base));
    __pipeline_arrive_on(&s_full[tile % STAGES]);  // v3: my copies count on this phase
    (void)__mbarrier_arrive(&s_full[tile % STAGES]);  // the token is not needed: parity names the phase
  };

  for (int s = 0; s < STAGES - 1; ++s) issue(s);  // prologue
  bool gave_up = false;  // a wait that can never complete (a wrong parity) must not hang
  for (std::size_t tile = 0; tile < my_tiles; ++tile) {
    // EXERCISE-BEGIN: the parity of the phase of slot tile % STAGES that tile's arrivals complete (it flips each time the ring wraps)
    const std::uint32_t parity = static_cast<std::uint32_t>(tile / STAGES) & 1u;
    // EXERCISE-STUB: const std::uint32_t parity = 0u;
    // EXERCISE-END
    // Bounded: after a wait gives up this thread stops waiting and writing (its words stay
    // poisoned, so the check fails) but keeps meeting __syncthreads, so the block cannot hang.
    // The site names the wait for the host's sentence ("warp 3 of block 17 timed out on
    // full[1] waiting for parity 0 at tile 4"). The phase is completed by arrivals and copies,
    // not by a byte count, so there is no expect_tx to name.
    const auto site = tut::WaitSite::warp(threadIdx.x / 32)
                          .on(tut::Barrier::kFull, static_cast<unsigned>(tile % STAGES))
                          .at_tile(static_cast<unsigned>(tile));
    if (!gave_up)
      gave_up = !tut::test_wait_or_report(&s_full[tile % STAGES], parity, error, site);
    __syncthreads();  // slot (tile-1) % STAGES: everyone finished reading it
    issue(tile + STAGES - 1);
    if (!gave_up) {
      const std::size_t base = tut::block_tile(tile) * TILE_WORDS;
      consume_reverse(s_tiles[tile % STAGES], d_out, base, tile_count(n_words, base));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers: one per kernel, each a persistent grid of --blocks-per-sm blocks per SM (default 1)
// ---------------------------------------------------------------------------------------------
using Problem = tut::reversed_tiles::Problem;

template <int STAGES>
void launch_stream_v0(Problem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v0_cuda_pipeline_kernel<STAGES>, THREADS, 0, p.sms(),
                         p.blocks_per_sm(), s, p.d_in.data(), p.d_out.data(), p.n_words);
}
template <int STAGES, int COPY_BYTES>
void launch_stream_v1(Problem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v1_primitives_kernel<STAGES, COPY_BYTES>, THREADS, 0, p.sms(),
                         p.blocks_per_sm(), s, p.d_in.data(), p.d_out.data(), p.n_words);
}
template <int STAGES>
void launch_stream_v2(Problem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v2_mbarrier_kernel<STAGES>, THREADS, 0, p.sms(),
                         p.blocks_per_sm(), s, p.d_in.data(), p.d_out.data(), p.n_words);
}
template <int STAGES>
void launch_stream_v3(Problem& p, cudaStream_t s) {
  tut::launch_persistent(stream_v3_mbarrier_parity_kernel<STAGES>, THREADS, 0, p.sms(),
                         p.blocks_per_sm(), s, p.d_in.data(), p.d_out.data(), p.n_words,
                         p.error.data());
}

}  // namespace ch05
